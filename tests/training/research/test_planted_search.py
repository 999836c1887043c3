"""The search response to a planted flaw (:mod:`training.research.planted_search`): its kernels play the flaw's rule
as ``c8env.tools.planted`` does, and the draw is a candidate of its search."""

from __future__ import annotations

import numpy as np
import pytest

from c8env.actions import DRAW, NUM_ACTIONS
from c8env.agents import load
from c8env.agents.policy import POLICY_DIR, PolicyAgent
from c8env.agents.search_compiled import load_state, network
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.tools import planted
from c8env.vector import COMPILED, kernels, rule_table
from training.research.planted_search import MODEL, draw_rule, model_move, versus_complacent

RULES = load_rules("standard")
pytestmark = pytest.mark.skipif(not COMPILED, reason="the planted search response runs compiled (numba)")


def _positions(count: int) -> list[State]:
    """Positions of hands played by ``random`` (whose draws grow the hands), one per decision."""
    player, states, deal = load("random", RULES, 2, seed=0), [], 0
    while len(states) < count:
        state = State.new(2, RULES, seed=deal)
        while not state.hand_over and len(states) < count:
            states.append(state.copy())
            state.apply(player.act(StateObservation(state, state.current_player)))
        deal += 1
    return states


@pytest.mark.parametrize("flaw", ["complacent", "clubs"])
def test_the_kernels_play_the_planted_flaw_as_c8env_tools_planted_does(flaw: str) -> None:
    flawed = getattr(planted, flaw)(RULES, 2, base=MODEL)
    model = PolicyAgent(POLICY_DIR / f"{MODEL}.npz")
    net, rule = network(model.layers, model.meta["activation"]), draw_rule(flaw)
    games, table = kernels.new_games(1, 2), rule_table(RULES, 2, "hand", "win", MAX_HAND_STEPS)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    flawed_draws = agreed = decisions = 0
    for state in _positions(3000):
        observation = StateObservation(state, state.current_player)
        if observation["action_mask"].sum() < 2:
            continue
        decisions += 1
        load_state(games, 0, state)
        expected = flawed.act(observation)
        agreed += model_move(games, 0, table, net, rule, mask) == expected
        flawed_draws += expected == DRAW and model.act(observation) != DRAW
    assert flawed_draws >= 20  # the flaw's rule decided some of them
    assert agreed == decisions


def test_the_draw_is_searched_where_it_is_legal_as_the_turns_first_move() -> None:
    response = versus_complacent(seed=0)
    searched = 0
    for state in _positions(400)[::20]:
        observation = StateObservation(state, state.current_player)
        action = response.act(observation)
        assert observation["action_mask"][action]
        first_move = state.draws == 0
        if response.last_search is not None and observation["action_mask"][DRAW] and first_move:
            assert DRAW in response.last_search[0]
            searched += 1
    assert searched >= 5
