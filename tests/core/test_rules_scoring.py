"""Fixed deals played move by move: blocked hands, going out and card points, winning a match and
the countdown, with the exact outcome of every important move.

Each test builds a position with ``State.from_dict`` (or a seeded ``State.new``),
plays it with ``state.apply`` and checks hands, the top card, the suit and rank to
follow, the player to act, the phase, draw penalties, legal actions, scores and
the match result. Every rule and variant of docs/rules.md is covered across the
``test_rules_*.py`` files; the section headers follow docs/rules.md. Public API only.
The helpers and reminders are in ``rules_helpers.py``.
"""

from __future__ import annotations

import pytest

from c8env import DRAW, PASS, State
from tests.core.rules_helpers import (
    DECLARE_C,
    DECLARE_D,
    DECLARE_H,
    DECLARES,
    acts,
    assert_over,
    c,
    canon,
    card_count,
    deal,
    field,
    find_seed,
    follow,
    hands,
    top,
)

# =====================================================================================================
# Blocked hand
# =====================================================================================================
BLOCKED = dict(discard=["7D"], stock=[])  # nobody below holds a diamond or a seven


def _pass_all(s, n):
    for k in range(n):
        assert s.legal_actions() == [PASS]
        s.apply(PASS)  # each player passes in turn
        if k < n - 1:
            assert field(s, "passes") == k + 1 and not s.hand_over


def test_blocked_lowest_wins_differences():
    s = deal("no_reshuffle", hands=[["5H", "3C"], ["KS", "2S"], ["QC", "TH"]], **BLOCKED)  # 8, 12, 20
    _pass_all(s, 3)
    assert_over(s, 0, [4 + 12, 0, 0])
    assert not s.match_over


def test_blocked_tie_nobody_scores():
    s = deal("no_reshuffle", hands=[["5H", "3C"], ["5S", "3S"], ["QC", "TH"]], **BLOCKED)  # 8, 8, 20
    _pass_all(s, 3)
    assert_over(s, None, [0, 0, 0])


def test_blocked_penalty_scoring_each_adds_own():
    rules = {"preset": "no_reshuffle", "scoring": "penalty"}
    s = deal(rules, hands=[["5H", "3C"], ["KS", "2S"], ["QC", "TH"]], scores=[1, 2, 3], **BLOCKED)
    _pass_all(s, 3)
    assert_over(s, 0, [9, 14, 23])
    s = deal(rules, hands=[["5H", "3C"], ["5S", "3S"], ["QC", "TH"]], **BLOCKED)  # tie
    _pass_all(s, 3)
    assert_over(s, None, [8, 8, 20])


def test_blocked_count_needs_passes_in_a_row():
    s = deal("no_reshuffle", hands=[["5H", "3C"], ["KS", "7S"], ["QC", "TH"]], **BLOCKED)
    s.apply(PASS)  # P0 passes (1)
    s.apply(c("7S"))  # P1 plays 7S: the count restarts
    assert field(s, "passes") == 0
    s.apply(PASS)  # P2 passes (1)
    s.apply(PASS)  # P0 (2)
    assert not s.hand_over
    s.apply(c("KS"))  # P1 goes out; P0 holds 8, P2 holds 20
    assert_over(s, 1, [0, 28, 0])


# =====================================================================================================
# Going out and card points
# =====================================================================================================
def test_going_out_winner_collects():
    s = deal(hands=[["5H"], ["8S", "KD", "3C", "AS"]], discard=["9H"], stock=["2C"])
    s.apply(c("5H"))  # P0 plays his last card and wins the hand
    assert hands(s) == canon([], ["8S", "KD", "3C", "AS"])
    assert top(s) == "5H"
    assert_over(s, 0, [50 + 10 + 3 + 1, 0])  # eight 50, king 10, three 3, ace 1
    assert field(s, "hands_played") == 1
    assert not s.match_over and s.match_winner is None  # 64 < 100


def test_going_out_penalty_scoring():
    s = deal("penalty", hands=[["5H"], ["8S", "KD", "3C", "AS"]], discard=["9H"], scores=[10, 20])
    s.apply(c("5H"))  # P0 goes out: he adds 0, P1 adds his own 64
    assert_over(s, 0, [10, 84])


def test_going_out_with_a_wild_card_needs_no_declaration():
    s = deal(hands=[["8D"], ["KD", "TC"]], discard=["9H"])
    s.apply(c("8D"))  # P0's last card is a wild card: the hand ends at once
    assert_over(s, 0, [20, 0])


