"""A bounded soak test of ``c8env serve`` on the loopback address: many games at once, for minutes.

``python -m c8env.web.soak --games 200 --minutes 10`` starts ``c8env serve`` on 127.0.0.1 (a free port, its
own process) and keeps that many games going at once until the time is up: each of ``--games`` players plays
one game after another through the JSON API (a random "human" against agents that move through
``advance``; the rules, player count, agents and hand or match vary from game to game), looks at its view
now and then, downloads each finished game's replay and drops the game. A share of the games
(``--abandon``) are left behind unfinished, as a closed browser tab leaves them, for the server's idle
timeout (``--idle-timeout``) to drop.

It stops by itself: at the deadline every player drops its game and stops, and each game is bounded by
``--max-requests``. It then reports the requests served, the errors (any answer but 200, or a broken
connection: there should be none), the latency percentiles, the server process's memory (RSS) at the start,
at its largest and at the end, and the games the server holds at the end and at most, so that memory growth
can be judged against the games held. ``--json PATH`` also writes the report as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from c8env.web.loadtest import _Connection, _cpu_seconds, _percentile, local_server

#: The rules, player counts and agents the soak's games draw from.
SOAK_RULES = ("standard", "special_cards", "uno_like", "last_card", "crazy_aces", "penalty")
SOAK_AGENTS = ("greedy", "random", "ppo-standard-2p")  # the policy only in 2-player standard games


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MiB, from /proc (None where there is none)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class _Soak:
    """The players' shared tallies."""

    def __init__(self, host: str, port: int, deadline: float, max_requests: int, abandon: float) -> None:
        self.host, self.port = host, port
        self.deadline = deadline
        self.max_requests = max_requests
        self.abandon = abandon
        self.latencies: list[float] = []
        self.counts = {"errors": 0, "games_started": 0, "games_finished": 0, "games_abandoned": 0, "replays": 0}
        self.first_failure: str | None = None

    def failed(self, what: str) -> None:
        self.counts["errors"] += 1
        if self.first_failure is None:
            self.first_failure = what[:300]

    async def player(self, index: int, seed: int) -> None:
        """Games one after another until the deadline."""
        rng = random.Random(seed * 100_003 + index)
        connection = _Connection(self.host, self.port)
        try:
            while time.monotonic() < self.deadline:
                try:
                    await self.game(connection, rng)
                except (OSError, asyncio.IncompleteReadError, ValueError, IndexError, RuntimeError) as err:
                    if not isinstance(err, RuntimeError):  # (a RuntimeError: an answer already counted)
                        self.failed(f"{type(err).__name__}: {err}")
                    connection.close()
                    connection = _Connection(self.host, self.port)
                    await asyncio.sleep(0.05)
        finally:
            connection.close()

    async def game(self, connection: _Connection, rng: random.Random) -> None:
        async def call(method: str, path: str, body: Any = None) -> Any:
            start = time.perf_counter()
            status, data = await connection.request(method, path, body)
            self.latencies.append(time.perf_counter() - start)
            if status != 200:
                self.failed(f"{method} {path}: {status} {data[:200]!r}")
                raise RuntimeError(status)
            return json.loads(data)

        players, rules = rng.choice((2, 2, 2, 3, 4)), rng.choice(SOAK_RULES)
        choices = SOAK_AGENTS if (players, rules) == (2, "standard") else SOAK_AGENTS[:2]  # the policy's own game
        agents = [rng.choice(choices) for _ in range(players - 1)]
        episode = "match" if rng.random() < 0.1 else "hand"
        view = await call("POST", "/api/games", {"players": players, "agents": agents, "seat": rng.randrange(players),
                                                 "rules": rules, "episode": episode,
                                                 "seed": rng.randrange(2**31)})
        self.counts["games_started"] += 1
        path = f"/api/games/{view['game_id']}"
        abandon = rng.random() < self.abandon
        for _ in range(self.max_requests):
            if time.monotonic() >= self.deadline:
                break
            if abandon and rng.random() < 0.05:
                self.counts["games_abandoned"] += 1
                return  # left behind: the server's idle timeout drops it
            if rng.random() < 0.05:
                view = await call("GET", path)
            elif view["status"] == "your_turn":
                view = await call("POST", path + "/actions", {"action": rng.choice(view["legal"])["id"]})
            elif view["status"] == "agent_turn":
                view = await call("POST", path + "/advance")
            elif view["status"] == "hand_over":
                view = await call("POST", path + "/next_hand")
            else:
                break
        if view["status"] == "finished":
            self.counts["games_finished"] += 1
            await call("GET", path + "/replay")
            self.counts["replays"] += 1
        await call("DELETE", path)


async def _sample(get_status: Any, pid: int, samples: list[dict[str, Any]], stop: asyncio.Event, every: float,
                  start: float) -> None:
    while not stop.is_set():
        status = await get_status()
        if status is not None:
            samples.append({"t": round(time.monotonic() - start, 1), "rss_mb": rss_mb(pid), **status})
        try:
            await asyncio.wait_for(stop.wait(), every)
        except asyncio.TimeoutError:
            pass


