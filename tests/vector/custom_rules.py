"""Custom rule sets for the twin tests (the batched engine, the batched greedy and the compiled search against their
readable twins): a seeded generator of valid :class:`~c8env.rules.RuleSet` values that varies every field, and the
kinds of end an episode of them can reach."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from c8env.cards import NUM_CARDS, RANKS, card_text
from c8env.engine import check_deal_fits
from c8env.rules import RuleSet

Chooser = Callable[[np.random.Generator], Any]


def _maybe(gen: np.random.Generator, chance: float, value: Callable[[], Any], otherwise: Any) -> Any:
    return value() if gen.random() < chance else otherwise


def _effects(gen: np.random.Generator) -> dict[str, Any]:
    """0-5 special cards, by rank or by card (a card's entry overrides its rank's), of every effect; draw
    cards twice as often as each other effect (they make the pending-draw rules)."""
    effects: dict[str, Any] = {}
    for _ in range(int(gen.integers(0, 6))):
        key = RANKS[gen.integers(len(RANKS))] if gen.random() < 0.7 else card_text(int(gen.integers(NUM_CARDS)))
        kind = int(gen.integers(5))
        effects[key] = {"draw": int(gen.integers(1, 5))} if kind >= 3 else ("skip", "reverse", "any_next")[kind]
    return effects


#: How each RuleSet field is drawn (every field: ``test_every_rule_set_field_is_generated``). Values lean to
#: what ends hands and matches soon (small targets and hand counts), and take in the edges: points of 0 (tied
#: hands and matches), one-card hands, one draw a turn, a stop threshold of 0.
FIELD_CHOICES: dict[str, Chooser] = {
    "decks": lambda g: ["auto", 1, 2][g.integers(3)],
    "hand_size": lambda g: _maybe(g, 0.6, lambda: int(g.integers(1, 10)), "auto"),
    "wild_rank": lambda g: RANKS[g.integers(len(RANKS))],
    "starter_wild": lambda g: ["bury", "dealer_declares"][g.integers(2)],
    "draw_when_able": lambda g: bool(g.integers(2)),
    "max_draws_per_turn": lambda g: _maybe(g, 0.5, lambda: int(g.integers(1, 4)), None),
    "stock_exhausted": lambda g: ["reshuffle", "pass", "end"][g.integers(3)],
    "scoring": lambda g: ["winner_collects", "penalty"][g.integers(2)],
    "card_points": lambda g: {RANKS[r]: int(g.choice([0, 0, 0, 1, 5, 25, 60]))
                              for r in g.choice(len(RANKS), int(g.integers(0, 7)), replace=False)},
    "match_target": lambda g: _maybe(g, 0.7, lambda: int(g.choice([1, 2, 5, 10, 30, 80])), "auto"),
    "match_hands": lambda g: _maybe(g, 0.5, lambda: int(g.integers(1, 4)), None),
    "effects": _effects,
    "last_card_call": lambda g: bool(g.integers(2)),
    "last_card_penalty": lambda g: int(g.integers(1, 5)),
    "stop_threshold": lambda g: _maybe(g, 0.25, lambda: int(g.choice([0, 3, 10])), None),
    "countdown": lambda g: g.random() < 0.35,
}


def random_rules(gen: np.random.Generator, **fixed: Any) -> RuleSet:
    """A valid rule set, every field drawn from :data:`FIELD_CHOICES` but those ``fixed`` (without countdown, an
    effect drawn for a card of the wild rank is dropped: the rules refuse it)."""
    fields = {name: choose(gen) for name, choose in FIELD_CHOICES.items()} | fixed
    if not fields["countdown"]:
        fields["effects"] = {k: v for k, v in fields["effects"].items() if k[0] != fields["wild_rank"]}
    return RuleSet(**fields)


def random_game(gen: np.random.Generator, **fixed: Any) -> tuple[RuleSet, int]:
    """Rules from :func:`random_rules` and a player count (2-7, mostly few) whose first deal fits the decks."""
    rules = random_rules(gen, **fixed)
    players = int(gen.choice([2, 2, 2, 3, 3, 4, 5, 6, 7]))
    while players > 2:  # (two players' hands of at most 9 cards always fit)
        try:
            check_deal_fits(rules, players)
            break
        except ValueError:
            players -= 1
    return rules, players


def field_values(rule_sets: list[RuleSet]) -> dict[str, set[str]]:
    """Every RuleSet field and the values it takes in ``rule_sets`` (as text, maps included)."""
    return {f.name: {repr(r.to_dict()[f.name]) for r in rule_sets} for f in dataclasses.fields(RuleSet)}


#: Cards worth nothing: hands and matches tie.
_ZERO = {"card_points": dict.fromkeys("A23456789T", 0)}
#: The ways a match can end, as the fields that choose them: the countdown (and the countdown with draw cards of
#: the ranks the counts name, which a player may not answer a draw with when they are his wild cards), a number of
#: hands or a target score, under each scoring, and with most cards worth 0, where scores tie (one hand; a small
#: target, penalty scoring).
MATCH_MODES: tuple[dict[str, Any], ...] = (
    {"countdown": True},
    {"countdown": True, "effects": {"8": {"draw": 2}, "7": {"draw": 1}, "2": {"draw": 2}, "J": "skip"}},
    *({"countdown": False, "match_hands": hands, "scoring": scoring}
      for hands in (2, None) for scoring in ("winner_collects", "penalty")),
    {"countdown": False, "match_hands": 1, "scoring": "winner_collects", **_ZERO},
    {"countdown": False, "match_hands": None, "scoring": "penalty", "match_target": 5, **_ZERO},
)


def match_kind(rules: RuleSet, tied: bool) -> str:
    """What ended a match under ``rules``; ``tied``: its end was first reached in a tie, which sudden death broke."""
    if rules.countdown:
        return "match: countdown"
    if tied:
        return f"match: {'hands' if rules.match_hands is not None else 'target'} after a tie"
    return f"match: {'hands' if rules.match_hands is not None else 'target'}, {rules.scoring}"


#: Every kind of match end (:func:`match_kind`). A tie at the target happens under ``penalty`` scoring only: under
#: ``winner_collects`` a hand raises one score, the winner's, and never by 0 but when he goes out against hands
#: worth 0 points, so two scores cannot meet at the target.
MATCH_KINDS = ("match: countdown", *(f"match: {how}, {scoring}" for how in ("hands", "target")
                                     for scoring in ("winner_collects", "penalty")),
               "match: hands after a tie", "match: target after a tie")


def generated_games(count: int, seed: int) -> list[tuple[RuleSet, int, dict[str, Any]]]:
    """``count`` games to play with custom rules: rules, a player count and the episode settings (with the moves
    to play, ``steps``). Every other one is a match, under each of :data:`MATCH_MODES` in turn (500 moves, 1,200 under
    the countdown: a player wins eight hands); the others are hands (150 moves), every other one of them cut off
    after 60 moves; the rewards alternate between ``win`` and ``points`` every four games."""
    gen = np.random.default_rng(seed)
    games = []
    for k in range(count):
        settings: dict[str, Any] = {"reward": ("win", "points")[k // 4 % 2]}
        if k % 2:
            rules, players = random_game(gen, **MATCH_MODES[k // 2 % len(MATCH_MODES)])
            settings |= {"episode": "match", "steps": 1200 if rules.countdown else 500}
        else:
            rules, players = random_game(gen)
            settings |= {"episode": "hand", "max_steps": 60 if k % 4 == 0 else None, "steps": 150}
        games.append((rules, players, settings))
    return games
