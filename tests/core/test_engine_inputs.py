"""Bad input to the engine: every bad rule set, deal, seed, state dict and action raises ValueError naming
the offending key or value and what is allowed; a state dict is checked against the rules it names."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import c8env
from c8env import RuleSet, State


def base_state() -> dict[str, Any]:
    """A small legal position (2 players, standard rules)."""
    return {
        "hands": [["AC", "2D", "KH"], ["3S", "4S", "QD"]],
        "stock": ["5C", "6C", "7C"],
        "discard": ["9C", "TC"],
        "current_player": 0,
    }


def test_base_state_is_fine() -> None:
    state = State.from_dict(base_state())
    assert state.current_player == 0
    assert state.legal_actions()  # AC can follow TC (clubs)


# ----- rules ------------------------------------------------------------------------------------------
def test_unknown_preset() -> None:
    for bad in ("nope", "Standard", "uno"):
        with pytest.raises(ValueError, match=rf"unknown rules preset '{bad}'.*allowed:.*standard.*uno_like"):
            RuleSet.from_preset(bad)
        with pytest.raises(ValueError, match=rf"'{bad}'.*allowed:.*standard"):
            c8env.load_rules(bad)
        with pytest.raises(ValueError, match=rf"'{bad}'.*allowed:.*standard"):
            State.new(2, bad)
    with pytest.raises(ValueError, match=r"unknown rules preset 'nope'.*allowed:.*crazy_aces"):
        c8env.load_rules({"preset": "nope"})
    with pytest.raises(ValueError, match=r"unknown rules preset 3.*allowed"):
        c8env.load_rules({"preset": 3})


def test_unknown_preset_in_yaml(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("preset: not_a_preset\n")
    with pytest.raises(ValueError, match=r"'not_a_preset'.*allowed:.*standard"):
        c8env.load_rules(path)


def test_missing_rules_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.yaml")
    with pytest.raises(ValueError, match="missing.yaml.*does not exist"):
        c8env.load_rules(missing)


def test_yaml_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- decks\n- 2\n")
    with pytest.raises(ValueError, match="mapping of RuleSet fields"):
        c8env.load_rules(path)


def test_malformed_rules_yaml(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("decks: [2\n")
    with pytest.raises(ValueError, match=r"rules file '.*r.yaml' is not valid YAML \(line \d+, column \d+: ") as info:
        c8env.load_rules(path)
    assert "\n" not in str(info.value)
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="cannot be read"):
        c8env.load_rules(path)


@pytest.mark.parametrize("rules", [3, None, 2.5, ["standard"]])
def test_rules_of_wrong_type(rules: Any) -> None:
    with pytest.raises(ValueError, match=r"must be a preset name.*standard.*YAML path, a dict or a RuleSet"):
        c8env.load_rules(rules)


def test_unknown_ruleset_field() -> None:
    with pytest.raises(ValueError, match=r"unknown RuleSet field.*'wild_card'.*allowed:.*wild_rank"):
        c8env.load_rules({"wild_card": "8"})
    with pytest.raises(ValueError, match=r"unknown RuleSet field.*'handsize'.*allowed:.*hand_size"):
        c8env.load_rules({"preset": "standard", "handsize": 5})
    with pytest.raises(ValueError, match=r"'handsize'.*allowed:.*hand_size"):
        State.new(2, {"handsize": 5})


def test_unknown_ruleset_field_in_yaml(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("preset: standard\nmax_draws: 1\n")
    with pytest.raises(ValueError, match=r"'max_draws'.*allowed:.*max_draws_per_turn"):
        c8env.load_rules(path)


def test_unknown_keyword_to_ruleset_constructor() -> None:
    with pytest.raises(ValueError, match=r"'wild_card'.*allowed:.*wild_rank"):
        RuleSet(wild_card="8")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("draw_when_able", "yes", "true or false"),
        ("draw_when_able", 1, "true or false"),
        ("max_draws_per_turn", 0, "null or an int >= 1"),
        ("max_draws_per_turn", -1, "null or an int >= 1"),
        ("max_draws_per_turn", True, "null or an int >= 1"),
        ("max_draws_per_turn", 1.0, "null or an int >= 1"),
        ("max_draws_per_turn", "3", "null or an int >= 1"),
        ("decks", 3, "'auto', 1 or 2"),
        ("decks", 0, "'auto', 1 or 2"),
        ("decks", "two", "'auto', 1 or 2"),
        ("decks", True, "'auto', 1 or 2"),
        ("decks", 1.0, "'auto', 1 or 2"),
        ("decks", 2.0, "'auto', 1 or 2"),
        ("scoring", "x", "'winner_collects' or 'penalty'"),
        ("scoring", None, "'winner_collects' or 'penalty'"),
        ("hand_size", True, "'auto' or an int >= 1"),
        ("hand_size", 0, "'auto' or an int >= 1"),
        ("hand_size", 5.0, "'auto' or an int >= 1"),
        ("hand_size", "5", "'auto' or an int >= 1"),
        ("wild_rank", "X", "a rank char"),
        ("wild_rank", 1, "a rank char"),
        ("wild_rank", 8.0, "a rank char"),
        ("wild_rank", None, "a rank char"),
        ("starter_wild", "discard", "'bury' or 'dealer_declares'"),
        ("stock_exhausted", "stop", "'reshuffle', 'pass' or 'end'"),
        ("match_target", 0, "'auto' or an int >= 1"),
        ("match_target", "100", "'auto' or an int >= 1"),
        ("match_hands", 0, "null or an int >= 1"),
        ("match_hands", 2.5, "null or an int >= 1"),
        ("last_card_call", "true", "true or false"),
        ("last_card_penalty", 0, "an int >= 1"),
        ("stop_threshold", -1, "null or an int >= 0"),
        ("stop_threshold", "5", "null or an int >= 0"),
        ("countdown", 1, "true or false"),
        ("card_points", [8], "a map from rank char to int >= 0"),
        ("effects", ["Q"], "a map from rank or card"),
    ],
)
def test_ill_typed_field(field: str, value: Any, allowed: str) -> None:
    pattern = rf"'{field}'.*{_re(repr(value))}.*allowed: {_re(allowed)}"
    with pytest.raises(ValueError, match=pattern):
        RuleSet(**{field: value})
    with pytest.raises(ValueError, match=rf"'{field}'.*allowed"):
        c8env.load_rules({"preset": "standard", field: value})
    with pytest.raises(ValueError, match=rf"'{field}'.*allowed"):
        State.new(3, {field: value})


def _re(text: str) -> str:
    import re

    return re.escape(text)


@pytest.mark.parametrize(
    ("effects", "pattern"),
    [
        ({"Q": "explode"}, r"'effects'.*'explode'.*'Q'.*allowed: 'skip', 'reverse', 'any_next' or \{draw: N\}"),
        ({"2": {"draw": 0}}, r"'effects'.*\{'draw': 0\}.*allowed:.*\{draw: N\} with N >= 1"),
        ({"2": {"draw": -2}}, r"'effects'.*\{'draw': -2\}.*allowed"),
        ({"2": {"draw": "2"}}, r"'effects'.*\{'draw': '2'\}.*allowed"),
        ({"2": {"draw": True}}, r"'effects'.*\{'draw': True\}.*allowed"),
        ({"2": {"draw": 2, "skip": 1}}, r"'effects'.*allowed"),
        ({"2": 2}, r"'effects'.*value 2 .*allowed"),
        ({"2": "Skip"}, r"'effects'.*'Skip'.*allowed"),
        ({"Z": "skip"}, r"'effects'.*key 'Z'.*allowed: a rank char"),
        ({"1": "skip"}, r"'effects'.*key '1'.*allowed: a rank char"),
        ({"QX": "skip"}, r"'effects'.*key 'QX'.*allowed"),
        ({11: "skip"}, r"'effects'.*key 11.*allowed"),
        ({"Q": "skip", "q": "reverse"}, r"'effects'.*'Q' twice"),
        ({"T": "skip", 10: "skip"}, r"'effects'.*'T' twice"),
    ],
)
def test_bad_effects(effects: dict, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        RuleSet(effects=effects)
    with pytest.raises(ValueError, match=r"'effects'"):
        c8env.load_rules({"preset": "special_cards", "effects": effects})


@pytest.mark.parametrize(
    ("points", "pattern"),
    [
        ({"8": -1}, r"'card_points'.*-1.*allowed: a map from rank char to int >= 0"),
        ({"8": "50"}, r"'card_points'.*'50'.*allowed"),
        ({"8": 8.5}, r"'card_points'.*8\.5.*allowed"),
        ({"8": None}, r"'card_points'.*None.*allowed"),
        ({"X": 1}, r"'card_points'.*key 'X'.*allowed: A, 2, 3"),
        ({1: 1}, r"'card_points'.*key 1.*allowed"),
        ({"8H": 8}, r"'card_points'.*key '8H'.*allowed"),
        ({8: 8, "8": 9}, r"'card_points'.*'8'.*twice"),
    ],
)
def test_bad_card_points(points: dict, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        RuleSet(card_points=points)


def test_wild_rank_effect_error_names_both() -> None:
    with pytest.raises(ValueError, match=r"'effects'.*'8'.*'8' is the wild rank"):
        RuleSet(effects={"8": "skip"})


# ----- players, deal, seed ----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 8, 0, -2, 100])
def test_num_players_out_of_range(n: int) -> None:
    with pytest.raises(ValueError, match=rf"num_players={n}.*allowed: an int from 2 to 7"):
        State.new(n)


@pytest.mark.parametrize("n", ["3", 3.0, True, None])
def test_num_players_ill_typed(n: Any) -> None:
    with pytest.raises(ValueError, match=rf"num_players={_re(repr(n))}.*allowed: an int from 2 to 7"):
        State.new(n)


@pytest.mark.parametrize(
    ("n", "rules", "needed", "holds"),
    [
        (3, {"hand_size": 20, "decks": 1}, 61, 52),
        (2, {"hand_size": 26}, 53, 52),
        (7, {"decks": 1}, 36, 52),  # fits: no error expected, checked below
        (7, {"hand_size": 15}, 106, 104),
        (7, {"countdown": True, "decks": 1}, 57, 52),
    ],
)
def test_deal_needs_more_cards_than_decks_hold(n: int, rules: dict, needed: int, holds: int) -> None:
    if needed <= holds:
        State.new(n, rules, seed=0)  # fits: fine
        return
    with pytest.raises(ValueError, match=rf"needs {needed} cards.*decks=\d holds {holds}"):
        State.new(n, rules, seed=0)


def test_deal_that_fits_exactly() -> None:
    # 3 x 17 + starter = 52 cards: legal, with an empty stock.
    state = State.new(3, {"hand_size": 17, "decks": 1}, seed=0).to_dict()
    assert sum(map(len, state["hands"])) + len(state["stock"]) + len(state["discard"]) == 52


@pytest.mark.parametrize("seed", [-1, "x", 1.5, True, [1]])
def test_bad_seed(seed: Any) -> None:
    with pytest.raises(ValueError, match=rf"seed={_re(repr(seed))}.*allowed: None or an int >= 0"):
        State.new(2, seed=seed)
    with pytest.raises(ValueError, match=rf"seed={_re(repr(seed))}.*allowed"):
        State.from_dict(base_state(), seed=seed)


# ----- malformed state dicts --------------------------------------------------------------------------
def _bad(change: dict[str, Any] | None = None, drop: str | None = None, rules: Any = "standard",
         pattern: str = "") -> None:
    data = copy.deepcopy(base_state())
    if drop:
        del data[drop]
    data.update(change or {})
    before = copy.deepcopy(data)
    with pytest.raises(ValueError, match=pattern):
        State.from_dict(data, rules=rules)
    assert data == before  # the caller's dict is not touched


def test_state_not_a_dict() -> None:
    with pytest.raises(TypeError, match=r"state must be a dict"):
        State.from_dict([["AC"], ["KC"]])  # type: ignore[arg-type]


def test_state_missing_hands() -> None:
    _bad(drop="hands", pattern=r"missing the required key 'hands'")


def test_state_missing_discard() -> None:
    _bad(drop="discard", pattern=r"missing the required key 'discard'")


def test_state_unknown_key() -> None:
    _bad({"hand": []}, pattern=r"unknown state key.*'hand'.*allowed:.*hands")
    _bad({"top_card": "TC"}, pattern=r"unknown state key.*'top_card'.*allowed:.*discard")


def test_state_bad_card_text_in_hands() -> None:
    _bad({"hands": [["AC", "ZZ"], ["3S"]]}, pattern=r"'hands\[0\]'.*'ZZ'.*is not a card")
    _bad({"hands": [["AC"], ["3S", "1H"]]}, pattern=r"'hands\[1\]'.*'1H'.*is not a card")
    _bad({"hands": [["AC"], "3S 4S"]}, pattern=r"'hands\[1\]'.*must be a list of card texts")
    _bad({"hands": "AC"}, pattern=r"'hands'.*must be a list")


def test_state_bad_card_text_in_stock_and_discard() -> None:
    _bad({"stock": ["5C", "XX"]}, pattern=r"'stock'.*'XX'.*is not a card")
    _bad({"discard": ["9C", 10]}, pattern=r"'discard'.*10.*is not a card")
    _bad({"stock": "5C"}, pattern=r"'stock' must be a list of card texts")


def test_state_card_more_often_than_decks_hold() -> None:
    _bad({"hands": [["AC", "AC"], ["3S"]]}, pattern=r"card AC appears 2 times.*decks=1 holds it 1 time")
    _bad({"stock": ["5C", "TC"]}, pattern=r"card TC appears 2 times.*decks=1")
    _bad({"hands": [["AC", "2D"], ["3S"]], "stock": ["2d"]}, pattern=r"card 2D appears 2 times")
    # two decks hold two copies, not three
    ok = {"hands": [["AC", "AC"], ["3S"]], "stock": [], "discard": ["TC"]}
    State.from_dict(ok, rules={"decks": 2})
    _bad({"hands": [["AC", "AC"], ["3S"]], "stock": ["AC"]}, rules={"decks": 2},
         pattern=r"card AC appears 3 times.*decks=2 holds it 2 time")


def test_state_bad_phase() -> None:
    _bad({"phase": "playing"}, pattern=r"'phase' = 'playing'.*allowed: play, declare, announce, over")
    _bad({"phase": 0}, pattern=r"'phase' = 0.*allowed")


def test_state_bad_suit_to_follow() -> None:
    _bad({"suit_to_follow": "X"}, pattern=r"'suit_to_follow' = 'X'.*allowed: C, D, H, S or \*")
    _bad({"suit_to_follow": 2}, pattern=r"'suit_to_follow' = 2.*allowed")
    _bad({"suit_to_follow": "any"}, pattern=r"'suit_to_follow' = 'any'.*allowed")


def test_state_bad_rank_to_follow() -> None:
    _bad({"rank_to_follow": "Z"}, pattern=r"'rank_to_follow' = 'Z'.*allowed: a rank char or null")


@pytest.mark.parametrize("seat", [2, -1, 7, "0", 1.0, True, None])
def test_state_current_player_out_of_range(seat: Any) -> None:
    _bad({"current_player": seat}, pattern=rf"'current_player' = {_re(repr(seat))}.*allowed: an int from 0 to 1")


@pytest.mark.parametrize("direction", [0, 2, -2, "1", None, True, 1.0, -1.0])
def test_state_bad_direction(direction: Any) -> None:
    _bad({"direction": direction}, pattern=rf"'direction' = {_re(repr(direction))}.*allowed: 1 or -1")


@pytest.mark.parametrize("scores", [[0], [0, 0, 0], [], "00", [0, "1"], [0, 1.5], None])
def test_state_wrong_scores(scores: Any) -> None:
    _bad({"scores": scores}, pattern=r"'scores'.*allowed: a list of 2 ints")


def test_state_wrong_countdown_and_voids() -> None:
    _bad({"countdown": [8]}, pattern=r"'countdown'.*allowed: a list of 2 ints 0\.\.8")
    _bad({"countdown": [9, 8]}, pattern=r"'countdown'.*allowed: a list of 2 ints 0\.\.8")
    _bad({"voids": [["C"]]}, pattern=r"'voids'.*allowed: a list of 2 lists of suit chars")
    _bad({"voids": [["C"], ["X"]]}, pattern=r"'voids'.*'X'.*allowed: suit chars")


def test_state_empty_discard() -> None:
    _bad({"discard": []}, pattern=r"'discard' is empty.*at least the top card")


def test_state_bad_counts() -> None:
    _bad({"num_players": 3}, pattern=r"'hands' has 2 hands but num_players is 3")
    _bad({"num_players": 8, "hands": [["AC"]] * 8}, pattern=r"num_players=8.*allowed: an int from 2 to 7")
    _bad({"hands": [["AC", "2D"]]}, pattern=r"num_players=1.*allowed: an int from 2 to 7")
    _bad({"pending_draw": -1}, pattern=r"'pending_draw' = -1.*allowed: an int >= 0")
    _bad({"draws_this_turn": "0"}, pattern=r"'draws_this_turn' = '0'.*allowed: an int >= 0")
    _bad({"passes": 2}, pattern=r"'passes' = 2.*allowed: an int from 0 to 1")
    _bad({"hands_played": -1}, pattern=r"'hands_played' = -1.*allowed")
    _bad({"dealer": 5}, pattern=r"'dealer' = 5.*allowed: an int from 0 to 1")


def test_state_empty_hand_in_play() -> None:
    _bad({"hands": [[], ["3S"]]}, pattern=r"'hands\[0\]' is empty but phase is 'play'")


def test_state_bad_winner() -> None:
    _bad({"winner": 0}, pattern=r"'winner' = 0.*allowed: null, or a seat when phase is 'over'")
    _bad({"phase": "over", "winner": 2}, pattern=r"'winner' = 2.*allowed")


def test_state_bad_rules_argument() -> None:
    with pytest.raises(ValueError, match=r"unknown rules preset 'nope'"):
        State.from_dict(base_state(), rules="nope")


# ----- State.from_dict: the whole position, the rules key --------------------------------------------------
def position(**extra: Any) -> dict[str, Any]:
    return {"hands": [["5C", "KD"], ["2H", "3H"]], "stock": ["4D"], "discard": ["9C"], **extra}


@pytest.mark.parametrize("extra, rules, message", [
    ({}, None, None),
    ({"phase": "announce"}, "standard", "phase 'announce' cannot happen under standard: last_card_call is off"),
    ({"phase": "announce"}, "last_card", "player 0 holds 2 cards, not 1"),
    ({"phase": "declare"}, "standard", "phase 'declare' cannot happen under standard: the top card 9C is not a wild card"),
    ({"pending_draw": 2}, "standard", "'pending_draw' = 2 cannot happen under standard: these rules have no draw cards"),
    ({"pending_draw": 2}, "special_cards", "the top card 9C was not played as a draw card"),
    ({"discard": ["2C"], "pending_draw": 1}, "special_cards", "2C makes 2"),
    ({"discard": ["2C"], "pending_draw": 2, "draws_this_turn": 1}, "special_cards", "has not drawn this turn"),
    ({"direction": -1}, "standard", "'direction' = -1 cannot happen under standard: no card reverses"),
    ({"suit_to_follow": "*"}, "standard", "the top card 9C has no any_next effect"),
    ({"rank_to_follow": None}, "standard", "9C is wild for nobody"),
    ({"suit_to_follow": "H"}, "standard", "a card played normally leaves its own suit and rank"),
    ({"discard": ["8C"], "rank_to_follow": "8"}, "standard", "8C is a wild card"),
    ({"scores": [5, 0]}, "standard", "scores come from finished hands"),
    ({"scores": [150, 0], "hands_played": 3}, "standard", "the match ended with these totals"),
    ({"countdown": [8, 7]}, "standard", "without the countdown rule every count stays 8"),
    ({"countdown": [0, 7], "hands_played": 8}, "countdown", "a count of 0 ends the match"),
    ({"phase": "over"}, "standard", "a finished hand counts itself in hands_played"),
    ({"draws_this_turn": 2}, {"preset": "standard", "max_draws_per_turn": 1}, "max_draws_per_turn is 1"),
])
def test_from_dict_checks_the_position_against_the_rules(extra: dict, rules: Any, message: str | None) -> None:
    data = position(**extra)
    if message is None:
        State.from_dict(data)
        return
    with pytest.raises(ValueError, match="cannot happen under") as info:
        State.from_dict(data, rules=rules)
    assert message in str(info.value) and "docs/state-format.md" in str(info.value)


def test_reachable_special_positions_are_accepted() -> None:
    State.from_dict(position(discard=["2C"], pending_draw=4), rules="special_cards")  # stacked draw twos
    State.from_dict(position(discard=["8C"], rank_to_follow=None, suit_to_follow="H"))  # a declared suit
    State.from_dict(position(discard=["8C"], phase="declare", rank_to_follow=None))
    State.from_dict(position(hands=[["5C"], ["2H"]], phase="announce"), rules="last_card")
    State.from_dict(position(hands=[[], ["2H"]], phase="over", winner=0, hands_played=1, scores=[2, 0]))


def test_stock_is_required() -> None:
    data = position()
    del data["stock"]
    with pytest.raises(ValueError, match="missing the required key 'stock'; required: hands, stock, discard"):
        State.from_dict(data)


def test_to_dict_records_the_rules_and_from_dict_uses_them() -> None:
    for rules, spec in (("special_cards", "special_cards"),
                        ({"preset": "standard", "card_points": {"8": 8}}, {"preset": "standard", "card_points": {"8": 8}}),
                        (c8env.load_rules("uno_like"), "uno_like")):
        state = State.new(3, rules, seed=1)
        d = state.to_dict()
        assert d["rules"] == spec
        again = State.from_dict(d)
        assert again.rules == state.rules and again.to_dict() == d
        assert State.from_dict(d, rules=state.rules).rules == state.rules  # the same rules, written another way
        with pytest.raises(ValueError, match=r"the rules argument contradicts the state's 'rules' key .*fields that differ"):
            State.from_dict(d, rules="crazy_aces")
    for bad, message in (("nope", "state key 'rules': unknown rules preset 'nope'"), (3, "state key 'rules' = 3"),
                         ({"preset": "standard", "wild_card": "A"}, "state key 'rules': unknown RuleSet field")):
        with pytest.raises(ValueError, match=message):
            State.from_dict(position(rules=bad))
    env = c8env.raw_env(rules="standard")
    with pytest.raises(ValueError, match="contradicts"):
        env.reset(options={"state": State.new(2, "crazy_aces", seed=0).to_dict()})


# ----- illegal actions --------------------------------------------------------------------------------
@pytest.mark.parametrize("action", [-1, 60, 1000, 52, 58, 59, "56", 56.0, None, True])
def test_illegal_action_raises_and_changes_nothing(action: Any) -> None:
    state = State.from_dict(base_state(), rules={"draw_when_able": False})
    before = state.to_dict()
    legal = state.legal_actions()
    with pytest.raises(c8env.IllegalActionError) as info:
        state.apply(action)
    assert isinstance(info.value, ValueError)
    assert str(action) in str(info.value)
    assert state.to_dict() == before
    assert state.legal_actions() == legal


def test_illegal_action_message_names_legal_ones() -> None:
    state = State.from_dict(base_state())
    with pytest.raises(c8env.IllegalActionError, match=r"action 51 .*illegal.*legal: 0 \(play AC\), 56 \(draw\)"):
        state.apply(51)


def test_next_hand_before_hand_over() -> None:
    state = State.new(2, seed=0)
    with pytest.raises(ValueError, match="next_hand"):
        state.next_hand()
