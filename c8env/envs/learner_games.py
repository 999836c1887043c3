"""One learner seat per game, the other seats played in batch: the core of the batched single-agent envs.

:class:`LearnerGames` holds ``num_envs`` games in the kernels' arrays (:mod:`c8env.vector.kernels`)
and gives each one learning seat; built-in opponents (``random``, ``greedy``, NumPy policy
files) fill the other seats and are played for all games at once, one batched call per
opponent move, until every game waits for its learner again. It follows
:class:`c8env.envs.single_agent.SingleAgentEnv` episode for episode:

* slot ``b`` has its own ``numpy.random.Generator``, seeded ``seed + b`` (Gymnasium's and
  Stable-Baselines3's per-env seeds), drawing what ``SingleAgentEnv.reset`` draws in the same
  order: the learner's seat, the opponents (a pool callable gets a generator seeded from it),
  the opponents' seeds, then the deal seed; the game is ``State.new(num_players, rules,
  seed=deal_seed)``. So slot ``b`` plays exactly the episodes of ``SingleAgentEnv`` reset with
  ``seed + b`` once and then without a seed;
* a learner's reward is its own, summed over everything since its previous decision;
  a deal whose episode ends before the learner's first decision is replaced by the next deal
  seed (``skipped``), and in match mode the reward of hands finished before that decision is
  added to the first step;
* same-step autoreset: a step that ends an episode returns its reward and flags with the new
  episode's first observation; :attr:`final_observation` holds the learner's view of the
  finished game, :attr:`results` its last hand (``hand_winner``, ``end_reason``, ``scores``,
  ``match_winner``), :attr:`final_scores` and :attr:`final_skipped` its totals and replaced deals.

Opponents play as the scalar env's agents: ``greedy`` is :func:`c8env.agents.batched.greedy_all`,
``random`` a generator per game and seat seeded as ``RandomAgent(seed)`` with the seed that
``SingleAgentEnv`` draws for that seat, a policy (or any agent with ``act_batch``) its ``act_batch``. NumPy and
the kernels only: no Gymnasium here (:mod:`c8env.envs.vector_envs` builds on it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from c8env.actions import NUM_ACTIONS, action_text
from c8env.agents import BatchAgent, batch_mode, batched, load
from c8env.agents.batched import EXTERNAL
from c8env.agents.batched import GREEDY as GREEDY_CODE
from c8env.engine import IllegalActionError, check_deal_fits, check_num_players, check_seed
from c8env.episode import check_episode_args
from c8env.observation import OBS_SIZE
from c8env.rules import RuleSet, load_rules
from c8env.vector import kernels, rule_table
from c8env.vector.games import check_ids
from c8env.vector.jit import jit
from c8env.versions import LATEST, get_version

#: Deals tried for one episode before giving up when each ends before the learner's first decision.
MAX_REDEALS = 1_000
_SEED_BOUND = 2**63
#: Opponent kinds as ints in :attr:`LearnerGames.opponent_kind`; policies are ``POLICY + index``.
LEARNER, RANDOM, GREEDY, POLICY = -1, 0, 1, 2


@jit
def play(g: kernels.Games, t: kernels.Table, actions: np.ndarray, active: np.ndarray, seats: np.ndarray,
         rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, res: kernels.HandResults,
         final_obs: np.ndarray, s: kernels.Scratch) -> None:
    """One move (``actions[b]``) in each ``active`` game (:func:`c8env.vector.kernels.move`, without autoreset;
    an episode's last view is its learner's, seat ``seats[b]``)."""
    for b in range(g.current.shape[0]):
        if active[b]:
            kernels.move(g, b, t, actions[b], rewards, terminated, truncated, final_obs, False, s, res, seats[b])


@jit
def deal(g: kernels.Games, t: kernels.Table, which: np.ndarray, seeds: np.ndarray, s: kernels.Scratch) -> None:
    """Game ``b`` becomes ``State.new(num_players, rules, seed=seeds[b])`` for each ``which[b]``."""
    for b in range(g.current.shape[0]):
        if which[b]:
            kernels.new_game(g, b, t, seeds[b], s)


class _Buffers:
    """What one pass of moves accumulates: every seat's rewards, episode ends, hand results, final views."""

    def __init__(self, size: int, num_players: int) -> None:
        self.rewards = np.zeros((size, num_players), dtype=np.float64)
        self.terminated = np.zeros(size, dtype=bool)
        self.truncated = np.zeros(size, dtype=bool)
        self.results = kernels.new_results(size, num_players)
        self.final_observation = np.zeros((size, OBS_SIZE), dtype=np.float32)

    def clear(self) -> None:
        self.rewards[:] = 0.0
        self.terminated[:] = False
        self.truncated[:] = False
        self.results.hand_over[:] = False  # the other fields are read only where a hand ended


