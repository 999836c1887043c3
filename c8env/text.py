"""Positions in words: what to follow, and a table of a state (the envs' ``ansi`` render)."""

from __future__ import annotations

from c8env.actions import action_text
from c8env.cards import RANKS, SUITS, card_text
from c8env.engine import ANY_SUIT, PHASE_NAMES, State


def follow_text(state: State) -> str:
    """What the next card must match, e.g. ``H or rank 9``, ``D`` (after a wild) or ``any card``."""
    if state.suit == ANY_SUIT:
        return "any card"
    return SUITS[state.suit] + (f" or rank {RANKS[state.rank]}" if state.rank >= 0 else "")


def render_text(state: State) -> str:
    """A readable table of a state: the hand of the player to act, top card, suit, counts, scores."""
    n = state.num_players
    follow = follow_text(state)
    lines = [
        f"Crazy Eights | {n} players | phase {PHASE_NAMES[state.phase]} | hand {state.hands_played + 1}",
        f"top card {card_text(state.top_card)} | follow {follow} | stock {len(state.stock)} | "
        f"discard {len(state.discard)} | direction {'clockwise' if state.direction == 1 else 'counter-clockwise'}"
        + (f" | pending draw {state.pending}" if state.pending else ""),
        f"{'seat':<10} {'cards':>5} {'score':>6}  hand",
    ]
    for seat in range(n):
        to_act = seat == state.current_player and not state.hand_over
        shown = " ".join(card_text(c) for c in state.hand(seat)) if to_act or state.hand_over else ""
        marker = "*" if to_act else " "
        lines.append(f"{marker}player_{seat:<3} {state.sizes[seat]:>5} {state.scores[seat]:>6}  {shown}")
    if state.hand_over:
        who = f"player_{state.winner}" if state.winner is not None else "nobody (tie)"
        lines.append(f"hand over ({state.end_reason}): winner {who}")
    else:
        legal = ", ".join(action_text(a) for a in state.legal_actions())
        lines.append(f"legal: {legal}")
    return "\n".join(lines)


__all__ = ["follow_text", "render_text"]
