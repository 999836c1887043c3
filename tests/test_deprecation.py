"""The 0.1 import paths keep working for one release, each with a DeprecationWarning naming the new home;
the console script, ``python -m`` of the old tools and every Gymnasium id too."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import c8env
from c8env.deprecation import ALIASES, MOVED, REMOVED_IN

ROOT = Path(__file__).resolve().parent.parent


def fresh_import(name: str) -> object:
    """Import ``name`` as if for the first time (the old path's alias is dropped from ``sys.modules``)."""
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_module_path_warns_and_gives_the_new_module(old: str) -> None:
    new = MOVED[old]
    with pytest.warns(DeprecationWarning, match=rf"{old} moved to .*removed in c8env {REMOVED_IN}") as caught:
        module = fresh_import(old)
    assert caught[0].filename == __file__, "the warning points at the importing line"
    if isinstance(new, str):
        assert module is importlib.import_module(new)
        assert module.__spec__.name == new, "the new module keeps its own spec"
    else:  # a split module: the public names of each new home
        for home in map(importlib.import_module, new):
            for name in home.__all__:
                assert getattr(module, name) is getattr(home, name), f"{old}.{name}"


def test_old_names_of_the_split_modules_are_the_new_objects() -> None:
    from c8env.agents.batched import RandomAgents
    from c8env.agents.greedy import GreedyAgent
    from c8env.agents.random_agent import RandomAgent

    with pytest.warns(DeprecationWarning):
        heuristic = fresh_import("c8env.agents.heuristic")
        vector_agents = fresh_import("c8env.vector.agents")
    assert (heuristic.GreedyAgent, heuristic.RandomAgent, vector_agents.RandomAgents) == (
        GreedyAgent, RandomAgent, RandomAgents)
    with pytest.warns(DeprecationWarning, match="c8env.vector.RandomAgents moved to c8env.agents.batched"):
        from c8env.vector import RandomAgents as old
    assert old is RandomAgents
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        c8env.vector.nothing  # noqa: B018


def test_the_pettingzoo_module_path_is_an_alias_without_warning(recwarn: pytest.WarningsRecorder) -> None:
    from c8env import crazy_eights_v0, crazy_eights_v1
    from c8env.envs import crazy_eights_v0 as new
    from c8env.envs import crazy_eights_v1 as new1

    assert crazy_eights_v0 is new and fresh_import("c8env.crazy_eights_v0") is new
    assert crazy_eights_v1 is new1 and fresh_import("c8env.crazy_eights_v1") is new1
    assert ALIASES == {"c8env.crazy_eights_v0": "c8env.envs.crazy_eights_v0",
                       "c8env.crazy_eights_v1": "c8env.envs.crazy_eights_v1"}
    assert not [w for w in recwarn if w.category is DeprecationWarning]


def test_vector_games_methods_that_moved_still_play() -> None:
    from c8env.agents.batched import greedy_actions
    from c8env.vector import VectorGames

    games = VectorGames(3, 2)
    games.reset(4)
    with pytest.warns(DeprecationWarning, match=r"VectorGames.greedy_actions\(\) moved"):
        old = games.greedy_actions()
    assert np.array_equal(old, greedy_actions(games))
    seats = np.full((3, 2), -2, dtype=np.int64)  # GREEDY everywhere
    with pytest.warns(DeprecationWarning, match=r"VectorGames.autoplay\(\) moved"):
        _, terminated, _ = games.autoplay(seats)
    assert terminated.all()


def test_single_agent_env_state_is_game_with_a_warning() -> None:
    from c8env.envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv(opponents="greedy")
    env.reset(seed=1)
    with pytest.warns(DeprecationWarning, match="SingleAgentEnv.state moved to SingleAgentEnv.game"):
        assert env.state is env.game


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_python_dash_m_of_an_old_tool_runs_the_new_one() -> None:
    result = run("-W", "default", "-m", "c8env.demo", "--players", "2", "--seed", "3")
    assert result.returncode == 0, result.stderr
    assert "Match scores" in result.stdout
    assert "c8env.demo moved to c8env.tools.demo" in result.stderr


def test_gymnasium_ids_through_old_and_new_module_paths() -> None:
    script = (
        "import warnings, gymnasium\n"
        "warnings.simplefilter('error')\n"
        "env = gymnasium.make('c8env.envs.single_agent:c8env/SingleAgent-v1', opponents='greedy')\n"
        "env.reset(seed=0)\n"
        "warnings.simplefilter('ignore')\n"
        "old = gymnasium.make('c8env.wrappers:c8env/SingleAgent-v0', opponents='greedy')\n"
        "import c8env.envs.vector_envs\n"
        "vec = gymnasium.make_vec('c8env/LearnerVector-v1', num_envs=2)\n"
        "vec.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, type(old.unwrapped).__name__, type(vec).__name__)\n"
    )
    result = run("-c", script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["SingleAgentEnv", "SingleAgentEnv", "LearnerVectorEnv"]


def test_console_script_is_the_tools_cli() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'c8env = "c8env.tools.cli:main"' in text
    result = run("-c", "from c8env.tools.cli import main; main(['--help'])")
    assert result.returncode == 0 and "eval" in result.stdout and "serve" in result.stdout
