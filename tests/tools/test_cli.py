"""Every command line refuses bad values before any work: exit status 2 and one line naming the argument,
the value and what is allowed; no partial output."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from c8env.tools import cli

BAD_YAML = "decks: 2\n  hand_size: [5\n"


def run_main(module: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Call a command's main(); return its one line of stderr after checking exit status 2."""
    main = importlib.import_module(module).main if module != "c8env.tools.cli" else cli.main
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "", out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def bad_yaml(tmp_path: Path) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_YAML)
    return str(path)


@pytest.mark.parametrize("argv, expected", [
    (["greedy", "random", "--workers", "0"], "argument --workers: 0 is invalid; allowed: an int >= 1"),
    (["greedy", "random", "--workers", "-2"], "argument --workers: -2 is invalid; allowed: an int >= 1"),
    (["greedy", "random", "--deals", "0"], "argument --deals: 0 is invalid; allowed: an int >= 1"),
    (["greedy", "random", "--deals", "many"], "argument --deals: 'many' is not an int"),
    (["greedy", "random", "--players", "8"], "argument --players: 8 is invalid; allowed: an int from 2 to 7"),
    (["greedy", "random", "--seed", "-1"], "argument --seed: -1 is invalid; allowed: an int >= 0"),
    (["greedy", "random", "--rules", "nope"], "argument --rules: unknown rules preset 'nope'; allowed:"),
    (["greedy", "bogus"], "unknown agent spec 'bogus'; allowed:"),
    (["--bench", "standard"], "--bench needs --agent SPEC"),
    (["greedy", "random", "random", "--players", "4"], "3 agent spec(s) for --players 4; allowed: 2 (the first in one "
                                                       "seat, the second in the other 3) or 4 (one per seat)"),
    (["greedy"], "1 agent spec(s) for --players 2; allowed: 2 (one per seat)"),
])
def test_eval(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = run_main("c8env.tools.evaluation", argv, capsys)
    assert line.startswith("c8env eval: error: ") and expected in line, line


def test_eval_out_is_checked_before_the_evaluation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    line = run_main("c8env.tools.evaluation", ["greedy", "random", "--deals", "100000", "--out", str(taken)], capsys)
    assert "argument --out:" in line and "exists and is not a folder" in line
    assert taken.read_text() == "keep me" and sorted(tmp_path.iterdir()) == [taken]


def test_malformed_rules_yaml_is_one_line_everywhere(bad_yaml: str, capsys: pytest.CaptureFixture[str]) -> None:
    import c8env

    with pytest.raises(ValueError) as info:
        c8env.load_rules(bad_yaml)
    assert "\n" not in str(info.value) and bad_yaml in str(info.value) and "not valid YAML (line 2" in str(info.value)
    for module, prog, extra in (("c8env.tools.evaluation", "c8env eval", ["greedy", "random"]), ("c8env.tools.play", "c8env play", []),
                                ("c8env.tools.demo", "c8env demo", [])):
        line = run_main(module, [*extra, "--rules", bad_yaml], capsys)
        assert line.startswith(f"{prog}: error: argument --rules: rules file") and "not valid YAML" in line, line


@pytest.mark.parametrize("argv, expected", [
    (["--players", "1"], "argument --players: 1 is invalid; allowed: an int from 2 to 7"),
    (["--seed", "-3"], "argument --seed: -3 is invalid; allowed: an int >= 0"),
    (["--agents", "nobody"], "argument --agents: unknown agent spec 'nobody'"),
    (["--rules", "standrd"], "unknown rules preset 'standrd'"),
])
def test_demo(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = run_main("c8env.tools.demo", argv, capsys)
    assert line.startswith("c8env demo: error: ") and expected in line, line


@pytest.mark.parametrize("argv, expected", [
    (["--players", "9"], "argument --players: 9 is invalid; allowed: an int from 2 to 7"),
    (["--seat", "-1"], "argument --seat: -1 is invalid"),
    (["--seat", "2"], "seat=2 is invalid; allowed: an int from 0 to 1"),
    (["--agent", "bogus"], "unknown agent spec 'bogus'"),
    (["--episode", "set"], "argument --episode: invalid choice: 'set'"),
])
def test_play(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = run_main("c8env.tools.play", argv, capsys)
    assert line.startswith("c8env play: error: ") and expected in line, line


@pytest.mark.parametrize("argv, expected", [
    (["engine", "--decisions", "-5"], "argument --decisions: -5 is invalid; allowed: an int >= 1"),
    (["env", "--steps", "0"], "argument --steps: 0 is invalid; allowed: an int >= 1"),
    (["expert", "--hands", "0"], "argument --hands: 0 is invalid"),
    (["expert", "--spec", "nope"], "argument --spec: unknown agent spec 'nope'"),
    (["expert", "--baseline", "expert:simulations=0"], "argument --baseline: agent spec option simulations=0 is invalid for 'expert' (out of range)"),
    (["engines"], "argument what: invalid choice: 'engines'"),
    (["vector", "--threads", "0"], "argument --threads: 0 is invalid; allowed: an int >= 1"),
])
def test_speed(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = run_main("c8env.tools.speed", argv, capsys)
    assert line.startswith("c8env speed: error: ") and expected in line, line


def test_speed_times_two_searches_on_the_same_positions(capsys: pytest.CaptureFixture[str]) -> None:
    from c8env.tools.speed import main

    main(["expert", "--hands", "2", "--spec", "expert:simulations=3", "--baseline", "expert:simulations=6"])
    out = capsys.readouterr().out
    match = re.fullmatch(r"(\d+) positions with a choice in 2 hands vs greedy; ms per decision: expert:simulations=3 "
                         r"mean [\d.]+, median [\d.]+; expert:simulations=6 mean [\d.]+, median [\d.]+; ratio of the "
                         r"means [\d.]+x, median of the per-position ratios [\d.]+x\n", out)
    assert match and int(match.group(1)) > 5, out


def test_speed_times_the_batched_engine_on_one_and_more_threads(capsys: pytest.CaptureFixture[str]) -> None:
    from c8env.tools.speed import bench_threads

    bench_threads(2048, 3, runs=1, openspiel_games=5)
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"vector, threads: 2 players, B = 1024, observation \+ mask, .* median of 1 interleaved runs "
                        r"of ~2,048 steps; \d+ CPUs, load average \(1, 5, 15 min\) [\d. ]+ before, [\d. ]+ after",
                        lines[0]), lines[0]
    assert [line.split("|")[0].strip() for line in lines[2:]][:2] == ["1 thread", "3 threads"]
    rate = r" +\| +[\d,]+ \| +[\d.]+x \| ([\d.]+x|\(not installed: pip install -e \.\[speed\]\))"
    assert all(re.fullmatch(r" *[\w' +]+" + rate, line) for line in lines[2:]), lines


def test_unknown_command_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["evaluate"])
    assert info.value.code == 2 and "unknown command 'evaluate'" in capsys.readouterr().err


@pytest.mark.parametrize("module, argv, expected", [
    ("training.train", ["--n-envs", "0"], "argument --n-envs: 0 is invalid; allowed: an int >= 1"),
    ("training.train", ["--total-steps", "x"], "argument --total-steps: 'x' is not an int"),
    ("training.train", ["--config", "configs/train/default.yaml", "--set", "rules=nope", "--print-config"],
     "config key 'rules' = 'nope' is invalid"),
    ("training.train", ["--config", "configs/train/default.yaml", "--set", "n_envs=0", "--print-config"],
     "config key 'n_envs' = 0 is invalid"),
    ("training.export", ["runs/none", "out.txt"], "OUT must end in .npz"),
    ("training.export", ["runs/none", "no/such/folder/p.npz"], "argument OUT:"),
    ("training.export", ["runs/none", "p.npz", "--players", "1"], "argument --players: 1 is invalid"),
    ("training.plot", ["runs/none", "--out", "curves.jpg"], "argument --out: 'curves.jpg' does not end in .png"),
    ("training.plot", ["runs/none"], "has no evals.jsonl"),
])
def test_training_commands(module: str, argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    line = run_main(module, argv, capsys)
    assert line.startswith(f"python -m {module}: error: ") and expected in line, line


def test_training_config_with_malformed_yaml(bad_yaml: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    line = run_main("training.train", ["--config", bad_yaml, "--print-config"], capsys)
    assert bad_yaml in line and "is not valid YAML (line 2" in line, line
