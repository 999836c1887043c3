"""The rule set: one frozen, validated dataclass, and the presets that fill it.

Field names and meanings: ``docs/rules.md`` ("Every RuleSet field"). Presets live as YAML
files inside the package (``c8env/presets/``); a YAML file or a dict may name ``preset:``
and override fields, an overriding field replacing the preset's value whole (maps included).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from c8env.cards import (
    DEFAULT_RANK_POINTS,
    NUM_CARDS,
    RANK_MASKS,
    RANKS,
    card_text,
    parse_card,
    parse_rank,
    rank_of,
)

PRESETS_DIR = Path(__file__).parent / "presets"


class Effect(IntEnum):
    """What a special card does (the values of :attr:`RuleSet.effect_table`)."""

    NONE = 0
    SKIP = 1
    REVERSE = 2
    DRAW = 3
    ANY_NEXT = 4


_EFFECT_NAMES = {"skip": Effect.SKIP, "reverse": Effect.REVERSE, "any_next": Effect.ANY_NEXT}
#: The most cards there are (two decks): no hand, draw or penalty can mean more.
MAX_CARDS = 2 * NUM_CARDS
#: Upper bounds of the numeric fields (beyond them a value means nothing a game can reach, and would overflow
#: the batched engine's int64 arrays): field -> (bound, why).
LIMITS = {
    "hand_size": (MAX_CARDS // 2 - 1, "two decks deal no more to each of 2 players"),
    "max_draws_per_turn": (MAX_CARDS, "every card of two decks"),
    "card_points": (10_000, "points of one card"),
    "match_target": (1_000_000, "a match's target score"),
    "match_hands": (10_000, "hands of one match"),
    "last_card_penalty": (MAX_CARDS, "every card of two decks"),
    "stop_threshold": (1_000_000, "a hand's points"),
    "draw": (MAX_CARDS, "every card of two decks"),
}
_EFFECT_HELP = f"'skip', 'reverse', 'any_next' or {{draw: N}} with N >= 1 (at most {MAX_CARDS})"


def preset_names() -> list[str]:
    """Names of the shipped presets, sorted."""
    return sorted(p.stem for p in PRESETS_DIR.glob("*.yaml"))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Where every rule and field is explained; error messages point there.
RULES_DOC = "docs/rules.md"


def _require(ok: bool, name: str, value: Any, allowed: str) -> None:
    if not ok:
        raise ValueError(f"RuleSet field {name!r} = {value!r:.80} is invalid; allowed: {allowed} (see {RULES_DOC})")


def _bounded(name: str, value: Any, shown: Any = None) -> None:
    """An int field's upper bound (:data:`LIMITS`); its lower bound and type are checked before."""
    bound, why = LIMITS[name]
    if _is_int(value) and value > bound:
        _require(False, name, value if shown is None else shown, f"at most {bound:,} ({why})")


def _rank_key(name: str, key: Any) -> str:
    try:
        return RANKS[parse_rank(key)]
    except ValueError:
        raise ValueError(
            f"RuleSet field {name!r} has key {key!r}, which is not a rank; allowed: {', '.join(RANKS)} (or 10)"
        ) from None


def _effect_key(key: Any) -> str:
    """Canonical effect key: a rank char, or one card's text."""
    text = str(key) if _is_int(key) else key
    if isinstance(text, str) and len(text.strip()) >= 2 and text.strip() != "10":
        try:
            return card_text(parse_card(text))
        except ValueError:
            pass
    try:
        return RANKS[parse_rank(text)]
    except ValueError:
        raise ValueError(
            f"RuleSet field 'effects' has key {key!r}; allowed: a rank char ({', '.join(RANKS)}, or 10) "
            "or one card's text such as 'QS'"
        ) from None


def _effect_value(key: str, value: Any) -> str | Mapping[str, int]:
    """Canonical effect value: an effect name, or a read-only ``{"draw": N}``."""
    if isinstance(value, str) and value in _EFFECT_NAMES:
        return value
    if (isinstance(value, Mapping) and set(value) == {"draw"} and _is_int(value["draw"])
            and 1 <= value["draw"] <= LIMITS["draw"][0]):
        return MappingProxyType({"draw": value["draw"]})
    raise ValueError(f"RuleSet field 'effects' has value {value!r} for {key!r}; allowed: {_EFFECT_HELP}")


