"""What one seat may see of a state, as JSON data for the page (and the open view of replays).

A seat's view holds its own hand, the top card, what to follow, every seat's card count and
score, the stock size (never its cards), direction, pending penalty and the move log with the
other seats' draws as counts: the facts of :class:`c8env.observation.StateObservation`, in words.
The other hands are shown only when the hand is over (they are laid down to be counted) or in
the open view of a replay (``viewer=None``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, PASS, STOP, action_text
from c8env.cards import NUM_CARDS, RANKS, SUITS, card_text, rank_of, suit_of
from c8env.engine import ANY_SUIT, PHASE_NAMES, State
from c8env.text import follow_text
from c8env.tools.replay import event_for, result_of

SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")


def card_json(card: int) -> dict[str, Any]:
    """A card for the page: id, text (``8H``), rank as printed (``10`` for the ten), suit, symbol, colour."""
    suit, rank = suit_of(card), rank_of(card)
    return {"id": card, "text": card_text(card), "rank": "10" if RANKS[rank] == "T" else RANKS[rank],
            "suit": SUITS[suit], "symbol": SUIT_SYMBOLS[suit], "red": suit in (1, 2)}


def action_json(action: int) -> dict[str, Any]:
    """A legal action for the page: id, kind (card, declare, draw, pass, announce, stop) and words."""
    if 0 <= action < NUM_CARDS:
        return {"id": action, "kind": "card", "text": action_text(action)}
    if DECLARE_BASE <= action < DRAW:
        suit = action - DECLARE_BASE
        return {"id": action, "kind": "declare", "suit": SUITS[suit], "symbol": SUIT_SYMBOLS[suit],
                "text": f"declare {SUIT_NAMES[suit]}"}
    kind = {DRAW: "draw", PASS: "pass", ANNOUNCE: "announce", STOP: "stop"}[action]
    return {"id": action, "kind": kind, "text": action_text(action)}


def table_view(state: State, viewer: int | None, log: Iterable[Mapping[str, Any]] = (),
               reveal_at_end: bool = True) -> dict[str, Any]:
    """The table as ``viewer`` sees it (``None``: every hand open). ``log``: move events
    (:func:`c8env.tools.replay.move_event`), filtered for the viewer."""
    n = state.num_players
    over = state.hand_over
    seats = []
    for seat in range(n):
        shown = viewer is None or seat == viewer or (over and reveal_at_end)
        entry: dict[str, Any] = {"seat": seat, "cards": state.sizes[seat], "score": state.scores[seat],
                                 "hand": [card_json(c) for c in state.hand(seat)] if shown else None}
        if state.rules.countdown:
            entry["countdown"] = state.countdown[seat]
        seats.append(entry)
    legal = state.legal_actions() if not over and (viewer is None or viewer == state.current_player) else []
    return {
        "num_players": n,
        "viewer": viewer,
        "phase": PHASE_NAMES[state.phase],
        "current_player": None if over else state.current_player,
        "dealer": state.dealer,
        "hand_over": over,
        "hands_played": state.hands_played,
        "top_card": card_json(state.top_card),
        "follow": follow_text(state),
        "suit_to_follow": None if state.suit == ANY_SUIT else SUITS[state.suit],
        "rank_to_follow": None if state.rank < 0 else ("10" if RANKS[state.rank] == "T" else RANKS[state.rank]),
        "stock": len(state.stock),
        "discard": len(state.discard),
        "direction": state.direction,
        "pending": state.pending,
        "seats": seats,
        "hand": [card_json(c) for c in state.hand(viewer)] if viewer is not None else None,
        "legal": [action_json(a) for a in legal],
        "log": [event_for(e, viewer) for e in log],
        "result": result_of(state) if over else None,
    }


__all__ = ["action_json", "card_json", "table_view"]
