"""The training configuration: a typed pydantic model, loaded from YAML, with command-line overrides.

``configs/train/<name>.yaml`` holds a mapping of :class:`TrainConfig` fields; fields left
out keep their defaults, and ``name`` defaults to the file's stem. Overrides are
``key=value`` strings (the value read as YAML: ``total_steps=20000``,
``pi_layers=[64,64]``, ``target_kl=null``); a dict field takes ``key.entry=value``
(``opponent_weights.greedy=0.5``). pydantic validates the fields (strictly: an int field
refuses ``2.5`` and ``"3"``, a float field takes an int); any error is a one-line
``ValueError`` naming the key, the value and what is allowed.

NumPy, PyYAML, pydantic and c8env only: no torch here.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Literal, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from c8env.engine import MAX_PLAYERS, MIN_PLAYERS
from c8env.episode import MAX_HAND_STEPS
from c8env.observation import LEGACY_OBS_SIZE, OBS_SIZE
from c8env.rules import DuplicateKeyError, UniqueKeyLoader, load_rules, yaml_problem
from c8env.versions import OBS_SIZES
from training.symmetry import suit_symmetric

#: Opponent kinds of the self-play pool (keys of ``opponent_weights``).
POOL_KINDS = ("random", "greedy", "expert", "self")


# ----- checks of the fields a training config of either path has ----------------------------------
def check_name(name: str) -> str:
    if not name or "/" in name or name.strip() != name:
        raise ValueError("should be a non-empty name without '/' or surrounding spaces")
    return name


def check_rules(rules: str) -> str:
    load_rules(rules)  # its ValueError says what is wrong
    return rules


def check_layers(sizes: list[int]) -> list[int]:
    if any(size < 1 for size in sizes):
        raise ValueError("should be a list of layer sizes >= 1")
    return sizes


def check_obs_size(size: int) -> int:
    if size not in OBS_SIZES:
        raise ValueError(f"should be an env version's observation size: {OBS_SIZE} (v2, the whole observation) or "
                         f"{LEGACY_OBS_SIZE} (v0 and v1: its first entries)")
    return size


def check_weights(weights: dict[str, float]) -> dict[str, float]:
    unknown = sorted(set(weights) - set(POOL_KINDS))
    if unknown:
        raise ValueError(f"unknown kind(s) {unknown}; allowed: {', '.join(POOL_KINDS)}")
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise ValueError("should be weights >= 0 with a positive sum")
    return weights


class RunConfig:
    """What the configs of both training paths share besides fields (a mixin of pydantic models with
    ``name``, ``seed`` and ``run_root`` fields): conversions and the run directory."""

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()  # type: ignore[attr-defined]

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    @property
    def run_name(self) -> str:
        """``<name>-s<seed>``."""
        return f"{self.name}-s{self.seed}"

    @property
    def run_dir(self) -> Path:
        return Path(self.run_root) / self.run_name


class TrainConfig(RunConfig, BaseModel):
    """Everything a training run needs; see each field's docstring."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, use_attribute_docstrings=True,
                              validate_assignment=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:  # one line naming the key, the value and what is allowed
            raise ValueError(error_text(err, type(self))) from None

    # ----- the game ------------------------------------------------------------------------------
    name: str = "default"
    """Run name; the run directory is ``<run_root>/<name>-s<seed>`` (default: the config file's stem)."""
    rules: str = "standard"
    """Rules preset name (``c8env.preset_names()``) or a rules YAML path."""
    num_players: int = Field(2, ge=MIN_PLAYERS, le=MAX_PLAYERS)
    """Players at the table (2-7); the learner takes one random seat each episode."""
    reward: Literal["win", "points"] = "win"
    """Reward of the env: ``win`` (+1 win, -1/(n-1) loss) or ``points`` (zero-sum points transfer)."""
    episode: Literal["hand", "match"] = "hand"
    """An episode is one ``hand`` or a whole ``match``."""
    max_steps: int | None = Field(None, ge=1)
    """Moves of one hand (every player's) after which a training hand is cut off (null: the envs' 10,000)."""
    cutoff_reward: float | None = None
    """The learner's reward for a hand cut off at ``max_steps``, which then ends the episode (null: a time-limit
    truncation, worth the critic's estimate). Below a lost hand's reward (-1/(n-1) with ``reward: win``),
    stalling a lost hand is worse than losing it."""

    # ----- the network ---------------------------------------------------------------------------
    obs_size: int = OBS_SIZE
    """The observation entries the networks read: an env version's observation (``c8env.versions``), all of them
    (v2) or the first 245 (``LEGACY_OBS_SIZE``: v0 and v1), on which the policies shipped before v2 were trained
    (their configs say so, so that they reproduce them)."""
    pi_layers: list[int] = Field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy MLP (exported to the NumPy policy file)."""
    vf_layers: list[int] = Field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the value MLP (training only)."""
    activation: Literal["tanh", "relu"] = "tanh"
    """Activation of the hidden layers."""
    oracle_critic: bool = False
    """The value MLP also reads the other players' hands (the learner's observation followed by each next
    player's cards, :mod:`training.batched`), the actor its observation alone (as in PerfectDou): PPO's
    advantages without the luck of the hidden deal. Needs ``vec_env: batched`` and ``cutoff_reward``."""
    oracle_stock_cards: int = Field(0, ge=0)
    """With ``oracle_critic``: the critic also reads the stock's top cards (this many, one-hot each), the next
    cards anyone draws."""
    critic_lr_scale: float = Field(1.0, gt=0)
    """With ``oracle_critic``: the critic's layers learn at ``learning_rate`` times this (its weights on the hands
    start at 0, and a small rate that keeps the actor near a warm start leaves them slow to grow)."""

    critic: bool = True
    """False: PPO's value is 0 everywhere (the critic's output layer zeroed and frozen after the warm start), so the
    advantages are GAE sums of the rewards alone; with ``shaping`` and ``gae_lambda: 0`` each is the shaped reward."""
    shaping: str | None = None
    """Potential-based reward shaping on the true cards (:mod:`training.batched`): at each learner decision the
    hand is played out from the true position, every other seat by greedy, the learner's by ``greedy``, ``self``
    (the actor's current argmax, refreshed at each rollout) or a NumPy policy (shipped name or ``.npz``, fixed);
    the learner's reward r becomes r + gamma * phi(s') - phi(s), phi the play-out's result. The optimal policies
    stay the same (Ng et al. 1999); a move off the play-out's own changes phi by exactly what it changed in the
    play-out. Needs ``vec_env: batched``, ``episode: hand`` and ``cutoff_reward``."""
    shaping_stocks: int = Field(0, ge=0)
    """With ``shaping``, K > 0: no potential; a learner move other than the play-out's own is rewarded with how much
    better its play-out does than the play-out move's, the mean over K stock orders (the stock shuffled, the hands
    kept; the same orders for both), every other reward is 0 (the hand's result included). With ``critic: false``
    and ``gae_lambda: 0`` that is the move's advantage."""

    # ----- PPO -----------------------------------------------------------------------------------
    learning_rate: float = Field(3e-4, gt=0)
    """Adam learning rate of PPO."""
    lr_schedule: Literal["constant", "linear"] = "constant"
    """``constant``, or ``linear`` decay to 0 at ``total_steps``."""
    n_steps: int = Field(1024, ge=1)
    """Steps collected per environment per PPO update (rollout = n_steps x n_envs)."""
    batch_size: int = Field(512, ge=1)
    """Minibatch size of the PPO updates (at most n_steps x n_envs)."""
    n_epochs: int = Field(4, ge=1)
    """Passes over each rollout."""
    gamma: float = Field(0.995, gt=0, le=1)
    """Discount factor per learner decision."""
    gae_lambda: float = Field(0.95, ge=0, le=1)
    """GAE lambda."""
    clip_range: float = Field(0.2, gt=0)
    """PPO clipping of the probability ratio."""
    ent_coef: float = Field(0.01, ge=0)
    """Entropy bonus coefficient."""
    vf_coef: float = Field(0.5, ge=0)
    """Value loss coefficient."""
    max_grad_norm: float = Field(0.5, gt=0)
    """Gradient norm clipping."""
    target_kl: float | None = Field(None, gt=0)
    """Stop an update's epochs early when the approximate KL exceeds this (null: never)."""

    # ----- the run -------------------------------------------------------------------------------
    total_steps: int = Field(1_000_000, ge=0)
    """Learner steps (env transitions) to train for, counted over all environments (0: the warm start alone,
    e.g. to distil a search into the network, then the final evaluation)."""
    budget: float = Field(1.0, gt=0)
    """Scales the run's work: ``pretrain_samples`` and ``total_steps`` are multiplied by it when the config is read
    (``--set budget=0.25`` for a laptop, ``--set budget=4`` for a long run); the run's saved ``config.yaml`` holds
    the scaled figures and ``budget: 1.0``."""
    seed: int = Field(0, ge=0)
    """Seed of everything: deals, seats, opponents, network initialisation, evaluation deals."""
    n_envs: int = Field(16, ge=1)
    """Environments stepped in parallel (the PPO batch of each forward pass)."""
    vec_env: Literal["batched", "subproc", "dummy"] = "subproc"
    """The env backend: ``batched`` (all n_envs games stepped together by the batched engine in the learner
    process, opponents played in batch; no ``expert`` kind), ``subproc`` (one SingleAgentEnv per env, shared
    among ``n_workers`` subprocesses) or ``dummy`` (those envs in the learner process)."""
    n_workers: int = Field(2, ge=1)
    """Subprocesses stepping the envs (``subproc``); each steps n_envs / n_workers envs per round trip."""
    torch_threads: int = Field(1, ge=1)
    """Threads torch may use in the learner process."""
    run_root: str = "runs"
    """Folder holding the run directories."""

    # ----- the opponent pool ---------------------------------------------------------------------
    opponent_weights: dict[str, float] = Field(
        default_factory=lambda: {"random": 0.1, "greedy": 0.7, "expert": 0.0, "self": 0.2})
    """Mixing weights of the opponent kinds sampled per episode: random, greedy, expert, self (frozen snapshots)."""
    expert_spec: str = "expert:simulations=20"
    """Agent spec used for the ``expert`` kind."""
    pool_per_seat: bool = False
    """Sample an opponent kind per opponent seat (true) or one kind for the whole table (false)."""
    snapshot_interval: int = Field(100_000, ge=1)
    """Steps between frozen snapshots of the learner added to the pool (the first at step 0)."""
    max_snapshots: int = Field(20, ge=1)
    """Snapshots kept in the pool (the most recent); ``self`` picks one uniformly."""

    # ----- behaviour-cloning warm start ----------------------------------------------------------
    pretrain_agent: str | None = "greedy"
    """Agent spec whose moves the policy imitates before PPO (null: no warm start)."""
    pretrain_samples: int = Field(200_000, ge=0)
    """Demonstration decisions (with a choice to make) recorded for the warm start."""
    pretrain_epochs: int = Field(4, ge=1)
    """Passes over the demonstrations."""
    pretrain_smoothing: float = Field(0.0, ge=0, lt=1)
    """Label smoothing of the imitation target over the legal actions (keeps exploration for PPO)."""
    pretrain_lr: float = Field(1e-3, gt=0)
    """Adam learning rate of the warm start."""
    pretrain_lr_schedule: Literal["constant", "cosine"] = "constant"
    """The warm start's learning rate over its minibatches: constant, or a cosine decay to 0
    (the last weights then settle instead of jittering at the full rate)."""
    pretrain_batch_size: int = Field(256, ge=1)
    """Minibatch size of the warm start."""
    pretrain_temperature: float | None = Field(None, gt=0)
    """Fit the actor to ``softmax(search results / temperature)`` over the moves the demonstrator (an
    ``expert``) searched, instead of to its chosen move (null: the chosen move)."""
    pretrain_prior: str | None = None
    """A policy (shipped name or ``.npz`` path) that regularises the soft targets: they become
    ``softmax(search results / temperature + pretrain_prior_weight x log pi)``, the search's evidence on top of
    the network's judgement ``pi`` (null: the search results alone). Needs ``pretrain_temperature``."""
    pretrain_prior_weight: float = Field(1.0, gt=0)
    """The power of ``pretrain_prior``'s probabilities in the soft targets."""
    pretrain_oracle: bool = False
    """The demonstrator (an ``expert`` guided by ``policy=``) plays its guide's favourite move, and its search
    values the guide's candidates on the other players' true hands, only the stock's order sampled
    (:mod:`training.oracle`): targets for the soft fit under the hidden hands' true distribution. Needs
    ``pretrain_temperature``."""
    pretrain_behaviour: str | None = None
    """An agent spec (or a policy's ``.npz`` path) that plays the demonstrator's seats while the demonstrator only
    labels them: its move, search results, and the returns of the moves played (null: the demonstrator plays).
    The recording then holds the positions the behaviour reaches, e.g. a clone's own (DAgger)."""
    pretrain_endgame_only: int | None = Field(None, ge=1)
    """With ``pretrain_behaviour``: the demonstrator labels only the positions where some player holds at most
    this many cards, and the behaviour plays its seats' other moves without asking it (null: it labels every
    position). The recording then holds endgame decisions alone, at the search's cost of those alone."""
    pretrain_max_steps: int = Field(MAX_HAND_STEPS, ge=1)
    """Moves after which a recorded hand is cut off (its decisions kept with reward 0, as any cut-off hand's): a
    lower cap bounds what a stalled hand costs a recording, which searches every move of it."""
    pretrain_seed: int | None = Field(None, ge=0)
    """Seed of the warm start's recording (null: ``seed``). With another ``seed``, a run fits a fresh network
    (initialised and shuffled from ``seed``) to the same recording, e.g. the members of an average
    (``python -m training.research.average``)."""
    pretrain_demos: str | None = None
    """An ``.npz`` file for the recorded demonstrations, kept as the hands they were made in (each deal's seed and
    every move; loading replays them to the observations): loaded if it exists (recorded with the same
    settings, else an error), written after each chunk of 20,000 decisions if not (null: record, keep nothing).
    A file of more decisions than ``pretrain_samples`` serves their first ones (what a recording of that many
    holds); one of fewer is completed, only the chunks it lacks recorded (so an interrupted recording goes on
    where it stopped). The file does not know the code that recorded it: delete it after changing an agent."""
    pretrain_extra_demos: list[str] = Field(default_factory=list)
    """Saved recordings (``.npz``, any settings, the same observation width) whose decisions are all added to the
    warm start's, e.g. a ``pretrain_behaviour`` recording beside the demonstrator's own."""
    pretrain_decisions: Literal["all", "declare", "endgame"] = "all"
    """The decisions the warm start fits: all; the suit declarations alone (a declaration specialist, whose
    declaration logits ``python -m training.research.specialise`` puts into another network); or the endgame's, the moves
    with a choice (declarations aside) once some player holds at most ``pretrain_endgame_cards`` cards (an endgame
    network, which ``python -m training.research.specialise --endgame`` adds to another network there)."""
    pretrain_endgame_cards: int = Field(1, ge=1)
    """With ``pretrain_decisions: endgame``, the most cards some player holds at each decision fitted."""
    pretrain_suit_permutations: bool = False
    """Show each decision of each minibatch with its suits renamed by a random permutation
    (:mod:`training.symmetry`; only for rules that treat the four suits alike)."""

    # ----- evaluation and checkpoints ------------------------------------------------------------
    eval_interval: int = Field(100_000, ge=1)
    """Steps between evaluations of the deterministic policy (and one at the start)."""
    eval_opponents: list[str] = Field(default_factory=lambda: ["random", "greedy"], min_length=1)
    """Agent specs evaluated against (the learner in one seat, the opponent in all others)."""
    eval_deals: int = Field(500, ge=1)
    """Seeded deals per periodic evaluation (each played once per seat rotation)."""
    final_eval_deals: int = Field(2500, ge=1)
    """Seeded deals of the final evaluation printed at the end (fresh deals, another seed)."""
    final_policy: Literal["last", "best"] = "last"
    """The run's ``policy.npz``, which the final table evaluates: the ``last`` policy, or the ``best`` periodic
    evaluation against greedy (chosen on the periodic deals, never on the final table's, which stay fresh)."""
    eval_workers: int = Field(2, ge=1)
    """Processes of each evaluation."""
    checkpoint_interval: int = Field(100_000, ge=1)
    """Steps between checkpoints (``--resume`` restarts from the latest)."""
    keep_checkpoints: int = Field(3, ge=1)
    """Checkpoints kept (older ones are deleted; ``best.zip`` is kept apart)."""

    # ----- checks beyond one field's type and bounds ---------------------------------------------
    _check_name = field_validator("name")(check_name)
    _check_rules = field_validator("rules")(check_rules)
    _check_layers = field_validator("pi_layers", "vf_layers")(check_layers)
    _check_weights = field_validator("opponent_weights")(check_weights)

    _check_obs_size = field_validator("obs_size")(check_obs_size)

    @model_validator(mode="before")
    @classmethod
    def _scale_budget(cls, data: Any) -> Any:
        """Apply ``budget`` to the work it scales, once (the result says ``budget: 1.0``)."""
        if isinstance(data, dict) and data.get("budget", 1.0) != 1.0:
            budget = data["budget"]
            if not isinstance(budget, (int, float)) or isinstance(budget, bool) or not 0 < budget < float("inf"):
                return data  # the field's own check words the error
            data = dict(data, budget=1.0)
            for key in ("pretrain_samples", "total_steps"):
                default = cls.model_fields[key].default
                data[key] = round(data.get(key, default) * budget)
        return data

    @model_validator(mode="after")
    def _check_batched_pool(self) -> TrainConfig:
        if self.vec_env == "batched" and self.opponent_weights.get("expert", 0.0) > 0:
            raise ValueError(_invalid("vec_env", self.vec_env, "the batched envs cannot play the 'expert' opponent "
                                      "kind; set opponent_weights.expert=0 or vec_env=subproc"))
        return self

    @model_validator(mode="after")
    def _check_oracle_critic(self) -> TrainConfig:
        if self.oracle_critic and (self.vec_env != "batched" or self.cutoff_reward is None):
            raise ValueError(_invalid("oracle_critic", self.oracle_critic, "the other hands come from the batched "
                                      "envs, and a cut-off hand must end its episode: set vec_env=batched and "
                                      "cutoff_reward"))
        if self.oracle_stock_cards and not self.oracle_critic:
            raise ValueError(_invalid("oracle_stock_cards", self.oracle_stock_cards, "feeds oracle_critic's critic: "
                                      "set oracle_critic=true"))
        if self.critic_lr_scale != 1.0 and not self.oracle_critic:
            raise ValueError(_invalid("critic_lr_scale", self.critic_lr_scale, "scales oracle_critic's critic: set "
                                      "oracle_critic=true"))
        return self

    @model_validator(mode="after")
    def _check_shaping(self) -> TrainConfig:
        if self.shaping is not None and (self.vec_env != "batched" or self.episode != "hand"
                                         or self.cutoff_reward is None):
            raise ValueError(_invalid("shaping", self.shaping, "the play-outs run on the batched envs' true cards "
                                      "to the hand's end, and a cut-off hand must end its episode: set "
                                      "vec_env=batched, episode=hand and cutoff_reward"))
        if self.shaping_stocks and self.shaping is None:
            raise ValueError(_invalid("shaping_stocks", self.shaping_stocks, "samples the play-outs of shaping: set "
                                      "shaping too"))
        return self

    @model_validator(mode="after")
    def _check_batch_size(self) -> TrainConfig:
        if self.batch_size > self.n_steps * self.n_envs:
            raise ValueError(_invalid("batch_size", self.batch_size,
                                      f"should be at most n_steps x n_envs = {self.n_steps * self.n_envs}"))
        return self

    @model_validator(mode="after")
    def _check_demos(self) -> TrainConfig:
        if self.pretrain_demos is not None and not self.pretrain_demos.endswith(".npz"):
            raise ValueError(_invalid("pretrain_demos", self.pretrain_demos, "should be a path ending in .npz"))
        for path in self.pretrain_extra_demos:
            if not path.endswith(".npz"):
                raise ValueError(_invalid("pretrain_extra_demos", self.pretrain_extra_demos,
                                          f"{path!r} should be a path ending in .npz"))
        if self.pretrain_behaviour is not None and not self.pretrain_agent:
            raise ValueError(_invalid("pretrain_behaviour", self.pretrain_behaviour,
                                      "plays the demonstrator's seats: set pretrain_agent too"))
        if self.pretrain_endgame_only is not None and self.pretrain_behaviour is None:
            raise ValueError(_invalid("pretrain_endgame_only", self.pretrain_endgame_only,
                                      "the behaviour plays the positions left unlabelled: set pretrain_behaviour"))
        if self.pretrain_temperature is not None and not (self.pretrain_agent or "").startswith("expert"):
            raise ValueError(_invalid("pretrain_temperature", self.pretrain_temperature,
                                      "soft targets need a searching demonstrator (pretrain_agent: expert...)"))
        if self.pretrain_oracle and (self.pretrain_temperature is None or "policy=" not in (self.pretrain_agent or "")):
            raise ValueError(_invalid("pretrain_oracle", self.pretrain_oracle, "values a guided search's moves for the "
                                      "soft targets: set pretrain_temperature and pretrain_agent: expert:policy=..."))
        if self.pretrain_prior is not None and self.pretrain_temperature is None:
            raise ValueError(_invalid("pretrain_prior", self.pretrain_prior,
                                      "regularises the soft targets: set pretrain_temperature too"))
        if self.pretrain_suit_permutations and not suit_symmetric(load_rules(self.rules)):
            raise ValueError(_invalid("pretrain_suit_permutations", self.pretrain_suit_permutations,
                                      f"the rules {self.rules!r} treat some suits apart (points, effects or wild "
                                      "cards); a renamed position is then another game"))
        return self


