"""c8env: the reference reinforcement-learning environment for Crazy Eights."""

from c8env.cards import card_text, parse_card, parse_cards
from c8env.crazy_eights import OBS_LAYOUT, OBS_SIZE, env, raw_env
from c8env.engine import (
    ANNOUNCE,
    DECLARE_BASE,
    DRAW,
    NUM_ACTIONS,
    PASS,
    STOP,
    IllegalActionError,
    State,
    action_text,
)
from c8env.rules import RuleSet, load_rules, preset_names

__version__ = "0.1.0"

__all__ = [
    "OBS_LAYOUT",
    "OBS_SIZE",
    "env",
    "raw_env",
    "ANNOUNCE",
    "DECLARE_BASE",
    "DRAW",
    "NUM_ACTIONS",
    "PASS",
    "STOP",
    "IllegalActionError",
    "RuleSet",
    "State",
    "action_text",
    "card_text",
    "load_rules",
    "parse_card",
    "parse_cards",
    "preset_names",
]
