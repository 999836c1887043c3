"""A local best response to ``greedy``: the guided search, every sample of which explains the whole hand's
greedy moves (``c8env.agents.best_response:versus_greedy``).

``greedy`` is a fixed policy, so a best response to it knows it: :class:`GreedyBestResponse` is the ``expert``
search (:class:`c8env.agents.expert.ExpertAgent`: greedy plays the other seats in its rollouts) whose samples of the
hidden cards are deals in which greedy would have made every move it saw the other seats make this hand, each
hand rebuilt backward through its plays and draws (:mod:`c8env.agents.search_explained`), and read each seat's
last voluntary draw as greedy's (none of the cards he then held fitted). Greedy's policy drives both its inference
and its play-outs: a local best response, as poker's LBR (Lisý and Bowling, 2017) is one. The harness shows it every
move (:meth:`GreedyBestResponse.watch`): :func:`c8env.episode.play_watched`, which ``c8env eval`` uses.

    c8env eval c8env.agents.best_response:versus_greedy greedy --deals 100

:func:`versus_greedy` is the one docs/exploitability.md measures (2 players, standard rules): ``iter6-standard-2p``
guides it, ``rollout6-standard-2p`` plays its moves in the rollouts, :data:`SIMULATIONS` samples a decision,
:data:`TRIES` deals per seat. It needs numba (the ``fast`` extra).
"""

from __future__ import annotations

from typing import Any

from c8env.actions import ANNOUNCE
from c8env.agents.expert import ExpertAgent
from c8env.agents.policy import POLICY_DIR, PolicyAgent
from c8env.cards import RANK_MASKS, RANKS, SUIT_MASKS, SUITS
from c8env.engine import State
from c8env.observation import StateObservation, check_observation
from c8env.rules import RuleSet, load_rules

#: :func:`versus_greedy`'s budget: samples a decision, the guide's candidates searched, deals (then swaps) per seat.
SIMULATIONS, TOP, TRIES = 100, 4, 100
#: :func:`versus_greedy`'s guide and rollout networks (2 players, standard rules).
GUIDE, ROLLOUTS = "iter6-standard-2p", "rollout6-standard-2p"


class HandMoves:
    """The moves of the current hand a watching agent was shown: each the position it was made in (a copy), the
    mover's seat, the move and the cards it drew. Moves of an earlier hand are forgotten."""

    def __init__(self) -> None:
        self.moves: list[tuple[State, int, int, int]] = []
        self._hand: tuple[int, int] | None = None  # the hand they belong to: (its deal's entropy, hands played)

    def watch(self, before: State, action: int, after: State) -> None:
        """The player to act in ``before`` made ``action``, leading to ``after``."""
        self._start_hand(before)
        mover = before.current_player
        self.moves.append((before.copy(), mover, action, max(0, after.sizes[mover] - before.sizes[mover])))

    def seen_by(self, state: State, seat: int) -> list[tuple[State, int, int, int]]:
        """The other seats' moves of ``state``'s hand, each mover numbered from ``seat`` (the search's numbering)."""
        self._start_hand(state)
        n = state.num_players
        return [(position, (mover - seat) % n, action, drawn)
                for position, mover, action, drawn in self.moves if mover != seat]

    def _start_hand(self, state: State) -> None:
        hand = (state.generator_key[0], state.hands_played)
        if hand != self._hand:
            self.moves, self._hand = [], hand


