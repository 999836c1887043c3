"""c8env serve's JSON API through FastAPI's test client: whole games, hidden information,
bad requests, isolation, idle games, failing agents, uploads and replays."""

from __future__ import annotations

import io
import json
import random
import re
import warnings

import numpy as np
import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's TestClient warns about httpx on some versions
    from fastapi.testclient import TestClient

from c8env.agents import POLICY_DIR
from c8env.cards import card_text
from c8env.tools.replay import play_replay
from c8env.web.app import create_app
from c8env.web.games import GameManager

CARD = re.compile(r"(?<![A-Za-z0-9])[A2-9TJQK][CDHS](?![A-Za-z0-9])")


@pytest.fixture
def manager():
    m = GameManager()
    yield m
    m.close()


@pytest.fixture
def client(manager):
    with TestClient(create_app(manager)) as c:
        yield c


def leaked_cards(game, response_text: str, asked: set[str] = frozenset()) -> set[str]:
    """Cards in a response that its player may not see: other hands and the stock during play,
    the stock's unseen cards after the hand (the hands are laid down then)."""
    state = game.state
    seen = {card_text(a) for a in game.hands[-1]["actions"] if a < 52} | {card_text(c) for c in state.discard}
    mine = {card_text(c) for c in state.hand(game.seat)}
    hidden = {card_text(c) for c in state.stock}
    if not state.hand_over:
        for seat in range(state.num_players):
            if seat != game.seat:
                hidden |= {card_text(c) for c in state.hand(seat)}
    hidden -= seen | mine | asked  # asked: a card the request itself named (an error message repeats it)
    shown = set(CARD.findall(response_text.replace(game.id, "")))
    return shown & hidden


def check_view(game, response, asked: set[str] = frozenset()) -> dict:
    text = response.text
    leaks = leaked_cards(game, text, asked)
    assert not leaks, f"response shows hidden cards {leaks}: {text[:400]}"
    data = response.json()
    if "seats" in data:
        assert isinstance(data["stock"], int)
        for seat in data["seats"]:
            if seat["seat"] != game.seat and not game.state.hand_over:
                assert seat["hand"] is None
        assert '"hands":' not in text and '"deal"' not in text
    return data


def play_game(client, manager, rng, **params) -> tuple[dict, object]:
    """Play a whole game with a random human through the API, checking every response."""
    response = client.post("/api/games", json=params)
    assert response.status_code == 200, response.text
    game = manager.games[response.json()["game_id"]]
    view = check_view(game, response)
    path = f"/api/games/{game.id}"
    for _ in range(5000):
        status = view["status"]
        if status in ("finished", "error"):
            break
        before = game.state.to_dict()
        if status == "your_turn":
            if rng.random() < 0.1:  # an illegal card: refused, named, game unchanged
                bad = next(c for c in range(52) if c not in [a["id"] for a in view["legal"]])
                refused = client.post(path + "/actions", json={"action": bad})
                assert refused.status_code == 400 and "illegal" in refused.json()["error"]
                check_view(game, refused, {card_text(bad)})
                assert game.state.to_dict() == before
                refused = client.get(path + "/replay")
                assert refused.status_code == 409 and game.state.to_dict() == before
            response = client.post(path + "/actions", json={"action": rng.choice(view["legal"])["id"], "seat": game.seat})
        elif status == "agent_turn":
            response = client.post(path + "/advance")
        else:
            response = client.post(path + "/next_hand")
        assert response.status_code == 200, response.text
        view = check_view(game, response)
        if rng.random() < 0.05:
            view = check_view(game, client.get(path))
    assert view["status"] == "finished", view
    return view, game


