"""Fixed deals played move by move: the deal, a turn (matching, wild cards, declaring), drawing,
the empty stock and illegal actions, with the exact outcome of every important move.

Each test builds a position with ``State.from_dict`` (or a seeded ``State.new``),
plays it with ``state.apply`` and checks hands, the top card, the suit and rank to
follow, the player to act, the phase, draw penalties, legal actions, scores and
the match result. Every rule and variant of docs/rules.md is covered across the
``test_rules_*.py`` files; the section headers follow docs/rules.md. Public API only.
The helpers and reminders are in ``rules_helpers.py``.
"""

from __future__ import annotations

import pytest

from c8env import ANNOUNCE, DRAW, PASS, STOP, IllegalActionError, State
from tests.core.rules_helpers import (
    DECLARE_C,
    DECLARE_D,
    DECLARE_S,
    DECLARES,
    acts,
    assert_over,
    c,
    canon,
    card_count,
    deal,
    field,
    follow,
    hands,
    top,
)


# =====================================================================================================
# Set-up
# =====================================================================================================
@pytest.mark.parametrize("n, size", [(2, 7), (3, 5), (4, 5), (5, 5), (6, 5), (7, 5)])
def test_deal_sizes_and_first_player(n, size):
    s = State.new(n, "standard", seed=3)
    d = s.to_dict()
    assert [len(h) for h in d["hands"]] == [size] * n  # 7 each with 2 players, else 5
    assert card_count(s) == (52 if n <= 5 else 104)  # two decks from 6 players
    assert s.current_player == (d["dealer"] + 1) % n  # the dealer's left plays first
    assert d["phase"] == "play" and d["direction"] == 1 and d["scores"] == [0] * n
    assert len(d["discard"]) == 1


def test_hand_size_and_decks_overrides():
    s = State.new(3, {"hand_size": 4}, seed=0)
    assert [len(h) for h in hands(s)] == [4, 4, 4]
    s = State.new(5, {"decks": 2}, seed=0)  # 003: two decks from 5 players
    assert card_count(s) == 104
    s = State.new(6, {"decks": 1}, seed=0)
    assert card_count(s) == 52


# =====================================================================================================
# A turn: matching, wild cards, declaring
# =====================================================================================================
def test_match_by_suit_or_rank():
    s = deal(hands=[["5H", "9C", "KS", "3D"], ["2C", "7S", "TD"]], discard=["9H"], stock=["4C", "6D"])
    # P0 on 9H: 5H matches the suit, 9C the rank; KS and 3D match nothing.
    assert s.current_player == 0
    assert follow(s) == ("H", "9")
    assert s.legal_actions() == acts("5H", "9C", DRAW)
    s.apply(c("9C"))  # P0 plays 9C (same rank)
    assert top(s) == "9C"
    assert follow(s) == ("C", "9")
    assert hands(s) == canon(["5H", "KS", "3D"], ["2C", "7S", "TD"])
    assert s.current_player == 1 and field(s, "phase") == "play"
    # P1 on 9C: 2C by suit; 7S and TD match neither.
    assert s.legal_actions() == acts("2C", DRAW)
    s.apply(c("2C"))  # P1 plays 2C (same suit)
    assert follow(s) == ("C", "2")
    assert s.current_player == 0
    # P0 holds 3D 5H KS: nothing matches clubs or a two.
    assert s.legal_actions() == [DRAW]
    assert field(s, "discard") == ["9H", "9C", "2C"]
    assert field(s, "stock") == ["4C", "6D"]


