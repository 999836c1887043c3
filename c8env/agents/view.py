"""What a policy sees: a small decoded view of an observation (or of an engine state).

Heuristic agents and search rollouts decide from the same :class:`View`, built
either from the env's observation dict (:func:`view_from_observation`) or, much
faster, straight from an engine state for the player to act (:func:`view_from_state`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from c8env.cards import NUM_CARDS, RANK_MASKS
from c8env.crazy_eights import OBS_LAYOUT
from c8env.engine import ANY_SUIT, State

_L = {name: (s.start, s.stop) for name, s in OBS_LAYOUT.items()}


class View(NamedTuple):
    """The decision-relevant facts for the player to act."""

    legal: list[int]
    """Legal action ids, ascending."""
    hand_bits: int
    """Bit set of the cards held at least once."""
    hand_dups: int
    """Bit set of the cards held twice (two decks)."""
    phase: int
    """Engine phase (PLAY, DECLARE, ANNOUNCE_PHASE)."""
    suit: int
    """Suit to follow (0-3), or ANY_SUIT."""
    pending: int
    """Draw penalty in force."""
    wild_mask: int
    """Bit set of the cards that are wild for this player."""
    next_voids: int
    """Suit bit set the next player drew or passed on since his last play."""
    next_size: int
    """Cards held by the next player."""
    min_opponent_size: int
    """Fewest cards held by any opponent."""


def view_from_state(state: State) -> View:
    """View of the player to act in an engine state."""
    p = state.current_player
    nxt = (p + state.direction) % state.num_players
    sizes = state.sizes
    return View(
        legal=state.legal_actions(),
        hand_bits=state.bits[p],
        hand_dups=state.dups[p],
        phase=state.phase,
        suit=state.suit,
        pending=state.pending,
        wild_mask=state.wild_mask(p),
        next_voids=state.voids[nxt],
        next_size=sizes[nxt],
        min_opponent_size=min(sizes[i] for i in range(state.num_players) if i != p),
    )


def view_from_observation(observation: dict) -> View:
    """View of the observer from the env's observation dict (which must be his turn)."""
    obs = np.asarray(observation["observation"])
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    a, b = _L["hand"]
    counts = obs[a:b]
    hand_bits = sum(1 << c for c in range(NUM_CARDS) if counts[c] >= 1)
    hand_dups = sum(1 << c for c in range(NUM_CARDS) if counts[c] >= 2)
    a, b = _L["num_players"]
    n = int(np.argmax(obs[a:b])) + 2
    a, _ = _L["opponent_hand_sizes"]
    sizes = [int(x) for x in obs[a:a + n - 1]]
    direction = int(obs[_L["direction"][0]])
    slot = 0 if direction == 1 else n - 2
    a, _ = _L["opponent_voids"]
    voids = obs[a + 4 * slot:a + 4 * slot + 4]
    a, b = _L["suit_to_follow"]
    suit = ANY_SUIT if obs[_L["any_card"][0]] else int(np.argmax(obs[a:b]))
    a, b = _L["wild_rank"]
    wild = obs[a:b]
    return View(
        legal=legal,
        hand_bits=hand_bits,
        hand_dups=hand_dups,
        phase=int(np.argmax(obs[_L["phase"][0]:_L["phase"][1]])),
        suit=suit,
        pending=int(obs[_L["pending_draw"][0]]),
        wild_mask=RANK_MASKS[int(np.argmax(wild))] if wild.any() else 0,
        next_voids=sum(1 << s for s in range(4) if voids[s]),
        next_size=sizes[slot],
        min_opponent_size=min(sizes),
    )

