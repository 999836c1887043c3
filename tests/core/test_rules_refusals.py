"""Rule dicts and rules files refuse what they cannot mean: unknown keys, a key named twice in a YAML file,
values out of range (below or above what any game can reach); each with a one-line ValueError naming the key."""

from __future__ import annotations

import pytest
import yaml

import c8env
from c8env.rules import LIMITS, MAX_CARDS, DuplicateKeyError, RuleSet, safe_load_unique


@pytest.mark.parametrize("text, words", [
    ("preset: standard\ndecks: 1\nhand_size: 5\ndecks: 2\n", ["line 4", "'decks' appears twice", "first on line 2"]),
    ("effects:\n  J: skip\n  J: reverse\n", ["line 3", "'J' appears twice", "first on line 2"]),
    ("card_points: {8: 20, 8: 30}\n", ["the key 8 appears twice", "column 22"]),
    ("preset: uno_like\npreset: standard\n", ["'preset' appears twice"]),
])
def test_a_rules_file_naming_a_key_twice_is_refused(tmp_path, text, words) -> None:
    path = tmp_path / "house.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        c8env.load_rules(path)
    message = str(info.value)
    assert "\n" not in message and "house.yaml" in message and "not valid YAML" in message
    for word in words:
        assert word in message, message


def test_the_unique_key_loader_keeps_yaml_merges_and_different_keys() -> None:
    assert safe_load_unique("a: &x {b: 1, c: 2}\nd:\n  <<: *x\n  b: 3\n") == {"a": {"b": 1, "c": 2},
                                                                             "d": {"b": 3, "c": 2}}
    assert safe_load_unique("8: 1\n'8': 2\n") == {8: 1, "8": 2}  # an int and a str: RuleSet names the rank twice
    with pytest.raises(DuplicateKeyError):
        safe_load_unique("[{a: 1, a: 1}]")
    assert isinstance(DuplicateKeyError("x"), yaml.YAMLError)
    for name in c8env.preset_names():  # every shipped preset is still read
        assert isinstance(c8env.load_rules(name), RuleSet)


@pytest.mark.parametrize("data, words", [
    ({"bogus": 1}, ["unknown RuleSet field(s) ['bogus']", "allowed: preset"]),
    ({"preset": "standard", "Decks": 1}, ["['Decks']"]),
    ({"preset": "nope"}, ["unknown rules preset 'nope'"]),
    ({"decks": 3}, ["'decks' = 3", "'auto', 1 or 2"]),
    ({"hand_size": 0}, ["'hand_size' = 0", "an int >= 1"]),
    ({"hand_size": MAX_CARDS // 2}, ["'hand_size' = 52", "at most 51"]),
    ({"max_draws_per_turn": 0}, ["'max_draws_per_turn' = 0"]),
    ({"max_draws_per_turn": MAX_CARDS + 1}, ["'max_draws_per_turn' = 105", "at most 104"]),
    ({"card_points": {"8": -1}}, ["'card_points'", "int >= 0"]),
    ({"card_points": {"8": 10**30}}, ["'card_points'", "at most 10,000"]),
    ({"card_points": {"T": 5, "10": 6}}, ["'card_points' names 'T' twice"]),
    ({"match_target": 0}, ["'match_target' = 0"]),
    ({"match_target": 10**7}, ["'match_target' = 10000000", "at most 1,000,000"]),
    ({"match_hands": 10**5}, ["'match_hands' = 100000", "at most 10,000"]),
    ({"last_card_penalty": 0}, ["'last_card_penalty' = 0"]),
    ({"last_card_penalty": 500}, ["'last_card_penalty' = 500", "at most 104"]),
    ({"stop_threshold": -1}, ["'stop_threshold' = -1"]),
    ({"stop_threshold": 10**9}, ["'stop_threshold'", "at most 1,000,000"]),
    ({"effects": {"J": {"draw": 0}}}, ["'effects'", "{'draw': 0}", "'J'"]),
    ({"effects": {"J": {"draw": 500}}}, ["'effects'", "{'draw': 500}", "N >= 1 (at most 104)"]),
    ({"effects": {"J": "skip", "11": "reverse"}}, ["'effects'", "'11'"]),
])
def test_rule_dicts_refuse_unknown_keys_and_values_out_of_range(data, words) -> None:
    with pytest.raises(ValueError) as info:
        c8env.load_rules(data)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message


def test_the_bounds_themselves_are_allowed() -> None:
    rules = c8env.load_rules({name: bound for name, (bound, _) in LIMITS.items() if name not in ("card_points", "draw")}
                             | {"card_points": {"8": LIMITS["card_points"][0]}, "effects": {"J": {"draw": MAX_CARDS}}})
    assert rules.hand_size == 51 and rules.card_points["8"] == 10_000 and rules.effects["J"]["draw"] == 104
