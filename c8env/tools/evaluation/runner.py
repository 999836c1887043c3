"""Running evaluations: :func:`evaluate` (one lineup over duplicate deals) and :func:`league` (a round robin)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from c8env.agents import batch_mode, load
from c8env.engine import check_num_players, check_seed
from c8env.rules import RuleSet, load_rules
from c8env.tools.evaluation.deals import CHUNK, ENGINES, play_deals, play_deals_batched
from c8env.tools.evaluation.stats import League, Table


def progress_counter(total: int, enabled: bool) -> Callable[[int], None]:
    """A progress bar (tqdm when installed, else a plain counter on stderr)."""
    if not enabled:
        return lambda done: None
    try:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="deal", file=sys.stderr, leave=False)
        return lambda done: (bar.update(done), bar.close() if bar.n >= total else None)
    except ImportError:
        counter = {"n": 0}

        def step(done: int) -> None:
            counter["n"] += done
            print(f"\r{counter['n']}/{total} deals", end="\n" if counter["n"] >= total else "", file=sys.stderr)

        return step


def evaluate(specs: Sequence[str], num_players: int = 2, rules: str | dict | RuleSet = "standard", deals: int = 1000,
             seed: int = 0, workers: int | None = None, progress: bool = False, engine: str = "auto") -> Table:
    """Play ``deals`` seeded deals, each once per rotation of the lineup through the seats.

    ``specs`` holds one agent spec per seat, or fewer: a lineup shorter than the player
    count is repeated around the table (``["greedy", "random"]`` at 4 players seats
    greedy, random, greedy, random). ``engine``: ``scalar`` (``workers`` processes,
    default every core), ``batched`` (one process; only for agents with a
    :func:`c8env.agents.batch_mode`: ``random``, ``greedy`` and policy files) or ``auto`` (batched when every agent allows it); the same records.
    """
    num_players = check_num_players(num_players)
    rules = load_rules(rules)
    if isinstance(specs, (str, Path)):
        raise TypeError(f"specs={specs!r} is invalid; allowed: a list of agent specs, one per seat (e.g. ['greedy', 'random'])")
    specs = list(specs)
    if not specs or len(specs) > num_players:
        raise ValueError(f"evaluate needs 1 to {num_players} agent specs for {num_players} players, got {specs!r}")
    if not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals={deals!r} is invalid; allowed: an int >= 1")
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is invalid; allowed: {', '.join(ENGINES)}")
    # fail fast, naming the bad spec; the batched engine plays these agents (a policy file is loaded once)
    agents = [load(spec, rules=rules, num_players=num_players, seed=i) for i, spec in enumerate(specs)]
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise ValueError(f"workers={workers!r} is invalid; allowed: None (every core) or an int >= 1")
    check_seed(seed)
    scalar_only = [spec for spec, agent in zip(specs, agents, strict=True) if batch_mode(agent) is None]
    if engine == "batched" and scalar_only:
        raise ValueError(f"engine='batched' cannot play {', '.join(map(repr, scalar_only))}; allowed: random, "
                         "greedy and policy files (or engine='scalar' / 'auto')")
    update = progress_counter(deals, progress)
    start = time.perf_counter()
    if engine == "batched" or (engine == "auto" and not scalar_only):
        records = play_deals_batched(agents, rules, num_players, seed, deals, update)
        return Table(specs, num_players, rules, deals, seed, records, time.perf_counter() - start)
    workers = workers or os.cpu_count() or 1
    chunks = [list(range(first, min(first + CHUNK, deals))) for first in range(0, deals, CHUNK)]
    records = []
    if workers == 1:
        for chunk in chunks:
            records.extend(play_deals(specs, rules, num_players, seed, chunk))
            update(len(chunk))
    else:
        with ProcessPoolExecutor(workers) as pool:
            futures = [pool.submit(play_deals, specs, rules, num_players, seed, chunk) for chunk in chunks]
            for future, chunk in zip(futures, chunks, strict=True):
                records.extend(future.result())
                update(len(chunk))
    return Table(specs, num_players, rules, deals, seed, records, time.perf_counter() - start)


def league(specs: Sequence[str], num_players: int = 2, rules: str | dict | RuleSet = "standard", deals: int = 500,
           seed: int = 0, workers: int | None = None, progress: bool = False, engine: str = "auto") -> League:
    """Round robin over ``specs`` (each pair head to head, lineup repeated around larger tables) with
    OpenSkill (Plackett-Luce) ratings updated hand by hand in a fixed order."""
    from openskill.models import PlackettLuce

    specs = list(specs)
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ValueError(f"a league needs at least 2 distinct agent specs, got {specs!r}")
    tables = {}
    for i in range(len(specs)):
        for j in range(i + 1, len(specs)):
            tables[(i, j)] = evaluate([specs[i], specs[j]], num_players, rules, deals, seed, workers, progress, engine)
    model = PlackettLuce()
    ratings = [model.rating(name=spec) for spec in specs]
    for (i, j), table in tables.items():
        for record in table.records:
            ranks = [1, 1] if record.winner is None else [1 + (record.winner != 0), 1 + (record.winner != 1)]
            [[ratings[i]], [ratings[j]]] = model.rate([[ratings[i]], [ratings[j]]], ranks=ranks)
    return League(specs, tables, [(r.mu, r.sigma) for r in ratings])


__all__ = ["evaluate", "league", "progress_counter"]
