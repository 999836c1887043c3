"""``crazy_eights_v1``: the second version of the env, kept for ever as it was released.

The env of :mod:`c8env.envs.crazy_eights` with v1's row of :data:`c8env.versions.VERSIONS`: the 245-entry
observation and ``max_steps`` 10,000 by default. ``metadata["name"]`` is ``crazy_eights_v1``;
``pettingzoo.make("aec", "c8env/crazy_eights-v1")`` builds ``env``.

>>> from c8env import crazy_eights_v1
>>> env = crazy_eights_v1.env(num_players=2)
"""

from __future__ import annotations

from c8env.envs.crazy_eights import released

raw_env, env = released(1, __name__)

__all__ = ["env", "raw_env"]