@dataclass(frozen=True)
class RuleSet:
    """A complete, validated set of Crazy Eights rules (``docs/rules.md`` explains every field).

    Construct directly with keyword arguments, or with :meth:`from_preset`,
    :meth:`from_dict`, :meth:`from_yaml` or :func:`load_rules`.

    Besides the fields, a rule set carries per-card tables derived from them, indexed
    by card id: :attr:`point_table` (points), :attr:`effect_table` (:class:`Effect`
    codes), :attr:`draw_table` (cards a draw card makes the next player take), and the
    card sets :attr:`draw_cards_mask` and :attr:`wild_mask` (bit ``c`` set for card ``c``).
    """

    decks: str | int = "auto"
    """``auto`` (one deck for 2-5 players, two for 6-7), ``1`` or ``2``."""
    hand_size: str | int = "auto"
    """``auto`` (7 cards with 2 players, 5 with 3 or more) or an int >= 1."""
    wild_rank: str = "8"
    """Rank char of the wild cards (``8``; ``A`` for crazy aces)."""
    starter_wild: str = "bury"
    """A wild starter is ``bury``-ied in the stock, or the dealer declares a suit (``dealer_declares``)."""
    draw_when_able: bool = True
    """May a player draw while holding a playable card?"""
    max_draws_per_turn: int | None = None
    """Draws allowed in one turn (``None``: draw until you can play)."""
    stock_exhausted: str = "reshuffle"
    """Empty stock: ``reshuffle`` the discard pile, ``pass``, or ``end`` the hand (scored as blocked)."""
    scoring: str = "winner_collects"
    """``winner_collects`` (winner scores the others' hand points) or ``penalty`` (each loser adds his own)."""
    card_points: Mapping[str, int] = field(default_factory=dict)
    """Overrides of card points by rank char, e.g. ``{"8": 8}``."""
    match_target: str | int = "auto"
    """Match target score; ``auto`` = 50 x number of players."""
    match_hands: int | None = None
    """Play exactly this many hands (then ties broken by sudden death) instead of playing to a target."""
    effects: Mapping[str, str | int] = field(default_factory=dict)
    """Special cards: rank char or card text -> ``skip``, ``reverse``, ``any_next`` or ``{draw: N}``."""
    last_card_call: bool = False
    """A player left with one card must announce "last card" or draw ``last_card_penalty`` cards."""
    last_card_penalty: int = 2
    """Cards drawn for not announcing "last card"."""
    stop_threshold: int | None = None
    """At the start of his turn a player whose hand is worth this many points or less may call stop."""
    countdown: bool = False
    """Countdown (001): each player's count (start 8) is his hand size and personal wild rank."""

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        _require(self.decks == "auto" or (_is_int(self.decks) and self.decks in (1, 2)), "decks", self.decks,
                 "'auto', 1 or 2")
        _require(self.hand_size == "auto" or (_is_int(self.hand_size) and self.hand_size >= 1), "hand_size",
                 self.hand_size, "'auto' or an int >= 1")
        _bounded("hand_size", self.hand_size)
        try:
            setattr_(self, "wild_rank", RANKS[parse_rank(self.wild_rank)])
        except ValueError:
            _require(False, "wild_rank", self.wild_rank, f"a rank char: {', '.join(RANKS)} (or 10)")
        _require(self.starter_wild in ("bury", "dealer_declares"), "starter_wild", self.starter_wild,
                 "'bury' or 'dealer_declares'")
        _require(isinstance(self.draw_when_able, bool), "draw_when_able", self.draw_when_able, "true or false")
        _require(self.max_draws_per_turn is None or (_is_int(self.max_draws_per_turn) and self.max_draws_per_turn >= 1),
                 "max_draws_per_turn", self.max_draws_per_turn, "null or an int >= 1")
        _bounded("max_draws_per_turn", self.max_draws_per_turn)
        _require(self.stock_exhausted in ("reshuffle", "pass", "end"), "stock_exhausted", self.stock_exhausted,
                 "'reshuffle', 'pass' or 'end'")
        _require(self.scoring in ("winner_collects", "penalty"), "scoring", self.scoring,
                 "'winner_collects' or 'penalty'")
        _require(isinstance(self.card_points, Mapping), "card_points", self.card_points,
                 "a map from rank char to int >= 0")
        points = {}
        for key, value in self.card_points.items():
            rank = _rank_key("card_points", key)
            if rank in points:
                raise ValueError(
                    f"RuleSet field 'card_points' names {rank!r} twice (as {key!r}); allowed: one entry per rank"
                )
            _require(_is_int(value) and value >= 0, "card_points", {key: value}, "a map from rank char to int >= 0")
            _bounded("card_points", value, {key: value})
            points[rank] = value
        setattr_(self, "card_points", MappingProxyType(points))
        _require(self.match_target == "auto" or (_is_int(self.match_target) and self.match_target >= 1),
                 "match_target", self.match_target, "'auto' or an int >= 1")
        _bounded("match_target", self.match_target)
        _require(self.match_hands is None or (_is_int(self.match_hands) and self.match_hands >= 1), "match_hands",
                 self.match_hands, "null or an int >= 1")
        _bounded("match_hands", self.match_hands)
        _require(isinstance(self.effects, Mapping), "effects", self.effects, f"a map from rank or card to {_EFFECT_HELP}")
        effects = {}
        for key, value in self.effects.items():
            canon = _effect_key(key)
            if canon in effects:
                raise ValueError(f"RuleSet field 'effects' names {canon!r} twice (as {key!r})")
            effects[canon] = _effect_value(canon, value)
        setattr_(self, "effects", MappingProxyType(effects))
        _require(isinstance(self.last_card_call, bool), "last_card_call", self.last_card_call, "true or false")
        _require(_is_int(self.last_card_penalty) and self.last_card_penalty >= 1, "last_card_penalty",
                 self.last_card_penalty, "an int >= 1")
        _bounded("last_card_penalty", self.last_card_penalty)
        _require(self.stop_threshold is None or (_is_int(self.stop_threshold) and self.stop_threshold >= 0),
                 "stop_threshold", self.stop_threshold, "null or an int >= 0")
        _bounded("stop_threshold", self.stop_threshold)
        _require(isinstance(self.countdown, bool), "countdown", self.countdown, "true or false")
        if not self.countdown:
            for key in effects:
                if key[0] == self.wild_rank:
                    raise ValueError(
                        f"RuleSet field 'effects' gives {key!r} an effect, but {self.wild_rank!r} is the wild rank; "
                        "the wild rank cannot carry an effect"
                    )
        self._build_tables()

    def _build_tables(self) -> None:
        """Per-card lookup tables (derived data, not fields)."""
        rank_points = list(DEFAULT_RANK_POINTS)
        for rank, value in self.card_points.items():
            rank_points[RANKS.index(rank)] = value
        effect_code = [int(Effect.NONE)] * NUM_CARDS
        draw_amount = [0] * NUM_CARDS
        for card in range(NUM_CARDS):
            text = card_text(card)
            value = self.effects.get(text, self.effects.get(text[0]))
            if value is None:
                continue
            if isinstance(value, Mapping):
                effect_code[card], draw_amount[card] = int(Effect.DRAW), value["draw"]
            else:
                effect_code[card] = int(_EFFECT_NAMES[value])
        wild = RANKS.index(self.wild_rank)
        tables = {
            "point_table": tuple(rank_points[rank_of(c)] for c in range(NUM_CARDS)),
            "effect_table": tuple(effect_code),
            "draw_table": tuple(draw_amount),
            "draw_cards_mask": sum(1 << c for c in range(NUM_CARDS) if draw_amount[c]),
            "wild_rank_index": wild,
            "wild_mask": RANK_MASKS[wild],
        }
        for name, value in tables.items():
            object.__setattr__(self, name, value)

    def __new__(cls, *args: Any, **kwargs: Any) -> RuleSet:
        unknown = sorted(set(kwargs) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(
                f"unknown RuleSet field(s) {unknown}; allowed: {', '.join(f.name for f in dataclasses.fields(cls))} "
                f"(see {RULES_DOC})"
            )
        return super().__new__(cls)

    def __hash__(self) -> int:
        # maps hash by content, not order, as == compares them
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def __reduce__(self) -> tuple:
        # pickle/deepcopy (the mappingproxy fields cannot be pickled themselves)
        return (_from_fields, (self.to_dict(),))

    # ----- derived values -------------------------------------------------------------------------
    def num_decks(self, num_players: int) -> int:
        """Decks in play for a player count."""
        if self.decks == "auto":
            return 1 if num_players <= 5 else 2
        return self.decks

    def deal_size(self, num_players: int) -> int:
        """Cards dealt to each player (countdown aside)."""
        if self.hand_size == "auto":
            return 7 if num_players == 2 else 5
        return self.hand_size

    def target(self, num_players: int) -> int:
        """Match target score for a player count."""
        return 50 * num_players if self.match_target == "auto" else self.match_target

    def card_points_of(self, card: int) -> int:
        """Points of one card id."""
        return self.point_table[card]

    def effect_of(self, card: int) -> Effect:
        """The special effect of one card id (``Effect.NONE`` for a plain card)."""
        return Effect(self.effect_table[card])

    def spec(self) -> str | dict[str, Any]:
        """The shortest description of this rule set: a preset name when it equals a preset, else
        ``{"preset": name, **fields that differ}`` from the preset it differs least from (``standard``
        first on ties). :meth:`State.to_dict` writes it under ``rules``; :func:`load_rules` reads it back."""
        cached = self.__dict__.get("_spec")
        if cached is None:
            mine = self.to_dict()
            best: tuple[int, str, dict[str, Any]] | None = None
            for name in sorted(preset_names(), key=lambda n: (n != "standard", n)):
                theirs = _preset_ruleset(name).to_dict()
                differ = {k: v for k, v in mine.items() if theirs[k] != v}
                if best is None or len(differ) < best[0]:
                    best = (len(differ), name, differ)
            if best is None:  # no presets shipped: every field
                cached = dict(mine)
            else:
                cached = best[1] if not best[2] else {"preset": best[1], **best[2]}
            object.__setattr__(self, "_spec", cached)
        return json.loads(json.dumps(cached)) if isinstance(cached, dict) else cached

    def differences(self, other: RuleSet) -> list[str]:
        """Names of the fields whose values differ between two rule sets."""
        mine, theirs = self.to_dict(), other.to_dict()
        return [k for k in mine if mine[k] != theirs[k]]

    # ----- construction ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain data (YAML/JSON-ready) that :meth:`from_dict` turns back into this rule set."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["card_points"] = dict(self.card_points)
        out["effects"] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.effects.items()}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleSet:
        """Rule set from a dict of fields; ``preset:`` names a preset whose fields the others override."""
        if not isinstance(data, Mapping):
            raise ValueError(f"rules must be a mapping of RuleSet fields, got {type(data).__name__}")
        data = dict(data)
        base: dict[str, Any] = {}
        if "preset" in data:
            base = _preset_fields(data.pop("preset"))
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(map(str, data)) - known)
        if unknown:
            raise ValueError(f"unknown RuleSet field(s) {unknown}; allowed: preset, {', '.join(sorted(known))} "
                             f"(see {RULES_DOC})")
        base.update(data)
        return cls(**base)

    @classmethod
    def from_preset(cls, name: str) -> RuleSet:
        """One of the shipped presets by name (see :func:`preset_names`)."""
        return cls.from_dict(_preset_fields(name))

    @classmethod
    def from_yaml(cls, path: str | Path) -> RuleSet:
        """Rule set from a YAML file of fields (which may name ``preset:``)."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"rules file {str(path)!r} does not exist")
        data = read_yaml(path, "rules file") or {}
        try:
            return cls.from_dict(data)
        except ValueError as err:
            raise ValueError(f"rules file {str(path)!r}: {err}") from None


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A YAML mapping names a key twice (YAML wants keys unique; PyYAML would silently keep the last)."""


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that names a key twice (:class:`DuplicateKeyError`); keys
    merged in with ``<<`` may still be overridden."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:  # an unhashable key: the base class says so
                    continue
                if key in seen:
                    raise DuplicateKeyError("while constructing a mapping", node.start_mark,
                                            f"the key {key!r} appears twice (first on line {seen[key] + 1})",
                                            key_node.start_mark)
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


