"""The benchmark protocol: a YAML list of (rules, players, deals) cells and opponents, an agent scored on each.

:func:`run_bench` scores one agent; :func:`bench_results` makes its versioned results file (see
:data:`c8env.tools.results.RESULTS_FORMAT`), which :mod:`c8env.tools.evaluation.leaderboard` ranks with others of
the same protocol.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from c8env.episode import MAX_HAND_STEPS
from c8env.rules import read_yaml
from c8env.tools.evaluation.runner import AgentEntry, evaluate, lineup_name, one_against, ray_session
from c8env.tools.results import RESULTS_FORMAT, RESULTS_VERSION
from c8env.versions import LATEST

# configs/bench/ of the repository, shipped inside the package as c8env/bench_configs/ (pyproject.toml)
_PACKAGE_BENCH = Path(__file__).parents[2] / "bench_configs"
_REPO_BENCH = Path(__file__).parents[3] / "configs" / "bench"
#: The env whose rules and observations the benchmark plays: the newest version (its hands are those of
#: ``c8env.env``; a model of an older version's observation reads its first entries). Files written before c8env
#: 0.3.0.dev0 say ``c8env/crazy_eights-v1`` and have no ``obs_size``: their agents were given the observation of
#: the code they ran on.
ENV_ID = f"c8env/crazy_eights-v{LATEST.number}"
_ENTRY_KEYS = {"rules", "players", "deals"}


def bench_config(name_or_path: str) -> dict[str, Any]:
    """A benchmark protocol: a name under ``configs/bench/`` (shipped in the package) or a YAML path."""
    path = Path(name_or_path)
    if not path.suffix:
        folder = _PACKAGE_BENCH if _PACKAGE_BENCH.is_dir() else _REPO_BENCH
        path = folder / f"{name_or_path}.yaml"
        if not path.is_file():
            names = sorted(p.stem for p in folder.glob("*.yaml"))
            raise ValueError(f"unknown benchmark {name_or_path!r}; allowed: {', '.join(names)} or a YAML path")
    elif not path.is_file():
        raise ValueError(f"benchmark file {name_or_path!r} does not exist")
    config = read_yaml(path, "benchmark")
    if not isinstance(config, dict) or not isinstance(config.get("entries"), list) or not config.get("opponents"):
        raise ValueError(f"benchmark {str(path)!r} must map 'opponents' (agent specs) and 'entries' "
                         "(rules, players, deals)")
    unknown = sorted(set(config) - {"name", "version", "opponents", "entries"})
    if unknown:
        raise ValueError(f"benchmark {str(path)!r}: unknown key(s) {unknown}; allowed: name, version, opponents, entries")
    for entry in config["entries"]:
        if not isinstance(entry, dict) or set(entry) - _ENTRY_KEYS or "players" not in entry:
            raise ValueError(f"benchmark entry {entry!r} is invalid; allowed keys: rules, players, deals")
    config.setdefault("name", path.stem)
    config.setdefault("version", 1)
    return config


def protocol_identity(config: dict[str, Any]) -> dict[str, Any]:
    """Name, version and content hash of a protocol (its parsed content and the hand cut-off, so comments
    and layout do not count, a changed cell or cut-off does)."""
    content = json.dumps({"config": config, "max_hand_steps": MAX_HAND_STEPS}, sort_keys=True)
    return {"name": config["name"], "version": config["version"],
            "sha256": hashlib.sha256(content.encode()).hexdigest()}


def run_bench(name_or_path: str, agent: AgentEntry, seed: int = 0, workers: int | None = None,
              progress: bool = False, engine: str = "auto", name: str | None = None,
              ray: str | None = None) -> list[dict[str, Any]]:
    """Score ``agent`` (a spec, an agent object or a factory, as :func:`evaluate` takes) on a benchmark
    protocol: one row per (entry, opponent); the agent takes one seat, the opponent the others. ``name``:
    how the rows name the agent (default: :func:`bench_agent_name`); ``ray``: as :func:`evaluate`'s."""
    config = bench_config(name_or_path)
    name = bench_agent_name(name_or_path, agent) if name is None else name
    rows = []
    with ray_session(ray, workers):
        for entry in config["entries"]:
            players, rules = entry["players"], entry.get("rules", "standard")
            for opponent in config["opponents"]:
                spec = opponent if isinstance(opponent, str) else opponent["spec"]
                deals = entry.get("deals", 500) if isinstance(opponent, str) else opponent.get("deals", entry.get("deals"))
                lineup, names = one_against(agent, spec, players, name, spec)
                table = evaluate(lineup, players, rules, deals, seed, workers, progress, engine, names=names, ray=ray)
                me = table.stats[0]
                low, high = me.interval
                rows.append({"agent": name, "rules": rules, "players": players, "opponent": spec, "deals": deals,
                             "hands": me.hands, "wins": me.wins, "win_rate": round(me.win_rate, 4),
                             "ci_low": round(low, 4), "ci_high": round(high, 4), "points": me.points,
                             "points_per_hand": round(me.points / max(1, me.hands), 3),
                             "truncated": table.truncated, "illegal": me.illegal, "fair_share": round(1 / players, 4)})
    return rows


