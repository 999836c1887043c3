"""Imitation of an agent before PPO: its recorded demonstrations, and the behaviour-cloning step fitted to them.

:func:`record_demonstrations` plays hands as in training: the demonstrator takes a random
seat, its opponents come from the configured pool (``self`` opponents are the demonstrator
itself, as no snapshot exists yet), and every decision of every seat the demonstrator
plays is recorded with the discounted reward that seat finally got and, for a search
(``expert``), the mean rollout result of each searched move.
:func:`behaviour_clone` fits a MaskablePPO's actor to the moves (or, with
``pretrain_temperature``, to a softmax of the search's results, optionally regularised by the log-probabilities
of a ``pretrain_prior`` network) and its critic to the returns.
:func:`demonstrations` records them, or loads them from ``pretrain_demos`` when an earlier run
with the same recording settings saved them there (the file keeps the hands, :class:`Hands`, which loading
replays to the observations). With ``pretrain_behaviour`` another agent plays the
demonstrator's seats and the demonstrator only labels the positions it reaches (DAgger);
:func:`extra_demonstrations` adds saved recordings to the fit.
"""

from __future__ import annotations

import json
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from tqdm import tqdm

from c8env.actions import DECLARE_ACTIONS, NUM_ACTIONS
from c8env.agents import load
from c8env.engine import State
from c8env.episode import hand_rewards, play_watched
from c8env.observation import OBS_SIZE, StateObservation, fewest_cards
from c8env.rules import RuleSet, load_rules
from c8env.seeding import derive_seed
from training.config import TrainConfig
from training.oracle import OracleSearch
from training.pool import OpponentPool
from training.research.expert import ResearchExpert, load_research
from training.symmetry import suit_permutations

_CHUNK = 20_000  # demonstrations per chunk: each chunk has its own seed, so any worker count records the same


_FIELDS = ("obs", "masks", "actions", "returns", "values")
# the config keys that decide a recording: saved demonstrations are reused only by a config that agrees on all
RECORDING_KEYS = ("rules", "num_players", "reward", "gamma", "seed", "pretrain_agent", "pretrain_samples",
                  "opponent_weights", "expert_spec", "pool_per_seat", "pretrain_oracle", "pretrain_behaviour",
                  "pretrain_endgame_only", "pretrain_max_steps")


_HAND_FIELDS = ("deals", "seats", "lengths", "decisions", "moves")