# ----- errors ------------------------------------------------------------------------------------
def _invalid(key: str, value: Any, reason: str) -> str:
    return f"config key {key!r} = {value!r} is invalid: {reason}"


def _unknown_key(key: str, model: type[BaseModel]) -> str:
    names = list(model.model_fields)
    close = difflib.get_close_matches(key, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown config key {key!r}{hint}; allowed: {', '.join(names)}"


def error_text(err: ValidationError, model: type[BaseModel] = TrainConfig) -> str:
    """One line for a ValidationError: its first error (unknown keys first), naming the key and the value.

    ``config key 'n_envs' = 0 is invalid: should be greater than or equal to 1``; nested keys read
    ``pi_layers[1]`` and ``opponent_weights.greedy``.
    """
    errors = sorted(err.errors(), key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    loc = first["loc"]
    key = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")
    if first["type"] == "extra_forbidden":
        text = _unknown_key(key, model)
    elif first["type"] == "value_error":  # our validators' (and load_rules') own words
        reason = str(first["ctx"]["error"])
        text = _invalid(key, first["input"], reason) if loc else reason
    else:
        reason = first["msg"].removeprefix("Input ")
        text = _invalid(key, first["input"], reason[:1].lower() + reason[1:])
    more = len(errors) - 1
    return text + (f" (and {more} more error{'s' * (more > 1)})" if more else "")


# ----- loading ------------------------------------------------------------------------------------
class _Loader(UniqueKeyLoader):
    """PyYAML's safe loader reading ``1e-3`` as a float, as YAML 1.2 does (YAML 1.1 wants ``1.0e-3``), and
    refusing a mapping that names a key twice."""


_Loader.add_implicit_resolver("tag:yaml.org,2002:float",
                              re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
                              list("-+0123456789."))


def read_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # a SafeLoader


def parse_overrides(items: list[str]) -> list[tuple[str, Any]]:
    """``["a=1", "b.c=x", 'd="e:f=g"']`` -> ``[("a", 1), ("b.c", "x"), ("d", "e:f=g")]`` (values read as YAML;
    an unquoted string is kept as written, a quoted one loses its quotes)."""
    out = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"override {item!r} is invalid; write key=value, e.g. total_steps=20000")
        try:
            value = read_yaml(text) if text.strip() else ""
        except DuplicateKeyError as err:
            raise ValueError(f"override {item!r} is invalid: {err.problem}") from None
        except yaml.YAMLError:
            value = text
        quoted = text.strip()[:1] in ('"', "'")
        out.append((key, text if isinstance(value, str) and not quoted else value))
    return out


def apply_overrides(data: dict[str, Any], overrides: list[tuple[str, Any]],
                    model: type[BaseModel] = TrainConfig) -> dict[str, Any]:
    """A copy of ``data`` with the overrides set; dotted keys set one entry of a dict field. A key set twice
    (``total_steps=1 total_steps=2``, also through a shortcut flag such as ``--total-steps``), or a dict field set
    both whole and by entry, is refused: which one was meant cannot be told."""
    data = dict(data)
    fields = model.model_fields
    given: list[str] = []
    for key, _ in overrides:
        clash = next((k for k in given if key in (k, k.partition(".")[0]) or k == key.partition(".")[0]), None)
        if clash is not None:
            raise ValueError(f"config key {key!r} is set twice (as {clash!r} before); set each key once")
        given.append(key)
    for key, value in overrides:
        top, dot, entry = key.partition(".")
        if top not in fields:
            raise ValueError(_unknown_key(top, model))
        if dot:
            if get_origin(fields[top].annotation) is not dict:
                raise ValueError(f"config key {top!r} is not a mapping; write {top}=VALUE")
            current = data.get(top)
            if current is None:
                current = fields[top].get_default(call_default_factory=True)
            data[top] = {**current, entry: value}
        else:
            if fields[top].annotation is str and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)  # e.g. name=2024
            data[top] = value
    return data


