"""Gymnasium vector envs on the batched engine: one learner seat per game, or self-play of every seat.

:class:`LearnerVectorEnv` is ``num_envs`` copies of :class:`c8env.envs.single_agent.SingleAgentEnv`
stepped as one batch (:class:`c8env.envs.learner_games.LearnerGames`): built-in opponents
(``random``, ``greedy``, NumPy policy files) move for every game in one call per opponent
move. With the same seeds it plays the episodes of Gymnasium's ``SyncVectorEnv`` over
``SingleAgentEnv`` move for move (the same seats, deals and opponents' moves).

:class:`SelfPlayVectorEnv` lets the caller play every seat of ``num_envs`` games
(:class:`c8env.vector.VectorGames`): each observation is the view of the game's player to
act, ``info["current_player"]`` names it.

Both follow Gymnasium 1.2's vector conventions with *same-step* autoreset
(``metadata["autoreset_mode"]``): a step that ends an episode returns its reward and flags
together with the next episode's first observation (float32[B, 401]; [B, 245] with ``version`` 0 or 1, the
observation of that env version, :mod:`c8env.versions`); ``info["final_obs"]`` (the same shape,
valid where ``info["_final_obs"]``) holds the finished episode's last observation and
(``LearnerVectorEnv``) ``info["final_info"]`` its step info. Every info key ``k`` comes with a
bool mask ``_k`` of the games it holds for. Every other key is there after ``reset`` and every
step, for every game, as a numeric array (its mask all True): the hand results with neutral
values where no hand ended (``hand_winner`` -1, ``end_reason`` 0: codes into
``c8env.engine.END_REASONS``), ``scores`` int64[B, num_players], ``action_mask`` (also
:meth:`action_masks`) the legal actions of the observed player as bool[B, 60].

``gymnasium.make_vec("c8env/LearnerVector-v2", num_envs=64, opponents="greedy")`` and
``gymnasium.make_vec("c8env/SelfPlayVector-v2", num_envs=64)`` build them after ``import c8env``
(or ``"c8env:c8env/LearnerVector-v2"`` in one call); the ``-v1`` and ``-v0`` ids are the same classes with
``version=1`` and ``0``, which keep what they were released with (245-entry observation; v0: ``max_steps``
100,000 by default).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from c8env.actions import NUM_ACTIONS
from c8env.engine import check_seed
from c8env.envs.learner_games import LearnerGames
from c8env.envs.registration import register_gymnasium
from c8env.envs.spaces import vector_space
from c8env.rules import RuleSet
from c8env.vector import VectorGames
from c8env.vector.games import check_ids
from c8env.vector.kernels import HandResults
from c8env.versions import LATEST, get_version


def _check_options(options: dict | None) -> None:
    if options is not None and (not isinstance(options, dict) or options):
        raise ValueError(f"options={options!r} is invalid; the batched envs take no reset options (None or {{}})")


def _masked(info: dict[str, Any], key: str, value: np.ndarray, where: np.ndarray) -> None:
    """Set ``info[key]`` and its Gymnasium mask ``info['_' + key]``."""
    info[key] = value
    info["_" + key] = where


def _hand_fields(info: dict[str, Any], results: HandResults, hand: np.ndarray, scores: np.ndarray,
                 match_over: np.ndarray | None, where: np.ndarray) -> None:
    """The hand keys of ``SingleAgentEnv``'s info for a batch: the results of the ``hand`` games (a hand ended in
    them), neutral values for the others; ``scores`` the match totals; ``match_winner`` (match mode: ``match_over``
    not None) the results' where the match ended, else -1. Masks: ``where``."""
    _masked(info, "hand_winner", np.where(hand, results.hand_winner, -1), where)
    _masked(info, "end_reason", np.where(hand, results.end_reason, 0), where)
    _masked(info, "scores", scores.copy(), where)
    if match_over is not None:
        _masked(info, "match_winner", np.where(hand & match_over, results.match_winner, -1), where)


