"""Card ids, card text and card points, as docs/rules.md fixes them (public API only)."""

from __future__ import annotations

import pytest

import c8env

RANKS = "A23456789TJQK"
SUITS = "CDHS"


# ----- ids --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "card"),
    [("AC", 0), ("2C", 1), ("TC", 9), ("KC", 12), ("AD", 13), ("8D", 20), ("8H", 33), ("QS", 50), ("KS", 51)],
)
def test_card_ids_from_rules_md(text: str, card: int) -> None:
    assert c8env.parse_card(text) == card
    assert c8env.card_text(card) == text


def test_id_is_suit_times_13_plus_rank() -> None:
    for s, suit in enumerate(SUITS):
        for r, rank in enumerate(RANKS):
            assert c8env.parse_card(rank + suit) == s * 13 + r


def test_all_52_round_trip() -> None:
    texts = [c8env.card_text(card) for card in range(52)]
    assert len(set(texts)) == 52
    for card, text in enumerate(texts):
        assert len(text) == 2
        assert text[0] in RANKS and text[1] in SUITS
        assert c8env.parse_card(text) == card


def test_parse_cards_list_and_string() -> None:
    assert c8env.parse_cards(["AC", "KS"]) == [0, 51]
    assert c8env.parse_cards("AC KS, 8H") == [0, 51, 33]


# ----- accepted input forms ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("10D", c8env.parse_card("TD")),
        ("10C", 9),
        ("10S", 48),
        ("td", 22),
        ("8h", 33),
        ("qs", 50),
        ("Qs", 50),
        ("aC", 0),
        ("10h", 35),
        ("8♥", 33),
        ("A♣", 0),
        ("K♠", 51),
        ("T♦", 22),
        ("10♦", 22),
        ("q♠", 50),
    ],
)
def test_accepted_forms(text: str, card: int) -> None:
    assert c8env.parse_card(text) == card


def test_card_text_is_canonical() -> None:
    assert c8env.card_text(c8env.parse_card("10D")) == "TD"
    assert c8env.card_text(c8env.parse_card("8♥")) == "8H"
    assert c8env.card_text(c8env.parse_card("qs")) == "QS"


# ----- points -----------------------------------------------------------------------------------------
def test_default_card_points() -> None:
    rules = c8env.RuleSet()
    expected = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 50, "9": 9, "T": 10, "J": 10,
                "Q": 10, "K": 10}
    for suit in SUITS:
        for rank, points in expected.items():
            assert rules.card_points_of(c8env.parse_card(rank + suit)) == points, rank + suit


def test_card_points_override_single_rank() -> None:
    rules = c8env.RuleSet(card_points={"8": 8, "K": 13})
    assert rules.card_points_of(c8env.parse_card("8H")) == 8
    assert rules.card_points_of(c8env.parse_card("KS")) == 13
    assert rules.card_points_of(c8env.parse_card("QS")) == 10
    assert rules.card_points_of(c8env.parse_card("AC")) == 1


def test_points_do_not_follow_wild_rank() -> None:
    # docs/rules.md: the table does not change with wild_rank unless overridden.
    rules = c8env.RuleSet(wild_rank="A")
    assert rules.card_points_of(c8env.parse_card("AS")) == 1
    assert rules.card_points_of(c8env.parse_card("8S")) == 50
    aces = c8env.RuleSet.from_preset("crazy_aces")
    assert aces.card_points_of(c8env.parse_card("AS")) == 1
    assert aces.card_points_of(c8env.parse_card("8S")) == 8


# ----- bad input --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text", ["", "8", "H", "1H", "11H", "8X", "XH", "ZZ", "88H", "8HH", "H8", "♥8", "0D", "1D", "AH7", "8 H", "joker"]
)
def test_bad_card_text_raises_naming_text(text: str) -> None:
    with pytest.raises(ValueError) as info:
        c8env.parse_card(text)
    message = str(info.value)
    assert repr(text.strip()) in message or repr(text) in message
    # ... and says what is allowed
    assert "CDHS" in message or "C, D, H, S" in message


@pytest.mark.parametrize("value", [None, 33, 8.0, b"8H", ["8H"]])
def test_non_string_card_raises(value: object) -> None:
    with pytest.raises(ValueError, match="not a card"):
        c8env.parse_card(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("card", [-1, 52, 100, True, 1.0, "AC", None])
def test_bad_card_id_raises(card: object) -> None:
    with pytest.raises(ValueError, match=r"card id .* 0\.\.51"):
        c8env.card_text(card)  # type: ignore[arg-type]


def test_parse_cards_bad_entry_names_it() -> None:
    with pytest.raises(ValueError, match="'ZZ'"):
        c8env.parse_cards(["AC", "ZZ"])
    with pytest.raises(ValueError, match="list of card texts"):
        c8env.parse_cards(33)  # type: ignore[arg-type]
