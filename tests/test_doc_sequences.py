"""The docs' shell sequences, run end to end as a user runs them: in a fresh folder, command after command, each
the doc's line as written but for its budget (:data:`BUDGETS`, the only changes, applied by :func:`tiny`).

- A sequence (:data:`SEQUENCES`) is shell blocks (bash, sh) of docs pages, named by a command of each, in the order
  a user runs them; every command of those blocks runs, but for the few :data:`NOT_RUN` says why.
- Every command of the docs is in a sequence or in :data:`NOT_RUN` (:func:`test_every_command_is_run_or_excused`).
- What the docs take as the user's own files (``my_agents.py``, ``model.onnx``, an SB3 ``model.zip``, a policy
  file) the fresh folder gets first; ``configs/``, ``docs/leaderboard/`` and ``README.md`` are copies of the
  repository's, the training configs with :data:`TRAIN_BUDGET`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_docs import blocks

ROOT = Path(__file__).resolve().parent.parent
C8ENV = Path(sys.executable).with_name("c8env")

#: The only changes to the docs' command lines: (pattern, replacement, what it stands for). Each must change a
#: command of the sequences (:func:`test_every_budget_substitution_is_used`).
BUDGETS = [
    (r"--deals \d+", "--deals 2", "every deal count"),
    (r"^(c8env eval (?!.*--deals)(?!.*--bench)(?!.*--league).*)$", r"\1 --deals 2",
     "an evaluation without --deals (its default: 1,000 deals)"),
    (r"--bench standard", "--bench tiny.yaml",
     "the benchmark protocol: TINY_PROTOCOL (its cells, 2 deals each; docs/leaderboard/results holds random's and "
     "greedy's results on it in the folders of the sequences that score on it)"),
    (r"^(c8env exploit (?!--table)\S+.*?)(?: --steps \d+)?( --out \S+)$",
     r"\1 --steps 1 --evals 1 --curve-deals 2 --deals 2\2", "an exploit run: one rollout, 2 deals"),
    (r"total_steps=\d+", "total_steps=512", "a training run's steps (the rest of its budget: TRAIN_BUDGET)"),
    (r"--hands \d+", "--hands 2", "a timing's hands"),
]
#: The protocol that stands for `standard`: its cells and opponents, 2 deals each.
TINY_PROTOCOL = {"name": "tiny", "version": 1, "opponents": ["random", "greedy"],
                 "entries": [{"rules": "standard", "players": 2, "deals": 2}, {"rules": "standard", "players": 4, "deals": 2},
                             {"rules": "special_cards", "players": 2, "deals": 2}]}
#: The fields of the training configs of the fresh folder's configs/train/ made tiny.
TRAIN_BUDGET = {"pi_layers": [32, 32], "vf_layers": [32, 32], "n_envs": 8, "n_steps": 32, "batch_size": 128,
                "n_epochs": 1, "total_steps": 512, "pretrain_samples": 500, "pretrain_epochs": 1, "eval_interval": 256,
                "eval_deals": 4, "final_eval_deals": 4, "checkpoint_interval": 256, "snapshot_interval": 256}
#: The same for the RLlib configs of its configs/rllib/.
RLLIB_BUDGET = {"pi_layers": [32, 32], "vf_layers": [32, 32], "train_batch_size": 256, "minibatch_size": 128,
                "num_epochs": 1, "total_steps": 256, "num_env_runners": 1, "num_envs_per_env_runner": 4,
                "snapshot_interval": 256, "eval_interval": 256, "eval_deals": 4, "final_eval_deals": 4,
                "checkpoint_interval": 256}

#: Sequences: name -> (the user's files the folder gets first, [(page, a command of the block), ...] in order).
SEQUENCES = {
    "benchmark-your-agent": (("my_agents", "model.onnx", "model.zip", "my-model.zip", "tiny"), [
        ("docs/benchmark-your-agent.md", "c8env eval my_agents:policy greedy --deals 1000"),
        ("docs/benchmark-your-agent.md", "c8env eval --bench standard --agent my_agents:policy --out results/"),
        ("docs/benchmark-your-agent.md", "c8env leaderboard docs/leaderboard/results results/ --out board/"),
        ("docs/benchmark-your-agent.md", "c8env eval --league expert greedy random --deals 200 --ray local --workers 2"),
        ("docs/benchmark-your-agent.md", "c8env eval model.onnx greedy"),
        ("docs/benchmark-your-agent.md", "c8env eval my-model.zip greedy"),
    ]),
    "evaluation": (("my_agents", "model.onnx", "policy.npz", "tiny"), [
        ("docs/evaluation.md", "c8env eval greedy random --players 2 --deals 5000"),
        ("docs/evaluation.md", "c8env eval my_agents:policy greedy --deals 1000"),
        ("docs/evaluation.md", "c8env exploit ppo-standard-2p --out results/"),
    ]),
    "exploitability": (("my-policy.onnx", "leaderboard"), [
        ("docs/exploitability.md", "c8env exploit greedy --out results/"),
        ("docs/exploitability.md", "c8env eval c8env.tools.planted:exploit_complacent c8env.tools.planted:complacent "
                                   "--deals 2500 --seed 59"),
        ("docs/exploitability.md", "c8env eval iter6-standard-2p greedy --deals 2500 --seed 592"),
        ("docs/agents.md", "c8env eval c8env.agents.best_response:versus_greedy greedy --deals 100"),
        ("docs/exploitability.md", "c8env leaderboard docs/leaderboard/results docs/leaderboard/exploit --out "
                                   "docs/leaderboard --update README.md --top 5"),
    ]),
    "training": (("configs",), [
        ("docs/training.md", "make train"),
        ("docs/benchmark-your-agent.md", "python -m training.export runs/default-s0 my-policy.onnx --best"),
    ]),
    "rllib": (("configs",), [
        ("docs/rllib.md", "python -m training.rllib --config configs/rllib/default.yaml --resume"),
        ("docs/rllib.md", "c8env eval runs/rllib/default-s0/policy.npz greedy --deals 1000"),
    ]),
    "vector": (("configs",), [
        ("docs/vector-envs.md", "python -m training.train --config configs/train/default.yaml --set vec_env=batched "
                                "total_steps=300000"),
        ("docs/vector.md", "c8env eval greedy random --deals 10000"),
        ("docs/speed.md", "c8env speed expert --hands 150 --spec expert:policy=iter6-standard-2p,prior=0.05 "
                          "--baseline expert"),
    ]),
}
#: Commands no sequence runs: (page, pattern of the command, why).
NOT_RUN = [
    (r".*", r"(make|pip|ray) .*", "the setup of the machine (make setup/test/docs, pip, ray start): the project's build "
                                  "and CI run them"),
    (r"docs/play.md", r"c8env (play|serve|replay)( .*)?", "interactive: a game in the terminal or a server (tests/web "
                                                       "and tests/tools/test_play.py play them)"),
    (r"docs/benchmark-your-agent.md", r"c8env eval --bench standard --agent expert --ray auto",
     "joins a running Ray cluster; the local cluster's command runs"),
    (r"docs/benchmark-your-agent.md", r"c8env leaderboard .* --out docs/leaderboard --update README.md --top 5",
     "the leaderboard of the repository: the exploitability sequence runs it on the repository's files"),
    (r".*", r"c8env speed (eval|jax)( .*)?", "timings at the sizes of their figures (c8env speed eval: 10,000 deals "
                                           "twice over)"),
    (r"docs/training.md", r"python -m training\.(train --config (configs/train/(?!default)|training/research/configs/)"
                                     r".*|research\.(average|specialise|record_speed) .*|export runs/(?!default-s0 ).*)",
     "the recipes of the shipped policies and the research log: hours each; their configs load in tests/training"),
    (r"docs/rllib.md", r"python -m training.rllib .*--address .*", "joins a Ray cluster of several machines"),
    (r"docs/training.md", r"python -m training.rllib .*", "the rllib sequence runs rllib.md's block of these"),
    (r"docs/strength.md", r".*", "the recipes and measurements of the shipped agents: hours each (parsed in "
                                 "tests/test_docs.py; their configs load in tests/training)"),
    (r".*", r"python examples/.*", "the examples' runs; tests/examples runs each with --quick"),
]


def tiny(command: str) -> str:
    """``command`` with :data:`BUDGETS` applied."""
    for pattern, replacement, _ in BUDGETS:
        command = re.sub(pattern, replacement, command)
    return command


def shell_blocks() -> list[tuple[str, list[str]]]:
    """(page, its commands) of every bash and sh block of the docs, in page order."""
    out = []
    for language in ("bash", "sh"):
        for name, _, code in blocks(language):
            commands = [shlex.join(shlex.split(line, comments=True)) for line in code.splitlines()]
            out.append((name, [c for c in commands if c]))
    return out


def excused(name: str, command: str) -> str | None:
    """Why ``command`` of page ``name`` is not run, or None."""
    return next((why for page, pattern, why in NOT_RUN if re.fullmatch(page, name) and re.fullmatch(pattern, command)),
                None)


def sequence_commands(name: str) -> list[str]:
    """The commands a sequence runs, in order: every command of its blocks that :data:`NOT_RUN` does not excuse."""
    out = []
    for page, anchor in SEQUENCES[name][1]:
        (commands,) = [c for p, c in shell_blocks() if p == page and anchor in c]
        out += [c for c in commands if not excused(page, c)]
    return out


def test_every_command_is_run_or_excused() -> None:
    run = {(page, c) for _, steps in SEQUENCES.values() for page, anchor in steps
           for p, commands in shell_blocks() if p == page and anchor in commands for c in commands}
    for page, commands in shell_blocks():
        for command in commands:
            assert (page, command) in run or excused(page, command), \
                f"{page}: `{command}` is in no sequence of tests/test_doc_sequences.py and NOT_RUN does not excuse it"


def test_every_budget_substitution_is_used() -> None:
    commands = [c for name in SEQUENCES for c in sequence_commands(name)]
    for pattern, _, meaning in BUDGETS:
        assert any(re.search(pattern, c, re.M) for c in commands), f"no command uses the substitution for {meaning}"
    assert tiny("c8env eval model.onnx greedy") == "c8env eval model.onnx greedy --deals 2"
    assert tiny("c8env exploit x.onnx --players 3 --steps 200000 --out r/") == \
        "c8env exploit x.onnx --players 3 --steps 1 --evals 1 --curve-deals 2 --deals 2 --out r/"


# ----- the fresh folder -------------------------------------------------------------------------------------
def _python_block(page: str, contains: str) -> str:
    (code,) = [code for name, _, code in blocks("python") if name == page and contains in code]
    return code


def _sb3_zip(path: Path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from c8env.envs.single_agent import SingleAgentEnv

    torch.set_num_threads(1)
    MaskablePPO("MlpPolicy", SingleAgentEnv(num_players=2, opponents="greedy"), n_steps=64, batch_size=64,
                seed=0).learn(64).save(path)


def _onnx(path: Path) -> None:
    import torch

    from c8env import OBS_SIZE
    from c8env.tools.onnx_export import export_onnx

    torch.manual_seed(0)
    export_onnx(torch.nn.Sequential(torch.nn.Linear(OBS_SIZE, 16), torch.nn.Tanh(), torch.nn.Linear(16, 60)), path)


#: The environment of the commands: as a user's (c8env's SB3 player, training and exploit runs set torch's threads
#: themselves), with no display for the plots.
ENV = {**os.environ, "MPLBACKEND": "Agg"}


def _run(folder: Path, words: list[str]) -> None:
    program = {"c8env": str(C8ENV), "python": sys.executable}.get(words[0], words[0])
    result = subprocess.run([program, *words[1:]], cwd=folder, capture_output=True, text=True, timeout=600, env=ENV)
    assert result.returncode == 0, f"`{shlex.join(words)}` in {folder}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"


def _setup(folder: Path, what: str) -> None:
    """Give the fresh folder one of the user's files, or a copy of the repository's."""
    if what == "my_agents":  # the page's class and factory, with the two names its commands use
        code = _python_block("docs/benchmark-your-agent.md", "class FewestOptions").split("\ntable = evaluate(")[0]
        (folder / "my_agents.py").write_text(code + "\npolicy = FewestOptions()\nmake_agent = seeded_random\n")
    elif what == "model.onnx":  # the page's export snippet writes it
        (folder / "export.py").write_text(_python_block("docs/benchmark-your-agent.md", "export_onnx(agent.actor"))
        _run(folder, ["python", "export.py"])
    elif what == "my-policy.onnx":
        _onnx(folder / what)
    elif what in ("model.zip", "my-model.zip"):
        _sb3_zip(folder / what)
    elif what == "policy.npz":
        (folder / "path" / "to").mkdir(parents=True)
        shutil.copy(ROOT / "c8env" / "agents" / "policies" / "ppo-standard-2p.npz", folder / "path" / "to" / what)
    elif what == "tiny":  # the protocol standing for `standard`, and the shipped agents' results on it
        (folder / "tiny.yaml").write_text(yaml.safe_dump(TINY_PROTOCOL))
        _run(folder, ["c8env", "eval", "--bench", "tiny.yaml", "--agent", "random", "--agent", "greedy", "--out",
                      "docs/leaderboard/results", "--no-progress"])
        (folder / "docs" / "leaderboard" / "exploit").mkdir()
        for agent in ("random", "greedy"):
            shutil.copy(ROOT / "docs" / "leaderboard" / "exploit" / f"{agent}.json", folder / "docs" / "leaderboard" / "exploit")
        shutil.copy(ROOT / "README.md", folder)
    elif what == "leaderboard":
        shutil.copytree(ROOT / "docs" / "leaderboard", folder / "docs" / "leaderboard")
        shutil.copy(ROOT / "README.md", folder)
    elif what == "configs":
        shutil.copytree(ROOT / "configs", folder / "configs")
        for kind, budget in (("train", TRAIN_BUDGET), ("rllib", RLLIB_BUDGET)):
            for config in (folder / "configs" / kind).glob("*.yaml"):
                config.write_text(yaml.safe_dump(yaml.safe_load(config.read_text()) | budget))
    else:
        raise ValueError(f"no setup {what!r}")


@pytest.mark.slow
@pytest.mark.parametrize("name", SEQUENCES)
def test_the_sequence_runs(name: str, tmp_path: Path) -> None:
    for what in SEQUENCES[name][0]:
        _setup(tmp_path, what)
    for command in sequence_commands(name):
        _run(tmp_path, shlex.split(tiny(command)))
    if name == "benchmark-your-agent":  # the leaderboard read the folder the bench wrote
        assert not (tmp_path / "results" / "bench.json").exists()
        board = (tmp_path / "board" / "leaderboard.md").read_text()
        assert all(f"| {agent} |" in board for agent in ("fewest-options", "model.onnx", "model.zip", "random",
                                                         "greedy")), board
    if name == "exploitability":  # the repository's leaderboard is that command's output
        for path in ("README.md", "docs/leaderboard/leaderboard.md", "docs/leaderboard/leaderboard.csv"):
            assert (tmp_path / path).read_text() == (ROOT / path).read_text(), f"{path} is not the command's output"
        assert json.loads((tmp_path / "results" / "greedy.json").read_text())["budget"]["steps"] == 1
