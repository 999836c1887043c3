"""The env ids, registered by a plain ``import c8env`` (``c8env.envs.registration``): each check runs in a fresh
process, since what a process imported first is the point.

- after ``import c8env``, Gymnasium's and PettingZoo's ``make`` know ``c8env/...-v2``, ``-v1`` and ``-v0``, whichever of
  the three was imported first; registering imports no env module, and ``import c8env`` imports neither library;
- ``gymnasium.make("c8env:c8env/SingleAgent-v2")`` works in a process that imported nothing else;
- with Gymnasium and PettingZoo blocked, ``import c8env`` still works (the core) and they stay blocked.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pettingzoo
import pytest

from c8env.envs.registration import GYMNASIUM_ENVS, PETTINGZOO_ENVS

ROOT = Path(__file__).resolve().parent.parent.parent
ENV_MODULES = ("c8env.envs.crazy_eights", "c8env.envs.crazy_eights_v0", "c8env.envs.crazy_eights_v1",
               "c8env.envs.crazy_eights_v2",
               "c8env.envs.single_agent", "c8env.envs.vector_envs")


def run(script: str) -> str:
    """Run ``script`` in a fresh interpreter (warnings as errors but Gymnasium's note on a -v0 id); its stdout."""
    code = "import warnings\nwarnings.simplefilter('error')\n" \
           "warnings.filterwarnings('ignore', message='.*is out of date', category=DeprecationWarning)\n" \
           + textwrap.dedent(script)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_import_c8env_then_gymnasium_registers_every_id_without_loading_the_envs() -> None:
    out = run(f"""
        import sys
        import c8env
        assert not {{"gymnasium", "pettingzoo"}} & set(sys.modules), "import c8env imported a library"
        import gymnasium
        ids = sorted(k for k in gymnasium.registry if k.startswith("c8env/"))
        assert ids == {sorted(GYMNASIUM_ENVS)!r}, ids
        assert not [m for m in {ENV_MODULES!r} if m in sys.modules], "registering imported an env module"
        assert type(gymnasium.__spec__.loader).__name__ == "SourceFileLoader"  # the module keeps its own loader
        assert gymnasium.__loader__ is gymnasium.__spec__.loader
        env = gymnasium.make("c8env/SingleAgent-v2", num_players=3, opponents="greedy")
        obs, info = env.reset(seed=0)
        assert env.unwrapped.max_steps == 10_000 and info["action_mask"].any() and obs.shape == (401,)
        assert gymnasium.make("c8env/SingleAgent-v1").reset(seed=0)[0].shape == (245,)
        assert gymnasium.make("c8env/SingleAgent-v0").unwrapped.max_steps == 100_000
        vec = gymnasium.make_vec("c8env/LearnerVector-v2", num_envs=2, opponents="greedy")
        assert vec.games.max_steps == 10_000 and vec.reset(seed=0)[0].shape == (2, 401)
        vec = gymnasium.make_vec("c8env/LearnerVector-v1", num_envs=2, opponents="greedy")
        assert vec.games.max_steps == 10_000 and vec.reset(seed=0)[0].shape == (2, 245)
        assert gymnasium.make_vec("c8env/LearnerVector-v0", num_envs=2).games.max_steps == 100_000
        assert gymnasium.make_vec("c8env/SelfPlayVector-v2", num_envs=2).games.max_steps == 10_000
        assert gymnasium.make_vec("c8env/SelfPlayVector-v1", num_envs=2).reset(seed=0)[0].shape == (2, 245)
        assert gymnasium.make_vec("c8env/SelfPlayVector-v0", num_envs=2).games.max_steps == 100_000
        print("ok")
    """)
    assert out.strip() == "ok"


@pytest.mark.skipif(not hasattr(pettingzoo, "register"), reason="PettingZoo's registry came with 1.27")
@pytest.mark.parametrize("first", ["c8env", "pettingzoo"])
def test_pettingzoo_make_after_import_c8env(first: str) -> None:
    other = "pettingzoo" if first == "c8env" else "c8env"
    out = run(f"""
        import sys
        import {first}
        import {other}
        import pettingzoo, gymnasium
        ids = sorted(k for k in pettingzoo.aec_registry if k.startswith("c8env/"))
        assert ids == {sorted(PETTINGZOO_ENVS)!r}, ids
        assert "c8env/SingleAgent-v2" in gymnasium.registry  # PettingZoo imports Gymnasium: registered too
        assert not [m for m in {ENV_MODULES!r} if m in sys.modules], "registering imported an env module"
        assert not any(type(f).__name__ == "_RegisterOnImport" for f in sys.meta_path)  # the hook left
        env = pettingzoo.make("aec", "c8env/crazy_eights-v2", num_players=3, rules="special_cards")
        assert env.metadata["name"] == "crazy_eights_v2" and env.unwrapped.max_steps == 10_000
        v1 = pettingzoo.make("aec", "c8env/crazy_eights-v1")
        assert v1.metadata["name"] == "crazy_eights_v1" and v1.observation_space("player_0")["observation"].shape == (245,)
        env.reset(seed=0)
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            env.step(None if termination or truncation else env.action_space(agent).sample(obs["action_mask"]))
        old = pettingzoo.make("aec", "c8env/crazy_eights-v0")
        assert old.metadata["name"] == "crazy_eights_v0" and old.unwrapped.max_steps == 100_000
        assert pettingzoo.make("aec", "c8env/crazy_eights").metadata["name"] == "crazy_eights_v2"
        print("ok")
    """)
    assert out.strip() == "ok"


def test_gymnasium_make_with_the_module_prefix_in_a_process_that_imported_nothing() -> None:
    out = run("""
        import sys
        import importlib.util
        import gymnasium
        assert "c8env" not in sys.modules
        env = gymnasium.make("c8env:c8env/SingleAgent-v2", opponents="random")
        env.reset(seed=1)
        assert env.unwrapped.max_steps == 10_000
        assert gymnasium.make("c8env:c8env/SingleAgent-v0").unwrapped.max_steps == 100_000
        # a look-up before the import does not lose the registration
        assert importlib.util.find_spec("pettingzoo") is not None
        import pettingzoo
        assert not hasattr(pettingzoo, "register") or "c8env/crazy_eights-v2" in pettingzoo.aec_registry
        print("ok")
    """)
    assert out.strip() == "ok"


def test_blocked_libraries_stay_blocked_and_the_core_imports() -> None:
    out = run("""
        import sys

        class Blocker:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("gymnasium", "pettingzoo"):
                    raise ImportError("blocked: " + name)

        sys.meta_path.insert(0, Blocker())
        import c8env
        state = c8env.State.new(2, seed=0)
        for library in ("gymnasium", "pettingzoo"):
            try:
                __import__(library)
            except ImportError as error:
                assert "blocked" in str(error)
            else:
                raise AssertionError(library + " imported")
        print("ok")
    """)
    assert out.strip() == "ok"
