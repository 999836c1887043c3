"""A Gymnasium single-agent view of Crazy Eights, for Stable-Baselines3 and other single-agent libraries.

:class:`SingleAgentEnv` seats one learner against opponent agents (``c8env.agents``
specs or any object with ``act(observation) -> int``). It drives the engine
directly through the same :class:`c8env.episode.Episode` as :func:`c8env.raw_env` (hand
end, match play, truncation, rewards, info keys), without the AEC bookkeeping, so the
learner's steps are cheap.

Importing this module imports Gymnasium and ``c8env.agents`` (NumPy only), never torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from c8env.actions import NUM_ACTIONS
from c8env.agents import PolicyAgent, load, observation_for
from c8env.engine import IllegalActionError, State, check_deal_fits, check_num_players, check_seed
from c8env.envs.registration import register_gymnasium
from c8env.envs.spaces import check_render_mode, render_output, vector_space
from c8env.episode import Episode, read_state
from c8env.observation import action_mask, encode_observation
from c8env.rules import RuleSet, load_rules
from c8env.text import render_text
from c8env.versions import LATEST, get_version

#: Deals tried at one ``reset`` before giving up when every hand ends before the learner's first decision.
MAX_REDEALS = 1_000
_SEED_BOUND = 2**63
_RESET_OPTIONS = ("state",)

OpponentSpec = Any  # a spec string or Path, or an object with ``act(observation) -> int``
Opponents = OpponentSpec | Sequence[OpponentSpec] | Callable[[np.random.Generator], Any]


def _is_agent(obj: Any) -> bool:
    return callable(getattr(obj, "act", None))


class SingleAgentEnv(gymnasium.Env):
    """Crazy Eights for one learning seat against built-in or custom opponents (Gymnasium API).

    ## Action Space
    ``Discrete(60)``, the action ids of :func:`c8env.raw_env` (0-51 play a card, 52-55
    declare a suit, 56 draw, 57 pass, 58 announce "last card", 59 stop).
    :meth:`action_masks` gives the learner's legal actions as a bool array (the
    ``sb3_contrib`` ``MaskablePPO`` convention); ``info["action_mask"]`` holds the same
    array after ``reset`` and every step (for loops that read masks from the info).

    ## Observation Space
    ``Box(-1, 1e6, (401,), float32)``: the learner's ``observation`` vector of the AEC
    env (seat-relative, hidden cards never shown; ``c8env.OBS_LAYOUT`` names its parts);
    ``Box(-1, 1e6, (245,), float32)`` (its first 245 entries) with ``version`` 0 or 1.

    ## Rewards
    The learner's own reward of the AEC env, summed over everything that happened
    since its previous decision (its move and the opponents' moves after it).
    ``reward="win"``: +1 for winning a hand, -1/(n-1) for losing it, 0 for a tied
    blocked hand. ``reward="points"``: the learner's zero-sum points transfer.

    ## Starting State
    ``reset`` deals a hand (or starts from ``options={"state": d}``, a dict in the
    ``State.to_dict()`` format), seats the learner, and lets the opponents play until
    it is the learner's turn. A deal in which the hand ends before the learner's
    first decision (only possible with tiny hands or a stop threshold) is replaced
    by a fresh deal; in match mode the finished hand's reward is added to the
    learner's first step instead. ``reset(seed=s)`` makes everything reproducible:
    the deal, the learner's seat and the seeds of the opponents built from specs.

    ## Episode End
    ``terminated`` when the hand ends (``episode="hand"``) or the match ends
    (``episode="match"``), whoever made the last move. ``truncated`` (and not ``terminated``)
    when one hand reaches ``max_steps`` moves (every player's moves count, as in the AEC
    env; default 10,000, ``c8env.episode.MAX_HAND_STEPS``).

    ## Info
    The same keys, with numeric values, after ``reset`` and every step: ``learner_seat``;
    ``skipped_deals`` (deals replaced at this episode's start, see Starting State; 0 mostly);
    about the hand that ended during the step, neutral values when none did
    (:meth:`c8env.episode.Episode.info`): ``hand_winner`` (-1: nobody), ``end_reason`` (code
    into ``c8env.engine.END_REASONS``, 0: no hand ended), ``scores`` (int64 array, the match
    totals per seat), and with ``episode="match"`` ``match_winner`` (-1 until the match is
    over, and for a tie); ``action_mask`` (bool[60], as :meth:`action_masks`); with
    ``illegal_action="penalty"``, ``illegal_action`` (-1, or the illegal action that ended
    the episode).

    ## Arguments
    - ``num_players`` (2-7), ``rules``, ``episode``, ``reward``, ``max_steps``,
      ``render_mode`` (``ansi`` or ``human``): as :func:`c8env.raw_env`.
    - ``version``: the env version (:mod:`c8env.versions`) whose observation and defaults it gives: 2, the
      newest, by default; each ``c8env/SingleAgent-vN`` id passes its own N.
    - ``opponents``: a spec for ``c8env.agents.load`` (``"random"``, ``"greedy"``,
      ``"expert:simulations=20"``, a shipped policy name, a ``.npz`` path) used for every
      opponent seat; an agent object (shared by every opponent seat); a list with one
      spec or agent per opponent, clockwise from the learner; or a callable
      ``(rng) -> any of those``, called at each reset with a seeded
      ``numpy.random.Generator`` (self-play pools). Agents built from specs get seeds
      drawn from the env's generator at each reset; policy files are loaded once.
    - ``learner_seat``: ``None`` (a random seat each episode, from the env's seeded
      generator) or a fixed seat.
    - ``illegal_action``: ``"penalty"`` (default, like ``c8env.env()``'s
      TerminateIllegalWrapper: the episode ends with ``illegal_reward`` and
      ``info["illegal_action"]`` names the action; what Gymnasium's and SB3's
      ``check_env`` and learners that cannot mask need) or ``"raise"`` (an illegal
      learner action raises :class:`c8env.IllegalActionError` and changes nothing). Either way,
      what is no action id at all (a bool, float, None, text, an int outside 0..59, an array of
      several values) is refused with :class:`c8env.actions.ActionTypeError` (a ``TypeError``) or
      :class:`c8env.actions.ActionRangeError` (a ``ValueError``) and changes nothing; numpy ints
      and 0-d integer arrays (what ``MaskablePPO.predict()`` returns) are accepted.

    ``gymnasium.make("c8env/SingleAgent-v2", ...)`` builds it after ``import c8env`` (or in one call:
    ``gymnasium.make("c8env:c8env/SingleAgent-v2", ...)``); ``c8env/SingleAgent-v1`` and ``-v0`` are the same
    class with ``version=1`` and ``0``, which keep what they were released with (245-entry observation; v0:
    ``max_steps`` 100,000 by default).

    An opponent that returns an illegal action raises :class:`c8env.IllegalActionError`
    naming the opponent, its seat and the move.

    ## Example
    >>> from c8env.envs.single_agent import SingleAgentEnv
    >>> env = SingleAgentEnv(num_players=2, opponents="greedy")
    >>> obs, info = env.reset(seed=0)
    >>> done = False
    >>> while not done:
    ...     legal = env.action_masks().nonzero()[0]
    ...     obs, reward, terminated, truncated, info = env.step(int(legal[0]))
    ...     done = terminated or truncated
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        num_players: int = 2,
        rules: str | dict | RuleSet = "standard",
        reward: str = "win",
        episode: str = "hand",
        opponents: Opponents = "random",
        learner_seat: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
        illegal_action: str = "penalty",
        illegal_reward: float = -1.0,
        version: int = LATEST.number,
    ) -> None:
        self.num_players = n = check_num_players(num_players)
        self.rules = load_rules(rules)
        check_deal_fits(self.rules, self.num_players)  # refused here, not at the first reset
        self.version = get_version(version)
        self._obs_size = self.version.obs_size
        self._episode = Episode(episode, reward, max_steps, self.version.max_steps)
        check_render_mode(render_mode)
        if learner_seat is not None and (
            not isinstance(learner_seat, (int, np.integer)) or isinstance(learner_seat, bool)
            or not 0 <= learner_seat < n
        ):
            raise ValueError(f"learner_seat={learner_seat!r} is invalid; allowed: None or an int from 0 to {n - 1}")
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action={illegal_action!r} is invalid; allowed: 'raise' or 'penalty'")
        self.episode = episode
        self.reward_type = reward
        self.max_steps = self._episode.max_steps
        self.render_mode = render_mode
        self.fixed_seat = None if learner_seat is None else int(learner_seat)
        self.illegal_action = illegal_action
        if not isinstance(illegal_reward, (int, float, np.integer, np.floating)) or isinstance(illegal_reward, bool) \
                or not np.isfinite(illegal_reward):
            raise ValueError(f"illegal_reward={illegal_reward!r} is invalid; allowed: a finite number")
        self.illegal_reward = float(illegal_reward)
        self.observation_space = vector_space(self._obs_size)
        self.action_space = spaces.Discrete(NUM_ACTIONS)

        self._policy_cache: dict[str, PolicyAgent] = {}
        self._opponent_source = opponents
        if callable(opponents) and not _is_agent(opponents):
            self._fixed_entries = None
        else:  # validate (and load policy files) now, so that a bad spec fails at construction
            self._fixed_entries = self._entries(opponents)
            for entry in self._fixed_entries:
                self._build(entry, seed=None)

        self.game: State | None = None
        """The engine state of the position (``None`` before the first ``reset``)."""
        self.learner_seat: int = 0 if self.fixed_seat is None else self.fixed_seat
        self.opponents: list[Any] = []  # by seat; None at the learner's seat
        self._labels: list[str] = []
        self._pending_reward = 0.0
        self._skipped = 0
        self._mask = np.zeros(NUM_ACTIONS, dtype=bool)  # the learner's, as of the last reset or step
        self._done = True

    # ----- opponents --------------------------------------------------------------------------------
    def _entries(self, value: Any) -> list[Any]:
        """One spec or agent per opponent (clockwise from the learner)."""
        count = self.num_players - 1
        if isinstance(value, (str, Path)) or _is_agent(value):
            return [value] * count
        if isinstance(value, Sequence):
            entries = list(value)
            if len(entries) != count:
                raise ValueError(
                    f"opponents has {len(entries)} entries but {self.num_players} players need {count} "
                    "(one spec or agent per opponent seat, clockwise from the learner)"
                )
            for entry in entries:
                if not (isinstance(entry, (str, Path)) or _is_agent(entry)):
                    raise ValueError(
                        f"opponent {entry!r} is invalid; allowed: an agent spec string, a .npz path, "
                        "or an object with act(observation) -> int"
                    )
            return entries
        raise ValueError(
            f"opponents={value!r} is invalid; allowed: an agent spec string, an object with "
            "act(observation) -> int, a list of those (one per opponent), or a callable (rng) -> any of those"
        )

    def _build(self, entry: Any, seed: int | None) -> Any:
        if _is_agent(entry):
            return entry
        key = str(entry)
        if key in self._policy_cache:
            return self._policy_cache[key]
        agent = load(entry, rules=self.rules, num_players=self.num_players, seed=seed)
        if isinstance(agent, PolicyAgent):  # deterministic: load the file once
            self._policy_cache[key] = agent
        return agent

    @staticmethod
    def _label(entry: Any) -> str:
        return repr(str(entry)) if isinstance(entry, (str, Path)) else type(entry).__name__

    def _seat_opponents(self, rng: np.random.Generator) -> None:
        if self._fixed_entries is not None:
            entries = self._fixed_entries
        else:
            pick_rng = np.random.default_rng(int(rng.integers(_SEED_BOUND)))
            entries = self._entries(self._opponent_source(pick_rng))
        seeds = rng.integers(_SEED_BOUND, size=len(entries))
        n, learner = self.num_players, self.learner_seat
        self.opponents = [None] * n
        self._labels = ["learner"] * n
        for k, (entry, seed) in enumerate(zip(entries, seeds, strict=True), start=1):
            seat = (learner + k) % n
            self.opponents[seat] = self._build(entry, int(seed))
            self._labels[seat] = self._label(entry)

    def _opponent_action(self, seat: int) -> int:
        # c8env's own agents read the state's public facts without encoding; any other agent gets a sealed dict
        return self.opponents[seat].act(observation_for(self.opponents[seat], self.game, seat))

    # ----- Gymnasium API ----------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        seed = check_seed(seed)
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options={options!r} is invalid; allowed: None or a dict with the key(s) {_RESET_OPTIONS}")
        options = options or {}
        unknown = sorted(map(str, set(options) - set(_RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; allowed: {', '.join(_RESET_OPTIONS)}")
        if "state" in options:  # checked before anything changes: a refused reset leaves the env as it was
            given = read_state(options["state"], self.rules, self.num_players, seed=0)
            if given.hand_over:
                raise ValueError("options['state'] has phase 'over'; give a position with a move to make")
        saved = (dict(vars(self)), dict(vars(self._episode)))
        try:
            return self._reset(seed, options)
        except ValueError:  # refused (a given position that ends before the learner moves): nothing changes
            vars(self).clear()
            vars(self).update(saved[0])
            vars(self._episode).clear()
            vars(self._episode).update(saved[1])
            raise

    def _reset(self, seed: int | None, options: dict) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        rng = self.np_random
        n = self.num_players
        self.learner_seat = int(rng.integers(n)) if self.fixed_seat is None else self.fixed_seat
        self._seat_opponents(rng)
        skipped = 0
        for _ in range(MAX_REDEALS):
            deal_seed = int(rng.integers(_SEED_BOUND))
            if "state" in options:
                self.game = State.from_dict(options["state"], rules=self.rules, seed=deal_seed)
                if self.game.num_players != n:
                    raise ValueError(f"options['state'] has {self.game.num_players} players but the env has {n}")
                if self.game.hand_over:
                    raise ValueError("options['state'] has phase 'over'; give a position with a move to make")
            else:
                self.game = State.new(n, self.rules, seed=deal_seed)
            self._episode.start(self.game)
            reward, _ = self._play_opponents(0.0)
            if not self._episode.done:
                break
            if "state" in options:
                raise ValueError(
                    f"options['state'] ends (or reaches max_steps) before the learner (seat {self.learner_seat}) "
                    "has a move; give a position where the learner acts before the hand is over"
                )
            skipped += 1
        else:
            raise ValueError(
                f"{MAX_REDEALS} deals in a row ended before the learner's first decision; check the rules "
                "(hand_size, stop_threshold) and max_steps"
            )
        self._done = False
        self._pending_reward = reward
        self._skipped = skipped
        if self.render_mode == "human":
            self.render()
        return encode_observation(self.game, self.learner_seat, self._obs_size), self._info(False)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._done:
            raise RuntimeError("step() called on a finished episode (or before reset()); call reset() first")
        action = self.game.check_action(action)  # no action id at all: refused, never penalised
        try:
            rewards = self._episode.step(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._done = True
            info = self._info(False)
            info["illegal_action"] = action
            return encode_observation(self.game, self.learner_seat, self._obs_size), self.illegal_reward, True, False, info
        reward = self._pending_reward
        self._pending_reward = 0.0
        hand_ended = rewards is not None
        if hand_ended:
            reward += rewards[self.learner_seat]
        reward, ended_later = self._play_opponents(reward)
        self._done = self._episode.done
        if self.render_mode == "human":
            self.render()
        return encode_observation(self.game, self.learner_seat, self._obs_size), reward, self._episode.terminated, \
            self._episode.truncated, self._info(hand_ended or ended_later)

    def _info(self, hand_ended: bool) -> dict[str, Any]:
        """The step's info (see the class docstring): the same keys at every step, numeric values. Computes the
        learner's mask once per step, for the info and :meth:`action_masks`."""
        self._mask = np.zeros(NUM_ACTIONS, dtype=bool) if self._done else \
            action_mask(self.game, self.learner_seat).astype(bool)
        info = {"learner_seat": self.learner_seat, "skipped_deals": self._skipped, **self._episode.info(hand_ended),
                "action_mask": self._mask.copy()}
        if self.illegal_action == "penalty":
            info["illegal_action"] = -1
        return info

    def _play_opponents(self, reward: float) -> tuple[float, bool]:
        """Let the opponents move until the learner's turn or the episode's end (terminated or truncated),
        adding the learner's reward of every hand that ends; returns the reward and whether a hand ended."""
        episode, state, learner = self._episode, self.game, self.learner_seat
        hand_ended = False
        while not episode.done and state.current_player != learner:
            seat = state.current_player
            try:
                rewards = episode.step(self._opponent_action(seat))
            except IllegalActionError as err:
                raise IllegalActionError(
                    f"opponent {self._labels[seat]} at seat {seat} returned an illegal action: {err}"
                ) from None
            if rewards is not None:
                reward += rewards[learner]
                hand_ended = True
        return reward, hand_ended

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array of 60 (all False once the episode is over): a copy of
        ``info["action_mask"]``."""
        return np.zeros(NUM_ACTIONS, dtype=bool) if self._done else self._mask.copy()

    def render(self) -> str | None:
        return render_output(self.render_mode, self._render_text)

    def _render_text(self) -> str:
        if self.game is None:
            raise RuntimeError("render() called before reset()")
        return f"learner: player_{self.learner_seat}\n{render_text(self.game)}"

    def close(self) -> None:
        pass


__all__ = ["GYMNASIUM_ID", "MAX_REDEALS", "SingleAgentEnv"]

#: Gymnasium id of :class:`SingleAgentEnv`'s newest version (:mod:`c8env.envs.registration`, which ``import c8env``
#: runs): ``gymnasium.make("c8env/SingleAgent-v2", ...)``, or ``gymnasium.make("c8env:c8env/SingleAgent-v2", ...)``
#: in one call. ``c8env/SingleAgent-v1`` and ``-v0`` keep what they were released with (:mod:`c8env.versions`).
GYMNASIUM_ID = f"c8env/SingleAgent-v{LATEST.number}"
register_gymnasium()  # done already unless something took the import hook away; registers nothing twice
