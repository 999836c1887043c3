"""Watch one seeded hand between two built-in agents, move by move, with every card face up:
``python -m c8env.tools.demo --players 2 --rules standard --seed 7`` (what ``make demo`` runs).

Each move says who did what, what a special card does, when the stock is reshuffled,
and how many cards each player has left; a summary ends the hand. ``--agents`` picks
the players (repeated around the table; default ``greedy expert:simulations=20``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from c8env.actions import DRAW, PASS, action_text
from c8env.agents import load, observation_for
from c8env.cards import NUM_CARDS, card_text
from c8env.engine import State
from c8env.episode import play_hand
from c8env.rules import RuleSet, load_rules
from c8env.text import direction_text, follow_text, move_events
from c8env.tools.argcheck import Parser, check_rules_arg, int_at_least, int_between

DEFAULT_AGENTS = ("greedy", "expert:simulations=20")


def _rules_summary(rules: RuleSet) -> str:
    special = ", ".join(f"{key} {value if isinstance(value, str) else 'draw ' + str(value['draw'])}"
                        for key, value in rules.effects.items())
    return (f"{rules.wild_rank}s are wild" + (f"; special cards: {special}" if special else "")
            + ("; say \"last card\" with one card left" if rules.last_card_call else ""))


def play_demo(num_players: int = 2, rules: str | RuleSet = "standard", seed: int = 7,
              agents: Sequence[str] = DEFAULT_AGENTS, say: Callable[[str], None] = print) -> State:
    """Play one hand between built-in agents (``agents`` repeated around the table), narrating every move."""
    name = rules if isinstance(rules, str) else "custom"
    rules = load_rules(rules)
    state = State.new(num_players, rules, seed=seed)
    specs = [agents[i % len(agents)] for i in range(num_players)]
    players = [load(spec, rules=rules, num_players=num_players, seed=seed + i) for i, spec in enumerate(specs)]
    label = [f"player_{i} ({spec.split(':')[0]})" for i, spec in enumerate(specs)]
    say(f"Crazy Eights: {num_players} players, rules {name!r} ({_rules_summary(rules)}), seed {seed}")
    say("Goal: be the first to play all your cards. Play a card of the suit or rank to follow, or a wild card "
        "and name a suit; who cannot play draws.")
    say(f"Dealer: player_{state.dealer}; play goes {direction_text(state)}. Hands (face up for the demo):")
    for seat in range(num_players):
        say(f"  {label[seat]}: {' '.join(card_text(c) for c in state.hand(seat))}")
    say(f"Starter: {card_text(state.top_card)} (follow {follow_text(state)})")
    played = [0] * num_players
    drawn = [0] * num_players
    before: dict[str, State] = {}

    def choose(state: State) -> int:
        seat = state.current_player
        before["state"] = state.copy()
        return players[seat].act(observation_for(players[seat], state, seat))

    def show(state: State, seat: int, action: int) -> None:
        old = before["state"]
        gained = state.sizes[seat] - old.sizes[seat]
        if 0 <= action < NUM_CARDS:
            played[seat] += 1
        drawn[seat] += max(gained, 0)
        what = action_text(action)
        if action in (DRAW, PASS) and gained > 0:
            new = sorted(set(state.hand(seat)) - set(old.hand(seat))) or state.hand(seat)[-1:]
            what += f" ({gained} card{'s' * (gained != 1)}: {' '.join(card_text(c) for c in new)}"
            what += "…)" if gained > len(new) else ")"
        say(f"{label[seat]:>22}: {what:<34} left {state.sizes[seat]:>2}")
        for event in move_events(old, state, seat, action, f"player_{seat}"):
            if not event.startswith("hand over"):
                say(f"{'':>24}-> {event}")

    moves = play_hand(state, choose, on_move=show)
    say("")
    if not state.hand_over:
        say(f"The hand was cut off after {moves} moves.")
        return state
    reason = {"out": "went out", "blocked": "held the fewest points when nobody could move",
              "stop": "held the fewest points when stop was called", "stock": "held the fewest points when the stock ran out"}
    if state.winner is None:
        say(f"Summary: after {moves} moves the hand ended ({state.end_reason}) in a tie: nobody wins.")
    else:
        say(f"Summary: {label[state.winner]} won after {moves} moves: {reason.get(state.end_reason, state.end_reason)}.")
    for seat in range(num_players):
        left = " ".join(card_text(c) for c in state.hand(seat)) or "-"
        say(f"  {label[seat]}: played {played[seat]} cards, drew {drawn[seat]}, holds {left} "
            f"({state.hand_points(seat)} points)")
    say(f"Match scores (the winner scores the points left in the other hands): {state.scores}")
    return state


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (the docs' commands are checked against it)."""
    parser = Parser(prog="c8env demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int_between(2, 7), default=2)
    parser.add_argument("--rules", default="standard", help="preset name or YAML path")
    parser.add_argument("--seed", type=int_at_least(0), default=7)
    parser.add_argument("--agents", nargs="+", metavar="SPEC", default=list(DEFAULT_AGENTS),
                        help="agent specs, repeated around the table (default: greedy expert:simulations=20)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    rules = check_rules_arg(parser, args.rules)
    for spec in args.agents:
        try:
            load(spec, rules=rules, num_players=args.players, seed=0)
        except ValueError as err:
            parser.error(f"argument --agents: {err}")
    play_demo(args.players, args.rules, args.seed, args.agents)


if __name__ == "__main__":
    main()
