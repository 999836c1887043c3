"""``crazy_eights_v2``: the PettingZoo module of the newest version, laid out like PettingZoo's classic envs
(``from pettingzoo.classic import connect_four_v3``): ``env`` (wrapped) and ``raw_env``, the same as ``c8env.env``
and ``c8env.raw_env`` (the 401-entry observation). ``pettingzoo.make("aec", "c8env/crazy_eights-v2")`` builds ``env``.

>>> from c8env import crazy_eights_v2
>>> env = crazy_eights_v2.env(num_players=2)
"""

from __future__ import annotations

from c8env.envs.crazy_eights import env, raw_env

__all__ = ["env", "raw_env"]
