"""Evaluation and league tool: duplicate deals, Wilson intervals, OpenSkill league, CLI outputs, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from c8env.engine import DRAW
from c8env.envs.single_agent import SingleAgentEnv
from c8env.episode import MAX_HAND_STEPS
from c8env.rules import load_rules
from c8env.tools.evaluation import (
    AgentError,
    HandRecord,
    Table,
    bench_config,
    evaluate,
    league,
    play_deal,
    run_bench,
    wilson_interval,
)

ROOT = Path(__file__).resolve().parent.parent.parent


def test_wilson_interval_known_values():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_duplicate_deals_rotate_every_agent_through_every_seat():
    table = evaluate(["greedy", "random", "random"], num_players=3, deals=6, seed=1, workers=1)
    assert table.hands == 18
    by_deal: dict[int, list[list[int]]] = {}
    for record in table.records:
        by_deal.setdefault(record.deal, []).append(record.seats)
    for seatings in by_deal.values():
        assert sorted(s.index(0) for s in seatings) == [0, 1, 2]  # greedy sat in every seat once
    for stats in table.stats:
        assert stats.hands == 18
    assert sum(s.wins for s in table.stats) + table.ties == table.hands
    assert sum(s.points for s in table.stats) == 0  # zero-sum transfers


def test_same_seed_same_table_whatever_the_workers():
    one = evaluate(["greedy", "random"], deals=40, seed=7, workers=1)
    two = evaluate(["greedy", "random"], deals=40, seed=7, workers=2)
    assert [vars(r) for r in one.records] == [vars(r) for r in two.records]
    assert one.rows() == two.rows()
    other = evaluate(["greedy", "random"], deals=40, seed=8, workers=1)
    assert [vars(r) for r in one.records] != [vars(r) for r in other.records]


def test_greedy_beats_random_and_markdown_reports_it():
    table = evaluate(["greedy", "random"], deals=200, seed=0, workers=2)
    greedy, random_ = table.stats
    assert greedy.win_rate > 0.85 and greedy.interval[0] > 0.8
    assert greedy.win_rate + random_.win_rate == pytest.approx(1.0)
    text = table.markdown()
    assert "| greedy |" in text and "95% CI" in text and "hands/s" in text


class _Staller:
    """Draws whenever it may (standard rules allow it), else plays its first legal move."""

    def act(self, observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return DRAW if DRAW in legal else int(legal[0])


def test_stalled_hands_are_cut_off_and_reported():
    rules = load_rules("standard")
    state, steps = play_deal([_Staller(), _Staller()], ["staller", "staller"], rules, 2, 7, [0, 1], max_steps=3000)
    assert steps == 3000 and not state.hand_over

    records = [HandRecord(0, 0, [0, 1], None, [0, 0], MAX_HAND_STEPS, True),
               HandRecord(0, 1, [1, 0], 1, [-5, 5], 40, False)]
    table = Table(["a", "b"], 2, rules, 1, 0, records, 1.0)
    assert table.truncated == 1 and table.ties == 0
    assert f"cut off at {MAX_HAND_STEPS:,} moves (no winner) 1;" in table.markdown()
    assert [s.wins for s in table.stats] == [0, 1] and [s.hands for s in table.stats] == [2, 2]
    assert "cut off" not in evaluate(["greedy", "random"], deals=5, seed=0, workers=1).markdown()


def test_league_matrix_and_ratings():
    result = league(["random", "greedy", "expert:simulations=3"], deals=15, seed=0, workers=2)
    matrix = result.win_matrix()
    assert matrix.shape == (3, 3)
    assert matrix[1, 0] > 0.7 and matrix[0, 1] < 0.3
    assert matrix[1, 0] + matrix[0, 1] == pytest.approx(1.0)
    ordinals = [mu - 3 * sigma for mu, sigma in result.ratings]
    assert ordinals[0] < ordinals[1]  # random rated below greedy
    assert "OpenSkill" in result.markdown()


def test_illegal_agent_action_names_agent_and_move():
    class Cheater:
        def act(self, observation):
            return 57  # pass, never legal at the first decision of a fresh standard deal with cards to play

    rules = load_rules("standard")
    with pytest.raises(AgentError, match=r"agent 'cheater' \(seat \d\) chose 57 \(pass\), which is illegal; legal: "):
        play_deal([Cheater(), Cheater()], ["cheater", "cheater"], rules, 2, deal_seed=3, seats=[0, 1])


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"specs": ["greedy", "nonsense"]}, "unknown agent spec 'nonsense'"),
        ({"specs": ["greedy", "expert:depth=3"]}, "option 'depth=3'"),
        ({"specs": ["greedy", "random"], "rules": "no_such_preset"}, "unknown rules preset 'no_such_preset'"),
        ({"specs": ["greedy", "random"], "deals": 0}, "deals=0"),
        ({"specs": ["a", "b", "c"], "num_players": 2}, "1 to 2 agents for 2 players"),
    ],
)
def test_bad_input_is_named(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        evaluate(**{"workers": 1, **kwargs})


def test_bench_protocol_file(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text("opponents: [random, {spec: greedy, deals: 4}]\nentries:\n  - {rules: standard, players: 2, deals: 6}\n")
    rows = run_bench(str(config), "greedy", seed=0, workers=1)
    assert [(r["opponent"], r["hands"]) for r in rows] == [("random", 12), ("greedy", 8)]
    assert rows[1]["win_rate"] == pytest.approx(0.5)  # a mirror match with duplicate deals is exactly even
    shipped = bench_config("standard")
    assert {"random", "greedy"} <= {o if isinstance(o, str) else o["spec"] for o in shipped["opponents"]}
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        bench_config("nope")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "c8env.tools.evaluation", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.slow
def test_cli_writes_markdown_csv_json_png(tmp_path):
    out = tmp_path / "out"
    done = _cli("greedy", "random", "--deals", "20", "--workers", "2", "--out", str(out), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| greedy | 1 | 40 |" in done.stdout
    assert (out / "eval.csv").read_text().startswith("agent,hands,wins,win_rate,ci_low,ci_high,points_per_hand")
    data = json.loads((out / "eval.json").read_text())
    assert data["rows"][0]["agent"] == "greedy" and data["meta"]["deals"] == 20
    assert (out / "eval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    league_out = tmp_path / "league"
    done = _cli("--league", "random", "greedy", "--deals", "10", "--out", str(league_out), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (league_out / "league.png").exists() and (league_out / "league.csv").exists()


def test_cli_reports_bad_spec_clearly(tmp_path):
    done = _cli("greedy", "bogus", "--deals", "2", "--no-progress", cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown agent spec 'bogus'" in done.stderr and "Traceback" not in done.stderr


def test_console_script_runs_eval(tmp_path):
    script = Path(sys.executable).parent / "c8env"
    if not script.exists():
        pytest.skip("the c8env console script is installed by `pip install -e .` (make setup)")
    done = subprocess.run([str(script), "eval", "greedy", "random", "--deals", "5", "--no-progress", "--workers", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "| random | 1 | 10 |" in done.stdout


# ----- arguments checked before any work ---------------------------------------------------------------
def test_evaluate_refuses_bad_workers_and_seed() -> None:
    from c8env.tools.evaluation import evaluate

    for workers in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match=rf"workers={workers!r} is invalid; allowed: None \(every core\) or an int >= 1"):
            evaluate(["greedy", "random"], deals=1, workers=workers)
    with pytest.raises(ValueError, match="seed=-1 is invalid"):
        evaluate(["greedy", "random"], deals=1, seed=-1, workers=1)


def test_constructor_and_loader_arguments_are_checked() -> None:
    from c8env import agents
    from c8env.tools.evaluation import evaluate

    for seed in ("a", -1, 1.5):
        with pytest.raises(ValueError, match=rf"seed={seed!r} is invalid"):
            agents.load("random", seed=seed)
    with pytest.raises(ValueError, match="illegal_reward='x' is invalid; allowed: a finite number"):
        SingleAgentEnv(illegal_reward="x")
    with pytest.raises(TypeError, match="specs='greedy' is invalid; allowed: a list of agents"):
        evaluate("greedy", deals=1, workers=1)