def test_wild_card_then_declare_suit():
    s = deal(hands=[["8D", "5H", "KS"], ["QC", "3S", "8C", "4D"]], discard=["9H"], stock=["4C", "6D"])
    # P0: the eight may be played on anything.
    assert s.legal_actions() == acts("5H", "8D", DRAW)
    s.apply(c("8D"))  # P0 plays the wild 8D; he now declares, still his turn
    assert field(s, "phase") == "declare"
    assert s.current_player == 0
    assert top(s) == "8D"
    assert s.legal_actions() == DECLARES
    assert hands(s)[0] == ["5H", "KS"]
    s.apply(DECLARE_S)  # P0 declares spades
    assert field(s, "phase") == "play"
    assert follow(s) == ("S", None)  # the declared suit; the eight's rank does not match
    assert s.current_player == 1
    # P1: 3S follows spades, 8C is his own wild card; QC and 4D (the eight's own suit) do not match.
    assert s.legal_actions() == acts("8C", "3S", DRAW)
    s.apply(c("3S"))  # P1 follows spades
    assert follow(s) == ("S", "3")
    assert s.current_player == 0
    assert s.legal_actions() == acts("KS", DRAW)


def test_declare_own_suit():
    s = deal(hands=[["8D", "5H"], ["4D", "QC"]], discard=["9H"], stock=["2C"])
    s.apply(c("8D"))  # P0 plays 8D
    s.apply(DECLARE_D)  # ... and declares its own suit, diamonds
    assert follow(s) == ("D", None)
    assert s.current_player == 1
    assert s.legal_actions() == acts("4D", DRAW)
    s.apply(c("4D"))  # P1 follows diamonds
    assert top(s) == "4D" and follow(s) == ("D", "4")


def test_wild_on_declared_suit_and_on_wild():
    # Spades were declared on 8C; P0 may play his own wild 8S (on a wild) but not 2D.
    s = deal(
        hands=[["8S", "2D"], ["3H", "3C"]],
        discard=["KD", "8C"],
        suit_to_follow="H",
        rank_to_follow=None,
        stock=["4S"],
    )
    assert s.legal_actions() == acts("8S", DRAW)
    s.apply(c("8S"))  # P0 plays his wild 8S on the wild 8C
    s.apply(DECLARE_C)  # and declares clubs
    assert follow(s) == ("C", None)
    assert s.legal_actions() == acts("3C", DRAW)  # P1: 3C follows clubs; 3H does not


def test_wild_rank_does_not_match_after_declare():
    # Under countdown a 7 is wild for a player whose count is 7 and a normal card for the others,
    # which makes "a wild card's rank does not match" visible: after P0's wild 7H, P1's 7D is not
    # playable, though it would match a 7 played as a normal card.
    s = deal(
        "countdown",
        hands=[["7H", "KD", "5S"], ["7D", "KC", "2S"]],
        discard=["4S"],
        stock=["3C", "6C"],
        countdown=[7, 8],
    )
    # P0: 7H is his wild card; 5S follows spades.
    assert s.legal_actions() == acts("7H", "5S", DRAW)
    s.apply(c("7H"))  # P0 plays his wild 7H
    assert field(s, "phase") == "declare" and s.current_player == 0
    s.apply(DECLARE_C)  # P0 declares clubs
    assert follow(s) == ("C", None)
    # P1 (count 8): only KC; 7D does not match the wild seven's rank.
    assert s.legal_actions() == acts("KC", DRAW)

    # The same seven played as a normal card (P0's count is 8) matches by rank.
    s = deal("countdown", hands=[["7D", "KC"], ["7S", "2H"]], discard=["5D"], countdown=[8, 8])
    s.apply(c("7D"))  # P0 plays 7D as a normal card: no declare phase
    assert field(s, "phase") == "play" and follow(s) == ("D", "7") and s.current_player == 1
    assert s.legal_actions() == acts("7S", DRAW)  # DRAW: the discard pile [5D] can be reshuffled


# =====================================================================================================
# Drawing: draw_when_able, max_draws_per_turn
# =====================================================================================================
def test_draw_when_able_true_then_play_any_legal_card():
    s = deal(hands=[["5H", "KS"], ["2C", "3C"]], discard=["9H"], stock=["JD", "9S"])
    # P0 may draw although 5H is playable (default draw_when_able: true).
    assert s.legal_actions() == acts("5H", DRAW)
    s.apply(DRAW)  # P0 draws 9S (the top of the stock)
    assert hands(s)[0] == ["5H", "9S", "KS"]
    assert field(s, "stock") == ["JD"]
    assert field(s, "draws_this_turn") == 1
    assert field(s, "voids")[0] == ["H"]  # drew with hearts to follow
    assert s.current_player == 0  # still his turn: he decides again
    assert s.legal_actions() == acts("5H", "9S", DRAW)
    s.apply(c("5H"))  # P0 plays 5H, not the card he drew
    assert hands(s)[0] == ["9S", "KS"]
    assert top(s) == "5H" and follow(s) == ("H", "5")
    assert s.current_player == 1
    assert field(s, "draws_this_turn") == 0
    assert field(s, "voids")[0] == []  # a play clears the voids


