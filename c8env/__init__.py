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

``import c8env`` loads the core; the PettingZoo env (``env``, ``raw_env``) loads on first
use (PEP 562), so ``import c8env.engine`` works without Gymnasium or PettingZoo. The
module paths of c8env 0.1 still import, with a ``DeprecationWarning``
(:mod:`c8env.deprecation`).
"""

from __future__ import annotations

import importlib
from typing import Any

from c8env import deprecation
from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, NUM_ACTIONS, PASS, STOP, action_text
from c8env.cards import card_text, parse_card, parse_cards
from c8env.engine import IllegalActionError, Phase, State
from c8env.observation import OBS_LAYOUT, OBS_SIZE
from c8env.rules import RuleSet, load_rules, preset_names

__version__ = "0.2.0"

deprecation.install()

#: Public names that load their module on first access (they need Gymnasium and PettingZoo).
_LAZY = {"env": "c8env.envs.crazy_eights", "raw_env": "c8env.envs.crazy_eights"}
#: Modules loaded on first access: ``c8env.crazy_eights_v0`` is the PettingZoo-style module (``env``, ``raw_env``).
_LAZY_MODULES = {"crazy_eights_v0": "c8env.envs.crazy_eights_v0"}


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
