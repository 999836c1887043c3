"""The benchmark protocol: a YAML list of (rules, players, deals) cells and opponents, an agent scored on each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from c8env.tools.evaluation.runner import evaluate

# configs/bench/ of the repository, shipped inside the package as c8env/bench_configs/ (pyproject.toml)
_PACKAGE_BENCH = Path(__file__).parents[2] / "bench_configs"
_REPO_BENCH = Path(__file__).parents[3] / "configs" / "bench"


def bench_config(name_or_path: str) -> dict[str, Any]:
    """A benchmark protocol: a name under ``configs/bench/`` (shipped in the package) or a YAML path."""
    import yaml

    path = Path(name_or_path)
    if not path.suffix:
        folder = _PACKAGE_BENCH if _PACKAGE_BENCH.is_dir() else _REPO_BENCH
        path = folder / f"{name_or_path}.yaml"
        if not path.is_file():
            names = sorted(p.stem for p in folder.glob("*.yaml"))
            raise ValueError(f"unknown benchmark {name_or_path!r}; allowed: {', '.join(names)} or a YAML path")
    elif not path.is_file():
        raise ValueError(f"benchmark file {name_or_path!r} does not exist")
    config = yaml.safe_load(path.read_text())
    if not isinstance(config, dict) or not isinstance(config.get("entries"), list) or not config.get("opponents"):
        raise ValueError(f"benchmark {str(path)!r} must map 'opponents' (agent specs) and 'entries' "
                         "(rules, players, deals)")
    for entry in config["entries"]:
        if not isinstance(entry, dict) or set(entry) - {"rules", "players", "deals"} or "players" not in entry:
            raise ValueError(f"benchmark entry {entry!r} is invalid; allowed keys: rules, players, deals")
    return config


def run_bench(name_or_path: str, agent: str, seed: int = 0, workers: int | None = None,
              progress: bool = False, engine: str = "auto") -> list[dict[str, Any]]:
    """Score ``agent`` on a benchmark protocol: one row per (entry, opponent); the agent takes one
    seat, the opponent the others."""
    config = bench_config(name_or_path)
    rows = []
    for entry in config["entries"]:
        players, rules = entry["players"], entry.get("rules", "standard")
        for opponent in config["opponents"]:
            spec = opponent if isinstance(opponent, str) else opponent["spec"]
            deals = entry.get("deals", 500) if isinstance(opponent, str) else opponent.get("deals", entry.get("deals"))
            table = evaluate([agent] + [spec] * (players - 1), players, rules, deals, seed, workers, progress, engine)
            me = table.stats[0]
            low, high = me.interval
            rows.append({"agent": agent, "rules": rules, "players": players, "opponent": spec,
                         "hands": me.hands, "win_rate": round(me.win_rate, 4), "ci_low": round(low, 4),
                         "ci_high": round(high, 4), "points_per_hand": round(me.points / max(1, me.hands), 3),
                         "fair_share": round(1 / players, 4)})
    return rows


def leaderboard_markdown(rows: list[dict[str, Any]]) -> str:
    """One line per agent: its win rate in every (rules, players, opponent) cell of a benchmark, and
    its score, the mean of win rate / fair share (1.0 = as good as an even share)."""
    cells = list(dict.fromkeys((r["rules"], r["players"], r["opponent"]) for r in rows))
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    by_key = {(r["agent"], r["rules"], r["players"], r["opponent"]): r for r in rows}
    score = {a: float(np.mean([by_key[(a, *c)]["win_rate"] / by_key[(a, *c)]["fair_share"] for c in cells]))
             for a in agents}
    head = "| rank | agent | score | " + " | ".join(f"{rules} {players}p vs {opp}" for rules, players, opp in cells) + " |"
    lines = [head, "|" + "---|" * (3 + len(cells))]
    for rank, agent in enumerate(sorted(agents, key=lambda a: -score[a]), start=1):
        values = " | ".join(f"{by_key[(agent, *c)]['win_rate']:.1%}" for c in cells)
        lines.append(f"| {rank} | {agent} | {score[agent]:.2f} | {values} |")
    return "\n".join(lines)


def bench_markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| agent | rules | players | opponent | hands | win rate | 95% CI | fair share | points/hand |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']} | {r['rules']} | {r['players']} | {r['opponent']} | {r['hands']} | "
                     f"{r['win_rate']:.1%} | [{r['ci_low']:.1%}, {r['ci_high']:.1%}] | {r['fair_share']:.0%} | "
                     f"{r['points_per_hand']:+.2f} |")
    return "\n".join(lines)


__all__ = ["bench_config", "bench_markdown", "leaderboard_markdown", "run_bench"]
