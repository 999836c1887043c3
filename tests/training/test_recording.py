"""Recording demonstrations: hands played side by side in worker processes record the very decisions of the
one-hand-at-a-time recording, for any worker count."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

from c8env.observation import LEGACY_OBS_SIZE
from training import imitation
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


def test_recording_is_the_old_commits_for_any_workers(monkeypatch) -> None:
    """The guided search of iter2-standard-2p (fewer simulations) against greedy, the expert and itself, in chunks
    of 100 decisions (3 chunks, the last cut short): the same arrays as the old commit's, with 1 and 2 workers."""
    monkeypatch.setattr(imitation, "_CHUNK", 100)
    guide = ROOT / "training/research/policies/distill-standard-2p.npz"
    config = load_config(ROOT / "training/research/configs/iter2-standard-2p.yaml", [
        f"pretrain_agent=expert:policy={guide},prior=0.05,simulations=20",
        "opponent_weights={greedy: 0.4, expert: 0.3, self: 0.3}", "expert_spec=expert:simulations=10"])
    for workers in (1, 2):
        demos = record_demonstrations(config, 240, seed=5, workers=workers)
        assert len(demos) == 240 and np.isfinite(demos.values).any()
        assert digest(demos) == OLD_RECORDING, f"workers={workers}"


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
