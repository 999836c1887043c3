"""Cards: integer ids, text form and points.

A card id is ``suit_index * 13 + rank_index`` with suits in the order C, D, H, S
and ranks in the order A, 2, ..., 10, J, Q, K: ``AC`` = 0, ``KC`` = 12,
``AD`` = 13, ``8H`` = 33, ``KS`` = 51.
"""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S"}
NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = 52

#: Default card points by rank index: ace 1, 2-10 face value, J/Q/K 10, eight 50.
DEFAULT_RANK_POINTS = (1, 2, 3, 4, 5, 6, 7, 50, 9, 10, 10, 10, 10)

#: Bit mask of the 13 cards of each suit, by suit index.
SUIT_MASKS = tuple(((1 << NUM_RANKS) - 1) << (s * NUM_RANKS) for s in range(NUM_SUITS))
#: Bit mask of the 4 cards of each rank, by rank index.
RANK_MASKS = tuple(sum(1 << (s * NUM_RANKS + r) for s in range(NUM_SUITS)) for r in range(NUM_RANKS))
ALL_CARDS_MASK = (1 << NUM_CARDS) - 1


def card_id(suit: int, rank: int) -> int:
    """Card id of a suit index and a rank index."""
    return suit * NUM_RANKS + rank


def suit_of(card: int) -> int:
    """Suit index (0=C, 1=D, 2=H, 3=S) of a card id."""
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    """Rank index (0=A, ..., 12=K) of a card id."""
    return card % NUM_RANKS


def card_text(card: int) -> str:
    """Two-character text of a card id, e.g. ``8H``."""
    if not isinstance(card, int) or isinstance(card, bool) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card!r} is not an int in 0..51")
    return RANKS[card % NUM_RANKS] + SUITS[card // NUM_RANKS]


def parse_rank(text: str | int) -> int:
    """Rank index of a rank given as a char (``A``, ``2`` .. ``9``, ``T``, ``J``, ``Q``, ``K``),
    as ``10``, or as an int 2..10 (read as its text)."""
    if isinstance(text, bool):
        raise ValueError(f"rank {text!r} is not a rank; allowed: {', '.join(RANKS)} (or 10)")
    if isinstance(text, int):
        text = str(text)
    if not isinstance(text, str):
        raise ValueError(f"rank {text!r} is not a rank; allowed: {', '.join(RANKS)} (or 10)")
    key = text.strip().upper()
    if key == "10":
        key = "T"
    if len(key) != 1 or key not in RANKS:
        raise ValueError(f"rank {text!r} is not a rank; allowed: {', '.join(RANKS)} (or 10)")
    return RANKS.index(key)


def parse_suit(text: str) -> int:
    """Suit index of a suit char (``C``, ``D``, ``H``, ``S``) or symbol (``♣♦♥♠``)."""
    if isinstance(text, str):
        key = SUIT_SYMBOLS.get(text.strip(), text.strip().upper())
        if len(key) == 1 and key in SUITS:
            return SUITS.index(key)
    raise ValueError(f"suit {text!r} is not a suit; allowed: C, D, H, S or ♣ ♦ ♥ ♠")


_CARD_IDS = {card_text(card): card for card in range(NUM_CARDS)}  # each card's text, as card_text writes it


def parse_card(text: str) -> int:
    """Card id of a card text: rank then suit, e.g. ``8H``, ``TD``, ``10D``, ``8♥``, ``qs``."""
    if type(text) is str and text in _CARD_IDS:
        return _CARD_IDS[text]
    if not isinstance(text, str) or len(text.strip()) < 2:
        raise ValueError(
            f"card {text!r} is not a card; expected rank {RANKS} (or 10) then suit CDHS or ♣♦♥♠, e.g. '8H'"
        )
    text = text.strip()
    try:
        if any(ch.isspace() for ch in text):
            raise ValueError(text)
        return card_id(parse_suit(text[-1]), parse_rank(text[:-1]))
    except ValueError:
        raise ValueError(
            f"card {text!r} is not a card; expected rank {RANKS} (or 10) then suit CDHS or ♣♦♥♠, e.g. '8H'"
        ) from None


def parse_cards(texts: str | list[str]) -> list[int]:
    """Card ids of a list of card texts, or of one string of texts separated by spaces or commas."""
    if isinstance(texts, str):
        texts = texts.replace(",", " ").split()
    if not isinstance(texts, (list, tuple)):
        raise ValueError(f"cards {texts!r} must be a list of card texts")
    return [parse_card(t) for t in texts]


def iter_bits(mask: int) -> list[int]:
    """Ascending indices of the set bits of a mask."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
