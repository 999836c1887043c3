"""Replays: a finished game as data, played back move by move.

A replay file is JSON (``c8env serve`` writes one for every finished game)::

    {"format": "c8env-replay", "version": 1,
     "rules": "standard",                 # preset name (or a RuleSet mapping)
     "num_players": 2, "episode": "hand", # or "match"
     "seed": 1234,                        # the State's seed: it drives the reshuffles and later deals
     "agents": [null, "greedy"],          # per seat: an agent spec, or null for a person
     "hands": [{"deal": {...State.to_dict() at the deal...}, "actions": [33, 56, ...]}, ...],
     "final": {...State.to_dict() at the end...},
     "result": {"winner": 0, "reason": "out", "scores": [...], ...}}

Playing a replay rebuilds the first deal with ``State.from_dict(deal, rules, seed=seed)``,
applies every action, deals each next hand with ``State.next_hand()`` (checked against the
recorded deal) and checks the final state against ``final``: the game is reproduced exactly.

``c8env replay FILE`` steps through a replay in the terminal, forwards and backwards, from one
seat's view (``--seat N``: the other hands hidden, their draws shown as counts) or with all
hands open (the default); ``--all`` prints every step at once.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from c8env.actions import DRAW, NUM_ACTIONS, PASS, action_text
from c8env.cards import card_text
from c8env.engine import PHASE_NAMES, IllegalActionError, State
from c8env.rules import load_rules
from c8env.text import follow_text

FORMAT = "c8env-replay"
VERSION = 1
#: Largest replay file read (bytes); a long match is well under 1 MB.
MAX_REPLAY_BYTES = 20_000_000
_KEYS = {"format", "version", "rules", "num_players", "episode", "seed", "agents", "hands", "final", "result",
         "created"}


def move_event(before: State, after: State, seat: int, action: int) -> dict[str, Any]:
    """One move as data: ``seat``, ``action``, ``text`` (the public words: an opponent's draw is a
    count) and ``drawn`` (the card texts the mover received: private to ``seat``)."""
    gained = Counter(after.hand(seat)) - Counter(before.hand(seat))
    drawn = [card_text(c) for c in sorted(gained.elements())]
    if action == DRAW and before.pending:
        text = f"takes the penalty ({len(drawn)} card{'s' * (len(drawn) != 1)})"
    elif action == PASS and PHASE_NAMES[before.phase] == "announce":
        text = "does not announce last card" + (f" (penalty: {len(drawn)} card{'s' * (len(drawn) != 1)})"
                                                 if drawn else "")
    elif action in (DRAW, PASS):
        text = action_text(action) + (f" ({len(drawn)} card{'s' * (len(drawn) != 1)})" if drawn else "")
    else:
        text = action_text(action)
    if after.hand_over:
        who = "nobody (tie)" if after.winner is None else f"player_{after.winner}"
        text += f"; hand over ({after.end_reason}): winner {who}"
    return {"seat": seat, "action": action, "text": text, "drawn": drawn}


def event_for(event: Mapping[str, Any], viewer: int | None) -> dict[str, Any]:
    """``event`` as ``viewer`` may see it: the drawn cards only for their owner (``None``: all open)."""
    out = dict(event)
    if viewer is not None and event["seat"] != viewer:
        out.pop("drawn", None)
    return out


def result_of(state: State) -> dict[str, Any]:
    """The outcome of a finished hand (and of the match, when it ended)."""
    return {"winner": state.winner, "reason": state.end_reason, "scores": list(state.scores),
            "hand_points": [state.hand_points(s) for s in range(state.num_players)],
            "hands_played": state.hands_played, "match_over": state.match_over, "match_winner": state.match_winner}


def build_replay(*, rules: str | Mapping[str, Any], seed: int, episode: str, agents: Sequence[str | None],
                 hands: Sequence[Mapping[str, Any]], final: State, note: str | None = None) -> dict[str, Any]:
    """The replay data of a finished game (``hands``: ``{"deal": to_dict(), "actions": [...]}`` per hand)."""
    result = result_of(final) if final.hand_over else {"winner": None, "reason": None}
    if note:
        result["note"] = note
    return {"format": FORMAT, "version": VERSION, "rules": rules if isinstance(rules, str) else dict(rules),
            "num_players": final.num_players, "episode": episode, "seed": seed, "agents": list(agents),
            "hands": [{"deal": dict(h["deal"]), "actions": list(h["actions"])} for h in hands],
            "final": final.to_dict(), "result": result}


def _int(value: Any, name: str, low: int, high: int | None = None) -> int:
    if type(value) is not int or value < low or (high is not None and value > high):
        raise ValueError(f"replay: {name}={value!r} is invalid; allowed: an int from {low}"
                         + (f" to {high}" if high is not None else " up"))
    return value


def check_replay(data: Any) -> dict[str, Any]:
    """Validate replay data (types, keys); raises ``ValueError`` naming the first problem."""
    if not isinstance(data, Mapping):
        raise ValueError("replay: expected a JSON object")
    unknown = set(data) - _KEYS
    if unknown:
        raise ValueError(f"replay: unknown keys {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"replay: format/version {data.get('format')!r}/{data.get('version')!r}; "
                         f"expected {FORMAT!r}/{VERSION}")
    for key in ("rules", "num_players", "episode", "seed", "agents", "hands", "final"):
        if key not in data:
            raise ValueError(f"replay: missing key {key!r}")
    if not isinstance(data["rules"], (str, Mapping)):
        raise ValueError("replay: rules must be a preset name or a mapping of RuleSet fields")
    load_rules(data["rules"])
    n = _int(data["num_players"], "num_players", 2, 7)
    _int(data["seed"], "seed", 0)
    if data["episode"] not in ("hand", "match"):
        raise ValueError(f"replay: episode={data['episode']!r} is invalid; allowed: hand, match")
    agents = data["agents"]
    if not isinstance(agents, list) or len(agents) != n or not all(a is None or isinstance(a, str) for a in agents):
        raise ValueError(f"replay: agents must be a list of {n} specs (null for a person)")
    hands = data["hands"]
    if not isinstance(hands, list) or not hands:
        raise ValueError("replay: hands must be a non-empty list of {deal, actions}")
    for i, hand in enumerate(hands):
        if not isinstance(hand, Mapping) or set(hand) != {"deal", "actions"} or not isinstance(hand["deal"], Mapping):
            raise ValueError(f"replay: hands[{i}] must be an object with keys deal and actions")
        actions = hand["actions"]
        if not isinstance(actions, list):
            raise ValueError(f"replay: hands[{i}].actions must be a list of action ids")
        for j, action in enumerate(actions):
            _int(action, f"hands[{i}].actions[{j}]", 0, NUM_ACTIONS - 1)
    if not isinstance(data["final"], Mapping):
        raise ValueError("replay: final must be a State.to_dict() object")
    return dict(data)


@dataclass
class Frame:
    """One step of a replay: the state after ``event`` (``None``: a fresh deal) in hand ``hand``."""

    state: State
    hand: int
    event: dict[str, Any] | None


def play_replay(data: Any, on_frame: Callable[[Frame], None] | None = None) -> list[Frame]:
    """Play a replay back: every frame (each deal and the state after each action).

    Raises ``ValueError`` when the file is malformed, an action is illegal, a later deal or the
    final state differs from the recording (the replay does not reproduce the game).
    """
    data = check_replay(data)
    rules = load_rules(data["rules"])
    try:
        state = State.from_dict(data["hands"][0]["deal"], rules=rules, seed=data["seed"])
    except ValueError as err:
        raise ValueError(f"replay: hands[0].deal: {err}") from None
    if state.num_players != data["num_players"]:
        raise ValueError(f"replay: the deal has {state.num_players} players, num_players says {data['num_players']}")
    frames: list[Frame] = []

    def emit(frame: Frame) -> None:
        frames.append(frame)
        if on_frame is not None:
            on_frame(frame)

    for i, hand in enumerate(data["hands"]):
        if i > 0:
            try:
                state.next_hand()
            except ValueError as err:
                raise ValueError(f"replay: hands[{i}]: {err}") from None
            if state.to_dict() != dict(hand["deal"]):
                raise ValueError(f"replay: hands[{i}].deal differs from the deal the engine makes (seed {data['seed']})")
        emit(Frame(state.copy(), i, None))
        for j, action in enumerate(hand["actions"]):
            seat, before = state.current_player, state.copy()
            try:
                state.apply(action)
            except IllegalActionError as err:
                raise ValueError(f"replay: hands[{i}].actions[{j}]: {err}") from None
            emit(Frame(state.copy(), i, move_event(before, state, seat, action)))
    if state.to_dict() != dict(data["final"]):
        raise ValueError("replay: the final state differs from the recorded one; the replay does not reproduce the game")
    return frames


def load_replay_file(path: str | Path) -> dict[str, Any]:
    """Read and validate a replay file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"replay file {str(path)!r} does not exist")
    if path.stat().st_size > MAX_REPLAY_BYTES:
        raise ValueError(f"replay file {str(path)!r} is larger than {MAX_REPLAY_BYTES:,} bytes")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"replay file {str(path)!r} is not JSON: {err}") from None
    except RecursionError:
        raise ValueError(f"replay file {str(path)!r}: arrays or objects nested too deeply to be a replay") from None
    except ValueError as err:  # an integer past Python's digit limit
        raise ValueError(f"replay file {str(path)!r} cannot be read: {str(err)[:120]}") from None
    return check_replay(data)


