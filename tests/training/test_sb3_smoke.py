"""A tiny MaskablePPO run on the single-agent wrapper, in a subprocess (like CleanRL's tests):
two ``SubprocVecEnv`` workers against random opponents, then whole games played by the model's
deterministic masked actions. Checks that training and play run end to end, not that it learns.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

pytestmark = pytest.mark.slow  # trains in a subprocess

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from c8env.envs.single_agent import SingleAgentEnv

    torch.set_num_threads(1)


    def make(rank):
        return lambda: SingleAgentEnv(num_players=2, opponents="random", max_steps=3_000)


    if __name__ == "__main__":
        venv = SubprocVecEnv([make(0), make(1)])
        assert is_masking_supported(venv)
        assert get_action_masks(venv).shape == (2, 60)
        model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=2, seed=0, verbose=0,
                            policy_kwargs={"net_arch": [32, 32]})
        model.learn(total_timesteps=2_048)
        assert model.num_timesteps >= 2_048
        venv.close()

        env = SingleAgentEnv(num_players=2, opponents="random", max_steps=3_000)
        outcomes = []
        for game in range(3):
            obs, info = env.reset(seed=game)
            done, steps, total = False, 0, 0.0
            while not done:
                mask = env.action_masks()
                action, _ = model.predict(obs, action_masks=mask, deterministic=True)
                assert mask[int(action)], f"illegal action {action}"
                obs, reward, terminated, truncated, info = env.step(action)
                total += reward
                steps += 1
                done = terminated or truncated
            outcomes.append((steps, total, terminated))
        print("SMOKE OK", model.num_timesteps, outcomes)
    """
)


def test_maskable_ppo_smoke():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert "SMOKE OK" in result.stdout
