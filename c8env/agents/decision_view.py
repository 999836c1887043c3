"""What a heuristic decides from: a small view of an observation (or of an engine state).

Heuristic agents and search rollouts decide from the same :class:`View`, built
either from the env's observation dict (:func:`view_from_observation`, through the one
decoder :func:`c8env.observation.decode_observation`) or, much faster, straight from
an engine state for the player to act (:func:`view_from_state`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from c8env.cards import NUM_CARDS, RANK_MASKS
from c8env.engine import State
from c8env.observation import StateObservation, decode_observation


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
    held, twice = state.held_cards(p)
    return View(
        legal=state.legal_actions(),
        hand_bits=held,
        hand_dups=twice,
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
    seen = decode_observation(observation["observation"])
    counts = seen.hand
    slot = 0 if seen.direction == 1 else seen.num_players - 2  # the next player in the direction of play
    return View(
        legal=np.flatnonzero(observation["action_mask"]).tolist(),
        hand_bits=sum(1 << c for c in range(NUM_CARDS) if counts[c] >= 1),
        hand_dups=sum(1 << c for c in range(NUM_CARDS) if counts[c] >= 2),
        phase=seen.phase,
        suit=seen.suit,
        pending=seen.pending_draw,
        wild_mask=RANK_MASKS[seen.wild_rank] if seen.wild_rank >= 0 else 0,
        next_voids=seen.opponent_voids[slot],
        next_size=seen.opponent_sizes[slot],
        min_opponent_size=min(seen.opponent_sizes),
    )


def view_of(observation: dict) -> View:
    """The observer's :class:`View`: read from the state behind a :class:`StateObservation` (fast), else
    decoded from the observation dict. Raises ``ValueError`` when it is not the observer's turn."""
    if isinstance(observation, StateObservation):
        state = observation.state
        if observation.seat != state.current_player or state.hand_over:
            raise ValueError("the observation's seat is not the player to act")
        return view_from_state(state)
    return view_from_observation(observation)


__all__ = ["StateObservation", "View", "view_from_observation", "view_from_state", "view_of"]
