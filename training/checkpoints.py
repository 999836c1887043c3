"""A run's checkpoints (``checkpoints/ckpt_<step>.zip`` and its ``.json`` sidecar, written by :mod:`training.train`):
which are intact, which damaged (a truncated or garbled ``.zip`` or ``.json``, one of the pair missing). ``--resume``
(:mod:`training.train`) and :mod:`training.export` both take the newest intact one."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

#: What an SB3 checkpoint archive holds at least (``model.save``).
CHECKPOINT_MEMBERS = ("data", "policy.pth")


def checkpoint_problem(stem: Path) -> str | None:
    """What is wrong with the checkpoint ``stem`` (``.../ckpt_<step>``: its ``.zip`` and ``.json`` sidecar), in a
    few words, or None when both files are there and read back whole."""
    archive, sidecar = stem.with_suffix(".zip"), stem.with_suffix(".json")
    if not archive.is_file():
        return "its .zip is missing"
    if not sidecar.is_file():
        return "its .json sidecar is missing"
    try:
        saved = json.loads(sidecar.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return f"its .json is not readable JSON ({type(err).__name__}: {str(err)[:80]})"
    step = saved.get("step") if isinstance(saved, dict) else None
    if not isinstance(step, int) or not isinstance(saved.get("config"), dict) or f"ckpt_{step:010d}" != stem.name:
        return "its .json is not this checkpoint's record (step, config)"
    try:
        with zipfile.ZipFile(archive) as zf:
            missing = [name for name in CHECKPOINT_MEMBERS if name not in zf.namelist()]
            bad = None if missing else zf.testzip()
    except Exception as err:  # BadZipFile, EOFError, zlib.error, OSError: a truncated or garbled archive
        return f"its .zip is truncated or corrupt ({type(err).__name__}: {str(err)[:80]})"
    if missing:
        return f"its .zip is truncated or corrupt (no {' or '.join(missing)} in it)"
    if bad is not None:
        return f"its .zip is truncated or corrupt (bad CRC in {bad})"
    return None


def resumable_checkpoint(run_dir: Path) -> tuple[Path | None, list[tuple[Path, str]]]:
    """The newest intact checkpoint ``.zip`` of a run (or None), and every damaged checkpoint (its stem and what
    is wrong), newest first. A checkpoint cut short while being written (``.partial.zip``) is neither."""
    folder = run_dir / "checkpoints"
    stems = {p.with_suffix("") for p in folder.glob("ckpt_*.json")}
    stems |= {p.with_suffix("") for p in folder.glob("ckpt_*.zip") if not p.name.endswith(".partial.zip")}
    intact, damaged = None, []
    for stem in sorted(stems, reverse=True):
        problem = checkpoint_problem(stem)
        if problem is not None:
            damaged.append((stem, problem))
        elif intact is None:
            intact = stem.with_suffix(".zip")
    return intact, damaged


def damaged_list(damaged: list[tuple[Path, str]]) -> str:
    """``damaged checkpoint(s) NAME (what is wrong); ...``: the damaged checkpoints in a few words."""
    listed = "; ".join(f"{stem.name} ({problem})" for stem, problem in damaged)
    return f"damaged checkpoint{'s' * (len(damaged) > 1)} {listed}"
