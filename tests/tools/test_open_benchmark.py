"""The open benchmark: any agent (objects, factories, package.module:name), illegal moves counted, sealed
observations on every path an outside agent is played, results files and the leaderboard built from them."""

from __future__ import annotations

import gc
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

import c8env
from c8env.engine import State
from c8env.envs.learner_games import LearnerGames
from c8env.envs.single_agent import SingleAgentEnv
from c8env.rules import load_rules
from c8env.tools.evaluation import evaluate, league, run_bench, wilson_interval
from c8env.tools.evaluation.bench import RESULTS_FORMAT, bench_results, protocol_identity
from c8env.tools.evaluation.cli import main as eval_main
from c8env.tools.evaluation.leaderboard import (
    END,
    EXPLOITED,
    START,
    exploited_text,
    leaderboard_markdown,
    load_results,
    ranked,
)
from c8env.tools.evaluation.leaderboard import main as leaderboard_main
from c8env.tools.results import EXPLOIT_FORMAT, EXPLOIT_VERSION
from c8env.vector import VectorGames
from c8env.versions import LATEST

ROOT = Path(__file__).resolve().parents[2]
TINY = {"name": "tiny", "version": 1, "opponents": ["random", "greedy"],
        "entries": [{"rules": "standard", "players": 2, "deals": 4}, {"rules": "standard", "players": 3, "deals": 2}]}


class FirstLegal:
    """Plays its lowest legal action id, reading only the mask."""

    name = "first-legal"

    def act(self, observation: dict) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


class Lucky:
    """A seeded random agent of the user's own (a generator, no act_batch)."""

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))


class BatchFirstLegal(FirstLegal):
    name = "batch-first-legal"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masks.argmax(axis=1).astype(np.int64)


class Stubborn(FirstLegal):
    """Answers 'pass' (57) whenever it has more than five legal moves: illegal there."""

    name = "stubborn"

    def act(self, observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return 57 if len(legal) > 5 and 57 not in legal else int(legal[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks, strict=True)])


def make_lucky(rules, num_players, seed):
    return Lucky(seed)


def test_agent_objects_and_factories_are_evaluated_like_specs():
    table = evaluate([FirstLegal(), "random"], deals=20, seed=1, workers=1)
    assert [s.name for s in table.stats] == ["first-legal", "random"] and table.hands == 40
    assert table.stats[0].wins + table.stats[1].wins + table.ties + table.truncated == 40
    # a factory is called per hand with that hand's seed: any worker count, the same table
    one = evaluate([make_lucky, "greedy"], deals=30, seed=2, workers=1)
    two = evaluate([make_lucky, "greedy"], deals=30, seed=2, workers=2)
    assert [r.winner for r in one.records] == [r.winner for r in two.records]
    assert one.stats[0].name == "make_lucky"
    # a stateful object travels to the workers by pickle, a fresh copy per task: the same table too
    a = evaluate([Lucky(5), "greedy"], deals=60, seed=3, workers=1)
    b = evaluate([Lucky(5), "greedy"], deals=60, seed=3, workers=2)
    assert [r.winner for r in a.records] == [r.winner for r in b.records]
    # two objects of one class are told apart; a repeated spec is not renamed
    assert [s.name for s in evaluate([Lucky(1), Lucky(2)], deals=2, workers=1).stats] == ["Lucky#1", "Lucky#2"]
    assert [s.name for s in evaluate(["greedy", "greedy"], deals=2, workers=1).stats] == ["greedy", "greedy"]


def test_an_object_with_act_batch_plays_on_the_batched_engine_with_the_same_records():
    batched = evaluate([BatchFirstLegal(), "greedy"], deals=25, seed=4, engine="batched")
    scalar = evaluate([BatchFirstLegal(), "greedy"], deals=25, seed=4, engine="scalar", workers=1)
    assert batched.records == scalar.records


