"""Learning curves of a run: ``python -m training.plot runs/<name>-s<seed> [--out curves.png]``.

Reads the run's ``evals.jsonl`` (the periodic evaluations) and draws, per evaluation opponent,
the win rate against training steps with its 95% interval as a band and the fair share as a
dashed line; the trainer's best evaluation (``best.json``, the one behind ``best.npz``) is marked, and
so are evaluations that left more than 1 hand in 1,000 unfinished (never chosen as the best).
A second row draws the same against wall-clock time (the run's training time, evaluations
included) when every record has it. ``training.train`` writes ``curves.png`` into the run
directory at the end of every run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from c8env.argcheck import Parser, new_file
from training.evaluation import stalls


def read_evals(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The periodic evaluations of a run, grouped by opponent and sorted by step."""
    path = Path(run_dir) / "evals.jsonl"
    if not path.is_file():
        raise ValueError(f"{str(run_dir)!r} has no evals.jsonl (not a training run directory, or no evaluation yet)")
    by_opponent: dict[str, list[dict[str, Any]]] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            by_opponent.setdefault(row["opponent"], []).append(row)
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise ValueError(f"{str(path)!r} line {number} is not an evaluation record ({err})") from None
    return {name: sorted(rows, key=lambda r: r["step"]) for name, rows in by_opponent.items()}


def plot_run(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the learning-curve PNG of a run (default ``<run_dir>/curves.png``); return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dir = Path(run_dir)
    curves = read_evals(run_dir)
    best_file = run_dir / "best.json"  # the trainer's best periodic evaluation (best.npz), if any
    best = json.loads(best_file.read_text()) if best_file.is_file() else {}
    out = Path(out) if out else run_dir / "curves.png"
    clocked = all("seconds" in r for rows in curves.values() for r in rows)
    axes_x = [("step", 1e6, "training steps (millions)")] + ([("seconds", 3600, "wall-clock hours")] if clocked else [])
    fig, axes = plt.subplots(len(axes_x), len(curves), figsize=(5 * len(curves), 3.6 * len(axes_x)), squeeze=False)
    for row_axes, (key, scale, label) in zip(axes, axes_x, strict=True):
        for ax, (opponent, rows) in zip(row_axes, curves.items(), strict=True):
            xs = [r[key] / scale for r in rows]
            ax.fill_between(xs, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows], alpha=0.25,
                            label="95% interval")
            ax.plot(xs, [r["win_rate"] for r in rows], marker="o", markersize=3, label="win rate")
            ax.axhline(rows[0]["fair_share"], color="grey", linestyle="--", linewidth=1, label="fair share")
            stalled = [r for r in rows if stalls([r])]
            if stalled:
                ax.plot([r[key] / scale for r in stalled], [r["win_rate"] for r in stalled], marker="x", color="C3",
                        linestyle="none", label="stalls (> 1/1000 cut off)")
            marked = next((r for r in rows if r["step"] == best.get("step")), None)
            if best.get("opponent") == opponent and marked is not None:
                ax.plot([marked[key] / scale], [best["win_rate"]], marker="*", markersize=12, color="C3",
                        linestyle="none", label=f"best {best['win_rate']:.1%}")
            ax.set_title(f"vs {opponent} ({rows[-1]['hands']:,} hands per point)")
            ax.set_xlabel(label)
            ax.set_ylabel("win rate")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(run_dir.name)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.plot", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="a run directory (runs/<name>-s<seed>)")
    parser.add_argument("--out", type=lambda text: str(new_file(".png")(text)), help="PNG path (default: RUN_DIR/curves.png)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        print(plot_run(args.run_dir, args.out))
    except ValueError as err:
        parser.fail(err)


if __name__ == "__main__":
    main()
