"""c8env serve's API under fuzzing (Hypothesis): generated bodies, headers, ids, methods and query strings
sent to every endpoint.

Every answer is a 2xx, or a 4xx JSON ``{"error": ...}`` whose message names the problem (never a 500,
never an error that is not JSON); a refused request leaves its game (state, log, moves, status) and the
server's games as they were; the server keeps answering afterwards (and no game is left locked). Agent specs
are drawn from the whole grammar (every option of :data:`c8env.agents.OPTIONS`, paths, huge values, junk): no
file but the shipped policies and the server's uploads is opened (a valid policy planted on its disk never).

Derandomized (the same examples on every run). The quick variant runs in the fast set; the long one is
marked slow.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's TestClient warns about httpx on some versions
    from fastapi.testclient import TestClient

from c8env.agents import BUILTIN, OPTIONS, POLICY_DIR, Option, PolicyMismatchWarning, parse_options, shipped_policies
from c8env.rules import preset_names
from c8env.web.app import MAX_BODY_BYTES, MAX_INT_DIGITS, MAX_JSON_DEPTH, create_app
from c8env.web.games import GameManager
from tests.web.file_opens import opened_within, recording

pytestmark = pytest.mark.filterwarnings(f"ignore::{PolicyMismatchWarning.__module__}.PolicyMismatchWarning")

QUICK = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LONG = settings(QUICK, max_examples=300)


# ----- the server under test -------------------------------------------------------------------------------
class Server:
    """A client of one app, with a game in progress to aim at and a finished game's replay."""

    def __init__(self) -> None:
        self.manager = GameManager(max_games=100_000)
        self.client = TestClient(create_app(self.manager), raise_server_exceptions=False)
        self.rng = random.Random(0)
        self.plant_dir = Path(tempfile.mkdtemp(prefix="c8env-planted-"))
        self.planted = self.plant_dir / "planted.npz"  # a valid policy on the server's disk, never to be opened
        shutil.copyfile(POLICY_DIR / "rollout6-standard-2p.npz", self.planted)
        self.upload = self.client.post("/api/policies?name=up.npz", content=self.planted.read_bytes()).json()["spec"]
        self.replay = self._finished_replay()
        self.target = ""
        self.renew()

    def _finished_replay(self) -> dict[str, Any]:
        view = self.client.post("/api/games", json={"players": 3, "rules": "special_cards", "seed": 11,
                                                    "agents": ["greedy", "random"]}).json()
        path = f"/api/games/{view['game_id']}"
        while view["status"] in ("your_turn", "agent_turn"):
            if view["status"] == "your_turn":
                view = self.client.post(path + "/actions", json={"action": self.rng.choice(view["legal"])["id"]}).json()
            else:
                view = self.client.post(path + "/advance").json()
        replay = self.client.get(path + "/replay").json()
        self.client.delete(path)
        return replay

    def foreign(self, paths: list[Path]) -> list[str]:
        """The files of ``paths`` the server was not given: the planted policy, a path the fuzz names, a model file
        other than a shipped policy or an upload."""
        given = {*opened_within(paths, POLICY_DIR), *opened_within(paths, self.manager.upload_dir)}
        return [str(p) for p in paths if opened_within([p], self.plant_dir) or p in NAMED_PATHS
                or (p.suffix in (".npz", ".onnx", ".zip") and p not in given)]

    def renew(self) -> None:
        """A fresh target game once the last one is over or dropped (a move on it may be played)."""
        game = self.manager.games.get(self.target)
        if game is None or game.phase_status() not in ("your_turn", "agent_turn"):
            view = self.client.post("/api/games", json={"players": 2, "agents": ["greedy"], "seed": 5}).json()
            self.target = view["game_id"]

    def snapshot(self) -> Any:
        game = self.manager.games.get(self.target)
        if game is None:
            return None
        return (json.dumps(game.state.to_dict()), len(game.log), [len(h["actions"]) for h in game.hands],
                game.status, game.message, set(self.manager.games), len(self.manager.uploads))

    def tidy(self) -> None:
        """Drop the games the fuzzer made (only the target stays)."""
        for gid in list(self.manager.games):
            if gid != self.target:
                self.manager.games.pop(gid, None)


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.client.close()
    s.manager.close()
    shutil.rmtree(s.plant_dir, ignore_errors=True)


