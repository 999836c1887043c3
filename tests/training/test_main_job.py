"""The main job (`make train`: configs/train/default.yaml) at a tiny budget, through the same entry point: every
stage runs with its progress bar, the run is deterministic for a seed, and --resume continues after the recording."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from training.config import load_config

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "configs" / "train" / "default.yaml"
TINY = ["budget=0.002", "eval_deals=5", "final_eval_deals=10", "pretrain_epochs=2"]  # 400 decisions, 500 steps


def _job(root: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "training.train", "--config", str(DEFAULT), "--set", *TINY,
                           f"run_root={root}", *extra], cwd=ROOT, capture_output=True, text=True, timeout=600)


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def test_the_budget_scales_the_recording_and_the_ppo_steps():
    plain, half = load_config(DEFAULT), load_config(DEFAULT, ["budget=0.5"])
    assert plain.pretrain_agent.startswith("expert") and plain.pretrain_temperature and plain.total_steps > 0
    assert (half.pretrain_samples, half.total_steps) == (plain.pretrain_samples // 2, plain.total_steps // 2)
    assert half.budget == 1.0 and half.eval_interval == plain.eval_interval  # applied once; the rest unchanged


def test_every_field_of_the_main_job_has_a_comment():
    for line in DEFAULT.read_text().splitlines():
        if line and not line.startswith(("#", " ")):
            assert "#" in line, f"configs/train/default.yaml: {line!r} has no comment"


@pytest.mark.slow
def test_the_main_job_runs_every_stage_is_deterministic_and_resumes_after_the_recording(tmp_path):
    first, second = _job(tmp_path / "a"), _job(tmp_path / "b")
    for done in (first, second):
        assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "a" / "default-s0"
    for bar in ("recording expert:simulations=100", "cloning", "default-s0", "evaluating"):
        assert bar in first.stderr, f"no {bar!r} progress bar"
    assert "| opponent | hands | win rate | 95% CI |" in first.stdout and "| greedy | 20 |" in first.stdout
    assert f"Learning curves: {run / 'curves.png'}" in first.stdout
    epochs = [json.loads(line) for line in (run / "clone.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in epochs] == [1, 2] and all(0 <= e["accuracy"] <= 1 for e in epochs)
    assert (run / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    policy = _arrays(run / "policy.npz")
    other = _arrays(tmp_path / "b" / "default-s0" / "policy.npz")
    assert policy.keys() == other.keys() and all(np.array_equal(policy[k], other[k]) for k in policy)

    # stopped after the recording (no checkpoint yet): --resume records nothing and ends as the whole run did
    shutil.rmtree(run / "checkpoints")
    for name in ("policy.npz", "eval.md", "clone.jsonl"):
        (run / name).unlink()
    resumed = _job(tmp_path / "a", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "starting again from the warm start" in resumed.stderr
    assert f"loaded from {run / 'demos.npz'}" in resumed.stderr
    again = _arrays(run / "policy.npz")
    assert all(np.array_equal(policy[k], again[k]) for k in policy)
