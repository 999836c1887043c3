"""Speed benchmarks that print figures (never timed assertions).

``python -m c8env.bench engine`` measures engine decisions per second for random
play as an outside Python loop drives it (``state.legal_actions()``,
``random.Random.choice``, ``state.apply``), median of 5 runs, and, when the
``bench`` extra is installed, OpenSpiel's C++ crazy_eights driven by the same
kind of loop in the same process.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Callable

from c8env.engine import State

RUNS = 5


def engine_decisions(num_players: int, decisions: int, seed: int) -> float:
    """Decisions per second of c8env's engine under uniformly random play (new hands dealt as needed)."""
    rng = random.Random(seed)
    deal = seed * 1_000_003
    state = State.new(num_players, "standard", seed=deal)
    start = time.perf_counter()
    for _ in range(decisions):
        if state.hand_over:
            deal += 1
            state = State.new(num_players, "standard", seed=deal)
        state.apply(rng.choice(state.legal_actions()))
    return decisions / (time.perf_counter() - start)


def openspiel_decisions(num_players: int, decisions: int, seed: int) -> float | None:
    """Decisions per second of OpenSpiel's crazy_eights with the same loop; None if not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("crazy_eights", {"players": num_players})
    rng = random.Random(seed)
    state = game.new_initial_state()
    done = 0
    start = time.perf_counter()
    while done < decisions:
        if state.is_terminal():
            state = game.new_initial_state()
        elif state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, probs)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
            done += 1
    return decisions / (time.perf_counter() - start)


def median_rate(measure: Callable[[int, int, int], float | None], num_players: int, decisions: int) -> float | None:
    rates = [measure(num_players, decisions, run) for run in range(RUNS)]
    return None if rates[0] is None else statistics.median(rates)


def bench_engine(decisions: int) -> None:
    print(f"engine: random play, standard rules, decisions/s, median of {RUNS} runs of {decisions:,} decisions")
    print(f"{'players':>7} | {'c8env':>12} | {'OpenSpiel':>12} | ratio")
    for num_players in (2, 4):
        ours = median_rate(engine_decisions, num_players, decisions)
        theirs = median_rate(openspiel_decisions, num_players, decisions)
        other = f"{theirs:12,.0f}" if theirs else f"{'(not installed)':>12}"
        ratio = f"{ours / theirs:.2f}x" if theirs else "-"
        print(f"{num_players:>7} | {ours:12,.0f} | {other} | {ratio}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["engine"], help="what to benchmark")
    parser.add_argument("--decisions", type=int, default=200_000, help="decisions per run")
    args = parser.parse_args(argv)
    if args.what == "engine":
        bench_engine(args.decisions)


if __name__ == "__main__":
    main()
