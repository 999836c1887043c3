"""Packaging: the wheel ships the rule presets and works outside the repository."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds and installs wheels

REPO = Path(__file__).resolve().parent.parent
PRESET_DIR = REPO / "c8env" / "presets"
PRESETS = [
    "standard", "special_cards", "action_cards", "uno_like", "crazy_aces", "draw_one", "draw_three",
    "no_reshuffle", "penalty", "five_hands", "last_card", "stop_the_round", "countdown", "dealer_declares",
]


def _pip_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return env


def _pip_available() -> bool:
    result = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, env=_pip_env())
    return result.returncode == 0


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Skip only for reasons outside the project: no pip, or no build backend installed
    # (--no-build-isolation needs no network, but it does need hatchling in this interpreter).
    if not _pip_available():
        pytest.skip(f"pip is not available for {sys.executable}")
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling (the build backend) is not installed; pip install hatchling")
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(REPO)],
        capture_output=True, text=True, env=_pip_env(), cwd=out,
    )
    assert result.returncode == 0, f"building the wheel failed:\n{result.stdout}\n{result.stderr}"
    wheels = sorted(out.glob("c8env-*.whl"))
    assert len(wheels) == 1, f"expected one c8env wheel, found {wheels}"
    return wheels[0]


def test_repository_has_the_presets() -> None:
    assert sorted(p.stem for p in PRESET_DIR.glob("*.yaml")) == sorted(PRESETS)


def test_wheel_ships_presets_byte_for_byte(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert "c8env/__init__.py" in names
        assert "c8env/engine.py" in names and "c8env/rules.py" in names and "c8env/cards.py" in names
        assert "c8env/py.typed" in names and "c8env/envs/crazy_eights_v0.py" in names  # typed; PettingZoo-style module
        for name in PRESETS:
            member = f"c8env/presets/{name}.yaml"
            assert member in names, f"{member} missing from {wheel.name}"
            assert zf.read(member) == (PRESET_DIR / f"{name}.yaml").read_bytes(), f"{member} differs"
        shipped = sorted(n for n in names if n.startswith("c8env/presets/"))
        assert shipped == sorted(f"c8env/presets/{name}.yaml" for name in PRESETS)
        assert not any(n.startswith("tests/") for n in names)


def test_wheel_ships_the_catalog_and_its_files_in_12_mb(wheel: Path) -> None:
    from c8env.agents import catalog

    assert wheel.stat().st_size <= 12_000_000, f"{wheel.name} is {wheel.stat().st_size / 1e6:.1f} MB"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    assert "c8env/agents/catalog.yaml" in names
    policies = sorted(n for n in names if n.startswith("c8env/agents/policies/"))
    files = catalog.catalog().entries.values()
    assert policies == sorted(f"c8env/agents/policies/{e.file.name}" for e in files if e.file is not None)
    assert not any(n.startswith("training/") for n in names)


def test_installed_wheel_loads_presets_outside_the_repo(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        capture_output=True, text=True, env=_pip_env(), cwd=tmp_path,
    )
    assert result.returncode == 0, f"installing the wheel failed:\n{result.stdout}\n{result.stderr}"
    assert (target / "c8env" / "presets" / "uno_like.yaml").is_file()

    code = "\n".join([
        "import pathlib, sys",
        "import c8env",
        f"target = pathlib.Path({str(target)!r}).resolve()",
        f"repo = pathlib.Path({str(REPO)!r}).resolve()",
        "where = pathlib.Path(c8env.__file__).resolve()",
        "assert target in where.parents, where",
        "assert repo not in where.parents, where",
        "rules = c8env.RuleSet.from_preset('uno_like')",
        "assert rules.to_dict()['effects'] == {'2': {'draw': 2}, 'J': 'skip', 'A': 'reverse', 'QS': {'draw': 5}}",
        f"assert sorted(c8env.preset_names()) == {sorted(PRESETS)!r}, c8env.preset_names()",
        "for name in c8env.preset_names():",
        "    c8env.RuleSet.from_preset(name)",
        "state = c8env.State.new(3, 'uno_like', seed=0)",
        "from c8env import agents",
        "assert agents.load('expert-strong', seed=0) and agents.load('ensemble-standard-4p', num_players=4)",
        "assert state.legal_actions()",
        "print('ok', where)",
    ])
    env = dict(os.environ)
    env["PYTHONPATH"] = str(target)
    env.pop("PYTHONHOME", None)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, f"the installed package failed:\n{result.stdout}\n{result.stderr}"
    assert result.stdout.startswith("ok ")
