"""Policies usable as opponents: ``c8env.agents.load(spec, rules=..., num_players=...)``.

Every agent has ``act(observation) -> int`` (the env's observation dict, on the
agent's turn) and always returns a legal action. Specs:

- ``random``: uniform over the legal actions;
- ``greedy``: the fast heuristic of :func:`c8env.agents.greedy.greedy_action`;
- ``expert``: determinized Monte Carlo search (:mod:`c8env.agents.expert`); options
  after a colon, e.g. ``expert:simulations=200`` or ``expert:time_ms=50``; with
  ``policy=<shipped name or .npz path>`` a trained network guides it (``top=3``
  candidates searched, ``prior=0`` weight of the network's log-probability added to their means,
  ``confident=P``: its favourite played unsearched where it gives it probability P or more,
  ``rollouts=policy``: the network also plays the searcher's moves in the rollouts; ``rollouts=<shipped name or
  .npz path>``: that network plays them); the research options (:data:`RESEARCH_OPTIONS`) are refused here: they
  live in ``training/research/expert.py``;
- a named search of the catalog (``expert-strong``: the strongest agent at 2 players), or the name of a trained
  policy shipped in the package (see :func:`available` and ``c8env agents``: :mod:`c8env.agents.catalog`);
- the path of an exported policy file (:mod:`c8env.agents.policy`);
- the path of an ONNX policy, ``*.onnx`` (:mod:`c8env.agents.onnx_policy`, the ``onnx`` extra), or of a
  Stable-Baselines3 model, ``*.zip`` (MaskablePPO, PPO, DQN: :mod:`c8env.agents.sb3_policy`, the ``train`` extra);
- ``package.module:name``: an agent object of the user's (anything with ``act``) or a
  factory, called as ``factory(rules=RuleSet, num_players=int, seed=int | None)``.

:func:`load` also takes the object or the factory itself. Agents that are not c8env's
own are shown sealed observations (:func:`observation_for`): a plain dict of fresh
arrays, from which no other hand and no card of the stock can be reached.
"""

from __future__ import annotations

import importlib
import math
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from c8env.agents import catalog
from c8env.agents.best_response import GreedyBestResponse
from c8env.agents.expert import ExpertAgent
from c8env.agents.greedy import GreedyAgent
from c8env.agents.policy import POLICY_DIR, PolicyAgent
from c8env.agents.random_agent import RandomAgent
from c8env.engine import State, check_num_players, check_seed
from c8env.observation import StateObservation, sealed_observation
from c8env.rules import RuleSet, load_rules

BUILTIN = ("random", "greedy", "expert")
#: What an agent-spec option is (:class:`Option`): what a server checks before it builds the agent.
OPTION_KINDS = ("policy", "budget", "setting")


@dataclass(frozen=True)
class Option:
    """One option of a built-in agent's spec (``name:key=value,...``): its ``type``, the ``check`` of a typed value
    and the words of what the check ``allowed``, and its ``kind``, which a server reads before it builds the agent:

    - ``"policy"``: the value names a policy file (a shipped name or the path of a .npz file), or is one of
      ``words``; a server allows only ``words``, shipped names and the policies uploaded to it (never a path of its
      disk). Its cost is bounded by the network's size (a shipped one's, or the server's upload limit);
    - ``"budget"``: the value sets how much time or memory each move costs; ``cap`` is the largest a server that
      shares its CPU among players allows (``c8env serve``);
    - ``"setting"``: neither (a weight, a probability, a switch: no more work per move than the other options set).

    A ``budget`` without a ``cap``, a ``cap`` or ``words`` on another kind, or an unknown kind raise ``ValueError``.
    """

    type: type
    check: Callable[[Any], bool]
    allowed: str
    kind: str
    cap: float | None = None
    words: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in OPTION_KINDS:
            raise ValueError(f"Option kind={self.kind!r} is invalid; allowed: {', '.join(OPTION_KINDS)}")
        if (self.kind == "budget") != (self.cap is not None):
            raise ValueError(f"Option kind={self.kind!r} with cap={self.cap!r}: a budget needs a cap (a server's "
                             "limit), and only a budget has one")
        if self.words and self.kind != "policy":
            raise ValueError(f"Option kind={self.kind!r} with words={self.words!r}: only a policy option has words")


