"""How far a search of few samples is from its own limit: on the positions a network meets against greedy
players, the moves of the search at each ``--budgets`` sample count are judged by the mean results of the same
search at ``--reference`` samples.

    python -m training.research.regret --players 4 --hands 80 --budgets 300 1000 3000 --reference 20000

Each searched position gets a regret per budget: the reference's best mean result minus its mean result for the
move the smaller search chose (0 where they agree). The sum over a hand bounds what more samples could add to the
search's win rate under its own model of the game (its belief about the hidden cards, greedy play-outs), as far as
the reference's means are exact; their own noise makes the figure an over-estimate. It prints, per budget, the
mean regret per searched decision and per hand (with the ``win`` reward also as win rate: (n-1)/n of it), and how
often the move differs from the reference's best (training/research/NOTES.md has the figures).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import numpy as np
from tqdm import tqdm

from c8env.agents import load
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS, play_hand
from c8env.observation import StateObservation
from c8env.seeding import derive_seed
from c8env.tools.argcheck import Parser, int_at_least, int_between
from training.research.information import expert_search

DEFAULT_SPEC = "expert:policy=training/research/policies/distill-standard-4p.npz,prior=0.05,last_draws=1"


def win_share(players: int) -> float:
    """Win rate per unit of the ``win`` reward (+1 a win, -1/(n-1) a loss): (n-1)/n."""
    return (players - 1) / players


def positions(driver: str, players: int, seed: int, hand: int) -> list[State]:
    """The positions of seat 0 with a choice in one hand of ``driver`` (seat 0) against greedy players."""
    agents = [load(driver, num_players=players)] + [load("greedy", num_players=players)] * (players - 1)
    found: list[State] = []

    def choose(state: State) -> int:
        player = state.current_player
        if player == 0 and len(state.legal_actions()) > 1:
            found.append(state.copy())
        return agents[player].act(StateObservation(state, player))

    play_hand(State.new(players, seed=derive_seed(seed, hand)), choose, MAX_HAND_STEPS)
    return found


def hand_regrets(spec: str, driver: str, players: int, seed: int, hand: int, budgets: tuple[int, ...],
                 reference: int) -> list[tuple[float, ...]]:
    """Per searched position of one hand: the regret of each budget's move under the reference's means."""
    rows = []
    for index, state in enumerate(positions(driver, players, seed, hand)):
        observation = StateObservation(state, 0)
        judge = expert_search(spec, players, derive_seed(seed, hand, index, 0))
        judge.simulations = reference
        judge.act(observation)
        if judge.last_search is None:  # one candidate, or the guide was sure (confident=)
            continue
        candidates, means = judge.last_search
        row = []
        for budget in budgets:
            search = expert_search(spec, players, derive_seed(seed, hand, index, budget))
            search.simulations = budget
            row.append(float(means.max() - means[candidates.index(search.act(observation))]))
        rows.append(tuple(row))
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.research.regret", description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=DEFAULT_SPEC,
                        help=f"the search, without simulations= (default {DEFAULT_SPEC})")
    parser.add_argument("--driver", default="distill-standard-4p",
                        help="the agent whose hands give the positions (default distill-standard-4p)")
    parser.add_argument("--players", type=int_between(2, 7), default=4, help="players at the table (default 4)")
    parser.add_argument("--hands", type=int_at_least(1), default=40, help="hands played for positions (default 40)")
    parser.add_argument("--budgets", type=int_at_least(1), nargs="+", default=[300, 1000, 3000],
                        help="the sample counts judged (default 300 1000 3000)")
    parser.add_argument("--reference", type=int_at_least(1), default=20000,
                        help="the judge's sample count (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="the hands' and searches' seed (default 0)")
    parser.add_argument("--workers", type=int_at_least(1), default=1, help="processes (the same results for any)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if "simulations=" in args.spec:
        parser.error(f"--spec {args.spec!r} names simulations=; the budgets and --reference set them")
    try:
        reward = expert_search(args.spec, args.players).reward
        load(args.driver, num_players=args.players)
    except ValueError as err:
        parser.fail(err)
    budgets = tuple(args.budgets)
    rows: list[tuple[float, ...]] = []
    work = partial(hand_regrets, args.spec, args.driver, args.players, args.seed, budgets=budgets,
                   reference=args.reference)
    with ProcessPoolExecutor(args.workers) as executor, tqdm(total=args.hands, unit="hand") as bar:
        for found in executor.map(work, range(args.hands)):
            rows.extend(found)
            bar.update()
    regrets = np.array(rows).reshape(-1, len(budgets))
    print(f"{args.spec} against {args.players - 1} greedy, {len(regrets):,} searched positions in {args.hands:,} "
          f"hands of {args.driver} (seed {args.seed}), judged at {args.reference:,} samples:")
    for i, budget in enumerate(budgets):
        per_hand = regrets[:, i].sum() / args.hands
        as_wins = f" ({100 * per_hand * win_share(args.players):.1f} points of win rate)" if reward == "win" else ""
        print(f"  {budget:,} samples: regret {regrets[:, i].mean():.4f} per searched decision, {per_hand:.4f} per "
              f"hand{as_wins}; differs from the judge's best at {np.mean(regrets[:, i] > 0):.1%}")


if __name__ == "__main__":
    main()