# ----- generated requests ----------------------------------------------------------------------------------
PRESETS = preset_names()
SPECS = ["expert:policy=ppo-standard-2p,top=2,simulations=2", "expert:simulations=3,simulations=4",
         "expert:time_ms=inf",
         "expert:policy=c8env/agents/policies/ppo-standard-2p.npz", "greedy", "random", "expert:simulations=3",
         "expert:policy=/etc/x.npz", "expert:simulations=0", "expert:top=2", "expert:simulations=99999",
         "expert:time_ms=nan", "upload:nope", "ppo-standard-2p", "x:y", "os:system", "", "/etc/passwd.npz",
         "model.onnx", "model.zip", "random:seed=1"]
JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                        st.text(max_size=12))
JSON_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
FIELDS = ["action", "seat", "rules", "players", "episode", "agents", "seed", "extra"]
FIELD_VALUES = st.one_of(
    JSON_VALUES, st.integers(-3, 60), st.integers(2**62, 2**70), st.integers(-(2**70), -(2**62)),
    st.sampled_from(["standard", "special_cards", "uno_like", "hand", "match", "poker", "", "\u2663", "/etc/hosts.yaml",
                     "pyproject.yml", "configs/train/default.yaml"]),
    st.lists(st.sampled_from(SPECS), max_size=7),
)
NEAR_VALID = st.dictionaries(st.sampled_from(FIELDS), FIELD_VALUES, max_size=5)

# The agent-spec grammar: NAME[:KEY=VALUE,...], every option of every built-in agent.
OPTION_KEYS = sorted({key for table in OPTIONS.values() for key in table})
#: Values at and past each budget's cap.
CAP_VALUES = sorted({text for table in OPTIONS.values() for option in table.values() if option.cap is not None
                     for text in (repr(option.type(option.cap)), repr(option.type(option.cap) + 1),
                                  repr(math.nextafter(option.cap, math.inf)))})
#: Values that name a file: paths of the server's disk in many spellings (PLANTED: the planted policy's path,
#: PLANTED_REL: relative to the working folder; UPLOAD: the server's upload, UPLOAD_ID: its bare id).
FILE_VALUES = ["PLANTED", "PLANTED_REL", "file://PLANTED", "PLANTED/../planted.npz", "UPLOAD", "UPLOAD_ID",
               "upload:nope", "upload:", "upload:../planted", "/etc/passwd", "/etc/passwd.npz", "../../x.npz",
               "~/x.npz", "model.onnx", "model.zip", "c8env/agents/policies/ppo-standard-2p.npz",
               str(POLICY_DIR / "ppo-standard-2p.npz"), "\\server\\share\\x.npz", "x.npz\x00", "/dev/zero",
               "/proc/self/environ", "."]
#: The files of the server's disk that the fuzz names: none may be opened.
NAMED_PATHS = {Path(value).absolute() for value in FILE_VALUES if value.startswith(("/", "c8env", ".."))
               and "\x00" not in value} - {POLICY_DIR / "ppo-standard-2p.npz"}
OPTION_VALUES = st.one_of(
    st.integers(-3, 40).map(str), st.sampled_from(CAP_VALUES), st.integers(10**4, 10**40).map(str),
    st.sampled_from(["9" * 4000, "9" * 5000, "1e308", "1e999", "inf", "-inf", "nan", "0", "1.5", "1_000", " 3", "0x10",
                     "", "greedy", "policy"]),
    st.sampled_from(shipped_policies()), st.sampled_from(FILE_VALUES), st.text(max_size=10),
)


