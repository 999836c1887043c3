"""Recording demonstrations: hands played side by side in worker processes record the very decisions of the
one-hand-at-a-time recording, for any worker count."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from c8env.observation import LEGACY_OBS_SIZE
from c8env.seeding import derive_seed
from training import imitation, record_speed
from training.config import load_config
from training.imitation import Demonstrations, record_demonstrations

ROOT = Path(__file__).resolve().parent.parent.parent
# The sha256 of the arrays below (obs, masks, actions, returns, values, in that order, as bytes), recorded by
# training/imitation.py at commit dd55b6f, the last before hands were played side by side (and the search's
# rollouts chose greedy's move without the legal mask), with workers=1 and with workers=2.
OLD_RECORDING = "aff35882628b28cbfba76472903a905ad9168aac95d27847bc286e1e29f4e8fa"


def digest(demos: Demonstrations) -> str:
    hashed = hashlib.sha256()
    for key in ("obs", "masks", "actions", "returns", "values"):
        array = getattr(demos, key)  # the old commit's observation: the first 245 entries of today's
        hashed.update(np.ascontiguousarray(array[:, :LEGACY_OBS_SIZE] if key == "obs" else array).tobytes())
    return hashed.hexdigest()


def test_the_compared_observation_is_the_legacy_vector() -> None:
    assert record_speed.COMPARED_OBS == LEGACY_OBS_SIZE


def test_recording_is_the_old_commits_for_any_workers(monkeypatch) -> None:
    """The guided search of iter2-standard-2p (fewer simulations) against greedy, the expert and itself, in chunks
    of 100 decisions (3 chunks, the last cut short): the same arrays as the old commit's, with 1 and 2 workers."""
    monkeypatch.setattr(imitation, "_CHUNK", 100)
    config = load_config(ROOT / "configs/train/iter2-standard-2p.yaml", [
        "pretrain_agent=expert:policy=distill-standard-2p,prior=0.05,simulations=20",
        "opponent_weights={greedy: 0.4, expert: 0.3, self: 0.3}", "expert_spec=expert:simulations=10"])
    for workers in (1, 2):
        demos = record_demonstrations(config, 240, seed=5, workers=workers)
        assert len(demos) == 240 and np.isfinite(demos.values).any()
        assert digest(demos) == OLD_RECORDING, f"workers={workers}"


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


def test_recording_counts_its_decisions_on_a_progress_bar_unless_told_not_to(tmp_path, capsys) -> None:
    """The bar on stderr names the demonstrator and reaches the samples asked for (never more); progress=False
    writes nothing there, and the arrays are the same either way."""
    path = tmp_path / "greedy.yaml"
    path.write_text("pretrain_agent: greedy\nopponent_weights: {greedy: 0.5, random: 0.5}\n")
    config = load_config(path)
    shown = record_demonstrations(config, 70, seed=3)
    bar = capsys.readouterr().err
    assert "recording greedy" in bar and max(int(n) for n in re.findall(r"(\d+)/70", bar)) == 70
    hidden = record_demonstrations(config, 70, seed=3, progress=False)
    assert capsys.readouterr().err == ""
    assert digest(shown) == digest(hidden)


@pytest.mark.parametrize("name", ["distill-hand-standard-4p", "distill-explain-standard-4p",
                                  "distill-explain1000-standard-4p", "distill-rollouts-standard-4p",
                                  "endgame-more-standard-4p"])
def test_the_committed_teacher_recording_replays_under_its_config(name: str) -> None:
    """training/recordings/ keeps the 4-player teachers' recordings as hands (deals and moves): each loads with its
    config's settings, replays on today's engine, and each recorded move is legal where it was made."""
    config = load_config(ROOT / f"configs/train/{name}.yaml")
    with np.load(ROOT / config.pretrain_demos) as saved:
        held = len(saved["actions"])
    assert held > 0 and held % imitation._CHUNK == 0
    config = config.model_copy(update={"pretrain_demos": str(ROOT / config.pretrain_demos)})
    seed = derive_seed(imitation.recording_seed(config), 7, bits=31)  # the seed training.train records with
    demos, loaded = imitation.demonstrations(config.model_copy(update={"pretrain_samples": held}), seed)
    assert loaded and len(demos) == held and demos.obs.shape[1] == config.obs_size
    assert demos.masks[np.arange(held), demos.actions].all()
    assert not (np.isfinite(demos.values) & ~demos.masks).any()
