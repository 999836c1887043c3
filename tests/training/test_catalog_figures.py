"""The catalog's figures come from results files (training.catalog writes them), never typed."""

from __future__ import annotations

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