def test_draw_when_able_false():
    rules = {"draw_when_able": False}
    s = deal(rules, hands=[["5H", "KS"], ["2C", "3C"]], discard=["9H"], stock=["5C", "9S"])
    # P0 holds a legal card, so he may not draw.
    assert s.legal_actions() == acts("5H")
    s.apply(c("5H"))  # P0 plays 5H
    # P1 holds nothing legal on 5H: he must draw.
    assert s.legal_actions() == [DRAW]
    s.apply(DRAW)  # P1 draws 9S: still nothing legal
    assert hands(s)[1] == ["2C", "3C", "9S"]
    assert s.legal_actions() == [DRAW]
    s.apply(DRAW)  # P1 draws 5C, which matches the five: no more drawing, no passing
    assert hands(s)[1] == ["2C", "3C", "5C", "9S"]
    assert s.legal_actions() == acts("5C")
    s.apply(c("5C"))  # P1 plays it
    assert s.current_player == 0 and follow(s) == ("C", "5")


def test_max_draws_null_draw_until_playable():
    s = deal(hands=[["KS"], ["2H"]], discard=["9H"], stock=["7H", "2C", "3D", "4C"])
    for k, card in enumerate(["4C", "3D", "2C"], start=1):
        assert s.legal_actions() == [DRAW]
        s.apply(DRAW)  # P0 draws an unplayable card, and may draw again (no limit)
        assert card in hands(s)[0]
        assert field(s, "draws_this_turn") == k
        assert s.current_player == 0
    s.apply(DRAW)  # P0 draws 7H, playable
    assert hands(s)[0] == ["2C", "4C", "3D", "7H", "KS"]
    # The stock is empty and the discard pile is only the top card: no draw, and no pass while
    # holding a legal card.
    assert field(s, "stock") == []
    assert s.legal_actions() == acts("7H")
    s.apply(c("7H"))
    assert s.current_player == 1


def test_draw_one_then_turn_ends():
    s = deal("draw_one", hands=[["KS", "5H"], ["2C", "3S"]], discard=["9H"], stock=["2D", "3D"])
    assert s.legal_actions() == acts("5H", DRAW)
    s.apply(DRAW)  # P0 draws 3D: the limit of one draw is reached
    assert hands(s)[0] == ["3D", "5H", "KS"]
    # He may still play any legal card, or pass.
    assert s.legal_actions() == acts("5H", PASS)
    s.apply(PASS)  # P0 passes: his turn ends
    assert s.current_player == 1
    assert field(s, "passes") == 0  # a turn with a draw is not a pass for the blocked-hand rule
    assert field(s, "draws_this_turn") == 0
    # P1: nothing legal; one draw, then a pass.
    assert s.legal_actions() == [DRAW]
    s.apply(DRAW)  # P1 draws 2D: unplayable
    assert s.legal_actions() == [PASS]
    s.apply(PASS)
    assert s.current_player == 0 and field(s, "stock") == []


def test_draw_one_drawn_card_playable():
    s = deal("draw_one", hands=[["KS"], ["2C"]], discard=["9H"], stock=["2D", "4H"])
    s.apply(DRAW)  # P0 draws 4H
    assert s.legal_actions() == acts("4H", PASS)
    s.apply(c("4H"))  # and plays it
    assert top(s) == "4H" and s.current_player == 1 and hands(s)[0] == ["KS"]


