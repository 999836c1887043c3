"""``--resume`` of a run whose latest checkpoint is damaged: a truncated ``.zip``, a garbled ``.json``, one of
the pair deleted. The run says so in one line and resumes from the newest intact checkpoint; with none intact it
says in one line how to start again, and touches nothing. ``python -m training.export RUN OUT`` takes the same
newest intact checkpoint (or says in one line that there is none).

One tiny run (the smallest settings of tests/training/test_training.py, its envs in this process) writes
checkpoints at steps 0, 512 and 1024; each case damages a copy of it and resumes the copy in this process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from c8env.agents import load
from tests.training.test_training import TINY
from training.checkpoints import checkpoint_problem, resumable_checkpoint
from training.export import main as export
from training.train import main

SETTINGS = {**TINY, "vec_env": "dummy", "n_envs": 4, "n_workers": 1, "eval_workers": 1, "total_steps": 1024,
            "keep_checkpoints": 3, "eval_deals": 4, "final_eval_deals": 4}
STEPS = (0, 512, 1024)


def ckpt(run: Path, step: int, suffix: str) -> Path:
    return run / "checkpoints" / f"ckpt_{step:010d}{suffix}"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    config = root / "tiny.yaml"
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in {**SETTINGS, "run_root": str(root)}.items()))
    main(["--config", str(config), "--no-progress"])
    run = root / "tiny-s0"
    assert [checkpoint_problem(ckpt(run, s, "")) for s in STEPS] == [None, None, None]
    return run


def copy_of(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    return copy


def resume(run: Path, capsys, total_steps: int) -> tuple[int, str]:
    """Resume ``run`` by its directory; the exit code (0: finished) and stderr."""
    code = 0
    try:
        main(["--resume", str(run), "--total-steps", str(total_steps), "--no-progress"])
    except SystemExit as stop:
        code = stop.code
    return code, capsys.readouterr().err


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def garble(path: Path) -> None:
    path.write_text(path.read_text()[:40] + "#garbled#" + path.read_text()[60:])


@pytest.mark.slow
@pytest.mark.parametrize("damage, problem", [
    (lambda run: truncate(ckpt(run, 1024, ".zip")), "its .zip is truncated or corrupt"),
    (lambda run: garble(ckpt(run, 1024, ".json")), "its .json is not readable JSON"),
    (lambda run: ckpt(run, 1024, ".json").unlink(), "its .json sidecar is missing"),
    (lambda run: ckpt(run, 1024, ".zip").unlink(), "its .zip is missing"),
], ids=["truncated-zip", "garbled-json", "json-deleted", "zip-deleted"])
def test_resume_skips_a_damaged_latest_checkpoint_and_says_so(tiny_run, tmp_path, capsys, damage, problem) -> None:
    run = copy_of(tiny_run, tmp_path)
    damage(run)
    assert resumable_checkpoint(run)[0] == ckpt(run, 512, ".zip")
    code, err = resume(run, capsys, total_steps=512)
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("damaged checkpoint")]
    assert len(lines) == 1, err
    assert f"damaged checkpoint ckpt_0000001024 ({problem}" in lines[0]
    assert "resuming from ckpt_0000000512.zip" in lines[0]
    assert f"resuming {run} from ckpt_0000000512.zip (step 512)" in err
    # the damaged files are set aside, out of the run's way; the run finished from step 512
    assert not ckpt(run, 1024, ".zip").exists() and not ckpt(run, 1024, ".json").exists()
    assert any((run / "checkpoints" / "damaged").iterdir())
    assert (run / "policy.npz").is_file()
    assert all(json.loads(line)["step"] <= 512 for line in (run / "evals.jsonl").read_text().splitlines())


@pytest.mark.slow
def test_resume_goes_on_training_past_a_damaged_checkpoint(tiny_run, tmp_path, capsys) -> None:
    run = copy_of(tiny_run, tmp_path)
    truncate(ckpt(run, 1024, ".zip"))
    garble(ckpt(run, 512, ".json"))
    code, err = resume(run, capsys, total_steps=1024)
    assert code == 0, err
    assert "damaged checkpoints ckpt_0000001024 (its .zip is truncated" in err and "ckpt_0000000512 (its .json" in err
    assert f"resuming {run} from ckpt_0000000000.zip (step 0)" in err
    assert checkpoint_problem(ckpt(run, 1024, "")) is None  # written again, whole
    assert sorted(p.name for p in (run / "checkpoints" / "damaged").iterdir()) == [
        "ckpt_0000000512.json", "ckpt_0000000512.zip", "ckpt_0000001024.json", "ckpt_0000001024.zip"]


@pytest.mark.slow
def test_with_no_intact_checkpoint_resume_says_how_to_start_again(tiny_run, tmp_path, capsys) -> None:
    run = copy_of(tiny_run, tmp_path)
    truncate(ckpt(run, 1024, ".zip"))
    ckpt(run, 512, ".zip").write_bytes(b"PK\x03\x04 not a zip at all")
    ckpt(run, 0, ".json").write_text('{"step": 0')  # cut short
    before = sorted((p.name, p.stat().st_size) for p in (run / "checkpoints").iterdir())
    code, err = resume(run, capsys, total_steps=1024)
    assert code == 2
    message = [line for line in err.splitlines() if "no intact checkpoint" in line]
    assert len(message) == 1, err
    for words in ("ckpt_0000001024 (its .zip is truncated or corrupt", "ckpt_0000000512 (its .zip",
                  "ckpt_0000000000 (its .json is not readable JSON", "start again without --resume", "--overwrite",
                  "new name or seed"):
        assert words in message[0], message[0]
    assert sorted((p.name, p.stat().st_size) for p in (run / "checkpoints").iterdir()) == before  # nothing moved
    # without --resume the damaged run is not silently replaced either
    config = tmp_path / "again.yaml"
    settings = {**SETTINGS, "name": "tiny", "run_root": str(tmp_path)}
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()))
    with pytest.raises(SystemExit) as stop:
        main(["--config", str(config), "--no-progress"])
    assert stop.value.code == 2 and "already holds a run" in capsys.readouterr().err


@pytest.mark.slow
def test_export_of_a_run_skips_damaged_checkpoints(tiny_run, tmp_path, capsys) -> None:
    run = copy_of(tiny_run, tmp_path)
    truncate(ckpt(run, 1024, ".zip"))
    export([str(run), str(tmp_path / "policy.npz")])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("damaged checkpoint")]
    assert len(lines) == 1, err
    assert "ckpt_0000001024 (its .zip is truncated or corrupt" in lines[0]
    assert "skipped; exporting ckpt_0000000512.zip, the newest intact one" in lines[0]
    assert "512 steps" in load(str(tmp_path / "policy.npz")).meta["description"]
    assert ckpt(run, 1024, ".zip").is_file()  # exporting reads the run, it moves nothing
    ckpt(run, 512, ".json").unlink()
    ckpt(run, 0, ".zip").write_bytes(b"PK\x03\x04 not a zip at all")
    with pytest.raises(SystemExit) as stop:
        export([str(run), str(tmp_path / "none.npz")])
    message = [line for line in capsys.readouterr().err.splitlines() if "no intact checkpoint" in line]
    assert stop.value.code == 2 and len(message) == 1
    for words in ("ckpt_0000001024 (its .zip is truncated", "ckpt_0000000512 (its .json sidecar is missing",
                  "ckpt_0000000000 (its .zip is truncated or corrupt"):
        assert words in message[0], message[0]
    assert not (tmp_path / "none.npz").exists()
