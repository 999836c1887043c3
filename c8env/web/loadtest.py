"""A bounded load test of ``c8env serve`` on the loopback address.

``python -m c8env.web.loadtest --games 200`` starts ``c8env serve`` on 127.0.0.1 (a free port, its
own process), plays that many games at once through the JSON API with a random "human" in each (a
uniformly random legal action; the agents, greedy by default, move through ``advance``), downloads each replay and
drops the game, then prints the requests per second and the latency percentiles. Each game is
bounded (``--max-requests``) and so is the whole run (``--timeout``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _Connection:
    """One keep-alive HTTP/1.1 connection per game: a lean client, so that the server is what is measured
    (a general-purpose async client spends more CPU per request than the server does)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Length: {len(data)}\r\n"
                + ("Content-Type: application/json\r\n" if body is not None else "") + "\r\n")
        self.writer.write(head.encode() + data)
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        return int(status_line.split()[1]), await self.reader.readexactly(length)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _play(host: str, port: int, rng: random.Random, latencies: list[float], counts: dict[str, int],
                players: int, agent: str, max_requests: int) -> None:
    connection = _Connection(host, port)

    async def call(method: str, path: str, body: Any = None) -> Any:
        start = time.perf_counter()
        status, data = await connection.request(method, path, body)
        latencies.append(time.perf_counter() - start)
        if status != 200:
            counts["errors"] += 1
            raise RuntimeError(f"{method} {path}: {status} {data[:200]!r}")
        return json.loads(data)

    try:
        view = await call("POST", "/api/games", {"players": players, "agents": [agent],
                                                 "seat": rng.randrange(players), "seed": rng.randrange(2**31)})
        path = f"/api/games/{view['game_id']}"
        for _ in range(max_requests):
            if view["status"] == "your_turn":
                view = await call("POST", path + "/actions", {"action": rng.choice(view["legal"])["id"]})
            elif view["status"] == "agent_turn":
                view = await call("POST", path + "/advance")
            else:
                break
        if view["status"] == "finished":
            counts["finished"] += 1
            await call("GET", path + "/replay")
        await call("DELETE", path)
    finally:
        connection.close()


async def run_load(host: str, port: int, games: int = 200, players: int = 2, agent: str = "greedy", seed: int = 0,
                   max_requests: int = 2000, timeout: float = 300.0) -> dict[str, Any]:
    """Play ``games`` games at once against the server at ``host:port``; returns the figures."""
    rng = random.Random(seed)
    latencies: list[float] = []
    counts = {"errors": 0, "finished": 0, "failed_games": 0}
    start = time.perf_counter()
    tasks = [_play(host, port, random.Random(rng.random()), latencies, counts, players, agent, max_requests)
             for _ in range(games)]
    results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout)
    elapsed = time.perf_counter() - start
    failures = [r for r in results if isinstance(r, BaseException)]
    counts["failed_games"] = len(failures)
    return {"games": games, "finished": counts["finished"], "failed_games": len(failures),
            "first_failure": repr(failures[0])[:300] if failures else None, "requests": len(latencies),
            "errors": counts["errors"], "seconds": elapsed, "requests_per_s": len(latencies) / elapsed,
            "p50_ms": 1000 * _percentile(latencies, 0.50), "p99_ms": 1000 * _percentile(latencies, 0.99),
            "max_ms": 1000 * max(latencies, default=float("nan"))}


def _cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) of a process so far, from /proc (None where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


@contextlib.contextmanager
def local_server(max_games: int = 1000, idle_timeout: float | None = None) -> Iterator[tuple[int, subprocess.Popen]]:
    """``c8env serve`` on 127.0.0.1 (a free port, its own process), ready to answer: ``(port, process)``;
    stopped on leaving."""
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "c8env.web.serve", "--host", "127.0.0.1", "--port", str(port),
               "--max-games", str(max_games)]
    if idle_timeout is not None:
        command += ["--idle-timeout", str(idle_timeout)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/api/options", timeout=2).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.1)
        yield port, server
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def run_local(games: int = 200, players: int = 2, agent: str = "greedy", seed: int = 0, max_requests: int = 2000,
              timeout: float = 300.0) -> dict[str, Any]:
    """Start ``c8env serve`` on 127.0.0.1 (a free port, its own process), load it, stop it."""
    with local_server(max(1000, games)) as (port, server):
        cpu_before = _cpu_seconds(server.pid)
        report = asyncio.run(run_load("127.0.0.1", port, games, players, agent, seed, max_requests, timeout))
        cpu_after = _cpu_seconds(server.pid)
        if cpu_before is not None and cpu_after is not None and report["requests"]:
            report["server_cpu_ms_per_request"] = 1000 * (cpu_after - cpu_before) / report["requests"]
        return report


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    parser = argparse.ArgumentParser(prog="python -m c8env.web.loadtest", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200, help="games played at once (default 200)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--agent", default="greedy", help="the agents' spec (default greedy)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-requests", type=int, default=2000, help="requests per game at most")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole run at most")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    report = run_local(args.games, args.players, args.agent, args.seed, args.max_requests, args.timeout)
    print(f"{report['games']} concurrent games ({report['finished']} finished, {report['failed_games']} failed), "
          f"{report['requests']:,} requests in {report['seconds']:.1f} s: {report['requests_per_s']:,.0f} requests/s, "
          f"latency p50 {report['p50_ms']:.1f} ms, p99 {report['p99_ms']:.1f} ms, max {report['max_ms']:.1f} ms, "
          f"{report['errors']} error responses"
          + (f"; server CPU {report['server_cpu_ms_per_request']:.2f} ms per request"
             if "server_cpu_ms_per_request" in report else ""))
    if report["first_failure"]:
        print("first failure:", report["first_failure"])


if __name__ == "__main__":
    main()
