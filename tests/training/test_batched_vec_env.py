"""The ``vec_env: batched`` training backend (``training.batched.BatchedVecEnv``, the package's ``LearnerVecEnv`` over
the pool's games): the same transitions as the per-env backend, MaskablePPO's mask protocol, the Recorder's info keys, and a tiny training run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

from c8env import IllegalActionError
from c8env.tools import maskable_ppo
from tests.cutoffs import cut_off_ends
from training.batched import BatchedVecEnv
from training.config import config_from_dict
from training.vec import make_vec_env

ROOT = Path(__file__).resolve().parent.parent.parent
SNAPSHOT = str(ROOT / "c8env" / "agents" / "policies" / "ppo-standard-2p.npz")
POOL = {"random": 0.3, "greedy": 0.4, "expert": 0.0, "self": 0.3}


def config(**fields):
    return config_from_dict({"n_envs": 6, "n_steps": 64, "batch_size": 128, "pretrain_agent": None,
                             "opponent_weights": POOL, **fields})


def comparable(info: dict) -> dict:
    """An info without what differs between backends by nature (wall-clock time, array identity): arrays as lists."""
    out = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in info.items() if k != "episode"}
    if "episode" in info:
        out["episode"] = (info["episode"]["r"], info["episode"]["l"])
    return out


def steady(info: dict, match: bool) -> None:
    """SingleAgentEnv's keys at every step, numbers or numeric arrays (no None, no text)."""
    keys = {"learner_seat", "skipped_deals", "hand_winner", "end_reason", "scores", "action_mask"} | (
        {"match_winner"} if match else set())
    assert keys <= set(info), sorted(keys - set(info))
    for key in keys:
        value = info[key]
        assert isinstance(value, (int, np.ndarray)) and not isinstance(value, bool), (key, value)
        assert not isinstance(value, np.ndarray) or value.dtype.kind in "bi", (key, value.dtype)


@pytest.mark.filterwarnings("ignore::c8env.agents.PolicyMismatchWarning")
@pytest.mark.parametrize("fields", [{}, {"num_players": 3, "pool_per_seat": True}, {"episode": "match"},
                                    {"max_steps": 12}, {"num_players": 3, "max_steps": 12, "cutoff_reward": -2.0}])
def test_batched_backend_steps_like_the_per_env_backend(fields):
    """Same seeds, same actions: the batched envs and the DummyVecEnv of PoolEnvs give the same observations,
    rewards, dones, infos, reset infos and masks (pool draws, snapshots and random opponents included)."""
    batched = make_vec_env(config(vec_env="batched", **fields), [SNAPSHOT])
    dummy = make_vec_env(config(vec_env="dummy", **fields), [SNAPSHOT])
    assert isinstance(batched, BatchedVecEnv)
    for env in (batched, dummy):
        env.seed(3)
    assert np.array_equal(batched.reset(), dummy.reset())
    assert [comparable(i) for i in batched.reset_infos] == [comparable(i) for i in dummy.reset_infos]
    match = fields.get("episode") == "match"
    rng = np.random.default_rng(0)
    kinds = set()
    for _ in range(300):
        masks = get_action_masks(batched)
        assert np.array_equal(masks, get_action_masks(dummy))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        for env in (batched, dummy):
            env.step_async(actions)
        obs, reward, done, infos = batched.step_wait()
        obs2, reward2, done2, infos2 = dummy.step_wait()
        assert np.array_equal(obs, obs2) and np.array_equal(reward, reward2) and np.array_equal(done, done2)
        assert [comparable(i) for i in infos] == [comparable(i) for i in infos2]
        for info in infos:
            steady(info, match)
        for b in np.flatnonzero(done):
            assert comparable(batched.reset_infos[b]) == comparable(dummy.reset_infos[b])
            steady(batched.reset_infos[b], match)
            kinds.add(infos[b]["opponent_kind"])
            assert isinstance(infos[b]["learner_won"], bool)
            assert infos[b]["episode"]["t"] >= 0
    assert kinds and kinds <= {"random", "greedy", "self", "mixed"}