def last_draw_requirements(requirements: dict[int, list[tuple[int, int]]], data: dict,
                           sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
    """``requirements`` (:meth:`ExpertAgent._requirements`'s) with each opponent's last voluntary draw read as a
    greedy player's: none of the cards he then held fitted, so as many of his cards as he has held since lie outside
    the suits and ranks it names (a constraint before his voids, his last)."""
    for seat, rules in requirements.items():
        record = data["last_draws"][seat]
        if record is not None:
            fitted = sum(SUIT_MASKS[SUITS.index(suit)] for suit in record["suits"])
            fitted |= sum(RANK_MASKS[RANKS.index(rank)] for rank in record["ranks"])
            rules.insert(len(rules) - 1, (fitted | rules[-1][0], min(record["held"], sizes[seat - 1])))
    return requirements


class GreedyBestResponse(ExpertAgent):
    """The ``expert`` search whose samples explain every greedy move of the hand it was shown (see the module
    docstring): a local best response to ``greedy``."""

    def __init__(self, rules: RuleSet, num_players: int, tries: int = TRIES, **options: Any) -> None:
        """``tries``: deals, then swaps of one card, per seat and sample; ``options``: the ``expert``'s
        (:class:`~c8env.agents.expert.ExpertAgent`; the search runs compiled)."""
        super().__init__(rules, num_players, **options)
        if not self.compiled:
            raise ValueError("GreedyBestResponse runs in the compiled search only; it needs numba (pip install "
                             "c8env[fast]) and compiled=None or True")
        if not isinstance(tries, int) or isinstance(tries, bool) or tries < 1:
            raise ValueError(f"GreedyBestResponse tries={tries!r} is invalid; allowed: an int >= 1")
        self.tries = tries
        self.hand_moves = HandMoves()

    #: Harnesses show it every move (:func:`c8env.episode.play_watched`).
    watching = True

    def watch(self, before: State, action: int, after: State) -> None:
        """A move of the hand: the player to act in ``before`` made ``action``, leading to ``after``."""
        self.hand_moves.watch(before, action, after)

    def act(self, observation: Any) -> int:
        check_observation(observation, "GreedyBestResponse")
        if not isinstance(observation, StateObservation):
            raise ValueError("GreedyBestResponse reads the moves that watch() shows it and needs the "
                             "StateObservation of c8env's harnesses (c8env eval, c8env.episode.play_watched), not a "
                             "plain observation dict")
        mask = observation["action_mask"]
        if mask.any() and not mask[ANNOUNCE]:
            moves = self.hand_moves.seen_by(observation.state, observation.seat)
            self.compiled_kernel().observe_hand(moves, self.tries)
        return super().act(observation)

    def compiled_kernel(self) -> Any:
        """The :class:`c8env.agents.search_explained.ExplainedSearch` that runs this search, built at the first call."""
        if self._kernel is None:
            from c8env.agents.search_explained import ExplainedSearch

            self._kernel = ExplainedSearch(self.rules, self.num_players, self.reward, self.rollout_network())
        return self._kernel

    def _requirements(self, data: dict, sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
        return last_draw_requirements(super()._requirements(data, sizes), data, sizes)


def versus_greedy(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None) -> GreedyBestResponse:
    """The local best response to ``greedy`` that docs/exploitability.md measures: :data:`GUIDE` guides it,
    :data:`ROLLOUTS` plays its rollouts, :data:`SIMULATIONS` samples and :data:`TOP` candidates a decision,
    :data:`TRIES` deals per seat. 2 players, standard rules (its networks'); anything else raises ``ValueError``."""
    ruleset = load_rules(rules)
    standard = ruleset == load_rules("standard")
    if num_players != 2 or not standard:
        raise ValueError(f"versus_greedy plays 2 players under the standard rules (its networks'); got "
                         f"num_players={num_players}" + ("" if standard else " and other rules"))
    return GreedyBestResponse(ruleset, 2, tries=TRIES, simulations=SIMULATIONS, top=TOP, seed=seed,
                              policy=PolicyAgent(POLICY_DIR / f"{GUIDE}.npz"),
                              rollouts=PolicyAgent(POLICY_DIR / f"{ROLLOUTS}.npz"))


__all__ = ["GUIDE", "ROLLOUTS", "SIMULATIONS", "TOP", "TRIES", "GreedyBestResponse", "HandMoves",
           "last_draw_requirements", "versus_greedy"]