class _BatchedVectorEnv(VectorEnv):
    """The spaces and metadata shared by both envs."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def _spaces(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.single_observation_space = vector_space(self.version.obs_size)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)


class LearnerVectorEnv(_BatchedVectorEnv):
    """``num_envs`` single-agent games against built-in opponents, stepped as one batch.

    Arguments as :class:`c8env.envs.single_agent.SingleAgentEnv` (``num_players``, ``rules``, ``reward``,
    ``episode``, ``max_steps``, ``learner_seat``, ``opponents``), except that opponents must be
    batchable: ``"random"``, ``"greedy"`` or a NumPy policy (``.npz`` path, shipped name,
    :class:`c8env.agents.PolicyAgent`), one for all seats, a list (one per opponent seat, clockwise
    from the learner), or a callable ``(rng) -> any of those`` called at each episode's start.
    Illegal learner actions raise :class:`c8env.IllegalActionError` (no penalty mode: mask them).

    ``reset(seed=s)`` seeds game ``b`` with ``s + b`` (as ``SyncVectorEnv`` seeds its envs). The
    reward of game ``b`` is its learner's, summed since the learner's previous decision. Info
    keys, those of ``SingleAgentEnv`` (``illegal_action="raise"``) as ``SyncVectorEnv`` batches them,
    at every step for every game: ``learner_seat``, ``skipped_deals`` (deals replaced at the
    episode's start because they ended before the learner's first decision), ``hand_winner`` (-1:
    nobody, or no hand ended in the step), ``end_reason`` (code; 0: no hand ended), ``scores``
    (int64[B, num_players]), ``match_winner`` (match mode; -1 but where a match ended, and for a
    tie), ``action_mask``. A game whose episode ended has its new episode's values there, and the
    finished one's in ``final_info``; ``final_obs`` is the learner's view of the finished game.
    """

    def __init__(self, num_envs: int = 16, num_players: int = 2, rules: str | dict | RuleSet = "standard",
                 reward: str = "win", episode: str = "hand", opponents: Any = "random",
                 learner_seat: int | None = None, max_steps: int | None = None, version: int = LATEST.number) -> None:
        self.games = LearnerGames(num_envs, num_players, rules, episode, reward, max_steps, opponents, learner_seat,
                                  version)
        self.version = self.games.version
        self._spaces(self.games.num_envs)
        self.num_players = self.games.num_players

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        _check_options(options)
        seed = check_seed(seed)
        self.games.reset(seed)
        super().reset(seed=seed)  # after the games accept the seed: a refused reset changes nothing
        return self.games.observation.copy(), self._start_info()

    def _start_info(self, where: np.ndarray | None = None) -> dict[str, Any]:
        """The info of the games' current episodes, with the results of the hands that ended in the step in the
        ``where`` games (None: no hand ended; a game's new episode has none)."""
        games, every = self.games, np.ones(self.num_envs, dtype=bool)
        info: dict[str, Any] = {}
        _masked(info, "learner_seat", games.learner_seat.copy(), every)
        _masked(info, "skipped_deals", games.skipped.copy(), every)
        hand = np.zeros(self.num_envs, dtype=bool) if where is None else where & games.results.hand_over
        match_over = np.zeros(self.num_envs, dtype=bool) if games.episode == "match" else None
        _hand_fields(info, games.results, hand, games.games.scores, match_over, every)
        _masked(info, "action_mask", games.action_masks(), every)
        return info

    def _final_info(self, ended: np.ndarray, terminated: np.ndarray) -> dict[str, Any]:
        """The last step info of the episodes that ended (valid where ``ended``), as ``SingleAgentEnv`` gives it."""
        games = self.games
        final: dict[str, Any] = {}
        _masked(final, "learner_seat", games.final_seat.copy(), ended.copy())
        _masked(final, "skipped_deals", games.final_skipped.copy(), ended.copy())
        match_over = terminated if games.episode == "match" else None
        _hand_fields(final, games.results, ended & games.results.hand_over, games.final_scores, match_over,
                     ended.copy())
        _masked(final, "action_mask", np.zeros((self.num_envs, NUM_ACTIONS), dtype=bool), ended.copy())
        return final

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = check_ids(actions, self.num_envs, "actions")
        obs, reward, terminated, truncated = self.games.step(actions)
        ended = terminated | truncated
        info = self._start_info(~ended)
        if ended.any():
            _masked(info, "final_obs", self.games.final_observation.copy(), ended.copy())
            _masked(info, "final_info", self._final_info(ended, terminated), ended.copy())
        return obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in each game (bool[B, 60])."""
        return self.games.action_masks()


class SelfPlayVectorEnv(_BatchedVectorEnv):
    """``num_envs`` games whose every seat the caller plays; each observation is the player to act's view.

    The reward of game ``b`` is that of the player who made the step's move (its hand reward when the
    move ends a hand, else 0); ``info["rewards"]`` (float64[B, num_players]) has every seat's, as the
    other seats are also paid when a hand ends. ``info["player"]`` is the seat that moved,
    ``info["current_player"]`` the seat to act next (the observation's). ``reset(seed=s)`` deals game
    ``b``'s ``k``-th episode ``State.new(num_players, rules, seed=derive_seed(s, b, k))``.
    ``final_obs`` is the finished game's view of its player to act. Arguments as :func:`c8env.raw_env`;
    ``threads``: those the games are stepped on (:class:`c8env.vector.VectorGames`; the same games for any number).

    Info keys after ``reset`` and every step, for every game: ``player`` (-1 after ``reset``),
    ``rewards``, ``current_player``, ``action_mask``, and the step's hand as ``SingleAgentEnv`` gives it:
    ``hand_winner`` (-1: nobody, or no hand ended), ``end_reason`` (code; 0: no hand ended),
    ``scores`` (int64[B, num_players]: the match totals, those the finished hand left where one
    ended), ``match_winner`` (match mode; -1 but where a match ended, and for a tie).
    """

    def __init__(self, num_envs: int = 16, num_players: int = 2, rules: str | dict | RuleSet = "standard",
                 reward: str = "win", episode: str = "hand", max_steps: int | None = None, threads: int = 1,
                 version: int = LATEST.number) -> None:
        self.version = get_version(version)
        self.games = VectorGames(num_envs, num_players, rules, episode, reward,
                                 self.version.max_steps if max_steps is None else max_steps, threads=threads)
        self._spaces(self.games.num_envs)
        self.num_players = self.games.num_players

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        _check_options(options)
        seed = check_seed(seed)
        self.games.reset(int(np.random.SeedSequence().entropy) % 2**64 if seed is None else seed)
        super().reset(seed=seed)  # after the games accept the seed: a refused reset changes nothing
        every = np.ones(self.num_envs, dtype=bool)
        info: dict[str, Any] = {}
        _masked(info, "player", np.full(self.num_envs, -1, dtype=np.int64), every)
        _masked(info, "rewards", np.zeros((self.num_envs, self.num_players), dtype=np.float64), every)
        self._add_state(info, ~every, ~every)
        return self._observed(self.games.observation), info

    def _observed(self, observation: np.ndarray) -> np.ndarray:
        """The version's entries of the batched engine's observations (float32[B, 401]), as a fresh array."""
        return observation[:, :self.version.obs_size].copy()

    def _add_state(self, info: dict[str, Any], hand: np.ndarray, terminated: np.ndarray) -> None:
        """The player to act and his mask, and the step's hand results where ``hand`` (a hand ended)."""
        every, games = np.ones(self.num_envs, dtype=bool), self.games
        _masked(info, "current_player", games.current_player.copy(), every)
        res = games.results
        scores = np.where(hand[:, None], res.scores, games.games.scores)  # a finished game's, not its next deal's
        _hand_fields(info, res, hand, scores, terminated if games.episode == "match" else None, every)
        _masked(info, "action_mask", self.action_masks(), every)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = check_ids(actions, self.num_envs, "actions")
        player = self.games.current_player.copy()
        rewards, terminated, truncated = self.games.step(actions)
        every = np.ones(self.num_envs, dtype=bool)
        info: dict[str, Any] = {}
        _masked(info, "player", player, every)
        _masked(info, "rewards", rewards.copy(), every)
        self._add_state(info, self.games.results.hand_over.copy(), terminated)
        ended = terminated | truncated
        if ended.any():
            _masked(info, "final_obs", self.games.final_observation.copy(), ended)
        own = rewards[np.arange(self.num_envs), player]
        return self.games.observation.copy(), own, terminated.copy(), truncated.copy(), info

    def action_masks(self) -> np.ndarray:
        """The legal actions of each game's player to act (bool[B, 60])."""
        return self.games.action_mask.astype(bool)


__all__ = ["LEARNER_ID", "LearnerVectorEnv", "SELF_PLAY_ID", "SelfPlayVectorEnv"]

#: Gymnasium ids of the newest version (``gymnasium.make_vec(id, num_envs=..., ...)``; :mod:`c8env.envs.registration`,
#: which ``import c8env`` runs). Their ``-v1`` and ``-v0`` keep what they were released with (:mod:`c8env.versions`).
LEARNER_ID, SELF_PLAY_ID = f"c8env/LearnerVector-v{LATEST.number}", f"c8env/SelfPlayVector-v{LATEST.number}"
register_gymnasium()  # done already unless something took the import hook away; registers nothing twice