def test_draw_three_then_pass():
    s = deal("draw_three", hands=[["KS"], ["2C"]], discard=["9H"], stock=["7H", "2D", "3D", "4C", "5C"])
    s.apply(DRAW)  # P0 draws 5C (1)
    assert s.legal_actions() == [DRAW]
    s.apply(DRAW)  # P0 draws 4C (2)
    assert s.legal_actions() == [DRAW]
    s.apply(DRAW)  # P0 draws 3D (3): the limit; nothing legal
    assert s.legal_actions() == [PASS]
    assert field(s, "draws_this_turn") == 3
    s.apply(PASS)  # P0 passes
    assert hands(s)[0] == ["4C", "5C", "3D", "KS"]
    assert field(s, "stock") == ["7H", "2D"]
    assert s.current_player == 1 and field(s, "passes") == 0


def test_draw_three_third_card_playable():
    s = deal("draw_three", hands=[["KS", "5H"], ["2C"]], discard=["9H"], stock=["7H", "9C", "4C", "5C"])
    s.apply(DRAW)  # P0 draws 5C (he could have played 5H)
    s.apply(DRAW)  # 4C
    s.apply(DRAW)  # 9C: matches the nine
    assert s.legal_actions() == acts("9C", "5H", PASS)
    s.apply(c("5H"))  # P0 plays 5H, not a drawn card
    assert hands(s)[0] == ["4C", "5C", "9C", "KS"] and s.current_player == 1


# =====================================================================================================
# Empty stock: reshuffle, pass, end
# =====================================================================================================
def test_reshuffle_discard_except_top():
    s = deal(hands=[["KS", "2D"], ["3C", "4C"]], discard=["5C", "6H", "JD", "9H"], stock=[])
    assert s.legal_actions() == [DRAW]  # the stock is empty, but the discard pile can be reshuffled
    s.apply(DRAW)  # P0: reshuffle 5C 6H JD into the stock, draw one
    d = s.to_dict()
    assert d["discard"] == ["9H"]  # the top card stays
    drawn = [x for x in d["hands"][0] if x not in ("KS", "2D")]
    assert len(drawn) == 1 and len(d["stock"]) == 2
    assert sorted(drawn + d["stock"]) == ["5C", "6H", "JD"]
    # The reshuffle is seeded: the same position and seed give the same stock.
    s2 = deal(hands=[["KS", "2D"], ["3C", "4C"]], discard=["5C", "6H", "JD", "9H"], stock=[])
    s2.apply(DRAW)
    assert s2.to_dict() == d


def test_reshuffle_exact_then_nothing_left_then_blocked():
    s = deal(hands=[["KS", "2D"], ["3C", "4C"]], discard=["5C", "9H"], stock=[])
    s.apply(DRAW)  # P0: the discard pile below the top (5C) becomes the stock; he draws 5C
    assert hands(s)[0] == ["5C", "2D", "KS"]
    assert field(s, "discard") == ["9H"] and field(s, "stock") == []
    # Nothing left to reshuffle and nothing legal: he passes.
    assert s.legal_actions() == [PASS]
    s.apply(PASS)
    assert s.current_player == 1 and field(s, "passes") == 0  # he drew this turn
    assert s.legal_actions() == [PASS]  # P1: 3C 4C do not match 9H; no stock
    s.apply(PASS)  # P1 passes (1 pass in a row)
    assert field(s, "passes") == 1 and s.current_player == 0
    s.apply(PASS)  # P0 passes (2 in a row = every player): the hand is blocked
    # P0 holds KS 2D 5C = 17, P1 holds 3C 4C = 7: P1 wins the difference.
    assert_over(s, 1, [0, 10])


def test_reshuffle_nothing_to_reshuffle_must_play():
    s = deal(hands=[["KS", "9S"], ["3C"]], discard=["9H"], stock=[])
    assert s.legal_actions() == acts("9S")  # no draw, no pass while holding a legal card


