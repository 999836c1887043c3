"""``State.last_draws`` (the state dict's ``last_draws``) and the observation's ``opponent_last_draws``: what each
seat's last voluntary draw or pass showed, the fewest cards he has held since, and how the observation writes it."""

from __future__ import annotations

import numpy as np
import pytest

from c8env import DRAW, OBS_LAYOUT, PASS, State
from c8env.observation import DRAW_RECORD_SIZE, LEGACY_OBS_SIZE, decode_observation, encode_observation
from tests.core.rules_helpers import DECLARE_D, c, deal, field


def record(suits: list[str], ranks: list[str], held: int) -> dict:
    return {"suits": suits, "ranks": ranks, "held": held}


def test_a_draw_records_the_suit_and_ranks_that_fitted_and_the_hand_size() -> None:
    s = deal(hands=[["KS", "2C"], ["3C", "4C", "9D"], ["6S", "7S"]], discard=["5H"], stock=["JD", "5C"])
    assert field(s, "last_draws") == [None, None, None]
    s.apply(DRAW)  # seat 0 draws 5C with 5H on top: no heart, no five, no eight (wild) in his hand
    assert field(s, "last_draws") == [record(["H"], ["5", "8"], 3), None, None]
    s.apply(c("5C"))  # he plays the drawn card: his other two cards are still the ones that did not fit
    assert field(s, "last_draws")[0] == record(["H"], ["5", "8"], 2)
    s.apply(DRAW)  # seat 1 draws JD with clubs and fives to follow
    assert field(s, "last_draws")[1] == record(["C"], ["5", "8"], 4)


def test_a_pass_records_and_a_penalty_does_not() -> None:
    s = deal(hands=[["KS", "2C"], ["3C", "4C"]], discard=["5H"])  # empty stock, nothing to reshuffle
    assert s.legal_actions() == [PASS]
    s.apply(PASS)
    assert field(s, "last_draws") == [record(["H"], ["5", "8"], 2), None]
    s = deal("special_cards", hands=[["2H", "KC"], ["9D", "TD"], ["4C", "6C"]], discard=["5H"],
             stock=["3C", "4D", "5D"])
    s.apply(c("2H"))  # seat 1 owes 2 cards
    s.apply(DRAW)  # and takes them: a penalty, no voluntary draw
    assert field(s, "last_draws") == [None, None, None]


def test_held_is_the_fewest_cards_held_since_and_a_new_deal_clears_it() -> None:
    s = deal(hands=[["KS", "2C", "3S"], ["3C", "4C", "9C"]], discard=["5H"], stock=["AD", "9H", "JD"])
    s.apply(DRAW)  # seat 0 draws JD: nothing fits yet (4 cards)
    s.apply(DRAW)  # 9H fits; seat 0 has 5 cards, none of the four before fitted
    assert field(s, "last_draws")[0]["held"] == 5
    s.apply(c("9H"))
    assert field(s, "last_draws")[0] == record(["H"], ["5", "8"], 4)
    s.apply(c("9C"))  # seat 1 follows the nine
    s.apply(c("2C"))  # seat 0 plays again: 3 cards left
    assert field(s, "last_draws")[0]["held"] == 3
    s = deal(hands=[["KS", "2C"], ["3H"]], discard=["5H"])
    s.apply(PASS)
    s.apply(c("3H"))  # seat 1 goes out
    assert s.hand_over and field(s, "last_draws")[0] == record(["H"], ["5", "8"], 2)
    s.next_hand()
    assert field(s, "last_draws") == [None, None]


def test_after_a_declared_suit_only_that_suit_and_the_wild_rank_fitted() -> None:
    s = deal(hands=[["8H", "KS", "2C"], ["3C", "4C"]], discard=["5H"], stock=["AS"])
    s.apply(c("8H"))
    s.apply(DECLARE_D)
    s.apply(DRAW)  # seat 1: no diamond, no eight
    assert field(s, "last_draws")[1] == record(["D"], ["8"], 3)


def test_any_next_card_makes_every_suit_and_rank_fit() -> None:
    s = deal("action_cards", hands=[["AH", "KS", "2S"], ["3C", "4C"]], discard=["5H"], stock=["TS"])
    s.apply(c("AH"))  # any card may follow the ace
    s.apply(DRAW)
    assert field(s, "last_draws")[1] == record(["C", "D", "H", "S"], list("A23456789TJQK"), 3)


def test_the_state_dict_round_trips_and_refuses_bad_records() -> None:
    data = {"hands": [["KS", "2C"], ["3C"]], "discard": ["5H"], "stock": [],
            "last_draws": [record(["H"], ["5", "8"], 2), None]}
    assert State.from_dict(data).to_dict()["last_draws"] == data["last_draws"]
    for bad in ([None], [record(["H"], ["5"], 3), None], [record(["X"], [], 1), None], [record("H", [], 1), None],
                [record(["H"], ["1"], 1), None], [record([], ["5"], 1), None], [{"suits": ["H"], "ranks": []}, None], [record(["H"], [], True), None]):
        with pytest.raises(ValueError, match="'last_draws'.*allowed: a list of 2 entries"):
            State.from_dict({**data, "last_draws": bad})


def test_the_observation_writes_each_opponent_slot_after_the_legacy_vector() -> None:
    assert OBS_LAYOUT["opponent_last_draws"] == slice(LEGACY_OBS_SIZE, LEGACY_OBS_SIZE + 6 * DRAW_RECORD_SIZE)
    s = deal(hands=[["KS", "2C"], ["3C", "4C", "9D"], ["6S", "7S"]], discard=["5H"], stock=["JD", "5C"],
             current_player=1, last_draws=[None, None, record(["S"], ["7", "8"], 2)])
    s.apply(DRAW)  # seat 1 draws 5C
    obs = encode_observation(s, 0)  # seat 1 is seat 0's slot 0, seat 2 its slot 1
    slots = obs[OBS_LAYOUT["opponent_last_draws"]].reshape(6, DRAW_RECORD_SIZE)
    expected = np.zeros((6, DRAW_RECORD_SIZE), dtype=np.float32)
    expected[0, [2, 4 + 4, 4 + 7, 17]] = [1, 1, 1, 4]  # H; ranks 5 and 8; 4 cards held
    expected[1, [3, 4 + 6, 4 + 7, 17]] = [1, 1, 1, 2]  # S; ranks 7 and 8; 2 cards held
    np.testing.assert_array_equal(slots, expected)
    assert decode_observation(obs).opponent_last_draws == [(0b0100, 0b10010000, 4), (0b1000, 0b11000000, 2)]
    own = encode_observation(s, 1)[OBS_LAYOUT["opponent_last_draws"]].reshape(6, DRAW_RECORD_SIZE)
    assert not own[1:].any() and own[0, 17] == 2  # seat 1 sees seat 2 (slot 0), then seat 0 (none)
