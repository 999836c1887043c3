"""Fixed deals played move by move, with the exact outcome of every important move.

Each test builds a position with ``State.from_dict`` (or a seeded ``State.new``),
plays it with ``state.apply`` and checks hands, the top card, the suit and rank to
follow, the player to act, the phase, draw penalties, legal actions, scores and
the match result. Every rule and variant of docs/rules.md is covered; the section
headers follow docs/rules.md. Public API only.

Reminders: a card id is ``suit * 13 + rank`` (suits C, D, H, S; ranks A..K);
``to_dict()["hands"]`` lists each hand by ascending card id; the last element of
``stock`` is drawn next and the last element of ``discard`` is the top card.
"""

from __future__ import annotations

import pytest

from c8env import ANNOUNCE, DECLARE_BASE, DRAW, PASS, STOP, IllegalActionError, State, parse_card

DECLARE_C, DECLARE_D, DECLARE_H, DECLARE_S = (DECLARE_BASE + i for i in range(4))
DECLARES = [DECLARE_C, DECLARE_D, DECLARE_H, DECLARE_S]


# ----- helpers ---------------------------------------------------------------------------------------
def c(text):
    return parse_card(text)


def acts(*items):
    """Ascending action ids: card texts become play actions, ints are kept as they are."""
    return sorted(c(x) if isinstance(x, str) else x for x in items)


def deal(rules="standard", seed=0, **data):
    """A position from state-dict keys (``hands``, ``discard``, ``stock``, ...); the stock is empty unless
    given, and match totals (``scores``) come with one finished hand unless ``hands_played`` is given."""
    data.setdefault("stock", [])
    if any(data.get("scores", ())):
        data.setdefault("hands_played", 1)
    return State.from_dict(data, rules=rules, seed=seed)


def canon(*hand_list):
    """Hands written in any order, put in ``to_dict`` order (ascending card id)."""
    return [sorted(h, key=c) for h in hand_list]


def hands(s):
    return s.to_dict()["hands"]


def top(s):
    return s.to_dict()["discard"][-1]


def follow(s):
    """(suit_to_follow, rank_to_follow)."""
    d = s.to_dict()
    return d["suit_to_follow"], d["rank_to_follow"]


def field(s, key):
    return s.to_dict()[key]


def assert_over(s, win, final_scores):
    """The hand is over, won by ``win`` (None: nobody), with these match totals."""
    assert s.hand_over
    assert field(s, "phase") == "over"
    assert field(s, "winner") == win
    assert field(s, "scores") == final_scores
    assert s.legal_actions() == []


def card_count(s):
    d = s.to_dict()
    return sum(len(h) for h in d["hands"]) + len(d["stock"]) + len(d["discard"])


def find_seed(pred, limit=2000):
    for seed in range(limit):
        if pred(seed):
            return seed
    raise AssertionError("no seed found")  # pragma: no cover


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
