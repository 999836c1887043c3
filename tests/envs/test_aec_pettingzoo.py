"""The env as a PettingZoo AEC env: constructor arguments, metadata, wrappers, pickling,
spaces, agents, bad arguments, and PettingZoo's own ``api_test``, ``seed_test`` and
``render_test`` for every preset with 2-7 players (the env's docstring).
"""

from __future__ import annotations

import inspect
import pickle
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers

import c8env
from c8env import NUM_ACTIONS, RuleSet, preset_names

PRESETS = preset_names()
PLAYER_COUNTS = range(2, 8)


def play_out(env, seed=0):
    """Plays a seeded episode with (seeded) uniformly random masked actions; returns the steps taken."""
    env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    steps = 0
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        action = None if termination or truncation else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)
        steps += 1
    assert env.agents == []
    return steps


# ----- constructor, metadata, wrappers -----------------------------------------------------------------
def test_constructor_arguments_and_defaults():
    params = inspect.signature(c8env.raw_env).parameters
    assert {name: p.default for name, p in params.items()} == {
        "num_players": 2, "rules": "standard", "episode": "hand", "reward": "win", "max_steps": None,
        "render_mode": None,
    }
    for make in (c8env.env, c8env.raw_env):
        env = make()
        env.reset(seed=0)
        assert env.possible_agents == ["player_0", "player_1"]
        assert env.unwrapped.game.rules == RuleSet()
        assert env.unwrapped.game.num_players == 2
        env = make(num_players=4, rules="special_cards", episode="match", reward="points", max_steps=50,
                   render_mode="ansi")
        env.reset(seed=0)
        assert env.possible_agents == [f"player_{i}" for i in range(4)]
        assert env.unwrapped.game.rules == RuleSet.from_preset("special_cards")
        assert isinstance(env.render(), str)
    # positional, as listed
    env = c8env.raw_env(3, "crazy_aces", "hand", "points", 10, "ansi")
    env.reset(seed=0)
    assert env.num_agents == 3 and env.unwrapped.game.rules.wild_rank == "A"


def test_rules_as_preset_path_dict_or_ruleset(tmp_path):
    expected = RuleSet.from_dict({"preset": "special_cards", "match_target": 40})
    path = tmp_path / "mine.yaml"
    path.write_text("preset: special_cards\nmatch_target: 40\n")
    for rules in (str(path), path, {"preset": "special_cards", "match_target": 40}, expected):
        for make in (c8env.env, c8env.raw_env):
            env = make(num_players=3, rules=rules)
            env.reset(seed=1)
            assert env.unwrapped.game.rules == expected
            assert play_out(env, seed=1) > 0


def test_metadata():
    for env in (c8env.env(), c8env.raw_env()):
        assert env.metadata["name"] == "crazy_eights_v2"
        assert env.metadata["is_parallelizable"] is False
        assert set(env.metadata["render_modes"]) == {"ansi", "human"}


def test_env_is_wrapped_like_the_classic_envs():
    env = c8env.env(num_players=3)
    assert isinstance(env, AECEnv)
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert isinstance(env.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, wrappers.TerminateIllegalWrapper)
    assert isinstance(env.env.env.env, c8env.raw_env)
    assert env.unwrapped is env.env.env.env
    raw = c8env.raw_env(num_players=3)
    assert isinstance(raw, AECEnv) and raw.unwrapped is raw
    assert not isinstance(raw, wrappers.BaseWrapper)


def test_order_enforcing_and_out_of_bounds():
    env = c8env.env()
    with pytest.raises(AttributeError):
        _ = env.agent_selection
    with pytest.raises(AssertionError):
        env.step(0)
    env.reset(seed=0)
    for bad in (NUM_ACTIONS, -1):  # refused with a clear ValueError before PettingZoo's bare assert sees it
        with pytest.raises(ValueError, match=rf"action {bad} is out of range; allowed: an int action id from 0 to 59"):
            env.step(bad)
    assert not any(env.terminations.values())


@pytest.mark.parametrize("make", [c8env.env, c8env.raw_env])
def test_pickling(make):
    env = make(num_players=4, rules={"preset": "uno_like", "match_target": 50}, episode="match", reward="points",
               max_steps=5000, render_mode="ansi")
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    clone = pickle.loads(pickle.dumps(env))
    assert type(clone) is type(env)
    assert clone.metadata == env.metadata and clone.possible_agents == env.possible_agents
    clone.reset(seed=3)
    assert clone.unwrapped.game.rules == env.unwrapped.game.rules
    assert isinstance(clone.render(), str)
    assert play_out(clone, seed=3) > 0
    # a pickled fresh env plays the same game as the original
    fresh = make(num_players=2, rules="special_cards")
    clone = pickle.loads(pickle.dumps(fresh))
    fresh.reset(seed=9)
    clone.reset(seed=9)
    assert fresh.unwrapped.game.to_dict() == clone.unwrapped.game.to_dict()
    assert play_out(clone, seed=9) == play_out(fresh, seed=9)


