"""Play Crazy Eights yourself against agents in the terminal.

``c8env play --agent ppo-standard-2p`` deals a seeded hand with you in seat 0 and the agent in the
other seats. On your turn the legal moves are listed; answer with a move's number, a card (``8H``,
``10d``, ``q♠``), a suit to declare (``S``), or a word (``draw``, ``pass``, ``announce``, ``stop``);
``quit`` ends the game. ``--episode match`` plays whole matches to the preset's target.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, PASS, STOP, action_text
from c8env.agents import Agent, available, load, observation_for
from c8env.cards import NUM_CARDS, SUITS, card_text, parse_card
from c8env.engine import PHASE_NAMES, Phase, State
from c8env.episode import MAX_HAND_STEPS, play_hand
from c8env.rules import RuleSet, load_rules
from c8env.text import direction_text, follow_text, move_events
from c8env.tools.argcheck import Parser, check_rules_arg, int_at_least, int_between

_WORDS = {"draw": DRAW, "pass": PASS, "announce": ANNOUNCE, "stop": STOP}
_QUIT = ("q", "quit", "exit")


class QuitGame(Exception):
    """The human player typed ``quit``."""


def parse_move(text: str, legal: Sequence[int], hand: Sequence[int] | None = None) -> int:
    """The action id a typed answer names among ``legal`` (1-based number, card, suit or word).

    Raises ``ValueError`` with the reason and the legal moves when the answer names no legal move
    (with ``hand``, the player's cards: "you do not hold 8H" when that is the reason).
    """
    answer = text.strip()
    lowered = answer.lower()
    if lowered in _QUIT:
        raise QuitGame
    listing = "; ".join(f"{i} = {action_text(a)}" for i, a in enumerate(legal, 1))
    if lowered.isdigit():
        index = int(lowered)
        if 1 <= index <= len(legal):
            return legal[index - 1]
        raise ValueError(f"{answer!r}: no move has that number; legal: {listing}")
    for prefix in ("play ", "declare "):
        if lowered.startswith(prefix):
            lowered = lowered[len(prefix):].strip()
    if lowered.split(" ")[0] in _WORDS:
        action = _WORDS[lowered.split(" ")[0]]
    elif len(lowered) == 1 and lowered.upper() in SUITS:
        action = DECLARE_BASE + SUITS.index(lowered.upper())
    else:
        try:
            action = parse_card(lowered)
        except ValueError:
            raise ValueError(f"{answer!r} is not a move; type a number, a card like 8H, a suit, "
                             f"draw, pass, announce, stop or quit; legal: {listing}") from None
    if action not in legal:
        if hand is not None and action < NUM_CARDS and action not in hand:
            raise ValueError(f"{answer!r}: you do not hold {card_text(action)}; legal: {listing}")
        raise ValueError(f"{answer!r} ({action_text(action)}) is not legal now; legal: {listing}")
    return action


def move_label(state: State, action: int) -> str:
    """An action's words for the human, with what it costs where that is not obvious."""
    text = action_text(action)
    if action == PASS and state.phase is Phase.ANNOUNCE:
        penalty = state.rules.last_card_penalty
        return f"pass (decline to announce: you draw {penalty} penalty card{'s' * (penalty != 1)})"
    if action == DRAW and state.pending:
        return f"draw (take the penalty: {state.pending} card{'s' * (state.pending != 1)}, ending your turn)"
    return text


def _table(state: State, you: int) -> list[str]:
    """What the human may see: the top card, what to follow, everyone's card count, your hand."""
    counts = ", ".join(f"{'you' if seat == you else f'player_{seat}'} {state.sizes[seat]}"
                       for seat in range(state.num_players))
    return [f"top card {card_text(state.top_card)} | follow {follow_text(state)} | stock {len(state.stock)} | "
            f"direction {direction_text(state)} | cards: {counts}"
            + (f" | pending draw {state.pending}" if state.pending else ""),
            f"your hand: {' '.join(card_text(c) for c in state.hand(you))}"]


def _play_with_you(state: State, agents: dict[int, Agent], you: int, ask: Callable[[str], str],
                   say: Callable[[str], None]) -> None:
    """Play one hand of ``state`` to its end: ``agents`` act in their seats, ``ask`` gets your moves."""
    before: dict[str, object] = {}

    def choose(state: State) -> int:
        seat = state.current_player
        before["size"], before["hand"], before["state"] = state.sizes[seat], set(state.hand(you)), state.copy()
        if seat in agents:
            return agents[seat].act(observation_for(agents[seat], state, seat))
        legal = state.legal_actions()
        for line in _table(state, you):
            say(line)
        say(f"your move ({PHASE_NAMES[state.phase]}): "
            + "  ".join(f"[{i}] {move_label(state, a)}" for i, a in enumerate(legal, 1)))
        while True:
            try:
                return parse_move(ask("> "), legal, state.hand(you))
            except ValueError as err:
                say(str(err))

    def show(state: State, seat: int, action: int) -> None:
        if seat in agents:
            drawn = state.sizes[seat] - before["size"] if action in (DRAW, PASS) else 0
            say(f"player_{seat}: {action_text(action)}" + (f" ({drawn} card{'s' * (drawn != 1)})" if drawn > 0 else ""))
        else:
            new = [c for c in state.hand(you) if c not in before["hand"]]
            say(f"you: {action_text(action)}" + (f" -> you got {' '.join(card_text(c) for c in new)}" if new else ""))
        for event in move_events(before["state"], state, seat, action, "you" if seat == you else ""):
            if not event.startswith("hand over"):
                say(f"  ({event})")

    play_hand(state, choose, on_move=show)
    if not state.hand_over:
        say(f"hand cut off after {MAX_HAND_STEPS:,} moves: nobody wins it")
        return
    winner = "you" if state.winner == you else ("nobody (tie)" if state.winner is None else f"player_{state.winner}")
    say(f"hand over ({state.end_reason}): winner {winner}")
    for seat in range(state.num_players):
        if seat != you:
            say(f"  player_{seat} held: {' '.join(card_text(c) for c in state.hand(seat)) or '-'}")
    say(f"scores: {state.scores}")


def play_game(agent_specs: Sequence[str], num_players: int = 2, rules: str | RuleSet = "standard", seat: int = 0,
              seed: int | None = None, episode: str = "hand", ask: Callable[[str], str] = input,
              say: Callable[[str], None] = print) -> State:
    """Play a hand (or a whole match) with you in ``seat`` and ``agent_specs`` repeated around the others.

    Returns the final state. ``ask``/``say`` replace ``input``/``print`` (scripted play, tests).
    """
    if episode not in ("hand", "match"):
        raise ValueError(f"episode={episode!r} is invalid; allowed: hand, match")
    if not agent_specs:
        raise ValueError("give at least one agent spec; available: " + ", ".join(available()))
    rules_name = rules if isinstance(rules, str) else "custom"
    rules = load_rules(rules)
    state = State.new(num_players, rules, seed=seed)
    if not isinstance(seat, int) or not 0 <= seat < state.num_players:
        raise ValueError(f"seat={seat!r} is invalid; allowed: an int from 0 to {state.num_players - 1}")
    others = [s for s in range(state.num_players) if s != seat]
    specs = {s: agent_specs[i % len(agent_specs)] for i, s in enumerate(others)}
    agents = {s: load(spec, rules=rules, num_players=state.num_players, seed=None if seed is None else seed + s)
              for s, spec in specs.items()}
    say(f"Crazy Eights, {state.num_players} players, rules {rules_name!r}; you are player_{seat}; "
        + ", ".join(f"player_{s} is {spec}" for s, spec in specs.items()))
    while True:
        say(f"--- hand {state.hands_played + 1}, dealer player_{state.dealer} ---")
        _play_with_you(state, agents, seat, ask, say)
        if episode == "hand" or not state.hand_over or state.match_over:
            break
        state.next_hand()
    if episode == "match" and state.match_over:
        winner = state.match_winner
        say("match over: " + ("you win" if winner == seat else f"player_{winner} wins"))
    return state


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (the docs' commands are checked against it)."""
    parser = Parser(prog="c8env play", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", action="append", metavar="SPEC",
                        help="opponent spec, repeated around the table (default greedy); one of "
                             + ", ".join(available()) + ", expert:simulations=N, or a .npz path")
    parser.add_argument("--players", type=int_between(2, 7), default=2)
    parser.add_argument("--rules", default="standard", help="preset name or YAML path")
    parser.add_argument("--seat", type=int_at_least(0), default=0, help="your seat (0 .. players-1)")
    parser.add_argument("--seed", type=int_at_least(0), default=None, help="deal seed (default: fresh)")
    parser.add_argument("--episode", default="hand", choices=("hand", "match"))
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_rules_arg(parser, args.rules)
    try:
        play_game(args.agent or ["greedy"], args.players, args.rules, args.seat, args.seed, args.episode)
    except ValueError as err:
        parser.exit(2, f"c8env play: error: {err}\n")
    except (QuitGame, EOFError, KeyboardInterrupt):
        print("\ngame abandoned")


if __name__ == "__main__":
    main()
