"""The documentation site (mkdocs.yml, docs/): built strictly, its generated pages true to the code, the
examples of its API reference run, and its main pages opened in a real browser.

- The environment page is generated from ``c8env.raw_env``'s docstring (docs/docstrings.py): its spec table
  is checked here against the env (its observation table: tests/envs/test_aec_observation.py).
- ``mkdocs build --strict`` fails on a broken link or anchor, a page left out of the navigation, an
  include naming no file, or a docstring mkdocstrings cannot render.
- Chromium (the system's, driven by Playwright as in tests/web/test_browser.py) opens the home,
  environment, API, leaderboard and speed pages: no console error, no failed request, every image loaded.
  ``C8ENV_SITE_SCREENSHOT=docs/site-screenshot.png`` makes it rewrite the committed screenshot.
"""

from __future__ import annotations

import doctest
import functools
import http.server
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import c8env

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CHROMIUM = next((p for p in (os.environ.get("C8ENV_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                             "/usr/bin/chromium") if p and Path(p).is_file()), None)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: The pages the browser opens: the home page, the generated environment page, the API reference, the
#: leaderboard (an included table and chart) and pages with pictures.
PAGES = ["", "environment/", "api/", "api/envs/", "agents/", "speed/", "training/", "play/", "about-these-docs/"]


def docstrings():
    """docs/docstrings.py, the converter of the docstrings and the maker of the environment page."""
    spec = importlib.util.spec_from_file_location("c8env_docstrings", DOCS / "docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def api_modules() -> list[str]:
    """The modules the API reference renders (``::: name`` lines of docs/api/*.md)."""
    return [m for page in sorted((DOCS / "api").glob("*.md"))
            for m in re.findall(r"^::: ([\w.]+)", page.read_text(), re.M)]


# ----- the environment page: the env's docstring ----------------------------------------------------------
def spec_table() -> dict[str, str]:
    """The docstring's specification table (its first table: | key | value |), code marks removed."""
    doc = c8env.raw_env.__doc__
    first = doc[doc.index("|"):doc.index("\n\n", doc.index("|"))]
    rows = [line.strip().strip("|").split("|", 1) for line in first.splitlines()]
    return {k.strip(): v.strip().replace("``", "") for k, v in rows if not set(k.strip()) <= {"-"}}


def test_spec_table_matches_the_env() -> None:
    from c8env.engine import MAX_PLAYERS, MIN_PLAYERS
    from c8env.envs.registration import PETTINGZOO_ENVS

    table = spec_table()
    env = c8env.raw_env(num_players=3)
    name = env.metadata["name"]
    assert table["Import"] == f"from c8env import {name}"
    namespace: dict = {}
    exec(table["Import"], namespace)
    assert namespace[name].raw_env is c8env.raw_env
    env_id = re.match(r"(\S+):", table["Registered id"]).group(1)
    assert PETTINGZOO_ENVS[env_id] == f"c8env.envs.{name}:env" and env_id.endswith(name.rsplit("_", 1)[1])
    assert table["Actions"] == "Discrete" and table["Parallel API"] == "No"
    assert table["Agents count"] == f"{MIN_PLAYERS}-{MAX_PLAYERS}"
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert "agents = ['player_0', ..., 'player_<n-1>']" in table["Agents"]
    space = env.action_space("player_0")
    assert table["Action values"] == f"Discrete({space.n})" and table["Action shape"] == str(space.shape)
    obs = env.observation_space("player_0")
    assert table["Observation shape"] == (f"observation: {obs['observation'].shape}, "
                                          f"action_mask: {obs['action_mask'].shape}")
    low, high = obs["observation"].low.min(), obs["observation"].high.max()
    bounds = re.search(r"observation: float32 counts in \[(\S+), (\S+)\]", table["Observation values"])
    assert (float(bounds.group(1)), float(bounds.group(2))) == (low, high)
    assert "action_mask: int8 in {0, 1}" in table["Observation values"]
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    assert table["State shape"].startswith(str(env.state_space.shape))
    assert f"{MAX_PLAYERS} seats x {c8env.OBS_SIZE}" in table["State shape"]


def test_environment_page_is_the_docstring() -> None:
    page = docstrings().environment_markdown()
    assert page.startswith("# The environment: `crazy_eights_v2`")
    for name, part in c8env.OBS_LAYOUT.items():  # every row of the observation table, indices as in the layout
        first, last = part.start, part.stop - 1
        index = str(first) if first == last else f"{first}-{last}"
        assert re.search(rf"^\| {index} +\| {name} +\|", page, re.M), name
    for section in ("Action Space", "Observation Space", "Rewards", "Episode End", "Info", "Version History"):
        assert f"\n## {section}\n" in page
    assert "| Import " in page and "[docs/rules.md](rules.md)" in page
    (example,) = docstrings().code_blocks(page)
    assert "env.agent_iter()" in example and ">>>" not in example


def test_docstrings_become_markdown() -> None:
    convert = docstrings().rst_to_markdown
    text = ":class:`c8env.State` and :func:`~c8env.observation.encode_observation` use ``x[0]``"
    assert convert(text) == ('<autoref identifier="c8env.State" optional><code>c8env.State</code></autoref> and '
                             '<autoref identifier="c8env.observation.encode_observation" optional>'
                             '<code>encode_observation</code></autoref> use `x[0]`')
    assert "c8env.engine.State" in convert(":class:`State`", lambda n: "c8env.engine." + n)
    example = convert("Text:\n\n>>> 1 + 1\n2\n\nMore.")
    assert "```pycon\n>>> 1 + 1\n2\n```" in example and example.endswith("More.")
    assert "```python\nprint(1)\n```" in convert(">>> print(1)\n1", example="python")
    literal = convert("Use it so::\n\n    x = 1\n    y = \"``x``\"\n\nDone.")
    assert "Use it so:\n\n```python\nx = 1\ny = \"``x``\"\n```" in literal  # code left as it is
    assert "```text\na JSON file, not Python\n```" in convert("A file::\n\n    a JSON file, not Python\n")
    table = convert("=====  =====\nid     name\n=====  =====\n0-51   play\n56     draw\n=====  =====\n")
    assert "| id | name |\n|---|---|\n| 0-51 | play |\n| 56 | draw |" in table


def test_api_pages_name_modules_that_import() -> None:
    modules = api_modules()
    for required in ("c8env", "c8env.engine", "c8env.observation", "c8env.agents", "c8env.envs.crazy_eights",
                     "c8env.envs.single_agent", "c8env.envs.vector_envs", "c8env.vector", "c8env.tools.evaluation"):
        assert required in modules, required
    for name in modules:
        importlib.import_module(name)


# ----- every code block of the API reference runs -----------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", api_modules())
def test_api_examples_run(name: str) -> None:
    """The ``>>>`` examples of a module in the API reference, as doctests, and its Python ``::`` blocks."""
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, name):
        if test.examples and getattr(test, "filename", None) == module.__file__:
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    convert = docstrings()
    own = [v for v in vars(module).values() if (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == name]
    methods = [m for cls in own if inspect.isclass(cls) for m in vars(cls).values() if inspect.isfunction(m)]
    for obj in [module, *own, *methods]:
        for code in convert.code_blocks(convert.rst_to_markdown(inspect.cleandoc(obj.__doc__ or ""))):
            exec(compile(code, f"<{name} docstring>", "exec"), {})


# ----- the site, built strictly and opened in Chromium -------------------------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, float]:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=600)
    return out, result, time.monotonic() - start


def test_site_builds_strictly(site) -> None:  # about 10 s on 2 cores: in the fast set, where broken links show
    out, result, seconds = site
    assert result.returncode == 0, result.stderr[-5000:]
    print(f"mkdocs build --strict: {seconds:.1f} s")
    for page in PAGES + ["changelog/", "rules/", "masks/", "api/engine/", "api/evaluation/"]:
        assert (out / page / "index.html").is_file(), page
    html = (out / "environment" / "index.html").read_text()
    assert "opponent_voids" in html and "Version History" in html
    assert 'href="../api/observation/#c8env.observation"' in html  # a docstring role became a link
    assert "rollout6-standard-2p" in (out / "agents" / "index.html").read_text()  # the included leaderboard
    assert "## 0.3.0.dev0" not in (out / "changelog" / "index.html").read_text()  # CHANGELOG.md, rendered


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium; .ci/run does)")
def test_site_in_chromium(site, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    out, result, _ = site
    assert result.returncode == 0, result.stderr[-5000:]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                problems: list[str] = []
                page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
                page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
                page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
                page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
                images = 0
                for path in PAGES:
                    page.goto(base + path, wait_until="load")
                    page.wait_for_load_state("networkidle")
                    page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=20_000)
                    shown = page.eval_on_selector_all("img", "imgs => imgs.map(i => [i.getAttribute('src'), i.naturalWidth])")
                    broken = [src for src, width in shown if width <= 0]
                    assert not broken, f"{path}: broken images {broken}"
                    images += len(shown)
                    page.screenshot(path=str(tmp_path / f"{path.strip('/').replace('/', '-') or 'home'}.png"), full_page=True)
                    if path == "":
                        shot = tmp_path / "site-screenshot.png"
                        page.screenshot(path=str(shot))
                        assert shot.stat().st_size > 10_000
                        if os.environ.get("C8ENV_SITE_SCREENSHOT"):
                            shutil.copyfile(shot, ROOT / os.environ["C8ENV_SITE_SCREENSHOT"])
                    if path == "environment/":
                        rows = page.locator("table tr").all_inner_texts()
                        assert sum(name in " ".join(rows) for name in c8env.OBS_LAYOUT) == len(c8env.OBS_LAYOUT)
                # The search: the index loads and finds the env page.
                page.goto(base, wait_until="load")
                page.keyboard.press("/")
                page.keyboard.type("opponent_voids")
                page.wait_for_selector(".md-search-result__item", timeout=20_000)
                assert images >= 8, images
                assert not problems, "\n".join(problems)
            finally:
                browser.close()
    finally:
        server.shutdown()
        thread.join(10)
