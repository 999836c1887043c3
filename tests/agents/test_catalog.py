"""The catalog (c8env/agents/catalog.yaml): the single source of the shipped agents, their roles and figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from c8env import agents
from c8env.agents import catalog
from c8env.tools.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]


def test_every_shipped_file_is_a_catalog_entry_and_back():
    files = sorted(p.name for p in agents.POLICY_DIR.glob("*.npz"))
    assert files == sorted(e.file.name for e in catalog.catalog().entries.values() if e.file is not None)
    assert agents.available() == catalog.catalog().names()
    assert agents.shipped_policies() == catalog.catalog().names("network")


def test_each_likely_setting_names_a_recommended_opponent_with_figures():
    for players, rules in [(2, "standard"), (4, "standard"), (2, "special_cards")]:
        best = catalog.recommended(players, rules)
        assert best is not None and best.plays(players, rules)
        figures = best.figures_for(players, rules)
        assert figures is not None and {"random", "greedy"} <= set(figures.against)
    assert catalog.recommended(3, "standard") is None


def test_c8env_agents_names_the_recommended_opponent_at_4_players(capsys):
    cli_main(["agents", "--players", "4"])
    out = capsys.readouterr().out
    best = catalog.recommended(4, "standard")
    assert f"Recommended opponent for standard, 4 players: {best.name}" in out
    greedy = best.figures_for(4, "standard").against["greedy"]
    assert f"{greedy.win_rate:.1%}" in out
    assert "iter6-standard-2p" not in out  # a 2-player network is not listed at 4 players
    assert "ppo-standard-4p" in out and "expert" in out


def test_c8env_agents_refuses_unknown_rules():
    result = subprocess.run([sys.executable, "-m", "c8env.tools.cli", "agents", "--rules", "nope"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "--rules 'nope' is invalid; allowed:" in result.stderr


def test_named_search_loads_its_spec_and_takes_no_options():
    strong = agents.load("expert-strong", num_players=2, seed=0)
    spec = catalog.entry("expert-strong").spec
    assert isinstance(strong, agents.ExpertAgent) and strong.simulations == 180 and strong.confident == 0.6
    assert "policy=iter6-standard-2p" in spec and "rollouts=rollout6-standard-2p" in spec
    with pytest.raises(ValueError, match="named search and takes no options"):
        agents.load("expert-strong:simulations=3")


@pytest.mark.parametrize("retired", [r.name for r in catalog.catalog().retired.values()])
def test_retired_names_refuse_in_one_line_naming_the_replacement_and_the_file(retired):
    item = catalog.catalog().retired[retired]
    for spec in (retired, f"expert:policy={retired}", f"expert:policy=iter6-standard-2p,rollouts={retired}"):
        with pytest.raises(ValueError) as caught:
            agents.load(spec, num_players=2)
        message = str(caught.value)
        assert "\n" not in message and item.replacement in message and item.file in message, message
    assert (ROOT / item.file).is_file()  # still loadable by path from the repository
    assert agents.load(str(ROOT / item.file), num_players=2 if "2p" in retired else 4).act


def test_a_bad_catalog_is_refused(tmp_path):
    data = yaml.safe_load(catalog.CATALOG_FILE.read_text())
    cases = {
        "kind": lambda d: d["agents"][0].update(kind="robot"),
        "missing file": lambda d: next(a for a in d["agents"] if a.get("file")).update(file="policies/none.npz"),
        "recommended": lambda d: d["settings"][0].update(recommended="nobody"),
        "retired": lambda d: d["retired"][0].update(name="greedy"),
    }
    for what, change in cases.items():
        broken = yaml.safe_load(yaml.safe_dump(data))
        change(broken)
        path = tmp_path / "policies" / ".." / f"{what.replace(' ', '_')}.yaml"
        (tmp_path / "policies").mkdir(exist_ok=True)
        for e in data["agents"]:
            if e.get("file"):
                (tmp_path / e["file"]).write_bytes(b"")
        path.write_text(yaml.safe_dump(broken))
        with pytest.raises(ValueError):
            catalog.load_catalog(path)


def test_the_docs_agents_page_carries_the_generated_cards():
    page = (ROOT / "docs" / "agents.md").read_text()
    generated = re.search(r"<!-- catalog: generated.*?-->\n(.*)<!-- /catalog -->", page, re.S)
    assert generated is not None and generated.group(1) == catalog.cards()
    for name in catalog.catalog().names():
        assert f"### `{name}`" in generated.group(1)


def test_the_exploited_cells_give_the_gain_and_the_final_win_rate(tmp_path, monkeypatch):
    data = yaml.safe_load(catalog.CATALOG_FILE.read_text())
    greedy = next(a for a in data["agents"] if a["name"] == "greedy")
    figure = next(f for f in greedy["figures"] if (f["rules"], f["players"]) == ("standard", 2))
    figure["exploited"] = {"gain": 0.041, "hands": 5000, "win_rate": 0.674, "ci": [0.661, 0.687], "fair_share": 0.5,
                           "cut_off": 0, "source": "docs/leaderboard/exploit/greedy.json"}
    (tmp_path / "policies").symlink_to(catalog.CATALOG_FILE.parent / "policies")
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(data))
    mine = catalog.load_catalog(tmp_path / "catalog.yaml")
    figures = mine.entries["greedy"].figures_for(2, "standard")
    assert figures.exploit_gain == 0.041 and figures.exploited.win_rate == 0.674
    assert catalog.Figures.from_dict(figures.to_dict()) == figures
    monkeypatch.setattr(catalog, "catalog", lambda: mine)
    table = catalog.setting_table(2, "standard").splitlines()
    assert "| exploited |" in table[2]
    assert "| +4.1 (67.4%) |" in next(line for line in table if line.startswith("| `greedy` |"))
    cards = catalog.cards()
    assert "| standard, 2p | " in cards and " | +4.1 (67.4%) | `docs/leaderboard/results/greedy.json`, " in cards
    assert "*exploited*: the gain in win rate of a best response warm-started from a network" in cards
    assert catalog.gain_text(-0.008, 0.492) == "-0.8 (49.2%)"


def test_the_searches_have_no_exploited_figure_and_say_why():
    table = catalog.setting_table(2, "standard").splitlines()
    for name in ("expert", "expert-strong"):
        assert "| no batched form (a search) |" in next(line for line in table if line.startswith(f"| `{name}` |"))
    cards = catalog.cards().split("### `")
    expert = next(card for card in cards if card.startswith("expert`"))
    assert expert.count("| no batched form (a search) |") == len(catalog.entry("expert").figures)
    for item in catalog.catalog().entries.values():  # the catalog's searches are the agents without a batched form
        players = 2 if item.players is None else item.players[0]
        loaded = agents.load(item.name, rules=item.rules or "standard", num_players=players, seed=0)
        assert item.is_search == (agents.batch_mode(loaded) is None), item.name
