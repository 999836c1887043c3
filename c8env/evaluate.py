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

Programmatic use::

    from c8env.evaluate import evaluate
    table = evaluate(["greedy", "random"], num_players=2, rules="standard", deals=1000, seed=0)
    print(table.markdown())
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from c8env.actions import action_text
from c8env.agents import Agent, GreedyAgent, PolicyAgent, RandomAgent, load
from c8env.argcheck import Parser, check_rules_arg, int_at_least, int_between, writable_dir
from c8env.engine import State, check_num_players, check_seed
from c8env.episode import MAX_HAND_STEPS, play_hand
from c8env.observation import StateObservation
from c8env.rules import RuleSet, load_rules
from c8env.seeding import derive_seed

# A hand still running after MAX_HAND_STEPS moves is cut off: no winner, counted as ``truncated`` in the
# table (a policy that stalls by drawing without end would otherwise hold an evaluation up for minutes).
_CHUNK = 25
ENGINES = ("auto", "scalar", "batched")
#: Hands the batched engine plays at once.
BATCH = 1024
# A policy's batched logits may differ from its one-observation logits in the last bits (another summation
# order); a decision whose two best legal logits lie closer than this is recomputed as the scalar path does.
_TIE_MARGIN = 1e-3


class AgentError(ValueError):
    """An agent returned an action that is not legal."""


