"""The scripts of ``examples/`` (one per RL library, docs/examples.md).

Each script runs end to end with ``--quick`` in a subprocess (a tiny training budget, the ONNX export or
SB3 ``.zip``, then ``c8env eval`` of it against random and greedy on 10 deals): these check that the
library's API is used as it works today, not that the tiny run learns. A script whose library is not
installed is skipped (``pip install -e ".[examples]"`` installs them all). Every ``python examples/...``
command of docs/examples.md and examples/README.md is parsed by its script's own parser, and the pieces
that carry the turn-based bookkeeping (the SB3 wrapper, the TorchRL rollout split) are checked on real
games.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: Each example and the libraries it needs beyond c8env's core.
SCRIPTS = {
    "sb3_pettingzoo.py": ("sb3_contrib", "onnxruntime"),
    "tianshou_marl.py": ("tianshou", "onnxscript", "onnxruntime"),
    "torchrl_pettingzoo.py": ("torchrl", "tensordict", "onnxscript", "onnxruntime"),
    "cleanrl_ppo.py": ("torch", "numba", "onnxscript", "onnxruntime"),
    "rllib_masked.py": ("ray.rllib", "onnxscript", "onnxruntime"),
    "jax_ppo.py": ("jax",),
}


def need(script: str) -> None:
    for library in SCRIPTS[script]:
        pytest.importorskip(library)


def example(script: str) -> ModuleType:
    """The example script as a module (its ``main`` not run)."""
    need(script)
    spec = importlib.util.spec_from_file_location(f"c8env_example_{Path(script).stem}", EXAMPLES / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_script_is_listed_and_documented() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(SCRIPTS)
    docs, readme = (ROOT / "docs" / "examples.md").read_text(), (EXAMPLES / "README.md").read_text()
    for script in SCRIPTS:
        assert f"python examples/{script}" in docs, f"docs/examples.md has no command of {script}"
        assert script in readme, f"examples/README.md does not list {script}"


def documented_commands() -> list[tuple[str, list[str]]]:
    out = []
    for path in (ROOT / "docs" / "examples.md", EXAMPLES / "README.md"):
        for line in path.read_text().splitlines():
            words = shlex.split(line, comments=True) if line.startswith("python examples/") else []
            if words:
                out.append((Path(words[1]).name, words[2:]))
    return out


@pytest.mark.slow  # imports each library (Ray, TorchRL, Tianshou: seconds each)
@pytest.mark.parametrize("script,args", documented_commands(), ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_documented_commands_parse(script: str, args: list[str]) -> None:
    assert script in SCRIPTS, f"the docs run examples/{script}, which is not an example"
    example(script).build_parser().parse_args(args)


@pytest.mark.slow  # a training run in a subprocess: 20-90 s each on 2 shared cores
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_runs_quick(script: str, tmp_path: Path) -> None:
    need(script)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, str(EXAMPLES / script), "--quick", "--out", str(tmp_path)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{script}:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    out = result.stdout
    assert re.search(r"^trained [\d,]+ .*: [\d,]+ steps/s \(", out, re.M), out
    for opponent in ("random", "greedy"):
        assert re.search(rf"^c8env eval \S+ {opponent} --deals 10: win rate [\d.]+% \[[\d.]+%, [\d.]+%\] over 20 hands$",
                         out, re.M), out
    assert any(tmp_path.glob("*.onnx")) or (tmp_path / "model.zip").exists() or (tmp_path / "policy.npz").exists()


def test_sb3_wrapper_is_a_gymnasium_env_with_masks() -> None:
    """SB3's env checker passes; every hand ends with the learner's own result (+1 won, -1 lost)."""
    module = example("sb3_pettingzoo.py")
    from stable_baselines3.common.env_checker import check_env

    env = module.LearnerSeat(num_players=2, opponents=("random", "greedy"))
    check_env(env, warn=False)
    rng = np.random.default_rng(0)
    results = []
    obs, _ = env.reset(seed=3)
    while len(results) < 20:
        mask = env.action_masks()
        assert obs.shape == (401,) and mask.any()
        obs, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            assert not env.action_masks().any()
            results.append(reward)
            obs, _ = env.reset()
    assert set(results) <= {1.0, -1.0, 0.0} and -1.0 in results


@pytest.mark.slow  # imports TorchRL
def test_torchrl_split_gives_each_learner_decision_its_reward() -> None:
    """The learner's decisions taken out of a rollout of both players carry the hands' results: over the
    hands that ended, their rewards sum to player_0's."""
    module = example("torchrl_pettingzoo.py")
    from torchrl.envs import PettingZooWrapper

    import c8env

    env = PettingZooWrapper(env=c8env.env(num_players=2), use_mask=True, categorical_actions=True, seed=1)
    rollout = env.rollout(600, policy=_greedy_players(module), break_when_any_done=False)
    batch = module.learner_decisions(rollout)
    done = rollout["next", "done"][:, 0]
    last_end = int(np.flatnonzero(done.numpy())[-1])
    rewards = rollout["next", module.LEARNER, "reward"][: last_end + 1, 0, 0]
    ended = batch["next", "done"][:, 0]
    assert int(ended.sum()) == int(done.sum()) > 0
    upto = int(np.flatnonzero(ended.numpy())[-1])
    assert float(batch["next", "reward"][: upto + 1].sum()) == pytest.approx(float(rewards.sum()))
    assert bool(batch["action_mask"].gather(-1, batch["action"].unsqueeze(-1)).all())  # all legal


@pytest.mark.slow  # imports Tianshou
def test_tianshou_folding_gives_each_learner_transition_its_reward() -> None:
    """Tianshou's buffer holds both players' moves; folded into the learner's transitions, the rewards of the
    hands that ended sum to player_0's, and a hand ends on the learner's transition that precedes its end."""
    module = example("tianshou_marl.py")
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    env = module.make_env()
    algorithm = module.MultiAgentOnPolicyAlgorithm(
        algorithms=[module.FixedAgent(env.action_space, "random", 0), module.FixedAgent(env.action_space, "greedy", 1)],
        env=env)
    envs = DummyVectorEnv([module.make_env for _ in range(2)])
    envs.seed(3)
    buffer = VectorReplayBuffer(6000, 2)
    Collector(algorithm, envs, buffer).collect(n_step=6000, reset_before_collect=True)
    batch, indices = buffer.sample(0)
    mine = indices[batch.obs.agent_id == module.LEARNER]
    rew = np.asarray(buffer.rew)[:, 0]
    reward, terminated, truncated, last = module.fold_opponent_moves(buffer, mine, rew)
    ended = np.asarray(buffer.done)
    assert int(terminated.sum()) == int(ended.sum()) > 0  # each finished hand ends one learner transition
    assert set(np.round(reward[terminated], 6)) <= {1.0, -1.0}
    assert float(reward[~truncated].sum()) == pytest.approx(float(rew[ended].sum()))
    assert np.all(buffer.obs.agent_id[buffer.next(last[~terminated & ~truncated])] == module.LEARNER)


def _greedy_players(module):
    """A TorchRL policy: c8env's greedy agent in both seats (short hands), a log-prob of 0 for the learner's."""
    import torch

    players = {group: module.FixedAgent("greedy", seed) for seed, group in enumerate((module.LEARNER, module.OPPONENT))}

    def policy(td):
        for group, agent in players.items():
            td[group, "action"] = agent(td[group, "observation", "observation"], td[group, "action_mask"])
        td[module.LEARNER, "action_log_prob"] = torch.zeros(td[module.LEARNER, "action"].shape)
        return td

    return policy