def kind_values(option: Option) -> st.SearchStrategy[str]:
    """Values of ``option``'s kind, mostly valid (UPLOAD: the server's upload); a budget's at, past and far past its
    cap at times."""
    if option.kind == "policy":
        return st.sampled_from([*option.words, "UPLOAD", "rollout6-standard-2p", *shipped_policies()])
    if option.kind == "budget":
        cap = option.type(option.cap)
        past = cap + 1 if option.type is int else math.nextafter(cap, math.inf)
        return st.one_of(st.integers(1, 6).map(str), st.sampled_from([repr(cap), repr(past), repr(cap * 10)]))
    return st.sampled_from(["0", "1", "0.5", "2"])


POLICY_KEYS = [(name, key) for name, table in OPTIONS.items() for key, o in table.items() if o.kind == "policy"]
BUDGET_KEYS = [(name, key) for name, table in OPTIONS.items() for key, o in table.items() if o.kind == "budget"]


@st.composite
def option_items(draw, name: str, junk: bool) -> str:
    """One item of a spec's options: a key of ``name``'s table and a value of its kind, or (``junk``) any key, any
    value, any form."""
    table = OPTIONS.get(name, {})
    if not junk and table:
        key = draw(st.sampled_from(sorted(table)))
        return f"{key}={draw(kind_values(table[key]))}"
    key = draw(st.sampled_from(OPTION_KEYS * 4 + ["", "depth", "seed", " policy", "POLICY"]))
    value = draw(OPTION_VALUES)
    return draw(st.sampled_from([f"{key}={value}"] * 4 + [key, f"{key}={value}={value}"]))


@st.composite
def agent_specs(draw, server: Server) -> str:
    """An agent spec drawn from the whole grammar, of one of four shapes: an option that names a policy given a
    path or upload (the rest valid), a budget near its cap, every option of a value of its kind, or any name with
    any options (every key of the table and junk keys, repeated at times) of any value."""
    shape = draw(st.sampled_from(["file", "budget", "kinds", "junk"]))
    if shape == "file":
        name, key = draw(st.sampled_from(POLICY_KEYS))
        items = [f"{key}={draw(st.sampled_from(FILE_VALUES))}", *draw(st.lists(option_items(name, False), max_size=2))]
    elif shape in ("budget", "kinds"):  # distinct keys, with the guide that other options need at times
        if shape == "budget":
            name, key = draw(st.sampled_from(BUDGET_KEYS))
            keys = [key]
        else:
            name = draw(st.sampled_from(sorted(OPTIONS)))
            keys = draw(st.lists(st.sampled_from(sorted(OPTIONS[name])), unique=True, max_size=4))
        table = OPTIONS[name]
        items = [f"{key}={draw(kind_values(table[key]))}" for key in keys]
        if "policy" in table and "policy" not in keys and draw(st.booleans()):
            items.append("policy=rollout6-standard-2p")
    else:
        name = draw(st.sampled_from([*BUILTIN, *shipped_policies(), "upload", "", "x", "os:system", "PLANTED",
                                     "expert "]))
        items = draw(st.lists(option_items(name, True), max_size=4))
    items = draw(st.permutations(items))
    spec = name + (":" + ",".join(items) if items or draw(st.booleans()) else "")
    planted = str(server.planted)
    for token, text in (("PLANTED_REL", os.path.relpath(planted)), ("PLANTED", planted),
                        ("UPLOAD_ID", server.upload.partition(":")[2]), ("UPLOAD", server.upload)):
        spec = spec.replace(token, text)
    return spec