# ----- the terminal viewer -------------------------------------------------------------------------------
def frame_text(frame: Frame, seat: int | None, agents: Sequence[str | None]) -> list[str]:
    """A frame as lines of text for ``seat`` (``None``: every hand open)."""
    state = frame.state
    lines = []
    if frame.event is None:
        lines.append(f"--- hand {frame.hand + 1}: dealt, dealer player_{state.dealer} ---")
    else:
        event = event_for(frame.event, seat)
        who = f"player_{event['seat']}"
        got = f" -> got {' '.join(event['drawn'])}" if event.get("drawn") else ""
        lines.append(f"{who}: {event['text']}{got}")
    lines.append(f"top card {card_text(state.top_card)} | follow {follow_text(state)} | stock {len(state.stock)} | "
                 f"direction {'clockwise' if state.direction == 1 else 'counter-clockwise'}"
                 + (f" | pending draw {state.pending}" if state.pending else ""))
    for s in range(state.num_players):
        shown = " ".join(card_text(c) for c in state.hand(s)) if seat is None or s == seat else ""
        marker = "*" if s == state.current_player and not state.hand_over else " "
        name = agents[s] or "person"
        lines.append(f"{marker}player_{s} ({name}) {state.sizes[s]:>2} cards, score {state.scores[s]:>4}  {shown}")
    return lines


