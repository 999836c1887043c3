"""The games a server keeps: the state stays here, the browser gets one seat's view.

No web framework here: :class:`GameManager` creates, finds and drops games (each under an
unguessable id), keeps uploaded policy files, and raises :class:`GameError` (an HTTP status and
a message naming the problem) for every bad request, leaving the game unchanged. A game's
agents move one at a time through :meth:`Game.advance`, so the page can pace them.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from c8env.actions import NUM_ACTIONS
from c8env.agents import (
    OPTIONS,
    Agent,
    PolicyAgent,
    available,
    load,
    observation_for,
    parse_options,
    shipped_policies,
)
from c8env.engine import IllegalActionError, State
from c8env.episode import MAX_HAND_STEPS
from c8env.rules import preset_names
from c8env.tools.replay import build_replay, move_event
from c8env.web.seat_view import table_view

#: Budget limits of ``expert`` opponents on the server (one agent move holds its game's lock): the caps of
#: :data:`c8env.agents.OPTIONS`, which :meth:`GameManager.agent` applies to every budget option.
MAX_EXPERT_SIMULATIONS = int(OPTIONS["expert"]["simulations"].cap or 0)
MAX_EXPERT_TIME_MS = float(OPTIONS["expert"]["time_ms"].cap or 0)
UPLOAD_PREFIX = "upload:"
#: Moves of the current hand sent with each view (the latest; ``log_start`` says where they begin).
LOG_LIMIT = 200


class GameError(Exception):
    """A request the server refuses: ``status`` (4xx) and a message naming the problem."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _int_in(value: Any, name: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise GameError(400, f"{name}={value!r} is invalid; allowed: an int from {low} to {high}")
    return value


