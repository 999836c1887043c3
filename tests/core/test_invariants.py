"""Invariants of random play: every preset, 2-7 players, several seeds (public API only).

Uniformly random legal actions from ``random.Random``; after every action the cards are
conserved, the legal actions are sane, illegal actions are refused without a trace, the
state survives ``to_dict``/``from_dict``, and the whole game replays from its seed.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

import c8env
from c8env import RuleSet, State

PRESETS = [
    "standard", "special_cards", "action_cards", "uno_like", "crazy_aces", "draw_one", "draw_three",
    "no_reshuffle", "penalty", "five_hands", "last_card", "stop_the_round", "countdown", "dealer_declares",
]
PLAYERS = [2, 3, 4, 5, 6, 7]
SEEDS = [0, 1, 2]
MAX_STEPS = 100_000
#: Seed 0 runs the from_dict round trip and the illegal-action probe at every one of its first
#: THOROUGH_STEPS steps; otherwise they run every ROUNDTRIP_EVERY / ILLEGAL_EVERY steps (for speed).
THOROUGH_STEPS = 300
ROUNDTRIP_EVERY = 23
ILLEGAL_EVERY = 13
#: the replay compares every REPLAY_EVERY-th position for seeds other than 0.
REPLAY_EVERY = 10
FULL_DECK = [c8env.card_text(c) for c in range(52)]
CARD_ID = {text: c8env.parse_card(text) for text in FULL_DECK}

_RULES = {name: RuleSet.from_preset(name) for name in PRESETS}


def test_presets_cover_all() -> None:
    assert sorted(PRESETS) == sorted(c8env.preset_names())


def num_decks(rules: RuleSet, n: int) -> int:
    """docs/rules.md: ``auto`` = one deck for 2-5 players, two for 6-7."""
    if rules.decks == "auto":
        return 2 if n >= 6 else 1
    return rules.decks


def deal_seed(preset: str, n: int, seed: int) -> int:
    return 1_000 * PRESETS.index(preset) + 10 * n + seed


def check_position(state: State, d: dict[str, Any], rules: RuleSet, n: int, decks: int,
                   multiset: bool = True) -> list[int]:
    """Check one position (``d`` is ``state.to_dict()``); returns the legal actions."""
    # cards conserved (and, when ``multiset``, exactly the decks' cards)
    hands, stock, discard = d["hands"], d["stock"], d["discard"]
    assert len(hands) == n == d["num_players"]
    total = sum(len(h) for h in hands) + len(stock) + len(discard)
    assert total == 52 * decks
    if multiset:
        counts = Counter(stock)
        counts.update(discard)
        for h in hands:
            counts.update(h)
        assert counts == Counter(FULL_DECK * decks)
    assert discard, "the discard pile always holds the top card"
    assert d["direction"] in (1, -1)
    assert 0 <= d["dealer"] < n
    assert len(d["scores"]) == n and len(d["countdown"]) == n and len(d["voids"]) == n

    legal = state.legal_actions()
    mask = state.legal_mask()
    assert isinstance(mask, np.ndarray) and mask.shape == (c8env.NUM_ACTIONS,) and mask.dtype == np.int8
    assert set(np.flatnonzero(mask).tolist()) == set(legal)
    assert int(mask.sum()) == len(legal)

    empty = [i for i, h in enumerate(hands) if not h]
    if state.hand_over:
        assert d["phase"] == "over"
        assert legal == []
        assert d["winner"] is None or 0 <= d["winner"] < n
        assert empty in ([], [d["winner"]])
        return legal

    assert d["phase"] in ("play", "declare", "announce")
    assert d["winner"] is None
    assert not empty, "a hand is over the moment a player plays his last card"
    assert 0 <= state.current_player < n and d["current_player"] == state.current_player
    assert legal, "legal_actions() must not be empty while the hand is not over"
    assert all(type(a) is int and 0 <= a < c8env.NUM_ACTIONS for a in legal)
    assert legal == sorted(set(legal)), "legal_actions() must be strictly ascending"
    phase = d["phase"]
    if phase == "declare":
        assert legal == [52, 53, 54, 55]
    elif phase == "announce":
        assert rules.last_card_call
        assert legal == [c8env.PASS, c8env.ANNOUNCE]
        assert len(hands[state.current_player]) == 1
    else:
        assert not any(c8env.DECLARE_BASE <= a < c8env.DECLARE_BASE + 4 or a == c8env.ANNOUNCE for a in legal)
        hand = {CARD_ID[t] for t in hands[state.current_player]}
        assert all(a in hand for a in legal if a < 52), "only cards in hand can be played"
        if c8env.STOP in legal:
            assert rules.stop_threshold is not None and d["pending_draw"] == 0 and d["draws_this_turn"] == 0
        if d["pending_draw"]:
            assert c8env.DRAW in legal and c8env.PASS not in legal
        assert c8env.DRAW in legal or c8env.PASS in legal or any(a < 52 for a in legal)
    if d["pending_draw"]:
        assert any(isinstance(v, dict) for v in rules.to_dict()["effects"].values())
    return legal


def check_illegal(state: State, d: dict[str, Any], legal: list[int], rng: random.Random, k: int = 3) -> None:
    """A sample of actions not in legal_actions() raises IllegalActionError and changes nothing."""
    illegal = [a for a in range(-1, c8env.NUM_ACTIONS + 1) if a not in legal]
    for action in rng.sample(illegal, min(k, len(illegal))):
        with pytest.raises(c8env.IllegalActionError):
            state.apply(action)
        assert state.to_dict() == d
        assert state.legal_actions() == legal


def check_roundtrip(state: State, d: dict[str, Any], rules: RuleSet, legal: list[int], action: int | None) -> None:
    """from_dict(to_dict) gives the same dict and the same legal actions, and (when no shuffle can
    intervene) the same position after the next action."""
    again = State.from_dict(d, rules=rules)
    assert again.to_dict() == d
    assert again.legal_actions() == legal
    assert again.current_player == state.current_player and again.hand_over == state.hand_over
    if action is None:
        return
    margin = d["pending_draw"] + rules.last_card_penalty + 1
    if len(d["stock"]) > margin:  # no reshuffle possible: the outcome is determined by the dict alone
        after = state.copy()
        after.apply(action)
        again.apply(action)
        assert again.to_dict() == after.to_dict()


def check_hand_scores(d: dict[str, Any], before: list[int], rules: RuleSet) -> None:
    """Scores of a finished hand as docs/rules.md scores them."""
    n = d["num_players"]
    points = [sum(rules.card_points_of(c8env.parse_card(t)) for t in h) for h in d["hands"]]
    winner = d["winner"]
    delta = [after - b for after, b in zip(d["scores"], before, strict=True)]
    if rules.scoring == "penalty":
        assert delta == points
    elif winner is None:
        assert delta == [0] * n
        low = min(points)
        assert points.count(low) > 1  # nobody wins only on a tie for fewest
    else:
        expected = [0] * n
        expected[winner] = sum(points[i] - points[winner] for i in range(n))
        assert delta == expected
    if winner is not None:
        assert points[winner] == min(points)
        if any(not h for h in d["hands"]):
            assert not d["hands"][winner]
        else:
            assert points.count(points[winner]) == 1


def play_hand(preset: str, n: int, seed: int) -> tuple[list[int], list[dict[str, Any]]]:
    rules = _RULES[preset]
    decks = num_decks(rules, n)
    state = State.new(n, preset, seed=deal_seed(preset, n, seed))
    assert state.rules == rules
    rng = random.Random(f"{preset}/{n}/{seed}")
    probe = random.Random(seed)
    d = state.to_dict()
    dicts = [d]
    actions: list[int] = []
    while True:
        step = len(actions)
        thorough = seed == 0 and step < THOROUGH_STEPS
        legal = check_position(state, d, rules, n, decks, multiset=thorough or step % ROUNDTRIP_EVERY == 0)
        if state.hand_over:
            break
        assert step < MAX_STEPS, f"hand did not end within {MAX_STEPS} steps"
        action = rng.choice(legal)
        if thorough or step % ILLEGAL_EVERY == 0:
            check_illegal(state, d, legal, probe)
        if thorough or step % ROUNDTRIP_EVERY == 0:
            check_roundtrip(state, d, rules, legal, action)
        state.apply(action)
        actions.append(action)
        d = state.to_dict()
        dicts.append(d)
    # the finished hand
    check_roundtrip(state, d, rules, [], None)
    assert State.from_dict(d, rules=preset).to_dict() == d
    check_illegal(state, d, [], probe, k=5)
    check_hand_scores(d, [0] * n, rules)
    assert d["hands_played"] == 1
    assert len(actions) > 0
    return actions, dicts


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", PLAYERS)
@pytest.mark.parametrize("preset", PRESETS)
def test_random_hand(preset: str, n: int, seed: int) -> None:
    actions, dicts = play_hand(preset, n, seed)
    # the same seed and the same actions replay the same game
    # (every position for seed 0; every REPLAY_EVERY-th position and the last one otherwise, for speed)
    every = 1 if seed == 0 else REPLAY_EVERY
    replay = State.new(n, preset, seed=deal_seed(preset, n, seed))
    assert replay.to_dict() == dicts[0]
    for i, action in enumerate(actions, start=1):
        replay.apply(action)
        if i % every == 0 or i == len(actions):
            assert replay.to_dict() == dicts[i], f"replay diverged by step {i}"
    assert replay.hand_over


@pytest.mark.parametrize("preset", PRESETS)
def test_deal_depends_on_seed_only(preset: str) -> None:
    for n in PLAYERS:
        a = State.new(n, preset, seed=123).to_dict()
        assert State.new(n, preset, seed=123).to_dict() == a
        others = [State.new(n, preset, seed=s).to_dict() for s in (124, 125, 126)]
        assert any(o != a for o in others)


def _scores_ok_at_match_end(state: State, rules: RuleSet, n: int) -> None:
    scores = state.to_dict()["scores"]
    winner = state.match_winner
    assert isinstance(winner, int) and 0 <= winner < n
    if rules.countdown:
        assert state.to_dict()["countdown"][winner] == 0
        return
    best = min(scores) if rules.scoring == "penalty" else max(scores)
    assert scores[winner] == best and scores.count(best) == 1
    if rules.match_hands is not None:
        assert state.to_dict()["hands_played"] >= rules.match_hands
    else:
        assert max(scores) >= rules.target(n)


@pytest.mark.parametrize("preset", PRESETS)
def test_random_matches(preset: str) -> None:
    rules = _RULES[preset]
    for n in PLAYERS:
        decks = num_decks(rules, n)
        state = State.new(n, preset, seed=deal_seed(preset, n, 7))
        rng = random.Random(f"match/{preset}/{n}")
        hands = 0
        dealer = state.to_dict()["dealer"]
        while True:
            assert not state.match_over and state.match_winner is None
            start = state.to_dict()
            assert start["dealer"] == dealer
            assert start["hands_played"] == hands
            if start["phase"] == "play":
                assert start["current_player"] == (dealer + 1) % n  # the dealer's left opens
            else:
                assert start["phase"] == "declare" and start["current_player"] == dealer
            if rules.countdown:
                assert [len(h) for h in start["hands"]] == start["countdown"]
            steps = 0
            while not state.hand_over:
                assert steps < MAX_STEPS
                state.apply(rng.choice(state.legal_actions()))
                steps += 1
                if steps % 3 == 0 or state.hand_over:
                    d = state.to_dict()
                    assert sum(map(len, d["hands"])) + len(d["stock"]) + len(d["discard"]) == 52 * decks
            hands += 1
            end = state.to_dict()
            assert end["hands_played"] == hands
            check_hand_scores(end, start["scores"], rules)
            assert State.from_dict(end, rules=rules).to_dict() == end
            if state.match_over:
                break
            assert hands < 2_000, "match did not end"
            state.next_hand()
            dealer = (dealer + 1) % n
        _scores_ok_at_match_end(state, rules, n)
        assert state.legal_actions() == []
        with pytest.raises(ValueError):
            state.next_hand()


def test_copy_is_independent() -> None:
    for preset in PRESETS:
        state = State.new(4, preset, seed=5)
        rng = random.Random(preset)
        for _ in range(30):
            if state.hand_over:
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.hand_over:
            continue
        before = state.to_dict()
        legal = state.legal_actions()
        twin = state.copy()
        assert twin.to_dict() == before and twin.rules == state.rules
        # playing on the copy leaves the original alone
        mirror: list[int] = []
        for _ in range(200):
            if twin.hand_over:
                break
            action = rng.choice(twin.legal_actions())
            twin.apply(action)
            mirror.append(action)
            assert state.to_dict() == before
        assert state.legal_actions() == legal
        # mutating a returned legal list changes nothing
        state.legal_actions().append(999)
        assert state.legal_actions() == legal
        # the original replays the copy's game exactly (same seed, same shuffles)
        after_twin = twin.to_dict()
        third = state.copy()
        for action in mirror:
            state.apply(action)
        assert state.to_dict() == after_twin
        assert third.to_dict() == before  # and that did not touch the other copy


@pytest.mark.parametrize("players", [2, 3])
def test_a_finished_countdown_hand_round_trips_to_the_same_observations(players: int) -> None:
    """The winner's count goes down at the hand's end, its wild cards only at the next deal: a finished position
    read back from its dict shows every seat what the live one does (the wild rank the hand was played with)."""
    from c8env.agents import load
    from c8env.observation import StateObservation, encode_observation

    greedy = load("greedy")
    for seed in range(12):
        state = State.new(players, "countdown", seed=seed)
        while not state.hand_over:
            state.apply(greedy.act(StateObservation(state, state.current_player)))
        assert state.winner is not None
        again = State.from_dict(state.to_dict())
        for seat in range(players):
            assert np.array_equal(encode_observation(again, seat), encode_observation(state, seat)), (seed, seat)
