"""What a policy sees: a small decoded view of an observation (or of an engine state).

Heuristic agents and search rollouts decide from the same :class:`View`, built
either from the env's observation dict (:func:`view_from_observation`) or, much
faster, straight from an engine state for the player to act (:func:`view_from_state`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

import numpy as np

from c8env.cards import NUM_CARDS, RANK_MASKS
from c8env.crazy_eights import OBS_LAYOUT, encode_observation
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



class StateObservation(Mapping):
    """The env's observation dict for one seat of an engine state, each key computed on first access.

    Built-in agents recognise it and read the same public facts straight from the state
    (:meth:`view`, :meth:`legal_actions`) instead of decoding the vector; evaluation and
    search use it to skip encoding.
    """

    __slots__ = ("_state", "_seat", "_cache")

    def __init__(self, state: State, seat: int) -> None:
        self._state, self._seat, self._cache = state, seat, {}

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self._cache:
            if key == "observation":
                self._cache[key] = encode_observation(self._state, self._seat)
            elif key == "action_mask":
                mask = np.zeros(60, dtype=np.int8)
                mask[self.legal_actions()] = 1
                self._cache[key] = mask
            else:
                raise KeyError(key)
        return self._cache[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("observation", "action_mask"))

    def __len__(self) -> int:
        return 2

    def legal_actions(self) -> list[int]:
        """The observer's legal actions (empty when it is not his turn)."""
        state = self._state
        return state.legal_actions() if self._seat == state.current_player and not state.hand_over else []

    def view(self) -> View:
        """The observer's :class:`View` (same facts as :func:`view_from_observation`)."""
        if self._seat != self._state.current_player:
            raise ValueError("StateObservation.view: it is not this seat's turn")
        return view_from_state(self._state)