def test_card_points_overrides():
    s = deal({"card_points": {"K": 20, "8": 8}}, hands=[["5H"], ["8S", "KD", "3C", "AS"]], discard=["9H"])
    s.apply(c("5H"))
    assert_over(s, 0, [8 + 20 + 3 + 1, 0])
    s = deal({"card_points": {8: 8, "10": 0}}, hands=[["5H"], ["8S", "TD", "3C"]], discard=["9H"])
    s.apply(c("5H"))  # an integer key 8 is read as "8"; "10" as T
    assert_over(s, 0, [8 + 0 + 3, 0])


def test_crazy_aces():
    s = deal("crazy_aces", hands=[["AH", "8C", "5D"], ["8S", "KD", "3C", "AS"]], discard=["9S"], stock=["2H"])
    # P0 on 9S: AH is wild; 8C is an ordinary card here and matches nothing.
    assert s.legal_actions() == acts("AH", DRAW)
    s.apply(c("AH"))  # P0 plays the wild ace
    assert field(s, "phase") == "declare"
    s.apply(DECLARE_C)  # and declares clubs
    assert follow(s) == ("C", None)
    # P1: 3C follows clubs, AS is wild; 8S and KD are not.
    assert s.legal_actions() == acts("3C", "AS", DRAW)
    s.apply(c("3C"))  # P1 plays 3C
    assert s.legal_actions() == acts("8C", DRAW)
    s.apply(c("8C"))  # P0 plays 8C as an ordinary card: no declaration, rank 8 to match
    assert field(s, "phase") == "play" and follow(s) == ("C", "8") and s.current_player == 1
    assert s.legal_actions() == acts("8S", "AS", DRAW)  # 8S matches the rank
    s.apply(c("AS"))  # P1 plays his wild ace
    s.apply(DECLARE_D)  # declares diamonds
    s.apply(c("5D"))  # P0 goes out; P1 holds 8S (8 under crazy aces) and KD (10)
    assert_over(s, 0, [18, 0])


def test_wild_rank_alone_keeps_point_table():
    # wild_rank A without card_points: eights still score 50, aces 1.
    s = deal({"wild_rank": "A"}, hands=[["5H"], ["8S", "AD"]], discard=["9H"])
    s.apply(c("5H"))
    assert_over(s, 0, [51, 0])


# =====================================================================================================
# Winning a match
# =====================================================================================================
def test_next_hand_rotates_dealer_left():
    s = deal(
        {"preset": "standard", "effects": {"A": "reverse"}},  # a reverse card exists (none in play)
        hands=[["5H"], ["KD"], ["2C"]],
        discard=["9H"],
        stock=["3S"],
        current_player=0,
        dealer=2,
        direction=-1,
        scores=[5, 0, 0],
    )
    with pytest.raises(ValueError):
        s.next_hand()  # the hand is still in play
    s.apply(c("5H"))  # P0 goes out: 10 + 2
    assert_over(s, 0, [17, 0, 0])
    s.next_hand()  # the deal passes to the left: seat 2 -> seat 0
    d = s.to_dict()
    assert d["dealer"] == 0 and d["current_player"] == 1  # the dealer's left-hand neighbour starts
    assert d["direction"] == 1  # a new hand starts clockwise
    assert d["phase"] == "play" and d["pending_draw"] == 0 and d["passes"] == 0
    assert [len(h) for h in d["hands"]] == [5, 5, 5]
    assert card_count(s) == 52
    assert d["scores"] == [17, 0, 0] and d["hands_played"] == 2
    assert d["winner"] is None and d["voids"] == [[], [], []]
    assert d["discard"][-1][0] != "8"  # a wild starter is buried
    # Next hands: seat 1 deals, then seat 2.
    s2 = State.from_dict({**d, "phase": "over"}, seed=1)
    s2.next_hand()
    assert field(s2, "dealer") == 1 and s2.current_player == 2
    s2 = State.from_dict({**s2.to_dict(), "phase": "over"}, seed=1)
    s2.next_hand()
    assert field(s2, "dealer") == 2 and s2.current_player == 0


def test_match_over_raises_next_hand():
    s = deal(hands=[["5H"], ["KD"]], discard=["9H"], scores=[95, 0])
    s.apply(c("5H"))
    assert s.match_over and s.match_winner == 0
    with pytest.raises(ValueError):
        s.next_hand()


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_match_target_auto(n):
    target = 50 * n
    others = [[a] for a in ["AC", "AD", "AH", "AS", "AC", "AD"][: n - 1]]  # 1 point each
    # One point short: P0 collects n-1 and ends on target-1.
    s = deal(hands=[["5H"], *others], discard=["9H"], scores=[target - n] + [0] * (n - 1))
    s.apply(c("5H"))
    assert field(s, "scores")[0] == target - 1
    assert not s.match_over and s.match_winner is None
    # Reaching the target exactly ends the match.
    s = deal(hands=[["5H"], *others], discard=["9H"], scores=[target - n + 1] + [0] * (n - 1))
    s.apply(c("5H"))
    assert field(s, "scores")[0] == target
    assert s.match_over and s.match_winner == 0


