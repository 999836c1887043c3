"""The agent specs c8env serve accepts: no option opens a file it was not given, every budget has a cap.

Each option of :data:`c8env.agents.OPTIONS` declares its kind; the server checks every option by it before it
builds an agent: an option that names a policy takes only its words, a shipped name or ``upload:ID`` (a path of the
server's disk is refused, one line naming the option, and never opened), a budget at most its cap.
"""

from __future__ import annotations

import math
import os
import shutil
import warnings
from dataclasses import replace

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's TestClient warns about httpx on some versions
    from fastapi.testclient import TestClient

from c8env import agents
from c8env.agents import OPTION_KINDS, OPTIONS, POLICY_DIR, Option, PolicyAgent, PolicyMismatchWarning, load
from c8env.web.app import create_app
from c8env.web.games import GameError, GameManager
from tests.web.file_opens import opened_within, recording

pytestmark = pytest.mark.filterwarnings(f"ignore::{PolicyMismatchWarning.__module__}.PolicyMismatchWarning")

#: A single-network 2-player policy: valid as policy and rollouts.
SHIPPED = POLICY_DIR / "rollout6-standard-2p.npz"
POLICY_OPTIONS = [(name, key) for name, table in OPTIONS.items() for key, o in table.items() if o.kind == "policy"]
BUDGETS = [(name, key) for name, table in OPTIONS.items() for key, o in table.items() if o.kind == "budget"]


@pytest.fixture
def manager():
    games = GameManager()
    yield games
    games.close()


@pytest.fixture
def client(manager):
    with TestClient(create_app(manager)) as test_client:
        yield test_client


def refusal(client: TestClient, spec: str) -> str:
    """The one-line error of a new game against ``spec``, which must be refused (400)."""
    response = client.post("/api/games", json={"agents": [spec], "seed": 3})
    assert response.status_code == 400, (spec, response.text[:300])
    error = response.json()["error"]
    assert "\n" not in error and "Traceback" not in error, error
    return error


# ----- the table -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, key", [(name, key) for name, table in OPTIONS.items() for key in table])
def test_every_option_declares_its_kind_and_every_budget_a_cap_it_allows(name: str, key: str) -> None:
    option = OPTIONS[name][key]
    assert option.kind in OPTION_KINDS
    if option.kind == "budget":
        assert option.cap is not None and option.check(option.type(option.cap)), (key, option.cap)
    else:
        assert option.cap is None
    if option.kind == "policy":
        assert option.type is str


def test_an_option_without_its_kind_or_a_budget_without_a_cap_cannot_be_declared() -> None:
    with pytest.raises(TypeError, match="kind"):
        Option(int, lambda v: v >= 1, "an int >= 1")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="a budget needs a cap"):
        Option(int, lambda v: v >= 1, "an int >= 1", "budget")
    with pytest.raises(ValueError, match="only a budget has one"):
        Option(int, lambda v: v >= 1, "an int >= 1", "setting", cap=3)
    with pytest.raises(ValueError, match="only a policy option has words"):
        Option(int, lambda v: v >= 1, "an int >= 1", "budget", cap=3, words=("greedy",))
    with pytest.raises(ValueError, match="kind='cheap' is invalid"):
        Option(int, lambda v: v >= 1, "an int >= 1", "cheap")


# ----- no file of the server's disk ------------------------------------------------------------------------
def test_a_policy_planted_on_the_servers_disk_is_never_opened(tmp_path, manager, client) -> None:
    """A valid policy file at a path of the server's disk, named in every option that names a policy (and as the
    spec itself), in several spellings: refused, the option named, the file never opened; the same spec loaded
    in-process opens it (the recording sees it)."""
    planted = tmp_path / "planted.npz"
    shutil.copyfile(SHIPPED, planted)
    with recording() as paths:
        load(f"expert:rollouts={planted}", num_players=2)
    assert opened_within(paths, tmp_path), "the recording missed the in-process load"
    spellings = [str(planted), os.path.relpath(planted), f"{tmp_path}/./planted.npz",
                 f"{tmp_path}/../{tmp_path.name}/planted.npz", f"file://{planted}", f" {planted}"]
    with recording() as paths:
        for name, key in POLICY_OPTIONS:
            for path in spellings:
                for spec in (f"{name}:{key}={path}", f"{name}:simulations=2,{key}={path}"):
                    error = refusal(client, spec)
                    assert f"option {key}={path[:60]!r} is not allowed on this server" in error, error
        for path in spellings[:2]:
            assert "is invalid; allowed" in refusal(client, path)
    assert not opened_within(paths, tmp_path), [str(p) for p in opened_within(paths, tmp_path)]
    assert not manager.games


