"""``crazy_eights_v0``: the first version of the env, kept for reproducing runs made with it.

The same env as ``crazy_eights_v1`` (:mod:`c8env.envs.crazy_eights`) but for the default of
``max_steps``: 100,000 moves of one hand (:data:`c8env.episode.V0_MAX_STEPS`) instead of v1's
10,000 (``MAX_HAND_STEPS``). ``metadata["name"]`` is ``crazy_eights_v0``;
``pettingzoo.make("aec", "c8env/crazy_eights-v0")`` builds ``env``.

>>> from c8env import crazy_eights_v0
>>> env = crazy_eights_v0.env(num_players=2)
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from c8env.envs import crazy_eights
from c8env.envs.wrappers import wrap
from c8env.episode import V0_MAX_STEPS


class raw_env(crazy_eights.raw_env):
    """``crazy_eights_v1``'s env with v0's default ``max_steps`` (100,000): see :class:`c8env.envs.crazy_eights.raw_env`."""

    metadata = {**crazy_eights.raw_env.metadata, "name": "crazy_eights_v0"}
    default_max_steps = V0_MAX_STEPS


def env(**kwargs: Any) -> AECEnv:
    """The v0 env wrapped like PettingZoo's classic envs (as :func:`c8env.env`)."""
    return wrap(raw_env(**kwargs))


__all__ = ["env", "raw_env"]
