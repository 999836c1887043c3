"""Every input to the envs gets a clear answer: actions, reset arguments, env.state(), the ecosystem's habits.

State dicts and rules: ``tests/core/test_engine_inputs.py``; agents: ``tests/agents/test_agent_inputs.py``;
command lines: ``tests/tools/test_cli.py``.
"""

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

ROOT = Path(__file__).resolve().parent.parent.parent
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
    assert info["illegal_action"] == -1  # none


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
    from c8env import crazy_eights_v0, crazy_eights_v1, crazy_eights_v2

    assert crazy_eights_v2.env is c8env.env and crazy_eights_v2.raw_env is c8env.raw_env
    assert issubclass(crazy_eights_v0.raw_env, c8env.raw_env) and issubclass(crazy_eights_v1.raw_env, c8env.raw_env)
    assert c8env.raw_env.metadata["render_fps"] > 0 and SingleAgentEnv.metadata["render_fps"] > 0
    assert c8env.raw_env.metadata["name"] == "crazy_eights_v2"
    for module in (crazy_eights_v0, crazy_eights_v1):
        name = module.__name__.rsplit(".", 1)[1]
        assert module.raw_env.metadata["name"] == module.env().metadata["name"] == name
    assert (ROOT / "c8env" / "py.typed").is_file()


def test_gymnasium_make_in_a_fresh_process() -> None:
    script = (
        "import gymnasium, c8env.envs.single_agent\n"
        "env = gymnasium.make('c8env/SingleAgent-v2', num_players=3, opponents='greedy')\n"
        "obs, info = env.reset(seed=0)\n"
        "env.action_space.seed(0)\n"
        "obs, r, term, trunc, info = env.step(env.action_space.sample(env.unwrapped.action_masks().astype('int8')))\n"
        "env2 = gymnasium.make('c8env.envs.single_agent:c8env/SingleAgent-v0')\n"
        "print('ok', obs.shape, env.unwrapped.num_players)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok (401,) 3"


def test_single_agent_reset_refused_late_changes_nothing() -> None:
    env = SingleAgentEnv(num_players=2, opponents="greedy", learner_seat=1)
    env.reset(seed=4)
    before = (env.game.to_dict(), env.learner_seat)
    over_first = {"hands": [["5C"], ["KD", "2H"]], "stock": ["4D"], "discard": ["9C"], "current_player": 0}
    with pytest.raises(ValueError, match="ends .* before the learner"):
        env.reset(seed=1, options={"state": over_first})  # player 0 (greedy) goes out before the learner moves
    assert (env.game.to_dict(), env.learner_seat) == before
    env.step(int(env.action_masks().nonzero()[0][0]))
