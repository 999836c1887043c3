"""training.export to ONNX: the project's MaskablePPO actor (scaled observation, policy net, action net) exported
to .npz and .onnx plays the same moves, and ``python -m training.export CKPT OUT.onnx`` writes a file c8env plays."""

from __future__ import annotations

from pathlib import Path

import pytest

from c8env.agents import PolicyAgent, PolicyMismatchWarning, load
from tests.agents.positions import positions

pytest.importorskip("onnxruntime")
pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")

from c8env.agents.onnx_policy import OnnxAgent  # noqa: E402
from training.config import config_from_dict  # noqa: E402

SETTINGS = {"pi_layers": [64, 48], "vf_layers": [32], "n_envs": 2, "n_workers": 1, "vec_env": "dummy", "n_steps": 64,
            "batch_size": 64, "n_epochs": 1}


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_npz_and_onnx_exports_choose_the_same_actions(tmp_path: Path, activation: str) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.envs import make_env
    from training.export import export_policy, main
    from training.model import build_model

    config = config_from_dict({**SETTINGS, "activation": activation})
    model = build_model(config, DummyVecEnv([make_env(config, [])] * 2))
    with torch.no_grad():  # logits far from float rounding (a fresh actor's are ~0.01 apart)
        model.policy.action_net.weight.mul_(100.0)
    npz = load(str(export_policy(model, tmp_path / "p.npz", 2, "standard", "test")))
    onnx_agent = load(str(export_policy(model, tmp_path / "p.onnx", 2, "standard", "test")))
    assert isinstance(npz, PolicyAgent) and isinstance(onnx_agent, OnnxAgent)
    assert onnx_agent.meta["num_players"] == 2 and onnx_agent.meta["description"] == "test"
    with pytest.warns(PolicyMismatchWarning, match="trained for 2 players"):
        load(str(tmp_path / "p.onnx"), num_players=4)
    observations, masks = positions(1000)
    sb3, _ = model.predict(observations, action_masks=masks.astype(bool), deterministic=True)
    from_npz = npz.act_batch(observations, masks)
    from_onnx = onnx_agent.act_batch(observations, masks)
    assert from_onnx.tolist() == from_npz.tolist() == sb3.tolist()
    assert [onnx_agent.act({"observation": o, "action_mask": m}) for o, m in zip(observations[:100], masks[:100],
                                                                            strict=True)] == from_onnx[:100].tolist()

    # the command line: a checkpoint .zip to .onnx
    archive = tmp_path / "ckpt.zip"
    model.save(archive)
    main([str(archive), str(tmp_path / "cli.onnx"), "--players", "2", "--rules", "standard"])
    assert load(str(tmp_path / "cli.onnx")).act_batch(observations, masks).tolist() == from_onnx.tolist()