@st.composite
def bodies(draw, endpoint: str, server: Server) -> tuple[str, bytes | None]:
    """A body and its kind: ``json`` (valid JSON of any shape) or the problem it was built to have; more of the
    near-valid bodies of the endpoint's own kind."""
    own = {"/api/games": ["game"] * 6, "/api/replays": ["replay"] * 6}.get(endpoint, [])
    kind = draw(st.sampled_from(own + ["none", "json", "near", "near", "game", "deep", "digits", "duplicate",
                                       "constant", "bigfloat", "bytes", "utf8", "truncated", "empty", "large",
                                       "replay"]))
    if kind == "none":
        return kind, None
    if kind == "game":  # a new game's body, near valid: what reaches the agents and the rules
        players = draw(st.integers(2, 7))
        body = {"players": players, "seat": draw(st.integers(0, players - 1)), "rules": draw(st.sampled_from(PRESETS)),
                "agents": draw(st.lists(st.one_of(st.sampled_from(SPECS), agent_specs(server)), min_size=1,
                                        max_size=players - 1)),
                "episode": draw(st.sampled_from(["hand", "match"])), "seed": draw(st.integers(0, 2**63 - 1))}
        return "json", json.dumps({k: v for k, v in body.items() if draw(st.integers(0, 5))}).encode()
    if kind == "json":
        return kind, json.dumps(draw(JSON_VALUES)).encode()
    if kind == "near":
        return "json", json.dumps(draw(NEAR_VALID)).encode()
    if kind == "deep":
        depth = draw(st.sampled_from([MAX_JSON_DEPTH + 1, 200, 999, 1500, 3000, 20_000]))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}"), ('{"action":[', "]}")]))
        return kind, (opener * depth + "1" + closer * depth).encode()
    if kind == "digits":
        digits = draw(st.integers(MAX_INT_DIGITS + 1, 6000))
        return kind, json.dumps({draw(st.sampled_from(FIELDS)): 0}).replace("0", "9" * digits).encode()
    if kind == "duplicate":
        key = draw(st.sampled_from(FIELDS))
        return kind, f'{{"{key}": 1, "{key}": {draw(st.integers(0, 60))}}}'.encode()
    if kind == "constant":
        name = draw(st.sampled_from(["NaN", "Infinity", "-Infinity"]))
        return kind, f'{{"{draw(st.sampled_from(FIELDS))}": {name}}}'.encode()
    if kind == "bigfloat":
        return kind, f'{{"{draw(st.sampled_from(FIELDS))}": 1e{draw(st.integers(309, 99999))}}}'.encode()
    if kind == "bytes":
        return "garbage", draw(st.binary(min_size=1, max_size=64))
    if kind == "utf8":
        return kind, b'{"action": "' + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])) + b'"}'
    if kind == "truncated":
        text = json.dumps(draw(NEAR_VALID.filter(bool)))
        return "garbage", text[: draw(st.integers(1, len(text) - 1))].encode()
    if kind == "empty":
        return kind, draw(st.sampled_from([b"", b" ", b"\n\t "]))
    if kind == "large":
        return kind, json.dumps({"action": "x" * (MAX_BODY_BYTES + draw(st.integers(1, 5000)))}).encode()
    return kind, b""  # "replay": filled in by the test from the server's replay, mutated


@st.composite
def replay_mutations(draw, replay: dict[str, Any]) -> bytes:
    """The server's finished replay with one part replaced, dropped, or the text damaged."""
    data = json.loads(json.dumps(replay))
    where = draw(st.sampled_from(["top", "hand", "deal", "action", "final", "rules", "result", "text", "none"]))
    value = draw(FIELD_VALUES)
    if where == "result":  # echoed back as it is
        data["result"] = draw(st.one_of(FIELD_VALUES, st.floats(), st.dictionaries(st.text(max_size=3), st.floats())))
    if where == "top":
        key = draw(st.sampled_from(sorted(data) + ["created", "bogus"]))
        if draw(st.booleans()):
            data.pop(key, None)
        else:
            data[key] = value
    elif where == "hand":
        data["hands"][0][draw(st.sampled_from(["deal", "actions", "extra"]))] = value
    elif where == "deal":
        deal = data["hands"][0]["deal"]
        deal[draw(st.sampled_from(sorted(deal) + ["bogus"]))] = value
    elif where == "action":
        actions = data["hands"][0]["actions"]
        actions[draw(st.integers(0, len(actions) - 1))] = value
    elif where == "final":
        data["final"][draw(st.sampled_from(sorted(data["final"])))] = value
    elif where == "rules":
        data["rules"] = draw(st.dictionaries(st.sampled_from(["preset", "decks", "hand_size", "effects", "card_points",
                                                              "match_target", "wild_rank", "bogus"]), FIELD_VALUES,
                                             max_size=3))
    text = json.dumps(data)
    if where == "text":
        cut = draw(st.integers(0, len(text) - 1))
        text = text[:cut] + draw(st.sampled_from(["", "NaN", "}", '"', ',"seed": 1', "\\ud800"])) + text[cut + 1:]
    return text.encode()