@pytest.mark.parametrize("params", [
    {"players": 2, "rules": "standard", "agents": ["greedy"], "seed": 1},
    {"players": 3, "rules": "special_cards", "seat": 1, "agents": ["random", "greedy"], "seed": 2},
    {"players": 4, "rules": "last_card", "seat": 3, "agents": ["greedy"], "seed": 3},
    {"players": 2, "rules": "uno_like", "agents": ["ppo-standard-2p"], "seed": 4},
    {"players": 2, "rules": "five_hands", "episode": "match", "agents": ["random"], "seed": 5},
])
def test_whole_games_show_no_hidden_card_and_replay_exactly(client, manager, params) -> None:
    view, game = play_game(client, manager, random.Random(params["seed"]), **params)
    assert view["result"]["scores"] == game.state.scores
    if params.get("episode") == "match":
        assert view["result"]["match_over"] and len(game.hands) >= 5
    response = client.get(f"/api/games/{game.id}/replay")
    assert response.status_code == 200 and "attachment" in response.headers["content-disposition"]
    data = response.json()
    assert data["seed"] == game.seed and data["agents"][game.seat] is None and data["rules"] == params["rules"]
    frames = play_replay(data)
    assert frames[-1].state.to_dict() == game.state.to_dict()
    assert len(frames) == sum(len(h["actions"]) + 1 for h in data["hands"])
    shown = client.post("/api/replays", content=json.dumps(data))
    assert shown.status_code == 200 and len(shown.json()["frames"]) == len(frames)


def test_bad_requests_get_a_4xx_json_error_and_leave_the_game_unchanged(client, manager) -> None:
    # seat 1 of 2: find a deal where the agent (seat 0) moves first and one where you do
    view = client.post("/api/games", json={"players": 2, "seat": 1, "agents": ["greedy"], "seed": 0}).json()
    game = manager.games[view["game_id"]]
    path = f"/api/games/{game.id}"
    if view["status"] == "your_turn":
        mine = view
        view = client.post(path + "/actions", json={"action": mine["legal"][0]["id"]}).json()
    assert view["status"] == "agent_turn"
    cases = [
        ("post", "/api/games/0123456789abcdef0123456789abcdef/actions", {"action": 1}, 404, "unknown game"),
        ("get", "/api/games/nope", None, 404, "unknown game"),
        ("post", path + "/actions", {"action": 3}, 409, "not your turn"),
        ("post", path + "/actions", {"action": 3, "seat": 0}, 403, "not yours"),
        ("post", path + "/actions", {"action": "3"}, 422, "action"),
        ("post", path + "/actions", {"action": 2.5}, 422, "action"),
        ("post", path + "/actions", {"move": 3}, 422, "action"),
        ("post", path + "/actions", {"action": 3, "extra": 1}, 422, "extra"),
        ("post", path + "/actions", {"action": 99}, 400, "action=99"),
        ("post", path + "/actions", {"action": -1}, 400, "action=-1"),
        ("post", path + "/next_hand", None, 409, "next_hand"),
        ("get", path + "/replay", None, 409, "not over"),
        ("post", "/api/games", {"players": 8}, 400, "players=8"),
        ("post", "/api/games", {"players": True}, 422, "players"),
        ("post", "/api/games", {"players": 3, "seat": 3}, 400, "seat=3"),
        ("post", "/api/games", {"rules": "poker"}, 400, "rules='poker'"),
        ("post", "/api/games", {"episode": "season"}, 400, "episode"),
        ("post", "/api/games", {"seed": -4}, 400, "seed=-4"),
        ("post", "/api/games", {"agents": []}, 400, "agents"),
        ("post", "/api/games", {"agents": ["greedy", "greedy"]}, 400, "agents"),
        ("post", "/api/games", {"agents": ["/etc/passwd.npz"]}, 400, "agent spec"),
        ("post", "/api/games", {"agents": ["upload:abc"]}, 400, "uploaded policy"),
        ("post", "/api/games", {"agents": ["expert:simulations=100000"]}, 400, "simulations"),
        ("post", "/api/games", {"agents": ["expert:depth=3"]}, 400, "depth"),
        ("post", "/api/games", {"colour": "red"}, 422, "colour"),
        ("post", "/api/games", "not json", 422, "malformed"),
        ("post", "/api/replays", "not json", 400, "not JSON"),
        ("post", "/api/replays", '{"format": "c8env-replay"}', 400, "version"),
        ("get", "/api/nothing", None, 404, "Not Found"),
    ]
    before = game.state.to_dict()
    for method, url, body, status, words in cases:
        if isinstance(body, str):
            response = client.request(method.upper(), url, content=body, headers={"content-type": "application/json"})
        else:
            response = client.request(method.upper(), url, json=body)
        assert response.status_code == status, (url, body, response.text)
        assert words in response.json()["error"], (url, body, response.json())
        assert game.state.to_dict() == before and len(manager.games) == 1
    # on your turn: advancing is refused, an illegal action is refused and named
    view = client.post(path + "/advance").json()
    while view["status"] == "agent_turn":
        view = client.post(path + "/advance").json()
    if view["status"] == "your_turn":
        before = game.state.to_dict()
        response = client.post(path + "/advance")
        assert response.status_code == 409 and "your turn" in response.json()["error"]
        response = client.post(path + "/actions", json={"action": 59 if 59 not in [a["id"] for a in view["legal"]] else 57})
        assert response.status_code == 400 and "illegal" in response.json()["error"]
        assert game.state.to_dict() == before


