"""``c8env leaderboard FILES...``: rank benchmark results files into Markdown, CSV and a PNG.

Each file is one agent's scores on a benchmark protocol, written by ``c8env eval --bench NAME
--agent X --out DIR`` (format: :data:`~c8env.tools.results.RESULTS_FORMAT`). Files of
another results format, of different protocols, or of an older version of a protocol c8env ships
are refused with a message saying which. The score of an agent is the mean over the protocol's
cells of win rate / fair share (1.00: as good as an even share).

Exploit results files (``c8env exploit AGENT --out DIR``, format
:data:`~c8env.tools.results.EXPLOIT_FORMAT`) may be given among the files: each adds its agent's
*exploited* figure (the gain in win rate of a best response warm-started from a network and trained
against it, over its start, and its final win rate; a search response's where it won more, marked) as a
column, blank for agents without one; the score and the ranking do not change.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from c8env.agents.catalog import catalog, gain_text
from c8env.episode import MAX_HAND_STEPS
from c8env.tools.argcheck import Parser, int_at_least, writable_dir
from c8env.tools.evaluation.bench import ENV_ID, bench_config, cut_off_note, protocol_identity, win_rate_text
from c8env.tools.evaluation.reports import replace_block
from c8env.tools.results import (
    EXPLOIT_FORMAT,
    RESULTS_FORMAT,
    RESULTS_VERSION,
    best_exploiter,
    check_exploit_results,
    check_exploit_set,
    check_one_file_per_agent,
    gain_over_start,
    is_summary,
)
from c8env.versions import LATEST

#: Where ``--update FILE`` writes the Markdown table: between these two lines of FILE.
START, END = "<!-- leaderboard:start -->", "<!-- leaderboard:end -->"
#: The exploited column's header: its cells are :func:`exploited_text`.
EXPLOITED = "exploited: gain (exploiter's win rate)"
_CELL = ("rules", "players", "opponent")


def _describe(protocol: dict[str, Any]) -> str:
    return f"protocol {protocol['name']!r} v{protocol['version']} (sha256 {protocol['sha256'][:12]})"


def load_results(paths: list[Path]) -> list[dict[str, Any]]:
    """Read results files (folders: every ``*.json`` in them) and check they can be ranked together. Exploit
    results files among them are checked (one setting, one per agent, each of an agent with benchmark
    results) and attached to their agent's results as ``"exploit"``. In a folder, the summaries ``c8env eval
    --out`` writes beside its CSV (``eval.json``, ``league.json``: :func:`~c8env.tools.results.is_summary`)
    are passed over, each named on stderr; a summary named as a file is refused."""
    files = [(p, path.is_dir()) for path in paths for p in (sorted(path.glob("*.json")) if path.is_dir() else [path])]
    if not files:
        raise ValueError("no results files given (folders given hold no .json file)")
    results: list[dict[str, Any]] = []
    exploits: list[dict[str, Any]] = []
    for path, in_folder in files:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"{path}: not a readable JSON file ({err})") from None
        if is_summary(data):
            if not in_folder:
                raise ValueError(f"{path}: the summary table `c8env eval --out` writes, not a results file; give the "
                                 "results files (`c8env eval --bench NAME --agent X --out DIR` writes one per agent) "
                                 "or their folder")
            print(f"c8env leaderboard: passed over {path}: the summary table `c8env eval --out` writes, not a "
                  "results file", file=sys.stderr)
            continue
        if isinstance(data, dict) and data.get("format") == EXPLOIT_FORMAT:
            exploits.append(check_exploit_results(data, path))
            continue
        if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
            raise ValueError(f"{path}: not a c8env benchmark results file (no \"format\": {RESULTS_FORMAT!r}) nor "
                             f"an exploit results file ({EXPLOIT_FORMAT!r}); write one with `c8env eval --bench "
                             "NAME --agent X --out DIR` or `c8env exploit AGENT --out DIR`")
        if data.get("format_version") != RESULTS_VERSION:
            raise ValueError(f"{path}: results format version {data.get('format_version')!r}; this c8env reads "
                             f"version {RESULTS_VERSION}")
        data["path"] = str(path)
        results.append(data)
    if not results and exploits:
        raise ValueError("no benchmark results files given (only exploit results files); the exploited column "
                         "goes beside the benchmark's: give those too")
    if not results:
        raise ValueError("no results files given (the folders given hold only summaries of `c8env eval --out`)")
    first = results[0]
    for data in results[1:]:
        if data["protocol"] != first["protocol"]:
            raise ValueError(f"{data['path']} was scored on {_describe(data['protocol'])}, {first['path']} on "
                             f"{_describe(first['protocol'])}; a leaderboard ranks the results of one protocol: "
                             "rescore with `c8env eval --bench NAME --agent X --out DIR`")
    try:
        current = protocol_identity(bench_config(first["protocol"]["name"]))
    except ValueError:
        current = None  # a protocol of the user's own (a YAML path): nothing shipped to compare with
    if current is not None and current != first["protocol"]:
        raise ValueError(f"{first['path']} was scored on {_describe(first['protocol'])}, but this c8env ships "
                         f"{_describe(current)}; rescore with `c8env eval --bench {current['name']} --agent X "
                         "--out DIR`")
    check_one_file_per_agent(results, "results")
    cells = [tuple(c[k] for k in _CELL) for c in first["cells"]]
    for data in results[1:]:
        if [tuple(c[k] for k in _CELL) for c in data["cells"]] != cells:
            raise ValueError(f"{data['path']}: its cells differ from {first['path']}'s although the protocol is the same")
    if exploits:
        check_exploit_set(exploits)
        by_agent = {data["agent"]: data for data in results}
        for exploit in exploits:
            if exploit["agent"] not in by_agent:
                raise ValueError(f"{exploit['path']}: exploit results of agent {exploit['agent']!r}, which has no "
                                 f"benchmark results file; allowed: {', '.join(sorted(by_agent))}")
            by_agent[exploit["agent"]]["exploit"] = exploit
    return results


def ranked(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per agent, best score first: agent, score and each cell's figures."""
    rows = []
    for data in results:
        cells = data["cells"]
        score = float(np.mean([c["win_rate"] / c["fair_share"] for c in cells]))
        rows.append({"agent": data["agent"], "score": round(score, 3), "cells": cells, "seed": data["seed"],
                     "c8env_version": data["c8env_version"], "env_id": data["env_id"],
                     "obs_size": data.get("obs_size"), "exploited": exploited(data.get("exploit"))})
    rows.sort(key=lambda r: (-r["score"], r["agent"]))
    return rows


