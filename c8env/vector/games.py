"""VectorGames: B games of Crazy Eights held as arrays and stepped together (the batched engine)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from c8env.actions import NUM_ACTIONS, action_text
from c8env.cards import NUM_CARDS, RANKS, SUITS, card_text
from c8env.engine import (
    ANY_SUIT,
    PHASE_NAMES,
    IllegalActionError,
    State,
    check_deal_fits,
    check_num_players,
    declaration_data,
    draw_record_data,
    suit_draws_data,
)
from c8env.episode import DEFAULT_MAX_STEPS, check_episode_args
from c8env.observation import OBS_SIZE
from c8env.rules import RuleSet, load_rules
from c8env.vector import kernels, rng
from c8env.vector.jit import bound

_STOCK_MODES = {"reshuffle": 0, "pass": 1, "end": 2}
#: Games a thread steps at a time when a batch is stepped on several threads (``VectorGames(threads=N)``).
RANGE = 128


def _as_array(value: Any) -> np.ndarray | None:
    """``np.asarray(value)``, or None where NumPy makes no array of it (a ragged list)."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        return None


def check_slots(slots: Any, size: int, name: str = "slots") -> np.ndarray:
    """A bool[size] selection of games (None: all of them); a clear error otherwise."""
    if slots is None:
        return np.ones(size, dtype=bool)
    array = _as_array(slots)
    if array is None or array.shape != (size,) or array.dtype != bool:
        got = f"a ragged {type(slots).__name__}" if array is None else f"{array.dtype} {array.shape}"
        raise ValueError(f"{name} must be None or a bool array of shape ({size},), got {got}")
    return array


def check_ids(value: Any, size: int, name: str, allowed: str = "") -> np.ndarray:
    """``value`` as an int array of shape ``(size,)`` (an int array, or a list of ints without bools, which NumPy
    would make 0 and 1); a ValueError naming ``name`` (and ``allowed``) otherwise."""
    array = _as_array(value)
    bools = isinstance(value, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in value)
    if array is None or bools or array.shape != (size,) or array.dtype.kind not in "iu":
        got = (f"a ragged {type(value).__name__}" if array is None else f"a {type(value).__name__} holding a bool"
               if bools else f"{array.dtype} {array.shape}")
        raise ValueError(f"{name} must be an int array of shape ({size},){allowed}, got {got}")
    return array


def check_seeds(seeds: Any, size: int) -> np.ndarray:
    """``size`` seeds (ints from 0 to 2**64 - 1) as uint64; a clear error otherwise."""
    array = check_ids(seeds, size, "seeds", " (ints from 0 to 2**64 - 1)")
    if array.dtype.kind == "i" and (array < 0).any():
        raise ValueError(f"seeds must be >= 0; got {int(array[array < 0][0])} at index "
                         f"{int(np.flatnonzero(array < 0)[0])}")
    return array.astype(np.uint64)


def rule_table(rules: RuleSet, num_players: int, episode: str = "hand", reward: str = "win",
               max_steps: int = DEFAULT_MAX_STEPS, seed: int = 0) -> kernels.Table:
    """The kernels' view of a rule set and episode settings."""
    State.new(num_players, rules, seed=0)  # the engine's own check that the deal fits the decks
    deal_size = rules.deal_size(num_players)
    decks = rules.num_decks(num_players)
    return kernels.Table(
        points=np.array(rules.point_table, dtype=np.int64),
        effects=np.array(rules.effect_table, dtype=np.int64),
        draw_amounts=np.array(rules.draw_table, dtype=np.int64),
        draw_cards=int(rules.draw_cards_mask),
        wild_rank=int(rules.wild_rank_index),
        countdown=bool(rules.countdown),
        draw_when_able=bool(rules.draw_when_able),
        max_draws=-1 if rules.max_draws_per_turn is None else int(rules.max_draws_per_turn),
        stock_exhausted=_STOCK_MODES[rules.stock_exhausted],
        penalty_scoring=rules.scoring == "penalty",
        last_card_call=bool(rules.last_card_call),
        last_card_penalty=int(rules.last_card_penalty),
        stop_threshold=-1 if rules.stop_threshold is None else int(rules.stop_threshold),
        bury_starter=rules.starter_wild == "bury",
        decks=decks,
        deal_size=deal_size,
        target=int(rules.target(num_players)),
        match_hands=-1 if rules.match_hands is None else int(rules.match_hands),
        num_players=num_players,
        match=episode == "match",
        points_reward=reward == "points",
        max_steps=int(max_steps),
        seed=np.uint64(seed),
    )


