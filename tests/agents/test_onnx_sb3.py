"""Policies from other libraries as files: ONNX (:mod:`c8env.agents.onnx_policy`) and SB3 ``.zip`` models
(:mod:`c8env.agents.sb3_policy`), loaded by ``c8env.agents.load`` and played by ``c8env eval``.

The key test exports a seeded torch MLP to ONNX, runs ``c8env eval`` on it in process while recording every
(observation, mask, action) the agent answered, and checks each action against the torch module's masked argmax.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from c8env.actions import NUM_ACTIONS
from c8env.agents import load
from c8env.envs.single_agent import SingleAgentEnv
from c8env.envs.spaces import observation_dict_space
from c8env.observation import OBS_SIZE
from tests.agents.positions import positions

ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

from c8env.agents.onnx_policy import MissingExtraError, OnnxAgent  # noqa: E402
from c8env.tools.onnx_export import export_onnx  # noqa: E402

DRAW_PASS = slice(56, 58)


def mlp(seed: int, width: int = 64) -> torch.nn.Module:
    """A small random policy network, observations -> 60 logits, that would rather play a card than draw or pass
    (so that its hands end)."""
    torch.manual_seed(seed)
    module = torch.nn.Sequential(torch.nn.Linear(OBS_SIZE, width), torch.nn.Tanh(), torch.nn.Linear(width, width),
                                 torch.nn.Tanh(), torch.nn.Linear(width, NUM_ACTIONS))
    with torch.no_grad():
        module[-1].bias[DRAW_PASS] -= 5.0
    return module


def torch_choice(module: torch.nn.Module, observation: np.ndarray, mask: np.ndarray) -> tuple[int, float]:
    """The module's masked argmax on one observation, and the gap between its two best legal logits."""
    with torch.no_grad():
        logits = module(torch.as_tensor(observation, dtype=torch.float32)[None])[0].numpy()
    masked = np.where(mask.astype(bool), logits, -np.inf)
    best = np.sort(masked)[::-1]
    return int(np.argmax(masked)), float(best[0] - best[1]) if np.isfinite(best[1]) else np.inf


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[torch.nn.Module, Path]:
    module = mlp(seed=7)
    path = export_onnx(module, tmp_path_factory.mktemp("onnx") / "mlp-seed7.onnx", {"num_players": 2})
    return module, path


# ----- ONNX: the key test ---------------------------------------------------------------------------------------
def test_c8env_eval_plays_the_torch_modules_masked_argmax(policy_file, monkeypatch, capsys) -> None:
    from c8env.tools.evaluation.cli import main

    module, path = policy_file
    seen: list[tuple[np.ndarray, np.ndarray, int]] = []
    calls = {"act": 0, "act_batch": 0}
    act, act_batch = OnnxAgent.act, OnnxAgent.act_batch

    def recording_act(self, observation):
        action = act(self, observation)
        calls["act"] += 1
        seen.append((np.array(observation["observation"], dtype=np.float32),
                     np.array(observation["action_mask"], dtype=np.int8), action))
        return action

    def recording_act_batch(self, observations, masks):
        actions = act_batch(self, observations, masks)
        calls["act_batch"] += 1
        seen.extend(zip(np.array(observations), np.array(masks), actions.tolist(), strict=True))
        return actions

    monkeypatch.setattr(OnnxAgent, "act", recording_act)
    monkeypatch.setattr(OnnxAgent, "act_batch", recording_act_batch)
    main([str(path), "random", "--deals", "30", "--seed", "3", "--no-progress"])  # batched engine: act_batch
    main([str(path), "random", "--deals", "3", "--seed", "4", "--engine", "scalar", "--workers", "1",
          "--no-progress"])  # one hand at a time: act
    out = capsys.readouterr().out
    assert out.count(f"| {path} | 1 |") == 2, out
    assert calls["act_batch"] > 0 and calls["act"] > 0

    mismatches, near_ties = [], 0
    for observation, mask, action in seen:
        assert mask[action] == 1
        expected, gap = torch_choice(module, observation, mask)
        near_ties += gap < 1e-5
        if action != expected:
            mismatches.append((action, expected, gap))
    print(f"{len(seen)} recorded decisions ({calls['act']} from act), {len(mismatches)} differ from torch, "
          f"{near_ties} with a torch top-two gap < 1e-5")
    assert len(seen) >= 1000
    assert not mismatches, mismatches[:5]