def view_replay(data: Mapping[str, Any], seat: int | None = None, ask: Callable[[str], str] = input,
                say: Callable[[str], None] = print, show_all: bool = False) -> list[Frame]:
    """Step through a replay: Enter or ``n`` forwards, ``b`` back, a number jumps to that step,
    ``q`` quits; ``show_all`` prints every step without asking."""
    frames = play_replay(data)
    agents = data["agents"]
    if seat is not None and not 0 <= seat < data["num_players"]:
        raise ValueError(f"seat={seat!r} is invalid; allowed: an int from 0 to {data['num_players'] - 1}")
    say(f"replay: {data['num_players']} players, rules {data['rules']!r}, episode {data['episode']}, seed {data['seed']}, "
        f"{len(frames) - 1} steps; " + ("all hands open" if seat is None else f"seen by player_{seat}"))
    if show_all:
        for i, frame in enumerate(frames):
            say(f"[step {i}]")
            for line in frame_text(frame, seat, agents):
                say(line)
    else:
        i = 0
        while True:
            say(f"[step {i}/{len(frames) - 1}]")
            for line in frame_text(frames[i], seat, agents):
                say(line)
            answer = ask("(Enter/n next, b back, NUMBER jump, q quit) > ").strip().lower()
            if answer in ("q", "quit", "exit"):
                break
            if answer == "b":
                i = max(0, i - 1)
            elif answer.isdigit():
                i = min(int(answer), len(frames) - 1)
            elif answer in ("", "n"):
                if i == len(frames) - 1:
                    break
                i += 1
            else:
                say(f"{answer!r}: type Enter or n (next), b (back), a step number, or q (quit)")
    result = data.get("result") or {}
    if result.get("winner") is not None or result.get("reason"):
        say(f"result: winner {result.get('winner')}, reason {result.get('reason')}, scores {result.get('scores')}")
    return frames


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(prog="c8env replay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="a replay JSON file (downloaded from c8env serve)")
    view = parser.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, default=None, help="see the game as this seat (others' hands hidden)")
    view.add_argument("--open", action="store_true", help="all hands open (the default)")
    parser.add_argument("--all", action="store_true", help="print every step at once instead of stepping")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        data = load_replay_file(args.file)
        view_replay(data, seat=args.seat, show_all=args.all)
    except ValueError as err:
        parser.exit(2, f"c8env replay: error: {err}\n")
    except (EOFError, KeyboardInterrupt):
        print()


if __name__ == "__main__":
    main()