def test_many_games_are_isolated_under_unguessable_ids(client, manager) -> None:
    views = [client.post("/api/games", json={"agents": ["greedy"], "seed": 7}).json() for _ in range(12)]
    ids = [v["game_id"] for v in views]
    assert len(set(ids)) == 12 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    dicts = [manager.games[i].state.to_dict() for i in ids]
    assert all(d == dicts[0] for d in dicts)  # same seed, same deal
    first = manager.games[ids[0]]
    for _ in range(40):
        if first.phase_status() == "your_turn":
            client.post(f"/api/games/{ids[0]}/actions", json={"action": first.state.legal_actions()[0]})
        elif first.phase_status() == "agent_turn":
            client.post(f"/api/games/{ids[0]}/advance")
    assert first.state.to_dict() != dicts[0]
    assert all(manager.games[i].state.to_dict() == dicts[0] for i in ids[1:])
    assert client.delete(f"/api/games/{ids[1]}").status_code == 200
    assert client.get(f"/api/games/{ids[1]}").status_code == 404
    assert client.get(f"/api/games/{ids[2]}").status_code == 200


def test_idle_games_are_dropped_and_the_limit_holds() -> None:
    now = [0.0]
    manager = GameManager(idle_seconds=60, max_games=3, clock=lambda: now[0])
    with TestClient(create_app(manager)) as client:
        old = client.post("/api/games", json={}).json()["game_id"]
        now[0] = 50
        kept = client.post("/api/games", json={}).json()["game_id"]
        client.post("/api/games", json={})
        full = client.post("/api/games", json={})
        assert full.status_code == 503 and "limit" in full.json()["error"]
        now[0] = 61
        assert client.get(f"/api/games/{kept}").status_code == 200  # touched at 50: 11 s idle
        response = client.get(f"/api/games/{old}")
        assert response.status_code == 404 and "idle" in response.json()["error"]
        assert old not in manager.games and manager.dropped == 1
    manager.close()


class Broken:
    def act(self, observation):
        raise RuntimeError("policy exploded")


class Cheater:
    def act(self, observation):
        return 59  # stop: illegal under the standard rules