def bench_agent_name(name_or_path: str, agent: AgentEntry) -> str:
    """How a benchmark's rows and results file name ``agent``: :func:`~c8env.tools.evaluation.runner.lineup_name`
    (a ``package.module:name`` spec: its agent's ``name``, loaded for the protocol's first cell)."""
    first = bench_config(name_or_path)["entries"][0]
    return lineup_name(agent, first.get("rules", "standard"), first["players"])


def bench_results(name_or_path: str, rows: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """The versioned results file of one agent's :func:`run_bench` rows."""
    from c8env import __version__

    agents = {row["agent"] for row in rows}
    if len(agents) != 1:
        raise ValueError(f"a results file holds one agent's rows, got {sorted(agents)}")
    return {"format": RESULTS_FORMAT, "format_version": RESULTS_VERSION,
            "protocol": protocol_identity(bench_config(name_or_path)), "c8env_version": __version__,
            "env_id": ENV_ID, "obs_size": LATEST.obs_size, "max_hand_steps": MAX_HAND_STEPS, "seed": seed,
            "agent": agents.pop(),
            "cells": [{key: value for key, value in row.items() if key != "agent"} for row in rows]}


def results_file_name(agent: str) -> str:
    """A file name for an agent's results (its name with every character outside ``[A-Za-z0-9_.=-]`` as ``_``)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_.=-") else "_" for c in agent) + ".json"


def bench_markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| agent | rules | players | opponent | hands | win rate | 95% CI | fair share | points/hand |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']} | {r['rules']} | {r['players']} | {r['opponent']} | {r['hands']} | "
                     f"{win_rate_text(r)} | [{r['ci_low']:.1%}, {r['ci_high']:.1%}] | {r['fair_share']:.0%} | "
                     f"{r['points_per_hand']:+.2f} |")
    return "\n".join(lines) + cut_off_note(rows)


def win_rate_text(cell: dict[str, Any]) -> str:
    """A cell's win rate, with its hands cut off at the move cap where there are any: ``64.4% (3 cut off)``."""
    cut = cell.get("truncated", 0)
    return f"{cell['win_rate']:.1%}" + (f" ({cut:,} cut off)" if cut else "")


def cut_off_note(cells: list[dict[str, Any]]) -> str:
    """The line under a table that says what ``cut off`` means, when a cell has any (else nothing)."""
    if not any(cell.get("truncated", 0) for cell in cells):
        return ""
    return (f"\n\n(N cut off): N of the cell's hands were stopped at {MAX_HAND_STEPS:,} moves with no winner; they "
            "count as hands the agent did not win.")


__all__ = ["ENV_ID", "RESULTS_FORMAT", "RESULTS_VERSION", "bench_agent_name", "bench_config", "bench_markdown",
           "bench_results", "cut_off_note", "protocol_identity", "results_file_name", "run_bench", "win_rate_text"]
