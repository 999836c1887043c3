"""How fast demonstrations are recorded: an old commit's recording against this tree's, in the same run.

    python -m training.research.record_speed OLD_REV [--config training/research/configs/iter2-standard-2p.yaml]
        [--samples 2000] [--chunk 500] [--seed 0] [--runs 2]

Checks ``OLD_REV`` out in a temporary git worktree and records ``--samples`` decisions of the config's
``pretrain_agent`` (iter2-standard-2p's: the guided search at 300 simulations) with the old code on 1 and 2
workers and with this tree's code on 1 and 2 workers, each in its own Python process (the numba kernels
compiled first, untimed), the four runs interleaved ``--runs`` times so that a change in the machine's load
hits them alike. Prints the decisions per second (median of the runs), their ratios, the load average before
and after, and whether every recording's arrays are identical (they must be: same config, seed and chunks).

Recordings are cut into chunks of ``--chunk`` decisions (the code's own chunks are 20,000: an old recording of
fewer decisions would leave its second worker idle, as it shares whole chunks among its workers).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from c8env.tools.argcheck import Parser, int_between

ROOT = Path(__file__).resolve().parents[2]
#: The observation entries compared: those of every commit's vector (``LEGACY_OBS_SIZE``; later ones append more,
#: which the old commit's recording has not), so a recording's hash means the same moves on the same observations.
COMPARED_OBS = 245
#: The runs of one round: (label, tree, workers).
RUNS = (("old, 1 worker", "old", 1), ("old, 2 workers", "old", 2), ("new, 1 worker", "new", 1),
        ("new, 2 workers", "new", 2))


def record_once(config_path: str, samples: int, chunk: int, seed: int, workers: int) -> dict[str, float | str]:
    """Record in this process with whichever ``training`` package it imports (the old tree's or this one's): the
    seconds taken and the sha256 of the arrays. Runs in the subprocesses of :func:`timed_recording`."""
    from training import imitation
    from training.config import load_config

    config = load_config(config_path)
    imitation._CHUNK = chunk  # the old commit's code has no public knob for its chunk size
    imitation.record_demonstrations(config, 2, seed + 1, 1)  # the kernels compiled (or loaded), untimed
    start = time.perf_counter()
    demos = imitation.record_demonstrations(config, samples, seed, workers)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256()
    for key in ("obs", "masks", "actions", "returns", "values"):
        array = getattr(demos, key)
        digest.update(np.ascontiguousarray(array[:, :COMPARED_OBS] if key == "obs" else array).tobytes())
    return {"seconds": seconds, "sha256": digest.hexdigest()}


def timed_recording(tree: Path, config: Path, samples: int, chunk: int, seed: int, workers: int) -> dict:
    """:func:`record_once` in a fresh Python process that imports ``c8env`` and ``training`` from ``tree``."""
    code = (f"import json, runpy; run = runpy.run_path({str(Path(__file__))!r})['record_once']; "
            f"print(json.dumps(run({str(config)!r}, {samples}, {chunk}, {seed}, {workers})))")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"recording in {tree} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(old: str, config: Path, samples: int, chunk: int, seed: int, runs: int) -> None:
    """Interleaved runs of the old commit's recording and this tree's; print the table."""
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), old], cwd=ROOT, check=True,
                       capture_output=True)
        # each recording runs in its tree: the files of this one that the config names (retired policy files,
        # recordings) by their absolute paths, which an old tree may lack
        absolute = Path(folder) / config.name
        absolute.write_text(re.sub(r"(?<![\w/.-])training/research/", f"{ROOT}/training/research/", config.read_text()))
        config = absolute
        try:
            trees = {"old": tree, "new": ROOT}
            before = os.getloadavg()
            results: dict[str, list[dict]] = {label: [] for label, _, _ in RUNS}
            for _ in range(runs):
                for label, which, workers in RUNS:
                    results[label].append(timed_recording(trees[which], config, samples, chunk, seed, workers))
            after = os.getloadavg()
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    rate = {label: samples / statistics.median(r["seconds"] for r in done) for label, done in results.items()}
    hashes = {r["sha256"] for done in results.values() for r in done}
    print(f"recording {samples:,} decisions of {config.name}'s pretrain_agent (chunks of {chunk:,}, seed {seed}): "
          f"old = {old}, new = this tree; median of {runs} interleaved runs; {os.cpu_count()} CPUs, load average "
          f"(1, 5, 15 min) {' '.join(f'{x:.2f}' for x in before)} before, {' '.join(f'{x:.2f}' for x in after)} after")
    print(f"{'':>15} | {'decisions/s':>11} | vs old, 1 worker | vs old, same workers")
    for label, _, workers in RUNS:
        same = rate[f"old, {workers} worker{'s' * (workers > 1)}"]
        print(f"{label:>15} | {rate[label]:11.1f} | {rate[label] / rate['old, 1 worker']:15.2f}x | "
              f"{rate[label] / same:19.2f}x")
    print("the same arrays in every run (obs, masks, actions, returns, values): "
          + ("yes" if len(hashes) == 1 else f"NO ({len(hashes)} different recordings)"))


def build_parser() -> Parser:
    parser = Parser(prog="python -m training.research.record_speed", description=__doc__.split("\n")[0])
    parser.add_argument("old", help="the old commit (any git revision)")
    parser.add_argument("--config", type=Path, default=ROOT / "training/research/configs/iter2-standard-2p.yaml")
    parser.add_argument("--samples", type=int_between(1, 10**7), default=2000)
    parser.add_argument("--chunk", type=int_between(1, 10**7), default=500)
    parser.add_argument("--seed", type=int_between(0, 2**63 - 1), default=0)
    parser.add_argument("--runs", type=int_between(1, 100), default=2)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.config.is_file():
        parser.error(f"--config {str(args.config)!r}: no such file")
    known = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{args.old}^{{commit}}"], cwd=ROOT,
                           capture_output=True)
    if known.returncode != 0:
        parser.error(f"old revision {args.old!r}: no such commit in {ROOT}")
    compare(args.old, args.config.resolve(), args.samples, args.chunk, args.seed, args.runs)


if __name__ == "__main__":
    main()
