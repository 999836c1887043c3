"""Running evaluations: :func:`evaluate` (one lineup over duplicate deals) and :func:`league` (a round robin)."""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from c8env.agents import BUILTIN, Agent, agent_name, batch_mode, load
from c8env.engine import check_num_players, check_seed
from c8env.rules import RuleSet, load_rules
from c8env.tools.evaluation.deals import CHUNK, ENGINES, HandRecord, play_deals, play_deals_batched
from c8env.tools.evaluation.stats import League, Table

#: What a lineup holds: a spec string or path, an agent object, or a factory of agents.
AgentEntry = str | Path | Agent | Callable[..., Agent]


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


def lineup_name(entry: AgentEntry, rules: str | dict | RuleSet = "standard", num_players: int = 2,
                agent: Agent | None = None) -> str:
    """How tables, results files and the leaderboard name an agent entry: :func:`c8env.agents.agent_name` (a spec
    as written, an object's ``name``), except that a ``package.module:name`` spec is named by its agent's ``name``
    when that is a non-empty string. ``agent``: the entry already loaded; else such a spec is loaded here for
    ``rules`` and ``num_players`` (a factory called once, with seed 0)."""
    if not (isinstance(entry, str) and ":" in entry and entry.partition(":")[0] not in BUILTIN
            and not entry.endswith((".npz", ".onnx", ".zip"))):
        return agent_name(entry)
    agent = load(entry, rules=rules, num_players=num_players, seed=0) if agent is None else agent
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else entry


def _lineup_names(entries: list[object], rules: RuleSet, num_players: int,
                  agents: Sequence[Agent] | None = None) -> list[str]:
    """How a table names its agents (:func:`lineup_name`; ``agents``: the entries loaded); entries of different
    specs or objects that share a name are numbered (``name#1``, ``name#2``); a repeated spec string stays as
    written."""
    names = [lineup_name(entry, rules, num_players, None if agents is None else agents[i])
             for i, entry in enumerate(entries)]
    for name in set(names):
        alike = [i for i, other in enumerate(names) if other == name]
        if len(alike) > 1 and not all(isinstance(entries[i], (str, Path)) and entries[i] == entries[alike[0]]
                                      for i in alike):
            for number, i in enumerate(alike, start=1):
                names[i] = f"{name}#{number}"
    return names


def one_against(agent: AgentEntry, opponent: AgentEntry, num_players: int, name: str,
                opponent_name: str) -> tuple[list[AgentEntry], list[str]]:
    """The benchmark's lineup: ``agent`` (named ``name``) in one seat, ``opponent`` in each of the others (named
    ``opponent_name#1``, ``#2``, ...); :func:`evaluate`'s rotations take ``agent`` round every seat. Returns the
    entries and their names, for :func:`evaluate`'s ``specs`` and ``names``."""
    return ([agent] + [opponent] * (num_players - 1),
            [name] + [f"{opponent_name}#{k}" for k in range(1, num_players)])


def _check_sendable(entries: list[object], names: list[str]) -> None:
    """Agent objects and factories travel to the worker processes by pickle: refuse early those that cannot."""
    for entry, name in zip(entries, names, strict=True):
        if not isinstance(entry, (str, Path)):
            try:
                pickle.dumps(entry)
            except Exception as err:
                raise ValueError(f"agent {name!r} cannot be sent to worker processes ({type(err).__name__}: {err}); "
                                 "pass workers=1, give it act_batch for the batched engine, or give a spec "
                                 "string (package.module:name)") from None


