"""What the fixed-deal rule tests (``test_rules_*.py``) share: positions from state-dict keys and
short readers of the state.

Reminders: a card id is ``suit * 13 + rank`` (suits C, D, H, S; ranks A..K);
``to_dict()["hands"]`` lists each hand by ascending card id; the last element of
``stock`` is drawn next and the last element of ``discard`` is the top card.
"""

from __future__ import annotations

from c8env import DECLARE_BASE, State, parse_card

DECLARE_C, DECLARE_D, DECLARE_H, DECLARE_S = (DECLARE_BASE + i for i in range(4))
DECLARES = [DECLARE_C, DECLARE_D, DECLARE_H, DECLARE_S]


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