def test_act_batch_equals_act_row_by_row_and_the_file_is_described(policy_file) -> None:
    module, path = policy_file
    agent = load(str(path))
    assert isinstance(agent, OnnxAgent) and agent.name == "mlp-seed7" and agent.meta == {"num_players": 2}
    inputs, outputs = agent.session.get_inputs(), agent.session.get_outputs()
    assert (inputs[0].name, inputs[0].shape[1], outputs[0].name, outputs[0].shape[1]) == \
        ("observation", OBS_SIZE, "logits", NUM_ACTIONS)
    assert isinstance(inputs[0].shape[0], str)  # dynamic batch axis
    observations, masks = positions(600, seed=1)
    batch = agent.act_batch(observations, masks)
    assert batch.dtype == np.int64 and batch.shape == (600,)
    single = [agent.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks, strict=True)]
    assert batch.tolist() == single
    assert all(masks[np.arange(600), batch] == 1)
    # exact ties go to the lowest legal id, as np.argmax on masked logits
    tied = OnnxAgent(export_onnx(torch.nn.Linear(OBS_SIZE, NUM_ACTIONS, bias=False).requires_grad_(False)
                                 .apply(lambda m: torch.nn.init.zeros_(m.weight)), path.with_name("zeros.onnx")))
    assert tied.act_batch(observations[:50], masks[:50]).tolist() == [int(np.flatnonzero(m)[0]) for m in masks[:50]]


@pytest.mark.filterwarnings("ignore::c8env.agents.PolicyMismatchWarning")  # a 2-player file at 3 players
@pytest.mark.parametrize("kind", ["onnx", "zip"])
def test_both_engines_play_the_same_hands(policy_file, tmp_path, kind: str) -> None:
    from c8env.tools.evaluation import evaluate

    _, path = policy_file
    if kind == "zip":
        path = tmp_path / "maskable.zip"
        sb3_model("MaskablePPO", "box").save(path)
    tables = [evaluate([str(path), "greedy"], 3, deals=4, seed=1, workers=1, engine=engine)
              for engine in ("scalar", "batched")]
    assert tables[0].records == tables[1].records


def test_export_onnx_legacy_exporter_and_sb3_policy(tmp_path) -> None:
    module = mlp(seed=2, width=16)
    path = export_onnx(module, tmp_path / "legacy.onnx", dynamo=False)
    observations, masks = positions(200, seed=2)
    with torch.no_grad():
        logits = module(torch.as_tensor(observations)).numpy()
    expected = np.argmax(np.where(masks.astype(bool), logits, -np.inf), axis=1)
    assert OnnxAgent(path).act_batch(observations, masks).tolist() == expected.tolist()
    with pytest.raises(ValueError, match=r"returns|maps .* to \[8, 10\]"):
        export_onnx(torch.nn.Linear(OBS_SIZE, 10), tmp_path / "small.onnx")
    with pytest.raises(ValueError, match="does not end in .onnx"):
        export_onnx(module, tmp_path / "x.npz")
    assert not list(tmp_path.glob(".*.tmp.onnx"))


