"""The FastAPI application of ``c8env serve``: a JSON API and the static page.

Endpoints (every error is a 4xx JSON ``{"error": "..."}`` naming the problem; the game is unchanged; a bug of the
server's own is a 500 JSON error without its traceback):

=======  ==================================  =================================================================
GET      /                                   the page (``static/index.html``)
GET      /api/options                        presets, agent specs, player counts, limits (``caps``: each budget's)
GET      /api/status                         games held, games dropped as idle, uploads held (for soak tests)
POST     /api/games                          new game ``{rules, players, seat, episode, agents, seed?}`` -> view
GET      /api/games/{id}                     the human seat's view
POST     /api/games/{id}/actions             ``{action, seat?}``: the human's move -> view
POST     /api/games/{id}/advance             one agent move -> view
POST     /api/games/{id}/next_hand           deal the next hand of a match -> view
GET      /api/games/{id}/replay              the replay JSON of a finished game (a download)
DELETE   /api/games/{id}                     drop a game
POST     /api/policies?name=FILE.npz         upload a policy file (raw body, size-limited) -> ``{spec}``
POST     /api/replays                        a replay JSON -> its frames, every hand open
=======  ==================================  =================================================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from c8env.agents import OPTIONS, available
from c8env.agents.catalog import catalog
from c8env.rules import preset_names
from c8env.tools.replay import MAX_REPLAY_BYTES, play_replay
from c8env.web.games import MAX_EXPERT_SIMULATIONS, MAX_EXPERT_TIME_MS, Game, GameError, GameManager
from c8env.web.seat_view import table_view

STATIC = Path(__file__).parent / "static"
#: Largest JSON body of the game endpoints (a new game, a move: well under 1 kB).
MAX_BODY_BYTES = 64 << 10
#: Deepest nesting of arrays and objects read in a JSON body (a replay needs 6).
MAX_JSON_DEPTH = 32
#: Most digits of an integer read in a JSON body (seeds have at most 19).
MAX_INT_DIGITS = 40


class NewGame(BaseModel):
    """The body of ``POST /api/games``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    rules: str = "standard"
    players: int = 2
    seat: int = 0
    episode: str = "hand"
    agents: list[str] = Field(default_factory=lambda: ["greedy"])
    seed: int | None = None


