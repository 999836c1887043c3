"""RuleSet: presets exactly as docs/rules.md's table, YAML and dict overrides, immutability, key forms."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

import c8env
from c8env import RuleSet

REPO = Path(__file__).resolve().parent.parent.parent

#: docs/rules.md "Presets": each preset is the default rules plus exactly these settings.
PRESET_TABLE: dict[str, dict] = {
    "standard": {},
    "special_cards": {"effects": {"Q": "skip", "A": "reverse", "2": {"draw": 2}}},
    "action_cards": {"effects": {"2": {"draw": 2}, "3": {"draw": 3}, "J": "skip", "Q": "reverse", "A": "any_next"}},
    "uno_like": {"effects": {"2": {"draw": 2}, "J": "skip", "A": "reverse", "QS": {"draw": 5}}},
    "crazy_aces": {"wild_rank": "A", "card_points": {"8": 8}},
    "draw_one": {"max_draws_per_turn": 1},
    "draw_three": {"max_draws_per_turn": 3},
    "no_reshuffle": {"stock_exhausted": "pass"},
    "penalty": {"scoring": "penalty", "match_target": 100},
    "five_hands": {"hand_size": 5, "max_draws_per_turn": 3, "stock_exhausted": "end", "scoring": "penalty",
                   "match_hands": 5},
    "last_card": {"last_card_call": True},
    "stop_the_round": {"stop_threshold": 5},
    "countdown": {"countdown": True},
    "dealer_declares": {"starter_wild": "dealer_declares"},
}

#: docs/rules.md defaults, field by field.
DEFAULTS = {
    "decks": "auto",
    "hand_size": "auto",
    "wild_rank": "8",
    "starter_wild": "bury",
    "draw_when_able": True,
    "max_draws_per_turn": None,
    "stock_exhausted": "reshuffle",
    "scoring": "winner_collects",
    "card_points": {},
    "match_target": "auto",
    "match_hands": None,
    "effects": {},
    "last_card_call": False,
    "last_card_penalty": 2,
    "stop_threshold": None,
    "countdown": False,
}


def test_preset_names_are_the_fourteen() -> None:
    assert sorted(c8env.preset_names()) == sorted(PRESET_TABLE)
    assert len(PRESET_TABLE) == 14


def test_defaults_match_rules_md() -> None:
    assert RuleSet().to_dict() == DEFAULTS
    field_names = {f.name for f in dataclasses.fields(RuleSet)}
    assert field_names == set(DEFAULTS)


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_preset_is_defaults_plus_table_settings(name: str) -> None:
    expected = RuleSet().to_dict()
    expected.update(PRESET_TABLE[name])
    assert RuleSet.from_preset(name).to_dict() == expected
    # the same through every entry point
    assert c8env.load_rules(name) == RuleSet.from_preset(name)
    assert c8env.load_rules({"preset": name}) == RuleSet.from_preset(name)
    assert RuleSet.from_dict(expected) == RuleSet.from_preset(name)
    assert c8env.State.new(2, name, seed=0).rules == RuleSet.from_preset(name)


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_to_dict_round_trips(name: str) -> None:
    rules = RuleSet.from_preset(name)
    assert RuleSet.from_dict(rules.to_dict()) == rules
    assert RuleSet(**rules.to_dict()) == rules
    assert c8env.load_rules(rules) is rules


def test_rules_values_via_accessors() -> None:
    assert RuleSet().num_decks(5) == 1
    assert RuleSet().num_decks(6) == 2
    assert RuleSet().num_decks(7) == 2
    assert RuleSet(decks=2).num_decks(2) == 2
    assert RuleSet(decks=1).num_decks(7) == 1
    assert RuleSet().deal_size(2) == 7
    assert all(RuleSet().deal_size(n) == 5 for n in range(3, 8))
    assert RuleSet(hand_size=9).deal_size(2) == 9
    assert [RuleSet().target(n) for n in range(2, 8)] == [100, 150, 200, 250, 300, 350]
    assert RuleSet.from_preset("penalty").target(4) == 100


# ----- YAML and dict overrides ------------------------------------------------------------------------
def test_yaml_file_with_preset_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("preset: uno_like\nhand_size: 6\nmax_draws_per_turn: 1\n")
    expected = RuleSet.from_preset("uno_like").to_dict()
    expected.update(hand_size=6, max_draws_per_turn=1)
    for rules in (RuleSet.from_yaml(path), c8env.load_rules(str(path)), c8env.load_rules(path)):
        assert rules.to_dict() == expected
    state = c8env.State.new(3, str(path), seed=1)
    assert [len(h) for h in state.to_dict()["hands"]] == [6, 6, 6]


def test_yaml_file_without_preset_starts_from_defaults(tmp_path: Path) -> None:
    path = tmp_path / "plain.yml"
    path.write_text("scoring: penalty\nmatch_target: 200\n")
    expected = RuleSet().to_dict()
    expected.update(scoring="penalty", match_target=200)
    assert c8env.load_rules(str(path)).to_dict() == expected


def test_empty_yaml_file_is_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing\n")
    assert c8env.load_rules(path) == RuleSet()


def test_dict_override_replaces_a_map_whole() -> None:
    rules = c8env.load_rules({"preset": "special_cards", "effects": {"J": "skip"}})
    assert rules.to_dict()["effects"] == {"J": "skip"}
    expected = RuleSet().to_dict()
    expected["effects"] = {"J": "skip"}
    assert rules.to_dict() == expected
    # card_points too
    aces = c8env.load_rules({"preset": "crazy_aces", "card_points": {"K": 13}})
    assert aces.to_dict()["card_points"] == {"K": 13}
    assert aces.wild_rank == "A"
    assert aces.card_points_of(c8env.parse_card("8C")) == 50
    # an empty map clears the preset's
    assert c8env.load_rules({"preset": "uno_like", "effects": {}}).to_dict()["effects"] == {}


def test_dict_override_of_scalars_keeps_the_rest() -> None:
    rules = c8env.load_rules({"preset": "five_hands", "match_hands": 3, "scoring": "winner_collects"})
    expected = RuleSet().to_dict()
    expected.update(PRESET_TABLE["five_hands"])
    expected.update(match_hands=3, scoring="winner_collects")
    assert rules.to_dict() == expected


def test_yaml_override_replaces_map_whole(tmp_path: Path) -> None:
    path = tmp_path / "fx.yaml"
    path.write_text('preset: action_cards\neffects: {"2": {draw: 4}}\n')
    assert c8env.load_rules(path).to_dict()["effects"] == {"2": {"draw": 4}}


def test_input_dict_not_mutated() -> None:
    data = {"preset": "uno_like", "hand_size": 4}
    c8env.load_rules(data)
    assert data == {"preset": "uno_like", "hand_size": 4}


# ----- frozen, hashable -------------------------------------------------------------------------------
def test_ruleset_is_frozen() -> None:
    rules = RuleSet.from_preset("uno_like")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.hand_size = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.effects = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        rules.effects["J"] = "reverse"  # type: ignore[index]
    with pytest.raises(TypeError):
        RuleSet.from_preset("crazy_aces").card_points["8"] = 1  # type: ignore[index]
    assert rules == RuleSet.from_preset("uno_like")


def test_ruleset_does_not_alias_caller_maps() -> None:
    effects = {"J": "skip"}
    rules = RuleSet(effects=effects)
    effects["Q"] = "reverse"
    assert dict(rules.effects) == {"J": "skip"}
    out = rules.to_dict()
    out["effects"]["Q"] = "reverse"
    assert dict(rules.effects) == {"J": "skip"}


def test_ruleset_is_hashable_and_eq_consistent() -> None:
    all_rules = [RuleSet.from_preset(name) for name in PRESET_TABLE]
    assert len({hash(r) for r in all_rules}) == 14
    assert len(set(all_rules)) == 14
    assert hash(RuleSet.from_preset("uno_like")) == hash(RuleSet.from_preset("uno_like"))
    table = {r: name for r, name in zip(all_rules, PRESET_TABLE, strict=True)}
    assert table[RuleSet.from_preset("penalty")] == "penalty"


def test_equal_rulesets_hash_equal_whatever_the_map_order() -> None:
    a = RuleSet(effects={"Q": "skip", "A": "reverse", "2": {"draw": 2}})
    b = RuleSet(effects={"2": {"draw": 2}, "A": "reverse", "Q": "skip"})
    assert a == b
    assert hash(a) == hash(b)
    c = RuleSet(card_points={"8": 8, "K": 1})
    d = RuleSet(card_points={"K": 1, 8: 8})
    assert c == d
    assert hash(c) == hash(d)
    assert len({a, b, c, d}) == 2
    assert RuleSet(effects={10: "skip"}) == RuleSet(effects={"T": "skip"})
    assert hash(RuleSet(effects={10: "skip"})) == hash(RuleSet(effects={"T": "skip"}))


def test_ruleset_pickles_and_replaces() -> None:
    rules = RuleSet.from_preset("uno_like")
    again = pickle.loads(pickle.dumps(rules))
    assert again == rules and hash(again) == hash(rules)
    assert again.card_points_of(c8env.parse_card("QS")) == 10
    assert copy.deepcopy(rules) == rules
    changed = RuleSet.from_dict({**rules.to_dict(), "hand_size": 4})
    assert changed.hand_size == 4 and changed.effects == rules.effects


# ----- key forms --------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["10", 10, "T", "t"])
def test_ten_accepted_as_effect_key(key: object) -> None:
    rules = RuleSet(effects={key: "skip"})
    assert rules.to_dict()["effects"] == {"T": "skip"}


@pytest.mark.parametrize(("key", "canon"), [("10H", "TH"), ("qs", "QS"), ("Q♠", "QS"), ("2", "2"), (2, "2"),
                                            ("j", "J"), ("A", "A")])
def test_effect_key_forms(key: object, canon: str) -> None:
    assert list(RuleSet(effects={key: {"draw": 2}}).to_dict()["effects"]) == [canon]


@pytest.mark.parametrize("value", [8, "8"])
def test_int_eight_accepted_for_wild_rank(value: object) -> None:
    assert RuleSet(wild_rank=value).wild_rank == "8"
    assert RuleSet(wild_rank=value) == RuleSet()


def test_int_keys_accepted_for_card_points() -> None:
    rules = RuleSet(card_points={8: 8, 10: 11})
    assert rules.to_dict()["card_points"] == {"8": 8, "T": 11}
    assert rules.card_points_of(c8env.parse_card("8D")) == 8
    assert rules.card_points_of(c8env.parse_card("TD")) == 11
    assert RuleSet(card_points={8: 8}) == RuleSet(card_points={"8": 8})


def test_crazy_aces_as_yaml_with_int_key(tmp_path: Path) -> None:
    path = tmp_path / "aces.yaml"
    path.write_text("wild_rank: A\ncard_points: {8: 8}\n")  # YAML reads 8 as an int
    assert c8env.load_rules(path) == RuleSet.from_preset("crazy_aces")


def test_card_effect_overrides_rank_effect() -> None:
    # uno_like: QS draws 5 while other queens do nothing; a card's own entry beats its rank's.
    rules = RuleSet(effects={"Q": "skip", "QS": {"draw": 5}})
    assert rules.to_dict()["effects"] == {"Q": "skip", "QS": {"draw": 5}}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"effects": {"8": "skip"}},
        {"effects": {8: "reverse"}},
        {"effects": {"8H": {"draw": 2}}},
        {"wild_rank": "A", "effects": {"A": "reverse"}},
        {"wild_rank": "A", "effects": {"AS": "any_next"}},
        {"wild_rank": 10, "effects": {"10": "skip"}},
    ],
)
def test_wild_rank_with_effect_rejected(kwargs: dict) -> None:
    with pytest.raises(ValueError, match=r"wild rank cannot carry an effect"):
        RuleSet(**kwargs)
    with pytest.raises(ValueError, match=r"wild rank"):
        c8env.load_rules(dict(kwargs))


def test_wild_rank_effect_rejected_through_preset_override() -> None:
    with pytest.raises(ValueError, match="wild rank"):
        c8env.load_rules({"preset": "special_cards", "wild_rank": "Q"})
    with pytest.raises(ValueError, match="wild rank"):
        c8env.load_rules({"preset": "crazy_aces", "effects": {"A": "skip"}})
