"""What files a test makes the process open: :func:`recording`, read from Python's audit events, so every way of
opening a file is seen (``open``, ``io.open``, ``os.open``, ``Path.read_bytes``, NumPy), in any thread."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: The lists that record the paths opened, one per :func:`recording` in progress (an audit hook stays for good).
_RECORDING: list[list[Path]] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _RECORDING and isinstance(args[0], (str, bytes, os.PathLike)):
        path = Path(os.fsdecode(args[0])).absolute()
        for paths in _RECORDING:
            paths.append(path)


sys.addaudithook(_audit)


@contextmanager
def recording() -> Iterator[list[Path]]:
    """The absolute paths of the files opened (by any thread) inside the ``with`` block, in order."""
    paths: list[Path] = []
    _RECORDING.append(paths)
    try:
        yield paths
    finally:
        _RECORDING.remove(paths)


def opened_within(paths: list[Path], folder: Path) -> list[Path]:
    """The paths of ``paths`` inside ``folder`` (both resolved: links and ``..`` followed)."""
    root = folder.resolve()
    return [p for p in paths if p.resolve() == root or root in p.resolve().parents]
