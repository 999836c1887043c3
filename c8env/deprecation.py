"""Old import paths, kept for one release: each warns (``DeprecationWarning``) and leads to the new home.

c8env 0.2 moved its modules into folders by layer (``CHANGELOG.md``). Rather than leave a
file at every old path, :data:`MOVED` lists them and ``import c8env`` installs a finder
that serves each: ``import c8env.wrappers`` warns and gives the very module
``c8env.envs.single_agent``; a module whose contents were split (``c8env.agents.heuristic``)
becomes a module holding the public names of its new homes; ``python -m c8env.demo`` runs
``c8env.tools.demo``. A name that left a module that still exists is served by
:func:`moved_names`. All of it goes in c8env :data:`REMOVED_IN`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import sys
import types
import warnings
from collections.abc import Callable, Sequence
from typing import Any

REMOVED_IN = "0.3"

#: Old module path -> its new home (or homes, for a module that was split).
MOVED: dict[str, str | tuple[str, ...]] = {
    "c8env.crazy_eights": "c8env.envs.crazy_eights",
    "c8env.pettingzoo_wrappers": "c8env.envs.wrappers",
    "c8env.spaces": "c8env.envs.spaces",
    "c8env.wrappers": "c8env.envs.single_agent",
    "c8env.batched_learner": "c8env.envs.learner_games",
    "c8env.batched_envs": "c8env.envs.vector_envs",
    "c8env.evaluate": "c8env.tools.evaluation",
    "c8env.play": "c8env.tools.play",
    "c8env.demo": "c8env.tools.demo",
    "c8env.replay": "c8env.tools.replay",
    "c8env.speed": "c8env.tools.speed",
    "c8env.cli": "c8env.tools.cli",
    "c8env.argcheck": "c8env.tools.argcheck",
    "c8env.agents.heuristic": ("c8env.agents.greedy", "c8env.agents.random_agent"),
    "c8env.agents.view": "c8env.agents.decision_view",
    "c8env.vector.agents": ("c8env.agents.batched", "c8env.vector.games"),
    "c8env.vector.search": "c8env.agents.search_compiled",
    "c8env.web.view": "c8env.web.seat_view",
}


#: Public module paths that live elsewhere but are not deprecated (PettingZoo's ``crazy_eights_v1`` layout).
ALIASES = {"c8env.crazy_eights_v0": "c8env.envs.crazy_eights_v0", "c8env.crazy_eights_v1": "c8env.envs.crazy_eights_v1"}


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside this module and importlib: the line that imported.
    ``warnings`` skips the import system's ``_bootstrap`` frames itself, so those are not counted."""
    frame, level = inspect.currentframe(), 0
    while frame is not None:
        name = frame.f_code.co_filename
        if name != __file__ and "importlib" not in name:
            return level
        level += "_bootstrap" not in name
        frame = frame.f_back
    return level


def warn_moved(old: str, new: str, stacklevel: int | None = None) -> None:
    """Say that ``old`` is now ``new`` (a ``DeprecationWarning`` pointing at the caller's line, or ``stacklevel``)."""
    warnings.warn(f"{old} moved to {new}; the old path is removed in c8env {REMOVED_IN}", DeprecationWarning,
                  stacklevel=_caller_level() if stacklevel is None else stacklevel)


def _homes(name: str) -> tuple[str, ...]:
    new = MOVED[name]
    return (new,) if isinstance(new, str) else new


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.InspectLoader):
    """The finder and loader of the module paths in :data:`MOVED` and :data:`ALIASES`."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec] = {}  # an aliased module's own spec, put back

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in MOVED or fullname in ALIASES else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        if spec.name in ALIASES:
            homes: tuple[str, ...] = (ALIASES[spec.name],)
        else:
            homes = _homes(spec.name)
            warn_moved(spec.name, " and ".join(homes))
        if len(homes) > 1:
            return None  # a split module: a new module, filled by exec_module
        module = importlib.import_module(homes[0])  # one home: that very module
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ in self._specs:  # the import system gave the aliased module the old path's spec
            module.__spec__ = self._specs.pop(module.__name__)
            return
        for home in map(importlib.import_module, _homes(module.__name__)):  # a split module: every home's names
            module.__dict__.update({k: getattr(home, k) for k in getattr(home, "__all__", ())})

    def get_source(self, fullname: str) -> str:
        """``python -m OLD`` warns and runs the new module as ``__main__``."""
        new = _homes(fullname)[0]
        return (f"from c8env.deprecation import warn_moved\nwarn_moved({fullname!r}, {new!r})\n"
                f"import runpy\nrunpy.run_module({new!r}, run_name='__main__', alter_sys=True)\n")

    def is_package(self, fullname: str) -> bool:
        return False


def install() -> None:
    """Serve the old paths (once per process; ``import c8env`` calls it)."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())


def moved_names(module: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names that left ``module``: ``names`` maps each to its new module."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warn_moved(f"{module}.{name}", f"{names[name]}.{name}")
        return getattr(importlib.import_module(names[name]), name)

    return __getattr__


__all__ = ["ALIASES", "MOVED", "REMOVED_IN", "MovedModules", "install", "moved_names", "warn_moved"]