def test_a_league_takes_objects_and_names_them():
    result = league([FirstLegal(), "random", "greedy"], deals=10, seed=0, workers=1)
    assert result.specs == ["first-legal", "random", "greedy"]
    with pytest.raises(ValueError, match="at least 2 distinct agents"):
        league(["random", "random"], deals=2)


@pytest.mark.parametrize("engine", ["scalar", "batched"])
def test_illegal_moves_lose_their_hands_and_are_counted_not_raised(engine):
    table = evaluate([Stubborn(), "greedy"], deals=40, seed=5, engine=engine, workers=1)
    stubborn = table.stats[0]
    assert stubborn.illegal > 0
    forfeits = [r for r in table.records if r.forfeit is not None]
    assert len(forfeits) == stubborn.illegal and all(r.winner is None and r.forfeit == 0 for r in forfeits)
    first = forfeits[0].message
    assert "\n" not in first and first.startswith("agent 'stubborn' (seat ") and "chose 57 (pass), which is illegal" in first
    text = table.markdown()
    assert f"stubborn: {stubborn.illegal} illegal move(s), each ending its hand as stubborn's loss; first: " in text
    assert table.rows()[0]["illegal"] == stubborn.illegal
    if engine == "batched":  # the same records as the scalar engine
        assert table.records == evaluate([Stubborn(), "greedy"], deals=40, seed=5, engine="scalar", workers=1).records


