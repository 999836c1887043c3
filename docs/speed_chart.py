"""Draw docs/speed.png, the chart of the Speed page, from the figures of its table.

    python docs/speed_chart.py            # rewrites docs/speed.png (matplotlib: the eval or train extra)

The figures are typed here as the Speed page's table gives them (docs/speed.md; runs of 1, 2 and 6 December 2026 on
the 2-core development machine, each comparison measured in the same process by the command named in
:data:`ROWS`); change both together. The chart is drawn with a fixed style and no date in its metadata,
so the same figures give the same file.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: (what is measured, the command that measured it, c8env's figure, the comparison, its figure); rates per second.
ROWS = [
    ("engine decisions per CPU s, 2 players", "c8env speed engine", 506_387, "OpenSpiel's C++ crazy_eights, same Python loop",
     257_686),
    ("engine decisions per CPU s, 4 players", "c8env speed engine", 468_570, "OpenSpiel, same loop", 249_190),
    ("PettingZoo random loop steps per CPU s, 2 players", "c8env speed env", 49_525, "Shimmy's OpenSpiel crazy_eights",
     5_218),
    ("PettingZoo random loop steps per CPU s, 2 players", "c8env speed env", 49_525, "PettingZoo connect_four_v3", 11_925),
    ("batched engine steps/s, 2p, B=1024, obs + mask", "c8env speed vector", 3_787_458, "the scalar engine's Python loop",
     399_691),
    ("batched engine steps/s, 2p, B=1024, mask only", "c8env speed vector", 6_057_129,
     "OpenSpiel's own C++ random loop", 2_426_159),
    ("batched engine steps/s, 4p, B=1024, mask only", "c8env speed vector", 7_873_838, "OpenSpiel's C++ loop, 4 players",
     2_267_411),
    ("batched engine steps/s, 2p, B=1024, obs + mask, 1 thread", "c8env speed vector --threads 2", 5_148_452,
     "OpenSpiel's C++ loop, same runs", 2_381_289),
    ("c8env eval greedy random, deals/s", "c8env speed eval", 10_000 / 6.1, "the scalar engine in 2 processes",
     10_000 / 60.9),
    ("SB3 main job, training steps/s", "make train (2 full runs)", 5_914, "the previous main job (16 envs, 2 processes)",
     2_629),
]
OUT = Path(__file__).resolve().parent / "speed.png"


def draw(path: Path = OUT) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "svg.hashsalt": "c8env", "font.family": "DejaVu Sans"})
    fig, ax = plt.subplots(figsize=(10, 6.2), dpi=110)
    n = len(ROWS)
    height = 0.38
    for i, (_, _, ours, other, theirs) in enumerate(ROWS):
        y = n - 1 - i
        ax.barh(y + height / 2, ours, height, color="#00897b", label="c8env" if i == 0 else None)
        ax.barh(y - height / 2, theirs, height, color="#b0bec5", label="comparison, same run" if i == 0 else None)
        ax.text(theirs * 1.08, y - height / 2, other, va="center", fontsize=7.5, color="#37474f")
        ax.text(ours * 1.08, y + height / 2, f"{ours:,.0f}  ({ours / theirs:.2f}x)", va="center", fontsize=8,
                color="#004d40", fontweight="bold")
    ax.set_yticks(range(n))
    ax.set_yticklabels([f"{what}\n{command}" for what, command, *_ in reversed(ROWS)], fontsize=7.5)
    ax.set_xscale("log")
    ax.set_xlim(80, 3e8)
    ax.set_xlabel("per second (log scale; higher is faster)")
    ax.set_title("c8env beside the comparison measured in the same run\n(medians of 5 runs; the 2-core development machine, 1-6 December 2026)")
    ax.legend(loc="lower right", frameon=False)
    ax.grid(axis="x", which="major", alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(draw(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
