"""The documentation: it lives in the repository, and every code block in it runs or parses.

- Python blocks of the README and docs/*.md run, each on its own, in a fresh process (a block that imports a
  library of :data:`OPTIONAL`, which no extra of the project installs, only where it is installed).
- Python blocks that train with torch set torch's threads (one thread is what small networks need on a small machine).
- Shell blocks: each ``c8env ...`` / ``python -m ...`` command is parsed by that command's own
  argument parser (so a renamed flag or subcommand fails here); ``make X`` must be a target
  (``make -n``). tests/test_doc_sequences.py runs them, as the sequences a user follows, at tiny budgets.
- Links: every relative link and image of the README and docs/ resolves in the repository view (GitHub: the file,
  the anchor as GitHub slugs the heading) and on the site (the anchor as the site slugs it; the strict build of
  tests/test_site.py checks the site's links too).
- The layout listing (docs/layout.md) names only files and folders that exist.
- The README stays a front door: short, with the two commands; CITATION.cff agrees with pyproject.toml; the
  CHANGELOG's newest section is 600 words at most.
- Nothing points outside the repository (the team's folder is not shipped).
"""

from __future__ import annotations

import importlib
import importlib.util
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
            "training.research.record_speed": "training.research.record_speed", "training.plot": "training.plot",
            "training.research.average": "training.research.average",
            "training.research.information": "training.research.information",
            "training.research.regret": "training.research.regret", "training.research.belief": "training.research.belief",
            "training.research.specialise": "training.research.specialise",
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
    out = [(str(path.relative_to(ROOT)), path.read_text()) for path in DOCS]  # a generated page's stub among them
    return out + [(name, generated(name)) for name in GENERATED]


def generated(name: str) -> str:
    """The Markdown of the :data:`GENERATED` page ``name``, as the site builds it."""
    source, function = GENERATED[name]
    spec = importlib.util.spec_from_file_location(source.stem, source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, function)()


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
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{name} line {line}:\n{code}\n{result.stderr[-3000:]}"


#: A block trains with torch when it imports a torch-based library and calls one of its training loops.
TORCH_LIBRARY = re.compile(r"^\s*(?:import|from)\s+(?:torch|stable_baselines3|sb3_contrib|tianshou|torchrl|ray)\b", re.M)
TRAINING_CALL = re.compile(r"\.learn\(|\.backward\(|\.train\(\)|Trainer\(")


def trains_with_torch(code: str) -> bool:
    """Whether the Python block ``code`` trains with torch (:data:`TORCH_LIBRARY` and :data:`TRAINING_CALL`)."""
    return bool(TORCH_LIBRARY.search(code) and TRAINING_CALL.search(code))


def test_blocks_that_train_with_torch_set_its_threads() -> None:
    """torch's default threads (one per core) make the small networks of these snippets crawl on a small, busy
    machine (23 learner steps/s against 1,573 with one thread, on 2 cores): each snippet that trains sets them."""
    assert trains_with_torch("from sb3_contrib import MaskablePPO\nMaskablePPO('MlpPolicy', env).learn(8)\n")
    assert not trains_with_torch("import torch\nexport_onnx(agent.actor, 'model.onnx')\n")
    training = [(name, line, code) for name, line, code in blocks("python") if trains_with_torch(code)]
    assert len(training) >= 2, [(name, line) for name, line, _ in training]
    for name, line, code in training:
        assert "torch.set_num_threads(" in code, f"{name} line {line} trains with torch without setting its threads"


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


