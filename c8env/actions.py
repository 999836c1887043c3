"""Action ids: one ``Discrete(60)`` space for every player count and variant.

====== =========================================================================
id     action
====== =========================================================================
0-51   play the card with this id (with two decks, either copy)
52-55  declare suit C, D, H, S
56     draw one card (under a pending draw penalty: take the whole penalty)
57     pass (in the announce phase: decline to announce, taking the penalty)
58     announce "last card"
59     call "stop"
====== =========================================================================

Each constant builds on the one before, as OpenSpiel numbers its actions.
"""

from __future__ import annotations

from c8env.cards import NUM_CARDS, NUM_SUITS, SUITS, card_text

#: First "declare suit" action: ``DECLARE_BASE + suit`` declares suit C, D, H or S.
DECLARE_BASE = NUM_CARDS
#: Draw one card, or take the whole pending draw penalty.
DRAW = DECLARE_BASE + NUM_SUITS
#: Pass; in the announce phase, decline to announce "last card".
PASS = DRAW + 1
#: Announce "last card".
ANNOUNCE = PASS + 1
#: Call "stop".
STOP = ANNOUNCE + 1
#: Size of the action space.
NUM_ACTIONS = STOP + 1

#: The four declare actions, in suit order.
DECLARE_ACTIONS = tuple(range(DECLARE_BASE, DECLARE_BASE + NUM_SUITS))


def action_text(action: int) -> str:
    """Human-readable name of an action id, e.g. ``play 8H``, ``declare S``, ``draw``."""
    if 0 <= action < NUM_CARDS:
        return f"play {card_text(action)}"
    if DECLARE_BASE <= action < DRAW:
        return f"declare {SUITS[action - DECLARE_BASE]}"
    return {DRAW: "draw", PASS: "pass", ANNOUNCE: "announce last card", STOP: "stop"}.get(action, f"<{action}>")


__all__ = ["ANNOUNCE", "DECLARE_ACTIONS", "DECLARE_BASE", "DRAW", "NUM_ACTIONS", "PASS", "STOP", "action_text"]
