"""The suits' symmetry: an observation and its actions with the suits renamed.

Under rules that treat the four suits alike (the same points, effects and wild cards in every suit), a position
with its suits renamed is as good as the original for the renamed moves: a fit may show each recorded decision
under a random renaming (``pretrain_suit_permutations``), which teaches the network that symmetry instead of
leaving it to the data. :func:`suit_permutations` gives, for each of the 24 renamings, the index arrays that
rename an observation vector and an action vector: ``renamed = vector[..., index]``.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from c8env.actions import DECLARE_BASE, NUM_ACTIONS
from c8env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from c8env.observation import DRAW_RECORD_SIZE, OBS_LAYOUT, OBS_SIZE
from c8env.rules import RuleSet

_CARD_PARTS = ("hand", "top_card", "discard_pile")
_SUIT_PARTS = ("suit_to_follow", "opponent_voids", "opponent_suit_draws", "opponent_declared")  # 4 per slot


def suit_symmetric(rules: RuleSet) -> bool:
    """Whether ``rules`` treat the four suits alike: every card's points, effect, draw penalty and wildness
    depend on its rank alone."""
    for table in (rules.point_table, rules.effect_table, rules.draw_table):
        if any(table[card] != table[card % NUM_RANKS] for card in range(NUM_CARDS)):
            return False
    return all(((mask >> card) & 1) == ((mask >> (card % NUM_RANKS)) & 1)
               for mask in (rules.wild_mask, rules.draw_cards_mask) for card in range(NUM_CARDS))


def _renamed(size: int, perm: tuple[int, ...], card_starts: list[int], suit_starts: list[int]) -> np.ndarray:
    """Index array of a vector of ``size`` whose suit ``s`` takes the entries of suit ``perm[s]``: 52 cards from
    each of ``card_starts``, 4 suits from each of ``suit_starts``."""
    index = np.arange(size)
    ranks = np.arange(NUM_RANKS)
    for start in card_starts:
        for suit in range(NUM_SUITS):
            index[start + NUM_RANKS * suit + ranks] = start + NUM_RANKS * perm[suit] + ranks
    for start in suit_starts:
        index[start:start + NUM_SUITS] = start + np.asarray(perm)
    return index


def suit_permutations() -> tuple[np.ndarray, np.ndarray]:
    """Index arrays int64[24, OBS_SIZE] and int64[24, NUM_ACTIONS]: row ``k`` renames an observation vector and
    an action vector (mask, logits, targets) by the ``k``-th permutation of the suits (row 0: none)."""
    card_starts = [OBS_LAYOUT[name].start for name in _CARD_PARTS]
    suit_starts = [start for name in _SUIT_PARTS
                   for start in range(OBS_LAYOUT[name].start, OBS_LAYOUT[name].stop, NUM_SUITS)]
    draws = OBS_LAYOUT["opponent_last_draws"]
    suit_starts += list(range(draws.start, draws.stop, DRAW_RECORD_SIZE))  # each record's suits come first
    observations, actions = [], []
    for perm in permutations(range(NUM_SUITS)):
        observations.append(_renamed(OBS_SIZE, perm, card_starts, suit_starts))
        actions.append(_renamed(NUM_ACTIONS, perm, [0], [DECLARE_BASE]))
    return np.stack(observations), np.stack(actions)
