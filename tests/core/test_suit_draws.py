"""``State.suit_draws`` and ``State.declared`` (the state dict's ``suit_draws`` and ``declared``) and the observation's
``opponent_suit_draws`` and ``opponent_declared``: per seat and suit, the cards he has held since the suit last wholly
fitted at his voluntary draw or pass, and his last declaration."""

from __future__ import annotations

import numpy as np
import pytest

from c8env import DRAW, OBS_LAYOUT, State
from c8env.observation import OBS_SIZE, decode_observation, encode_observation
from tests.core.rules_helpers import DECLARE_D, c, deal, field


def test_each_draw_keeps_the_suits_of_the_earlier_draws_and_plays_lower_them() -> None:
    s = deal(hands=[["KS", "2C", "3S"], ["3C", "4C", "9D"], ["6S", "7S"]], discard=["5H"],
             stock=["QD", "JD", "AC", "5C"])
    assert field(s, "suit_draws") == [{}, {}, {}]
    s.apply(DRAW)  # seat 0 draws 5C with hearts to follow
    assert field(s, "suit_draws")[0] == {"H": 4}
    s.apply(c("5C"))  # he plays it: 3 cards since
    assert field(s, "suit_draws")[0] == {"H": 3}
    s.apply(c("4C"))  # seat 1 follows the clubs
    s.apply(DRAW)  # seat 2 draws AC with clubs to follow
    s.apply(c("AC"))
    s.apply(DRAW)  # seat 0 draws JD with clubs to follow (a voluntary draw): his hearts record stays, clubs join it
    assert field(s, "suit_draws")[0] == {"H": 3, "C": 4}


def test_a_declaration_is_kept_with_the_cards_held_since_and_a_new_deal_clears_both() -> None:
    s = deal(hands=[["8S", "2C", "3C"], ["3D", "4D", "9D"]], discard=["5H"], stock=["QD", "JD"])
    s.apply(c("8S"))
    s.apply(DECLARE_D)
    assert field(s, "declared") == [{"suit": "D", "held": 2}, None]
    s.apply(c("3D"))
    s.apply(DRAW)  # seat 0 draws with diamonds to follow
    assert field(s, "declared")[0] == {"suit": "D", "held": 2} and field(s, "suit_draws")[0] == {"D": 3}
    s.apply(c("JD"))
    assert field(s, "declared")[0] == {"suit": "D", "held": 2} and field(s, "suit_draws")[0] == {"D": 2}
    s = State.new(2, seed=3)
    assert field(s, "declared") == [None, None] and field(s, "suit_draws") == [{}, {}]


def test_the_state_dict_round_trips_and_refuses_bad_records() -> None:
    data = {"hands": [["KS", "2C"], ["3C"]], "discard": ["5H"], "stock": [],
            "suit_draws": [{"H": 2, "D": 1}, {}], "declared": [None, {"suit": "S", "held": 1}]}
    back = State.from_dict(data).to_dict()
    assert (back["suit_draws"], back["declared"]) == (data["suit_draws"], data["declared"])
    for bad in ([{}], [{"H": 3}, {}], [{"X": 1}, {}], [{"H": 0}, {}], [{"H": True}, {}], [["H"], {}]):
        with pytest.raises(ValueError, match="'suit_draws'.*allowed: a list of 2 dicts"):
            State.from_dict({**data, "suit_draws": bad})
    for bad in ([None], [None, {"suit": "S", "held": 2}], [None, {"suit": "X", "held": 1}], [None, {"suit": "S"}]):
        with pytest.raises(ValueError, match="'declared'.*allowed: a list of 2 entries"):
            State.from_dict({**data, "declared": bad})


def test_the_observation_writes_shares_of_each_opponents_hand_after_the_draws_vector() -> None:
    assert OBS_LAYOUT["opponent_suit_draws"].start == 353 and OBS_SIZE == 353 + 2 * 24
    s = deal(hands=[["KS", "2C"], ["3C", "4C", "9D", "TD"], ["6S", "7S"]], discard=["5H"], stock=["JD", "5C"],
             current_player=1, suit_draws=[{}, {}, {"S": 1, "H": 2}], declared=[None, {"suit": "C", "held": 3}, None])
    obs = encode_observation(s, 0)  # seat 1 is seat 0's slot 0, seat 2 its slot 1
    suit_draws = obs[OBS_LAYOUT["opponent_suit_draws"]].reshape(6, 4)
    declared = obs[OBS_LAYOUT["opponent_declared"]].reshape(6, 4)
    expected = np.zeros((6, 4), dtype=np.float32)
    expected[1, [2, 3]] = [1.0, 0.5]
    np.testing.assert_array_equal(suit_draws, expected)
    expected = np.zeros((6, 4), dtype=np.float32)
    expected[0, 0] = 0.75
    np.testing.assert_array_equal(declared, expected)
    seen = decode_observation(obs)
    assert seen.opponent_suit_draws == [(0, 0, 0, 0), (0, 0, 2, 1)]
    assert seen.opponent_declared == [(0, 3), None]