def test_bad_agents_get_one_line_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_agents.py").write_text(textwrap.dedent("""
        class Crashes:
            def act(self, observation):
                raise RuntimeError("my policy exploded")

        crashes = Crashes()
        not_an_agent = 42
    """))
    cases = [
        (["no_such_module_xyz:agent", "random"], "cannot import module 'no_such_module_xyz'"),
        (["my_agents:missing", "random"], "my_agents.missing does not exist"),
        (["my_agents:not_an_agent", "random"], "has no act(observation) method"),
        (["my_agents:crashes", "random"], "agent 'my_agents:crashes' (seat 0) raised RuntimeError: my policy exploded"),
    ]
    for argv, words in cases:
        with pytest.raises(SystemExit) as exit_info:
            eval_main([*argv, "--deals", "2", "--workers", "1", "--no-progress"])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_package_module_name_specs_from_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "user_agents.py").write_text(textwrap.dedent("""
        import numpy as np

        class FirstLegal:
            def act(self, observation):
                return int(np.flatnonzero(observation["action_mask"])[0])

        first_legal = FirstLegal()

        def make(rules, num_players, seed):
            return FirstLegal()
    """))
    eval_main(["user_agents:first_legal", "user_agents:make", "--deals", "5", "--workers", "2", "--no-progress"])
    out = capsys.readouterr().out
    assert "| user_agents:first_legal | 1 | 10 |" in out and "| user_agents:make | 1 | 10 |" in out


# ----- sealed observations --------------------------------------------------------------------------
class Snooper:
    """Searches everything reachable from what it is given (attributes, containers, arrays' bases) for an
    engine state, a batched games object, or any array it was not handed fresh."""

    name = "snooper"

    def __init__(self) -> None:
        self.seen = 0

    @staticmethod
    def _reachable(root: object) -> list[object]:
        found, todo, seen = [], [root], set()
        while todo:
            item = todo.pop()
            if id(item) in seen or isinstance(item, type):
                continue
            seen.add(id(item))
            found.append(item)
            todo.extend(gc.get_referents(item))
            if isinstance(item, np.ndarray) and item.base is not None:
                todo.append(item.base)
            todo.extend(getattr(item, "__dict__", {}).values())
        return found

    def check(self, received: object) -> None:
        for item in self._reachable(received):
            assert not isinstance(item, (State, VectorGames, LearnerGames)), f"reached a {type(item).__name__}"
            if isinstance(item, np.ndarray):
                assert item.base is None, "an array that is a view of something else"
        self.seen += 1

    def act(self, observation: dict) -> int:
        assert type(observation) is dict and sorted(observation) == ["action_mask", "observation"]
        self.check(observation)
        observation["observation"][:] = -7  # writing into what it was given changes nothing of the game
        return int(np.flatnonzero(observation["action_mask"])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.check(observations)
        self.check(masks)
        actions = masks.argmax(axis=1).astype(np.int64)
        masks[:] = 0
        observations[:] = -7
        return actions


class ScalarSnooper(Snooper):
    """The same without act_batch (the scalar engine plays it)."""

    act_batch = None  # type: ignore[assignment]


def test_a_snooping_agent_finds_nothing_on_any_path():
    import c8env
    from c8env.web.games import GameManager

    # the AEC env: what an outside loop hands its agent is env.observe's fresh dict
    env = c8env.env(num_players=3)
    env.reset(seed=1)
    snooper = ScalarSnooper()
    for agent in env.agent_iter(max_iter=300):
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else snooper.act(env.observe(agent)))
    # SingleAgentEnv's opponents, evaluation on both engines, the learner games' act_batch opponents
    single = SingleAgentEnv(num_players=3, opponents=[ScalarSnooper(), "greedy"])
    single.reset(seed=2)
    for _ in range(100):
        _, _, terminated, truncated, _ = single.step(int(np.flatnonzero(single.action_masks())[0]))
        if terminated or truncated:
            single.reset()
    evaluate([ScalarSnooper(), "greedy"], deals=3, seed=0, engine="scalar", workers=1)
    evaluate([Snooper(), "greedy"], deals=3, seed=0, engine="batched")
    games = LearnerGames(8, 2, "standard", "hand", "win", None, Snooper(), None)
    games.reset(0)
    for _ in range(30):
        games.step(games.action_masks().argmax(axis=1))
    # the web server's agents
    manager = GameManager()
    try:
        game = manager.create(agents=["greedy"], seed=4)
        web_snooper = ScalarSnooper()
        game.agents[1] = web_snooper
        for _ in range(200):
            if game.status != "playing":
                break
            if game.state.current_player == game.seat:
                game.act(game.state.legal_actions()[0])
            else:
                game.advance()
    finally:
        manager.close()
    assert game.status in ("playing", "finished") and web_snooper.seen > 0 and snooper.seen > 0


# ----- results files and the leaderboard ------------------------------------------------------------
def _results(tmp_path: Path, config: dict, agent: object, name: str | None = None) -> Path:
    import yaml

    protocol = tmp_path / f"{config['name']}.yaml"
    protocol.write_text(yaml.safe_dump(config))
    rows = run_bench(str(protocol), agent, seed=0, workers=1, name=name)
    path = tmp_path / f"{rows[0]['agent']}-{config['version']}.json"
    path.write_text(json.dumps(bench_results(str(protocol), rows, seed=0)))
    return path


def test_results_files_rank_into_a_leaderboard(tmp_path, capsys):
    paths = [_results(tmp_path, TINY, agent) for agent in ("random", "greedy", FirstLegal())]
    data = json.loads(paths[1].read_text())
    assert data["format"] == RESULTS_FORMAT and data["protocol"]["name"] == "tiny" and len(data["cells"]) == 4
    assert (data["env_id"], data["obs_size"], data["c8env_version"]) == (
        f"c8env/crazy_eights-v{LATEST.number}", LATEST.obs_size, c8env.__version__)  # what was measured, and with what
    assert {"hands", "wins", "win_rate", "ci_low", "ci_high", "points", "truncated"} <= set(data["cells"][0])
    assert data["protocol"]["sha256"] == protocol_identity(TINY | {})["sha256"]
    rows = ranked(load_results(paths))
    assert [r["agent"] for r in rows][0] == "greedy" and rows[-1]["agent"] == "random"
    out = tmp_path / "board"
    leaderboard_main([str(p) for p in paths] + ["--out", str(out)])
    assert capsys.readouterr().out.strip() == leaderboard_markdown(rows)
    assert {p.name for p in out.iterdir()} == {"leaderboard.md", "leaderboard.csv", "leaderboard.png"}
    assert len((out / "leaderboard.csv").read_text().splitlines()) == 1 + 3 * 4
    page = tmp_path / "page.md"
    page.write_text(f"before\n{START}\nold\n{END}\nafter\n")
    leaderboard_main([str(p) for p in paths] + ["--update", str(page), "--top", "2"])
    block = page.read_text().split(START + "\n")[1].split("\n" + END)[0]
    assert block == leaderboard_markdown(rows, top=2) and "| 2 | " in block and "| 3 | " not in block
    written = (out / "leaderboard.md").read_text().splitlines()
    assert sum(line.startswith("|") for line in written) == 2 + 3  # --out keeps every row
    assert written[-1] == f"Measured on `c8env/crazy_eights-v{LATEST.number}` with c8env {c8env.__version__}."


def test_the_leaderboard_reads_the_folder_the_bench_wrote(tmp_path, monkeypatch, capsys):
    """`c8env eval --bench P --agent X --out DIR` then `c8env leaderboard DIR`: the folder holds the results files
    and nothing the leaderboard refuses; a summary of `c8env eval --out` there is passed over, saying so."""
    import yaml

    monkeypatch.chdir(tmp_path)
    Path("tiny.yaml").write_text(yaml.safe_dump(TINY))
    eval_main(["--bench", "tiny.yaml", "--agent", "greedy", "--agent", "random", "--out", "results/", "--no-progress"])
    eval_main(["greedy", "random", "--deals", "2", "--out", "results/", "--no-progress"])  # eval.csv, eval.json
    assert {p.name for p in Path("results").iterdir()} == {"bench.csv", "bench.png", "greedy.json", "random.json",
                                                           "eval.csv", "eval.json", "eval.png"}
    capsys.readouterr()
    leaderboard_main(["results/", "--out", "board/"])
    captured = capsys.readouterr()
    rows = ranked(load_results([Path("results/greedy.json"), Path("results/random.json")]))
    assert captured.out.strip() == leaderboard_markdown(rows) and [r["agent"] for r in rows] == ["greedy", "random"]
    assert "passed over results/eval.json: the summary table `c8env eval --out` writes" in captured.err
    with pytest.raises(SystemExit):
        leaderboard_main(["results/greedy.json", "results/eval.json"])
    assert "results/eval.json: the summary table `c8env eval --out` writes, not a results file" in capsys.readouterr().err
    Path("summaries").mkdir()
    Path("results/eval.json").rename("summaries/eval.json")
    with pytest.raises(SystemExit):  # one results file per agent: a spec given twice would overwrite its own
        eval_main(["--bench", "tiny.yaml", "--agent", "greedy", "--agent", "greedy", "--out", "summaries/"])
    assert "['greedy.json'] would be written twice" in capsys.readouterr().err
    assert [p.name for p in Path("summaries").iterdir()] == ["eval.json"]
    with pytest.raises(ValueError, match="the folders given hold only summaries of `c8env eval --out`"):
        load_results([Path("summaries")])


def test_two_specs_at_a_larger_table_seat_the_first_once_as_the_benchmark_does(tmp_path, monkeypatch, capsys):
    """`c8env eval A B --players 3`: A in one seat, B in the other two (A's figures are the benchmark cell's);
    three specs: one per seat, as listed."""
    import yaml

    monkeypatch.chdir(tmp_path)
    Path("tiny.yaml").write_text(yaml.safe_dump(TINY))
    eval_main(["greedy", "random", "--players", "3", "--deals", "2", "--out", "one/", "--no-progress"])
    rows = json.loads(Path("one/eval.json").read_text())["rows"]
    assert [r["agent"] for r in rows] == ["greedy", "random#1", "random#2"] and {r["hands"] for r in rows} == {6}
    cell = next(r for r in run_bench("tiny.yaml", "greedy", seed=0, workers=1)
                if r["players"] == 3 and r["opponent"] == "random")
    assert (rows[0]["wins"], rows[0]["win_rate"], rows[0]["ci_low"]) == (cell["wins"], cell["win_rate"], cell["ci_low"])
    assert "| greedy | 1 | 6 |" in capsys.readouterr().out  # one seat per hand
    eval_main(["greedy", "random", "random", "--players", "3", "--deals", "2", "--out", "listed/", "--no-progress"])
    listed = json.loads(Path("listed/eval.json").read_text())["rows"]
    assert [r["agent"] for r in listed] == ["greedy", "random", "random"] and listed[0]["wins"] == rows[0]["wins"]


def test_a_package_module_spec_is_named_by_its_agents_name(tmp_path, monkeypatch, capsys):
    """`c8env eval my_module:obj greedy`: the table, the benchmark's results file and the leaderboard show the
    object's `name` (a factory's agent's), a spec as written when it has none."""
    import yaml

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    Path("named_agents_c8.py").write_text(textwrap.dedent("""
        import numpy as np

        class Bot:
            name = "first-legal"

            def act(self, observation):
                return int(np.flatnonzero(observation["action_mask"])[0])

        class Anonymous(Bot):
            name = None

        policy, plain = Bot(), Anonymous()

        def make_agent(rules, num_players, seed):
            return Bot()
    """))
    Path("tiny.yaml").write_text(yaml.safe_dump(TINY))
    eval_main(["named_agents_c8:policy", "greedy", "--deals", "2", "--workers", "1", "--out", "eval/", "--no-progress"])
    assert [r["agent"] for r in json.loads(Path("eval/eval.json").read_text())["rows"]] == ["first-legal", "greedy"]
    eval_main(["named_agents_c8:make_agent", "named_agents_c8:plain", "--players", "3", "--deals", "2", "--workers", "1",
               "--out", "eval/", "--no-progress"])
    assert [r["agent"] for r in json.loads(Path("eval/eval.json").read_text())["rows"]] == [
        "first-legal", "named_agents_c8:plain#1", "named_agents_c8:plain#2"]
    eval_main(["--bench", "tiny.yaml", "--agent", "named_agents_c8:policy", "--agent", "greedy", "--workers", "1",
               "--out", "results/", "--no-progress"])
    assert json.loads(Path("results/first-legal.json").read_text())["agent"] == "first-legal"
    capsys.readouterr()
    leaderboard_main(["results/"])
    assert "| first-legal |" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # two specs of one name would write one results file twice
        eval_main(["--bench", "tiny.yaml", "--agent", "named_agents_c8:policy", "--agent", "named_agents_c8:make_agent",
                   "--out", "results/"])
    assert "['first-legal.json'] would be written twice" in capsys.readouterr().err
    # two specs whose agents share a name are told apart in a table
    table = evaluate(["named_agents_c8:policy", "named_agents_c8:make_agent"], deals=2, workers=1)
    assert [s.name for s in table.stats] == ["first-legal#1", "first-legal#2"]


def test_the_leaderboard_shows_each_cells_hands_cut_off(tmp_path, capsys):
    paths = [_results(tmp_path, TINY, agent) for agent in ("random", "greedy")]
    rows = ranked(load_results(paths))
    clean = leaderboard_markdown(rows)
    assert "cut off" not in clean  # nothing where no hand was cut off
    data = json.loads(paths[0].read_text())
    data["cells"][1]["truncated"] = 3
    paths[0].write_text(json.dumps(data))
    out = tmp_path / "board"
    leaderboard_main([str(p) for p in paths] + ["--out", str(out)])
    text = capsys.readouterr().out
    rate = data["cells"][1]["win_rate"]
    assert text.count("cut off") == 2 and f"| {rate:.1%} (3 cut off) |" in text
    assert "(N cut off): N of the cell's hands were stopped at 10,000 moves with no winner" in text
    import csv

    with (out / "leaderboard.csv").open() as fh:
        cut = {(r["agent"], r["players"], r["opponent"]): r["truncated"] for r in csv.DictReader(fh)}
    assert cut[("random", "2", "greedy")] == "3" and list(cut.values()).count("0") == len(cut) - 1
    assert (out / "leaderboard.png").stat().st_size > 0


def test_the_leaderboard_top_option_is_checked(tmp_path, capsys):
    paths = [str(_results(tmp_path, TINY, agent)) for agent in ("random", "greedy")]
    for args, message in ((["--top", "2"], "--top goes with --update"),
                          (["--update", "page.md", "--top", "0"], "argument --top: 0 is invalid")):
        with pytest.raises(SystemExit):
            leaderboard_main(paths + args)
        assert message in capsys.readouterr().err
    with pytest.raises(ValueError, match="top must be at least 1, got 0"):
        leaderboard_markdown(ranked(load_results([Path(p) for p in paths])), top=0)


def test_the_leaderboard_refuses_mixed_protocols_and_formats(tmp_path, capsys):
    first = _results(tmp_path, TINY, "greedy")
    newer = _results(tmp_path, TINY | {"version": 2}, "random")
    with pytest.raises(SystemExit):
        leaderboard_main([str(first), str(newer)])
    err = capsys.readouterr().err
    assert "was scored on protocol 'tiny' v2" in err and "protocol 'tiny' v1" in err and err.count("\n") == 1
    future = json.loads(first.read_text()) | {"format_version": 99}
    (tmp_path / "future.json").write_text(json.dumps(future))
    with pytest.raises(ValueError, match="results format version 99; this c8env reads version 1"):
        load_results([tmp_path / "future.json"])
    stale = json.loads(first.read_text())
    stale["protocol"] = stale["protocol"] | {"name": "standard"}  # claims the shipped protocol, another hash
    (tmp_path / "stale.json").write_text(json.dumps(stale))
    with pytest.raises(ValueError, match="but this c8env ships protocol 'standard' v1"):
        load_results([tmp_path / "stale.json"])


def _exploit_results(folder: Path, agent: str, start: float, final: float, **changes: object) -> Path:
    """A synthetic exploit results file (version 2; no training): the exploiter's start and final win rates."""
    def measured(win_rate: float) -> dict:
        wins = round(1000 * win_rate)
        low, high = wilson_interval(wins, 1000)
        return {"deals": 500, "hands": 1000, "wins": wins, "win_rate": win_rate, "ci_low": round(low, 4),
                "ci_high": round(high, 4), "fair_share": 0.5, "points_per_hand": 0.0, "truncated": 0, "seed": 1}

    data = {"format": EXPLOIT_FORMAT, "format_version": EXPLOIT_VERSION, "agent": agent, "players": 2,
            "rules": "standard", "ruleset": load_rules("standard").to_dict(), "max_hand_steps": 10000, "seed": 0,
            "budget": {"steps": 8192, "evaluations": 2, "curve_deals": 10, "final_deals": 500},
            "hyperparameters": {"learning_rate": 3e-4}, "start": {"policy": "iter6-standard-2p",
                                                                  "why": "the strongest network", **measured(start)},
            "final": measured(final), "gain": round(final - start, 4)} | changes
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{agent}.json"
    path.write_text(json.dumps(data))
    return path


def test_the_exploited_column_gives_the_gain_and_the_exploiters_final_win_rate(tmp_path, capsys):
    paths = [_results(tmp_path, TINY, agent) for agent in ("random", "greedy")]
    exploit = _exploit_results(tmp_path / "exploit", "greedy", 0.633, 0.674)
    rows = ranked(load_results([*paths, exploit]))
    assert [(r["agent"], r["score"]) for r in rows] == [(r["agent"], r["score"]) for r in ranked(load_results(paths))]
    figure = {r["agent"]: r["exploited"] for r in rows}["greedy"]
    assert (figure["gain"], figure["win_rate"], figure["start_win_rate"], figure["start_policy"]) == (
        0.041, 0.674, 0.633, "iter6-standard-2p")
    table = leaderboard_markdown(rows).splitlines()
    assert EXPLOITED == "exploited: gain (exploiter's win rate)" and f"| score | {EXPLOITED} | " in table[0]
    assert "| +4.1 (67.4%) |" in next(line for line in table if "| greedy |" in line)
    assert next(line for line in table if "| random |" in line).split(" | ")[4] == ""
    assert exploited_text(figure | {"gain": -0.008, "win_rate": 0.492}) == "-0.8 (49.2%)"
    out = tmp_path / "board"
    leaderboard_main([*map(str, paths), str(exploit), "--out", str(out)])
    assert capsys.readouterr().out.strip() == leaderboard_markdown(rows)
    import csv

    with (out / "leaderboard.csv").open() as fh:
        lines = list(csv.DictReader(fh))
    columns = ("exploited", "exploited_ci_low", "exploited_ci_high", "exploited_gain", "exploited_start")
    assert {tuple(r[c] for c in columns) for r in lines if r["agent"] == "greedy"} == {
        ("0.674", str(figure["ci_low"]), str(figure["ci_high"]), "0.041", "0.633")}
    assert {tuple(r[c] for c in columns) for r in lines if r["agent"] == "random"} == {("",) * 5}
    old = _exploit_results(tmp_path / "old", "greedy", 0.633, 0.674, format_version=1)
    with pytest.raises(ValueError) as refused:
        load_results([*paths, old])
    assert str(refused.value) == (f"{old}: exploit results format version 1 (a fresh learner's win rate, not a gain); "
                                  "this c8env reads version 2: rerun `c8env exploit AGENT --out DIR`")


def test_the_leaderboards_in_the_repository_are_generated_from_its_results_files():
    results = sorted((ROOT / "docs" / "leaderboard" / "results").glob("*.json"))
    exploits = sorted((ROOT / "docs" / "leaderboard" / "exploit").glob("*.json"))  # the exploited column
    rows = ranked(load_results(results + exploits))
    assert {"random", "greedy", "expert"} <= {r["agent"] for r in rows}
    assert {r["agent"] for r in rows if r["exploited"]} == {data.stem for data in exploits}
    page = ROOT / "docs" / "leaderboard" / "leaderboard.md"
    assert page.read_text().strip() == leaderboard_markdown(rows), f"{page} is not the generated table"
    readme = (ROOT / "README.md").read_text()  # the top rows only (--top N)
    block = readme.split(START + "\n")[1].split("\n" + END)[0]
    top = sum(line.startswith("|") for line in block.splitlines()) - 2
    assert 3 <= top < len(rows) and block == leaderboard_markdown(rows, top=top), "README.md: not the generated top rows"


@pytest.mark.slow
def test_a_league_spread_over_a_local_ray_cluster_gives_the_local_table():
    specs = ["greedy", "random", "expert:simulations=3"]
    local = league(specs, deals=30, seed=6, workers=2, engine="scalar")
    spread = league(specs, deals=30, seed=6, workers=2, engine="scalar", ray="local")
    assert spread.markdown() == local.markdown()
    assert all(spread.tables[key].records == table.records for key, table in local.tables.items())


def test_a_protocol_file_with_a_repeated_key_is_refused(tmp_path):
    from c8env.tools.evaluation.bench import bench_config

    protocol = tmp_path / "twice.yaml"
    protocol.write_text("name: twice\nversion: 1\nversion: 2\nopponents: [random]\nentries: [{players: 2}]\n")
    with pytest.raises(ValueError, match="benchmark .*twice.yaml.* is not valid YAML .*version"):
        bench_config(str(protocol))
