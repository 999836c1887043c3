"""The FastAPI application of ``c8env serve``: a JSON API and the static page.

Endpoints (every error is a 4xx JSON ``{"error": "..."}`` naming the problem; the game is unchanged):

=======  ==================================  =================================================================
GET      /                                   the page (``static/index.html``)
GET      /api/options                        presets, agent specs, player counts, limits
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from c8env.agents import available
from c8env.rules import preset_names
from c8env.tools.replay import MAX_REPLAY_BYTES, play_replay
from c8env.web.games import MAX_EXPERT_SIMULATIONS, MAX_EXPERT_TIME_MS, Game, GameError, GameManager
from c8env.web.seat_view import table_view

STATIC = Path(__file__).parent / "static"


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
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise GameError(413, f"the request body has {int(declared):,} bytes; the limit is {limit:,}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise GameError(413, f"the request body is larger than the limit of {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


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
        problems = []
        for e in err.errors():
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
            problems.append(f"{where}: {e.get('msg')}")
        return JSONResponse({"error": "malformed request: " + "; ".join(problems)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": f"{err.detail} ({request.method} {request.url.path})"}, status_code=err.status_code)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/api/options")
    def options() -> dict[str, Any]:
        return {"presets": preset_names(), "agents": available(), "players": [2, 7], "episodes": ["hand", "match"],
                "max_expert_simulations": MAX_EXPERT_SIMULATIONS, "max_expert_time_ms": MAX_EXPERT_TIME_MS,
                "max_upload_bytes": games.max_upload_bytes, "idle_seconds": games.idle_seconds}

    # The views are plain JSON data: returned as JSONResponse, past FastAPI's slower generic encoder.
    # Moves run on the event loop (a move takes well under a millisecond) except an expert's search,
    # which runs in the thread pool; a request that finds its game busy with another is refused (409).
    @app.post("/api/games")
    def new_game(body: NewGame) -> JSONResponse:
        game = games.create(**body.model_dump())
        return locked(game, game.view)

    @app.get("/api/games/{game_id}")
    async def get_game(game_id: str) -> JSONResponse:
        game = games.get(game_id)
        return locked(game, game.view)

    @app.post("/api/games/{game_id}/actions")
    async def act(game_id: str, body: Move) -> JSONResponse:
        game = games.get(game_id)
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
            data = json.loads(raw)
            frames = play_replay(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise GameError(400, f"the replay is not JSON: {err}") from None
        except ValueError as err:
            raise GameError(400, str(err)) from None
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


__all__ = ["create_app"]
