"""Learning curves of a run: ``python -m training.plot runs/<name>-s<seed> [--out curves.png]``.

Given a ``.csv`` of expert-iteration steps instead (``docs/expert-iteration-2p.csv``), it draws
their win rates against greedy and the expert, per step and against wall-clock minutes, one line
per way of fitting the clones, with the 2-player targets (:func:`plot_iteration`).

Reads the run's ``clone.jsonl`` (the warm start's cloning epochs: held-out accuracy and loss, a panel of its own) and
``evals.jsonl`` (the periodic evaluations) and draws, per evaluation opponent,
the win rate against training steps with its 95% interval as a band and the fair share as a
dashed line; the trainer's best evaluation (``best.json``, the one behind ``best.npz``) is marked, and
so are evaluations that left more than 1 hand in 1,000 unfinished (never chosen as the best).
A second row draws the same against wall-clock time (the run's training time, evaluations
included) when every record has it. ``training.train`` writes ``curves.png`` into the run
directory at the end of every run.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any

from c8env.tools.argcheck import Parser, new_file
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


def read_clone(run_dir: Path) -> list[dict[str, float]]:
    """The behaviour cloning's epochs of a run (``clone.jsonl``, written by ``training.train``), or [] without."""
    path = Path(run_dir) / "clone.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def plot_clone(ax: Any, epochs: list[dict[str, float]]) -> None:
    """The cloning stage's curve: held-out accuracy and the actor's mean loss per epoch."""
    xs = [e["epoch"] for e in epochs]
    ax.plot(xs, [e["accuracy"] for e in epochs], marker="o", markersize=3, label="held-out accuracy")
    ax.set_xlabel("cloning epoch")
    ax.set_ylabel("held-out accuracy (moves with a choice)")
    loss_ax = ax.twinx()
    loss_ax.plot(xs, [e["policy_loss"] for e in epochs], color="C1", marker=".", label="actor loss (train)")
    loss_ax.set_ylabel("actor loss")
    ax.set_title("behaviour cloning")
    ax.grid(alpha=0.3)
    lines = ax.get_legend_handles_labels(), loss_ax.get_legend_handles_labels()
    ax.legend(lines[0][0] + lines[1][0], lines[0][1] + lines[1][1], fontsize=8, loc="center right")


def plot_run(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the learning-curve PNG of a run (default ``<run_dir>/curves.png``): the behaviour cloning's epochs
    (``clone.jsonl``) where it had a warm start, and the periodic evaluations (``evals.jsonl``); return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dir = Path(run_dir)
    clone = read_clone(run_dir)
    curves = read_evals(run_dir) if (run_dir / "evals.jsonl").is_file() or not clone else {}
    best_file = run_dir / "best.json"  # the trainer's best periodic evaluation (best.npz), if any
    best = json.loads(best_file.read_text()) if best_file.is_file() else {}
    out = Path(out) if out else run_dir / "curves.png"
    clocked = bool(curves) and all("seconds" in r for rows in curves.values() for r in rows)
    axes_x = [("step", 1e6, "training steps (millions)")] + ([("seconds", 3600, "wall-clock hours")] if clocked else [])
    columns = len(curves) + bool(clone)
    fig, axes = plt.subplots(len(axes_x), columns, figsize=(5 * columns, 3.6 * len(axes_x)), squeeze=False)
    if clone:
        plot_clone(axes[0][0], clone)
        for ax in axes[1:, 0]:
            ax.set_visible(False)
    for row_axes, (key, scale, label) in zip(axes, axes_x, strict=True):
        for ax, (opponent, rows) in zip(row_axes[bool(clone):], curves.items(), strict=True):
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


# the 2-player targets for a network alone: the lower bound of the 95% interval against each opponent
TARGETS = {"greedy": (0.63, "lower bound at least 63%"), "expert": (0.54, "lower bound at least 54%")}
ITERATION_COLUMNS = ("step", "network", "teacher", "fit", "minutes", "vs_greedy", "vs_greedy_low", "vs_greedy_high",
                     "greedy_hands", "vs_expert", "vs_expert_low", "vs_expert_high", "expert_hands")


def read_iteration(path: str | Path) -> list[dict[str, str]]:
    """The rows of an expert-iteration CSV (:data:`ITERATION_COLUMNS`); ``ValueError`` if there is no such
    file or it lacks columns (named)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{str(path)!r} does not exist")
    with path.open(newline="") as file:
        rows = list(csv.DictReader(file))
    missing = [c for c in ITERATION_COLUMNS if not rows or c not in rows[0]]
    if missing:
        raise ValueError(f"{str(path)!r} is not an expert-iteration CSV: no rows or no column(s) {missing}")
    return rows


def plot_iteration(path: str | Path, out: str | Path | None = None) -> Path:
    """Write the expert-iteration PNG of a CSV (default: the CSV's path with ``.png``); return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    rows = read_iteration(path)
    out = Path(out) if out else path.with_suffix(".png")
    fits = list(dict.fromkeys(r["fit"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(12, 6))
    for ax, key, label in ((axes[0], "step", "expert-iteration step"),
                           (axes[1], "minutes", "wall-clock minutes (recording + fitting, 2 shared cores)")):
        for opponent, color in (("greedy", "tab:blue"), ("expert", "tab:red")):
            for number, fit in enumerate(fits):
                marker = "os^Dv"[number % 5]
                part = [r for r in rows if r["fit"] == fit]
                xs = [float(r[key]) for r in part]
                ys = [100 * float(r[f"vs_{opponent}"]) for r in part]
                errors = [[y - 100 * float(r[f"vs_{opponent}_low"]) for y, r in zip(ys, part, strict=True)],
                          [100 * float(r[f"vs_{opponent}_high"]) - y for y, r in zip(ys, part, strict=True)]]
                ax.errorbar(xs, ys, yerr=errors, marker=marker, capsize=4, color=color,
                            linestyle="-" if fit == fits[-1] else "--", label=f"vs {opponent}, {fit}")
            target, words = TARGETS[opponent]
            ax.axhline(100 * target, color=color, linestyle=":", linewidth=1, label=f"target vs {opponent}: {words}")
        ax.set_xlabel(label)
        ax.set_ylabel("win rate on fresh deals, 95% interval (%)")
        ax.grid(alpha=0.3)
        if key == "step":
            ax.set_xticks(sorted({int(float(r["step"])) for r in rows}))
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, loc="lower center", ncol=2)  # below the plots
    fig.suptitle("Expert iteration, 2 players: each step clones the search guided by the previous step's network")
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.plot", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="a run directory (runs/<name>-s<seed>), or an expert-iteration .csv")
    parser.add_argument("--out", type=lambda text: str(new_file(".png")(text)),
                        help="PNG path (default: RUN_DIR/curves.png, or the CSV's path with .png)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        plot = plot_iteration if args.run_dir.endswith(".csv") else plot_run
        print(plot(args.run_dir, args.out))
    except ValueError as err:
        parser.fail(err)


if __name__ == "__main__":
    main()
