"""The env ids c8env registers with Gymnasium and PettingZoo, and the functions that register them.

``import c8env`` arranges for them to be called (``c8env._install_registration``): at once for a
library already imported, else the moment it is imported; so after a plain ``import c8env``,
``gymnasium.make("c8env/SingleAgent-v1")``, ``gymnasium.make_vec("c8env/LearnerVector-v1")`` and
``pettingzoo.make("aec", "c8env/crazy_eights-v1")`` work, and ``gymnasium.make("c8env:c8env/SingleAgent-v1")``
works in a process that imported nothing else. The entry points are strings: registering imports no env
module (and this module imports neither library until its functions run).

Versions (PettingZoo's convention: a change of behaviour gets a new version, the old one stays):

- ``v1`` (``c8env.env``, ``c8env.raw_env``, ``crazy_eights_v1``): ``max_steps`` defaults to
  :data:`c8env.episode.MAX_HAND_STEPS` (10,000), the cap of every tool, so a policy that stalls a hand
  (always drawing) costs seconds; a cut-off hand is a truncation.
- ``v0``: the same classes with ``max_steps`` 100,000 by default, kept for reproducing runs made with them.

``pettingzoo.make`` exists from PettingZoo 1.27; with an older PettingZoo the PettingZoo ids are not
registered (``c8env.env()`` and ``crazy_eights_v1.env()`` work with any supported version).
"""

from __future__ import annotations

from typing import Any

from c8env.episode import V0_MAX_STEPS

_SINGLE = "c8env.envs.single_agent:SingleAgentEnv"
_V0 = {"max_steps": V0_MAX_STEPS}

#: Gymnasium ids: keyword arguments of ``gymnasium.register`` (entry points as strings; the ``-v0`` ids give
#: ``max_steps`` its v0 default, 100,000, through the spec's kwargs).
GYMNASIUM_ENVS: dict[str, dict[str, Any]] = {
    "c8env/SingleAgent-v0": {"entry_point": _SINGLE, "kwargs": _V0},
    "c8env/SingleAgent-v1": {"entry_point": _SINGLE},
    "c8env/LearnerVector-v0": {"entry_point": _SINGLE, "vector_entry_point": "c8env.envs.vector_envs:LearnerVectorEnv",
                               "kwargs": _V0},
    "c8env/LearnerVector-v1": {"entry_point": _SINGLE, "vector_entry_point": "c8env.envs.vector_envs:LearnerVectorEnv"},
    "c8env/SelfPlayVector-v0": {"vector_entry_point": "c8env.envs.vector_envs:SelfPlayVectorEnv", "kwargs": _V0},
    "c8env/SelfPlayVector-v1": {"vector_entry_point": "c8env.envs.vector_envs:SelfPlayVectorEnv"},
}
#: PettingZoo AEC ids: the wrapped ``env`` of each version's module (``pettingzoo.make("aec", id, **arguments)``).
PETTINGZOO_ENVS: dict[str, str] = {
    "c8env/crazy_eights-v0": "c8env.envs.crazy_eights_v0:env",
    "c8env/crazy_eights-v1": "c8env.envs.crazy_eights_v1:env",
}


def register_gymnasium() -> None:
    """Register :data:`GYMNASIUM_ENVS` with Gymnasium (ids already registered are left as they are)."""
    import gymnasium

    for env_id, arguments in GYMNASIUM_ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, **{k: dict(v) if isinstance(v, dict) else v for k, v in arguments.items()})


def register_pettingzoo() -> None:
    """Register :data:`PETTINGZOO_ENVS` with PettingZoo's registry (PettingZoo 1.27+; older versions have none)."""
    import pettingzoo

    register, registry = getattr(pettingzoo, "register", None), getattr(pettingzoo, "aec_registry", None)
    if register is None or registry is None:
        return
    for env_id, entry_point in PETTINGZOO_ENVS.items():
        if env_id not in registry:
            register("aec", env_id, entry_point=entry_point)


__all__ = ["GYMNASIUM_ENVS", "PETTINGZOO_ENVS", "register_gymnasium", "register_pettingzoo"]