def safe_load_unique(text: str) -> Any:
    """``yaml.safe_load`` that refuses duplicate keys (:class:`UniqueKeyLoader`)."""
    return yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader


def yaml_problem(err: yaml.YAMLError) -> str:
    """One line saying what is wrong in a YAML text and where (line and column, 1-based)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}"


def read_yaml(path: Path, what: str) -> Any:
    """A YAML file's data; a ``ValueError`` of one line naming the file and the problem if it cannot be read."""
    try:
        return safe_load_unique(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"{what} {str(path)!r} is not valid YAML ({yaml_problem(err)})") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{what} {str(path)!r} cannot be read ({type(err).__name__}: {err})") from None


def _from_fields(data: dict[str, Any]) -> RuleSet:
    return RuleSet(**data)


@functools.cache
def _preset_ruleset(name: str) -> RuleSet:
    return RuleSet.from_preset(name)


def _preset_fields(name: Any) -> dict[str, Any]:
    names = preset_names()
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"unknown rules preset {name!r}; allowed: {', '.join(names)} (see {RULES_DOC})")
    data = safe_load_unique((PRESETS_DIR / f"{name}.yaml").read_text()) or {}
    if "preset" in data:
        raise ValueError(f"preset file {name}.yaml may not itself name a preset")
    return data


def load_rules(rules: str | Path | Mapping[str, Any] | RuleSet) -> RuleSet:
    """A :class:`RuleSet` from a preset name, a YAML path, a dict, or a RuleSet (returned as is)."""
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, Mapping):
        return RuleSet.from_dict(rules)
    if isinstance(rules, Path) or (isinstance(rules, str) and rules.endswith((".yaml", ".yml"))):
        return RuleSet.from_yaml(rules)
    if isinstance(rules, str):
        return RuleSet.from_preset(rules)
    raise ValueError(
        f"rules {rules!r} must be a preset name ({', '.join(preset_names())}), a YAML path, a dict or a RuleSet"
    )
