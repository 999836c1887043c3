"""The expert's compiled search (``c8env.vector.search``) against its Python loop: the same decisions,
with the agent's generator advanced the same way, for every preset and 2-7 players."""

from __future__ import annotations

import numpy as np
import pytest

from c8env import preset_names
from c8env.agents import load
from c8env.agents.expert import ExpertAgent
from c8env.engine import State
from c8env.episode import play_hand
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.vector import COMPILED
from c8env.vector.search import generator_words, set_generator_words

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba is not installed or is disabled")


@pytest.mark.parametrize("index", range(len(preset_names())))
def test_compiled_search_decides_as_the_python_loop(index: int) -> None:
    preset = preset_names()[index]
    n = 2 + index % 6
    rules = load_rules(preset)
    searched = 0

    def play(hand: int) -> None:
        nonlocal searched
        fast = ExpertAgent(rules, n, simulations=6, seed=hand, compiled=True)
        slow = ExpertAgent(rules, n, simulations=6, seed=hand, compiled=False)
        greedy = load("greedy", rules=rules, num_players=n)

        def choose(state: State) -> int:
            nonlocal searched
            seat = state.current_player
            view = StateObservation(state, seat)
            if seat != hand % n:
                return greedy.act(view)
            ours, theirs = fast.act(view), slow.act(view)
            assert ours == theirs, f"{preset}, {n} players, hand {hand}: compiled {ours}, python {theirs}"
            searched += len(state.legal_actions()) > 1
            return ours

        play_hand(State.new(n, rules, seed=100 + hand), choose)
        assert fast.rng.bit_generator.state == slow.rng.bit_generator.state

    for hand in range(2):
        play(hand)
    assert searched > 0


def test_generator_words_round_trip() -> None:
    source = np.random.default_rng(11)
    source.integers(2**32, dtype=np.uint32)  # leave a buffered 32-bit half
    copy = np.random.default_rng(0)
    set_generator_words(copy, generator_words(source))
    assert copy.bit_generator.state == source.bit_generator.state
    assert (copy.permutation(50) == source.permutation(50)).all()


def test_compiled_search_under_a_time_budget_plays_legal_moves() -> None:
    rules = load_rules("standard")
    agent = ExpertAgent(rules, 2, simulations=10_000, time_ms=5, seed=1, compiled=True)
    greedy = load("greedy")
    state = State.new(2, rules, seed=3)

    def choose(s: State) -> int:
        view = StateObservation(s, s.current_player)
        action = (agent if s.current_player == 0 else greedy).act(view)
        assert action in s.legal_actions()
        return action

    play_hand(state, choose)
    assert state.hand_over


def test_compiled_option_is_checked() -> None:
    with pytest.raises(ValueError, match="compiled='yes' is invalid"):
        ExpertAgent(load_rules("standard"), 2, compiled="yes")  # type: ignore[arg-type]