ENDPOINTS = ["/api/options", "/api/status", "/api/games", "/api/games/{id}", "/api/games/{id}/actions",
             "/api/games/{id}/advance", "/api/games/{id}/next_hand", "/api/games/{id}/replay", "/api/policies",
             "/api/replays", "/", "/static/{junk}", "/api/{junk}", "/api/games/{id}/{junk}"]
#: The routes and their methods (HEAD follows GET); any other method gets 405.
ROUTES = {"/api/options": {"GET"}, "/api/status": {"GET"}, "/api/games": {"POST"}, "/api/games/{id}": {"GET", "DELETE"},
          "/api/games/{id}/actions": {"POST"}, "/api/games/{id}/advance": {"POST"},
          "/api/games/{id}/next_hand": {"POST"},
          "/api/games/{id}/replay": {"GET"}, "/api/policies": {"POST"}, "/api/replays": {"POST"}, "/": {"GET"}}
#: Endpoints that read their body as JSON, and what a body built to have each problem must be told.
JSON_ENDPOINTS = {"/api/games", "/api/games/{id}/actions", "/api/replays"}
PROBLEM_WORDS = {"deep": "nested too deeply", "digits": "digits", "duplicate": "twice", "constant": "not a JSON number",
                 "bigfloat": "out of range", "utf8": "UTF-8", "empty": "", "large": "limit"}
#: Words each refusal's message must hold, by status: the problem named.
STATUS_WORDS = {
    400: ("invalid", "illegal", "not JSON", "replay", "agent spec", "policy file", "RuleSet", "rules", "empty",
          "not allowed", "uploaded"),
    403: ("not yours",), 404: ("unknown game", "Not Found"), 405: ("Method Not Allowed",),
    409: ("not your turn", "your turn", "hand is over", "game is over", "not over", "next_hand", "busy"),
    413: ("limit",), 415: ("Content-Type",), 422: ("malformed request",),
}
CONTENT_TYPES = [None, "application/json", "application/json; charset=utf-8", "text/plain", "application/problem+json",
                 "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/octet-stream",
                 "JSON", "*/*"]


@st.composite
def requests(draw, server: Server, endpoint: str) -> dict[str, Any]:
    allowed = sorted(ROUTES.get(endpoint, {"GET"}))
    method = draw(st.sampled_from(allowed * 6 + ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]))
    game_id = draw(st.one_of(st.just("TARGET"), st.just("TARGET"), st.just("0123456789abcdef0123456789abcdef"),
                             st.text(min_size=1, max_size=40), st.sampled_from(["..", "%2e%2e", "a b", " ", "\u00e9"])))
    junk = quote(draw(st.text(min_size=1, max_size=30)), safe="")
    kind, body = draw(bodies(endpoint, server))
    if kind == "replay":
        body = draw(replay_mutations(server.replay))
        kind = "replay"
    if endpoint == "/api/games/{id}/actions" and draw(st.integers(0, 4)) == 0:
        kind, body = "json", json.dumps({"action": draw(st.integers(0, 59))}).encode()  # sometimes a legal move
    query = draw(st.dictionaries(st.sampled_from(["name", "seat", "x", "action", ""]), st.text(max_size=20),
                                 max_size=2))
    return {"endpoint": endpoint, "method": method, "game_id": game_id, "junk": junk, "kind": kind, "body": body,
            "content_type": draw(st.sampled_from([None, "application/json"] * 3 + CONTENT_TYPES)),
            "query": urlencode(query)}


