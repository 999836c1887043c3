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
together with the next episode's first observation; ``info["final_obs"]`` (float32[B, 245],
valid where ``info["_final_obs"]``) holds the finished episode's last observation and
``info["final_info"]`` its step info. Every info key ``k`` comes with a bool mask ``_k`` of the
games it holds for. ``info["action_mask"]`` (and :meth:`action_masks`) give the legal actions of
the observed player as bool[B, 60].

``gymnasium.make_vec("c8env/LearnerVector-v0", num_envs=64, opponents="greedy")`` and
``gymnasium.make_vec("c8env/SelfPlayVector-v0", num_envs=64)`` build them once this module is
imported (or ``"c8env.envs.vector_envs:c8env/LearnerVector-v0"`` in one call).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from c8env.actions import NUM_ACTIONS
from c8env.engine import check_seed
from c8env.envs.learner_games import LearnerGames
from c8env.envs.spaces import vector_space
from c8env.rules import RuleSet
from c8env.vector import VectorGames
from c8env.vector.kernels import END_REASONS


def _check_options(options: dict | None) -> None:
    if options:
        raise ValueError(f"options={options!r} is invalid; the batched envs take no reset options (None or {{}})")


def _masked(info: dict[str, Any], key: str, value: np.ndarray, where: np.ndarray) -> None:
    """Set ``info[key]`` and its Gymnasium mask ``info['_' + key]``."""
    info[key] = value
    info["_" + key] = where


def _actions(actions: Any, num_envs: int) -> np.ndarray:
    array = np.asarray(actions)
    if array.shape != (num_envs,) or array.dtype.kind not in "iu":
        raise ValueError(f"actions must be {num_envs} action ids (an int array of shape ({num_envs},)), "
                         f"got {array.dtype} {array.shape}")
    return array


class _BatchedVectorEnv(VectorEnv):
    """The spaces and metadata shared by both envs."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def _spaces(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.single_observation_space = vector_space()
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
    keys: ``learner_seat``, ``action_mask``; ``hand_winner`` (-1: nobody), ``end_reason``,
    ``scores`` and, at a match's end, ``match_winner`` (-1: tie) for the games where a hand ended;
    ``skipped_deals`` in a new episode's info where deals ended before the learner's first
    decision. ``final_obs`` is the learner's view of the finished game.
    """

    def __init__(self, num_envs: int = 16, num_players: int = 2, rules: str | dict | RuleSet = "standard",
                 reward: str = "win", episode: str = "hand", opponents: Any = "random",
                 learner_seat: int | None = None, max_steps: int | None = None) -> None:
        self.games = LearnerGames(num_envs, num_players, rules, episode, reward, max_steps, opponents, learner_seat)
        self._spaces(self.games.num_envs)
        self.num_players = self.games.num_players

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        _check_options(options)
        super().reset(seed=seed)
        self.games.reset(check_seed(seed))
        return self.games.observation.copy(), self._start_info(np.ones(self.num_envs, dtype=bool))

    def _start_info(self, where: np.ndarray) -> dict[str, Any]:
        """The info of the games' current episodes: the learner's seat and mask; ``skipped_deals`` of the
        ``where`` games (those that just began)."""
        games, every = self.games, np.ones(self.num_envs, dtype=bool)
        info: dict[str, Any] = {}
        _masked(info, "learner_seat", games.learner_seat.copy(), every)
        _masked(info, "action_mask", games.action_masks(), every)
        skipped = where & (games.skipped > 0)
        if skipped.any():
            _masked(info, "skipped_deals", games.skipped.copy(), skipped)
        return info

    def _add_results(self, info: dict[str, Any], where: np.ndarray, terminated: np.ndarray) -> None:
        """The results of the hands that ended in the step, for the ``where`` games (SingleAgentEnv's keys)."""
        res = self.games.results
        hand = where & res.hand_over
        if hand.any():
            _masked(info, "hand_winner", res.hand_winner.copy(), hand)
            _masked(info, "end_reason", np.array([END_REASONS[r] for r in res.end_reason], dtype=object), hand)
            _masked(info, "scores", res.scores.copy(), hand)
            match = hand & terminated
            if self.games.episode == "match" and match.any():
                _masked(info, "match_winner", res.match_winner.copy(), match)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = _actions(actions, self.num_envs)
        obs, reward, terminated, truncated = self.games.step(actions)
        ended = terminated | truncated
        info = self._start_info(ended)
        self._add_results(info, ~ended, terminated)
        if ended.any():
            final: dict[str, Any] = {}
            _masked(final, "learner_seat", self.games.final_seat.copy(), ended.copy())
            self._add_results(final, ended, terminated)
            _masked(info, "final_obs", self.games.final_observation.copy(), ended.copy())
            _masked(info, "final_info", final, ended.copy())
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
    ``final_obs`` is the finished game's view of its player to act. Arguments as :func:`c8env.raw_env`.
    """

    def __init__(self, num_envs: int = 16, num_players: int = 2, rules: str | dict | RuleSet = "standard",
                 reward: str = "win", episode: str = "hand", max_steps: int | None = None) -> None:
        self.games = VectorGames(num_envs, num_players, rules, episode, reward, max_steps)
        self._spaces(self.games.num_envs)
        self.num_players = self.games.num_players

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        _check_options(options)
        super().reset(seed=seed)
        seed = check_seed(seed)
        self.games.reset(int(np.random.SeedSequence().entropy) % 2**64 if seed is None else seed)
        info: dict[str, Any] = {}
        self._add_state(info)
        return self.games.observation.copy(), info

    def _add_state(self, info: dict[str, Any]) -> None:
        every = np.ones(self.num_envs, dtype=bool)
        _masked(info, "current_player", self.games.current_player.copy(), every)
        _masked(info, "action_mask", self.action_masks(), every)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = _actions(actions, self.num_envs)
        player = self.games.current_player.copy()
        rewards, terminated, truncated = self.games.step(actions)
        every = np.ones(self.num_envs, dtype=bool)
        info: dict[str, Any] = {}
        _masked(info, "player", player, every)
        _masked(info, "rewards", rewards.copy(), every)
        self._add_state(info)
        ended = terminated | truncated
        if ended.any():
            _masked(info, "final_obs", self.games.final_observation.copy(), ended)
        own = rewards[np.arange(self.num_envs), player]
        return self.games.observation.copy(), own, terminated.copy(), truncated.copy(), info

    def action_masks(self) -> np.ndarray:
        """The legal actions of each game's player to act (bool[B, 60])."""
        return self.games.action_mask.astype(bool)


__all__ = ["LEARNER_ID", "LearnerVectorEnv", "SELF_PLAY_ID", "SelfPlayVectorEnv"]

#: Gymnasium ids registered when this module is imported (``gymnasium.make_vec(id, num_envs=..., ...)``).
LEARNER_ID, SELF_PLAY_ID = "c8env/LearnerVector-v0", "c8env/SelfPlayVector-v0"
if LEARNER_ID not in gymnasium.registry:
    gymnasium.register(id=LEARNER_ID, entry_point="c8env.envs.single_agent:SingleAgentEnv",
                       vector_entry_point="c8env.envs.vector_envs:LearnerVectorEnv")
if SELF_PLAY_ID not in gymnasium.registry:
    gymnasium.register(id=SELF_PLAY_ID, vector_entry_point="c8env.envs.vector_envs:SelfPlayVectorEnv")