def test_match_target_explicit():
    s = deal({"match_target": 30}, hands=[["KD"], ["5H"]], discard=["9H"], current_player=1, scores=[25, 20])
    s.apply(c("5H"))  # P1 collects 10: 30 reaches the target although P0 has 25
    assert_over(s, 1, [25, 30])
    assert s.match_over and s.match_winner == 1


def test_penalty_match_lowest_total_wins():
    s = deal("penalty", hands=[["KS", "5C"], ["5H"]], discard=["9H"], current_player=1, scores=[80, 40])
    s.apply(c("5H"))  # P1 goes out; P0 adds 15
    assert_over(s, 1, [95, 40])
    assert not s.match_over  # nobody has reached 100
    s = deal("penalty", hands=[["KS", "5C"], ["5H"]], discard=["9H"], current_player=1, scores=[90, 40])
    s.apply(c("5H"))
    assert_over(s, 1, [105, 40])  # P0 passes 100: the match ends, the lowest total wins
    assert s.match_over and s.match_winner == 1


def test_penalty_match_tie_sudden_death():
    s = deal("penalty", hands=[["KS"], ["5H"], ["2C"]], discard=["9H"], current_player=1, scores=[95, 50, 48])
    s.apply(c("5H"))  # P1 goes out: P0 +10, P2 +2
    assert_over(s, 1, [105, 50, 50])
    assert not s.match_over and s.match_winner is None  # tie for lowest: sudden death
    s.next_hand()  # a sudden-death hand is dealt
    assert field(s, "hands_played") == 2 and field(s, "scores") == [105, 50, 50]
    assert field(s, "phase") == "play"
    # Play the sudden-death hand from a fixed deal with the same match state.
    d = s.to_dict()
    del d["suit_to_follow"], d["rank_to_follow"]  # taken from the new top card
    d.update(hands=[["QS"], ["3D"], ["7C"]], discard=["7S"], stock=["4H"], current_player=2)
    s = State.from_dict(d, rules="penalty")
    s.apply(c("7C"))  # P2 goes out: P0 +10, P1 +3
    assert_over(s, 2, [115, 53, 50])
    assert s.match_over and s.match_winner == 2


def test_five_hands_match():
    hand_list = [["5H"], ["4C", "2D"], ["KS"]]
    # Fourth hand: over 100 points does not end a match of five hands.
    s = deal("five_hands", hands=hand_list, discard=["9H"], scores=[10, 200, 20], hands_played=3)
    s.apply(c("5H"))  # P0 goes out: P1 +6, P2 +10
    assert_over(s, 0, [10, 206, 30])
    assert field(s, "hands_played") == 4 and not s.match_over
    # Fifth hand: the match ends, the lowest total wins.
    s = deal("five_hands", hands=hand_list, discard=["9H"], scores=[10, 200, 20], hands_played=4)
    s.apply(c("5H"))
    assert field(s, "hands_played") == 5
    assert s.match_over and s.match_winner == 0
    # A tie for the lowest total after five hands: sudden death.
    s = deal("five_hands", hands=hand_list, discard=["9H"], scores=[30, 200, 20], hands_played=4)
    s.apply(c("5H"))
    assert_over(s, 0, [30, 206, 30])
    assert not s.match_over and s.match_winner is None
    s.next_hand()
    assert field(s, "hands_played") == 5 and [len(h) for h in hands(s)] == [5, 5, 5]
    d = s.to_dict()
    del d["suit_to_follow"], d["rank_to_follow"]  # taken from the new top card
    d.update(hands=[["5H"], ["4C"], ["KS"]], discard=["9S"], stock=[], current_player=2)
    s = State.from_dict(d, rules="five_hands")
    s.apply(c("KS"))  # P2 goes out in sudden death: P0 +5, P1 +4
    assert_over(s, 2, [35, 210, 30])
    assert field(s, "hands_played") == 6
    assert s.match_over and s.match_winner == 2


def test_match_hands_winner_collects_highest_wins():
    rules = {"match_hands": 2}
    s = deal(rules, hands=[["KD", "TC"], ["5H"]], discard=["9H"], current_player=1, scores=[30, 0], hands_played=1)
    s.apply(c("5H"))  # P1 collects 20
    assert_over(s, 1, [30, 20])
    assert s.match_over and s.match_winner == 0  # the highest total wins
    s = deal(
        rules, hands=[["KD", "TC", "QC"], ["5H"]], discard=["9H"], current_player=1, scores=[30, 0], hands_played=1
    )
    s.apply(c("5H"))  # P1 collects 30: tie
    assert_over(s, 1, [30, 30])
    assert not s.match_over


