"""The layout: a NumPy-only core, agents on the core, envs and tools on top, training on top of all.

Checked on the source (imports, private names) and by running the core in a
subprocess where Gymnasium, PettingZoo and torch cannot be imported.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "c8env"
CORE = {"c8env.cards", "c8env.rules", "c8env.actions", "c8env.engine", "c8env.observation", "c8env.episode",
        "c8env.seeding", "c8env.text"}
HEAVY = ("gymnasium", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib", "ray")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(folder: Path) -> dict[str, Path]:
    return {module_name(p): p for p in sorted(folder.rglob("*.py"))}


def imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (inside functions too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def layer(name: str) -> int:
    if name in CORE or name.startswith("c8env.vector"):  # the batched engine is core too (numba optional)
        return 0
    if name.startswith("c8env.agents"):
        return 1
    if name.startswith("c8env"):
        return 2
    return 3  # training


@pytest.mark.parametrize("name", sorted(modules(PACKAGE)) + sorted(modules(ROOT / "training")))
def test_imports_point_down(name: str) -> None:
    path = {**modules(PACKAGE), **modules(ROOT / "training")}[name]
    own = layer(name)
    for target in imports(path):
        top = target.split(".")[0]
        if top in ("c8env", "training"):
            known = {**modules(PACKAGE), **modules(ROOT / "training")}
            while target not in known and "." in target:  # `from c8env.engine import State` names a module's member
                target = target.rsplit(".", 1)[0]
            if target in ("c8env",) and own < 2:
                raise AssertionError(f"{name} imports the package root c8env (which loads the envs lazily)")
            assert layer(target) <= own or target == "c8env", f"{name} (layer {own}) imports {target} (layer {layer(target)})"
        if own < 2:
            assert top not in HEAVY, f"{name} is core/agents but imports {target}"


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")) + sorted((ROOT / "training").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_names_outside_their_module(path: Path) -> None:
    """Only ``self``/``cls`` reach underscore attributes; the engine's card sets stay inside the engine."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        private = node.attr.startswith("_") and not node.attr.startswith("__")
        on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        if path.name != "engine.py":
            assert not (private and not on_self), f"{path.name}:{node.lineno} reads {ast.unparse(node)}"
            assert node.attr not in ("bits", "dups"), f"{path.name}:{node.lineno} reads {ast.unparse(node)}"


def test_core_runs_without_gymnasium_pettingzoo_torch() -> None:
    script = textwrap.dedent(f"""
        import sys

        class Blocker:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {HEAVY!r}:
                    raise ImportError("blocked: " + name)

        sys.meta_path.insert(0, Blocker())
        import c8env
        from c8env.agents import load
        from c8env.episode import MAX_HAND_STEPS, play_hand
        from c8env.evaluate import evaluate
        from c8env.observation import StateObservation, encode_observation

        state = c8env.State.new(3, "special_cards", seed=5)
        agents = [load(spec, rules="special_cards", num_players=3, seed=i)
                  for i, spec in enumerate(["greedy", "random", "expert:simulations=3"])]
        steps = play_hand(state, lambda s: agents[s.current_player].act(StateObservation(s, s.current_player)))
        assert state.hand_over and 0 < steps < MAX_HAND_STEPS, steps
        assert encode_observation(state, 0).shape == (c8env.OBS_SIZE,)
        table = evaluate(["greedy", "random"], deals=3, workers=1)
        assert table.hands == 6
        try:
            c8env.env
        except ImportError:
            pass
        else:
            raise AssertionError("c8env.env loaded although pettingzoo is blocked")
        print("ok", state.winner)
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")


def test_public_names_of_the_package_still_load() -> None:
    import c8env

    for name in c8env.__all__:
        assert getattr(c8env, name) is not None
    assert c8env.env.__module__ == "c8env.crazy_eights"


def test_phases_and_action_ids_build_on_each_other() -> None:
    from enum import IntEnum

    from c8env import actions
    from c8env.cards import NUM_CARDS, NUM_SUITS
    from c8env.engine import Phase

    assert issubclass(Phase, IntEnum) and [p.name for p in Phase] == ["PLAY", "DECLARE", "ANNOUNCE", "OVER"]
    assert actions.DECLARE_BASE == NUM_CARDS == 52
    assert actions.DRAW == actions.DECLARE_BASE + NUM_SUITS == 56
    assert (actions.PASS, actions.ANNOUNCE, actions.STOP, actions.NUM_ACTIONS) == (57, 58, 59, 60)