# ----- spaces and agents -------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [c8env.env, c8env.raw_env])
def test_spaces_and_agents(make):
    for n in PLAYER_COUNTS:
        env = make(num_players=n)
        names = [f"player_{i}" for i in range(n)]
        assert env.possible_agents == names
        env.reset(seed=n)
        assert env.agents == names and env.num_agents == n and env.max_num_agents == n
        for agent in names:
            space = env.observation_space(agent)
            assert space is env.observation_space(agent)  # the same object each call
            assert isinstance(space, spaces.Dict)
            assert space["observation"].shape == (c8env.OBS_SIZE,) and space["observation"].dtype == np.float32
            assert space["action_mask"].shape == (NUM_ACTIONS,) and space["action_mask"].dtype == np.int8
            action_space = env.action_space(agent)
            assert action_space is env.action_space(agent)
            assert isinstance(action_space, spaces.Discrete) and action_space.n == NUM_ACTIONS
            assert space.contains(env.observe(agent))


# ----- bad arguments -----------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [c8env.env, c8env.raw_env])
@pytest.mark.parametrize("kwargs, named", [
    ({"num_players": 1}, "num_players"),
    ({"num_players": 8}, "num_players"),
    ({"num_players": True}, "num_players"),
    ({"num_players": "2"}, "num_players"),
    ({"episode": "x"}, "episode"),
    ({"reward": "x"}, "reward"),
    ({"max_steps": 0}, "max_steps"),
    ({"max_steps": -5}, "max_steps"),
    ({"max_steps": 1.5}, "max_steps"),
    ({"render_mode": "rgb_array"}, "rgb_array"),
    ({"rules": "no_such_preset"}, "no_such_preset"),
    ({"rules": {"preset": "standard", "wild_rnak": "8"}}, "wild_rnak"),
    ({"rules": {"hand_size": 0}}, "hand_size"),
])
def test_bad_arguments_raise_value_error(make, kwargs, named):
    with pytest.raises(ValueError, match=named):
        make(**kwargs)


# ----- PettingZoo's own tests --------------------------------------------------------------------------
def _count_finished_hands(env):
    """Spy on the unwrapped env's reset: records whether the episode before each reset had ended
    (the hand over, or truncated at max_steps)."""
    raw = env.unwrapped
    original = raw.reset
    finished = []

    def reset(*args, **kwargs):
        if raw.game is not None:
            finished.append(raw.game.hand_over or all(raw.truncations.values()))
        original(*args, **kwargs)

    raw.reset = reset
    return finished


@pytest.mark.slow
@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("preset", PRESETS)
def test_pettingzoo_api_test(preset, n):
    # random hands have a long tail (some run past 100,000 steps): truncate them within api_test's cycles
    env = c8env.env(num_players=n, rules=preset, max_steps=10_000)
    finished = _count_finished_hands(env)
    with warnings.catch_warnings():
        # api_test suggests Box/Discrete observation spaces; the classic envs use this same Dict
        warnings.filterwarnings("ignore", message="Observation space for each agent probably should be")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        api_test(env, num_cycles=20_000)  # play_test stops when the hand ends: cycles only bound it
    assert any(finished), "api_test's play never ended an episode"


@pytest.mark.slow
@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("preset", PRESETS)
def test_pettingzoo_seed_test(preset, n):
    seed_test(lambda **kwargs: c8env.env(num_players=n, rules=preset, **kwargs), num_cycles=20_000)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("preset", PRESETS)
def test_pettingzoo_render_test(preset, n, capsys):
    render_test(lambda render_mode=None: c8env.env(num_players=n, rules=preset, render_mode=render_mode))
    assert "player_0" in capsys.readouterr().out  # human mode printed


def test_api_test_in_match_mode_with_points():
    for n in (2, 5):
        env = c8env.env(num_players=n, rules="five_hands", episode="match", reward="points")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            api_test(env, num_cycles=20_000)


def test_same_seed_same_game_other_seed_other_deal():
    a, b = c8env.raw_env(num_players=3), c8env.raw_env(num_players=3)
    a.reset(seed=5)
    b.reset(seed=5)
    assert a.unwrapped.game.to_dict() == b.unwrapped.game.to_dict()
    b.reset(seed=6)
    assert a.unwrapped.game.to_dict() != b.unwrapped.game.to_dict()


def test_docstring_example_runs():
    import doctest

    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(c8env.raw_env, "raw_env", globs={})
    assert tests and tests[0].examples
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# ----- PettingZoo's own wrappers, next to the fast ones -----------------------------------------------
def _trace(env, seed):
    """Everything an agent loop sees in one seeded random episode: (agent, observation, mask, reward, flags, info)."""
    env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    out = []
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, termination,
                    truncation, repr(sorted(info.items()))))
        env.step(None if termination or truncation else env.action_space(agent).sample(obs["action_mask"]))
    return out


@pytest.mark.parametrize("preset", ["standard", "uno_like", "countdown"])
@pytest.mark.parametrize("n", [2, 5])
def test_pettingzoo_own_wrappers_pass_api_test_and_play_the_same_game(preset, n):
    from c8env.envs.wrappers import wrap

    fast = c8env.env(num_players=n, rules=preset, max_steps=10_000)
    plain = wrap(c8env.raw_env(num_players=n, rules=preset, max_steps=10_000), fast=False)
    assert type(plain) is wrappers.OrderEnforcingWrapper  # PettingZoo's own class, not the subclass
    assert type(plain.env.env) is wrappers.TerminateIllegalWrapper
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Observation space for each agent probably should be")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        for env in (fast, plain):
            api_test(env, num_cycles=20_000)
    for seed in range(3):
        assert _trace(fast, seed) == _trace(plain, seed)
    # an illegal move: -1 and the end of the game under both
    for env in (fast, plain):
        env.reset(seed=0)
        agent = env.agent_selection
        illegal = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env.step(illegal)
        assert env.rewards[agent] == -1 and all(env.terminations.values())
