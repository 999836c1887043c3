"""Hands cut off in an SB3 vector env of masked games: what the cut-off tests of the learner envs look for."""

from __future__ import annotations

from typing import Any

import numpy as np
from sb3_contrib.common.maskable.utils import get_action_masks


def cut_off_ends(env: Any, steps: int, seed: int = 0) -> list[tuple[float, bool]]:
    """Play ``steps`` random legal moves in every game of ``env`` (reset already); for each episode that ended
    without a hand ending (cut off), its reward and ``TimeLimit.truncated``."""
    rng = np.random.default_rng(seed)
    cut = []
    for _ in range(steps):
        masks = get_action_masks(env)
        _, reward, done, infos = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        cut += [(reward[b], infos[b]["TimeLimit.truncated"]) for b in np.flatnonzero(done)
                if infos[b]["end_reason"] == 0]  # no hand ended: cut off
    return cut
