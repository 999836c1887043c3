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

from typing import Any

import numpy as np

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


class IllegalActionError(ValueError):
    """An action that is not legal in the current state (the state is left unchanged)."""


class ActionTypeError(IllegalActionError, TypeError):
    """An action that is not an action id at all (a bool, float, None, text, an array of several values):
    refused (never scored as an illegal move); a ``TypeError`` and an :class:`IllegalActionError`."""


class ActionRangeError(IllegalActionError):
    """An int action outside ``0..59``: refused (never scored as an illegal move)."""


#: What an action may be, for error messages.
ACTION_HELP = f"an int action id from 0 to {NUM_ACTIONS - 1} (a Python int, a numpy integer or a 0-d integer array)"


def action_id(action: Any) -> int:
    """``action`` as a plain int action id: Python ints, numpy integers and 0-d integer arrays
    (what ``MaskablePPO.predict()`` returns) are accepted. Raises :class:`ActionTypeError` for anything
    else (bools, floats, None, strings, arrays of another shape) and :class:`ActionRangeError` for an
    int outside 0..59."""
    if type(action) is not int:
        if isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
            action = int(action)
        elif isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            action = int(action)
        else:
            shown = f"array of shape {action.shape}, dtype {action.dtype}" if isinstance(action, np.ndarray) \
                else f"{action!r} ({type(action).__name__})"
            raise ActionTypeError(f"action {shown} is not an action id; allowed: {ACTION_HELP}")
    if not 0 <= action < NUM_ACTIONS:
        raise ActionRangeError(f"action {action} is out of range; allowed: {ACTION_HELP}")
    return action


def action_text(action: int) -> str:
    """Human-readable name of an action id, e.g. ``play 8H``, ``declare S``, ``draw``."""
    if 0 <= action < NUM_CARDS:
        return f"play {card_text(action)}"
    if DECLARE_BASE <= action < DRAW:
        return f"declare {SUITS[action - DECLARE_BASE]}"
    return {DRAW: "draw", PASS: "pass", ANNOUNCE: "announce last card", STOP: "stop"}.get(action, f"<{action}>")


__all__ = ["ACTION_HELP", "ANNOUNCE", "DECLARE_ACTIONS", "DECLARE_BASE", "DRAW", "NUM_ACTIONS", "PASS", "STOP",
           "ActionRangeError", "ActionTypeError", "IllegalActionError", "action_id", "action_text"]