def test_the_versions_follow_the_changelog_and_the_citation_names_its_newest_release() -> None:
    """``c8env.__version__`` is pyproject.toml's and the CHANGELOG's newest section's; CITATION.cff cites the newest
    released section (a development version is not cited)."""
    import yaml

    import c8env

    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = (ROOT / "pyproject.toml").read_text()
    sections = re.findall(r"^## (\S+)( — unreleased)?", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert f'\nversion = "{c8env.__version__}"\n' in project, "c8env.__version__ is not pyproject.toml's"
    assert sections[0][0] == c8env.__version__, f"the CHANGELOG's newest section is {sections[0][0]}"
    released = next(version for version, unreleased in sections if not unreleased)
    assert str(citation["version"]) == released, f"CITATION.cff cites {citation['version']}, the newest release is {released}"
    assert citation["cff-version"] == "1.2.0" and citation["title"] and citation["message"]
    assert f'\nlicense = {{ text = "{citation["license"]}" }}\n' in project, "CITATION.cff's license is not pyproject's"
    assert citation["authors"] == [{"name": "c8env developers"}]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", citation["date-released"])


def test_the_changelogs_newest_section_reads_in_two_minutes() -> None:
    """The newest CHANGELOG section is a summary that points to the docs, not a diary: 600 words at most, Markdown
    included (issue 56)."""
    sections = re.split(r"^(?=## )", (ROOT / "CHANGELOG.md").read_text(), flags=re.M)
    assert len(sections) > 2, "the CHANGELOG has no release sections"
    newest = sections[1]
    words = len(newest.split())
    assert words <= 600, f"the CHANGELOG's newest section ({newest.splitlines()[0]}) has {words} words; keep it to 600"


# ----- links: the repository view (GitHub) and the site (MkDocs) -------------------------------------------------
LINK = re.compile(r"!?\[(?:[^\]`]|`[^`]*`)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _unfenced(text: str) -> str:
    """``text`` without its fenced code blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _prose(text: str) -> str:
    """``text`` without its fenced code blocks and inline code (links there are not links)."""
    return re.sub(r"`[^`\n]*`", "", _unfenced(text))


def heading_text(line: str) -> str:
    """A Markdown heading line's text as rendered: no ``#`` marks, code marks, emphasis or link targets."""
    text = line.lstrip("#").strip().rstrip("#").strip()
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "")
    return re.sub(r"\*\*?([^*]+)\*\*?", r"\1", text)


def github_slug(text: str) -> str:
    """GitHub's anchor of a heading (github-slugger): lower case, punctuation removed, each space a ``-``."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def site_slug(text: str) -> str:
    """The site's anchor of a heading: the slug of Python-Markdown's ``toc`` extension, which mkdocs.yml uses."""
    from markdown.extensions.toc import slugify

    return slugify(text, "-")


def anchors(markdown: str, slug, repeat: str) -> set[str]:
    """The anchors of a page's headings under ``slug``, a repeated one numbered after ``repeat`` (GitHub:
    ``x-1``; the site: ``x_1``)."""
    out: set[str] = set()
    for line in _unfenced(markdown).splitlines():
        if re.match(r"#{1,6} ", line):
            base = anchor = slug(heading_text(line))
            count = 0
            while anchor in out:
                count += 1
                anchor = f"{base}{repeat}{count}"
            out.add(anchor)
    return out


def relative_links() -> list[tuple[str, str]]:
    """(file, target) of every link and image of README.md and the files of docs/ (a generated page's stub
    included) that does not leave the repository."""
    return [(str(path.relative_to(ROOT)), target) for path in DOCS
            for target in LINK.findall(_prose(path.read_text())) if not re.match(r"[a-z]+:", target)]


def test_the_link_finder_finds_links() -> None:
    text = "See [a](x.md#b), ![c](d.png \"title\"), [`e`](f/), `[no](code.md)`, [web](https://x.org).\n```\n[no](g.md)\n```\n"
    assert LINK.findall(_prose(text)) == ["x.md#b", "d.png", "f/", "https://x.org"]
    assert anchors("# A: b (`c=d`)\n## Q & A\n## Q & A\n", github_slug, "-") == {"a-b-cd", "q--a", "q--a-1"}
    assert anchors("# A: b (`c=d`)\n## Q & A\n## Q & A\n", site_slug, "_") == {"a-b-cd", "q-a", "q-a_1"}
    assert len(relative_links()) > 100


@pytest.mark.parametrize("name,target", relative_links(), ids=lambda v: v)
def test_links_resolve_in_the_repository_and_on_the_site(name: str, target: str) -> None:
    """A relative link names a file or folder of the repository and, with ``#anchor``, a heading of that page under
    both GitHub's and the site's slugs (the site's build, tests/test_site.py, is strict on links and anchors too). A
    page the site generates has only its stub in the repository, which GitHub opens at its top: an anchor into it
    names a heading of the generated page."""
    path, _, anchor = target.partition("#")
    page = ROOT / name
    file = (page.parent / path).resolve() if path else page
    assert file.exists(), f"{name}: the link to {target} names no file of the repository"
    if name.startswith("docs/") and name not in GENERATED:  # the site has the generated page, not the stub
        assert file.is_relative_to(ROOT / "docs"), f"{name}: {target} is outside docs/, so not on the site"
    if anchor:
        key = str(file.relative_to(ROOT))
        text = generated(key) if key in GENERATED else file.read_text()
        if key not in GENERATED:
            assert anchor in anchors(text, github_slug, "-"), f"{name}: no heading of {key} has GitHub's anchor #{anchor}"
        assert anchor in anchors(text, site_slug, "_"), f"{name}: no heading of {key} has the site's anchor #{anchor}"


def test_nothing_points_outside_the_repository() -> None:
    files = [ROOT / "README.md", ROOT / "pyproject.toml", ROOT / "Makefile"]
    for folder in ("c8env", "docs", "training", "configs", "tests"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".yaml", ".toml", ".txt")]
    needles = ["../" + "shared", "CONTRACT" + ".md", "RULES" + ".md", "STYLE" + ".md"]
    for path in files:
        text = path.read_text(errors="ignore")
        for needle in needles:
            assert needle not in text, f"{path.relative_to(ROOT)} mentions {needle}"


def test_no_page_is_over_600_lines() -> None:
    """A docs page reads as a product, not a lab notebook: none is over 600 lines (the research log behind the shipped
    agents is training/research/NOTES.md, outside the site)."""
    long = {str(path.relative_to(ROOT)): n for path in DOCS if (n := len(path.read_text().splitlines())) > 600}
    assert not long, f"docs pages over 600 lines: {long}"
