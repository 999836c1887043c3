"""Positions for comparing policies (ONNX, SB3, NumPy files): what a learner seat sees when it plays random legal
moves against ``random``."""

from __future__ import annotations

import numpy as np

from c8env.envs.single_agent import SingleAgentEnv


def positions(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations float32[count, 401] and masks int8[count, 60] of a learner seat playing random legal moves."""
    env = SingleAgentEnv(num_players=2, opponents="random")
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    observations, masks = [], []
    while len(observations) < count:
        mask = env.action_masks()
        observations.append(obs)
        masks.append(mask.astype(np.int8))
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
    return np.stack(observations), np.stack(masks)
