"""``python -m training.research.information``: the search shown some of the other hands, or what the opponents' draws showed."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from c8env.agents import load
from c8env.agents.expert import public_position
from c8env.cards import NUM_CARDS, RANK_MASKS, SUIT_MASKS, card_text, iter_bits, parse_card
from c8env.engine import State
from c8env.episode import play_hand
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.tools.evaluation.deals import play_deals
from tests.agents.test_best_response import redealt
from training.research.expert import load_research
from training.research.information import (
    InformedSearch,
    main,
    play_informed,
    ruled_out_by_play,
    shown_seats,
    track_move,
    track_play,
)

RULES = load_rules("standard")
SPEC = "expert:simulations=6"


def test_with_nothing_shown_it_plays_c8env_evals_hands() -> None:
    lineup = [SPEC, "greedy", "greedy", "greedy"]
    records = play_deals(lineup, ["expert", "g1", "g2", "g3"], RULES, 4, seed=11, deals=range(3))
    assert play_informed(SPEC, 4, 11, range(3), "none", False) == (sum(r.winner == 0 for r in records), 12)


def _check_samples(search: InformedSearch, seat: int, check, samples: int = 1) -> int:
    """Play 2 hands with ``search`` on ``seat`` and greedy elsewhere; at each of its turns deal ``samples`` of its
    samples and pass each to ``check(state, dealt)``. The number of samples checked."""
    greedy = load("greedy", num_players=4)
    checked = 0

    def choose(state: State) -> int:
        nonlocal checked
        view = StateObservation(state, state.current_player)
        if state.current_player != seat:
            return greedy.act(view)
        action = search.act(view)
        data, unseen, sizes = public_position(view, RULES)
        for _ in range(samples):
            check(state, search._deal_hidden(unseen, sizes, search._requirements(data, sizes)))
            checked += 1
        return action

    for deal in range(2):
        play_hand(State.new(4, RULES, seed=deal), choose)
    return checked


@pytest.mark.parametrize("shown", ["next", "previous", "all"])
def test_the_samples_hold_the_hands_it_is_shown_and_not_their_cards_elsewhere(shown: str) -> None:
    seats = shown_seats(shown, 4)
    search = InformedSearch.from_expert(load_research(SPEC, num_players=4, seed=3), seats)

    def check(state: State, dealt: dict) -> None:
        shown_cards = {card for seat in seats for card in state.hand((1 + seat) % 4)}
        for seat in (1, 2, 3):
            if seat in seats:
                assert sorted(dealt[seat]) == state.hand((1 + seat) % 4)
            else:
                assert not shown_cards & set(dealt[seat])

    checked = _check_samples(search, 1, check, samples=5)
    assert shown_seats("previous", 4) == (3,) and shown_seats("all", 3) == (1, 2) and checked > 20


def test_tracked_draws_play_c8env_evals_hands_of_the_expert_that_reads_them() -> None:
    # c8env eval plays the research expert as a factory
    lineup = [partial(load_research, SPEC + ",last_draws=1"), "greedy", "greedy", "greedy"]
    records = play_deals(lineup, ["expert", "g1", "g2", "g3"], RULES, 4, seed=12, deals=range(3))
    assert play_informed(SPEC, 4, 12, range(3), "none", True) == (sum(r.winner == 0 for r in records), 12)


def test_a_greedy_players_cards_never_fit_what_his_last_draw_had_to_follow() -> None:
    # (as many of his cards as the state's last_draws counts, at every other player's turn)
    greedy = load("greedy", num_players=4)
    active = 0

    def choose(state: State) -> int:
        nonlocal active
        for seat, record in enumerate(state.last_draws):
            if record is None or seat == state.current_player:  # he may hold the card he just drew, which fits
                continue
            suits, ranks, held = record
            fitted = sum(SUIT_MASKS[s] for s in range(4) if (suits >> s) & 1)
            fitted |= sum(RANK_MASKS[r] for r in range(13) if (ranks >> r) & 1)
            assert (state.held_cards(seat)[0] & ~fitted).bit_count() >= held
            active += 1
        return greedy.act(StateObservation(state, state.current_player))

    for deal in range(20):
        play_hand(State.new(4, RULES, seed=deal), choose)
    assert active > 100


def test_a_greedy_player_holds_none_of_the_cards_his_plays_ruled_out_until_he_draws() -> None:
    greedy = load("greedy", num_players=4)
    ruled_out, largest = [0] * 4, 0

    def choose(state: State) -> int:
        nonlocal largest
        player = state.current_player
        action = greedy.act(StateObservation(state, player))
        track_play(ruled_out, state, action)
        if action < NUM_CARDS:
            assert not (state.held_cards(player)[0] & ~(1 << action)) & ruled_out[player]
        largest = max(largest, *(cards.bit_count() for cards in ruled_out))
        return action

    for deal in range(20):
        ruled_out[:] = [0] * 4
        play_hand(State.new(4, RULES, seed=deal), choose)
    assert largest >= 8


def test_a_play_rules_out_the_higher_cards_of_its_suit_and_a_wild_card_every_other_card_that_fits() -> None:
    def position(hand: list[str]) -> State:
        return State.from_dict({"num_players": 4, "hands": [hand, ["AS", "KS", "QS"], ["4D", "5D", "6D"],
                                                            ["7D", "9D", "TD"]],
                                "stock": ["6C"], "discard": ["9H"], "current_player": 0}, rules=RULES)

    def cards(bits: int) -> set[str]:
        return {card_text(card) for card in iter_bits(bits)}

    assert cards(ruled_out_by_play(position(["3H", "2C"]), parse_card("3H"))) == {"4H", "5H", "6H", "7H", "9H", "TH",
                                                                                   "JH", "QH", "KH"}
    assert cards(ruled_out_by_play(position(["8C", "2C"]), parse_card("8C"))) == {"AH", "2H", "3H", "4H", "5H", "6H", "7H",
                                                                                   "9H", "TH", "JH", "QH", "KH", "9C",
                                                                                   "9D", "9S"}


def test_told_suit_counts_the_samples_give_each_opponent_his_count_of_each_suit() -> None:
    expert = load_research(SPEC + ",last_draws=1", num_players=4, seed=5)
    search = InformedSearch.from_expert(expert, (), suit_counts=True)
    matched = 0

    def counts(cards: list[int], wild: int) -> list[int]:
        return [sum(1 for c in cards if (wild >> c) & 1)] + [sum(1 for c in cards if c // 13 == s and not (wild >> c) & 1)
                                                             for s in range(4)]

    def check(state: State, dealt: dict) -> None:
        nonlocal matched
        for k in (1, 2, 3):
            seat = (2 + k) % 4
            matched += counts(dealt[k], state.wild_mask(seat)) == counts(state.hand(seat), state.wild_mask(seat))

    _check_samples(search, 2, check)
    assert matched > 20


def test_the_command_prints_the_win_rate_and_refuses_an_agent_that_does_not_search(capsys) -> None:
    main(["--spec", SPEC, "--deals", "2", "--seed", "4", "--shown", "next", "--track-draws", "--workers", "2"])
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{SPEC} (shown next, draws tracked) against 3 greedy: ") and "of 8 hands" in line
    main(["--spec", SPEC, "--deals", "2", "--seed", "4", "--track-plays", "--suit-counts"])
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{SPEC} (shown none, plays tracked, suit counts told) against 3 greedy: ")
    with pytest.raises(SystemExit):
        main(["--spec", "greedy", "--deals", "1"])
    assert "--spec 'greedy' is not a search; allowed: expert[:options]" in capsys.readouterr().err


def test_the_true_hands_explain_every_greedy_move_since_each_draw_and_other_deals_often_do_not() -> None:
    greedy = load("greedy", num_players=4)
    kernel = load_research(SPEC, num_players=4, seed=0).compiled_kernel()
    generator = np.random.default_rng(0)
    checked = broken = 0

    def choose(state: State) -> int:
        nonlocal checked, broken
        if state.current_player == 0 and any(moves[1:]):
            kernel.observe([(position, actor, action, extra) for actor in (1, 2, 3)
                            for position, action, extra in moves[actor]], tries=1)
            assert kernel.unexplained(state) == 0
            other = state.with_hidden_cards(*redealt(state, generator))
            checked, broken = checked + 1, broken + (kernel.unexplained(other) > 0)
        action = greedy.act(StateObservation(state, state.current_player))
        track_move(moves, state, action)
        return action

    for deal in range(20):
        moves: list[list[list]] = [[] for _ in range(4)]
        play_hand(State.new(4, RULES, seed=deal), choose)
    assert checked > 50 and 0.1 < broken / checked < 1


def test_explained_moves_play_hands_and_the_command_says_so(capsys) -> None:
    wins, hands = play_informed(SPEC, 4, 7, range(2), "none", True, explain_tries=20)
    assert hands == 8 and 0 <= wins <= 8
    main(["--spec", SPEC, "--deals", "1", "--seed", "4", "--track-draws", "--explain-moves", "20"])
    assert "moves explained (20 tries)" in capsys.readouterr().out


def test_the_hands_moves_explained_play_hands_and_the_command_says_so(capsys) -> None:
    wins, hands = play_informed(SPEC, 4, 7, range(2), "none", True, hand_tries=20)
    assert hands == 8 and 0 <= wins <= 8
    main(["--spec", SPEC, "--deals", "1", "--seed", "4", "--track-draws", "--explain-hand", "20"])
    assert "the hand's moves explained (20 tries)" in capsys.readouterr().out
