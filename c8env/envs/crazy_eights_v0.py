"""``crazy_eights_v0``: the first version of the env, kept for ever as it was released.

The env of :mod:`c8env.envs.crazy_eights` with v0's row of :data:`c8env.versions.VERSIONS`: the 245-entry
observation and ``max_steps`` 100,000 by default. ``metadata["name"]`` is ``crazy_eights_v0``;
``pettingzoo.make("aec", "c8env/crazy_eights-v0")`` builds ``env``.

>>> from c8env import crazy_eights_v0
>>> env = crazy_eights_v0.env(num_players=2)
"""

from __future__ import annotations

from c8env.envs.crazy_eights import released

raw_env, env = released(0, __name__)

__all__ = ["env", "raw_env"]
