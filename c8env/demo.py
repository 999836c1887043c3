"""Play and print one seeded game: ``python -m c8env.demo --players 2 --rules standard --seed 7``."""

from __future__ import annotations

import argparse
import random

from c8env.cards import card_text
from c8env.engine import PHASE_NAMES, State, action_text


def play_demo(num_players: int, rules: str, seed: int) -> State:
    """Play one hand with uniformly random legal moves, printing every move."""
    state = State.new(num_players, rules, seed=seed)
    rng = random.Random(seed)
    print(f"{num_players} players, rules {rules!r}, seed {seed}; dealer is player {state.dealer}")
    for seat in range(num_players):
        print(f"  player {seat}: {' '.join(card_text(c) for c in state.hand(seat))}")
    print(f"  starter: {card_text(state.top_card)}")
    turn = 0
    while not state.hand_over:
        seat, phase = state.current_player, PHASE_NAMES[state.phase]
        action = rng.choice(state.legal_actions())
        state.apply(action)
        turn += 1
        print(f"{turn:4d}. player {seat} ({phase}): {action_text(action):20s} cards left {state.sizes[seat]:2d}")
    who = f"player {state.winner}" if state.winner is not None else "nobody (tie)"
    print(f"hand over after {turn} moves ({state.end_reason}); winner: {who}; scores: {state.scores}")
    return state


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    play_demo(args.players, args.rules, args.seed)


if __name__ == "__main__":
    main()