# ----- the checks ------------------------------------------------------------------------------------------
def send_and_check(server: Server, request: dict[str, Any]) -> Any:
    server.renew()
    game_id = server.target if request["game_id"] == "TARGET" else quote(request["game_id"], safe="")
    url = request["endpoint"].replace("{id}", game_id).replace("{junk}", request["junk"])
    if request["query"]:
        url += "?" + request["query"]
    headers = {} if request["content_type"] is None else {"content-type": request["content_type"]}
    before = server.snapshot()
    with recording() as paths:
        response = server.client.request(request["method"], url, content=request["body"], headers=headers)
    status, method = response.status_code, request["method"]
    described = (f"{method} {url[:120]} {request['kind']} {(request['body'] or b'')[:120]!r} -> {status} "
                 f"{response.text[:300]}")
    assert status < 500, described
    assert not server.foreign(paths), f"{described}: opened {server.foreign(paths)}"
    assert 200 <= status < 300 or 400 <= status < 500, described
    if status >= 400:
        if method != "HEAD":  # (a HEAD answer has no body)
            assert response.headers["content-type"].startswith("application/json"), described
            data = response.json()
            assert isinstance(data, dict) and set(data) == {"error"}, described
            message = data["error"]
            assert isinstance(message, str) and message.strip() and "Traceback" not in message, described
            assert any(word in message for word in STATUS_WORDS[status]), described
            problem = PROBLEM_WORDS.get(request["kind"])
            routed = request["endpoint"] in JSON_ENDPOINTS and method == "POST" and status in (400, 422)
            if routed and problem and request["kind"] != "large":  # (a large body is a replay's size)
                assert problem in message, described
        assert server.snapshot() == before, f"a refused request changed the game or the server's games: {described}"
    # the server keeps answering, and no game is left locked
    assert server.client.get("/api/options").status_code == 200
    game = server.manager.games.get(server.target)
    if game is not None:
        assert not game.lock.locked(), described
        assert server.client.get(f"/api/games/{server.target}").status_code == 200, described
    server.tidy()
    return response


def spec_request(draw: Any, server: Server) -> dict[str, Any]:
    """A new game against agents of generated specs, as :func:`send_and_check` takes it."""
    players = draw(st.integers(2, 4))
    body = {"players": players, "seed": draw(st.integers(0, 2**31)),
            "agents": draw(st.lists(agent_specs(server), min_size=1, max_size=players - 1))}
    return {"endpoint": "/api/games", "method": "POST", "game_id": "TARGET", "junk": "", "kind": "json",
            "body": json.dumps(body).encode(), "content_type": "application/json", "query": ""}


def check_spec_answer(server: Server, request: dict[str, Any]) -> None:
    """A new game whose every option the server allows (by its kind: a policy option one of its words, a shipped
    policy or the upload; a budget at most its cap), or a 400 of one line that names the spec (and the option, where
    one is not allowed)."""
    response = send_and_check(server, request)
    if response.status_code == 200:
        for spec in json.loads(request["body"])["agents"]:
            name, _, text = spec.partition(":")
            for key, value in (parse_options(name, text) if name in OPTIONS else {}).items():
                option = OPTIONS[name][key]
                if option.kind == "policy":
                    assert value in (*option.words, *shipped_policies(), server.upload), spec
                elif option.kind == "budget":
                    assert value <= option.cap, spec
        return
    error = response.json()["error"]
    assert response.status_code == 400 and "\n" not in error and "agent spec" in error, error
    if "not allowed on this server" in error or "past this server's cap" in error:
        assert "option " in error, error


@settings(QUICK, max_examples=150)
@given(data=st.data())
def test_fuzzed_agent_specs_open_no_file_they_name_quick(server, data) -> None:
    """Specs of the whole grammar: a new game or a 400 of one line naming the problem, never a 500; no file but the
    shipped policies and the server's uploads is opened (see :func:`send_and_check`)."""
    check_spec_answer(server, spec_request(data.draw, server))


@pytest.mark.slow
@settings(LONG, max_examples=1500)
@given(data=st.data())
def test_fuzzed_agent_specs_open_no_file_they_name_long(server, data) -> None:
    check_spec_answer(server, spec_request(data.draw, server))


