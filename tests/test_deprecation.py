"""The 0.1 import paths, served with a DeprecationWarning in 0.2, are gone in 0.3, as the 0.2.0 release announced
(``CHANGELOG.md``); the PettingZoo-style module paths ``c8env.crazy_eights_vN``, never deprecated, stay, as do the
console script and every Gymnasium id."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The module paths c8env 0.2 served with a DeprecationWarning until 0.3 (CHANGELOG 0.2.0, "Moved").
REMOVED_MODULES = ("c8env.crazy_eights", "c8env.pettingzoo_wrappers", "c8env.spaces", "c8env.wrappers",
                   "c8env.batched_learner", "c8env.batched_envs", "c8env.evaluate", "c8env.play", "c8env.demo",
                   "c8env.replay", "c8env.speed", "c8env.cli", "c8env.argcheck", "c8env.agents.heuristic",
                   "c8env.agents.view", "c8env.vector.agents", "c8env.vector.search", "c8env.web.view",
                   "c8env.deprecation")


def fresh_import(name: str) -> object:
    """Import ``name`` as if for the first time (an earlier import's entry is dropped from ``sys.modules``)."""
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.mark.parametrize("old", REMOVED_MODULES)
def test_the_old_module_paths_are_gone(old: str) -> None:
    with pytest.raises(ModuleNotFoundError, match=rf"No module named '{old}'"):
        fresh_import(old)


def test_the_old_names_and_methods_are_gone() -> None:
    import c8env.vector
    from c8env.envs.single_agent import SingleAgentEnv
    from c8env.vector import VectorGames

    for name in ("EXTERNAL", "GREEDY", "RandomAgents"):  # now c8env.agents.batched's only
        with pytest.raises(AttributeError, match=rf"has no attribute '{name}'"):
            getattr(c8env.vector, name)
    assert not hasattr(VectorGames, "greedy_actions") and not hasattr(VectorGames, "autoplay")
    assert not hasattr(SingleAgentEnv, "state"), "SingleAgentEnv.game is the engine state"


@pytest.mark.parametrize("version", [0, 1, 2])
def test_the_pettingzoo_module_path_is_an_alias_without_warning(version: int,
                                                                recwarn: pytest.WarningsRecorder) -> None:
    import c8env

    new = importlib.import_module(f"c8env.envs.crazy_eights_v{version}")
    assert getattr(c8env, f"crazy_eights_v{version}") is new
    assert fresh_import(f"c8env.crazy_eights_v{version}") is new
    assert new.__spec__.name == f"c8env.envs.crazy_eights_v{version}", "the module keeps its own spec"
    assert new.env.__module__.startswith("c8env.envs.")
    assert not list(recwarn)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_gymnasium_ids_through_their_module_paths_without_warning() -> None:
    script = (
        "import warnings, gymnasium\n"
        "warnings.simplefilter('error')\n"
        "env = gymnasium.make('c8env.envs.single_agent:c8env/SingleAgent-v2', opponents='greedy')\n"
        "env.reset(seed=0)\n"
        "root = gymnasium.make('c8env:c8env/SingleAgent-v2', opponents='greedy')\n"
        "import c8env.envs.vector_envs\n"
        "vec = gymnasium.make_vec('c8env/LearnerVector-v2', num_envs=2)\n"
        "vec.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, type(root.unwrapped).__name__, type(vec).__name__)\n"
    )
    result = run("-c", script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["SingleAgentEnv", "SingleAgentEnv", "LearnerVectorEnv"]


def test_console_script_is_the_tools_cli() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'c8env = "c8env.tools.cli:main"' in text
    result = run("-c", "from c8env.tools.cli import main; main(['--help'])")
    assert result.returncode == 0 and "eval" in result.stdout and "serve" in result.stdout
