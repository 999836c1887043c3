"""The documentation: it lives in the repository, and every code block in it runs or parses.

- Python blocks of the README and docs/*.md run, each on its own, in a fresh process (a block that imports a
  library of :data:`OPTIONAL`, which no extra of the project installs, only where it is installed).
- Shell blocks: each ``c8env ...`` / ``python -m ...`` command is parsed by that command's own
  argument parser (so a renamed flag or subcommand fails here); ``make X`` must be a target
  (``make -n``). Running them for real would take hours (training, expert leagues).
- The layout listing (docs/layout.md) names only files and folders that exist.
- The README stays a front door: short, with the two commands; CITATION.cff agrees with pyproject.toml.
- Nothing points outside the repository (the team's folder is not shipped).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: Pages the site (mkdocs.yml) generates from the code at build time: name -> (module file, function).
GENERATED = {"docs/environment.md": (ROOT / "docs" / "docstrings.py", "environment_markdown")}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
#: Command-line programs of the project: the module whose ``build_parser()`` parses their arguments.
PROGRAMS = {"c8env.tools.evaluation": "c8env.tools.evaluation", "c8env.tools.play": "c8env.tools.play", "c8env.tools.demo": "c8env.tools.demo",
            "c8env.tools.speed": "c8env.tools.speed", "training.train": "training.train", "training.export": "training.export",
            "training.record_speed": "training.record_speed", "training.plot": "training.plot", "training.average": "training.average",
            "training.information": "training.information", "training.regret": "training.regret",
            "training.belief": "training.belief", "training.specialise": "training.specialise",
            "training.rllib": "training.rllib.cli"}


#: Libraries that docs/masks.md shows c8env with and that no extra of the project installs: a block importing one
#: is skipped where it is missing.
OPTIONAL = ("tianshou", "torchrl", "pufferlib")


def missing_optional(code: str) -> str | None:
    """The first library of :data:`OPTIONAL` that ``code`` imports and that is not installed, or None."""
    for name in OPTIONAL:
        if re.search(rf"^\s*(import|from)\s+{name}\b", code, re.M) and importlib.util.find_spec(name) is None:
            return name
    return None


def pages() -> list[tuple[str, str]]:
    """(name, Markdown) of every page: the files of :data:`DOCS` and the :data:`GENERATED` pages."""
    out = [(str(path.relative_to(ROOT)), path.read_text()) for path in DOCS]
    for name, (source, function) in GENERATED.items():
        spec = importlib.util.spec_from_file_location(source.stem, source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.append((name, getattr(module, function)()))
    return out


def blocks(language: str) -> list[tuple[str, int, str]]:
    out = []
    for name, text in pages():
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                line = text[:match.start()].count("\n") + 1
                out.append((name, line, match.group(2)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name,line,code", blocks("python"), ids=lambda v: str(v) if isinstance(v, (str, int)) else "")
def test_python_blocks_run(name: str, line: int, code: str, tmp_path: Path) -> None:
    missing = missing_optional(code)
    if missing:
        pytest.skip(f"{name} line {line} uses {missing}, which is not installed")
    script = tmp_path / "block.py"
    script.write_text(code)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # torch in each SB3 worker would otherwise take every core
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"{name} line {line}:\n{code}\n{result.stderr[-3000:]}"


def shell_commands() -> list[tuple[str, int, list[str]]]:
    out = []
    for name, line, code in blocks("bash"):
        for offset, text in enumerate(code.splitlines()):
            words = shlex.split(text, comments=True)
            if words:
                out.append((name, line + 1 + offset, words))
    return out


def _parse(module: str, args: list[str]) -> None:
    parser = importlib.import_module(module).build_parser()
    try:
        parser.parse_args(args)
    except SystemExit as stop:
        raise AssertionError(f"python -m {module} {' '.join(args)}: the parser refused it") from stop


@pytest.mark.parametrize("name,line,words", shell_commands(), ids=lambda v: " ".join(v) if isinstance(v, list) else str(v))
def test_shell_commands_parse(name: str, line: int, words: list[str]) -> None:
    from c8env.tools.cli import ALIASES, COMMANDS

    program, args = words[0], words[1:]
    if Path(program).name == "pip" and args[:2] == ["install", "-e"]:  # pip install -e ".[extra,...]": extras that exist
        table = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1].split("\n[")[0]
        extras = re.findall(r"^([\w-]+) = \[", table, re.M)
        wanted = re.fullmatch(r"\.(?:\[([\w,]+)\])?", args[2])
        assert wanted and len(args) == 3, f"{name} line {line}: pip {' '.join(args)} is not pip install -e .[extras]"
        missing = [x for x in (wanted.group(1) or "").split(",") if x and x not in extras]
        assert not missing, f"{name} line {line}: no extra {missing} in pyproject.toml"
    elif program == "make":
        result = subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, f"{name} line {line}: make {' '.join(args)}: {result.stderr}"
    elif Path(program).name == "c8env":
        command = ALIASES.get(args[0], args[0])
        assert command in COMMANDS, f"{name} line {line}: unknown c8env command {args[0]!r}"
        _parse(COMMANDS[command][0], args[1:])
    elif program in ("python", "python3") and args[:1] == ["-m"]:
        module = {"c8env": "c8env.tools.cli"}.get(args[1], args[1])
        assert module in PROGRAMS, f"{name} line {line}: python -m {args[1]} is not a command of the project"
        if "--help" in args:  # the parser prints help and exits 0
            result = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True)
            assert result.returncode == 0 and "usage" in result.stdout, result.stderr
        else:
            _parse(PROGRAMS[module], args[2:])
    else:
        raise AssertionError(f"{name} line {line}: {program!r} is not a command this test knows how to check")


def test_layout_names_existing_paths() -> None:
    listing = FENCE.search((ROOT / "docs" / "layout.md").read_text()).group(2)
    paths = [line.split()[0] for line in listing.splitlines() if line and "/" in line.split()[0]]
    assert len(paths) > 15
    for path in paths:
        assert (ROOT / path).exists(), f"docs/layout.md names {path}, which does not exist"
    for module in sorted((ROOT / "c8env").glob("*.py")):
        assert f"c8env/{module.name}" in paths or module.name == "__init__.py", f"{module.name} missing from the layout"


def test_the_readme_is_a_short_front_door_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 220, f"README.md has {len(text.splitlines())} lines; keep it to 220 at most"
    commands = [words for name, _, words in shell_commands() if name == "README.md"]
    assert ["make", "train"] in commands and ["make", "test"] in commands, commands
    for target in re.findall(r"\]\(([^)#:]+)", text):  # the links into the site and the repository
        assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def test_the_citation_file_names_the_release_of_pyproject() -> None:
    import yaml

    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = (ROOT / "pyproject.toml").read_text()
    assert citation["cff-version"] == "1.2.0" and citation["title"] and citation["message"]
    assert f'\nversion = "{citation["version"]}"\n' in project, "CITATION.cff's version is not pyproject.toml's"
    assert f'\nlicense = {{ text = "{citation["license"]}" }}\n' in project, "CITATION.cff's license is not pyproject's"
    assert citation["authors"] == [{"name": "c8env developers"}]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", citation["date-released"])


def test_nothing_points_outside_the_repository() -> None:
    files = [ROOT / "README.md", ROOT / "pyproject.toml", ROOT / "Makefile"]
    for folder in ("c8env", "docs", "training", "configs", "tests"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".yaml", ".toml", ".txt")]
    needles = ["../" + "shared", "CONTRACT" + ".md", "RULES" + ".md", "STYLE" + ".md"]
    for path in files:
        text = path.read_text(errors="ignore")
        for needle in needles:
            assert needle not in text, f"{path.relative_to(ROOT)} mentions {needle}"