async def soak(host: str, port: int, pid: int, games: int = 200, seconds: float = 600.0, seed: int = 0,
               max_requests: int = 3000, abandon: float = 0.02, sample_every: float = 10.0) -> dict[str, Any]:
    """Keep ``games`` games going against the server at ``host:port`` (process ``pid``) for ``seconds``."""
    start = time.monotonic()
    tally = _Soak(host, port, start + seconds, max_requests, abandon)

    async def server_status() -> dict[str, Any] | None:
        """The server's ``/api/status`` (None, and an error counted, when it does not answer)."""
        connection = _Connection(host, port)  # a fresh one: the server closes a keep-alive connection idle for 5 s
        try:
            status, data = await connection.request("GET", "/api/status")
            if status == 200:
                return json.loads(data)
            tally.failed(f"GET /api/status: {status} {data[:200]!r}")
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as err:
            tally.failed(f"GET /api/status: {type(err).__name__}: {err}")
        finally:
            connection.close()
        return None

    samples: list[dict[str, Any]] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample(server_status, pid, samples, stop, sample_every, start))
    cpu_before = _cpu_seconds(pid)
    # every player stops at the deadline (after its current request); the margin bounds a hung server
    await asyncio.wait_for(asyncio.gather(*(tally.player(i, seed) for i in range(games))), seconds + 120)
    elapsed = time.monotonic() - start
    cpu_after = _cpu_seconds(pid)
    stop.set()
    await sampler
    end = await server_status() or {"games": None, "dropped_idle": None}
    end_rss = rss_mb(pid)
    latencies = tally.latencies
    rss = [s["rss_mb"] for s in samples if s["rss_mb"] is not None] + ([end_rss] if end_rss is not None else [])
    held = [s["games"] for s in samples] + ([end["games"]] if end["games"] is not None else [])
    return {
        "games": games, "seconds": elapsed, **tally.counts, "requests": len(latencies),
        "requests_per_s": len(latencies) / elapsed if elapsed else 0.0,
        "p50_ms": 1000 * _percentile(latencies, 0.50), "p99_ms": 1000 * _percentile(latencies, 0.99),
        "max_ms": 1000 * max(latencies, default=float("nan")),
        "rss_start_mb": samples[0]["rss_mb"] if samples else None, "rss_max_mb": max(rss, default=None),
        "rss_end_mb": end_rss, "games_held_end": end["games"], "games_held_max": max(held, default=None),
        "games_dropped_idle": end["dropped_idle"],
        "server_cpu_s": None if cpu_before is None or cpu_after is None else cpu_after - cpu_before,
        "first_failure": tally.first_failure, "samples": samples,
    }


def run_soak(games: int = 200, seconds: float = 600.0, seed: int = 0, max_requests: int = 3000, abandon: float = 0.02,
             idle_timeout: float = 60.0, sample_every: float = 10.0) -> dict[str, Any]:
    """Start ``c8env serve`` on 127.0.0.1 (a free port, its own process), soak it, stop it; the report."""
    with local_server(max(1000, 2 * games), idle_timeout) as (port, server):
        return asyncio.run(soak("127.0.0.1", port, server.pid, games, seconds, seed, max_requests, abandon,
                                sample_every))


def report_text(report: dict[str, Any]) -> str:
    """The report in a few lines."""
    def mb(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.0f} MiB"

    return "\n".join([
        f"{report['games']} games at once for {report['seconds'] / 60:.1f} min: {report['games_started']:,} games "
        f"started, {report['games_finished']:,} finished, {report['games_abandoned']:,} abandoned",
        f"requests {report['requests']:,} ({report['requests_per_s']:,.0f}/s), errors {report['errors']}; latency "
        f"p50 {report['p50_ms']:.1f} ms, p99 {report['p99_ms']:.1f} ms, max {report['max_ms']:.1f} ms",
        f"server RSS {mb(report['rss_start_mb'])} at the start, {mb(report['rss_max_mb'])} at most, "
        f"{mb(report['rss_end_mb'])} at the end; games held {report['games_held_end']} at the end "
        f"({report['games_held_max']} at most; {report['games_dropped_idle']} dropped as idle)"
        + ("" if report["server_cpu_s"] is None else f"; server CPU {report['server_cpu_s']:.0f} s"),
    ] + ([f"first failure: {report['first_failure']}"] if report["first_failure"] else []))


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    parser = argparse.ArgumentParser(prog="python -m c8env.web.soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200, help="games going at once (default 200)")
    parser.add_argument("--minutes", type=float, default=10.0, help="how long (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-requests", type=int, default=3000, help="requests per game at most (default 3000)")
    parser.add_argument("--abandon", type=float, default=0.02,
                        help="share of games left unfinished for the idle timeout (default 0.02)")
    parser.add_argument("--idle-timeout", type=float, default=60.0,
                        help="the server's --idle-timeout in seconds (default 60)")
    parser.add_argument("--sample-every", type=float, default=10.0, help="seconds between RSS samples (default 10)")
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.games < 1 or args.minutes <= 0 or args.max_requests < 1 or args.idle_timeout <= 0 \
            or args.sample_every <= 0 or not 0 <= args.abandon <= 1:
        parser.error("--games and --max-requests must be >= 1, --minutes, --idle-timeout and --sample-every > 0, "
                     "--abandon in 0..1")
    report = run_soak(args.games, 60 * args.minutes, args.seed, args.max_requests, args.abandon, args.idle_timeout,
                      args.sample_every)
    print(report_text(report), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    if report["errors"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