@dataclass
class Hands:
    """The hands a recording was made in, enough to replay it: per hand the deal's seed, the seats whose
    decisions were recorded (a bit per seat), its number of moves and of recorded decisions (the last hand of a
    chunk keeps only the first ones), and ``moves``: every move made, hand after hand."""

    deals: np.ndarray
    seats: np.ndarray
    lengths: np.ndarray
    decisions: np.ndarray
    moves: np.ndarray

    @classmethod
    def concat(cls, parts: list[Hands]) -> Hands:
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in _HAND_FIELDS))

    def head(self, decisions: int) -> Hands:
        """The hands of the first ``decisions`` recorded decisions."""
        before = np.concatenate([[0], np.cumsum(self.decisions)])
        count = int(np.searchsorted(before, decisions))  # the hands that hold them
        kept = np.minimum(self.decisions[:count], decisions - before[:count])
        return Hands(self.deals[:count], self.seats[:count], self.lengths[:count], kept,
                     self.moves[:int(self.lengths[:count].sum())])

    def replay(self, rules: RuleSet, num_players: int,
               endgame_only: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The observation and action mask of every recorded decision, from the hands' deals and moves
        (``endgame_only``: the recording's ``pretrain_endgame_only``, which positions were labelled)."""
        observations, masks = [], []
        start = 0
        for deal, seats, length, wanted in zip(self.deals, self.seats, self.lengths, self.decisions, strict=True):
            state, taken = State.new(num_players, rules, seed=int(deal)), 0
            for move in self.moves[start:start + length]:
                if taken == wanted:
                    break
                if int(seats) >> state.current_player & 1:
                    view = StateObservation(state, state.current_player)
                    if _labelled(view["observation"], endgame_only):
                        observations.append(view["observation"])
                        masks.append(view["action_mask"].astype(bool))
                        taken += 1
                state.apply(int(move))
            if taken != wanted:
                raise ValueError(f"the hand dealt with seed {deal} holds {taken} recorded decisions, not {wanted}")
            start += length
        if not observations:
            return np.zeros((0, OBS_SIZE), np.float32), np.zeros((0, NUM_ACTIONS), bool)
        return np.stack(observations), np.stack(masks)


@dataclass
class Demonstrations:
    """Arrays of equal length: float32 observations, bool masks, int64 actions, float32 returns, and
    float32 ``values`` (one row of ``NUM_ACTIONS`` per decision: the search's mean result of each
    searched move, NaN elsewhere and on decisions that were not searched); ``hands``: the hands they were
    recorded in (what a saved recording keeps, :func:`demonstrations`)."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    values: np.ndarray
    hands: Hands | None = None

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def concat(cls, parts: list[Demonstrations]) -> Demonstrations:
        hands = [p.hands for p in parts]
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in _FIELDS),
                   hands=None if None in hands else Hands.concat(hands))

    def head(self, decisions: int) -> Demonstrations:
        """The first ``decisions`` decisions."""
        return Demonstrations(*(getattr(self, k)[:decisions] for k in _FIELDS),
                              hands=None if self.hands is None else self.hands.head(decisions))

    def declarations(self) -> Demonstrations:
        """The suit declarations among them (without their hands)."""
        return self._kept(self.masks[:, list(DECLARE_ACTIONS)].any(1))

    def endgame(self, max_cards: int) -> Demonstrations:
        """The decisions with a choice, declarations aside, where some player holds at most ``max_cards`` cards
        (without their hands)."""
        keep = (fewest_cards(self.obs) <= max_cards) & (self.masks.sum(1) >= 2) & \
            ~self.masks[:, list(DECLARE_ACTIONS)].any(1)
        return self._kept(keep)

    def _kept(self, keep: np.ndarray) -> Demonstrations:
        """The decisions where ``keep`` is true (without their hands)."""
        return Demonstrations(*(getattr(self, k)[keep] for k in _FIELDS))


def _search_values(agent: Any) -> np.ndarray:
    """The mean result of each move ``agent`` searched for its last decision (NaN where none)."""
    values = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
    searched = getattr(agent, "last_search", None)
    if searched is not None:
        values[searched[0]] = searched[1]
    return values


def _labelled(observation: np.ndarray, endgame_only: int | None) -> bool:
    """Whether a demonstrator's position is labelled: any (``endgame_only`` None), else once some player holds
    at most ``endgame_only`` cards."""
    return endgame_only is None or float(fewest_cards(observation)) <= endgame_only


def _play_hand(state: State, agents: list[Any], demonstrator: list[bool], behaviour: list[Any | None],
               max_steps: int, endgame_only: int | None = None
               ) -> tuple[list[tuple[int, np.ndarray, np.ndarray, int, np.ndarray]], list[int]]:
    """Play the hand of ``state`` (at most ``max_steps`` moves); the ``(seat, observation, mask, action, values)``
    of each demonstrator decision, and every move made. A seat's ``behaviour`` agent (None: none) plays the move
    its demonstrator chose, and alone the positions ``endgame_only`` leaves unlabelled (:func:`_labelled`)."""
    decisions, moves = [], []

    def choose(state: State) -> int:
        seat = state.current_player
        view = StateObservation(state, seat)
        if demonstrator[seat] and not _labelled(view["observation"], endgame_only):
            if isinstance(agents[seat], ResearchExpert):
                agents[seat].unasked()
            return behaviour[seat].act(view)
        action = agents[seat].act(view)
        if demonstrator[seat]:
            decisions.append((seat, view["observation"], view["action_mask"].astype(bool), action,
                              _search_values(agents[seat])))
            if behaviour[seat] is not None:
                action = behaviour[seat].act(view)
                if isinstance(agents[seat], ResearchExpert):
                    agents[seat].moved(action)
        return action

    play_watched(state, choose, agents, max_steps, on_move=lambda _, __, action: moves.append(action))
    return decisions, moves


class _Hand(NamedTuple):
    """One hand of a recording: each seat's agent spec and seed, and the deal's seed."""

    specs: tuple[str, ...]
    seeds: tuple[int, ...]
    deal: int


def _hands(config: TrainConfig, seed: int) -> Iterator[_Hand]:
    """The hands of the chunk seeded ``seed``, in order: the demonstrator on a random seat, the pool's
    opponents on the others (every draw from the chunk's one generator, before any hand is played)."""
    n = config.num_players
    spec = config.pretrain_agent
    rng = np.random.default_rng(seed)
    pool = OpponentPool(config.opponent_weights, n, config.expert_spec, config.pool_per_seat, snapshots=[spec])
    while True:
        learner = int(rng.integers(n))
        specs = [spec] * n
        for k, opponent in enumerate(pool(rng), start=1):
            specs[(learner + k) % n] = opponent
        seeds = tuple(int(rng.integers(2**63)) for _ in specs)
        yield _Hand(tuple(specs), seeds, int(rng.integers(2**63)))


_Decision = tuple[np.ndarray, np.ndarray, int, float, np.ndarray]  # observation, mask, action, return, values


class _Played(NamedTuple):
    """A recorded hand: its deal's seed, the demonstrator's seats (a bit each), every move, his decisions."""

    deal: int
    seats: int
    moves: list[int]
    decisions: list[_Decision]


def _record_hand(config: TrainConfig, hand: _Hand) -> _Played:
    """``hand`` played: the demonstrator's decisions, each with the discounted reward its seat finally got."""
    rules = load_rules(config.rules)
    n = config.num_players
    agents = [load_research(s, rules=rules, num_players=n, seed=seed)
              for s, seed in zip(hand.specs, hand.seeds, strict=True)]
    demonstrator = [s == config.pretrain_agent for s in hand.specs]
    if config.pretrain_oracle:
        agents = [OracleSearch.from_expert(a) if mine else a for a, mine in zip(agents, demonstrator, strict=True)]
    behaviour = [load_research(config.pretrain_behaviour, rules=rules, num_players=n, seed=derive_seed(seed, 1))
                 if mine and config.pretrain_behaviour else None
                 for mine, seed in zip(demonstrator, hand.seeds, strict=True)]
    state = State.new(n, rules, seed=hand.deal)
    decisions, moves = _play_hand(state, agents, demonstrator, behaviour, config.pretrain_max_steps,
                                  config.pretrain_endgame_only)
    final = hand_rewards(state, config.reward) if state.hand_over else [0.0] * n  # a cut-off hand: no reward
    later = [0] * n  # decisions of the same seat after this one
    returns = [0.0] * len(decisions)
    for i in range(len(decisions) - 1, -1, -1):
        seat = decisions[i][0]
        returns[i] = final[seat] * config.gamma ** later[seat]
        later[seat] += 1
    return _Played(hand.deal, sum(1 << seat for seat, mine in enumerate(demonstrator) if mine), moves,
                   [(obs, mask, action, value, searched)
                    for (_, obs, mask, action, searched), value in zip(decisions, returns, strict=True)])


def _in_order(executor: Executor, function: Callable[[_Hand], _Played],
              hands: Iterator[_Hand], ahead: int) -> Iterator[_Played]:
    """``function`` of each hand, run by ``executor`` with ``ahead`` hands running or queued at any time (a hand
    that ends early frees its place at once), yielded in the hands' order; the hands not yet started when the
    caller stops are cancelled."""
    flight: deque[Future[_Played]] = deque()
    try:
        while True:
            running = [future for future in flight if not future.done()]
            flight.extend(executor.submit(function, hand) for hand in islice(hands, ahead - len(running)))
            if flight[0].done():
                yield flight.popleft().result()
            else:
                wait([future for future in flight if not future.done()], return_when=FIRST_COMPLETED)
    finally:
        for future in flight:
            future.cancel()


def _record(config: TrainConfig, samples: int, seed: int, bar: tqdm, executor: Executor | None = None,
            ahead: int = 1) -> Demonstrations:
    """Play the hands of the chunk seeded ``seed`` until ``samples`` demonstrator decisions are recorded
    (counted on ``bar``); with ``executor``, ``ahead`` hands at a time in its workers (the same decisions)."""
    record = partial(_record_hand, config)
    parts = map(record, _hands(config, seed)) if executor is None else \
        _in_order(executor, record, _hands(config, seed), ahead)
    decisions: list[_Decision] = []
    played: list[_Played] = []
    for hand in parts:
        bar.update(min(len(hand.decisions), samples - len(decisions)))
        decisions += hand.decisions
        played.append(hand)
        if len(decisions) >= samples:
            break
    obs, masks, actions, returns, values = zip(*decisions[:samples], strict=True)
    counts = [len(hand.decisions) for hand in played]
    counts[-1] -= len(decisions) - samples
    hands = Hands(np.array([hand.deal for hand in played], np.int64), np.array([hand.seats for hand in played],
                  np.uint8), np.array([len(hand.moves) for hand in played], np.int32), np.array(counts, np.int32),
                  np.array([move for hand in played for move in hand.moves], np.int16))
    return Demonstrations(np.stack(obs), np.stack(masks), np.asarray(actions, dtype=np.int64),
                          np.asarray(returns, dtype=np.float32), np.stack(values), hands)


def record_demonstrations(config: TrainConfig, samples: int, seed: int, workers: int = 1, progress: bool = True,
                          first_chunk: int = 0,
                          on_chunk: Callable[[list[Demonstrations]], None] | None = None) -> Demonstrations:
    """``samples`` decisions of ``config.pretrain_agent``, recorded in chunks (same result for any ``workers``),
    counted on a progress bar on stderr unless ``progress`` is false.

    Every chunk has its own seed, and its hands are drawn from it before any is played, so ``workers``
    processes play a chunk's hands side by side (a few hands past the chunk's end are played and dropped).
    ``first_chunk``: record the recording's chunks from that one on (``samples`` counts those only: the
    decisions a longer recording adds); ``on_chunk`` is called with the chunks so far after each one (a list, not
    their concatenation: a long recording would copy its observations again after every chunk)."""
    if not config.pretrain_agent:
        raise ValueError("config key 'pretrain_agent' is null: no demonstrator to record")
    if config.pretrain_behaviour:  # a wrong spec stops the recording before any hand is played
        load_research(config.pretrain_behaviour, rules=load_rules(config.rules), num_players=config.num_players, seed=0)
    sizes = [min(_CHUNK, samples - start) for start in range(0, samples, _CHUNK)]
    seeds = [derive_seed(seed, first_chunk + i) for i in range(len(sizes))]
    workers = max(1, workers or os.cpu_count() or 1)
    parts: list[Demonstrations] = []
    with tqdm(total=samples, desc=f"recording {config.pretrain_agent}", unit=" decisions", file=sys.stderr,
              disable=not progress, dynamic_ncols=True) as bar, \
            (ProcessPoolExecutor(workers) if workers > 1 else nullcontext()) as executor:
        for size, chunk_seed in zip(sizes, seeds, strict=True):
            parts.append(_record(config, size, chunk_seed, bar, executor, workers + 1))
            if on_chunk is not None:
                on_chunk(parts)
    return Demonstrations.concat(parts)


def recording_seed(config: TrainConfig) -> int:
    """The seed of the warm start's recording: ``pretrain_seed``, else ``seed``."""
    return config.seed if config.pretrain_seed is None else config.pretrain_seed


def _recording(config: TrainConfig) -> dict[str, Any]:
    return {key: recording_seed(config) if key == "seed" else getattr(config, key) for key in RECORDING_KEYS}


def demonstrations(config: TrainConfig, seed: int, workers: int = 1) -> tuple[Demonstrations, bool]:
    """The warm start's demonstrations, and whether they were all loaded from ``config.pretrain_demos``.

    With ``pretrain_demos`` set, an existing file is read (``ValueError`` if it was recorded with other
    settings, :data:`RECORDING_KEYS`): a run that wants no more decisions than it holds reads the first ones
    (what a recording of that many would hold), a run that wants more records only the chunks it lacks and adds
    them. The file is written after each chunk, so an interrupted recording goes on from its last chunk."""
    path = Path(config.pretrain_demos) if config.pretrain_demos else None
    held = _saved_demonstrations(path, config, seed) if path is not None and path.is_file() else None
    wanted = config.pretrain_samples
    if held is not None and len(held) >= wanted:
        return held.head(wanted), True
    kept = 0 if held is None else len(held) // _CHUNK * _CHUNK  # whole chunks: a part-chunk is recorded again
    before = [] if held is None else [held.head(kept)]

    def save(recorded: list[Demonstrations]) -> None:
        """Write the recording so far: the fields a saved recording keeps (its observations and masks are not
        among them, and are not copied)."""
        chunks = [*before, *recorded]
        actions, returns, values = (np.concatenate([getattr(c, k) for c in chunks])
                                    for k in ("actions", "returns", "values"))
        hands = Hands.concat([c.hands for c in chunks])  # recorded and loaded demonstrations have them
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".part")
        with partial.open("wb") as file:
            np.savez_compressed(
                file, recording=json.dumps({**_recording(config), "pretrain_samples": len(actions)}), seed=seed,
                actions=actions.astype(np.int16), returns=returns, searched=np.packbits(np.isfinite(values), axis=1),
                searched_values=values[np.isfinite(values)], **{k: getattr(hands, k) for k in _HAND_FIELDS})
        partial.replace(path)

    recorded = record_demonstrations(config, wanted - kept, seed, workers, first_chunk=kept // _CHUNK,
                                     on_chunk=None if path is None else save)
    return Demonstrations.concat([*before, recorded]), False


def extra_demonstrations(config: TrainConfig) -> list[Demonstrations]:
    """The decisions of each of ``config.pretrain_extra_demos`` (recorded with any settings)."""
    extras = []
    for name in config.pretrain_extra_demos:
        path = Path(name)
        if not path.is_file():
            raise ValueError(f"pretrain_extra_demos: {path} is not a file (record it first with pretrain_demos)")
        with np.load(path) as saved:
            extras.append(_replayed(path, saved))
    return extras


def _replayed(path: Path, saved: Any) -> Demonstrations:
    """The demonstrations of an opened recording file: its hands replayed to today's observations."""
    if "moves" not in saved.files:
        raise ValueError(f"{path} holds observations, as those saved by c8env 0.2.0 and earlier do, instead of the "
                         "moves that replay them; delete it to record again")
    recorded_with = json.loads(str(saved["recording"]))
    hands = Hands(*(saved[k] for k in _HAND_FIELDS))
    obs, masks = hands.replay(load_rules(recorded_with["rules"]), recorded_with["num_players"],
                              recorded_with.get("pretrain_endgame_only"))
    searched = np.unpackbits(saved["searched"], axis=1, count=NUM_ACTIONS).astype(bool)
    values = np.full(searched.shape, np.nan, np.float32)
    values[searched] = saved["searched_values"]
    return Demonstrations(obs, masks, saved["actions"].astype(np.int64), saved["returns"], values, hands)


def _saved_demonstrations(path: Path, config: TrainConfig, seed: int) -> Demonstrations:
    """The demonstrations saved at ``path``, checked against the recording ``config`` and ``seed`` ask for
    (any number of decisions)."""
    with np.load(path) as saved:
        recorded_with = json.loads(str(saved["recording"]))
        for key in RECORDING_KEYS:  # a key added since the file was written: its default then
            recorded_with.setdefault(key, TrainConfig.model_fields[key].default)
        wanted = json.loads(json.dumps(_recording(config)))  # as the file holds it (tuples as lists)
        differ = sorted(k for k in RECORDING_KEYS if k != "pretrain_samples" and recorded_with.get(k) != wanted[k])
        if differ or int(saved["seed"]) != seed:
            raise ValueError(f"pretrain_demos {path} was recorded with other settings (differ: "
                             f"{', '.join(differ) or 'seed'}); delete it or point pretrain_demos elsewhere")
        return _replayed(path, saved)


# ----- behaviour cloning ------------------------------------------------------------------------------
def _inputs(policy: Any, obs: torch.Tensor) -> torch.Tensor:
    """Recorded observations as the policy's inputs: zeros for the hidden cards that ``oracle_critic``'s critic
    reads after them (a recording holds none), so the critic fits the value of the observation alone."""
    extra = policy.observation_space.shape[0] - obs.shape[1]
    return torch.nn.functional.pad(obs, (0, extra)) if extra else obs


def masked_logits(policy: Any, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """The actor's logits with illegal actions at -inf."""
    features = policy.pi_features_extractor(_inputs(policy, obs))
    logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
    return logits.masked_fill(~masks, float("-inf"))


def search_targets(demos: Demonstrations, temperature: float, prior: np.ndarray | None = None) -> np.ndarray:
    """Per decision, the target distribution over actions: ``softmax(values / temperature + prior)`` over the
    searched moves where the demonstrator searched (``prior``: log-probabilities to add, e.g. a network's
    times a weight; none by default), else all on the demonstrated action."""
    searched = np.isfinite(demos.values)
    scaled = np.where(searched, demos.values / temperature, -np.inf)
    if prior is not None:
        scaled = scaled + np.where(searched, prior, 0.0)
    rows = searched.any(1)
    targets = np.zeros(demos.values.shape, dtype=np.float32)
    top = scaled[rows].max(1, keepdims=True)
    weights = np.exp(scaled[rows] - top)
    targets[rows] = weights / weights.sum(1, keepdims=True)
    plain = np.flatnonzero(~rows)
    targets[plain, demos.actions[plain]] = 1.0
    return targets


def load_prior(config: TrainConfig) -> Any:
    """The ``config.pretrain_prior`` network (``ValueError`` if it names no policy network)."""
    try:
        agent = load(config.pretrain_prior, config.rules, config.num_players)
    except ValueError as err:
        raise ValueError(f"pretrain_prior: {err}") from None
    if not callable(getattr(agent, "logits", None)):
        raise ValueError(f"pretrain_prior {config.pretrain_prior!r} is not a policy network (a shipped policy name "
                         "or an .npz policy file)")
    return agent


def prior_log_probs(config: TrainConfig, demos: Demonstrations, batch: int = 8192) -> np.ndarray:
    """``config.pretrain_prior``'s log-probabilities of the legal moves at each demonstrated decision, times
    ``config.pretrain_prior_weight`` (``-inf`` on illegal moves)."""
    agent = load_prior(config)
    logits = np.concatenate([agent.logits(demos.obs[i:i + batch]) for i in range(0, len(demos), batch)])
    logits = np.where(demos.masks, logits, -np.inf)
    logits -= logits.max(1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    return config.pretrain_prior_weight * log_probs


def lr_factor(schedule: str, update: int, updates: int) -> float:
    """The fraction of ``pretrain_lr`` used by minibatch ``update`` of ``updates``: 1, or a cosine from 1 to 0."""
    return 1.0 if schedule == "constant" else 0.5 * (1.0 + float(np.cos(np.pi * update / updates)))


def behaviour_clone(model: Any, demos: Demonstrations, config: TrainConfig, seed: int, progress: bool = False,
                    on_epoch: Callable[[dict[str, float]], None] | None = None) -> dict[str, float]:
    """Fit the actor to the demonstrated actions and the critic to their returns, with Adam
    (its learning rate following ``config.pretrain_lr_schedule``, :func:`lr_factor`).

    The actor's loss is the cross-entropy of its masked logits against the demonstrated
    action -- or, with ``config.pretrain_temperature``, against :func:`search_targets` --
    smoothed by ``config.pretrain_smoothing`` over the legal actions (so the cloned policy
    keeps some probability on the alternatives for PPO to explore); the critic's is the
    squared error to the discounted returns. With ``config.pretrain_decisions: declare`` only the suit
    declarations are fitted, with ``endgame`` only the endgame's decisions (:meth:`Demonstrations.endgame`); with ``config.pretrain_suit_permutations`` each minibatch's decisions are shown with
    their suits renamed at random (:mod:`training.symmetry`). Returns the held-out accuracy (agreement with
    the demonstrated action on decisions with a choice), the mean entropy there, and the
    last losses. ``progress`` shows a bar over the minibatches (rate, time left); ``on_epoch`` is handed each
    epoch's mean losses and held-out accuracy (the cloning's learning curve).
    """
    if config.pretrain_decisions == "declare":
        demos = demos.declarations()
        if not len(demos):
            raise ValueError("pretrain_decisions: declare: the demonstrations hold no suit declaration")
    elif config.pretrain_decisions == "endgame":
        demos = demos.endgame(config.pretrain_endgame_cards)
        if not len(demos):
            raise ValueError(f"pretrain_decisions: endgame: the demonstrations hold no decision with a choice where "
                             f"some player holds at most {config.pretrain_endgame_cards} card(s)")
    policy = model.policy
    rng = np.random.default_rng(seed)
    obs_renamings, move_renamings = (torch.as_tensor(index) for index in suit_permutations()) \
        if config.pretrain_suit_permutations else (None, None)
    obs, masks = torch.as_tensor(demos.obs), torch.as_tensor(demos.masks)
    actions, returns = torch.as_tensor(demos.actions), torch.as_tensor(demos.returns)
    order = rng.permutation(len(demos))
    held = order[: max(1, len(order) // 20)]
    train = order[len(held):]
    smoothing = config.pretrain_smoothing
    prior = None if config.pretrain_prior is None else prior_log_probs(config, demos)
    soft = None if config.pretrain_temperature is None else torch.as_tensor(
        search_targets(demos, config.pretrain_temperature, prior))
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.pretrain_lr)
    updates = config.pretrain_epochs * -(-len(train) // config.pretrain_batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_factor(config.pretrain_lr_schedule, step, updates))
    policy.set_training_mode(True)
    policy_loss = value_loss = float("nan")
    bar = tqdm(total=updates, desc="cloning", unit="batch", disable=not progress, dynamic_ncols=True)
    for epoch in range(config.pretrain_epochs):
        losses: list[tuple[float, float]] = []
        perm = rng.permutation(train)
        for start in range(0, len(perm), config.pretrain_batch_size):
            batch = torch.as_tensor(perm[start:start + config.pretrain_batch_size])
            batch_obs, legal = obs[batch], masks[batch]
            targets = soft[batch] if soft is not None else \
                torch.nn.functional.one_hot(actions[batch], NUM_ACTIONS).to(torch.float32)
            if obs_renamings is not None:
                renaming = torch.as_tensor(rng.integers(len(obs_renamings), size=len(batch)))
                moves = move_renamings[renaming]
                batch_obs = batch_obs.gather(1, obs_renamings[renaming])
                legal, targets = legal.gather(1, moves), targets.gather(1, moves)
            inputs = _inputs(policy, batch_obs)
            latent_pi = policy.mlp_extractor.forward_actor(policy.pi_features_extractor(inputs))
            latent_vf = policy.mlp_extractor.forward_critic(policy.vf_features_extractor(inputs))
            log_p = torch.log_softmax(policy.action_net(latent_pi).masked_fill(~legal, float("-inf")), dim=1)
            log_p = log_p.masked_fill(~legal, 0.0)
            chosen = (targets * log_p).sum(1)
            spread = log_p.sum(1) / legal.sum(1)
            p_loss = -((1 - smoothing) * chosen + smoothing * spread).mean()
            v_loss = torch.nn.functional.mse_loss(policy.value_net(latent_vf).flatten(), returns[batch])
            loss = p_loss + config.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
            schedule.step()
            policy_loss, value_loss = p_loss.item(), v_loss.item()
            losses.append((policy_loss, value_loss))
            bar.update()
        if on_epoch is not None:
            accuracy, _ = _held_out(policy, obs, masks, actions, held)
            policy.set_training_mode(True)
            mean = np.mean(losses, axis=0)
            on_epoch({"epoch": epoch + 1, "policy_loss": float(mean[0]), "value_loss": float(mean[1]),
                      "accuracy": accuracy})
        bar.set_postfix(epoch=f"{epoch + 1}/{config.pretrain_epochs}", loss=f"{np.mean(losses, axis=0)[0]:.3f}")
    bar.close()
    accuracy, entropy = _held_out(policy, obs, masks, actions, held)
    return {"accuracy": accuracy, "entropy": entropy, "policy_loss": policy_loss, "value_loss": value_loss,
            "samples": float(len(demos))}


def _held_out(policy: Any, obs: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor,
              held: np.ndarray) -> tuple[float, float]:
    """The accuracy (agreement with the demonstrated move where there was a choice) and mean entropy of ``policy``
    on the held-out decisions; leaves the policy in evaluation mode."""
    policy.set_training_mode(False)
    with torch.no_grad():
        held_t = torch.as_tensor(held)
        choice = masks[held_t].sum(1) > 1
        logits = masked_logits(policy, obs[held_t], masks[held_t])[choice]
        accuracy = float((logits.argmax(1) == actions[held_t][choice]).float().mean()) if choice.any() else 1.0
        probs = torch.softmax(logits, dim=1)
        entropy = float(-(probs * torch.log_softmax(logits, dim=1).nan_to_num(0.0, neginf=0.0)).sum(1).mean())
    return accuracy, entropy


__all__ = ["RECORDING_KEYS", "Demonstrations", "Hands", "behaviour_clone", "demonstrations", "extra_demonstrations",
           "load_prior", "lr_factor", "masked_logits", "prior_log_probs", "record_demonstrations", "recording_seed", "search_targets"]
