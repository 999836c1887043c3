"""training/research/recordings/: the 4-player teachers' recordings, kept as hands (deals and moves)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from c8env.seeding import derive_seed
from training import imitation
from training.config import load_config

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("config_path", [
    "training/research/configs/distill-hand-standard-4p.yaml", "training/research/configs/distill-explain-standard-4p.yaml",
    "training/research/configs/distill-explain1000-standard-4p.yaml",
    "training/research/configs/distill-rollouts-standard-4p.yaml", "configs/train/endgame-more-standard-4p.yaml"])
def test_the_committed_teacher_recording_replays_under_its_config(config_path: str) -> None:
    """training/research/recordings/ keeps the 4-player teachers' recordings as hands (deals and moves): each loads
    with its config's settings, replays on today's engine, and each recorded move is legal where it was made."""
    config = load_config(ROOT / config_path)
    with np.load(ROOT / config.pretrain_demos) as saved:
        held = len(saved["actions"])
    assert held > 0 and held % imitation._CHUNK == 0
    config = config.model_copy(update={"pretrain_demos": str(ROOT / config.pretrain_demos)})
    seed = derive_seed(imitation.recording_seed(config), 7, bits=31)  # the seed training.train records with
    demos, loaded = imitation.demonstrations(config.model_copy(update={"pretrain_samples": held}), seed)
    assert loaded and len(demos) == held and demos.obs.shape[1] == config.obs_size
    assert demos.masks[np.arange(held), demos.actions].all()
    assert not (np.isfinite(demos.values) & ~demos.masks).any()