def exploited(exploit: dict[str, Any] | None) -> dict[str, Any] | None:
    """An agent's exploited figure from its exploit results (None without): the best exploiter's
    (:func:`c8env.tools.results.best_exploiter`: the trained one, or a search response that won more) gain over the
    start, its win rate, interval and hands, which one it is (``by``), the start (win rate, interval, the network it
    started from) and the setting."""
    if exploit is None:
        return None
    by, best = best_exploiter(exploit)
    start = exploit["start"]
    return {key: best[key] for key in ("win_rate", "ci_low", "ci_high", "hands", "fair_share")} | {
        "gain": gain_over_start(exploit, best), "by": by, "start_win_rate": start["win_rate"],
        "start_ci_low": start["ci_low"], "start_ci_high": start["ci_high"], "start_policy": start["policy"],
        "players": exploit["players"], "rules": exploit["rules"], "steps": exploit["budget"]["steps"],
        "seed": exploit["seed"]}


def exploited_text(figure: dict[str, Any] | None) -> str:
    """The exploited column's cell: the gain in points of win rate and the best exploiter's win rate, ``+4.1
    (67.4%)``, ``+5.4 (70.1%, search response)`` where a search response won more than the trained exploiter; blank
    without a figure."""
    return "" if figure is None else gain_text(figure["gain"], figure["win_rate"], figure["by"])


