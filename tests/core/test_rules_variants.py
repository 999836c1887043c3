"""Fixed deals played move by move: special cards (effects), last card, stop the round, the
starter (bury or dealer declares) and two decks, with the exact outcome of every important move.

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
    DECLARE_H,
    DECLARE_S,
    DECLARES,
    acts,
    assert_over,
    c,
    canon,
    deal,
    field,
    find_seed,
    follow,
    hands,
    top,
)


# =====================================================================================================
# Special cards (effects)
# =====================================================================================================
def test_skip_three_players():
    s = deal("special_cards", hands=[["QH", "5C"], ["9H", "2D"], ["4H", "6S"]], discard=["7H"], stock=["3S"])
    s.apply(c("QH"))  # P0 plays QH: P1 misses his turn
    assert s.current_player == 2 and follow(s) == ("H", "Q")
    s.apply(c("4H"))  # P2 plays 4H
    assert s.current_player == 0


def test_skip_two_players_same_player_again():
    s = deal("special_cards", hands=[["QH", "5H", "KC"], ["9S", "2D"]], discard=["7H"], stock=["3S"])
    s.apply(c("QH"))  # P0 plays QH: P1 is skipped, P0 plays again
    assert s.current_player == 0 and field(s, "phase") == "play"
    assert s.legal_actions() == acts("5H", DRAW)
    s.apply(c("5H"))  # P0 plays again
    assert s.current_player == 1


def test_reverse_three_players():
    s = deal(
        "special_cards", hands=[["AH", "5D", "KC"], ["4D", "9C"], ["4H", "AD", "6S"]], discard=["7H"], stock=["3S"]
    )
    s.apply(c("AH"))  # P0 plays AH: the direction reverses, P2 is next
    assert field(s, "direction") == -1 and s.current_player == 2
    assert s.legal_actions() == acts("4H", "AD", DRAW)
    s.apply(c("AD"))  # P2 reverses again: clockwise, P0 is next
    assert field(s, "direction") == 1 and s.current_player == 0
    s.apply(c("5D"))  # P0 plays 5D
    assert s.current_player == 1


def test_reverse_two_players():
    s = deal("special_cards", hands=[["AH", "5H"], ["9H", "2C"]], discard=["7H"])
    s.apply(c("AH"))  # P0 plays AH: the direction flips, P1 still plays next
    assert field(s, "direction") == -1 and s.current_player == 1
    s.apply(c("9H"))  # P1 plays
    assert s.current_player == 0 and field(s, "direction") == -1


def test_draw_two_stacking_and_taking():
    s = deal(
        "special_cards",
        hands=[["2H", "KC"], ["2S", "8H", "5H", "9D"], ["6C", "4D", "TD"]],
        discard=["7H"],
        stock=["3C", "4C", "5D", "6D", "7C"],
    )
    s.apply(c("2H"))  # P0 plays 2H: P1 owes 2
    assert field(s, "pending_draw") == 2 and s.current_player == 1 and follow(s) == ("H", "2")
    # P1 may answer only with a matching draw card; not 5H (no effect), not the wild 8H.
    assert s.legal_actions() == acts("2S", DRAW)
    with pytest.raises(IllegalActionError):
        s.apply(c("8H"))  # a wild card is no defence
    s.apply(c("2S"))  # P1 answers with 2S: the total 4 passes to P2
    assert field(s, "pending_draw") == 4 and s.current_player == 2 and follow(s) == ("S", "2")
    assert s.legal_actions() == [DRAW]
    s.apply(DRAW)  # P2 takes the whole penalty (4 cards) and his turn ends
    assert hands(s)[2] == ["4C", "6C", "7C", "4D", "5D", "6D", "TD"]
    assert field(s, "stock") == ["3C"]
    assert field(s, "pending_draw") == 0 and s.current_player == 0 and field(s, "draws_this_turn") == 0
    assert field(s, "voids")[2] == []  # a penalty is not a voluntary draw
    assert field(s, "passes") == 0
    assert s.legal_actions() == [DRAW]  # P0's KC does not match 2S; the penalty is gone


def test_draw_defence_by_suit_action_cards():
    s = deal(
        "action_cards",
        hands=[["2H", "KC"], ["3H", "2D", "9C"], ["6C", "4D"]],
        discard=["7H"],
        stock=["3C", "4C", "5D", "6D", "7C", "9S", "TS", "JS"],
    )
    s.apply(c("2H"))  # P0 plays 2H: pending 2
    assert s.legal_actions() == acts("2D", "3H", DRAW)  # 2D by rank, 3H (draw 3) by suit
    s.apply(c("3H"))  # P1 answers with 3H: pending 5
    assert field(s, "pending_draw") == 5 and s.current_player == 2
    s.apply(DRAW)  # P2 takes 5
    assert hands(s)[2] == ["6C", "7C", "4D", "6D", "9S", "TS", "JS"]
    assert s.current_player == 0


def test_card_specific_effect_overrides_rank():
    rules = {"effects": {"Q": "skip", "QS": {"draw": 5}}}
    s = deal(
        rules,
        hands=[["QS", "5C"], ["QD", "9S"], ["QC", "KH"]],
        discard=["7S"],
        stock=["2C", "3C", "4C", "5D", "6D", "7D"],
    )
    s.apply(c("QS"))  # P0 plays QS: its own entry (draw 5) replaces the rank's skip
    assert s.current_player == 1 and field(s, "pending_draw") == 5
    assert s.legal_actions() == [DRAW]  # QD is a skip card, no defence
    s.apply(DRAW)  # P1 takes 5
    assert hands(s)[1] == ["3C", "4C", "5D", "6D", "7D", "QD", "9S"]
    assert s.current_player == 2 and field(s, "stock") == ["2C"]
    s.apply(c("QC"))  # P2 plays QC (rank match): a skip, P0 misses his turn
    assert s.current_player == 1 and field(s, "pending_draw") == 0


def test_uno_like_queen_of_spades_draw_five_stacks():
    s = deal(
        "uno_like",
        hands=[["2S", "QH", "9C"], ["QS", "4D"], ["6C", "5C"]],
        discard=["7S"],
        stock=["AC", "2C", "3C", "4C", "5D", "6D", "7D", "9D"],
    )
    s.apply(c("2S"))  # P0 plays 2S: pending 2
    assert s.legal_actions() == acts("QS", DRAW)  # QS (draw 5) matches the suit
    s.apply(c("QS"))  # P1 answers: pending 7
    assert field(s, "pending_draw") == 7 and s.current_player == 2
    s.apply(DRAW)  # P2 takes all 7
    assert hands(s)[2] == ["2C", "3C", "4C", "5C", "6C", "5D", "6D", "7D", "9D"]
    assert s.current_player == 0 and field(s, "stock") == ["AC"]
    s.apply(c("QH"))  # P0 plays QH (rank): no effect under uno_like
    assert s.current_player == 1 and field(s, "pending_draw") == 0


def test_any_next():
    s = deal("action_cards", hands=[["AH", "5C"], ["KD", "9S", "6C"]], discard=["7H"], stock=["TD", "4S"])
    s.apply(c("AH"))  # P0 plays AH: anything may be played on it
    assert follow(s) == ("*", "A") and s.current_player == 1
    assert s.legal_actions() == acts("6C", "KD", "9S", DRAW)
    s.apply(DRAW)  # P1 draws 4S: the ace still lies on top
    assert follow(s) == ("*", "A")
    assert field(s, "voids")[1] == []  # no suit was to be followed
    assert s.legal_actions() == acts("6C", "KD", "4S", "9S", DRAW)
    s.apply(c("6C"))  # P1 plays 6C: clubs or a six from now on
    assert follow(s) == ("C", "6") and s.current_player == 0
    assert s.legal_actions() == acts("5C", DRAW)
    s.apply(c("5C"))  # P0 goes out
    assert_over(s, 0, [10 + 9 + 4, 0])


def test_any_next_from_state_dict():
    s = deal("action_cards", hands=[["KD", "9S"], ["2C"]], discard=["AH"], suit_to_follow="*", stock=["3D"])
    assert follow(s) == ("*", "A")
    assert s.legal_actions() == acts("KD", "9S", DRAW)


def test_own_wild_card_is_no_defence_countdown():
    # Under countdown with draw-two cards, a two is P1's wild card (count 2): he may not answer
    # P0's 2H with it; P2 (count 8) may answer with his ordinary 2S.
    rules = {"preset": "countdown", "effects": {"2": {"draw": 2}}}
    s = deal(
        rules,
        hands=[["2H", "KC"], ["2D", "2C", "9H"], ["2S", "4H"]],
        discard=["7H"],
        stock=["3C", "4C", "5C"],
        countdown=[8, 2, 8],
    )
    s.apply(c("2H"))  # P0 plays 2H: P1 owes 2
    assert s.legal_actions() == [DRAW]
    s.apply(DRAW)  # P1 takes 5C 4C
    assert hands(s)[1] == ["2C", "4C", "5C", "2D", "9H"]
    assert s.current_player == 2 and field(s, "pending_draw") == 0
    s = deal(rules, hands=[["2H", "KC"], ["9S", "2S"], ["3H"]], discard=["7H"], stock=["3C"], countdown=[8, 8, 2])
    s.apply(c("2H"))  # P0 plays 2H
    assert s.legal_actions() == acts("2S", DRAW)  # P1 (count 8): 2S is an ordinary draw-two card


@pytest.mark.parametrize("last", ["QH", "2H", "AH"])
def test_effect_not_applied_to_last_card(last):
    s = deal("special_cards", hands=[[last], ["KD"], ["3S"]], discard=["7H"], stock=["4C", "5C"])
    s.apply(c(last))  # P0 goes out with a special card: no skip, draw or reverse follows
    assert_over(s, 0, [13, 0, 0])
    assert field(s, "pending_draw") == 0 and field(s, "direction") == 1
    assert hands(s) == [[], ["KD"], ["3S"]]


def test_starter_effects_do_not_apply():
    # Seeded deals under action_cards whose starter is a special card: it has no effect.
    seen = set()
    for seed in range(400):
        s = State.new(3, "action_cards", seed=seed)
        d = s.to_dict()
        starter = d["discard"][-1]
        assert len(d["discard"]) == 1
        if starter[0] in "A23JQ":
            seen.add(starter[0])
            assert d["current_player"] == (d["dealer"] + 1) % 3  # no skip, no reverse
            assert d["direction"] == 1 and d["pending_draw"] == 0  # no draw
            assert follow(s) == (starter[1], starter[0])  # an ace starter is not any_next
    assert seen == set("A23JQ")


# =====================================================================================================
# Last card
# =====================================================================================================
LAST = dict(hands=[["5H", "9C"], ["KD", "2S"]], discard=["9H"], stock=["3C", "4C", "6D"])


def test_last_card_announce():
    s = deal("last_card", **LAST)
    s.apply(c("5H"))  # P0 is left with one card: he must announce
    assert field(s, "phase") == "announce" and s.current_player == 0
    assert s.legal_actions() == [PASS, ANNOUNCE]
    s.apply(ANNOUNCE)  # "last card!"
    assert field(s, "phase") == "play" and s.current_player == 1
    assert hands(s)[0] == ["9C"] and field(s, "stock") == ["3C", "4C", "6D"]


def test_last_card_not_announced_draws_two():
    s = deal("last_card", **LAST)
    s.apply(c("5H"))  # P0 left with one card
    s.apply(PASS)  # he does not announce: he draws 2 (6D, then 4C)
    assert hands(s)[0] == ["4C", "9C", "6D"]
    assert field(s, "stock") == ["3C"]
    assert field(s, "phase") == "play" and s.current_player == 1
    assert field(s, "voids")[0] == []  # a penalty is not a voluntary draw


def test_last_card_after_wild_declare_first():
    s = deal("last_card", hands=[["8D", "9C"], ["KD", "2S"]], discard=["9H"], stock=["3C"])
    s.apply(c("8D"))  # P0 plays a wild card, leaving one card
    assert field(s, "phase") == "declare"
    s.apply(DECLARE_S)  # declare first
    assert field(s, "phase") == "announce" and s.current_player == 0
    s.apply(ANNOUNCE)  # then announce
    assert follow(s) == ("S", None) and s.current_player == 1


def test_last_card_then_skip():
    rules = {"last_card_call": True, "effects": {"Q": "skip"}}
    s = deal(rules, hands=[["QH", "9C"], ["KD"], ["2S"]], discard=["9H"], stock=["3C"])
    s.apply(c("QH"))  # P0 plays QH, leaving one card
    assert field(s, "phase") == "announce" and s.current_player == 0
    s.apply(ANNOUNCE)  # announce, then the skip takes effect
    assert s.current_player == 2


def test_last_card_with_draw_card_pending():
    rules = {"last_card_call": True, "effects": {"2": {"draw": 2}}}
    s = deal(rules, hands=[["2H", "9C"], ["KD", "2D"]], discard=["9H"], stock=["3C", "4C", "5S", "6S"])
    s.apply(c("2H"))  # P0 plays 2H, leaving one card
    assert field(s, "pending_draw") == 2  # owed by the next player
    s.apply(PASS)  # no announcement: P0 draws 6S 5S
    assert hands(s)[0] == ["9C", "5S", "6S"]
    assert s.current_player == 1 and field(s, "pending_draw") == 2
    assert s.legal_actions() == acts("2D", DRAW)


def test_last_card_going_out_needs_no_announcement():
    s = deal("last_card", hands=[["5H"], ["KD", "2S"]], discard=["9H"])
    s.apply(c("5H"))
    assert_over(s, 0, [12, 0])


def test_last_card_penalty_on_empty_stock_under_end():
    rules = {"last_card_call": True, "stock_exhausted": "end"}
    s = deal(rules, hands=[["5H", "9C"], ["KD", "2S"]], discard=["9H"], stock=[])
    s.apply(c("5H"))
    s.apply(PASS)  # the penalty draw finds the stock empty: the hand ends, scored as blocked
    assert_over(s, 0, [3, 0])  # 9 against 12


# =====================================================================================================
# Stop the round
# =====================================================================================================
def test_stop_lowest_caller_wins():
    s = deal("stop_the_round", hands=[["2C", "3D"], ["AS", "KD"]], discard=["9H"], stock=["4S", "5S"])
    # P0's hand is worth 5: he may call stop at the start of his turn.
    assert s.legal_actions() == [DRAW, STOP]
    s.apply(STOP)  # scored as a blocked hand: 5 against 11
    assert_over(s, 0, [6, 0])
    assert hands(s) == canon(["2C", "3D"], ["AS", "KD"])


def test_stop_strictly_lowest_wins_whoever_called():
    s = deal("stop_the_round", hands=[["2C", "3D"], ["AS", "2S"]], discard=["9H"], stock=["4S"])
    s.apply(STOP)  # P0 (5) calls, but P1 holds 3
    assert_over(s, 1, [0, 2])
    s = deal("stop_the_round", hands=[["2C", "3D"], ["AS", "4S"]], discard=["9H"], stock=["4H"])
    s.apply(STOP)  # tie at 5
    assert_over(s, None, [0, 0])


def test_stop_with_penalty_scoring():
    s = deal(
        {"preset": "stop_the_round", "scoring": "penalty"},
        hands=[["2C", "3D"], ["AS", "KD"]],
        discard=["9H"],
        stock=["4S"],
    )
    s.apply(STOP)
    assert_over(s, 0, [5, 11])


def test_stop_only_at_turn_start_and_under_threshold():
    s = deal("stop_the_round", hands=[["2C", "3D", "9S"], ["AS", "KD"]], discard=["9H"], stock=["4S", "5S"])
    assert s.legal_actions() == acts("9S", DRAW)  # 14 points: no stop
    s = deal("stop_the_round", hands=[["2C", "2D"], ["AS", "KD"]], discard=["2H"], stock=["4S", "AH"])
    assert s.legal_actions() == acts("2C", "2D", DRAW, STOP)  # 4 points: stop, also holding legal cards
    s.apply(DRAW)  # P0 draws AH: 5 points, but no longer the start of his turn
    assert s.legal_actions() == acts("2C", "2D", "AH", DRAW)
    s = deal("standard", hands=[["2C", "2D"], ["AS", "KD"]], discard=["2H"], stock=["4S"])
    assert STOP not in s.legal_actions()  # the rule is off by default
    with pytest.raises(IllegalActionError):
        s.apply(STOP)


def test_stop_not_while_penalty_pending():
    rules = {"preset": "stop_the_round", "effects": {"2": {"draw": 2}}}
    s = deal(rules, hands=[["2H", "KS"], ["AS", "3D"]], discard=["9H"], stock=["4C", "5C", "6C"])
    s.apply(c("2H"))  # P0 plays 2H: P1 (4 points) owes 2
    assert s.legal_actions() == [DRAW]
    s.apply(DRAW)  # P1 takes 6C 5C
    assert s.current_player == 0
    assert s.legal_actions() == [DRAW]  # P0 has 10 points: no stop


# =====================================================================================================
# Starter: bury or dealer declares
# =====================================================================================================
def _eight_starter_seed(n):
    def pred(seed):
        d = State.new(n, "dealer_declares", seed=seed).to_dict()
        return d["phase"] == "declare" and d["stock"][-1][0] != "8"

    return find_seed(pred)


@pytest.mark.parametrize("n", [2, 3])
def test_starter_wild_bury(n):
    seed = _eight_starter_seed(n)
    declared = State.new(n, "dealer_declares", seed=seed).to_dict()
    eight = declared["discard"][-1]
    assert eight[0] == "8"
    buried = State.new(n, "standard", seed=seed).to_dict()
    # The same deal; the eight goes into the middle of the stock and the next card is turned.
    assert buried["hands"] == declared["hands"] and buried["dealer"] == declared["dealer"]
    stock = declared["stock"]
    mid = len(stock) // 2
    assert buried["discard"] == [stock[-1]]
    assert buried["stock"] == stock[:mid] + [eight] + stock[mid:-1]
    assert buried["phase"] == "play" and buried["current_player"] == (buried["dealer"] + 1) % n
    assert (buried["suit_to_follow"], buried["rank_to_follow"]) == (stock[-1][1], stock[-1][0])


def test_starter_never_an_eight_under_bury():
    for seed in range(100):
        assert top(State.new(2, "standard", seed=seed))[0] != "8"


@pytest.mark.parametrize("n", [2, 3])
def test_dealer_declares(n):
    seed = _eight_starter_seed(n)
    s = State.new(n, "dealer_declares", seed=seed)
    d = s.to_dict()
    dealer = d["dealer"]
    assert d["phase"] == "declare" and s.current_player == dealer  # the dealer names the suit
    assert d["rank_to_follow"] is None
    assert s.legal_actions() == DECLARES
    before = d["hands"]
    s.apply(DECLARE_H)  # the dealer declares hearts (no card played)
    d = s.to_dict()
    assert d["phase"] == "play" and s.current_player == (dealer + 1) % n  # the dealer's left plays first
    assert (d["suit_to_follow"], d["rank_to_follow"]) == ("H", None)
    assert d["hands"] == before and len(d["discard"]) == 1
    hand = [c(x) for x in d["hands"][s.current_player]]
    expected = sorted({x for x in hand if x // 13 == 2 or x % 13 == 7})
    assert [a for a in s.legal_actions() if a < 52] == expected  # hearts or eights only


def test_dealer_declares_from_state_dict():
    s = deal(
        "dealer_declares",
        hands=[["5S", "KD"], ["3H", "4C"], ["9S", "9D"]],
        discard=["8C"],
        phase="declare",
        current_player=1,
        dealer=1,
        stock=["2D"],
    )
    s.apply(DECLARE_S)  # dealer P1 declares spades
    assert s.current_player == 2 and follow(s) == ("S", None)
    assert s.legal_actions() == acts("9S", DRAW)


# =====================================================================================================
# Two decks
# =====================================================================================================
def test_two_decks_duplicates():
    s = deal({"decks": 2}, hands=[["5H", "5H", "KC"], ["9H", "9H", "2S"]], discard=["5D"], stock=["3C"])
    assert hands(s)[0] == ["KC", "5H", "5H"]
    assert s.legal_actions() == acts("5H", DRAW)  # one action for both copies
    s.apply(c("5H"))  # P0 plays one copy
    assert hands(s)[0] == ["KC", "5H"]
    s.apply(c("9H"))  # P1 plays one of his 9H
    s.apply(c("5H"))  # P0 plays the other copy
    assert hands(s) == [["KC"], ["9H", "2S"]]
    assert field(s, "discard") == ["5D", "5H", "9H", "5H"]


def test_six_players_two_decks_scoring():
    s = deal(hands=[["7S"], ["KC", "KC"], ["QD", "QD"], ["2C"], ["2C"], ["AS"]], discard=["7H"], stock=["7H"])
    s.apply(c("7S"))  # P0 goes out; duplicates count twice
    assert_over(s, 0, [20 + 20 + 2 + 2 + 1, 0, 0, 0, 0, 0])


def test_deck_count_limits_in_state_dict():
    with pytest.raises(ValueError, match="5H"):
        deal(hands=[["5H", "5H"], ["KC"]], discard=["9H"])  # one deck with 2 players
    with pytest.raises(ValueError, match="5H"):
        deal(hands=[["5H", "5H"], ["5H"], ["2C"], ["2C"], ["AS"], ["AS"]], discard=["9H"])  # 3 copies
