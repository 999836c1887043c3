"""The training configuration: one typed dataclass, loaded from YAML, with command-line overrides.

``configs/train/<name>.yaml`` holds a mapping of :class:`TrainConfig` fields; fields left
out keep their defaults, and ``name`` defaults to the file's stem. Overrides are
``key=value`` strings (the value read as YAML: ``total_steps=20000``,
``pi_layers=[64,64]``, ``target_kl=null``); a dict field takes ``key.entry=value``
(``opponent_weights.greedy=0.5``). Unknown keys and ill-typed values raise a
``ValueError`` naming the key and what is allowed.

NumPy, PyYAML and c8env only: no torch here.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import textwrap
import types
import typing
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from c8env.engine import check_num_players
from c8env.rules import load_rules

#: Opponent kinds of the self-play pool (keys of ``opponent_weights``).
POOL_KINDS = ("random", "greedy", "expert", "self")


@dataclass
class TrainConfig:
    """Everything a training run needs; see each field's docstring."""

    # ----- the game ------------------------------------------------------------------------------
    name: str = "default"
    """Run name; the run directory is ``<run_root>/<name>-s<seed>`` (default: the config file's stem)."""
    rules: str = "standard"
    """Rules preset name (``c8env.preset_names()``) or a rules YAML path."""
    num_players: int = 2
    """Players at the table (2-7); the learner takes one random seat each episode."""
    reward: Literal["win", "points"] = "win"
    """Reward of the env: ``win`` (+1 win, -1/(n-1) loss) or ``points`` (zero-sum points transfer)."""
    episode: Literal["hand", "match"] = "hand"
    """An episode is one ``hand`` or a whole ``match``."""

    # ----- the network ---------------------------------------------------------------------------
    pi_layers: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy MLP (exported to the NumPy policy file)."""
    vf_layers: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the value MLP (training only)."""
    activation: Literal["tanh", "relu"] = "tanh"
    """Activation of the hidden layers."""

    # ----- PPO -----------------------------------------------------------------------------------
    learning_rate: float = 3e-4
    """Adam learning rate of PPO."""
    lr_schedule: Literal["constant", "linear"] = "constant"
    """``constant``, or ``linear`` decay to 0 at ``total_steps``."""
    n_steps: int = 1024
    """Steps collected per environment per PPO update (rollout = n_steps x n_envs)."""
    batch_size: int = 512
    """Minibatch size of the PPO updates."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 0.995
    """Discount factor per learner decision."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Gradient norm clipping."""
    target_kl: float | None = None
    """Stop an update's epochs early when the approximate KL exceeds this (null: never)."""

    # ----- the run -------------------------------------------------------------------------------
    total_steps: int = 1_000_000
    """Learner steps (env transitions) to train for, counted over all environments."""
    seed: int = 0
    """Seed of everything: deals, seats, opponents, network initialisation, evaluation deals."""
    n_envs: int = 16
    """Environments stepped in parallel (the PPO batch of each forward pass)."""
    vec_env: Literal["subproc", "dummy"] = "subproc"
    """``subproc`` (the envs shared among ``n_workers`` subprocesses) or ``dummy`` (all in the learner process)."""
    n_workers: int = 2
    """Subprocesses stepping the envs (``subproc``); each steps n_envs / n_workers envs per round trip."""
    torch_threads: int = 1
    """Threads torch may use in the learner process."""
    run_root: str = "runs"
    """Folder holding the run directories."""

    # ----- the opponent pool ---------------------------------------------------------------------
    opponent_weights: dict[str, float] = field(
        default_factory=lambda: {"random": 0.1, "greedy": 0.7, "expert": 0.0, "self": 0.2})
    """Mixing weights of the opponent kinds sampled per episode: random, greedy, expert, self (frozen snapshots)."""
    expert_spec: str = "expert:simulations=20"
    """Agent spec used for the ``expert`` kind."""
    pool_per_seat: bool = False
    """Sample an opponent kind per opponent seat (true) or one kind for the whole table (false)."""
    snapshot_interval: int = 100_000
    """Steps between frozen snapshots of the learner added to the pool (the first at step 0)."""
    max_snapshots: int = 20
    """Snapshots kept in the pool (the most recent); ``self`` picks one uniformly."""

    # ----- behaviour-cloning warm start ----------------------------------------------------------
    pretrain_agent: str | None = "greedy"
    """Agent spec whose moves the policy imitates before PPO (null: no warm start)."""
    pretrain_samples: int = 200_000
    """Demonstration decisions (with a choice to make) recorded for the warm start."""
    pretrain_epochs: int = 4
    """Passes over the demonstrations."""
    pretrain_smoothing: float = 0.0
    """Label smoothing of the imitation target over the legal actions (keeps exploration for PPO)."""
    pretrain_lr: float = 1e-3
    """Adam learning rate of the warm start."""
    pretrain_batch_size: int = 256
    """Minibatch size of the warm start."""

    # ----- evaluation and checkpoints ------------------------------------------------------------
    eval_interval: int = 100_000
    """Steps between evaluations of the deterministic policy (and one at the start)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])
    """Agent specs evaluated against (the learner in one seat, the opponent in all others)."""
    eval_deals: int = 500
    """Seeded deals per periodic evaluation (each played once per seat rotation)."""
    final_eval_deals: int = 2500
    """Seeded deals of the final evaluation printed at the end (fresh deals, another seed)."""
    eval_workers: int = 2
    """Processes of each evaluation."""
    checkpoint_interval: int = 100_000
    """Steps between checkpoints (``--resume`` restarts from the latest)."""
    keep_checkpoints: int = 3
    """Checkpoints kept (older ones are deleted; ``best.zip`` is kept apart)."""

    def __post_init__(self) -> None:
        hints = _hints()
        for f in fields(self):
            setattr(self, f.name, _coerce(f.name, getattr(self, f.name), hints[f.name]))
        self._validate()

    def _validate(self) -> None:
        def need(ok: bool, key: str, allowed: str) -> None:
            if not ok:
                raise ValueError(f"config key {key!r} = {getattr(self, key)!r} is invalid; allowed: {allowed}")

        need(bool(self.name) and "/" not in self.name and self.name.strip() == self.name, "name",
             "a non-empty name without '/' or surrounding spaces")
        try:
            check_num_players(self.num_players)
        except ValueError:
            need(False, "num_players", "an int from 2 to 7")
        try:
            load_rules(self.rules)
        except ValueError as err:
            raise ValueError(f"config key 'rules' = {self.rules!r} is invalid: {err}") from None
        for key in ("pi_layers", "vf_layers"):
            need(all(size >= 1 for size in getattr(self, key)), key, "a list of layer sizes >= 1")
        for key in ("learning_rate", "pretrain_lr"):
            need(getattr(self, key) > 0, key, "a float > 0")
        for key in ("n_steps", "batch_size", "n_epochs", "total_steps", "n_envs", "n_workers", "torch_threads", "snapshot_interval",
                    "max_snapshots", "pretrain_epochs", "pretrain_batch_size", "eval_interval", "eval_deals",
                    "final_eval_deals", "eval_workers", "checkpoint_interval", "keep_checkpoints"):
            need(getattr(self, key) >= 1, key, "an int >= 1")
        need(self.batch_size <= self.n_steps * self.n_envs, "batch_size", "at most n_steps x n_envs")
        need(self.pretrain_samples >= 0, "pretrain_samples", "an int >= 0")
        need(0 <= self.pretrain_smoothing < 1, "pretrain_smoothing", "a float in [0, 1)")
        need(self.seed >= 0, "seed", "an int >= 0")
        for key in ("gamma", "gae_lambda"):
            need(0 < getattr(self, key) <= 1, key, "a float in (0, 1]")
        for key in ("clip_range", "max_grad_norm"):
            need(getattr(self, key) > 0, key, "a float > 0")
        for key in ("ent_coef", "vf_coef"):
            need(getattr(self, key) >= 0, key, "a float >= 0")
        need(self.target_kl is None or self.target_kl > 0, "target_kl", "null or a float > 0")
        weights = self.opponent_weights
        unknown = sorted(set(weights) - set(POOL_KINDS))
        if unknown:
            raise ValueError(f"config key 'opponent_weights' has unknown kind(s) {unknown}; allowed: "
                             f"{', '.join(POOL_KINDS)}")
        need(all(w >= 0 for w in weights.values()) and sum(weights.values()) > 0, "opponent_weights",
             "weights >= 0 with a positive sum")
        need(bool(self.eval_opponents), "eval_opponents", "a non-empty list of agent specs")

    # ----- conversions -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    @property
    def run_name(self) -> str:
        """``<name>-s<seed>``."""
        return f"{self.name}-s{self.seed}"

    @property
    def run_dir(self) -> Path:
        return Path(self.run_root) / self.run_name


# ----- typing helpers ------------------------------------------------------------------------------
@cache
def _hints() -> dict[str, Any]:
    return typing.get_type_hints(TrainConfig)


def _type_text(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return " or ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _type_text(a) for a in args)
    plural = {int: "ints", float: "floats", str: "strings"}
    if origin is list:
        return f"a list of {plural.get(args[0], args[0])}"
    if origin is dict:
        return f"a mapping of {plural.get(args[0], args[0])} to {plural.get(args[1], args[1])}"
    return {int: "an int", float: "a float", bool: "true or false", str: "a string"}.get(tp, str(tp))


def _coerce(key: str, value: Any, tp: Any) -> Any:
    """``value`` checked against ``tp`` (ints accepted as floats); a ValueError naming ``key`` otherwise."""

    def bad() -> ValueError:
        return ValueError(f"config key {key!r} must be {_type_text(tp)}, got {value!r} ({type(value).__name__})")

    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(key, value, arg)
            except ValueError:
                pass
        raise bad()
    if origin is Literal:
        if value in args and isinstance(value, str):
            return value
        raise bad()
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise bad()
        return [_coerce(f"{key}[{i}]", item, args[0]) for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise bad()
        return {_coerce(f"{key} key", k, args[0]): _coerce(f"{key}.{k}", v, args[1]) for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise bad()
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise bad()
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):  # PyYAML reads 1e-3 (no dot) as a string
            try:
                return float(value)
            except ValueError:
                pass
        raise bad()
    if tp is str:
        if isinstance(value, str):
            return value
        raise bad()
    raise TypeError(f"unsupported config type {tp!r} for {key!r}")


def _unknown_key(key: str) -> ValueError:
    names = [f.name for f in fields(TrainConfig)]
    close = difflib.get_close_matches(key, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ValueError(f"unknown config key {key!r}{hint}; allowed: {', '.join(names)}")


# ----- loading ------------------------------------------------------------------------------------
def parse_overrides(items: list[str]) -> list[tuple[str, Any]]:
    """``["a=1", "b.c=x"]`` -> ``[("a", 1), ("b.c", "x")]`` (values read as YAML)."""
    out = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"override {item!r} is invalid; write key=value, e.g. total_steps=20000")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            value = text
        out.append((key, text if isinstance(value, str) else value))
    return out


def apply_overrides(data: dict[str, Any], overrides: list[tuple[str, Any]]) -> dict[str, Any]:
    """A copy of ``data`` with the overrides set; dotted keys set one entry of a dict field."""
    data = dict(data)
    hints = _hints()
    for key, value in overrides:
        top, dot, entry = key.partition(".")
        if top not in hints:
            raise _unknown_key(top)
        if dot:
            if typing.get_origin(hints[top]) is not dict:
                raise ValueError(f"config key {top!r} is not a mapping; write {top}=VALUE")
            current = data.get(top)
            if current is None:
                current = getattr(TrainConfig(), top)
            data[top] = {**current, entry: value}
        else:
            if hints[top] is str and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)  # e.g. name=2024
            data[top] = value
    return data


def config_from_dict(data: dict[str, Any], overrides: list[tuple[str, Any]] = ()) -> TrainConfig:
    """A validated config from a mapping of fields plus overrides."""
    if not isinstance(data, dict):
        raise ValueError(f"a training config must be a mapping of fields, got {type(data).__name__}")
    hints = _hints()
    for key in data:
        if key not in hints:
            raise _unknown_key(str(key))
    return TrainConfig(**apply_overrides(data, list(overrides)))


def load_config(path: str | Path, overrides: list[str] | list[tuple[str, Any]] = ()) -> TrainConfig:
    """Load ``configs/train/<name>.yaml`` (``name`` defaults to the file's stem) and apply overrides."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"config file {str(path)!r} is not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"config file {str(path)!r} must hold a mapping of fields")
    data.setdefault("name", path.stem)
    overrides = [o if isinstance(o, tuple) else parse_overrides([o])[0] for o in overrides]
    return config_from_dict(data, overrides)


@cache
def field_docs() -> dict[str, str]:
    """Each field's docstring, read from the source of :class:`TrainConfig`."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(TrainConfig)))
    body = tree.body[0].body
    docs = {}
    for node, after in zip(body, body[1:], strict=False):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def describe() -> str:
    """One line per field: name, type, default, docstring (for ``--help``)."""
    defaults = TrainConfig().to_dict()
    docs = field_docs()
    hints = _hints()
    return "\n".join(f"  {name} ({_type_text(hints[name])}, default {defaults[name]!r}): {docs.get(name, '')}"
                     for name in defaults)


__all__ = ["POOL_KINDS", "TrainConfig", "apply_overrides", "config_from_dict", "describe", "field_docs",
           "load_config", "parse_overrides"]