def test_stock_exhausted_pass_no_reshuffle():
    s = deal("no_reshuffle", hands=[["KS", "2D"], ["3C", "9C"]], discard=["5C", "6H", "JD", "9H"], stock=[])
    assert s.legal_actions() == [PASS]  # no draw: the discard pile is not reshuffled
    s.apply(PASS)  # P0 passes
    assert field(s, "discard") == ["5C", "6H", "JD", "9H"] and field(s, "stock") == []
    assert hands(s)[0] == ["2D", "KS"]
    assert field(s, "passes") == 1 and s.current_player == 1
    assert field(s, "voids")[0] == ["H"]  # passed with hearts to follow
    assert s.legal_actions() == acts("9C")  # P1 must play his legal card
    s.apply(c("9C"))  # P1 plays 9C: the pass count starts again
    assert field(s, "passes") == 0
    assert s.legal_actions() == [PASS]
    s.apply(PASS)  # P0 passes again
    s.apply(c("3C"))  # P1 plays his last card and wins; P0 holds KS 2D = 12
    assert_over(s, 1, [0, 12])


def test_stock_exhausted_end_pass_ends_hand():
    rules = {"stock_exhausted": "end"}
    hand_list = [["KS", "2D"], ["3C", "4C"], ["9S", "AS"]]
    s = deal(rules, hands=hand_list, discard=["5C", "9H"], stock=[])
    # P0 would have to draw from the empty stock: he passes instead (no reshuffle) ...
    assert s.legal_actions() == [PASS]
    s.apply(PASS)
    # ... and that ends the hand, scored as blocked: 12, 7, 10 points -> P1 gets 5 + 3.
    assert_over(s, 1, [0, 8, 0])
    assert field(s, "hands_played") == 1
    # The same under five_hands (penalty scoring): each adds his own points.
    s = deal("five_hands", hands=hand_list, discard=["5C", "9H"], stock=[])
    s.apply(PASS)
    assert_over(s, 1, [12, 7, 10])


def test_stock_exhausted_end_after_last_draw():
    s = deal("five_hands", hands=[["KS", "2D"], ["3C", "4C"]], discard=["9H"], stock=["6S"])
    s.apply(DRAW)  # P0 draws the last card of the stock (6S, unplayable)
    assert s.legal_actions() == [PASS]  # he would have to draw again: he passes, ending the hand
    s.apply(PASS)
    assert_over(s, 1, [18, 7])


def test_stock_exhausted_end_must_play_legal_card():
    s = deal({"stock_exhausted": "end"}, hands=[["9S", "KS"], ["3C"]], discard=["9H"], stock=[])
    assert s.legal_actions() == acts("9S")


def test_stock_exhausted_end_pass_at_draw_limit_does_not_end():
    # P0 has made his 3 draws: his pass is owed to the limit, not to the empty stock.
    s = deal("five_hands", hands=[["KS", "2D"], ["3C", "4C"]], discard=["9H"], stock=[], draws_this_turn=3)
    assert s.legal_actions() == [PASS]
    s.apply(PASS)
    assert not s.hand_over and s.current_player == 1 and field(s, "phase") == "play"


def test_stock_exhausted_end_penalty_draw_ends_hand():
    rules = {"stock_exhausted": "end", "effects": {"2": {"draw": 2}}}
    s = deal(rules, hands=[["2H", "KS"], ["5C", "6C"]], discard=["7H"], stock=["9D"])
    s.apply(c("2H"))  # P0 plays 2H: P1 owes 2 cards
    assert field(s, "pending_draw") == 2 and s.current_player == 1
    s.apply(DRAW)  # P1 draws 9D, then finds the stock empty: the hand ends, scored as blocked
    assert hands(s) == canon(["KS"], ["5C", "6C", "9D"])
    assert_over(s, 0, [10, 0])  # 10 against 20


def test_penalty_draw_refills_stock_by_reshuffle():
    rules = {"effects": {"2": {"draw": 2}}}
    s = deal(rules, hands=[["2H", "KS"], ["5C", "6C"]], discard=["5S", "7H"], stock=[])
    s.apply(c("2H"))  # P0 plays 2H: pending 2
    s.apply(DRAW)  # P1 takes the penalty: 5S 7H are reshuffled into the stock, both drawn
    assert hands(s) == canon(["KS"], ["5C", "6C", "5S", "7H"])
    assert field(s, "discard") == ["2H"] and field(s, "stock") == []
    assert field(s, "pending_draw") == 0 and s.current_player == 0


