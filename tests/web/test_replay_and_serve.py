"""Replays (exact playback, checks, the terminal viewer), c8env serve's command line and the load test."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from c8env.actions import DRAW
from c8env.engine import State
from c8env.tools.cli import COMMANDS
from c8env.tools.replay import build_parser, build_replay, event_for, load_replay_file, main, play_replay, view_replay
from c8env.web import serve


def random_game(rules: str, players: int, seed: int, episode: str = "hand", draw_bias: float = 0.0) -> dict:
    """A game played on the engine with random moves, recorded as replay data."""
    rng = random.Random(seed)
    state = State.new(players, rules, seed=seed)
    hands = [{"deal": state.to_dict(), "actions": []}]
    reshuffles = 0
    while True:
        while not state.hand_over and len(hands[-1]["actions"]) < 3000:
            legal = state.legal_actions()
            others = [a for a in legal if a != DRAW] or legal
            action = DRAW if DRAW in legal and rng.random() < draw_bias else rng.choice(others)
            stock = len(state.stock)
            state.apply(action)
            reshuffles += len(state.stock) > stock
            hands[-1]["actions"].append(action)
        if episode == "hand" or not state.hand_over or state.match_over:
            break
        state.next_hand()
        hands.append({"deal": state.to_dict(), "actions": []})
    data = build_replay(rules=rules, seed=seed, episode=episode, agents=[None] + ["random"] * (players - 1),
                        hands=hands, final=state)
    data["_reshuffles"] = reshuffles
    return data


def test_a_replay_reproduces_the_game_exactly_with_reshuffles() -> None:
    data = random_game("standard", 2, seed=3, draw_bias=0.6)
    reshuffles = data.pop("_reshuffles")
    assert reshuffles > 0  # the stock was rebuilt from the discard pile: seeded, reproduced
    data = json.loads(json.dumps(data))  # through JSON, as a downloaded file
    frames = play_replay(data)
    assert frames[-1].state.to_dict() == data["final"]
    assert len(frames) == len(data["hands"][0]["actions"]) + 1


def test_a_match_replay_reproduces_every_deal() -> None:
    data = random_game("five_hands", 3, seed=8, episode="match")
    data.pop("_reshuffles")
    assert len(data["hands"]) == 5
    frames = play_replay(json.loads(json.dumps(data)))
    assert frames[-1].state.match_over and frames[-1].state.to_dict() == data["final"]
    starts = [f for f in frames if f.event is None]
    assert [f.state.to_dict() for f in starts] == [h["deal"] for h in data["hands"]]


def test_a_replay_that_does_not_reproduce_is_refused() -> None:
    data = random_game("standard", 2, seed=5)
    data.pop("_reshuffles")
    other = random_game("standard", 2, seed=5, draw_bias=0.7)
    assert other.pop("_reshuffles") > 0  # a wrong seed reshuffles the stock differently
    with pytest.raises(ValueError, match="final state differs|illegal"):
        play_replay(dict(other, seed=other["seed"] + 1))
    assert other.pop("_reshuffles", None) is None and play_replay(other)[-1].state.to_dict() == other["final"]
    tampered = copy.deepcopy(data)
    tampered["hands"][0]["actions"][0] = 59
    with pytest.raises(ValueError, match=r"hands\[0\]\.actions\[0\].*illegal"):
        play_replay(tampered)
    cut = copy.deepcopy(data)
    cut["hands"][0]["actions"].pop()
    with pytest.raises(ValueError, match="final state differs"):
        play_replay(cut)
    for bad, words in [({**data, "version": 2}, "version"), ({**data, "num_players": 9}, "num_players"),
                       ({**data, "agents": ["greedy"]}, "agents"), ({**data, "extra": 1}, "unknown keys"),
                       ({**data, "hands": []}, "hands"), ({**data, "seed": -1}, "seed"), ([], "JSON object")]:
        with pytest.raises(ValueError, match=words):
            play_replay(bad)


def test_seat_views_hide_other_draws() -> None:
    event = {"seat": 1, "action": DRAW, "text": "draw (1 card)", "drawn": ["7H"]}
    assert "drawn" not in event_for(event, 0)
    assert event_for(event, 1)["drawn"] == ["7H"] and event_for(event, None)["drawn"] == ["7H"]


def test_replay_command_steps_forwards_and_backwards(tmp_path: Path, capsys) -> None:
    data = random_game("special_cards", 3, seed=2)
    data.pop("_reshuffles")
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data))
    steps = len(data["hands"][0]["actions"])
    main([str(path), "--all"])
    out = capsys.readouterr().out
    assert f"[step {steps}]" in out and "result: winner" in out
    said: list[str] = []
    answers = iter(["", "n", "b", "5", "x", "q"])
    view_replay(data, seat=1, ask=lambda prompt: next(answers), say=said.append)
    shown = [line for line in said if line.startswith("[step")]
    assert shown == [f"[step {i}/{steps}]" for i in (0, 1, 2, 1, 5, 5)]
    assert any("seen by player_1" in line for line in said)
    hidden = [line for line in said if line.startswith(" player_0") or line.startswith("*player_0")]
    assert hidden and all(line.rstrip().endswith(tuple("0123456789")) for line in hidden)  # no cards listed
    build_parser().parse_args([str(path), "--seat", "0"])
    with pytest.raises(SystemExit):
        main([str(tmp_path / "missing.json")])
    assert COMMANDS["replay"][0] == "c8env.tools.replay" and COMMANDS["serve"][0] == "c8env.web.serve"


def test_serve_binds_to_loopback_and_warns_when_exposed(monkeypatch, capsys) -> None:
    import uvicorn

    assert serve.build_parser().parse_args([]).host == "127.0.0.1"
    assert serve.is_loopback("127.0.0.1") and serve.is_loopback("::1") and serve.is_loopback("localhost")
    assert not serve.is_loopback("0.0.0.0") and not serve.is_loopback("192.168.1.4")
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: calls.append((host, port)))
    serve.main(["--port", "8123"])
    assert "loopback only" in capsys.readouterr().out and calls[-1] == ("127.0.0.1", 8123)
    serve.main(["--host", "0.0.0.0"])
    assert "WARNING" in capsys.readouterr().err and calls[-1] == ("0.0.0.0", 8000)
    with pytest.raises(SystemExit):
        serve.main(["--idle-timeout", "0"])


@pytest.mark.slow
def test_load_test_plays_concurrent_games_and_reports() -> None:
    from c8env.web.loadtest import run_local

    report = run_local(games=6, seed=1, max_requests=3000, timeout=120)
    assert report["failed_games"] == 0 and report["errors"] == 0, report
    assert report["finished"] == 6 and report["requests"] > 6 * 4
    assert report["requests_per_s"] > 0 and report["p99_ms"] >= report["p50_ms"] > 0


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),  # was a RecursionError traceback
    ('{"seed": ' + "9" * 5000 + "}", "cannot be read"),  # was Python's int-digits ValueError, unnamed
    ("{", "is not JSON"),
])
def test_a_damaged_replay_file_is_refused_in_one_line(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        load_replay_file(path)
    assert words in str(info.value) and "bad.json" in str(info.value) and "\n" not in str(info.value)