def evaluate(specs: Sequence[AgentEntry], num_players: int = 2, rules: str | dict | RuleSet = "standard",
             deals: int = 1000, seed: int = 0, workers: int | None = None, progress: bool = False,
             engine: str = "auto", names: Sequence[str] | None = None, ray: str | None = None) -> Table:
    """Play ``deals`` seeded deals, each once per rotation of the lineup through the seats.

    ``specs`` holds one agent per seat, or fewer: a lineup shorter than the player count is
    repeated around the table (``["greedy", "random"]`` at 4 players seats greedy, random,
    greedy, random; :func:`one_against` makes the benchmark's lineup, one agent against another in
    every other seat). Each is a spec string (:func:`c8env.agents.load`: ``random``,
    ``greedy``, ``expert:...``, a policy name or file, ``package.module:name``), an agent
    object (``act(observation) -> int``; an ``act_batch`` lets the batched engine play it)
    or a factory called as ``factory(rules=..., num_players=..., seed=...)`` for every hand
    on the scalar engine (once on the batched one). Agents that are not c8env's own see
    sealed observations. An illegal move ends its hand as that agent's loss (no winner),
    counted in the table (``illegal``), with the first one in words.

    ``engine``: ``scalar`` (``workers`` processes, default every core; agent objects are sent
    to each task by pickle, a fresh copy per 25 deals whatever the worker count), ``batched``
    (one process; only for agents with a :func:`c8env.agents.batch_mode`) or ``auto``
    (batched when every agent allows it); the same records. ``names``: how the table names the
    agents (default: :func:`lineup_name` of each, different entries of one name numbered).

    ``ray``: the address of a Ray cluster (the ``rllib`` extra; ``"local"`` starts one of ``workers``
    CPUs in this process, ``"auto"`` joins the running one): the scalar engine's tasks of 25 deals run
    there instead of in local processes, giving the same table.
    """
    num_players = check_num_players(num_players)
    rules = load_rules(rules)
    if isinstance(specs, (str, Path)) or not isinstance(specs, Sequence):
        raise TypeError(f"specs={specs!r} is invalid; allowed: a list of agents (specs, objects or factories), "
                        "one per seat (e.g. ['greedy', 'random'])")
    entries = list(specs)
    if not entries or len(entries) > num_players:
        raise ValueError(f"evaluate needs 1 to {num_players} agents for {num_players} players, got {len(entries)}")
    if not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals={deals!r} is invalid; allowed: an int >= 1")
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is invalid; allowed: {', '.join(ENGINES)}")
    if names is not None and len(names) != len(entries):
        raise ValueError(f"names={names!r} is invalid; allowed: one name per agent ({len(entries)})")
    # fail fast, naming the bad agent; the batched engine plays these agents (a policy file is loaded once)
    agents = [load(entry, rules=rules, num_players=num_players, seed=i) for i, entry in enumerate(entries)]
    names = _lineup_names(entries, rules, num_players, agents) if names is None else [str(name) for name in names]
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise ValueError(f"workers={workers!r} is invalid; allowed: None (every core) or an int >= 1")
    check_seed(seed)
    scalar_only = [name for name, agent in zip(names, agents, strict=True) if batch_mode(agent) is None]
    if engine == "batched" and scalar_only:
        raise ValueError(f"engine='batched' cannot play {', '.join(map(repr, scalar_only))}; allowed: random, "
                         "greedy, policy files and agents with act_batch (or engine='scalar' / 'auto')")
    update = progress_counter(deals, progress)
    start = time.perf_counter()
    if ray is not None and engine == "batched":
        raise ValueError("ray spreads the scalar engine's tasks; engine='batched' runs in one process (allowed with "
                         "ray: engine='scalar' or 'auto')")
    if ray is None and (engine == "batched" or (engine == "auto" and not scalar_only)):
        records = play_deals_batched(agents, rules, num_players, seed, deals, update, names)
        return Table(names, num_players, rules, deals, seed, records, time.perf_counter() - start)
    chunks = [list(range(first, min(first + CHUNK, deals))) for first in range(0, deals, CHUNK)]
    records = []
    if ray is not None:
        with ray_session(ray, workers):
            records = _play_on_ray(chunks, entries, names, rules, num_players, seed, update)
        return Table(names, num_players, rules, deals, seed, records, time.perf_counter() - start)
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        sendable = True
        try:
            _check_sendable(entries, names)
        except ValueError:
            sendable = False  # then the one process plays the objects themselves
        for chunk in chunks:
            lineup = pickle.loads(pickle.dumps(entries)) if sendable else entries  # as a worker would get them
            records.extend(play_deals(lineup, names, rules, num_players, seed, chunk))
            update(len(chunk))
    else:
        _check_sendable(entries, names)
        with ProcessPoolExecutor(workers) as pool:
            futures = [pool.submit(play_deals, entries, names, rules, num_players, seed, chunk) for chunk in chunks]
            for future, chunk in zip(futures, chunks, strict=True):
                records.extend(future.result())
                update(len(chunk))
    return Table(names, num_players, rules, deals, seed, records, time.perf_counter() - start)