@pytest.mark.parametrize("vec_env", ["batched", "dummy"])
def test_a_hand_cut_off_ends_with_cutoff_reward(vec_env):
    """``cutoff_reward``: a hand cut off at ``max_steps`` ends the episode (no time-limit truncation to bootstrap)
    with that reward; without it, the cut is a truncation with no reward."""
    seen = {}
    for cutoff_reward in (None, -2.0):
        env = make_vec_env(config(vec_env=vec_env, num_players=3, max_steps=6, cutoff_reward=cutoff_reward,
                                  opponent_weights={"random": 1.0, "greedy": 0.0, "expert": 0.0, "self": 0.0}), [])
        env.seed(1)
        env.reset()
        seen[cutoff_reward] = cut_off_ends(env, 40)
    assert seen[None] and all(truncated and r == 0.0 for r, truncated in seen[None])
    assert seen[-2.0] and all(not truncated and r == -2.0 for r, truncated in seen[-2.0])


def test_masks_methods_and_errors():
    env = make_vec_env(config(vec_env="batched"), [])
    assert is_masking_supported(env) and env.has_attr("action_masks") and not env.has_attr("nope")
    env.seed(0)
    env.reset()
    masks = get_action_masks(env)
    assert masks.shape == (6, 60) and masks.dtype == bool and masks.any(axis=1).all()
    assert np.array_equal(masks[[1, 4]], np.stack(env.env_method("action_masks", indices=[1, 4])))
    assert np.array_equal(env.get_attr("action_masks", indices=2)[0](), masks[2])
    assert env.env_method("set_snapshots", [SNAPSHOT]) == [None] * 6 and env.pool.snapshots == [SNAPSHOT]
    assert env.get_attr("render_mode") == [None] * 6 and env.env_is_wrapped(object) == [False] * 6
    with pytest.raises(AttributeError, match="no env method 'render'"):
        env.env_method("render")
    with pytest.raises(AttributeError, match="no env attribute 'pool_size'"):
        env.get_attr("pool_size")
    illegal = np.array([int(np.flatnonzero(~m)[0]) for m in masks])
    with pytest.raises(IllegalActionError, match="illegal in game 0"):
        env.step(illegal)
    env.set_options({"state": {}})
    with pytest.raises(ValueError, match="no reset options"):
        env.reset()


def test_training_keeps_the_packages_vec_env_and_learning_rate():
    """One SB3 VecEnv over the learner games and one linear schedule, both the package's (``c8env exploit``'s)."""
    import training.model

    assert issubclass(BatchedVecEnv, maskable_ppo.LearnerVecEnv)
    assert training.model.LinearDecay is maskable_ppo.LinearDecay


def test_config_switch_and_expert_refusal():
    assert config(vec_env="batched").vec_env == "batched"
    with pytest.raises(ValueError, match="vec_env.*'expert' opponent kind"):
        config(vec_env="batched", opponent_weights={"greedy": 1.0, "expert": 0.5})
    with pytest.raises(ValueError, match="should be 'batched', 'subproc' or 'dummy'"):
        config(vec_env="threads")
    subproc = config(vec_env="subproc", opponent_weights={"greedy": 1.0, "expert": 0.5})  # the other backends can
    with pytest.raises(ValueError, match="cannot play the 'expert'"):
        BatchedVecEnv(subproc.model_copy(update={"vec_env": "batched"}))


@pytest.mark.slow
def test_tiny_maskable_ppo_run_on_the_batched_backend(tmp_path):
    """training.train end to end on the batched envs: warm start, snapshots (self opponents), evaluation."""
    fields = {"pi_layers": [32, 32], "vf_layers": [32, 32], "n_envs": 8, "n_steps": 64, "batch_size": 256,
              "n_epochs": 2, "snapshot_interval": 512, "max_snapshots": 2, "pretrain_samples": 500,
              "pretrain_epochs": 1, "eval_interval": 1024, "eval_deals": 10, "final_eval_deals": 10,
              "checkpoint_interval": 1024, "vec_env": "batched", "run_root": str(tmp_path),
              "opponent_weights": {"random": 0.2, "greedy": 0.4, "self": 0.4}}
    path = tmp_path / "tiny.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items()))
    result = subprocess.run([sys.executable, "-m", "training.train", "--config", str(path), "--total-steps", "2048",
                             "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / "tiny-s0"
    assert (run / "policy.npz").is_file() and len(list((run / "snapshots").glob("*.npz"))) == 2
    progress = (run / "logs" / "progress.csv").read_text()
    assert "train/win_rate_vs_greedy" in progress and "rollout/ep_rew_mean" in progress
    rows = json.loads((run / "eval.json").read_text())["rows"]
    assert [r["opponent"] for r in rows] == ["random", "greedy"]
