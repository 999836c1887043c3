"""The ``greedy`` agent: a fast heuristic without search (its weights are also the batched greedy's,
:mod:`c8env.agents.batched`)."""

from __future__ import annotations

import numpy as np

from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, PASS, STOP
from c8env.agents.decision_view import View, view_of
from c8env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, SUIT_MASKS, iter_bits
from c8env.engine import Phase
from c8env.observation import check_observation
from c8env.rules import Effect, RuleSet

# Greedy's weights, in card points (the batched greedy, c8env.agents.batched, reads these).
LONG_SUIT = 2  # per other card held in the played card's suit
NEXT_VOID = 8  # the next player just drew or passed on this suit
ATTACK_CLOSE, ATTACK_FAR = 12, 2  # skip / draw card when the next player holds <= 2 cards, or more
ANY_NEXT = -5  # a card that lets the next player play anything
KEEP_WILD = 60  # keep wild cards while every opponent holds more than 2 cards
SUIT_HELD = 100  # declaring: per non-wild card held in the suit (plus its points)
SUIT_NEXT_VOID = 150  # declaring: the next player just drew or passed on the suit
_SKIP, _DRAW, _ANY_NEXT_EFFECT = int(Effect.SKIP), int(Effect.DRAW), int(Effect.ANY_NEXT)


def best_suit(view: View, rules: RuleSet) -> int:
    """Suit to declare: the one held most (non-wild cards), then the next player's void, then points."""
    points = rules.point_table
    score = [0.0] * NUM_SUITS
    for held in (view.hand_bits, view.hand_dups):
        for card in iter_bits(held & ~view.wild_mask):
            score[card // NUM_RANKS] += SUIT_HELD + points[card]
    for suit in range(NUM_SUITS):
        if (view.next_voids >> suit) & 1:
            score[suit] += SUIT_NEXT_VOID
    return max(range(NUM_SUITS), key=lambda s: score[s])


def greedy_action(view: View, rules: RuleSet) -> int:
    """The seeds' advice as a fast heuristic.

    Shed high-point cards first, follow the suit held most, keep wild cards for when
    nothing else fits (but shed them once an opponent is close to going out),
    declare the suit held most, move play to a suit the next player just drew on,
    attack with skips and draw cards near the end, stack draw penalties, play a
    drawn card that fits, announce "last card", call stop whenever allowed.
    """
    legal = view.legal
    if len(legal) == 1:
        return legal[0]
    if view.phase is Phase.DECLARE:
        return DECLARE_BASE + best_suit(view, rules)
    if view.phase is Phase.ANNOUNCE:
        return ANNOUNCE
    if STOP in legal:
        return STOP
    points, effects = rules.point_table, rules.effect_table
    wild_mask = view.wild_mask
    plain, plain_dups = view.hand_bits & ~wild_mask, view.hand_dups & ~wild_mask
    suit_counts = [(plain & m).bit_count() + (plain_dups & m).bit_count() for m in SUIT_MASKS]
    close = view.min_opponent_size <= 2
    best, best_score = -1, float("-inf")
    for action in legal:
        if action >= NUM_CARDS:
            break
        if (wild_mask >> action) & 1:
            score = points[action] - (0 if close else KEEP_WILD)
        else:
            suit = action // NUM_RANKS
            score = points[action] + LONG_SUIT * (suit_counts[suit] - 1)
            if (view.next_voids >> suit) & 1:
                score += NEXT_VOID
            effect = effects[action]
            if effect == _SKIP or effect == _DRAW:
                score += ATTACK_CLOSE if view.next_size <= 2 else ATTACK_FAR
            elif effect == _ANY_NEXT_EFFECT:
                score += ANY_NEXT
        if score > best_score:
            best, best_score = action, score
    if best >= 0:
        return best
    return DRAW if DRAW in legal else PASS


class GreedyAgent:
    """The fast heuristic of :func:`greedy_action`, acting from the env's observation.

    Deterministic given the observation (ties go to the lowest action id).
    """

    #: The batched engine may play this agent with its compiled kernel (:mod:`c8env.agents.batched`, greedy's
    #: own weights: the same moves) when it plays under the batch's rules.
    batch_kernel = "greedy"

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules

    def act(self, observation: dict) -> int:
        check_observation(observation, "GreedyAgent")
        view = view_of(observation)
        if not view.legal:
            raise ValueError("GreedyAgent.act: the action mask has no legal action (not this agent's turn?)")
        return greedy_action(view, self.rules)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for each row of a batch (observations float32[k, 401], masks int8[k, 60]): actions int64[k]."""
        return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks, strict=True)],
                        dtype=np.int64)


__all__ = ["ANY_NEXT", "ATTACK_CLOSE", "ATTACK_FAR", "GreedyAgent", "KEEP_WILD", "LONG_SUIT", "NEXT_VOID", "SUIT_HELD",
           "SUIT_NEXT_VOID", "best_suit", "greedy_action"]
