"""Every input gets a clear answer: actions, reset arguments, env.state(), the ecosystem's habits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import c8env
from c8env import State
from c8env.actions import ActionRangeError, ActionTypeError, action_id
from c8env.envs.single_agent import SingleAgentEnv

ROOT = Path(__file__).resolve().parent.parent
REFUSED = [True, False, 3.0, None, 60, -1, "3", np.array([3]), np.array(3.0), np.bool_(True), [3]]


def test_action_id_accepts_integer_likes_only() -> None:
    for good in (3, np.int64(3), np.int8(3), np.uint16(3), np.array(3), np.array(3, dtype=np.int32)):
        assert action_id(good) == 3 and type(action_id(good)) is int
    for bad in REFUSED:
        with pytest.raises((TypeError, ValueError), match="allowed: an int action id from 0 to 59"):
            action_id(bad)
    assert issubclass(ActionTypeError, TypeError) and issubclass(ActionRangeError, ValueError)


def _live_aec() -> Any:
    env = c8env.env(num_players=2)
    env.reset(seed=3)
    return env


@pytest.mark.parametrize("bad", REFUSED, ids=repr)
def test_aec_env_refuses_non_actions_and_changes_nothing(bad: Any) -> None:
    for env in (_live_aec(), c8env.raw_env(num_players=2)):
        if env.unwrapped is env:
            env.reset(seed=3)
        before = env.unwrapped.game.to_dict()
        agent = env.agent_selection
        with pytest.raises((TypeError, ValueError)) as info:
            env.step(bad)
        message = str(info.value)
        assert "allowed: an int action id from 0 to 59" in message and "legal now:" in message
        assert env.unwrapped.game.to_dict() == before
        assert env.agent_selection == agent and not any(env.terminations.values())
        assert env.rewards[agent] == 0


@pytest.mark.parametrize("kind", [np.int64, np.array, int])
def test_aec_env_and_single_agent_env_accept_integer_likes(kind: Any) -> None:
    env = _live_aec()
    obs, *_ = env.last()
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    env.step(kind(legal))
    assert env.unwrapped.game.to_dict() != _live_aec().unwrapped.game.to_dict()
    single = SingleAgentEnv(opponents="greedy")
    single.reset(seed=0)
    _, _, _, _, info = single.step(kind(int(single.action_masks().nonzero()[0][0])))
    assert "illegal_action" not in info


def test_aec_env_still_penalises_a_legal_range_illegal_move() -> None:
    env = _live_aec()
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    agent = env.agent_selection
    env.step(illegal)
    assert all(env.terminations.values()) and env.rewards[agent] == -1


@pytest.mark.parametrize("bad", REFUSED, ids=repr)
def test_single_agent_env_refuses_non_actions_in_both_modes(bad: Any) -> None:
    for mode in ("penalty", "raise"):
        env = SingleAgentEnv(opponents="greedy", illegal_action=mode)
        env.reset(seed=0)
        before = env.game.to_dict()
        with pytest.raises((TypeError, ValueError), match="allowed: an int action id from 0 to 59"):
            env.step(bad)
        assert env.game.to_dict() == before
        env.step(int(env.action_masks().nonzero()[0][0]))  # still playable


def test_reset_refuses_bad_seeds_and_options_and_changes_nothing() -> None:
    aec, single = c8env.raw_env(), SingleAgentEnv()
    aec.reset(seed=1)
    single.reset(seed=1)
    before = (aec.game.to_dict(), single.game.to_dict())
    for env in (aec, single):
        for seed in ("a", -1, 1.5, True):
            with pytest.raises(ValueError, match=rf"seed={seed!r} is invalid; allowed: None or an int >= 0"):
                env.reset(seed=seed)
        with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['sate'\]; allowed: state"):
            env.reset(options={"sate": {}})
        with pytest.raises(TypeError, match="options=.*allowed: None or a dict"):
            env.reset(options=["state"])
        with pytest.raises(ValueError, match="missing the required key 'stock'"):
            env.reset(options={"state": {"hands": [["AC"], ["2C"]], "discard": ["3C"]}})
        with pytest.raises(ValueError, match="has 3 players but the env has 2"):
            env.reset(options={"state": {"hands": [["AC"], ["2C"], ["4C"]], "stock": [], "discard": ["3C"]}})
    assert (aec.game.to_dict(), single.game.to_dict()) == before
    aec.reset(seed=0, options={"options": 1})  # what PettingZoo's api_test passes


def test_env_game_is_the_engine_state_and_state_is_pettingzoos() -> None:
    env = c8env.env(num_players=3)
    with pytest.raises(RuntimeError, match="before reset"):
        env.unwrapped.state()
    env.reset(seed=2)
    state = env.unwrapped.game
    assert isinstance(state, State) and state.num_players == 3
    assert not callable(state)  # the engine knows nothing of PettingZoo
    vector = env.state()
    space = env.unwrapped.state_space
    assert vector.shape == space.shape == (7 * c8env.OBS_SIZE,) and space.contains(vector)
    from c8env.observation import encode_observation

    for seat in range(3):
        assert np.array_equal(vector[seat * c8env.OBS_SIZE:(seat + 1) * c8env.OBS_SIZE], encode_observation(state, seat))
    assert not vector[3 * c8env.OBS_SIZE:].any()


def test_metadata_module_and_typing_marker() -> None:
    from c8env import crazy_eights_v0

    assert crazy_eights_v0.env is c8env.env and crazy_eights_v0.raw_env is c8env.raw_env
    assert c8env.raw_env.metadata["render_fps"] > 0 and SingleAgentEnv.metadata["render_fps"] > 0
    assert c8env.raw_env.metadata["name"] == "crazy_eights_v0"
    assert (ROOT / "c8env" / "py.typed").is_file()


def test_gymnasium_make_in_a_fresh_process() -> None:
    script = (
        "import gymnasium, c8env.envs.single_agent\n"
        "env = gymnasium.make('c8env/SingleAgent-v0', num_players=3, opponents='greedy')\n"
        "obs, info = env.reset(seed=0)\n"
        "env.action_space.seed(0)\n"
        "obs, r, term, trunc, info = env.step(env.action_space.sample(env.unwrapped.action_masks().astype('int8')))\n"
        "env2 = gymnasium.make('c8env.envs.single_agent:c8env/SingleAgent-v0')\n"
        "print('ok', obs.shape, env.unwrapped.num_players)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok (245,) 3"


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


# ----- agents -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["random", "greedy", "expert:simulations=2", "ppo-standard-2p"])
def test_agents_refuse_what_is_no_observation(spec: str) -> None:
    from c8env import agents

    agent = agents.load(spec, seed=0)
    for bad, error in ((np.zeros(245), TypeError), (None, TypeError), ({"observation": np.zeros(245)}, ValueError),
                       ({"observation": np.zeros(10), "action_mask": np.ones(60)}, ValueError),
                       ({"observation": np.zeros(245), "action_mask": np.full(60, 2)}, ValueError)):
        with pytest.raises(error, match=r"\.act: .*|\.act: observation"):
            agent.act(bad)


def test_policy_played_outside_its_training_says_so() -> None:
    import warnings

    from c8env import agents

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agents.load("ppo-standard-2p", rules="standard", num_players=2)  # as trained: no word
    with pytest.warns(agents.PolicyMismatchWarning, match=r"trained for 2 players \(played with 4\)"):
        agents.load("ppo-standard-2p", rules="standard", num_players=4)
    with pytest.warns(agents.PolicyMismatchWarning, match=r"other rules \(fields that differ: wild_rank"):
        agents.load("ppo-standard-2p", rules="crazy_aces", num_players=2)


def test_malformed_rules_yaml(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("decks: [2\n")
    with pytest.raises(ValueError, match=r"rules file '.*r.yaml' is not valid YAML \(line \d+, column \d+: ") as info:
        c8env.load_rules(path)
    assert "\n" not in str(info.value)
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="cannot be read"):
        c8env.load_rules(path)


def test_evaluate_refuses_bad_workers_and_seed() -> None:
    from c8env.tools.evaluation import evaluate

    for workers in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match=rf"workers={workers!r} is invalid; allowed: None \(every core\) or an int >= 1"):
            evaluate(["greedy", "random"], deals=1, workers=workers)
    with pytest.raises(ValueError, match="seed=-1 is invalid"):
        evaluate(["greedy", "random"], deals=1, seed=-1, workers=1)


def test_constructor_and_loader_arguments_are_checked() -> None:
    from c8env import agents
    from c8env.tools.evaluation import evaluate

    for seed in ("a", -1, 1.5):
        with pytest.raises(ValueError, match=rf"seed={seed!r} is invalid"):
            agents.load("random", seed=seed)
    with pytest.raises(ValueError, match="illegal_reward='x' is invalid; allowed: a finite number"):
        SingleAgentEnv(illegal_reward="x")
    with pytest.raises(TypeError, match="specs='greedy' is invalid; allowed: a list of agent specs"):
        evaluate("greedy", deals=1, workers=1)


def test_single_agent_reset_refused_late_changes_nothing() -> None:
    env = SingleAgentEnv(num_players=2, opponents="greedy", learner_seat=1)
    env.reset(seed=4)
    before = (env.game.to_dict(), env.learner_seat)
    over_first = {"hands": [["5C"], ["KD", "2H"]], "stock": ["4D"], "discard": ["9C"], "current_player": 0}
    with pytest.raises(ValueError, match="ends .* before the learner"):
        env.reset(seed=1, options={"state": over_first})  # player 0 (greedy) goes out before the learner moves
    assert (env.game.to_dict(), env.learner_seat) == before
    env.step(int(env.action_masks().nonzero()[0][0]))