def wilson_interval(wins: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class HandRecord:
    """One hand: which lineup index sat in each seat, and what happened."""

    deal: int
    rotation: int
    seats: list[int]  # seats[seat] = lineup index
    winner: int | None  # lineup index of the winner
    transfers: list[int]  # per lineup index
    steps: int
    truncated: bool


def play_deal(agents: Sequence[Agent], names: Sequence[str], rules: RuleSet, num_players: int, deal_seed: int,
              seats: Sequence[int], max_steps: int = MAX_HAND_STEPS) -> tuple[State, int]:
    """Play one hand from a seeded deal; ``seats[seat]`` is the index into ``agents``. Returns the final
    state and the number of steps. An illegal action raises :class:`AgentError` naming agent and move."""

    def choose(state: State) -> int:
        seat = state.current_player
        index = seats[seat]
        action = agents[index].act(StateObservation(state, seat))
        legal = state.legal_actions()
        if action not in legal:
            raise AgentError(
                f"agent {names[index]!r} (seat {seat}) chose {action!r} ({action_text(action) if isinstance(action, int) else '?'}), "
                f"which is illegal; legal: {', '.join(f'{a} ({action_text(a)})' for a in legal)}"
            )
        return action

    state = State.new(num_players, rules, seed=deal_seed)
    return state, play_hand(state, choose, max_steps)


def _play_deals(specs: Sequence[str], rules: RuleSet, num_players: int, seed: int,
                deals: Sequence[int]) -> list[HandRecord]:
    """Play every rotation of some deals (one worker's share)."""
    lineup = len(specs)
    base = [seat % lineup for seat in range(num_players)]
    policies: dict[str, PolicyAgent] = {}
    records = []
    for deal in deals:
        deal_seed = derive_seed(seed, deal)
        for rotation in range(num_players):
            seats = [base[(seat + rotation) % num_players] for seat in range(num_players)]
            agents = [policies.get(spec) or load(spec, rules=rules, num_players=num_players,
                                                 seed=_agent_seeds(deal_seed, rotation, i))
                      for i, spec in enumerate(specs)]
            policies.update((spec, agent) for spec, agent in zip(specs, agents, strict=True)
                            if isinstance(agent, PolicyAgent))  # deterministic: load each file once
            state, steps = play_deal(agents, specs, rules, num_players, deal_seed, seats, MAX_HAND_STEPS)
            transfers = [0] * lineup
            truncated = not state.hand_over
            if not truncated:
                for seat, value in enumerate(state.hand_transfers()):
                    transfers[seats[seat]] += value
            winner = None if truncated or state.winner is None else seats[state.winner]
            records.append(HandRecord(deal, rotation, list(seats), winner, transfers, steps, truncated))
    return records


def _agent_seeds(deal_seed: int, rotation: int, index: int) -> int:
    """The seed of lineup entry ``index``'s agent in one rotation of a deal (both engines)."""
    return derive_seed(deal_seed, 1000 * rotation + index)


def batched_kind(agent: Agent) -> str | None:
    """How the batched engine plays an agent: ``random``, ``greedy``, ``policy``, or None (scalar only)."""
    if isinstance(agent, RandomAgent):
        return "random"
    if isinstance(agent, GreedyAgent):
        return "greedy"
    if isinstance(agent, PolicyAgent):
        return "policy"
    return None


def policy_actions(agent: PolicyAgent, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``agent.act`` for a batch of observations (float32[k, 245]) and masks (int8[k, 60]): the masked argmax
    of the batch's logits, each near tie recomputed from that observation alone (as ``act`` computes it)."""
    legal = masks.astype(bool)
    logits = np.where(legal, agent.logits(observations), -np.inf)
    actions = np.argmax(logits, axis=1)
    top_two = -np.partition(-logits, 1, axis=1)[:, :2]
    close = np.flatnonzero(np.abs(top_two[:, 0] - top_two[:, 1]) < _TIE_MARGIN * np.maximum(1.0, np.abs(top_two[:, 0])))
    for row in close:
        one = agent.logits(observations[row])
        actions[row] = int(np.argmax(np.where(legal[row], one, -np.inf)))
    return actions


def _play_deals_batched(agents: Sequence[Agent], rules: RuleSet, num_players: int, seed: int, deals: int,
                        update: Callable[[int], None]) -> list[HandRecord]:
    """Every rotation of deals ``0..deals-1`` on the batched engine; the same records as :func:`_play_deals`.

    ``agents``: one loaded agent per lineup entry, each with a :func:`batched_kind`; ``update`` is told of
    each deal whose rotations have all been played."""
    from c8env.vector import EXTERNAL, GREEDY, RandomAgents, VectorGames, derive_seeds

    n, lineup = num_players, len(agents)
    kinds = [batched_kind(agent) for agent in agents]
    base = [seat % lineup for seat in range(n)]
    seating = np.array([[base[(seat + rotation) % n] for seat in range(n)] for rotation in range(n)])
    total = deals * n  # hand h: deal h // n, rotation h % n
    hand_deal, hand_rotation = np.arange(total) // n, np.arange(total) % n
    deal_seeds = derive_seeds(np.full(deals, seed, dtype=np.uint64), np.arange(deals, dtype=np.uint64))
    hand_seeds = deal_seeds[hand_deal]
    random_indices = [i for i, kind in enumerate(kinds) if kind == "random"]
    agent_seeds = [derive_seeds(hand_seeds, (1000 * hand_rotation + i).astype(np.uint64))  # as _agent_seeds
                   for i in random_indices]
    codes = np.array([GREEDY if kind == "greedy" else EXTERNAL for kind in kinds])
    codes[random_indices] = np.arange(len(random_indices))
    size = min(BATCH, total)
    games = VectorGames(size, n, rules, reward="points", max_steps=MAX_HAND_STEPS, autoreset=False,
                        observations="policy" in kinds)
    randoms = [RandomAgents(np.zeros(size, dtype=np.uint64)) for _ in random_indices]
    slot_hand = np.full(size, -1)
    seats_of_slot = np.zeros((size, n), dtype=np.int64)
    winner_seat, steps, truncated_at = (np.zeros(total, dtype=np.int64) for _ in range(3))
    transfers_at = np.zeros((total, n), dtype=np.int64)  # per seat
    left = np.full(deals, n)  # hands of each deal still to finish
    started = 0

    def deal_into(slots: np.ndarray) -> None:
        nonlocal started
        slots = slots & (np.cumsum(slots) <= total - started)  # fewer hands left than free slots
        hands = np.arange(started, started + int(slots.sum()))
        started += len(hands)
        slot_hand[slots] = hands
        seats_of_slot[slots] = seating[hand_rotation[hands]]
        seeds = np.zeros(size, dtype=np.uint64)
        seeds[slots] = hand_seeds[hands]
        games.reset_deals(seeds, slots)
        for agent, chosen in zip(randoms, agent_seeds, strict=True):
            seeds[slots] = chosen[hands]
            agent.reseed(seeds, slots)

    def settle(rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> None:
        ended = terminated | truncated
        if not ended.any():
            return
        hands = slot_hand[ended]
        winner_seat[hands] = games.games.winner[ended]
        steps[hands] = games.games.hand_steps[ended]
        truncated_at[hands] = truncated[ended]
        transfers_at[hands] = rewards[ended]
        np.subtract.at(left, hand_deal[hands], 1)
        touched = np.unique(hand_deal[hands])
        completed = int((left[touched] == 0).sum())
        if completed:
            update(completed)
        slot_hand[ended] = -1
        if started < total:
            deal_into(ended)

    deal_into(np.ones(size, dtype=bool))
    actions = np.zeros(size, dtype=np.int64)
    while (slot_hand >= 0).any():
        settle(*games.autoplay(codes[seats_of_slot], randoms, slot_hand >= 0))  # random and greedy moves
        waiting = slot_hand >= 0  # and a policy to act (the hands just dealt are played first)
        waiting &= codes[seats_of_slot[np.arange(size), games.current_player]] == EXTERNAL
        if not waiting.any():
            continue
        acting = seats_of_slot[np.arange(size), games.current_player]
        for i, agent in enumerate(agents):
            turn = waiting & (acting == i)
            if turn.any():
                actions[turn] = policy_actions(agent, games.observation[turn], games.action_mask[turn])
        settle(*games.step(actions, waiting))
    records = []
    for hand, (winner, count, cut, paid) in enumerate(zip(winner_seat.tolist(), steps.tolist(),
                                                          truncated_at.tolist(), transfers_at.tolist(), strict=True)):
        seats = seating[hand % n].tolist()
        transfers = [0] * lineup
        if not cut:
            for seat, value in enumerate(paid):
                transfers[seats[seat]] += value
        records.append(HandRecord(hand // n, hand % n, seats, None if cut or winner < 0 else seats[winner], transfers,
                                  count, bool(cut)))
    return records


@dataclass
class AgentStats:
    """Totals for one lineup entry."""

    name: str
    hands: int = 0
    wins: int = 0
    points: int = 0

    @property
    def win_rate(self) -> float:
        return self.wins / self.hands if self.hands else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.hands)


@dataclass
class Table:
    """The result of :func:`evaluate`."""

    specs: list[str]
    num_players: int
    rules: RuleSet
    deals: int
    seed: int
    records: list[HandRecord]
    seconds: float
    stats: list[AgentStats] = field(init=False)

    def __post_init__(self) -> None:
        self.stats = [AgentStats(spec) for spec in self.specs]
        for record in self.records:
            for index in set(record.seats):
                copies = record.seats.count(index)
                self.stats[index].hands += copies
                self.stats[index].points += record.transfers[index]
            if record.winner is not None:
                self.stats[record.winner].wins += 1

    @property
    def hands(self) -> int:
        return len(self.records)

    @property
    def mean_length(self) -> float:
        return sum(r.steps for r in self.records) / max(1, self.hands)

    @property
    def ties(self) -> int:
        return sum(1 for r in self.records if r.winner is None and not r.truncated)

    @property
    def truncated(self) -> int:
        return sum(1 for r in self.records if r.truncated)

    @property
    def games_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds else float("inf")

    def rows(self) -> list[dict[str, Any]]:
        """One dict per lineup entry (for CSV/JSON)."""
        out = []
        for stats in self.stats:
            low, high = stats.interval
            out.append({
                "agent": stats.name, "hands": stats.hands, "wins": stats.wins, "win_rate": round(stats.win_rate, 4),
                "ci_low": round(low, 4), "ci_high": round(high, 4),
                "points_per_hand": round(stats.points / max(1, stats.hands), 3),
            })
        return out

    def markdown(self) -> str:
        """A markdown table of the results."""
        lines = [
            f"{self.num_players} players, {self.deals} deals x {self.num_players} rotations = {self.hands} hands, "
            f"seed {self.seed}; mean hand length {self.mean_length:.1f} steps; ties {self.ties}; "
            + (f"cut off at {MAX_HAND_STEPS:,} moves (no winner) {self.truncated}; " if self.truncated else "")
            + f"{self.games_per_second:,.0f} hands/s",
            "",
            "| agent | seats/hand | hands | win rate | 95% CI | points/hand |",
            "|---|---|---|---|---|---|",
        ]
        per_hand = {i: self.records[0].seats.count(i) if self.records else 0 for i in range(len(self.specs))}
        for i, row in enumerate(self.rows()):
            lines.append(
                f"| {row['agent']} | {per_hand[i]} | {row['hands']} | {row['win_rate']:.1%} | "
                f"[{row['ci_low']:.1%}, {row['ci_high']:.1%}] | {row['points_per_hand']:+.2f} |"
            )
        return "\n".join(lines)


def _progress(total: int, enabled: bool) -> Callable[[int], None]:
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
    default every core), ``batched`` (one process; only for ``random``, ``greedy`` and
    policy files) or ``auto`` (batched when every agent allows it); the same records.
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
    scalar_only = [spec for spec, agent in zip(specs, agents, strict=True) if batched_kind(agent) is None]
    if engine == "batched" and scalar_only:
        raise ValueError(f"engine='batched' cannot play {', '.join(map(repr, scalar_only))}; allowed: random, "
                         "greedy and policy files (or engine='scalar' / 'auto')")
    update = _progress(deals, progress)
    start = time.perf_counter()
    if engine == "batched" or (engine == "auto" and not scalar_only):
        records = _play_deals_batched(agents, rules, num_players, seed, deals, update)
        return Table(specs, num_players, rules, deals, seed, records, time.perf_counter() - start)
    workers = workers or os.cpu_count() or 1
    chunks = [list(range(first, min(first + _CHUNK, deals))) for first in range(0, deals, _CHUNK)]
    records = []
    if workers == 1:
        for chunk in chunks:
            records.extend(_play_deals(specs, rules, num_players, seed, chunk))
            update(len(chunk))
    else:
        with ProcessPoolExecutor(workers) as pool:
            futures = [pool.submit(_play_deals, specs, rules, num_players, seed, chunk) for chunk in chunks]
            for future, chunk in zip(futures, chunks, strict=True):
                records.extend(future.result())
                update(len(chunk))
    return Table(specs, num_players, rules, deals, seed, records, time.perf_counter() - start)


# ----- league ------------------------------------------------------------------------------------------
@dataclass
class League:
    """A round robin: every pair of agents head to head, a win-rate matrix and OpenSkill ratings."""

    specs: list[str]
    tables: dict[tuple[int, int], Table]
    ratings: list[tuple[float, float]]  # (mu, sigma) per agent

    def win_matrix(self) -> np.ndarray:
        """``m[i, j]``: agent i's win rate against agent j (NaN on the diagonal)."""
        k = len(self.specs)
        m = np.full((k, k), np.nan)
        for (i, j), table in self.tables.items():
            m[i, j] = table.stats[0].win_rate
            m[j, i] = table.stats[1].win_rate
        return m

    def rows(self) -> list[dict[str, Any]]:
        matrix = self.win_matrix()
        out = []
        for i, spec in enumerate(self.specs):
            mu, sigma = self.ratings[i]
            row: dict[str, Any] = {"agent": spec, "mu": round(mu, 3), "sigma": round(sigma, 3),
                                   "ordinal": round(mu - 3 * sigma, 3)}
            for j, other in enumerate(self.specs):
                row[f"vs {other}"] = None if i == j else round(float(matrix[i, j]), 4)
            out.append(row)
        return out

    def markdown(self) -> str:
        matrix = self.win_matrix()
        order = sorted(range(len(self.specs)), key=lambda i: -(self.ratings[i][0] - 3 * self.ratings[i][1]))
        head = "| agent | OpenSkill mu | sigma | ordinal | " + " | ".join(f"vs {self.specs[j]}" for j in order) + " |"
        lines = [head, "|" + "---|" * (4 + len(order))]
        for i in order:
            mu, sigma = self.ratings[i]
            cells = ["—" if i == j else f"{matrix[i, j]:.1%}" for j in order]
            lines.append(f"| {self.specs[i]} | {mu:.2f} | {sigma:.2f} | {mu - 3 * sigma:.2f} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


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


# ----- benchmark protocol ------------------------------------------------------------------------------
_PACKAGE_BENCH = Path(__file__).parent / "bench_configs"
_REPO_BENCH = Path(__file__).parent.parent / "configs" / "bench"


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


# ----- outputs -----------------------------------------------------------------------------------------
def _write_rows(out: Path, stem: str, rows: list[dict[str, Any]], meta: dict[str, Any]) -> list[Path]:
    import csv
    import json

    out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out / f"{stem}.csv", out / f"{stem}.json"
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    json_path.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    return [csv_path, json_path]


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


# ----- command line ------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (the README's commands are checked against it)."""
    parser = Parser(
        prog="c8env eval",
        description="Evaluate agents with duplicate deals and 95% Wilson intervals. Agent specs: random, greedy, "
                    "expert[:simulations=N,time_ms=T,policy=NAME,top=K,prior=W,rollouts=greedy|policy], a shipped policy name, or a .npz "
                    "policy path.",
    )
    parser.add_argument("agents", nargs="*", help="one spec per seat (fewer: repeated around the table)")
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
    parser.add_argument("--out", type=writable_dir, help="folder for CSV, JSON and PNG outputs (new or existing)")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """``c8env eval`` / ``python -m c8env.evaluate``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    progress = not args.no_progress
    if not args.bench:
        check_rules_arg(parser, args.rules)
    meta = {"players": args.players, "rules": args.rules, "deals": args.deals, "seed": args.seed}
    try:
        if args.bench:
            if not args.agent or args.agents:
                parser.error("--bench needs --agent SPEC and no positional agents")
            rows = [row for agent in args.agent
                    for row in run_bench(args.bench, agent, args.seed, args.workers, progress, args.engine)]
            text = bench_markdown(rows)
            if len(args.agent) > 1:
                text += "\n\nLeaderboard (score: mean of win rate / fair share)\n\n" + leaderboard_markdown(rows)
            stem, meta = "bench", {"bench": args.bench, "seed": args.seed}
            plot = lambda path: plot_bench(rows, path)  # noqa: E731
        elif args.league:
            result = league(args.agents, args.players, args.rules, args.deals, args.seed, args.workers, progress,
                            args.engine)
            stem, text, rows = "league", result.markdown(), result.rows()
            plot = lambda path: plot_league(result, path)  # noqa: E731
        else:
            if not args.agents:
                parser.error("name the agents to evaluate, e.g. `c8env eval greedy random`")
            table = evaluate(args.agents, args.players, args.rules, args.deals, args.seed, args.workers, progress,
                             args.engine)
            stem, text, rows = "eval", table.markdown(), table.rows()
            plot = lambda path: plot_table(table, path)  # noqa: E731
        print(text)
        if args.out:
            paths = _write_rows(args.out, stem, rows, meta)
            paths.append(plot(args.out / f"{stem}.png"))
            print("wrote " + ", ".join(map(str, paths)))
    except ValueError as err:
        parser.exit(2, f"c8env eval: error: {err}\n")


if __name__ == "__main__":
    main()