class Game:
    """One game: a human in ``seat``, agents in the other seats, the state, its log and its record."""

    def __init__(self, game_id: str, rules: str, num_players: int, seat: int, episode: str, seed: int,
                 specs: Mapping[int, str], agents: Mapping[int, Agent], labels: Mapping[int, str],
                 clock: Callable[[], float]) -> None:
        self.id = game_id
        self.rules = rules
        self.seat = seat
        self.episode = episode
        self.seed = seed
        self.specs = dict(specs)
        self.labels = dict(labels)
        self.agents = dict(agents)
        self.clock = clock
        self.lock = threading.Lock()
        self.state = State.new(num_players, rules, seed=seed)
        self.hands: list[dict[str, Any]] = [{"deal": self.state.to_dict(), "actions": []}]
        self.log: list[dict[str, Any]] = []
        self.status = "playing"  # playing, finished, error
        self.message: str | None = None
        self.last_seen = clock()

    # ----- what the browser gets ------------------------------------------------------------------
    def phase_status(self) -> str:
        """``your_turn``, ``agent_turn``, ``hand_over`` (a match goes on), ``finished`` or ``error``."""
        if self.status != "playing":
            return self.status
        if self.state.hand_over:
            return "hand_over"
        return "your_turn" if self.state.current_player == self.seat else "agent_turn"

    def view(self) -> dict[str, Any]:
        """The human seat's view: never another hand during play, never the stock's cards."""
        start = max(0, len(self.log) - LOG_LIMIT)
        view = table_view(self.state, self.seat, self.log[start:])
        status = self.phase_status()
        if status != "your_turn":
            view["legal"] = []
        for entry in view["seats"]:
            entry["name"] = "you" if entry["seat"] == self.seat else f"player_{entry['seat']}"
            entry["agent"] = self.labels.get(entry["seat"])
        view.update(log_start=start, game_id=self.id, seat=self.seat, rules=self.rules, episode=self.episode, status=status,
                    message=self.message, moves=len(self.hands[-1]["actions"]), replay_ready=status in ("finished", "error"))
        return view

    # ----- moves ----------------------------------------------------------------------------------
    def slow_to_act(self) -> bool:
        """Is an agent that searches (``expert``) to act? Its move is run off the server's event loop."""
        seat = self.state.current_player
        return (self.status == "playing" and not self.state.hand_over and seat != self.seat
                and self.specs[seat].startswith("expert"))

    def _check_playing(self) -> None:
        if self.status != "playing":
            raise GameError(409, f"the game is over ({self.status}{': ' + self.message if self.message else ''}); "
                                 "download its replay or start a new game")
        if self.state.hand_over:
            raise GameError(409, "the hand is over; deal the next hand (POST .../next_hand) to go on")

    def _record(self, seat: int, action: int) -> None:
        before = self.state.copy()
        self.state.apply(action)
        self.hands[-1]["actions"].append(action)
        self.log.append(move_event(before, self.state, seat, action))
        if self.state.hand_over:
            if self.episode == "hand" or self.state.match_over:
                self.status = "finished"
        elif len(self.hands[-1]["actions"]) >= MAX_HAND_STEPS:
            self.status, self.message = "error", f"hand cut off after {MAX_HAND_STEPS:,} moves: nobody wins it"

    def act(self, action: Any, seat: Any = None) -> dict[str, Any]:
        """The human plays ``action`` (an action id); ``seat``, when given, must be the human's."""
        if seat is not None and seat != self.seat:
            raise GameError(403, f"seat {seat!r} is not yours; you play seat {self.seat}")
        if type(action) is not int or not 0 <= action < NUM_ACTIONS:
            raise GameError(400, f"action={action!r} is invalid; allowed: an action id from 0 to {NUM_ACTIONS - 1}")
        self._check_playing()
        current = self.state.current_player
        if current != self.seat:
            raise GameError(409, f"not your turn: player_{current} ({self.labels[current]}) is to act")
        try:
            self._record(self.seat, action)
        except IllegalActionError as err:
            raise GameError(400, str(err)) from None
        return self.view()

    def advance(self) -> dict[str, Any]:
        """One agent move (the agent to act); an agent that fails ends the game with a message."""
        self._check_playing()
        seat = self.state.current_player
        if seat == self.seat:
            raise GameError(409, "it is your turn: no agent is to act")
        try:
            action = self.agents[seat].act(observation_for(self.agents[seat], self.state, seat))
            self._record(seat, int(action))
        except Exception as err:  # an agent's bug ends its game, never the server
            self.status = "error"
            self.message = f"agent {self.labels[seat]!r} in seat {seat} failed: {type(err).__name__}: {err}"
        return self.view()

    def next_hand(self) -> dict[str, Any]:
        """Deal the next hand of a match."""
        if self.status != "playing" or not self.state.hand_over:
            raise GameError(409, "next_hand needs a finished hand of a match that goes on"
                                 f" (status {self.phase_status()})")
        self.state.next_hand()
        self.hands.append({"deal": self.state.to_dict(), "actions": []})
        self.log = []
        return self.view()

    def replay(self) -> dict[str, Any]:
        """The replay data of a finished game (it holds every hand: only once the game is over)."""
        if self.status not in ("finished", "error"):
            raise GameError(409, f"the game is not over (status {self.phase_status()}); its replay would show hidden cards")
        agents = [None if s == self.seat else self.labels[s] for s in range(self.state.num_players)]
        return build_replay(rules=self.rules, seed=self.seed, episode=self.episode, agents=agents, hands=self.hands,
                            final=self.state, note=self.message)