def test_uploads_are_played_wherever_a_policy_is_named(tmp_path, manager, client) -> None:
    """policy and rollouts each take ``upload:ID`` (the server opens its own copy, labelled by the file's
    name, never its id); the expert plays with those networks; an unknown upload is refused, naming the option."""
    planted = tmp_path / "mine.npz"
    shutil.copyfile(SHIPPED, planted)
    spec = client.post("/api/policies?name=mine.npz", content=planted.read_bytes()).json()["spec"]
    for name, key in POLICY_OPTIONS:
        with recording() as paths:
            response = client.post("/api/games", json={"agents": [f"{name}:simulations=2,{key}={spec}"], "seed": 3})
        assert response.status_code == 200, response.text[:300]
        assert opened_within(paths, manager.upload_dir) and not opened_within(paths, tmp_path)
        assert response.json()["seats"][1]["agent"] == f"{name}:simulations=2,{key}=upload:mine.npz"
    view = client.post("/api/games", json={"agents": [f"expert:simulations=3,policy={spec},rollouts={spec}"],
                                           "seed": 4}).json()
    expert = manager.games[view["game_id"]].agents[1]
    uploaded = PolicyAgent(SHIPPED).meta
    assert all(isinstance(net, PolicyAgent) and net.meta == uploaded
               for net in (expert.policy, expert.rollout_policy))
    moved = 0
    while view["status"] in ("your_turn", "agent_turn") and moved < 3:
        if view["status"] == "agent_turn":
            view = client.post(f"/api/games/{view['game_id']}/advance").json()
            moved += 1
        else:
            view = client.post(f"/api/games/{view['game_id']}/actions", json={"action": view["legal"][0]["id"]}).json()
    assert moved and view["status"] in ("your_turn", "agent_turn", "finished"), view.get("message")
    for _, key in POLICY_OPTIONS:
        error = refusal(client, f"expert:{key}=upload:0123456789abcdef01234567")
        assert f"option {key}='upload:0123456789abcdef01234567' names no uploaded policy" in error, error


# ----- budgets ---------------------------------------------------------------------------------------------
def _past(option: Option) -> list[str]:
    """Values of a budget past its cap: the next one, far past, and huge."""
    cap = option.cap
    assert cap is not None
    if option.type is int:
        return [str(int(cap) + 1), str(int(cap) * 1000), "9" * 4000]
    return [repr(math.nextafter(cap, math.inf)), repr(cap * 1000), "1e308"]


@pytest.mark.parametrize("name, key", BUDGETS)
def test_every_budget_is_capped_on_the_server(name: str, key: str, manager, client) -> None:
    option = OPTIONS[name][key]
    at_cap = option.type(option.cap)
    assert manager.check_options(name, {key: at_cap}, f"{name}:{key}={at_cap}") == {}
    for value in _past(option):
        error = refusal(client, f"{name}:{key}={value}")
        assert f"option {key}=" in error and "past this server's cap" in error and f"at most {option.cap:g}" in error
    assert not manager.games
    caps = client.get("/api/options").json()["caps"]
    assert caps[name][key] == option.cap


@pytest.mark.parametrize("item", ["belief=greedy", "draws=2", "last_draws=1", "explain_hand=10"])
def test_a_research_option_is_refused_saying_where_it_lives(item: str, manager, client) -> None:
    error = refusal(client, f"expert:simulations=2,{item}")
    assert "is a research option, not part of c8env's agents" in error and "training/research/expert.py" in error
    assert item.partition("=")[0] not in client.get("/api/options").json()["caps"]["expert"]
    assert not manager.games


@pytest.mark.parametrize("spec", ["expert:simulations=2000", "expert:time_ms=5000",
                                  "expert:simulations=2000,time_ms=5000"])
def test_an_expert_at_its_caps_is_accepted(spec: str, client) -> None:
    assert client.post("/api/games", json={"agents": [spec], "seed": 1}).status_code == 200


def test_an_option_added_to_the_table_is_checked_by_its_kind(tmp_path, monkeypatch, manager, client) -> None:
    """The server reads the table: a new option that names a policy, or a new budget, is checked as its kind says
    before any agent is built (the agents do not know these options: a spec the check lets through would fail
    later)."""
    planted = tmp_path / "planted.npz"
    shutil.copyfile(SHIPPED, planted)
    monkeypatch.setitem(OPTIONS["expert"], "guide", replace(OPTIONS["expert"]["policy"]))
    monkeypatch.setitem(OPTIONS["expert"], "depth", Option(int, lambda v: v >= 1, "an int >= 1", "budget", cap=3))
    with recording() as paths:
        assert "option guide=" in refusal(client, f"expert:guide={planted}")
    assert not opened_within(paths, tmp_path)
    assert "option depth=4 is past this server's cap" in refusal(client, "expert:depth=4")
    assert manager.check_options("expert", {"depth": 3, "guide": "ppo-standard-2p"}, "expert:...") == {}
    monkeypatch.setattr(agents, "OPTION_KINDS", (*OPTION_KINDS, "unknown-to-the-server"))  # a kind added later
    monkeypatch.setitem(OPTIONS["expert"], "later", replace(OPTIONS["expert"]["top"], kind="unknown-to-the-server"))
    with pytest.raises(GameError, match="option later .* is not allowed on this server"):
        manager.check_options("expert", {"later": 1}, "expert:later=1")
