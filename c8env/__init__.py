"""c8env: the reference reinforcement-learning environment for Crazy Eights.

The package is laid out by layer, each resting only on those before it:

- the core, flat in ``c8env/`` (NumPy and PyYAML only): ``cards``, ``actions``, ``rules``
  (and the ``presets/``), ``engine``, ``observation``, ``episode``, ``seeding``, ``text``;
- ``vector/``: the batched engine (B games as arrays, optionally compiled with numba);
- ``agents/``: every agent, scalar and batched, and the compiled search;
- ``envs/``: the PettingZoo env, the single-agent Gymnasium env, the learner games and the
  vector envs;
- ``tools/``: evaluation, terminal play, the demo, replays, speed benchmarks, the CLI;
- ``web/``: the browser server.

``import c8env`` loads the core; the PettingZoo env (``env``, ``raw_env``: ``crazy_eights_v2``, the newest
version) loads on first use (PEP 562), so ``import c8env.engine`` works without Gymnasium or PettingZoo.
``import c8env`` also registers the env ids (:mod:`c8env.envs.registration`: ``c8env/SingleAgent-v2``,
``c8env/LearnerVector-v2``, ``c8env/SelfPlayVector-v2`` with Gymnasium, ``c8env/crazy_eights-v2`` with PettingZoo,
and their ``v1`` and ``v0``, kept as released: :mod:`c8env.versions`) with each library already imported, and
with the others the moment they are imported; it imports neither. ``import c8env.crazy_eights_v2`` (and ``v1``,
``v0``: PettingZoo's layout) gives the module ``c8env.envs.crazy_eights_v2`` itself.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Sequence
from typing import Any

from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, NUM_ACTIONS, PASS, STOP, action_text
from c8env.cards import card_text, parse_card, parse_cards
from c8env.engine import IllegalActionError, Phase, State
from c8env.observation import OBS_LAYOUT, OBS_SIZE
from c8env.rules import RuleSet, load_rules, preset_names

__version__ = "0.3.0.dev0"

#: Public names that load their module on first access (they need Gymnasium and PettingZoo).
_LAZY = {"env": "c8env.envs.crazy_eights", "raw_env": "c8env.envs.crazy_eights"}
#: Modules loaded on first access: ``c8env.crazy_eights_vN``, the PettingZoo-style module (``env``, ``raw_env``) of
#: each version (:mod:`c8env.versions`); v2 is the newest, v1 and v0 are kept as they were released.
_LAZY_MODULES = {f"crazy_eights_v{n}": f"c8env.envs.crazy_eights_v{n}" for n in range(3)}
#: The same modules by import path (``import c8env.crazy_eights_v2``): each path is the module it names.
_ALIASES = {f"c8env.{name}": module for name, module in _LAZY_MODULES.items()}
#: The registration function (:mod:`c8env.envs.registration`) of each library c8env registers its envs with.
_REGISTER = {"gymnasium": "register_gymnasium", "pettingzoo": "register_pettingzoo"}


def _register(library: str) -> None:
    """Register c8env's ids with ``library`` (imported by now); a failure warns and leaves the library usable."""
    try:
        getattr(importlib.import_module("c8env.envs.registration"), _REGISTER[library])()
    except Exception as error:  # an import of gymnasium must not fail because of c8env
        warnings.warn(f"c8env could not register its envs with {library}: {error!r}", RuntimeWarning, stacklevel=2)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Registers c8env's envs with Gymnasium or PettingZoo right after that library is imported.

    It finds nothing itself: for a watched name it asks the finders after it for the spec and wraps its
    loader, which runs the module as usual, puts the real loader back, then registers. Once every
    library is done it leaves ``sys.meta_path``.
    """

    def __init__(self, libraries: set[str]) -> None:
        self.pending = libraries

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> Any:
        if fullname not in self.pending or self not in sys.meta_path:
            return None
        for finder in sys.meta_path[sys.meta_path.index(self) + 1:]:
            find = getattr(finder, "find_spec", None)
            spec = None if find is None else find(fullname, path, target)
            if spec is not None:
                if getattr(spec.loader, "exec_module", None) is not None:
                    spec.loader = _ThenRegister(spec.loader, self)
                return spec
        return None

    def done(self, library: str) -> None:
        """``library`` was imported: register with it (once), and leave when nothing is pending."""
        if library in self.pending:
            self.pending.discard(library)
            if not self.pending and self in sys.meta_path:
                sys.meta_path.remove(self)
            _register(library)


class _ThenRegister(importlib.abc.Loader):
    """A library's own loader, then registration (see :class:`_RegisterOnImport`)."""

    def __init__(self, loader: Any, hook: _RegisterOnImport) -> None:
        self.loader, self.hook = loader, hook

    def create_module(self, spec: Any) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = module.__spec__.loader = self.loader  # the module keeps its real loader
        self.loader.exec_module(module)
        self.hook.done(module.__name__)


def _install_registration() -> None:
    """Register with the libraries already imported; watch for the others (once per process)."""
    if any(isinstance(finder, _RegisterOnImport) for finder in sys.meta_path):
        return
    waiting = set()
    for library in _REGISTER:
        if library in sys.modules:
            _register(library)
        else:
            waiting.add(library)
    if waiting:
        sys.meta_path.insert(0, _RegisterOnImport(waiting))


_install_registration()


class _ModuleAliases(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports each path of :data:`_ALIASES` as the very module it names, which keeps its own spec."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec] = {}  # the named module's spec, put back

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in _ALIASES else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(_ALIASES[spec.name])
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._specs.pop(module.__name__)  # the import system gave it the alias's spec


if not any(isinstance(finder, _ModuleAliases) for finder in sys.meta_path):
    sys.meta_path.append(_ModuleAliases())


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(_LAZY_MODULES[name])
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'c8env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))


__all__ = [
    "OBS_LAYOUT",
    "OBS_SIZE",
    "crazy_eights_v0",
    "crazy_eights_v1",
    "crazy_eights_v2",
    "env",
    "raw_env",
    "ANNOUNCE",
    "DECLARE_BASE",
    "DRAW",
    "NUM_ACTIONS",
    "PASS",
    "STOP",
    "IllegalActionError",
    "Phase",
    "RuleSet",
    "State",
    "action_text",
    "card_text",
    "load_rules",
    "parse_card",
    "parse_cards",
    "preset_names",
]