# ----- ONNX errors ------------------------------------------------------------------------------------------------
def _raw_export(module: torch.nn.Module, path: Path, width: int) -> Path:
    """A file with another input width than c8env's (torch.onnx.export directly, as a user would)."""
    torch.onnx.export(module, (torch.zeros(2, width),), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, dynamo=False)
    return path


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("case, expected", [
    ("missing", "no such .onnx file"),
    ("garbage", "is not a readable ONNX model"),
    ("input", r"takes observations of 100 entries; c8env's observations have 401 or 245 entries \(v0 245, v1 245, "
              r"v2 401\)"),
    ("output", r"gives float32 \[2, 10\] for a batch of 2; expected float32\[batch, 60\]"),
])
def test_bad_onnx_files_are_refused_in_one_line_naming_the_file(tmp_path, case: str, expected: str) -> None:
    path = tmp_path / f"bad-{case}.onnx"
    if case == "garbage":
        path.write_bytes(b"this is not an onnx model")
    elif case == "input":
        _raw_export(torch.nn.Linear(100, NUM_ACTIONS), path, 100)
    elif case == "output":
        _raw_export(torch.nn.Linear(OBS_SIZE, 10), path, OBS_SIZE)
    with pytest.raises(ValueError, match=expected) as info:
        load(str(path))
    message = str(info.value)
    assert path.name in message and "\n" not in message, message


