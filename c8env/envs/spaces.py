"""What the PettingZoo env and the Gymnasium wrapper share on the Gymnasium side: spaces and rendering."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import logger, spaces

from c8env.actions import NUM_ACTIONS
from c8env.observation import OBS_SIZE

RENDER_MODES = ("ansi", "human")


class ActionSpace(spaces.Discrete):
    """``Discrete(60)`` whose masked ``sample`` is a fast uniform choice among the legal actions.

    Same contract as ``Discrete.sample(mask)`` (an int8 mask of 0s and 1s; ``start`` when
    nothing is legal), drawing from the space's own seeded ``np_random``.
    """

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> int | np.int64:
        if mask is None or probability is not None or not isinstance(mask, np.ndarray) or mask.dtype != np.int8 \
                or mask.shape != (self.n,):
            return super().sample(mask, probability)  # the standard checks and errors
        data = mask.tobytes()  # one byte an action: counted and searched without NumPy calls
        legal = data.count(1)
        if legal == 0 or legal + data.count(0) != len(data):  # nothing legal, or values other than 0/1
            return super().sample(mask)
        index = data.find(1)
        for _ in range(int(self.np_random.random() * legal)):  # the drawn legal action, in ascending order
            index = data.find(1, index + 1)
        return int(self.start + index)  # a plain int: no conversion later

    def contains(self, x: Any) -> bool:
        if type(x) is int or isinstance(x, np.integer):
            return bool(self.start <= x < self.start + self.n)
        return super().contains(x)


def action_space() -> ActionSpace:
    """The action space of every seat: ``Discrete(60)`` with a fast masked ``sample``."""
    return ActionSpace(NUM_ACTIONS)


def vector_space(size: int = OBS_SIZE) -> spaces.Box:
    """The space of one observation vector of ``size`` entries (an env version's; raw counts: ``c8env.OBS_LAYOUT``
    names its parts)."""
    return spaces.Box(low=-1.0, high=1e6, shape=(size,), dtype=np.float32)


def observation_dict_space(size: int = OBS_SIZE) -> spaces.Dict:
    """The PettingZoo env's observation space: the vector (of ``size`` entries) and the int8 action mask."""
    return spaces.Dict({
        "observation": vector_space(size),
        "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
    })


def check_render_mode(render_mode: str | None) -> str | None:
    """Validate a render mode (None, ``ansi`` or ``human``)."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode={render_mode!r} is invalid; allowed: None, 'ansi' or 'human'")
    return render_mode


def render_output(render_mode: str | None, text: Callable[[], str]) -> str | None:
    """What ``render()`` does with a render mode: warn without one, print for ``human``, return for ``ansi``."""
    if render_mode is None:
        logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
        return None
    shown = text()
    if render_mode == "human":
        print(shown)
        return None
    return shown


__all__ = ["RENDER_MODES", "ActionSpace", "action_space", "check_render_mode", "observation_dict_space", "render_output",
           "vector_space"]
