"""The demonstrator of ``pretrain_oracle``: an honest player's moves, valued by a search that sees the other hands.

A search that samples the hidden cards uniformly among the deals consistent with the public record values its
moves under that belief, not under the hands the opponents hold given how they played. :class:`OracleSearch`
plays its guide network's favourite move (chosen from the observation alone, so the positions recorded are an
honest player's) and values the guide's candidates by the search's rollouts on the other players' true hands,
only the stock's order sampled. One decision's values are those of one deal; over many decisions a network
fitted to them learns each move's value under the hidden hands' true distribution given what the player saw
(oracle guidance, as in PerfectDou, for the targets alone: the network still sees only its observation).

A hand that stalls stalls in every sample too, as the samples hold the true hands: each player searches his
first :data:`ORACLE_DECISIONS` decisions of a hand, and none after a search whose rollouts were all cut off
(every mean 0, which a finished hand's win reward never is); the others are played unsearched.
"""

from __future__ import annotations

from c8env.actions import ANNOUNCE
from c8env.agents.expert import ExpertAgent
from c8env.cards import ALL_CARDS_MASK
from c8env.observation import StateObservation
from training.research.expert import ResearchExpert

#: Decisions of a hand searched by one player (about 4 times a hand's usual count at 4 players).
ORACLE_DECISIONS = 150


class OracleSearch(ExpertAgent):
    """A guided ``expert`` whose samples keep the other players' true hands, and which plays its guide's favourite."""

    _hands: dict[int, int]
    _decisions: int

    @classmethod
    def from_expert(cls, expert: ExpertAgent) -> OracleSearch:
        """The oracle of a guided expert (its options, guide and generator)."""
        if expert.policy is None:
            raise ValueError("pretrain_oracle plays the guide's favourite: the expert needs policy=<name or .npz path>")
        research = isinstance(expert, ResearchExpert) and (expert.belief is not None or expert.explain_hand > 0)
        if research or expert.rules.num_decks(expert.num_players) != 1:
            raise ValueError("pretrain_oracle pins the other hands by card sets: no belief= or explain_hand=, one deck")
        oracle = cls.__new__(cls)
        oracle.__dict__.update(expert.__dict__, _decisions=0)
        return oracle

    def act(self, observation: StateObservation) -> int:
        """The guide's favourite legal move; :attr:`last_search` holds the searched moves' values on the true hands
        (None past the hand's first :data:`ORACLE_DECISIONS` decisions)."""
        if not isinstance(observation, StateObservation):
            raise TypeError("OracleSearch.act needs a StateObservation: it reads the other hands from the state")
        self._decisions += 1
        if self._decisions <= ORACLE_DECISIONS:
            state, seat = observation.state, observation.seat
            n = state.num_players
            self._hands = {k: state.held_cards((seat + k) % n)[0] for k in range(1, n)}
            super().act(observation)
            if self.last_search is not None and not self.last_search[1].any():  # every rollout cut off
                self._decisions = ORACLE_DECISIONS
        else:
            self.last_search = None
        legal = observation.legal_actions()
        if ANNOUNCE in legal:
            return ANNOUNCE
        logits = self.policy.logits(observation["observation"])
        return legal[int(logits[legal].argmax())]

    def _requirements(self, data: dict, sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
        """Each opponent holds exactly his hand: every other card is forbidden to him."""
        return pin_hands({seat: [] for seat in range(1, len(sizes) + 1)}, self._hands, sizes)


def pin_hands(requirements: dict[int, list[tuple[int, int]]], hands: dict[int, int],
              sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
    """``requirements`` (per opponent seat, as the expert's) with each seat of ``hands`` dealt exactly those cards:
    every other card forbidden to him, and his cards to the other seats."""
    pinned = 0
    for cards in hands.values():
        pinned |= cards
    return {seat: [(ALL_CARDS_MASK & ~hands[seat], sizes[seat - 1])] if seat in hands
            else [(forbidden | pinned, count) for forbidden, count in rules]
            for seat, rules in requirements.items()}


__all__ = ["ORACLE_DECISIONS", "OracleSearch", "pin_hands"]