class GameManager:
    """Every game of a server, each under an unguessable id; idle games are dropped.

    ``idle_seconds``: a game not touched for this long is dropped; ``max_games``: more are refused
    (503) until some end; uploaded policy files go to a private temporary folder.
    """

    def __init__(self, idle_seconds: float = 1800.0, max_games: int = 1000, max_upload_bytes: int = 8 << 20,
                 max_uploads: int = 200, clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_seconds = idle_seconds
        self.max_games = max_games
        self.max_upload_bytes = max_upload_bytes
        self.max_uploads = max_uploads
        self.clock = clock
        self.games: dict[str, Game] = {}
        self.uploads: dict[str, tuple[Path, str]] = {}
        self.lock = threading.Lock()
        self.upload_dir = Path(tempfile.mkdtemp(prefix="c8env-uploads-"))
        self.dropped = 0

    def close(self) -> None:
        """Remove the uploaded files."""
        shutil.rmtree(self.upload_dir, ignore_errors=True)

    # ----- games ----------------------------------------------------------------------------------
    def sweep(self) -> int:
        """Drop the games idle for longer than ``idle_seconds``; returns how many."""
        now = self.clock()
        with self.lock:
            stale = [gid for gid, g in self.games.items() if now - g.last_seen > self.idle_seconds]
            for gid in stale:
                del self.games[gid]
            self.dropped += len(stale)
        return len(stale)

    def get(self, game_id: str) -> Game:
        self.sweep()
        with self.lock:
            game = self.games.get(game_id)
        if game is None:
            raise GameError(404, f"unknown game {game_id[:40]!r} (never created, ended, or dropped after "
                                 f"{self.idle_seconds:g} s idle)")
        game.last_seen = self.clock()
        return game

    def drop(self, game_id: str) -> None:
        self.get(game_id)
        with self.lock:
            self.games.pop(game_id, None)

    def agent(self, spec: Any, rules: str, num_players: int, seed: int) -> tuple[Agent, str]:
        """An agent from a spec the server allows, and its label: a name of ``available()``, ``upload:ID`` of an
        uploaded policy, or ``expert:...`` whose options pass :meth:`check_options` (no paths of the server's disk,
        every budget within its cap)."""
        if not isinstance(spec, str) or not spec:
            raise GameError(400, f"agent spec {str(spec)[:60]!r} is invalid; allowed: {', '.join(available())} "
                                 "or upload:ID")
        if spec.startswith(UPLOAD_PREFIX):
            upload = self.uploads.get(spec[len(UPLOAD_PREFIX):])
            if upload is None:
                raise GameError(400, f"agent spec {spec[:60]!r}: no such uploaded policy (upload it first)")
            return PolicyAgent(upload[0]), f"{UPLOAD_PREFIX}{upload[1]}"
        name, _, option_text = spec.partition(":")
        if name not in available():
            raise GameError(400, f"agent spec {spec[:60]!r} is invalid; allowed: {', '.join(available())}, "
                                 "expert:simulations=N, expert:time_ms=T, or upload:ID")
        try:
            options = parse_options(name, option_text)
        except ValueError as err:
            raise GameError(400, f"agent spec {spec[:100]!r}: {err}") from None
        uploads = self.check_options(name, options, spec)
        try:
            agent = load(spec, rules=rules, num_players=num_players, seed=seed,
                         policies={key: path for key, (path, _) in uploads.items()})
        except ValueError as err:
            message = str(err).replace(str(self.upload_dir), "<uploads>")
            if not message.startswith("agent spec"):
                message = f"agent spec {spec[:100]!r}: {message}"
            raise GameError(400, message[:500]) from None
        label = spec
        for key, (_, filename) in uploads.items():
            label = label.replace(key, f"{UPLOAD_PREFIX}{filename}")
        return agent, label

    def check_options(self, name: str, options: Mapping[str, Any], spec: str) -> dict[str, tuple[Path, str]]:
        """Refuse (``GameError`` 400, one line naming the option) an option of ``spec`` that the server does not
        allow, by its kind in :data:`c8env.agents.OPTIONS`: a policy option that is neither one of its words, a
        shipped policy nor ``upload:ID`` of an uploaded one (no file is opened), a budget past its cap. Returns the
        uploads named: ``upload:ID`` -> (its path, its file name)."""
        uploads: dict[str, tuple[Path, str]] = {}
        for key, value in options.items():
            option = OPTIONS[name][key]
            if option.kind == "policy" and value not in option.words and value not in shipped_policies():
                upload = self.uploads.get(value[len(UPLOAD_PREFIX):]) if value.startswith(UPLOAD_PREFIX) else None
                if upload is None:
                    why = ("names no uploaded policy (upload it first)" if value.startswith(UPLOAD_PREFIX)
                           else "is not allowed on this server (no file of its disk is opened)")
                    allowed = "".join(f"{word!r}, " for word in option.words)
                    raise GameError(400, f"agent spec {spec[:100]!r}: option {key}={value[:60]!r} {why}; allowed: "
                                         f"{allowed}a shipped policy ({', '.join(shipped_policies())}) or upload:ID "
                                         "of an uploaded policy")
                uploads[value] = upload
            elif option.kind == "budget" and not value <= (option.cap or 0):
                raise GameError(400, f"agent spec {spec[:100]!r}: option {key}={value!r:.60} is past this server's "
                                     f"cap; allowed: {option.allowed}, at most {option.cap:g}")
            elif option.kind not in ("policy", "budget", "setting"):  # a kind this server does not know: refused
                raise GameError(400, f"agent spec {spec[:100]!r}: option {key} (of kind {option.kind!r}) is not "
                                     "allowed on this server")
        return uploads

    def create(self, rules: Any = "standard", players: Any = 2, seat: Any = 0, episode: Any = "hand",
               agents: Any = ("greedy",), seed: Any = None) -> Game:
        """A new game; every parameter is checked and a bad one named (``GameError`` 400)."""
        if not isinstance(rules, str) or rules not in preset_names():
            raise GameError(400, f"rules={str(rules)[:60]!r} is invalid; allowed: {', '.join(preset_names())}")
        players = _int_in(players, "players", 2, 7)
        seat = _int_in(seat, "seat", 0, players - 1)
        if episode not in ("hand", "match"):
            raise GameError(400, f"episode={str(episode)[:20]!r} is invalid; allowed: hand, match")
        if seed is None:
            seed = secrets.randbelow(2**31)
        seed = _int_in(seed, "seed", 0, 2**63 - 1)
        if isinstance(agents, str) or not isinstance(agents, Sequence) or not 1 <= len(agents) <= players - 1:
            raise GameError(400, f"agents={str(agents)[:200]} is invalid; allowed: a list of 1 to {players - 1} specs "
                                 "(one per other seat, clockwise from yours, repeated when shorter)")
        others = [(seat + k) % players for k in range(1, players)]
        specs, made, labels = {}, {}, {}
        for i, s in enumerate(others):
            specs[s] = agents[i % len(agents)]
            made[s], labels[s] = self.agent(specs[s], rules, players, seed + s)
        self.sweep()
        with self.lock:
            if len(self.games) >= self.max_games:
                raise GameError(503, f"the server holds {self.max_games} games, its limit; try again later")
            game_id = secrets.token_hex(16)
            try:
                game = Game(game_id, rules, players, seat, episode, seed, specs, made, labels, self.clock)
            except ValueError as err:  # a preset whose deal does not fit this many players
                raise GameError(400, str(err)) from None
            self.games[game_id] = game
        return game

    # ----- uploaded policies ----------------------------------------------------------------------
    def add_policy(self, data: bytes, filename: str = "policy.npz") -> dict[str, Any]:
        """Keep an uploaded policy file (size-limited, read by NumPy without pickle); returns its spec."""
        if len(data) > self.max_upload_bytes:
            raise GameError(413, f"the policy file has {len(data):,} bytes; the limit is {self.max_upload_bytes:,}")
        if not data:
            raise GameError(400, "the policy file is empty")
        name = Path(str(filename)).name[:80] or "policy.npz"
        with self.lock:
            if len(self.uploads) >= self.max_uploads:
                raise GameError(503, f"the server holds {self.max_uploads} uploaded policies, its limit")
            upload_id = secrets.token_hex(12)
            path = self.upload_dir / f"{upload_id}.npz"
        path.write_bytes(data)
        try:
            PolicyAgent(path)  # np.load(allow_pickle=False) and the format checks
        except ValueError as err:
            path.unlink(missing_ok=True)
            why = str(err).replace(repr(str(path)), "the file").replace(str(path), "the file")[:300]
            raise GameError(400, f"{name!r}: {why}" if "not a c8env policy file" in why
                            else f"{name!r} is not a c8env policy file: {why}") from None
        with self.lock:
            self.uploads[upload_id] = (path, name)
        return {"spec": UPLOAD_PREFIX + upload_id, "name": name}


__all__ = ["Game", "GameError", "GameManager"]
