"""``python -m training.research.record_speed``: an old commit's recording timed against this tree's."""

from __future__ import annotations

from pathlib import Path

import pytest

from c8env.observation import LEGACY_OBS_SIZE
from training.research import record_speed

ROOT = Path(__file__).resolve().parents[3]


def test_the_compared_observation_is_the_legacy_vector() -> None:
    assert record_speed.COMPARED_OBS == LEGACY_OBS_SIZE


@pytest.mark.slow
def test_record_speed_times_the_old_commit_and_this_tree_on_the_same_recording(tmp_path, capsys) -> None:
    """The benchmark records with HEAD's code in a worktree and with this tree's, on 1 and 2 workers, and finds the
    same arrays (a greedy demonstrator: no kernels to compile in the fresh worktree)."""
    config = tmp_path / "greedy.yaml"
    config.write_text("pretrain_agent: greedy\nopponent_weights: {greedy: 0.5, random: 0.5}\n")
    record_speed.main(["HEAD", "--config", str(config), "--samples", "30", "--chunk", "10", "--runs", "1"])
    table = capsys.readouterr().out
    assert "recording 30 decisions of greedy.yaml's pretrain_agent (chunks of 10, seed 0): old = HEAD" in table
    assert all(f"\n{label:>15} | " in table for label, _, _ in record_speed.RUNS)
    assert table.rstrip().endswith("the same arrays in every run (obs, masks, actions, returns, values): yes")


def test_record_speed_refuses_an_unknown_revision(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        record_speed.main(["no-such-revision"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().endswith("old revision 'no-such-revision': no such commit in " + str(ROOT))