def test_penalty_draw_rest_forgiven_without_reshuffle():
    rules = {"preset": "no_reshuffle", "effects": {"2": {"draw": 2}}}
    s = deal(rules, hands=[["2H", "KS"], ["5C", "6C"]], discard=["9D", "7H"], stock=["4S"])
    s.apply(c("2H"))  # P0 plays 2H: pending 2
    s.apply(DRAW)  # P1 draws 4S; the rest of the penalty is forgiven
    assert hands(s)[1] == ["5C", "6C", "4S"]
    assert field(s, "pending_draw") == 0 and s.current_player == 0 and field(s, "passes") == 0
    # A penalty turn that draws nothing counts as a pass.
    s = deal(rules, hands=[["2H", "KS"], ["5C", "6C"]], discard=["9D", "7H"], stock=[])
    s.apply(c("2H"))  # P0 plays 2H
    s.apply(DRAW)  # P1 owes 2 but the stock is empty: nothing drawn, a pass
    assert hands(s)[1] == ["5C", "6C"] and field(s, "passes") == 1
    assert s.legal_actions() == [PASS]  # P0: KS does not match 2H
    s.apply(PASS)  # second pass in a row: blocked; P0 10 against P1 11
    assert_over(s, 0, [1, 0])
    # A penalty turn drawing nothing can itself complete the blocked count (position from a dict).
    s = deal(rules, hands=[["KS"], ["5C", "6C"]], discard=["2H"], stock=[], current_player=1, pending_draw=2, passes=1)
    s.apply(DRAW)  # P1 draws nothing: the second pass in a row
    assert_over(s, 0, [1, 0])



# =====================================================================================================
# Illegal actions
# =====================================================================================================
def _check_illegal(s, action):
    before = s.to_dict()
    legal = s.legal_actions()
    with pytest.raises(IllegalActionError) as info:
        s.apply(action)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert str(action) in message
    for a in legal:
        assert str(a) in message
    assert s.to_dict() == before
    assert s.legal_actions() == legal


def test_illegal_actions_change_nothing():
    s = deal(hands=[["5H", "KS"], ["2C", "3C"]], discard=["9H"], stock=["2D", "4D"])
    assert s.legal_actions() == acts("5H", DRAW)
    # KS matches nothing; 2D is in the stock, 2C in P1's hand; P0 may draw, so no pass; no wild was
    # played, so no declaration; no last card or stop rule; 60 and -1 are out of range.
    for action in (c("KS"), c("2D"), c("2C"), PASS, DECLARE_S, ANNOUNCE, STOP, 60, -1):
        _check_illegal(s, action)
    with pytest.raises(IllegalActionError):
        s.apply(True)  # not an action id
    with pytest.raises(IllegalActionError):
        s.apply("30")
    s.apply(c("5H"))  # the state still plays on normally
    assert s.current_player == 1


def test_illegal_in_declare_and_announce_phases():
    s = deal("last_card", hands=[["8D", "9C"], ["KD", "2S"]], discard=["9H"], stock=["3C"])
    s.apply(c("8D"))  # declare phase
    for action in (c("9C"), DRAW, PASS, ANNOUNCE):
        _check_illegal(s, action)
    s.apply(DECLARE_C)  # announce phase
    for action in (c("9C"), DRAW, DECLARE_C, STOP):
        _check_illegal(s, action)


def test_illegal_draw_when_not_able():
    s = deal({"draw_when_able": False}, hands=[["5H", "KS"], ["2C"]], discard=["9H"], stock=["2D"])
    _check_illegal(s, DRAW)


def test_illegal_after_hand_over():
    s = deal(hands=[["5H"], ["KD"]], discard=["9H"], stock=["2D"])
    s.apply(c("5H"))
    before = s.to_dict()
    for action in (DRAW, PASS, c("KD")):
        with pytest.raises(IllegalActionError):
            s.apply(action)
    assert s.to_dict() == before
