"""Play and print one seeded game: ``python -m c8env.demo --players 2 --rules standard --seed 7``."""

from __future__ import annotations

import argparse
import random

from c8env.actions import action_text
from c8env.cards import card_text
from c8env.engine import PHASE_NAMES, State
from c8env.episode import play_hand


def play_demo(num_players: int, rules: str, seed: int) -> State:
    """Play one hand with uniformly random legal moves, printing every move."""
    state = State.new(num_players, rules, seed=seed)
    rng = random.Random(seed)
    print(f"{num_players} players, rules {rules!r}, seed {seed}; dealer is player {state.dealer}")
    for seat in range(num_players):
        print(f"  player {seat}: {' '.join(card_text(c) for c in state.hand(seat))}")
    print(f"  starter: {card_text(state.top_card)}")
    phases: list[str] = []

    def choose(state: State) -> int:
        phases.append(PHASE_NAMES[state.phase])
        return rng.choice(state.legal_actions())

    def show(state: State, seat: int, action: int) -> None:
        print(f"{len(phases):4d}. player {seat} ({phases[-1]}): {action_text(action):20s} "
              f"cards left {state.sizes[seat]:2d}")

    turn = play_hand(state, choose, on_move=show)
    who = f"player {state.winner}" if state.winner is not None else "nobody (tie)"
    print(f"hand over after {turn} moves ({state.end_reason}); winner: {who}; scores: {state.scores}")
    return state


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (the README's commands are checked against it)."""
    parser = argparse.ArgumentParser(prog="c8env demo", description=__doc__)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    play_demo(args.players, args.rules, args.seed)


if __name__ == "__main__":
    main()