def test_pathological_bodies_get_a_4xx_naming_the_problem(server) -> None:
    """The bodies the server once answered with 500 Internal Server Error (and their kin), one by one."""
    path = f"/api/games/{server.target}/actions"
    replay = server.replay
    cases = [
        ("/api/replays", "[" * 50_000 + "]" * 50_000, 400, "nested too deeply"),  # RecursionError: was a 500
        ("/api/replays", '{"a":' * 5000 + "1" + "}" * 5000, 400, "nested too deeply"),  # the same
        ("/api/replays", json.dumps({**replay, "result": float("nan")}), 400, "NaN"),  # was a 500 (echoed NaN)
        ("/api/replays", json.dumps({**replay, "seed": 10**4000}), 400, "4,001 digits"),
        ("/api/replays", '{"format": 1, "format": 2}', 400, "twice"),
        ("/api/replays", json.dumps({**replay, "rules": "configs/train/default.yaml"}), 400,
         "not allowed on this server"),  # read a YAML file of the server's disk, listed its keys
        ("/api/games", json.dumps({"agents": ["expert:policy=ppo-standard-2p,simulations=2"]}), 200, ""),  # was a 500
        ("/api/games", json.dumps({"agents": ["expert:policy=/etc/passwd.npz"]}), 400, "not allowed on this server"),
        ("/api/games", json.dumps({"agents": ["expert:simulations=5,simulations=7"]}), 400, "twice"),
        ("/api/games", json.dumps({"agents": ["expert:time_ms=inf"]}), 400, "time_ms"),
        ("/api/games", "[" * 5000 + "]" * 5000, 422, "nested too deeply"),  # was a vague 400 ("error parsing the body")
        ("/api/games", json.dumps({"seed": 1}).replace("1", "1" * 5000), 422, "5,000 digits"),  # the same
        ("/api/games", '{"seed": NaN}', 422, "NaN"),
        (path, '{"action": 1, "action": 56}', 422, "'action' appears twice"),  # was silently the last one
        (path, '{"action": 1e999}', 422, "out of range"),
        (path, b'{"action": "\xff"}', 422, "UTF-8"),
        (path, b'{"action": "\xed\xa0\x80"}', 422, "lone surrogate"),  # UTF-8 of a surrogate: json reads it
        ("/api/replays", json.dumps({**replay, "result": "\ud800"}), 400, "lone surrogate"),  # was a 500 (echoed)
        (path, "", 422, "empty"),
        (path, " " * (MAX_BODY_BYTES + 1), 413, "limit"),
    ]
    for url, body, status, words in cases:
        before = server.snapshot()
        response = server.client.post(url, content=body, headers={"content-type": "application/json"})
        assert response.status_code == status, (url, str(body)[:80], response.text[:300])
        if status != 200:
            assert words in response.json()["error"], (url, str(body)[:80], response.json())
            assert server.snapshot() == before
        server.tidy()
    refused = server.client.post(path, content='{"action": 3}', headers={"content-type": "text/plain"})
    assert refused.status_code == 415 and "Content-Type: application/json" in refused.json()["error"]


def test_a_bug_of_the_server_is_a_json_500_without_its_traceback() -> None:
    manager = GameManager()
    with TestClient(create_app(manager), raise_server_exceptions=False) as client:
        view = client.post("/api/games", json={"seed": 1}).json()
        game = manager.games[view["game_id"]]

        def broken() -> dict:
            raise KeyError("secret internals")

        game.view = broken
        response = client.get(f"/api/games/{game.id}")
        assert response.status_code == 500 and response.headers["content-type"].startswith("application/json")
        error = response.json()["error"]
        assert "internal server error" in error and "secret" not in error and "Traceback" not in error
        assert not game.lock.locked() and client.get("/api/options").status_code == 200
    manager.close()


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@QUICK
@given(data=st.data())
def test_fuzzed_requests_get_2xx_or_a_4xx_json_error_quick(server, endpoint, data) -> None:
    send_and_check(server, data.draw(requests(server, endpoint)))


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", ENDPOINTS)
@LONG
@given(data=st.data())
def test_fuzzed_requests_get_2xx_or_a_4xx_json_error_long(server, endpoint, data) -> None:
    send_and_check(server, data.draw(requests(server, endpoint)))