def test_single_hand_as_a_whole_game():
    # The first hand's scores are totalled even when only one hand is played.
    s = deal({"match_hands": 1}, hands=[["5H"], ["KD"]], discard=["9H"])
    s.apply(c("5H"))
    assert_over(s, 0, [10, 0])
    assert s.match_over and s.match_winner == 0


# =====================================================================================================
# Countdown
# =====================================================================================================
def test_countdown_deal():
    s = State.new(3, "countdown", seed=5)
    d = s.to_dict()
    assert d["countdown"] == [8, 8, 8]
    assert [len(h) for h in d["hands"]] == [8, 8, 8]  # count 8 = 8 cards, also with 3 players


def test_countdown_personal_wilds_and_progress():
    s = deal(
        "countdown",
        hands=[["3H", "8C", "9D"], ["3C", "8D", "KS"]],
        discard=["5S"],
        stock=["4H", "9C"],
        countdown=[3, 8],
        dealer=1,
    )
    # P0 (count 3): 3H is his wild card; 8C is an ordinary card for him and does not match 5S.
    assert s.legal_actions() == acts("3H", DRAW)
    s.apply(c("3H"))  # P0 plays his wild three
    assert field(s, "phase") == "declare"
    s.apply(DECLARE_C)  # declares clubs
    # P1 (count 8): 3C follows clubs (an ordinary card for him), 8D is his wild card.
    assert s.legal_actions() == acts("3C", "8D", DRAW)
    s.apply(c("8D"))  # P1 plays his wild eight
    s.apply(DECLARE_D)  # declares diamonds
    assert s.legal_actions() == acts("9D", DRAW)  # P0's 8C is not wild for him
    s.apply(c("9D"))  # P0 plays 9D
    assert s.legal_actions() == [DRAW]  # P1: 3C KS
    s.apply(DRAW)  # P1 draws 9C
    s.apply(c("9C"))  # and plays it
    s.apply(c("8C"))  # P0 goes out with 8C (suit); P1 holds 3C KS = 13
    assert_over(s, 0, [13, 0])
    assert field(s, "countdown") == [2, 8]  # the winner's count goes down
    assert not s.match_over
    s.next_hand()
    d = s.to_dict()
    assert [len(h) for h in d["hands"]] == [2, 8]  # hand sizes are the counts
    assert d["dealer"] == 0 and d["current_player"] == 1
    assert d["discard"][-1][0] not in "28"  # a starter that is anybody's wild card is buried


def test_countdown_blocked_hand_lowers_count():
    s = deal("countdown", hands=[["KS"], ["2C"]], discard=["7D"], stock=[], countdown=[4, 6])
    s.apply(PASS)  # P0 passes (nothing to draw or reshuffle)
    s.apply(PASS)  # P1 passes: blocked, P1 has 2 points against 10
    assert_over(s, 1, [0, 8])
    assert field(s, "countdown") == [4, 5]


def test_countdown_last_count_wins_match():
    s = deal("countdown", hands=[["AD"], ["8S", "KS"]], discard=["9S"], stock=["2C"], countdown=[1, 5])
    # Count 1: aces are P0's wild cards.
    assert s.legal_actions() == acts("AD", DRAW)
    s.apply(c("AD"))  # P0 goes out with his wild ace
    assert_over(s, 0, [60, 0])
    assert field(s, "countdown") == [0, 5]
    assert s.match_over and s.match_winner == 0


def test_countdown_starter_wild_for_anyone():
    # Counts 2 and 8: a two or an eight starter is wild for somebody. Buried under the default ...
    finished = dict(hands=[[], ["KS"]], stock=[], discard=["9H"], phase="over", countdown=[2, 8], dealer=1,
                    winner=0, hands_played=1)
    for seed in range(40):
        s = State.from_dict(finished, rules="countdown", seed=seed)
        s.next_hand()
        assert top(s)[0] not in "28" and field(s, "phase") == "play"
    # ... declared by the dealer under dealer_declares, also when it is only P0's wild two.
    rules = {"preset": "countdown", "starter_wild": "dealer_declares"}

    def starts_with_two(seed):
        s = State.from_dict(finished, rules=rules, seed=seed)
        s.next_hand()
        return top(s)[0] == "2"

    seed = find_seed(starts_with_two)
    s = State.from_dict(finished, rules=rules, seed=seed)
    s.next_hand()
    assert field(s, "phase") == "declare" and s.current_player == 0  # the dealer (seat 0) declares
    assert s.legal_actions() == DECLARES
    assert follow(s)[1] is None
    s.apply(DECLARE_H)
    assert follow(s) == ("H", None) and s.current_player == 1 and field(s, "phase") == "play"