def role_text(agent: str) -> str:
    """What the catalog says an agent was made for and its role (``standard 2p: rollouts of expert-strong``, with
    ``recommended`` where a setting recommends it); blank for an agent outside the catalog."""
    item = catalog().entries.get(agent)
    if item is None:
        return ""
    made_for = "any" if item.players is None else f"{item.rules} {'/'.join(map(str, item.players))}p"
    best = [f"{s.rules} {s.players}p" for s in catalog().settings if s.recommended == agent]
    return f"{made_for}: {item.role}" + (f" (**recommended**: {', '.join(best)})" if best else "")


def cell_label(cell: dict[str, Any]) -> str:
    return f"{cell['rules']} {cell['players']}p vs {cell['opponent']}"


def leaderboard_markdown(rows: list[dict[str, Any]], top: int | None = None) -> str:
    """The Markdown table of :func:`ranked` rows (or of :func:`~c8env.tools.evaluation.bench.run_bench` rows
    of several agents); an exploited column after the score (:data:`EXPLOITED`, cells :func:`exploited_text`) when
    any row has an exploited figure; a cell with hands cut off at the move cap says how many (``64.4% (3 cut
    off)``, a note under the table). With ``top``, only the first ``top`` rows (the columns stay those of the whole
    table)."""
    if top is not None and top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    if rows and "cells" not in rows[0]:
        rows = ranked(_group_bench_rows(rows))
    cells = rows[0]["cells"]
    extra = any(row.get("exploited") for row in rows)
    lines = ["| rank | agent | made for: role | score | " + (f"{EXPLOITED} | " if extra else "")
             + " | ".join(cell_label(c) for c in cells) + " |", "|" + "---|" * (4 + extra + len(cells))]
    for rank, row in enumerate(rows[:top], start=1):
        values = " | ".join(win_rate_text(c) for c in row["cells"])
        column = f"{exploited_text(row.get('exploited'))} | " if extra else ""
        lines.append(f"| {rank} | {row['agent']} | {role_text(row['agent'])} | {row['score']:.2f} | {column}{values} |")
    shown = [cell for row in rows[:top] for cell in row["cells"]]
    return "\n".join(lines) + cut_off_note(shown) + "\n\n" + provenance(rows[:top])


def provenance(rows: list[dict[str, Any]]) -> str:
    """What the rows were measured on, as their results files record it: the env id (its version, and so the
    observation the agents were given) and the c8env version, one line per distinct pair."""
    groups: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        groups.setdefault((row["env_id"], row["c8env_version"]), []).append(row["agent"])
    if len(groups) == 1:
        (env_id, version), = groups
        return f"Measured on `{env_id}` with c8env {version}."
    return "Measured on: " + "; ".join(f"`{env_id}` with c8env {version} ({', '.join(agents)})"
                                       for (env_id, version), agents in groups.items()) + "."


def _group_bench_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    from c8env import __version__

    return [{"agent": a, "seed": None, "c8env_version": __version__, "env_id": ENV_ID, "obs_size": LATEST.obs_size,
             "cells": [{k: v for k, v in r.items() if k != "agent"} for r in rows if r["agent"] == a]} for a in agents]


def write_csv(rows: list[dict[str, Any]], path: Path) -> Path:
    """One line per (agent, cell): rank, agent, score, the cell and its figures with the 95% interval and its hands
    cut off at the move cap (``truncated``), and the agent's exploited figure (blank without one): the exploiter's
    final win rate with its interval, its gain and its start win rate."""
    import csv

    fields = ["rank", "agent", "score", "rules", "players", "opponent", "hands", "wins", "win_rate", "ci_low",
              "ci_high", "fair_share", "points_per_hand", "truncated", "illegal", "env_id", "obs_size", "c8env_version",
              "exploited", "exploited_ci_low", "exploited_ci_high", "exploited_gain", "exploited_start"]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for rank, row in enumerate(rows, start=1):
            figure = row.get("exploited") or {}
            exploit = {"exploited": figure.get("win_rate"), "exploited_ci_low": figure.get("ci_low"),
                       "exploited_ci_high": figure.get("ci_high"), "exploited_gain": figure.get("gain"),
                       "exploited_start": figure.get("start_win_rate")}
            for cell in row["cells"]:
                writer.writerow({"rank": rank, "agent": row["agent"], "score": row["score"], **cell, **exploit,
                                 **{key: row[key] for key in ("env_id", "obs_size", "c8env_version")}})
    return path


