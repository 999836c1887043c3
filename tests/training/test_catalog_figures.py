"""The catalog's figures come from results files (training.catalog writes them), never typed."""

from __future__ import annotations

import json
import shutil

import pytest

from c8env.agents import catalog
from training import catalog as writer


@pytest.mark.parametrize("name", catalog.catalog().names())
def test_catalog_figures_are_those_of_the_results_files(name):
    entry = catalog.entry(name)
    assert entry.figures == writer.figures_of(entry)
    assert entry.ms_per_move is None or entry.ms_per_move > 0


def test_every_catalog_agent_has_figures_in_its_setting():
    for entry in catalog.catalog().entries.values():
        assert entry.figures, f"{entry.name} has no results file in docs/leaderboard/results"


def test_refresh_rewrites_figures_and_keeps_the_rest(tmp_path):
    copy = tmp_path / "catalog.yaml"
    text = catalog.CATALOG_FILE.read_text()
    copy.write_text(text.replace("win_rate: 0.653", "win_rate: 0.99"))  # a typed figure
    shutil.copytree(catalog.CATALOG_FILE.parent / "policies", tmp_path / "policies")
    writer.refresh(copy, timing=False)
    assert copy.read_text() == text


def test_time_per_move_is_measured():
    assert writer.ms_per_move(catalog.entry("greedy"), decisions=20, repeats=1) > 0


def test_figures_take_the_gain_of_a_version_2_exploit_results_file_and_refuse_version_1(tmp_path):
    results, exploit = tmp_path / "results", tmp_path / "exploit"
    results.mkdir()
    exploit.mkdir()
    shutil.copy(writer.RESULTS / "greedy.json", results)
    data = {"format": "c8env-exploit-results", "format_version": 2, "agent": "greedy", "players": 2,
            "rules": "standard", "gain": 0.041,
            "start": {"policy": "iter6-standard-2p", "why": "the strongest network at 2 players", "deals": 2500,
                      "hands": 5000, "wins": 3165, "win_rate": 0.633, "ci_low": 0.6196, "ci_high": 0.6462,
                      "fair_share": 0.5, "points_per_hand": 1.0, "truncated": 0, "seed": 1},
            "final": {"deals": 2500, "hands": 5000, "wins": 3370, "win_rate": 0.674, "ci_low": 0.6609,
                      "ci_high": 0.6868, "fair_share": 0.5, "points_per_hand": 2.0, "truncated": 2, "seed": 1}}
    (exploit / "greedy.json").write_text(json.dumps(data))
    figures = writer.figures_of(catalog.entry("greedy"), results, exploit)
    mine = next(f for f in figures if (f.rules, f.players) == ("standard", 2))
    assert mine.exploit_gain == 0.041 and mine.exploited.win_rate == 0.674 and mine.exploited.cut_off == 2
    assert mine.exploited.ci == (0.6609, 0.6868) and mine.exploited_source == str(exploit / "greedy.json")
    assert all(f.exploited is None for f in figures if f is not mine)  # the exploit file's setting only
    (exploit / "greedy.json").write_text(json.dumps(data | {"format_version": 1}))
    with pytest.raises(ValueError, match=r"version 1 \(a fresh learner's win rate, not a gain\).*rerun `c8env exploit"):
        writer.figures_of(catalog.entry("greedy"), results, exploit)