class Move(BaseModel):
    """The body of ``POST /api/games/{id}/actions``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    action: int
    seat: int | None = None


async def _body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) past ``limit`` bytes without reading it all."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise GameError(413, f"the request body has {int(declared):,} bytes; the limit is {limit:,}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise GameError(413, f"the request body is larger than the limit of {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class _Refused(ValueError):
    """A JSON text that parses but that the server will not read (raised from the parser's hooks)."""


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"the key {key[:40]!r} appears twice in one object")
        out[key] = value
    return out


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is out of range (larger than a float can hold)")
    return value


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"a number has {digits:,} digits; at most {MAX_INT_DIGITS} are read")
    return int(text)


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _check_tree(data: Any) -> None:
    """Refuse nesting deeper than ``MAX_JSON_DEPTH`` and strings that are not text (a lone UTF-16 surrogate, which
    JSON's ``\\ud800`` escape or its decoder lets through, and which no answer could encode), without recursion."""
    stack = [(data, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as err:
                raise ValueError(f"it is not UTF-8 text (a string holds the lone surrogate "
                                 f"{item[err.start]!r}, which is not a character)") from None
        elif isinstance(item, (dict, list)):
            if level > MAX_JSON_DEPTH:
                raise ValueError(f"arrays or objects are nested too deeply (the limit is {MAX_JSON_DEPTH} levels)")
            if isinstance(item, dict):
                stack.extend((key, level) for key in item)
                stack.extend((child, level + 1) for child in item.values())
            else:
                stack.extend((child, level + 1) for child in item)


def parse_json(raw: bytes) -> Any:
    """Strict JSON: UTF-8 (or -16/-32) text; no duplicate keys, NaN, Infinity, numbers past a float's range,
    integers of more than ``MAX_INT_DIGITS`` digits or lone surrogates; nested at most ``MAX_JSON_DEPTH`` deep.
    Raises ``ValueError`` with one line naming the problem."""
    try:
        data = json.loads(raw, object_pairs_hook=_unique_object, parse_float=_finite_float, parse_int=_bounded_int,
                          parse_constant=_no_constant)
    except _Refused as err:
        raise ValueError(str(err)) from None
    except json.JSONDecodeError as err:
        raise ValueError(f"it is not valid JSON ({err})") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"it is not UTF-8 text ({err.reason} at byte {err.start})") from None
    except RecursionError:
        raise ValueError(f"arrays or objects are nested too deeply (the limit is {MAX_JSON_DEPTH} levels)") from None
    _check_tree(data)
    return data


def _validation_text(err: ValidationError) -> str:
    problems = []
    for e in err.errors():
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        problems.append(f"{where}: {e.get('msg')}")
    return "malformed request: " + "; ".join(problems)


async def json_body(request: Request, model: type[BaseModel]) -> BaseModel:
    """The request's JSON body as a ``model``; 415 for a body that says it is not JSON, 413 past
    ``MAX_BODY_BYTES``, 422 naming the problem for anything else that is not a valid ``model``."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and kind != "application/json" and not (kind.startswith("application/") and kind.endswith("+json")):
        raise GameError(415, f"the body must be JSON (Content-Type: application/json), not {kind[:60]!r}")
    raw = await _body(request, MAX_BODY_BYTES)
    if not raw.strip():
        raise GameError(422, "malformed request: the body is empty; send a JSON object")
    try:
        data = parse_json(raw)
    except ValueError as err:
        raise GameError(422, f"malformed request: the body is refused: {err}") from None
    if not isinstance(data, dict):
        raise GameError(422, f"malformed request: the body must be a JSON object, not {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise GameError(422, _validation_text(err)) from None


def locked(game: Game, method: Callable[..., Any], *args: Any, response: bool = True) -> Any:
    """``method(*args)`` under the game's lock, as a JSONResponse; 409 while another request holds it."""
    if not game.lock.acquire(blocking=False):
        raise GameError(409, "the game is busy with another request (an agent is thinking); try again")
    try:
        out = method(*args)
    finally:
        game.lock.release()
    return JSONResponse(out) if response else out


def create_app(manager: GameManager | None = None) -> FastAPI:
    """The application; ``manager`` holds the games (a fresh :class:`GameManager` by default)."""
    games = manager if manager is not None else GameManager()
    app = FastAPI(title="c8env", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.games = games

    @app.exception_handler(GameError)
    async def game_error(request: Request, err: GameError) -> JSONResponse:
        return JSONResponse({"error": err.message}, status_code=err.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, err: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": _validation_text(err)}, status_code=422)  # type: ignore[arg-type]

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": f"{err.detail} ({request.method} {request.url.path[:200]})"},
                            status_code=err.status_code, headers=getattr(err, "headers", None))

    @app.exception_handler(Exception)
    async def bug(request: Request, err: Exception) -> JSONResponse:
        # the last resort, for the server's own bugs (bad input gets a 4xx above): no traceback, no error text
        return JSONResponse({"error": f"internal server error ({request.method} {request.url.path[:200]}): the "
                                      "server failed on this request (a bug of its own, logged)"}, status_code=500)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/api/options")
    def options() -> dict[str, Any]:
        return {"presets": preset_names(), "agents": available(), "players": [2, 7], "episodes": ["hand", "match"],
                "catalog": [{"name": e.name, "kind": e.kind, "role": e.role, "summary": e.summary,
                             "players": e.players, "rules": e.rules} for e in catalog().entries.values()],
                "recommended": [{"players": s.players, "rules": s.rules, "agent": s.recommended}
                                for s in catalog().settings],
                "max_expert_simulations": MAX_EXPERT_SIMULATIONS, "max_expert_time_ms": MAX_EXPERT_TIME_MS,
                "caps": {name: {key: option.cap for key, option in table.items() if option.kind == "budget"}
                         for name, table in OPTIONS.items()},
                "max_upload_bytes": games.max_upload_bytes, "idle_seconds": games.idle_seconds}

    @app.get("/api/status")
    def status() -> dict[str, Any]:
        return {"games": len(games.games), "dropped_idle": games.dropped, "uploads": len(games.uploads)}

    # The views are plain JSON data: returned as JSONResponse, past FastAPI's slower generic encoder.
    # Moves run on the event loop (a move takes well under a millisecond) except an expert's search,
    # which runs in the thread pool; a request that finds its game busy with another is refused (409).
    @app.post("/api/games")
    async def new_game(request: Request) -> JSONResponse:
        body = await json_body(request, NewGame)
        game = await run_in_threadpool(games.create, **body.model_dump())  # loading a policy reads its file
        return locked(game, game.view)

    @app.get("/api/games/{game_id}")
    async def get_game(game_id: str) -> JSONResponse:
        game = games.get(game_id)
        return locked(game, game.view)

    @app.post("/api/games/{game_id}/actions")
    async def act(game_id: str, request: Request) -> JSONResponse:
        game = games.get(game_id)
        body = await json_body(request, Move)
        return locked(game, game.act, body.action, body.seat)

    @app.post("/api/games/{game_id}/advance")
    async def advance(game_id: str) -> JSONResponse:
        game = games.get(game_id)
        if game.slow_to_act():
            return await run_in_threadpool(locked, game, game.advance)
        return locked(game, game.advance)

    @app.post("/api/games/{game_id}/next_hand")
    async def next_hand(game_id: str) -> JSONResponse:
        game = games.get(game_id)
        return locked(game, game.next_hand)

    @app.get("/api/games/{game_id}/replay")
    def replay(game_id: str) -> JSONResponse:
        game = games.get(game_id)
        data = locked(game, game.replay, response=False)
        return JSONResponse(data, headers={"Content-Disposition": f'attachment; filename="c8env-replay-{game_id[:8]}.json"'})

    @app.delete("/api/games/{game_id}")
    def drop(game_id: str) -> dict[str, Any]:
        games.drop(game_id)
        return {"dropped": game_id}

    @app.post("/api/policies")
    async def upload(request: Request, name: str = "policy.npz") -> dict[str, Any]:
        data = await _body(request, games.max_upload_bytes)
        return games.add_policy(data, name)

    @app.post("/api/replays")
    async def frames(request: Request) -> JSONResponse:
        raw = await _body(request, MAX_REPLAY_BYTES)
        try:
            data = parse_json(raw)
        except ValueError as err:
            raise GameError(400, f"the replay is not JSON that can be read: {err}") from None
        rules = data.get("rules") if isinstance(data, dict) else None
        if isinstance(rules, str) and rules not in preset_names():  # no rules files on the server's disk
            raise GameError(400, f"replay: rules={rules[:60]!r} is not allowed on this server; allowed: a preset name "
                                 f"({', '.join(preset_names())}) or a mapping of RuleSet fields")
        try:
            frames = await run_in_threadpool(play_replay, data)
        except ValueError as err:
            raise GameError(400, str(err)[:1000]) from None
        out = []
        for frame in frames:
            view = table_view(frame.state, None)
            view.update(hand_index=frame.hand, event=frame.event)
            out.append(view)
        return JSONResponse({"num_players": data["num_players"], "rules": data["rules"], "seed": data["seed"],
                             "episode": data["episode"], "agents": data["agents"], "result": data.get("result"),
                             "frames": out})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


__all__ = ["MAX_BODY_BYTES", "MAX_INT_DIGITS", "MAX_JSON_DEPTH", "create_app", "parse_json"]
