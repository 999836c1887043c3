"""Evaluate agents against each other: duplicate deals, win rates with Wilson intervals.

Each seeded deal is replayed once per rotation of the lineup through the seats, so
every agent plays every hand of every deal; luck of the cards cancels out. The same
seed gives the same table whatever the number of worker processes.

Two engines play the hands, with identical results (every :class:`HandRecord`): the
scalar engine, one hand at a time in ``workers`` processes, for every agent; and the
batched engine (:mod:`c8env.vector`, in one process), which plays ``random``,
``greedy`` and policy files as kernels over many hands at once, several times
faster. ``engine="auto"`` (the default) takes the batched engine when every agent of
the lineup has a batched form, else the scalar one.

One module per concern: :mod:`~c8env.tools.evaluation.deals` (playing the hands, both
engines), :mod:`~c8env.tools.evaluation.stats` (intervals and tables),
:mod:`~c8env.tools.evaluation.runner` (:func:`evaluate`, :func:`league`),
:mod:`~c8env.tools.evaluation.bench` (the benchmark protocol and its results files),
:mod:`~c8env.tools.evaluation.leaderboard` (``c8env leaderboard``: results files ranked),
:mod:`~c8env.tools.evaluation.reports` (CSV, JSON, plots) and
:mod:`~c8env.tools.evaluation.cli` (``c8env eval``).

Programmatic use::

    from c8env.tools.evaluation import evaluate
    table = evaluate(["greedy", "random"], num_players=2, rules="standard", deals=1000, seed=0)
    print(table.markdown())
"""

from __future__ import annotations

from c8env.tools.evaluation.bench import bench_config, bench_markdown, bench_results, run_bench
from c8env.tools.evaluation.cli import build_parser, main
from c8env.tools.evaluation.deals import BATCH, ENGINES, AgentError, HandRecord, IllegalMove, play_deal
from c8env.tools.evaluation.leaderboard import leaderboard_markdown, load_results, ranked
from c8env.tools.evaluation.reports import plot_bench, plot_league, plot_table, write_rows
from c8env.tools.evaluation.runner import evaluate, league
from c8env.tools.evaluation.stats import AgentStats, League, Table, wilson_interval

__all__ = ["BATCH", "ENGINES", "AgentError", "AgentStats", "HandRecord", "League", "Table", "bench_config",
           "bench_markdown", "bench_results", "IllegalMove", "load_results", "ranked", "build_parser", "evaluate", "leaderboard_markdown", "league", "main", "play_deal",
           "plot_bench", "plot_league", "plot_table", "run_bench", "wilson_interval", "write_rows"]
