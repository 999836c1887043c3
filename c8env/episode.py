"""Episodes and hands: the one place that plays a hand, ends it, scores it and continues a match.

- :func:`play_hand` plays the hand of a state to its end with a move chooser, cut off
  after :data:`MAX_HAND_STEPS` moves. Evaluation, search rollouts, demonstrations,
  terminal play and the demo all play hands through it.
- :class:`Episode` is what the environments step: one hand (``episode="hand"``) or
  hands until the match ends (``episode="match"``), rewards at each hand's end
  (:func:`hand_rewards`), truncation after ``max_steps`` moves of one hand (default
  :data:`MAX_HAND_STEPS`, the cap of every tool too), and the info of the last finished
  hand (:meth:`Episode.info`: the same numeric keys at every step). The PettingZoo env
  and ``SingleAgentEnv`` both step an :class:`Episode`, so these rules exist once.

NumPy only (no gymnasium, no pettingzoo).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from c8env.engine import END_REASONS, OVER, State

#: Moves after which a hand is cut off unfinished: by :func:`play_hand` (evaluation, search, the tools) and, as
#: the default ``max_steps``, by every env (``crazy_eights_v1``, ``SingleAgent-v1``, the ``-v1`` vector envs), which
#: then truncate. Under the standard rules a player may draw at will and the discard pile is reshuffled into the
#: stock, so a hand can be stalled for ever (a policy that always draws does it); uniformly random 2-player play
#: averages about 900 moves a hand.
MAX_HAND_STEPS = 10_000
#: Moves of a search rollout in which a trained network plays the searcher's turns (``expert:rollouts=policy``);
#: greedy plays them after, so that a network that stalls (draws, or passes eights round, for ever) cannot run
#: every rollout to the cut-off.
POLICY_ROLLOUT_STEPS = 500
#: Default ``max_steps`` of the environments: moves of one hand before every agent is truncated. The one cap,
#: :data:`MAX_HAND_STEPS` (this name stays for code that imports it).
DEFAULT_MAX_STEPS = MAX_HAND_STEPS
#: Default ``max_steps`` of the ``v0`` envs (``crazy_eights_v0``, the ``-v0`` Gymnasium ids), kept to reproduce
#: runs made with them.
V0_MAX_STEPS = 100_000
EPISODES = ("hand", "match")
REWARDS = ("win", "points")


def play_hand(state: State, choose: Callable[[State], int], max_steps: int = MAX_HAND_STEPS,
              on_move: Callable[[State, int, int], None] | None = None) -> int:
    """Play the hand of ``state`` (mutated) until it ends or ``max_steps`` moves were made.

    ``choose(state)`` returns the move of the player to act; ``on_move(state, seat, action)``,
    if given, is called after each move. Returns the number of moves made; the hand was
    cut off when ``state.hand_over`` is still false. An illegal move raises
    :class:`c8env.IllegalActionError` with the state unchanged.
    """
    steps = 0
    while not state.hand_over and steps < max_steps:
        seat = state.current_player
        action = choose(state)
        state.apply(action)
        steps += 1
        if on_move is not None:
            on_move(state, seat, action)
    return steps


def play_watched(state: State, choose: Callable[[State], int], agents: Sequence[object],
                 max_steps: int = MAX_HAND_STEPS, on_move: Callable[[State, int, int], None] | None = None) -> int:
    """:func:`play_hand`, each of ``agents`` that is ``watching`` (once each) shown every move through its
    ``watch(before, action, after)`` after ``on_move`` (e.g. :class:`c8env.agents.best_response.GreedyBestResponse`,
    which reads the other seats' moves)."""
    watchers = list({id(agent): agent for agent in agents if getattr(agent, "watching", False)}.values())
    if not watchers:
        return play_hand(state, choose, max_steps, on_move)
    before: list[State] = []

    def choosing(position: State) -> int:
        before[:] = [position.copy()]
        return choose(position)

    def moved(after: State, seat: int, action: int) -> None:
        if on_move is not None:
            on_move(after, seat, action)
        for watcher in watchers:
            watcher.watch(before[0], action, after)

    return play_hand(state, choosing, max_steps, moved)


def hand_rewards(state: State, reward: str) -> list[float]:
    """Every seat's reward for a finished hand. ``"win"``: +1 to the winner, -1/(n-1) to the
    others, all 0 when nobody won; ``"points"``: the zero-sum points transfers."""
    if reward == "points":
        return [float(x) for x in state.hand_transfers()]
    n = state.num_players
    if state.winner is None:
        return [0.0] * n
    out = [-1.0 / (n - 1)] * n
    out[state.winner] = 1.0
    return out


def read_state(data: Any, rules: Any, num_players: int, seed: int) -> State:
    """The position of ``reset(options={"state": data})``: the player count first (the env's), then
    :meth:`State.from_dict` under the env's rules (a ``rules`` key that differs is refused)."""
    if isinstance(data, Mapping) and isinstance(data.get("hands"), (list, tuple)):
        given = data.get("num_players", len(data["hands"]))
        if type(given) is int and given != num_players:
            raise ValueError(f"options['state'] has {given} players but the env has {num_players}")
    state = State.from_dict(data, rules=rules, seed=seed)
    if state.num_players != num_players:
        raise ValueError(f"options['state'] has {state.num_players} players but the env has {num_players}")
    return state


def check_episode_args(episode: str, reward: str, max_steps: int | None, default: int = DEFAULT_MAX_STEPS) -> int:
    """Validate the episode arguments; returns ``max_steps`` with its default (``default``) applied."""
    if episode not in EPISODES:
        raise ValueError(f"episode={episode!r} is invalid; allowed: 'hand' or 'match'")
    if reward not in REWARDS:
        raise ValueError(f"reward={reward!r} is invalid; allowed: 'win' or 'points'")
    if max_steps is None:
        max_steps = default
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
        raise ValueError(f"max_steps={max_steps!r} is invalid; allowed: None or an int >= 1")
    return max_steps


class Episode:
    """An episode over a state: one hand, or hands until the match ends.

    :meth:`start` takes the first position, :meth:`step` applies one move of the player to
    act. A hand's end hands out :func:`hand_rewards` and sets :attr:`result` (the info of
    that hand: ``hand_winner``, ``end_reason``, ``scores``, and ``match_winner`` when the
    match is over, as the engine gives them); in a match the next hand is dealt at once.
    :meth:`info` is what the envs report of it, numeric. :attr:`terminated` is set when the
    episode ends, :attr:`truncated` when one hand reaches ``max_steps`` moves (default
    :data:`MAX_HAND_STEPS`, or ``default_max_steps``).
    """

    def __init__(self, episode: str = "hand", reward: str = "win", max_steps: int | None = None,
                 default_max_steps: int = DEFAULT_MAX_STEPS) -> None:
        self.max_steps = check_episode_args(episode, reward, max_steps, default_max_steps)
        self.episode = episode
        self.reward = reward
        self.state: State | None = None
        self.hand_steps = 0
        self.terminated = False
        self.truncated = False
        self.result: dict[str, Any] = {}

    @property
    def done(self) -> bool:
        """Has the episode ended (terminated or truncated)?"""
        return self.terminated or self.truncated

    def start(self, state: State) -> list[float] | None:
        """Begin the episode at ``state``; each seat's reward if that hand is already over, else None."""
        self.state = state
        self.hand_steps = 0
        self.terminated = self.truncated = False
        self.result = {}
        return self._finish_hand() if state.phase is OVER else None

    def step(self, action: int) -> list[float] | None:
        """Apply the move of the player to act; each seat's reward if it ended a hand, else None."""
        if self.done:
            raise RuntimeError("Episode.step() after the episode ended; start a new one")
        state = self.state
        state.apply(action)
        self.hand_steps += 1
        if state.phase is OVER:
            return self._finish_hand()
        if self.hand_steps >= self.max_steps:
            self.truncated = True
        return None

    def info(self, hand_ended: bool = True) -> dict[str, Any]:
        """The envs' info about hands: numeric values under the same keys at every step, from the start on.

        With ``hand_ended`` the last hand that ended in this episode (:attr:`result`), else (or before
        any hand ended) neutral values: ``hand_winner`` the seat that won it (-1: nobody, or no hand
        ended), ``end_reason`` the code of why it ended (:data:`c8env.engine.END_REASONS`; 0 ``none``:
        no hand ended, or a position given already over, whose reason is unknown), ``scores`` the match
        totals per seat (int64 array), and in match mode
        ``match_winner`` (-1 until the match is over, and when it ends in a tie).
        """
        result = self.result if hand_ended else {}
        winner = result.get("hand_winner")
        info: dict[str, Any] = {
            "hand_winner": -1 if winner is None else int(winner),
            "end_reason": END_REASONS.index(result["end_reason"] or "none") if result else 0,
            "scores": np.array(result["scores"] if result else self.state.scores, dtype=np.int64),
        }
        if self.episode == "match":
            match_winner = result.get("match_winner")
            info["match_winner"] = -1 if match_winner is None else int(match_winner)
        return info

    def _finish_hand(self) -> list[float]:
        """Score the finished hand, then end the episode or deal the match's next hand."""
        state = self.state
        rewards = hand_rewards(state, self.reward)
        self.result = {"hand_winner": state.winner, "end_reason": state.end_reason, "scores": list(state.scores)}
        if self.episode == "match" and not state.match_over:
            state.next_hand()
            self.hand_steps = 0
        else:
            self.terminated = True
            if self.episode == "match":
                self.result["match_winner"] = state.match_winner
        return rewards


__all__ = ["DEFAULT_MAX_STEPS", "EPISODES", "Episode", "MAX_HAND_STEPS", "POLICY_ROLLOUT_STEPS", "REWARDS",
           "V0_MAX_STEPS", "check_episode_args", "hand_rewards", "play_hand", "play_watched",
           "read_state"]