def derive_seeds(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``derive_seed(first[j], second[j])`` for every ``j`` (:func:`c8env.seeding.derive_seed`, compiled): uint64
    seeds from two arrays of ints from 0 to 2**64 - 1 of the same length."""
    if np.ndim(first) != 1 or np.shape(second) != np.shape(first):
        raise ValueError(f"first and second must be 1-D int arrays of the same length, got shapes {np.shape(first)} "
                         f"and {np.shape(second)}")
    first, second = check_seeds(first, len(first)), check_seeds(second, len(first))
    out = np.zeros(first.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        kernels.derive_seeds(first, second, out, kernels.new_scratch())
    return out


def _check_seed(seed: Any) -> int:
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and 0 <= seed < 2**64:
        return int(seed)
    raise ValueError(f"seed={seed!r} is invalid; allowed: an int from 0 to 2**64 - 1")


class VectorGames:
    """``num_envs`` games stepped together (see the module docstring)."""

    def __init__(self, num_envs: int, num_players: int = 2, rules: str | dict | RuleSet = "standard",
                 episode: str = "hand", reward: str = "win", max_steps: int | None = None,
                 autoreset: bool = True, observations: bool = True, threads: int = 1) -> None:
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is invalid; allowed: an int >= 1")
        if not isinstance(threads, (int, np.integer)) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"threads={threads!r} is invalid; allowed: an int >= 1")
        self.num_envs = int(num_envs)
        #: Threads that :meth:`step` shares the games among (contiguous ranges of slots).
        self.threads = int(threads)
        self.num_players = check_num_players(num_players)
        self.rules = load_rules(rules)
        check_deal_fits(self.rules, self.num_players)  # refused here, not at the first reset
        self.max_steps = check_episode_args(episode, reward, max_steps)
        self.episode, self.reward = episode, reward
        self.autoreset = bool(autoreset)
        self.observations = bool(observations)
        self._table = rule_table(self.rules, self.num_players, episode, reward, self.max_steps, 0)
        self.games = kernels.new_games(self.num_envs, self.num_players)
        self.observation = np.zeros((self.num_envs, OBS_SIZE), dtype=np.float32)
        self.action_mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
        self.final_observation = np.zeros((self.num_envs, OBS_SIZE), dtype=np.float32)
        self.rewards = np.zeros((self.num_envs, self.num_players), dtype=np.float64)
        self.terminated = np.zeros(self.num_envs, dtype=bool)
        self.truncated = np.zeros(self.num_envs, dtype=bool)
        #: The hands that ended in the last step, per game (:class:`c8env.vector.kernels.HandResults`).
        self.results = kernels.new_results(self.num_envs, self.num_players)
        self._done = np.zeros(self.num_envs, dtype=bool)
        self._sampler = np.zeros(6, dtype=np.uint64)
        self._scratch = kernels.new_scratch()
        self._ranges = [(lo, min(lo + RANGE, self.num_envs)) for lo in range(0, self.num_envs, RANGE)]
        workers = min(self.threads, len(self._ranges))
        self._scratches = [self._scratch] + [kernels.new_scratch() for _ in range(workers - 1)]
        self._pool: ThreadPoolExecutor | None = None  # the other threads, started by the first step that needs them
        self._step: Callable[..., None] | None = None  # step_range bound to these arrays' types at the first step
        self._all = np.ones(self.num_envs, dtype=bool)
        self._has_reset = False

    @property
    def current_player(self) -> np.ndarray:
        """Seat to act in each game (int64[B])."""
        return self.games.current

    def reset(self, seed: int) -> None:
        """Deal every slot's first game: slot ``b`` plays ``State.new(..., seed=derive_seed(seed, b, 0))``."""
        seed = _check_seed(seed)
        self._table = rule_table(self.rules, self.num_players, self.episode, self.reward, self.max_steps, seed)
        with np.errstate(over="ignore"):
            kernels.reset_all(self.games, self._table, self._scratch)
            self._observe()
            words = np.zeros(16, dtype=np.uint64)
            count = rng.entropy_words(words, np.uint64(seed))
            count += rng.entropy_words(words[count:], np.uint64(2**32 - 1))  # the sampler's own stream
            rng.seed_generator(words, count, self._sampler, self._scratch.work)
        self._done[:] = False
        self._has_reset = True

    def reset_deals(self, seeds: np.ndarray, slots: np.ndarray | None = None) -> None:
        """Deal explicit games: slot ``b`` plays ``State.new(num_players, rules, seed=seeds[b])``, for every
        slot (``slots=None``) or those where ``slots[b]`` (bool[B]; the other slots keep their games and
        their seeds are ignored). ``seeds``: B ints from 0 to 2**64 - 1.

        Observations and masks are brought up to date. Before any :meth:`reset`, the batch is first
        reset with seed 0. Under autoreset, a slot whose dealt game ends goes on with its own seeded
        sequence (``derive_seed(seed, b, k)``, ``seed`` that of the last :meth:`reset`).
        """
        seeds = check_seeds(seeds, self.num_envs)
        slots = check_slots(slots, self.num_envs)
        if not self._has_reset:
            self.reset(0)
        with np.errstate(over="ignore"):
            kernels.deal_slots(self.games, self._table, seeds, slots, self._scratch)
            self._observe(slots)
        self._done[slots] = False

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per game (int[B]); returns ``(rewards[B, P], terminated[B], truncated[B])``.

        ``active`` (bool[B], default all): only those games move; the others stay as they are, with
        reward 0 and both flags False, and their entries of ``actions`` are neither read nor checked.
        Raises :class:`c8env.IllegalActionError` naming the first active game whose action is not
        legal; nothing is changed then.
        """
        self.check_reset()
        given = check_ids(actions, self.num_envs, "actions")
        active = self._all if active is None else check_slots(active, self.num_envs, "active")
        if not self.autoreset and (self._done & active).any():
            b = int(np.flatnonzero(self._done & active)[0])
            raise RuntimeError(f"game {b} has ended and autoreset is off; call reset(seed) or reset_deals()")
        actions = np.asarray(given, dtype=np.int64)  # ids from 2**63 wrap to negative ones: refused all the same
        b = kernels.first_illegal(actions, active, self.action_mask)
        if b >= 0:
            allowed = ", ".join(f"{a} ({action_text(a)})" for a in np.flatnonzero(self.action_mask[b]).tolist())
            in_range = 0 <= int(given[b]) < NUM_ACTIONS
            shown = action_text(int(given[b])) if in_range else f"out of range 0..{NUM_ACTIONS - 1}"
            raise IllegalActionError(f"action {int(given[b])} ({shown}) is illegal in game {b} for player "
                                     f"{int(self.games.current[b])}; legal: {allowed}")
        with np.errstate(over="ignore"):
            self._step_ranges(np.ascontiguousarray(actions), np.ascontiguousarray(active))
        if not self.autoreset:
            self._done |= self.terminated | self.truncated
        return self.rewards, self.terminated, self.truncated

    def _step_ranges(self, actions: np.ndarray, active: np.ndarray) -> None:
        """:func:`c8env.vector.kernels.step_range` over all the games: in one call on one thread; on several, in
        ranges of :data:`RANGE` games that each thread takes one after the other until none is left (a thread
        that other processes hold back takes fewer; the step waits only for the ranges taken), each thread with
        its own scratch space."""
        before = (self.games, self._table, actions, active, self.rewards, self.terminated, self.truncated,
                  self.final_observation, self.autoreset)
        after = (self.results, self.observations, self.observation, self.action_mask)
        if self._step is None:
            self._step = bound(kernels.step_range, *before, self._scratch, *after, 0, 0)
        step = self._step
        if len(self._scratches) == 1:
            step(*before, self._scratch, *after, 0, self.num_envs)
            return
        if self._pool is None:  # its threads exit when the games are collected
            self._pool = ThreadPoolExecutor(len(self._scratches) - 1)
        ranges, lock = iter(self._ranges), threading.Lock()
        taken: list[threading.Event] = []  # a flag per range that a pool thread took, set when it is stepped
        failures: list[BaseException] = []

        def take(scratch: kernels.Scratch) -> None:
            """Step ranges until none is left."""
            while True:
                with lock:  # a range is taken and its flag listed at once
                    lo, hi = next(ranges, (0, 0))
                    if hi == 0:
                        return
                    done = None if scratch is self._scratch else threading.Event()
                    if done is not None:
                        taken.append(done)
                try:
                    step(*before, scratch, *after, lo, hi)
                except BaseException as error:  # raised in the caller's thread below
                    failures.append(error)
                    raise
                finally:
                    if done is not None:
                        done.set()

        for scratch in self._scratches[1:]:
            self._pool.submit(take, scratch)
        take(self._scratch)
        # the ranges the other threads took; a thread that other processes kept from starting has none to wait for
        for done in taken:
            done.wait()
        if failures:
            raise failures[0]

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without the compiled entry point and the threads (made again at the next step)."""
        return {**self.__dict__, "_step": None, "_pool": None}

    @property
    def table(self) -> kernels.Table:
        """The kernels' rule table of these games (:func:`rule_table`)."""
        return self._table

    def run_kernel(self, kernel: Callable[..., None], active: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Let a compiled mover play in the active games (``active``, bool[B], default all): the way in for
        batched agents (:func:`c8env.agents.batched.autoplay`).

        ``kernel(games, table, active, action_mask, rewards, terminated, truncated, final_observation,
        autoreset, scratch, results)`` makes moves with :func:`c8env.vector.kernels.move` and fills the results;
        observations and masks are then brought up to date. Returns ``(rewards, terminated, truncated)``.
        """
        self.check_reset()
        active = self._all if active is None else check_slots(active, self.num_envs, "active")
        if (self._done & active).any():
            b = int(np.flatnonzero(self._done & active)[0])
            raise RuntimeError(f"game {b} has ended and autoreset is off; call reset(seed) or reset_deals()")
        self.results.hand_over[:] = False
        with np.errstate(over="ignore"):
            kernel(self.games, self._table, active, self.action_mask, self.rewards, self.terminated, self.truncated,
                   self.final_observation, self.autoreset, self._scratch, self.results)
            self._observe(active)
        if not self.autoreset:
            self._done |= self.terminated | self.truncated
        return self.rewards, self.terminated, self.truncated

    def _observe(self, slots: np.ndarray | None = None) -> None:
        """Bring masks (and observations) up to date: of every game, or of those where ``slots[b]`` (the
        others have not moved)."""
        if slots is not None and slots is not self._all:
            kernels.observe_slots(self.games, self._table, slots, self.observations, self.observation,
                                  self.action_mask)
        elif self.observations:
            kernels.observe_all(self.games, self._table, self.observation, self.action_mask)
        else:
            kernels.masks_all(self.games, self._table, self.action_mask)

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal action per game, from the batch's own seeded generator; -1 for a game without
        one (it ended, autoreset off)."""
        self.check_reset()
        out = np.zeros(self.num_envs, dtype=np.int64)
        with np.errstate(over="ignore"):
            kernels.random_actions(self.action_mask, self._sampler, out)
        return out

    def check_reset(self) -> None:
        """Refuse to act before the first :meth:`reset` or :meth:`reset_deals`."""
        if not self._has_reset:
            raise RuntimeError("no games yet: call reset(seed) or reset_deals(seeds) first")

    # ----- one game as a scalar state ---------------------------------------------------------------
    def _game(self, b: Any) -> int:
        if isinstance(b, (int, np.integer)) and not isinstance(b, (bool, np.bool_)) and 0 <= b < self.num_envs:
            return int(b)
        raise ValueError(f"game index b={b!r} is invalid; allowed: an int from 0 to {self.num_envs - 1}")

    def to_dict(self, b: int) -> dict[str, Any]:
        """Game ``b`` in the ``State.to_dict()`` format."""
        b, g, n = self._game(b), self.games, self.num_players

        def hand(p: int) -> list[str]:
            cards = [c for c in range(NUM_CARDS) if (int(g.held[b, p]) >> c) & 1]
            cards += [c for c in range(NUM_CARDS) if (int(g.twice[b, p]) >> c) & 1]
            return [card_text(c) for c in sorted(cards)]

        winner = int(g.winner[b])
        return {
            "num_players": n,
            "hands": [hand(p) for p in range(n)],
            "stock": [card_text(int(c)) for c in g.stock[b, :g.stock_len[b]]],
            "discard": [card_text(int(c)) for c in g.discard[b, :g.discard_len[b]]],
            "current_player": int(g.current[b]),
            "dealer": int(g.dealer[b]),
            "suit_to_follow": "*" if g.suit[b] == ANY_SUIT else SUITS[int(g.suit[b])],
            "rank_to_follow": None if g.rank[b] < 0 else RANKS[int(g.rank[b])],
            "direction": int(g.direction[b]),
            "phase": PHASE_NAMES[int(g.phase[b])],
            "pending_draw": int(g.pending[b]),
            "draws_this_turn": int(g.draws[b]),
            "passes": int(g.passes[b]),
            "scores": [int(x) for x in g.scores[b]],
            "hands_played": int(g.hands_played[b]),
            "countdown": [int(x) for x in g.countdown[b]],
            "voids": [[SUITS[s] for s in range(4) if (int(v) >> s) & 1] for v in g.voids[b]],
            "last_draws": [draw_record_data((int(g.draw_suits[b, p]), int(g.draw_ranks[b, p]), int(g.draw_held[b, p]))
                                            if g.draw_suits[b, p] else None) for p in range(n)],
            "suit_draws": [suit_draws_data(tuple(int(held) for held in g.suit_draws[b, p])) for p in range(n)],
            "declared": [declaration_data((int(g.declared[b, p]) - 1, int(g.declared_held[b, p]))
                                          if g.declared[b, p] else None) for p in range(n)],
            "winner": None if winner < 0 else winner,
            "rules": self.rules.spec(),
        }

    def end_reason(self, b: int) -> str | None:
        """Why game ``b``'s hand ended (``out``, ``blocked``, ``stop``, ``stock``), or None while it runs."""
        return kernels.END_REASONS[int(self.games.end_reason[self._game(b)])]


__all__ = ["VectorGames", "check_ids", "check_seeds", "check_slots", "derive_seeds", "rule_table"]
