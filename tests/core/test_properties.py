"""Property-based checks (Hypothesis): rule sets, positions, action sequences and malformed inputs.

- no input crashes with anything but the documented errors (``ValueError``/``TypeError``);
- a refused call changes nothing;
- every accepted position plays to the end with the deck conserved.

Derandomized (the same examples on every run) and sized to run in a few tens of seconds.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import c8env
from c8env import State
from c8env.agents.decision_view import view_from_state
from c8env.agents.greedy import greedy_action
from c8env.episode import MAX_HAND_STEPS

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
DOCUMENTED = (ValueError, TypeError)
PRESETS = c8env.preset_names()

# ----- strategies --------------------------------------------------------------------------------------
JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 12), st.floats(allow_nan=True), st.text(max_size=4),
    st.sampled_from(["8H", "10d", "*", "C", "play", "over", "announce", "declare", "q♠", "standard"]),
    st.lists(st.sampled_from(["AC", "8H", "KS", "x", 3, None]), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
FIELD_VALUES = {
    "decks": st.sampled_from(["auto", 1, 2]),
    "hand_size": st.one_of(st.just("auto"), st.integers(1, 9)),
    "wild_rank": st.sampled_from(["8", "A", "2", "10", "K"]),
    "starter_wild": st.sampled_from(["bury", "dealer_declares"]),
    "draw_when_able": st.booleans(),
    "max_draws_per_turn": st.one_of(st.none(), st.integers(1, 3)),
    "stock_exhausted": st.sampled_from(["reshuffle", "pass", "end"]),
    "scoring": st.sampled_from(["winner_collects", "penalty"]),
    "card_points": st.dictionaries(st.sampled_from(["8", "K", "A", "5"]), st.integers(0, 50), max_size=2),
    "match_target": st.one_of(st.just("auto"), st.integers(1, 300)),
    "match_hands": st.one_of(st.none(), st.integers(1, 5)),
    "effects": st.dictionaries(st.sampled_from(["2", "J", "Q", "A", "QS", "7"]),
                               st.one_of(st.sampled_from(["skip", "reverse", "any_next"]),
                                         st.builds(lambda n: {"draw": n}, st.integers(1, 4))), max_size=3),
    "last_card_call": st.booleans(),
    "last_card_penalty": st.integers(1, 3),
    "stop_threshold": st.one_of(st.none(), st.integers(0, 20)),
    "countdown": st.booleans(),
}


@st.composite
def rule_dicts(draw: Any, junk: bool = True) -> dict[str, Any]:
    """A rules dict: a preset plus some fields, and (with ``junk``) sometimes a bad field or value."""
    data: dict[str, Any] = {"preset": draw(st.sampled_from(PRESETS))}
    for name in draw(st.lists(st.sampled_from(sorted(FIELD_VALUES)), max_size=4, unique=True)):
        data[name] = draw(FIELD_VALUES[name])
    if junk and draw(st.booleans()):
        key = draw(st.sampled_from([*FIELD_VALUES, "preset", "wild_card", "handsize"]))
        data[key] = draw(JUNK)
    return data


@st.composite
def positions(draw: Any) -> tuple[State, int]:
    """A position reached by play: rules, a deal, then some legal moves (chosen by Hypothesis)."""
    rules_data = draw(rule_dicts(junk=False))
    try:
        rules = c8env.load_rules(rules_data)
    except ValueError:
        rules = c8env.load_rules(rules_data["preset"])
    n = draw(st.integers(2, 7))
    try:
        state = State.new(n, rules, seed=draw(st.integers(0, 2**32)))
    except ValueError:  # a deal too large for the decks
        state = State.new(2, rules, seed=0)
    choices = draw(st.lists(st.integers(0, 10**6), max_size=60))
    for k in choices:
        if state.hand_over:
            break
        legal = state.legal_actions()
        state.apply(legal[k % len(legal)])
    return state, draw(st.integers(0, 10**6))


def cards_in_play(state: State) -> Counter:
    d = state.to_dict()
    return Counter([c for hand in d["hands"] for c in hand] + d["stock"] + d["discard"])


def play_out(state: State) -> None:
    """Play the hand to its end with greedy moves, checking that no card appears or vanishes."""
    deck = cards_in_play(state)
    steps = 0
    while not state.hand_over and steps < MAX_HAND_STEPS:
        state.apply(greedy_action(view_from_state(state), state.rules))
        steps += 1
        if steps % 7 == 0 or state.hand_over:
            assert cards_in_play(state) == deck
    assert state.hand_over, f"not over after {steps} moves"
    assert cards_in_play(state) == deck


# ----- rule sets ----------------------------------------------------------------------------------------
@SETTINGS
@given(rule_dicts())
def test_rules_load_or_refuse_clearly(data: dict[str, Any]) -> None:
    try:
        rules = c8env.load_rules(data)
    except DOCUMENTED as err:
        assert str(err)
        return
    assert c8env.load_rules(rules.spec()) == rules  # the short form names the same rules
    assert c8env.load_rules(rules.to_dict()) == rules


# ----- positions ----------------------------------------------------------------------------------------
@SETTINGS
@given(positions())
def test_reached_positions_round_trip_and_play_to_the_end(position: tuple[State, int]) -> None:
    state, seed = position
    d = state.to_dict()
    again = State.from_dict(copy.deepcopy(d), seed=seed)  # the rules come from the dict
    assert again.to_dict() == d and again.legal_actions() == state.legal_actions()
    if not again.hand_over:
        play_out(again)


MUTATIONS = st.sampled_from(["drop", "junk", "unknown", "swap_rules"])


@SETTINGS
@given(positions(), MUTATIONS, st.sampled_from(sorted(State.new(2).to_dict())), JUNK)
def test_malformed_positions_are_refused_or_play_out(position: tuple[State, int], how: str, key: str,
                                                      value: Any) -> None:
    state, seed = position
    d = state.to_dict()
    if how == "drop":
        d.pop(key)
    elif how == "junk":
        d[key] = value
    elif how == "unknown":
        d["sate"] = value
    else:
        d["rules"] = "uno_like" if d["rules"] != "uno_like" else "standard"
    frozen = copy.deepcopy(d)
    try:
        accepted = State.from_dict(d, seed=seed)
    except DOCUMENTED as err:
        assert str(err)
        assert d == frozen  # the caller's dict is not touched
        return
    assert d == frozen
    if not accepted.hand_over:
        play_out(accepted)


# ----- action sequences ---------------------------------------------------------------------------------
ACTIONS = st.one_of(
    st.integers(-3, 63), st.integers(-3, 63).map(np.int64), st.integers(0, 59).map(np.array),
    st.sampled_from([None, True, False, 3.0, "3", np.array([3]), np.float32(2), [1]]),
)


@SETTINGS
@given(positions(), st.lists(ACTIONS, min_size=1, max_size=30))
def test_actions_apply_or_are_refused_without_change(position: tuple[State, int], actions: list[Any]) -> None:
    state, _ = position
    for action in actions:
        before = state.to_dict()
        legal = state.legal_actions()
        try:
            state.apply(action)
        except DOCUMENTED as err:
            assert isinstance(err, c8env.IllegalActionError) and str(err)
            assert state.to_dict() == before and state.legal_actions() == legal
        else:
            assert int(action) in legal


@SETTINGS
@given(st.integers(2, 4), st.integers(0, 1000), st.lists(ACTIONS, min_size=1, max_size=20))
def test_aec_env_refuses_without_change(players: int, seed: int, actions: list[Any]) -> None:
    env = c8env.env(num_players=players, rules="special_cards")
    env.reset(seed=seed)
    for action in actions:
        if any(env.terminations.values()) or any(env.truncations.values()):
            break
        before = (env.unwrapped.game.to_dict(), env.agent_selection, dict(env.rewards))
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()
        try:
            env.step(action)
        except DOCUMENTED:
            assert (env.unwrapped.game.to_dict(), env.agent_selection, dict(env.rewards)) == before
            assert not (isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < 60)
        else:
            # accepted: a legal move, or a legal-range illegal one that TerminateIllegalWrapper penalised
            assert int(action) in legal or all(env.terminations.values())


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_plays_to_the_end_from_a_deal(preset: str) -> None:
    for players in (2, 5):
        state = State.new(players, preset, seed=players)
        play_out(state)


@SETTINGS
@given(positions(), st.sampled_from(sorted(State.new(2).to_dict())), JUNK, st.booleans())
def test_env_resets_refuse_malformed_states_without_change(position: tuple[State, int], key: str, value: Any,
                                                           single: bool) -> None:
    from c8env.envs.single_agent import SingleAgentEnv

    state, seed = position
    n = state.num_players
    env = SingleAgentEnv(num_players=n, rules=state.rules, opponents="greedy") if single else \
        c8env.raw_env(num_players=n, rules=state.rules)
    env.reset(seed=seed % 1000)
    before = env.unwrapped.game.to_dict()
    d = dict(state.to_dict(), **{key: value})
    try:
        env.reset(seed=1, options={"state": d})
    except DOCUMENTED as err:
        assert str(err)
        assert env.unwrapped.game.to_dict() == before
        return
    given, game = State.from_dict(d, rules=state.rules), env.unwrapped.game
    if single and given.current_player != env.learner_seat:  # the opponents moved up to the learner's turn
        assert not game.hand_over and game.current_player == env.learner_seat
    else:  # the env starts at the position given
        assert game.to_dict() == given.to_dict()