@pytest.mark.parametrize("agent,words", [(Broken(), "policy exploded"), (Cheater(), "IllegalActionError")])
def test_an_agent_that_fails_ends_its_game_not_the_server(client, manager, agent, words) -> None:
    other = client.post("/api/games", json={"agents": ["greedy"]}).json()["game_id"]
    view = client.post("/api/games", json={"agents": ["greedy"], "seed": 3}).json()
    game = manager.games[view["game_id"]]
    game.agents[1] = agent
    path = f"/api/games/{game.id}"
    for _ in range(50):
        if view["status"] == "your_turn":
            view = client.post(path + "/actions", json={"action": view["legal"][0]["id"]}).json()
        elif view["status"] == "agent_turn":
            response = client.post(path + "/advance")
            assert response.status_code == 200
            view = response.json()
        else:
            break
    assert view["status"] == "error" and words in view["message"] and "seat 1" in view["message"]
    response = client.post(path + "/advance")
    assert response.status_code == 409 and words in response.json()["error"]
    replay = client.get(path + "/replay")
    assert replay.status_code == 200 and words in replay.json()["result"]["note"]
    assert play_replay(replay.json())[-1].state.to_dict() == game.state.to_dict()
    assert client.get(f"/api/games/{other}").status_code == 200


def test_uploaded_policies_are_size_limited_and_read_without_pickle() -> None:
    manager = GameManager(max_upload_bytes=1 << 20)
    with TestClient(create_app(manager)) as client:
        data = (POLICY_DIR / "ppo-standard-2p.npz").read_bytes()
        response = client.post("/api/policies?name=mine.npz", content=data)
        assert response.status_code == 200, response.text
        spec = response.json()["spec"]
        view = client.post("/api/games", json={"agents": [spec], "seed": 2}).json()
        assert view["seats"][1]["agent"] == "upload:mine.npz"
        for _ in range(4):
            if view["status"] == "agent_turn":
                view = client.post(f"/api/games/{view['game_id']}/advance").json()
            elif view["status"] == "your_turn":
                view = client.post(f"/api/games/{view['game_id']}/actions", json={"action": view["legal"][0]["id"]}).json()
        assert view["status"] in ("your_turn", "agent_turn", "finished")

        big = client.post("/api/policies", content=b"x" * ((1 << 20) + 1))
        assert big.status_code == 413 and "limit" in big.json()["error"]
        junk = client.post("/api/policies", content=b"not a zip file")
        assert junk.status_code == 400 and "not a c8env policy file" in junk.json()["error"]
        pickled = io.BytesIO()
        np.savez(pickled, meta=np.array([{"evil": 1}], dtype=object), w0=np.zeros((60, 245)), b0=np.zeros(60))
        refused = client.post("/api/policies", content=pickled.getvalue())
        assert refused.status_code == 400 and "pickle" in refused.json()["error"].lower()
        assert len(manager.uploads) == 1
    manager.close()


def test_the_page_and_its_options_are_served(client) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "<script src=\"/static/app.js\">" in page.text
    assert client.get("/static/app.js").status_code == 200 and client.get("/static/style.css").status_code == 200
    options = client.get("/api/options").json()
    assert "standard" in options["presets"] and "greedy" in options["agents"] and options["players"] == [2, 7]
    from c8env.agents import catalog

    assert [a["name"] for a in options["catalog"]] == options["agents"] == catalog.catalog().names()
    assert {(r["players"], r["rules"], r["agent"]) for r in options["recommended"]} == {
        (s.players, s.rules, s.recommended) for s in catalog.catalog().settings}


def test_an_expert_opponent_plays_within_its_budget_and_a_busy_game_answers_409(client, manager) -> None:
    view = client.post("/api/games", json={"agents": ["expert:simulations=4"], "seed": 6}).json()
    game = manager.games[view["game_id"]]
    path = f"/api/games/{game.id}"
    moved = 0
    for _ in range(30):
        if view["status"] == "agent_turn":
            assert game.slow_to_act()
            view = client.post(path + "/advance").json()
            moved += 1
        elif view["status"] == "your_turn":
            assert not game.slow_to_act()
            view = client.post(path + "/actions", json={"action": view["legal"][0]["id"]}).json()
    assert moved > 0 and view["status"] in ("your_turn", "agent_turn", "finished")
    with game.lock:  # another request of this game in progress
        before = game.state.to_dict()
        response = client.get(path)
        assert response.status_code == 409 and "busy" in response.json()["error"]
        assert game.state.to_dict() == before
    assert client.get(path).status_code == 200