def config_from_dict(data: dict[str, Any], overrides: list[tuple[str, Any]] = (),
                     model: type[BaseModel] = TrainConfig) -> Any:
    """A validated config (a ``model``) from a mapping of fields plus overrides."""
    if not isinstance(data, dict):
        raise ValueError(f"a training config must be a mapping of fields, got {type(data).__name__}")
    return model(**{str(key): value for key, value in apply_overrides(data, list(overrides), model).items()})


def load_config(path: str | Path, overrides: list[str] | list[tuple[str, Any]] = (),
                model: type[BaseModel] = TrainConfig) -> Any:
    """Load ``configs/train/<name>.yaml`` (``name`` defaults to the file's stem) and apply overrides."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config file {str(path)!r} does not exist")
    try:
        data = read_yaml(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"config file {str(path)!r} is not valid YAML ({yaml_problem(err)})") from None
    if not isinstance(data, dict):
        raise ValueError(f"config file {str(path)!r} must hold a mapping of fields")
    data.setdefault("name", path.stem)
    overrides = [o if isinstance(o, tuple) else parse_overrides([o])[0] for o in overrides]
    return config_from_dict(data, overrides, model)


# ----- documentation ------------------------------------------------------------------------------
def field_docs(model: type[BaseModel] = TrainConfig) -> dict[str, str]:
    """Each field's docstring (pydantic reads them: ``use_attribute_docstrings``)."""
    return {name: " ".join((info.description or "").split()) for name, info in model.model_fields.items()}


_BOUNDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<", "min_length": "length >="}


def describe(model: type[BaseModel] = TrainConfig) -> str:
    """One line per field: name, type and bounds, default, docstring (for ``--help``)."""
    docs = field_docs(model)
    lines = []
    for name, info in model.model_fields.items():
        tp = info.annotation
        text = tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")
        bounds = [f"{sym} {getattr(m, attr)}" for m in info.metadata for attr, sym in _BOUNDS.items()
                  if hasattr(m, attr)]
        kind = f"{text} {' and '.join(bounds)}" if bounds else text
        default = info.get_default(call_default_factory=True)
        lines.append(f"  {name} ({kind}, default {default!r}): {docs[name]}")
    return "\n".join(lines)


__all__ = ["POOL_KINDS", "TrainConfig", "apply_overrides", "check_layers", "check_name", "check_rules",
           "check_weights", "config_from_dict", "describe", "error_text", "field_docs", "load_config",
           "parse_overrides", "read_yaml"]
