"""Evaluation outputs: rows as CSV and JSON, and plots (win rates with their intervals, a league's matrix)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from c8env.tools.evaluation.stats import League, Table
from c8env.tools.results import is_summary


def write_rows(out: Path, stem: str, rows: list[dict[str, Any]], meta: dict[str, Any] | None) -> list[Path]:
    """``stem.csv`` and ``stem.json`` (``meta`` and the rows: a summary, :func:`c8env.tools.results.is_summary`)
    in ``out``; with ``meta`` None, the CSV alone."""
    import csv
    import json

    out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out / f"{stem}.csv", out / f"{stem}.json"
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    if meta is None:
        return [csv_path]
    json_path.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    return [csv_path, json_path]


def replace_block(path: Path, markdown: str, start: str, end: str) -> bool:
    """Put ``markdown`` between the ``start`` and ``end`` lines of the file ``path`` (a generated table in a
    page); True when it changed."""
    import re

    text = path.read_text()
    pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"{path} has no {start} ... {end} block to update")
    new = pattern.sub(lambda _: f"{start}\n{markdown}\n{end}", text)
    path.write_text(new)
    return new != text


def _plot(path: Path, draw: Callable[[Any], None], width: float = 7.0, height: float = 4.0) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(width, height))
    draw(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _bars_with_ci(ax: Any, labels: list[str], rates: list[float], lows: list[float], highs: list[float],
                  fair: float | None, title: str) -> None:
    x = np.arange(len(labels))
    errors = [np.array(rates) - np.array(lows), np.array(highs) - np.array(rates)]
    ax.bar(x, rates, yerr=errors, capsize=4, color="#4C72B0")
    if fair is not None:
        ax.axhline(fair, color="grey", linestyle="--", linewidth=1, label="fair share")
        ax.legend(loc="upper right")
    ax.set_xticks(x, labels, rotation=20, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% Wilson CI)")
    ax.set_title(title)


def plot_table(table: Table, path: Path) -> Path:
    rows = table.rows()

    def draw(fig: Any) -> None:
        _bars_with_ci(fig.add_subplot(), [f"{i}: {r['agent']}" for i, r in enumerate(rows)],
                      [r["win_rate"] for r in rows], [r["ci_low"] for r in rows], [r["ci_high"] for r in rows],
                      1 / table.num_players, f"{table.num_players} players, {table.hands} hands")

    return _plot(path, draw)


def plot_league(result: League, path: Path) -> Path:
    matrix = result.win_matrix()
    k = len(result.specs)

    def draw(fig: Any) -> None:
        ax1, ax2 = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        image = ax1.imshow(matrix, vmin=0, vmax=1, cmap="RdYlGn")
        for i in range(k):
            for j in range(k):
                if i != j:
                    ax1.text(j, i, f"{matrix[i, j]:.0%}", ha="center", va="center", fontsize=8)
        ax1.set_xticks(range(k), result.specs, rotation=30, ha="right")
        ax1.set_yticks(range(k), result.specs)
        ax1.set_title("win rate of row vs column")
        fig.colorbar(image, ax=ax1, fraction=0.046)
        mus = [mu for mu, _ in result.ratings]
        sigmas = [sigma for _, sigma in result.ratings]
        ax2.barh(range(k), mus, xerr=[3 * s for s in sigmas], color="#55A868", capsize=3)
        ax2.set_yticks(range(k), result.specs)
        ax2.set_xlabel("OpenSkill mu (bars: ±3 sigma)")
        ax2.set_title("ratings")

    return _plot(path, draw, width=11, height=4.5)


def plot_bench(rows: list[dict[str, Any]], path: Path) -> Path:
    def draw(fig: Any) -> None:
        labels = [f"{r['agent']}\n{r['rules']} {r['players']}p\nvs {r['opponent']}" for r in rows]
        ax = fig.add_subplot()
        _bars_with_ci(ax, labels, [r["win_rate"] for r in rows], [r["ci_low"] for r in rows],
                      [r["ci_high"] for r in rows], None, "benchmark: " + ", ".join(dict.fromkeys(r["agent"] for r in rows)))
        ax.scatter(range(len(rows)), [r["fair_share"] for r in rows], marker="_", s=400, color="grey",
                   label="fair share", zorder=3)
        ax.legend(loc="upper right")

    return _plot(path, draw, width=max(7, 1.3 * len(rows)), height=4.5)


__all__ = ["is_summary", "plot_bench", "plot_league", "plot_table", "replace_block", "write_rows"]
