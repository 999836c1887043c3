"""The env ids c8env registers with Gymnasium and PettingZoo, and the functions that register them.

``import c8env`` arranges for them to be called (``c8env._install_registration``): at once for a
library already imported, else the moment it is imported; so after a plain ``import c8env``,
``gymnasium.make("c8env/SingleAgent-v2")``, ``gymnasium.make_vec("c8env/LearnerVector-v2")`` and
``pettingzoo.make("aec", "c8env/crazy_eights-v2")`` work, and ``gymnasium.make("c8env:c8env/SingleAgent-v2")``
works in a process that imported nothing else. The entry points are strings: registering imports no env
module (and this module imports neither library until its functions run).

Versions (PettingZoo's and Gymnasium's convention: a change of what a learner sees or gets is a new version,
and the old ids keep theirs for ever): every version of :data:`c8env.versions.VERSIONS` has its ids. The
Gymnasium ids pass ``version=N`` to the class (its observation and defaults); the PettingZoo ids build the
``env`` of the version's module ``c8env.envs.crazy_eights_vN``.

``pettingzoo.make`` exists from PettingZoo 1.27; with an older PettingZoo the PettingZoo ids are not
registered (``c8env.env()`` and ``crazy_eights_v2.env()`` work with any supported version).
"""

from __future__ import annotations

from typing import Any

from c8env.versions import VERSIONS

_SINGLE = "c8env.envs.single_agent:SingleAgentEnv"
_VECTORS = "c8env.envs.vector_envs"

#: Gymnasium ids: keyword arguments of ``gymnasium.register`` (entry points as strings), three per version.
GYMNASIUM_ENVS: dict[str, dict[str, Any]] = {
    f"c8env/{name}-v{row.number}": {**entry_points, "kwargs": {"version": row.number}}
    for row in VERSIONS
    for name, entry_points in (
        ("SingleAgent", {"entry_point": _SINGLE}),
        ("LearnerVector", {"entry_point": _SINGLE, "vector_entry_point": f"{_VECTORS}:LearnerVectorEnv"}),
        ("SelfPlayVector", {"vector_entry_point": f"{_VECTORS}:SelfPlayVectorEnv"}),
    )
}
#: PettingZoo AEC ids: the wrapped ``env`` of each version's module (``pettingzoo.make("aec", id, **arguments)``).
PETTINGZOO_ENVS: dict[str, str] = {f"c8env/crazy_eights-v{row.number}": f"c8env.envs.{row.name}:env"
                                   for row in VERSIONS}


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