def plot_leaderboard(rows: list[dict[str, Any]], path: Path) -> Path:
    """Scores as bars beside a heat map of every cell's win rate / fair share (numbers: win rates, and under them
    the hands cut off at the move cap where a cell has any)."""
    from c8env.tools.evaluation.reports import _plot

    agents = [r["agent"] for r in rows]
    labels = [cell_label(c) for c in rows[0]["cells"]]
    ratio = np.array([[c["win_rate"] / c["fair_share"] for c in r["cells"]] for r in rows])

    def draw(fig: Any) -> None:
        grid = fig.add_gridspec(1, 2, width_ratios=[1, 3.5])
        bars, heat = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        y = np.arange(len(rows))
        bars.barh(y, [r["score"] for r in rows], color="#4C72B0")
        for i, row in enumerate(rows):
            bars.text(row["score"], i, f" {row['score']:.2f}", va="center", fontsize=8)
        bars.axvline(1.0, color="grey", linestyle="--", linewidth=1)
        bars.set_xlim(0, 1.2 * max(r["score"] for r in rows))
        bars.set_yticks(y, agents)
        bars.invert_yaxis()
        bars.set_xlabel("score (1 = fair share)")
        image = heat.imshow(ratio, cmap="RdYlGn", vmin=0, vmax=2, aspect="auto")
        for i, row in enumerate(rows):
            for j, cell in enumerate(row["cells"]):
                cut = cell.get("truncated", 0)
                heat.text(j, i - 0.12 * bool(cut), f"{cell['win_rate']:.0%}", ha="center", va="center", fontsize=7)
                if cut:
                    heat.text(j, i + 0.22, f"{cut:,} cut off", ha="center", va="center", fontsize=5.5, color="#8B0000")
        heat.set_xticks(range(len(labels)), labels, fontsize=7, rotation=25, ha="right")
        heat.set_yticks(y, [""] * len(rows))
        heat.set_title("win rate per cell (colour: win rate / fair share)"
                       + (f"; cut off: hands stopped at {MAX_HAND_STEPS:,} moves" if any(
                           c.get("truncated", 0) for r in rows for c in r["cells"]) else ""))
        fig.colorbar(image, ax=heat, fraction=0.03)

    return _plot(path, draw, width=max(9, 1.1 * len(labels) + 4), height=2.4 + 0.42 * len(rows))


def update_block(path: Path, markdown: str) -> bool:
    """Put ``markdown`` between the :data:`START` and :data:`END` lines of ``path``; True when it changed."""
    return replace_block(path, markdown, START, END)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="c8env leaderboard", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE",
                        help="results files, or folders of them; exploit results files (c8env exploit) among them "
                             "add the exploited column")
    parser.add_argument("--out", type=writable_dir, help="write leaderboard.md, leaderboard.csv and leaderboard.png here")
    parser.add_argument("--update", type=Path, action="append", default=[], metavar="MARKDOWN",
                        help=f"rewrite the table between the {START} and {END} lines of this file (repeatable)")
    parser.add_argument("--top", type=int_at_least(1), metavar="N",
                        help="--update writes only the N best rows (--out and the printed table keep them all)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.top is not None and not args.update:
        parser.error("--top goes with --update")
    try:
        rows = ranked(load_results(args.files))
        text = leaderboard_markdown(rows)
        print(text)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "leaderboard.md").write_text(text + "\n")
            write_csv(rows, args.out / "leaderboard.csv")
            plot_leaderboard(rows, args.out / "leaderboard.png")
        for path in args.update:
            update_block(path, leaderboard_markdown(rows, top=args.top))
    except (OSError, ValueError) as err:
        parser.exit(2, f"c8env leaderboard: error: {err}\n")


if __name__ == "__main__":
    main()


__all__ = ["END", "EXPLOITED", "START", "build_parser", "cell_label", "exploited", "exploited_text",
           "leaderboard_markdown", "load_results", "main", "plot_leaderboard", "ranked", "update_block", "write_csv"]