def _is_agent(obj: Any) -> bool:
    return callable(getattr(obj, "act", None))


class LearnerGames:
    """``num_envs`` games, each with one learner seat against batched opponents (see the module docstring).

    ``opponents``: ``"random"``, ``"greedy"``, a NumPy policy (a ``.npz`` path, a shipped policy name,
    a :class:`c8env.agents.PolicyAgent`) or any agent with ``act_batch`` (:class:`c8env.agents.BatchAgent`)
    for every opponent seat; a list of those, one per opponent seat clockwise from the learner; or a
    callable ``(rng) -> any of those`` called at each episode's start (opponent pools). Other agents
    (``expert``, objects with ``act`` alone) cannot be batched and are refused. ``learner_seat``: None (drawn per episode) or a fixed seat.
    """

    def __init__(self, num_envs: int, num_players: int = 2, rules: str | dict | RuleSet = "standard",
                 episode: str = "hand", reward: str = "win", max_steps: int | None = None,
                 opponents: Any = "random", learner_seat: int | None = None, version: int = LATEST.number) -> None:
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is invalid; allowed: an int >= 1")
        self.num_envs = size = int(num_envs)
        self.num_players = n = check_num_players(num_players)
        self.rules = load_rules(rules)
        check_deal_fits(self.rules, self.num_players)  # refused here, not at the first reset
        self.version = get_version(version)
        self.max_steps = check_episode_args(episode, reward, max_steps, self.version.max_steps)
        self.episode, self.reward_type = episode, reward
        if learner_seat is not None and (not isinstance(learner_seat, (int, np.integer))
                                         or isinstance(learner_seat, bool) or not 0 <= learner_seat < n):
            raise ValueError(f"learner_seat={learner_seat!r} is invalid; allowed: None or an int from 0 to {n - 1}")
        self.fixed_seat = None if learner_seat is None else int(learner_seat)
        self.table = rule_table(self.rules, n, episode, reward, self.max_steps)  # its batch seed is unused: deals are seeded
        self.games = kernels.new_games(size, n)
        self.scratch = kernels.new_scratch()
        self.policies: list[BatchAgent] = []
        self._kinds: dict[str, int] = {}
        self._source: Callable[[np.random.Generator], Any] | None = None
        self._fixed: list[int] | None = None
        self._fixed_entries: list[Any] = []
        if callable(opponents) and not _is_agent(opponents):
            self._source = opponents
        else:  # validated (and policy files loaded) now: a bad spec fails at construction
            self._fixed_entries = self._entries(opponents)
            self._fixed = [self._kind(entry) for entry in self._fixed_entries]

        self.learner_seat = np.zeros(size, dtype=np.int64)
        #: Kind of each seat's player per game (LEARNER, RANDOM, GREEDY or POLICY + index into ``policies``).
        self.opponent_kind = np.full((size, n), LEARNER, dtype=np.int64)
        # The same seats as c8env.agents.batched.autoplay_all's codes: random seat p draws from generator p.
        self._autoplay_codes = np.full((size, n), EXTERNAL, dtype=np.int64)
        #: Opponent specs of each game's episode, clockwise from the learner.
        self.opponents: list[list[Any]] = [[] for _ in range(size)]
        #: Opponent specs of the episodes that ended in the last step (None for the others).
        self.final_opponents: list[list[Any] | None] = [None] * size
        #: Deals replaced at the start of each game's episode (it ended before the learner's first decision).
        self.skipped = np.zeros(size, dtype=np.int64)
        self._observation = np.zeros((size, OBS_SIZE), dtype=np.float32)  # the kernels write every entry
        self.action_mask = np.zeros((size, NUM_ACTIONS), dtype=np.int8)
        self._step = _Buffers(size, n)
        self._start = _Buffers(size, n)
        self._pending = np.zeros(size, dtype=np.float64)
        self._reward = np.zeros(size, dtype=np.float64)  # the learner's, returned by step
        self._deal_seeds = np.zeros(size, dtype=np.uint64)
        self._opp_obs = np.zeros((size, OBS_SIZE), dtype=np.float32)
        self._opp_mask = np.zeros((size, NUM_ACTIONS), dtype=np.int8)
        self._actions = np.zeros(size, dtype=np.int64)
        self._random_seeds = np.zeros((n, size), dtype=np.uint64)  # per seat and game: RandomAgent(seed)
        self._random_generators = np.zeros((n, size, 6), dtype=np.uint64)
        self._rngs: list[np.random.Generator | None] = []
        self._all = np.ones(size, dtype=bool)
        #: The learner's seat of the episodes that ended in the last step (and of the others).
        self.final_seat = np.zeros(size, dtype=np.int64)
        #: The match totals (int64[B, P]) and ``skipped`` of each game's episode at the end of the last step, before
        #: the games whose episode ended were dealt their next one.
        self.final_scores = np.zeros((size, n), dtype=np.int64)
        self.final_skipped = np.zeros(size, dtype=np.int64)
        self._has_reset = False

    # ----- opponents --------------------------------------------------------------------------------
    def _entries(self, value: Any) -> list[Any]:
        count = self.num_players - 1
        if isinstance(value, (str, Path)) or _is_agent(value):
            return [value] * count
        if isinstance(value, Sequence):
            entries = list(value)
            if len(entries) != count:
                raise ValueError(f"opponents has {len(entries)} entries but {self.num_players} players need {count} "
                                 "(one spec per opponent seat, clockwise from the learner)")
            return entries
        raise ValueError(f"opponents={value!r} is invalid; allowed: 'random', 'greedy', a policy (.npz path, shipped "
                         "name or PolicyAgent), a list of those (one per opponent), or a callable (rng) -> any of those")

    def _kind(self, entry: Any) -> int:
        """The kind of one opponent spec (remembered: policy files are loaded once)."""
        key = str(entry) if isinstance(entry, (str, Path)) else f"<object {id(entry)}>"
        if key in self._kinds:
            return self._kinds[key]
        from_spec = isinstance(entry, (str, Path))
        agent = load(entry, rules=self.rules, num_players=self.num_players) if from_spec else entry
        mode = batch_mode(agent)
        if from_spec and mode in ("random", "greedy"):  # built from a spec: the kernel, seeded per episode
            self._kinds[key] = RANDOM if mode == "random" else GREEDY
        elif mode is not None and callable(getattr(agent, "act_batch", None)):
            self.policies.append(agent)  # (kept alive: an object's key is its id)
            self._kinds[key] = POLICY + len(self.policies) - 1
        else:
            raise ValueError(f"opponent {entry!r} cannot be played in batch; allowed: 'random', 'greedy', a NumPy "
                             "policy (.npz path, shipped policy name, PolicyAgent) or an agent with act_batch; use "
                             "c8env.envs.single_agent.SingleAgentEnv for other agents")
        return self._kinds[key]

    def _policy_actions(self, need: np.ndarray) -> np.ndarray:
        """The ``act_batch`` opponents' moves in the ``need`` games, one batch per agent (a policy's is exactly its
        ``act``: :meth:`c8env.agents.PolicyAgent.act_batch`)."""
        g, out = self.games, self._actions
        with np.errstate(over="ignore"):
            kernels.observe_all(g, self.table, self._opp_obs, self._opp_mask)
        kind = self.opponent_kind[np.arange(self.num_envs), g.current]
        for k in np.unique(kind[need]).tolist():
            rows = np.flatnonzero(need & (kind == k))
            out[rows] = self.policies[k - POLICY].act_batch(self._opp_obs[rows], self._opp_mask[rows])
        return out

    # ----- episodes ---------------------------------------------------------------------------------
    def reset(self, seed: int | None | Sequence[int | None] = None) -> None:
        """Start a new episode in every game; slot ``b``'s generator is seeded ``seed + b`` (or ``seed[b]``); a game
        without a seed continues its generator (a fresh one at the first reset)."""
        size = self.num_envs
        if isinstance(seed, Sequence) and not isinstance(seed, (str, bytes, bytearray)):
            if len(seed) != size:
                raise ValueError(f"seed has {len(seed)} entries for {size} games; give one per game, an int or None")
            seeds = [check_seed(s) for s in seed]
        else:
            base = check_seed(seed)
            seeds = [None if base is None else base + b for b in range(size)]
        previous = self._rngs or [None] * size  # an unseeded reset continues a game's generator (as Gymnasium's)
        self._rngs = [gen if s is None and gen is not None else np.random.default_rng(s)
                      for s, gen in zip(seeds, previous, strict=True)]
        self._pending[:] = 0.0
        self._begin(self._all.copy())
        self._observe()
        self._has_reset = True

    def _begin(self, which: np.ndarray) -> None:
        """New episodes in the ``which`` games: draws as ``SingleAgentEnv.reset``, deals until the learner has a
        decision to make; the reward of hands finished before it waits in ``_pending`` (match mode)."""
        n = self.num_players
        for b in np.flatnonzero(which).tolist():
            gen = self._rngs[b]
            seat = int(gen.integers(n)) if self.fixed_seat is None else self.fixed_seat
            if self._source is None:
                entries, kinds = self._fixed_entries, self._fixed
            else:
                entries = self._entries(self._source(np.random.default_rng(int(gen.integers(_SEED_BOUND)))))
                kinds = [self._kind(entry) for entry in entries]
            seeds = gen.integers(_SEED_BOUND, size=n - 1)  # the opponents' seeds (random ones use theirs)
            self.learner_seat[b] = seat
            self.opponents[b] = list(entries)
            self.opponent_kind[b, seat] = LEARNER
            for k, kind in enumerate(kinds, start=1):
                self.opponent_kind[b, (seat + k) % n] = kind
                self._random_seeds[(seat + k) % n, b] = seeds[k - 1]
            for p, kind in enumerate(self.opponent_kind[b].tolist()):
                self._autoplay_codes[b, p] = p if kind == RANDOM else GREEDY_CODE if kind == GREEDY else EXTERNAL
            self._deal_seeds[b] = int(gen.integers(_SEED_BOUND))
            self.skipped[b] = 0
        with np.errstate(over="ignore"):
            for p in range(n):
                batched.seed_all(self._random_seeds[p], which, self._random_generators[p], self.scratch)
        todo = which
        while True:
            with np.errstate(over="ignore"):
                deal(self.games, self.table, todo, self._deal_seeds, self.scratch)
            buffers = self._start
            buffers.clear()
            ended = self._play_opponents(todo, buffers)
            rows = np.flatnonzero(todo)
            self._pending[rows] = buffers.rewards[rows, self.learner_seat[rows]]
            if not ended.any():
                return
            for b in np.flatnonzero(ended).tolist():
                self.skipped[b] += 1
                if self.skipped[b] >= MAX_REDEALS:
                    raise ValueError(f"{MAX_REDEALS} deals in a row ended before the learner's first decision; "
                                     "check the rules (hand_size, stop_threshold) and max_steps")
                self._deal_seeds[b] = int(self._rngs[b].integers(_SEED_BOUND))
            todo = ended

    def _play_opponents(self, live: np.ndarray, buffers: _Buffers) -> np.ndarray:
        """Opponent moves in the ``live`` games until their learner is to act or their episode ends; returns
        the games whose episode ended. Random and greedy opponents move inside one compiled loop; policies
        move in batch between its calls."""
        ended = np.zeros(self.num_envs, dtype=bool)
        live = live.copy()
        rows = np.arange(self.num_envs)
        while True:
            with np.errstate(over="ignore"):
                batched.autoplay_all(self.games, self.table, self._autoplay_codes, self._random_generators, live,
                                     self._opp_mask, buffers.rewards, buffers.terminated, buffers.truncated,
                                     buffers.final_observation, False, self.scratch, buffers.results,
                                     self.learner_seat, False)
            ended |= live & (buffers.terminated | buffers.truncated)
            waiting = live & ~ended & (self.opponent_kind[rows, self.games.current] >= POLICY)
            if not waiting.any():
                return ended
            need = waiting.copy()
            actions = self._policy_actions(need)
            with np.errstate(over="ignore"):
                play(self.games, self.table, actions, need, self.learner_seat, buffers.rewards, buffers.terminated,
                     buffers.truncated, buffers.results, buffers.final_observation, self.scratch)
            done = need & (buffers.terminated | buffers.truncated)
            ended |= done
            live &= ~ended

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one learner action per game (int[B]); returns ``(observation, reward, terminated, truncated)``.

        An illegal action raises :class:`c8env.IllegalActionError` naming the first such game; nothing
        changes then. The arrays returned are reused by the next call.
        """
        if not self._has_reset:
            raise RuntimeError("step() before reset(); call reset(seed) first")
        given = check_ids(actions, self.num_envs, "actions")
        in_range = (given >= 0) & (given < NUM_ACTIONS)
        legal = in_range & (self.action_mask[np.arange(self.num_envs), np.where(in_range, given, 0)] == 1)
        if not legal.all():
            b = int(np.flatnonzero(~legal)[0])
            allowed = ", ".join(f"{a} ({action_text(a)})" for a in np.flatnonzero(self.action_mask[b]).tolist())
            shown = action_text(int(given[b])) if in_range[b] else f"out of range 0..{NUM_ACTIONS - 1}"
            raise IllegalActionError(f"action {int(given[b])} ({shown}) is illegal in game {b} for the learner "
                                     f"(seat {int(self.learner_seat[b])}); legal: {allowed}")
        actions = given.astype(np.int64)
        buffers, rows = self._step, np.arange(self.num_envs)
        buffers.clear()
        buffers.rewards[rows, self.learner_seat] = self._pending
        self._pending[:] = 0.0
        with np.errstate(over="ignore"):
            play(self.games, self.table, actions, self._all, self.learner_seat, buffers.rewards, buffers.terminated,
                 buffers.truncated, buffers.results, buffers.final_observation, self.scratch)
        ended = buffers.terminated | buffers.truncated
        ended |= self._play_opponents(~ended, buffers)
        self._reward[:] = buffers.rewards[rows, self.learner_seat]
        self.final_opponents = [self.opponents[b] if ended[b] else None for b in range(self.num_envs)]
        self.final_seat = self.learner_seat.copy()
        self.final_scores = self.games.scores.copy()
        self.final_skipped = self.skipped.copy()
        if ended.any():
            self._begin(ended)
        self._observe()
        return self.observation, self._reward, buffers.terminated, buffers.truncated

    @property
    def observation(self) -> np.ndarray:
        """The learner's view of each game (float32[B, the version's observation size]; a view of the buffer)."""
        return self._observation[:, :self.version.obs_size]

    def _observe(self) -> None:
        with np.errstate(over="ignore"):
            kernels.observe_all(self.games, self.table, self._observation, self.action_mask)

    # ----- what the last step left --------------------------------------------------------------------
    @property
    def results(self) -> kernels.HandResults:
        """The last hand that ended in each game during the last step (``hand_over`` marks them)."""
        return self._step.results

    @property
    def final_observation(self) -> np.ndarray:
        """The learner's view of each game whose episode ended in the last step (float32[B, the version's size])."""
        return self._step.final_observation[:, :self.version.obs_size]

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions per game (bool[B, 60])."""
        return self.action_mask.astype(bool)


__all__ = ["GREEDY", "LEARNER", "LearnerGames", "MAX_REDEALS", "POLICY", "RANDOM", "deal", "play"]