def test_c8env_eval_reports_a_bad_file_as_a_usage_error(tmp_path, capsys) -> None:
    from c8env.tools.evaluation.cli import main

    path = tmp_path / "bad.onnx"
    path.write_bytes(b"nope")
    with pytest.raises(SystemExit) as info:
        main([str(path), "random", "--deals", "2", "--no-progress"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "bad.onnx" in err and "is not a readable ONNX model" in err, err


def test_missing_onnxruntime_names_the_extra(policy_file, monkeypatch) -> None:
    import c8env.agents.onnx_policy as onnx_policy

    _, path = policy_file
    copy = path.with_name("copy.onnx")
    copy.write_bytes(path.read_bytes())
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    onnx_policy._open.cache_clear()
    with pytest.raises(MissingExtraError, match=r"pip install 'c8env\[onnx\]'") as info:
        load(str(copy))
    assert isinstance(info.value, ImportError) and isinstance(info.value, ValueError)


# ----- SB3 .zip models ----------------------------------------------------------------------------------------------
class DictSpaceEnv(SingleAgentEnv):
    """The single-agent env with the PettingZoo observation dict (observation, action_mask) as its observation."""

    def __init__(self) -> None:
        super().__init__(num_players=2, opponents="random")
        self.observation_space = observation_dict_space()

    def _wrap(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": obs, "action_mask": self.action_masks().astype(np.int8)}

    def reset(self, **kwargs):
        obs, info = super().reset(**kwargs)
        return self._wrap(obs), info

    def step(self, action):
        obs, *rest = super().step(action)
        return (self._wrap(obs), *rest)


def sb3_model(algorithm: str, space: str):
    """A tiny model of ``algorithm`` on a Box(401) or Dict observation space; MaskablePPO learns a few steps, the
    actors' logits are scaled up so that the argmax is far from float rounding, and drawing or passing made
    unattractive so that hands end."""
    sb3 = pytest.importorskip("stable_baselines3")
    env = SingleAgentEnv(num_players=2, opponents="random") if space == "box" else DictSpaceEnv()
    policy = "MlpPolicy" if space == "box" else "MultiInputPolicy"
    kwargs = {"policy_kwargs": {"net_arch": [32]}, "seed": 0, "device": "cpu", "verbose": 0}
    if algorithm == "MaskablePPO":
        from sb3_contrib import MaskablePPO

        model = MaskablePPO(policy, env, n_steps=64, batch_size=32, n_epochs=1, **kwargs)
        model.learn(64)
    elif algorithm == "PPO":
        model = sb3.PPO(policy, env, n_steps=64, **kwargs)
    elif algorithm == "DQN":
        model = sb3.DQN(policy, env, buffer_size=100, learning_starts=10_000, **kwargs)
    else:
        model = sb3.A2C(policy, env, **kwargs)
    if algorithm in ("MaskablePPO", "PPO"):
        with torch.no_grad():
            model.policy.action_net.weight.mul_(300.0)
            model.policy.action_net.bias[DRAW_PASS] -= 100.0
    return model


def model_choices(model, algorithm: str, observations: np.ndarray, masks: np.ndarray, space: str) -> np.ndarray:
    """The masked argmax of the model's own logits (its action distribution's) or Q-values."""
    given = observations if space == "box" else {"observation": observations, "action_mask": masks}
    with torch.no_grad():
        tensor, _ = model.policy.obs_to_tensor(given)
        if algorithm == "DQN":
            scores = model.q_net(tensor)
        else:
            scores = model.policy.get_distribution(tensor).distribution.logits
    return np.argmax(np.where(masks.astype(bool), scores.numpy(), -np.inf), axis=1)


@pytest.mark.parametrize("algorithm", ["MaskablePPO", "PPO", "DQN"])
@pytest.mark.parametrize("space", ["box", "dict"])
def test_sb3_zip_plays_the_masked_argmax_of_its_own_scores(tmp_path, algorithm: str, space: str) -> None:
    from c8env.agents.sb3_policy import SB3Agent, detect_algorithm

    model = sb3_model(algorithm, space)
    path = tmp_path / f"{algorithm}-{space}.zip"
    model.save(path)
    assert detect_algorithm(path) == algorithm
    agent = load(str(path))
    assert isinstance(agent, SB3Agent) and agent.algorithm == algorithm and agent.name == path.stem
    observations, masks = positions(300, seed=5)
    expected = model_choices(model, algorithm, observations, masks, space)
    batch = agent.act_batch(observations, masks)
    assert batch.dtype == np.int64 and batch.tolist() == expected.tolist()
    assert all(masks[np.arange(len(batch)), batch] == 1)
    single = [agent.act({"observation": o, "action_mask": m}) for o, m in zip(observations[:60], masks[:60],
                                                                              strict=True)]
    assert single == batch[:60].tolist()
    if algorithm == "MaskablePPO" and space == "box":  # SB3's own deterministic masked action
        predicted, _ = model.predict(observations, action_masks=masks.astype(bool), deterministic=True)
        assert predicted.tolist() == batch.tolist()


def test_sb3_zip_through_c8env_eval_and_export_to_onnx(tmp_path, capsys) -> None:
    from c8env.tools.evaluation.cli import main

    model = sb3_model("MaskablePPO", "box")
    path = tmp_path / "maskable.zip"
    model.save(path)
    main([str(path), "greedy", "--deals", "20", "--no-progress"])
    assert "maskable" in capsys.readouterr().out
    onnx_agent = OnnxAgent(export_onnx(model, tmp_path / "maskable.onnx"))
    observations, masks = positions(300, seed=6)
    assert onnx_agent.act_batch(observations, masks).tolist() == load(str(path)).act_batch(observations, masks).tolist()
    with pytest.raises(ValueError, match="cannot export an SB3 policy with observation space Dict"):
        export_onnx(sb3_model("PPO", "dict"), tmp_path / "dict.onnx")


def test_bad_sb3_files_are_refused_in_one_line_naming_the_file(tmp_path) -> None:
    a2c = tmp_path / "a2c-model.zip"
    sb3_model("A2C", "box").save(a2c)
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"not a zip")
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "hello")
    for path, expected in [(a2c, "is not supported; allowed: MaskablePPO, PPO, DQN"),
                           (garbage, "is not a Stable-Baselines3 model archive"),
                           (other, "is not a Stable-Baselines3 model archive"),
                           (tmp_path / "missing.zip", "no such .zip file")]:
        with pytest.raises(ValueError, match=expected) as info:
            load(str(path))
        assert path.name in str(info.value) and "\n" not in str(info.value), info.value


def test_missing_sb3_names_the_train_extra(tmp_path, monkeypatch) -> None:
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", "{}")
    monkeypatch.delitem(sys.modules, "c8env.agents.sb3_policy", raising=False)
    monkeypatch.setitem(sys.modules, "stable_baselines3.common.policies", None)  # import -> ImportError
    with pytest.raises(MissingExtraError, match=r"pip install 'c8env\[train\]'"):
        load(str(path))
