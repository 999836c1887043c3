"""``c8env eval``: evaluations, leagues and benchmarks from the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys

from c8env.tools.argcheck import Parser, check_rules_arg, int_at_least, int_between, writable_dir
from c8env.tools.evaluation.bench import (
    bench_agent_name,
    bench_markdown,
    bench_results,
    results_file_name,
    run_bench,
)
from c8env.tools.evaluation.deals import ENGINES
from c8env.tools.evaluation.leaderboard import leaderboard_markdown
from c8env.tools.evaluation.reports import plot_bench, plot_league, plot_table, write_rows
from c8env.tools.evaluation.runner import AgentEntry, evaluate, league, lineup_name, one_against


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (the docs' commands are checked against it)."""
    parser = Parser(
        prog="c8env eval",
        description="Evaluate agents with duplicate deals and 95% Wilson intervals. Agent specs: random, greedy, "
                    "expert[:simulations=N,time_ms=T,policy=NAME,top=K,prior=W,confident=P,"
                    "rollouts=greedy|policy|NAME], a shipped policy name, a policy file (.npz, .onnx, an SB3 .zip), or "
                    "package.module:name (an agent object with act(observation) -> int, or a factory called with "
                    "rules, num_players, seed; the current folder is importable). An illegal move ends its hand as "
                    "that agent's loss and is counted.",
    )
    parser.add_argument("agents", nargs="*",
                        help="two specs A B: A in one seat and B in every other, as the benchmark seats them; or one "
                             "spec per seat (--players of them); the deals rotate the lineup so each plays every seat")
    parser.add_argument("--league", action="store_true", help="round robin over the agents, with OpenSkill ratings")
    parser.add_argument("--bench", metavar="NAME_OR_YAML", help="score --agent on a benchmark protocol")
    parser.add_argument("--agent", action="append", help="an agent to score with --bench (repeat for a leaderboard)")
    parser.add_argument("--players", type=int_between(2, 7), default=2)
    parser.add_argument("--rules", default="standard", help="preset name or YAML path")
    parser.add_argument("--deals", type=int_at_least(1), default=1000, help="seeded deals, each played once per rotation")
    parser.add_argument("--seed", type=int_at_least(0), default=0)
    parser.add_argument("--workers", type=int_at_least(1), default=None,
                        help="processes of the scalar engine (default: every core); the batched engine runs in one")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="scalar: one hand at a time, any agent; batched: many hands at once (random, greedy, "
                             "policy files), same results; auto (default): batched when every agent allows it")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="spread the scalar engine's deals over a Ray cluster (the rllib extra): 'local' starts one "
                             "of --workers CPUs, 'auto' joins the running one, or a cluster address; the same table")
    parser.add_argument("--out", type=writable_dir, help="folder for CSV, JSON and PNG outputs (new or existing); "
                        "with --bench the JSON is one results file per agent, for `c8env leaderboard DIR`")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def seating(specs: list[str], num_players: int, rules: str) -> tuple[list[AgentEntry], list[str] | None]:
    """The lineup ``c8env eval A B ...`` plays and its names (None: :func:`evaluate`'s own). Two specs at more than
    2 players: A in one seat, B in each other (:func:`one_against`, as the benchmark); ``num_players`` specs: one
    per seat, as listed; any other count is refused (``ValueError``)."""
    if len(specs) == num_players:
        return specs, None
    if len(specs) == 2:
        first, second = (lineup_name(spec, rules, num_players) for spec in specs)
        return one_against(specs[0], specs[1], num_players, first, second)
    allowed = "2 (one per seat)" if num_players == 2 else (f"2 (the first in one seat, the second in the other "
                                                           f"{num_players - 1}) or {num_players} (one per seat)")
    raise ValueError(f"{len(specs)} agent spec(s) for --players {num_players}; allowed: {allowed}")


def main(argv: list[str] | None = None) -> None:
    """``c8env eval`` / ``python -m c8env.tools.evaluation``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    progress = not args.no_progress
    if os.getcwd() not in sys.path:  # package.module:name specs from the current folder, as `python -m` would
        sys.path.insert(0, os.getcwd())
    if not args.bench:
        check_rules_arg(parser, args.rules)
    meta = {"players": args.players, "rules": args.rules, "deals": args.deals, "seed": args.seed}
    try:
        if args.bench:
            if not args.agent or args.agents:
                parser.error("--bench needs --agent SPEC and no positional agents")
            names = [bench_agent_name(args.bench, agent) for agent in args.agent]
            files = [results_file_name(name) for name in names]
            if args.out and len(set(files)) < len(files):
                parser.error(f"--agent {args.agent}: each agent's results file is named after the agent, and "
                             f"{sorted({f for f in files if files.count(f) > 1})} would be written twice")
            per_agent = [run_bench(args.bench, agent, args.seed, args.workers, progress, args.engine, name, args.ray)
                         for agent, name in zip(args.agent, names, strict=True)]
            rows = [row for agent_rows in per_agent for row in agent_rows]
            text = bench_markdown(rows)
            if len(args.agent) > 1:
                text += "\n\nLeaderboard (score: mean of win rate / fair share)\n\n" + leaderboard_markdown(rows)
            stem, meta = "bench", None  # the JSON is the results files: nothing else for `c8env leaderboard DIR`
            plot = lambda path: plot_bench(rows, path)  # noqa: E731
        elif args.league:
            result = league(args.agents, args.players, args.rules, args.deals, args.seed, args.workers, progress,
                            args.engine, ray=args.ray)
            stem, text, rows = "league", result.markdown(), result.rows()
            plot = lambda path: plot_league(result, path)  # noqa: E731
        else:
            if not args.agents:
                parser.error("name the agents to evaluate, e.g. `c8env eval greedy random`")
            lineup, names = seating(args.agents, args.players, args.rules)
            table = evaluate(lineup, args.players, args.rules, args.deals, args.seed, args.workers, progress,
                             args.engine, names=names, ray=args.ray)
            stem, text, rows = "eval", table.markdown(), table.rows()
            plot = lambda path: plot_table(table, path)  # noqa: E731
        print(text)
        if args.out:
            paths = write_rows(args.out, stem, rows, meta)
            if args.bench:
                for agent_rows in per_agent:
                    path = args.out / results_file_name(agent_rows[0]["agent"])
                    path.write_text(json.dumps(bench_results(args.bench, agent_rows, args.seed), indent=1) + "\n")
                    paths.append(path)
            paths.append(plot(args.out / f"{stem}.png"))
            print("wrote " + ", ".join(map(str, paths)))
    except ValueError as err:
        parser.exit(2, f"c8env eval: error: {err}\n")


if __name__ == "__main__":
    main()