#: The options of each built-in agent's spec: name -> option name -> :class:`Option`.
OPTIONS: dict[str, dict[str, Option]] = {"expert": {
    "simulations": Option(int, lambda v: v >= 1, "an int >= 1", "budget", cap=2000),
    "time_ms": Option(float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0", "budget", cap=5000.0),
    "policy": Option(str, lambda v: bool(v.strip()), "a shipped policy name or a .npz path", "policy"),
    # at most the legal moves are searched, as without a policy
    "top": Option(int, lambda v: v >= 1, "an int >= 1", "setting"),
    "prior": Option(float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0", "setting"),
    "rollouts": Option(str, lambda v: bool(v.strip()), "'greedy', 'policy', a shipped policy name or a .npz path",
                       "policy", words=("greedy", "policy")),
    "confident": Option(float, lambda v: 0 < v <= 1, "a number in (0, 1]", "setting"),  # searches less
}}
#: The options of each built-in agent's spec that are research, not c8env's (measured to gain nothing at play time,
#: or serving only to record demonstrations): option name -> where it lives. :func:`parse_options` refuses them.
RESEARCH_OPTIONS: dict[str, dict[str, str]] = {"expert": dict.fromkeys(
    ("belief", "draws", "last_draws", "explain_hand"), "training/research/expert.py (ResearchExpert)")}


class Agent(Protocol):
    """What every agent offers."""

    def act(self, observation: dict) -> int: ...


class BatchAgent(Agent, Protocol):
    """An agent the batched engine can play: one move per row of a batch, each the move :meth:`act` would make."""

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Observations float32[k, 401] and masks int8[k, 60] in (rows of games whose player to act is this
        agent), actions int64[k] out."""
        ...


#: How :func:`batch_mode` says the batched engine plays an agent.
BATCH_MODES = ("random", "greedy", "act_batch")


def batch_mode(agent: Agent) -> str | None:
    """How the batched engine (evaluation, the learner games) plays ``agent``: with a compiled kernel
    (``"random"``, ``"greedy"``: the agent's ``batch_kernel``, the same moves as its ``act``), through its
    ``act_batch`` (:class:`BatchAgent`), or not at all (None: one hand at a time on the scalar engine)."""
    kernel = getattr(agent, "batch_kernel", None)
    if kernel is not None:
        if kernel not in BATCH_MODES[:2]:
            raise ValueError(f"{type(agent).__name__}.batch_kernel={kernel!r} is invalid; allowed: 'random', 'greedy'")
        return kernel
    return "act_batch" if callable(getattr(agent, "act_batch", None)) else None


#: c8env's own agents (exact types, not subclasses): they read the public facts of the state behind a
#: :class:`~c8env.observation.StateObservation` instead of decoding the vector.
_OWN_TYPES = (RandomAgent, GreedyAgent, ExpertAgent, PolicyAgent, GreedyBestResponse)
_IMPORT_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def is_own(agent: object) -> bool:
    """Whether ``agent`` is one of c8env's own agents (which may read the state behind an observation)."""
    return type(agent) in _OWN_TYPES


def observation_for(agent: Agent, state: State, seat: int) -> Mapping[str, np.ndarray]:
    """What ``agent`` is shown on ``seat``'s turn: c8env's own agents get a lazy
    :class:`~c8env.observation.StateObservation` (their fast path); every other agent a sealed plain dict
    of fresh arrays (:func:`~c8env.observation.sealed_observation`)."""
    return StateObservation(state, seat) if type(agent) in _OWN_TYPES else sealed_observation(state, seat)


def agent_name(entry: object) -> str:
    """How tables and errors name an agent entry: a spec as written, an object's ``name`` (else its class),
    a factory's name."""
    if isinstance(entry, (str, Path)):
        return str(entry)
    name = getattr(entry, "name", None)
    if isinstance(name, str) and name:
        return name
    if isinstance(entry, type) or not callable(getattr(entry, "act", None)):
        return getattr(entry, "__qualname__", None) or type(entry).__name__
    return type(entry).__name__


def shipped_policies() -> list[str]:
    """Names of the trained policies shipped inside the package (the catalog's networks)."""
    return catalog.catalog().names("network")


def named_searches() -> dict[str, str]:
    """The catalog's named searches: name -> the spec it stands for (e.g. ``expert-strong``)."""
    return {e.name: e.spec for e in catalog.catalog().entries.values() if e.spec is not None}


def available() -> list[str]:
    """Every spec loadable by name, in the catalog's order (``c8env agents`` shows what each is): the built-in
    agents, the named searches and the shipped trained policies."""
    return catalog.catalog().names()


def _refuse_retired(name: str) -> None:
    """A ``ValueError`` of one line for a policy name that left the package: its replacement and where it lives."""
    retired = catalog.catalog().retired.get(name)
    if retired is not None:
        raise ValueError(retired.message())


def parse_options(name: str, text: str) -> dict[str, Any]:
    """The options of a spec ``name:text`` (``key=value`` items separated by commas), typed; a ``ValueError`` of
    one line naming the key for an unknown, repeated, mistyped or out-of-range option."""
    allowed = OPTIONS.get(name, {})
    options: dict[str, Any] = {}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        key = key.strip()
        if key in RESEARCH_OPTIONS.get(name, {}):
            raise ValueError(f"agent spec option {key!r} for {name!r} is a research option, not part of c8env's "
                             f"agents: it lives in {RESEARCH_OPTIONS[name][key]}")
        if not sep or key not in allowed:
            raise ValueError(
                f"agent spec option {item!r} for {name!r} is invalid; allowed: "
                + (", ".join(f"{k}=<{o.type.__name__}>" for k, o in allowed.items()) or "none")
            )
        if key in options:
            raise ValueError(f"agent spec option {key!r} for {name!r} is given twice ({name}:{text}); give it once")
        option = allowed[key]
        try:
            options[key] = option.type(value)
        except ValueError:
            article = "an" if option.type is int else "a"
            raise ValueError(f"agent spec option {key}={value[:60]!r} for {name!r} is not {article} "
                             f"{option.type.__name__}") from None
        if not option.check(options[key]):
            raise ValueError(f"agent spec option {key}={options[key]!r:.60} is invalid for {name!r} (out of range); "
                             f"allowed: {option.allowed}")
    return options


class PolicyMismatchWarning(UserWarning):
    """A policy file is played with a player count or rules other than those it was trained for."""


def _checked_policy(agent: PolicyAgent, rules: RuleSet, num_players: int) -> PolicyAgent:
    """Say so (a :class:`PolicyMismatchWarning`) when a policy is played outside what it was trained for:
    it still plays (benchmarks do this on purpose), but not silently."""
    meta = agent.meta
    made_for = []
    trained_players = meta.get("num_players")
    if isinstance(trained_players, int) and trained_players != num_players:
        made_for.append(f"{trained_players} players (played with {num_players})")
    trained_rules = meta.get("rules")
    if isinstance(trained_rules, dict):
        try:
            differ = RuleSet.from_dict(trained_rules).differences(rules)
        except ValueError:
            differ = ["(unreadable rules in the file)"]
        if differ:
            made_for.append(f"other rules (fields that differ: {', '.join(differ)})")
    if made_for:
        warnings.warn(f"policy {agent.name!r} was trained for {' and '.join(made_for)}; it plays, but outside "
                      "what it learned", PolicyMismatchWarning, stacklevel=4)
    return agent


def _model_file(spec: str | Path, rules: RuleSet, num_players: int) -> Agent:
    """An ONNX policy (``.onnx``) or a Stable-Baselines3 model (``.zip``) from its path; their libraries are
    imported only here."""
    path = Path(spec)
    if not path.is_file():
        raise ValueError(f"agent spec {str(spec)!r}: no such {path.suffix} file")
    if path.suffix == ".onnx":
        from c8env.agents.onnx_policy import OnnxAgent

        return _checked_policy(OnnxAgent(path), rules, num_players)  # type: ignore[arg-type]
    from c8env.agents.sb3_policy import SB3Agent

    return SB3Agent(path)


def _policy(spec: str | Path, rules: RuleSet, num_players: int, what: str = "agent spec",
            allowed: list[str] | None = None, policies: Mapping[str, str | Path] | None = None) -> PolicyAgent:
    """A trained policy from a shipped name, a name of ``policies`` (name -> .npz path) or the path of a ``.npz``
    file (``what`` and ``allowed`` word the error)."""
    if isinstance(spec, str) and policies and spec in policies:
        return _checked_policy(PolicyAgent(policies[spec]), rules, num_players)
    if isinstance(spec, str) and spec in shipped_policies():
        return _checked_policy(PolicyAgent(POLICY_DIR / f"{spec}.npz"), rules, num_players)
    if isinstance(spec, str):
        _refuse_retired(spec)
    if not str(spec).endswith(".npz") or not Path(spec).is_file():
        names = available() if allowed is None else allowed
        raise ValueError(f"{what} {str(spec)!r}: no such policy file; allowed: {', '.join(names)}, "
                         "or the path of an existing .npz policy file")
    return _checked_policy(PolicyAgent(spec), rules, num_players)


def _from_object(entry: object, what: str, rules: RuleSet, num_players: int, seed: int | None) -> Agent:
    """An agent object as is, or what a factory (a class or a callable without ``act``) builds."""
    if callable(getattr(entry, "act", None)) and not isinstance(entry, type):
        return entry  # type: ignore[return-value]
    if not callable(entry):
        raise ValueError(f"{what} {entry!r:.80} (a {type(entry).__name__}) has no act(observation) method; allowed: an "
                         "agent object, a factory(rules, num_players, seed) returning one, or a spec string: "
                         f"{', '.join(available())}, a policy file, package.module:name")
    agent = entry(rules=rules, num_players=num_players, seed=seed)
    if not callable(getattr(agent, "act", None)) or isinstance(agent, type):
        raise ValueError(f"{what} (a factory) returned {type(agent).__name__}, which has no act(observation) method")
    return agent


def _imported(spec: str) -> object:
    """The object a ``package.module:name`` spec names."""
    module_name, _, attribute = spec.partition(":")
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"agent spec {spec!r}: cannot import module {module_name!r} ({err})") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"agent spec {spec!r}: {module_name}.{attribute} does not exist (no attribute {part!r})")
        target = getattr(target, part)
    return target


def load(spec: str | Path | Agent | Callable[..., Agent], rules: str | dict | RuleSet = "standard",
         num_players: int = 2, seed: int | None = None, policies: Mapping[str, str | Path] | None = None) -> Agent:
    """An agent from a spec (see the module docstring), seeded with ``seed``; an agent object is returned as
    is, a factory is called with ``rules`` (a RuleSet), ``num_players`` and ``seed``. ``policies``: more policy
    names (name -> the path of its .npz file, e.g. a server's uploads), usable as a spec and wherever an option
    names a policy."""
    rules = load_rules(rules)
    num_players = check_num_players(num_players)
    seed = check_seed(seed)
    if isinstance(spec, str) and policies and spec in policies:
        return _policy(spec, rules, num_players, policies=policies)
    is_file = isinstance(spec, Path) or (isinstance(spec, str) and spec.partition(":")[0] not in BUILTIN)
    if is_file and str(spec).endswith((".onnx", ".zip")):
        return _model_file(spec, rules, num_players)
    if is_file and str(spec).endswith(".npz"):  # not expert:policy=path.npz
        return _policy(spec, rules, num_players)
    if not isinstance(spec, str):
        return _from_object(spec, "agent", rules, num_players, seed)
    searches = named_searches()
    if spec in searches:
        return load(searches[spec], rules, num_players, seed, policies)
    name, _, option_text = spec.partition(":")
    if name in searches:
        raise ValueError(f"agent spec {spec!r}: {name!r} is a named search and takes no options; write its spec "
                         f"with yours instead: {searches[name]},...")
    _refuse_retired(name)
    if name not in available() and _IMPORT_SPEC.match(spec):
        return _from_object(_imported(spec), f"agent spec {spec!r}", rules, num_players, seed)
    options = parse_options(name, option_text)
    if name == "random":
        return RandomAgent(seed)
    if name == "greedy":
        return GreedyAgent(rules)
    if name == "expert":
        if "policy" not in options and (options.keys() & {"top", "prior", "confident"}
                                        or options.get("rollouts") == "policy"):
            raise ValueError(f"agent spec {spec!r}: top, prior, confident and rollouts=policy guide a policy's search; "
                             "add policy=<name or .npz path>")
        for key, value in options.items():
            option = OPTIONS[name][key]
            if option.kind == "policy" and value not in option.words:
                options[key] = _policy(value, rules, num_players, f"expert {key}",
                                       [*option.words, *shipped_policies(), *(policies or ())], policies)
        return ExpertAgent(rules, num_players, seed=seed, **options)
    if name in shipped_policies():
        return _policy(name, rules, num_players)
    raise ValueError(f"unknown agent spec {spec!r}; allowed: {', '.join(available())}, the path of a .npz, .onnx or "
                     "SB3 .zip policy, or package.module:name (an agent object or factory)")


__all__ = ["BATCH_MODES", "OPTIONS", "OPTION_KINDS", "RESEARCH_OPTIONS", "Agent", "BatchAgent", "ExpertAgent",
           "GreedyAgent", "Option", "PolicyAgent", "PolicyMismatchWarning", "RandomAgent", "agent_name", "available",
           "batch_mode", "is_own", "load", "named_searches", "observation_for", "parse_options", "shipped_policies"]
