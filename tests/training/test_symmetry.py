"""The suits' symmetry: renaming a position's suits renames its observation and its legal moves."""

from __future__ import annotations

from itertools import permutations
from typing import Any

import numpy as np
import pytest

from c8env.agents import load
from c8env.engine import State
from c8env.observation import StateObservation
from c8env.rules import load_rules
from training.symmetry import suit_permutations, suit_symmetric

SUITS = "CDHS"


def _renamed(value: Any, new_name: dict[str, str]) -> Any:
    """A state dict's cards and suits (texts, lists, maps keyed by suit) with the suits renamed."""
    if isinstance(value, dict):
        return {new_name.get(key, key): _renamed(item, new_name) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed(item, new_name) for item in value]
    if isinstance(value, str) and value in new_name:
        return new_name[value]
    if isinstance(value, str) and len(value) == 2 and value[1] in new_name:
        return value[0] + new_name[value[1]]
    return value


def _positions(players: int, seed: int, count: int) -> list[State]:
    """Positions of greedy hands: each seat's turn after some moves."""
    rules = load_rules("standard")
    greedy = load("greedy", rules=rules, num_players=players)
    found = []
    for hand in range(count):
        state = State.new(players, rules, seed=seed + hand)
        for _ in range(3 * hand):
            if state.hand_over:
                break
            state.apply(greedy.act(StateObservation(state, state.current_player)))
        if not state.hand_over:
            found.append(state)
    return found


@pytest.mark.parametrize("players", [2, 4])
def test_renaming_a_positions_suits_renames_its_observation_and_mask(players):
    observation_index, action_index = suit_permutations()
    assert (observation_index[0] == np.arange(observation_index.shape[1])).all()
    positions = _positions(players, 11, 12)
    assert len(positions) >= 8
    for k, perm in enumerate(permutations(range(4))):
        new_name = {SUITS[perm[suit]]: SUITS[suit] for suit in range(4)}  # new suit s is old suit perm[s]
        for state in positions:
            renamed = State.from_dict(_renamed(state.to_dict(), new_name), rules=state.rules)
            seat = state.current_player
            before, after = StateObservation(state, seat), StateObservation(renamed, seat)
            assert np.array_equal(before["observation"][observation_index[k]], after["observation"]), (k, perm)
            assert np.array_equal(before["action_mask"][action_index[k]], after["action_mask"]), (k, perm)


def test_only_rules_alike_in_every_suit_are_symmetric():
    assert suit_symmetric(load_rules("standard"))
    assert not suit_symmetric(load_rules("uno_like"))  # the queen of spades makes the next player draw 5
