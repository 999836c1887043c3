"""Positions in words: what to follow, and a table of a state (the envs' ``ansi`` render)."""

from __future__ import annotations

from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, NUM_ACTIONS, PASS, action_text
from c8env.cards import NUM_CARDS, RANKS, SUITS, card_text
from c8env.engine import ANY_SUIT, PHASE_NAMES, State
from c8env.rules import Effect

_SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")


def direction_text(state: State) -> str:
    """``clockwise`` or ``counter-clockwise``."""
    return "clockwise" if state.direction == 1 else "counter-clockwise"


def move_events(before: State, after: State, seat: int, action: int, name: str = "") -> list[str]:
    """What a move did, in words a newcomer follows: special-card effects, penalties, reshuffles, a
    declined announcement, the end of the hand. ``before`` is a copy of the state before the move,
    ``name`` how to call the mover (default ``player_<seat>``)."""
    who = name or f"player_{seat}"

    def verb(word: str) -> str:  # "player_1 draws", "you draw"
        return word[:-1] if who == "you" and word.endswith("s") else word

    events: list[str] = []
    n = before.num_players
    if not 0 <= action < NUM_ACTIONS:
        return events
    if len(after.discard) < len(before.discard) + (1 if action < NUM_CARDS else 0) and not after.hand_over:
        events.append("the discard pile (all but its top card) was shuffled into a new stock")
    if action == DRAW and before.pending:
        events.append(f"{who} {verb('takes')} the penalty: {after.sizes[seat] - before.sizes[seat]} card(s)")
    if action == PASS and before.phase.name == "ANNOUNCE":
        drawn = after.sizes[seat] - before.sizes[seat]
        events.append(f"{who} did not announce \"last card\" and {verb('draws')} {drawn} penalty card(s)")
    if action == ANNOUNCE:
        events.append(f"{who} {verb('announces')} \"last card\"")
    if DECLARE_BASE <= action < DRAW:
        events.append(f"{_SUIT_NAMES[action - DECLARE_BASE]} to follow")
    if action < NUM_CARDS and not after.hand_over:
        wild = (before.wild_mask(seat) >> action) & 1
        effect = before.rules.effect_of(action)
        if wild:
            events.append(f"{card_text(action)} is wild: {who} {verb('names')} the suit to follow")
        elif effect is Effect.SKIP:
            events.append(f"{card_text(action)} skips player_{(seat + before.direction) % n}")
        elif effect is Effect.REVERSE:
            events.append(f"{card_text(action)} reverses play: now {direction_text(after)}"
                          + (" (with 2 players: the same player plays again)" if n == 2 else ""))
        elif effect is Effect.DRAW:
            target = (seat + after.direction) % n
            events.append(f"{card_text(action)}: player_{target} must draw {after.pending} "
                          "or answer with a draw card")
        elif effect is Effect.ANY_NEXT:
            events.append(f"{card_text(action)}: any card may follow")
    if after.hand_over and not before.hand_over:
        winner = "nobody (a tie)" if after.winner is None else f"player_{after.winner}"
        reason = {"out": "played the last card", "blocked": "nobody can move: lowest hand wins",
                  "stop": "stop was called: lowest hand wins", "stock": "the stock ran out: lowest hand wins"}
        events.append(f"hand over ({reason.get(after.end_reason, after.end_reason)}); winner {winner}")
    return events


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


__all__ = ["direction_text", "follow_text", "move_events", "render_text"]