@contextlib.contextmanager
def ray_session(address: str | None, workers: int | None) -> Iterator[None]:
    """Ray connected for the block (nothing when ``address`` is None or Ray already runs): ``"local"`` starts a
    local cluster of ``workers`` CPUs (default every core), any other address joins that cluster."""
    if address is None:
        yield
        return
    try:
        import ray
    except ImportError:
        raise ValueError("ray=... needs Ray: pip install 'c8env[rllib]'") from None
    if ray.is_initialized():
        yield
        return
    if address == "local":
        ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def _play_on_ray(chunks: list[list[int]], entries: list[object], names: list[str], rules: RuleSet,
                 num_players: int, seed: int, update: Callable[[int], None]) -> list[HandRecord]:
    """The scalar engine's tasks as Ray tasks (one CPU each), records in deal order."""
    import ray

    task = ray.remote(num_cpus=1)(play_deals)
    lineup = ray.put(entries)
    futures = [task.remote(lineup, names, rules, num_players, seed, chunk) for chunk in chunks]
    index_of = {future: i for i, future in enumerate(futures)}
    results: dict[int, list[HandRecord]] = {}
    pending = list(futures)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for future in done:
            results[index_of[future]] = ray.get(future)
            update(len(chunks[index_of[future]]))
    return [record for i in range(len(chunks)) for record in results[i]]


def league(specs: Sequence[AgentEntry], num_players: int = 2, rules: str | dict | RuleSet = "standard", deals: int = 500,
           seed: int = 0, workers: int | None = None, progress: bool = False, engine: str = "auto",
           ray: str | None = None) -> League:
    """Round robin over ``specs`` (each pair head to head, lineup repeated around larger tables) with
    OpenSkill (Plackett-Luce) ratings updated hand by hand in a fixed order."""
    from openskill.models import PlackettLuce

    entries = list(specs)
    names = _lineup_names(entries, load_rules(rules), check_num_players(num_players))
    if len(entries) < 2 or len(set(names)) != len(names):
        raise ValueError(f"a league needs at least 2 distinct agents, got {names!r}")
    tables = {}
    with ray_session(ray, workers):  # one connection for every pair
        for i, j in itertools.combinations(range(len(entries)), 2):
            tables[(i, j)] = evaluate([entries[i], entries[j]], num_players, rules, deals, seed, workers, progress,
                                      engine, names=[names[i], names[j]], ray=ray)
    model = PlackettLuce()
    ratings = [model.rating(name=name) for name in names]
    for (i, j), table in tables.items():
        for record in table.records:
            ranks = [1, 1] if record.winner is None else [1 + (record.winner != 0), 1 + (record.winner != 1)]
            [[ratings[i]], [ratings[j]]] = model.rate([[ratings[i]], [ratings[j]]], ranks=ranks)
    return League(names, tables, [(r.mu, r.sigma) for r in ratings])


__all__ = ["AgentEntry", "evaluate", "league", "lineup_name", "one_against", "progress_counter", "ray_session"]
