"""The RLlib path (``training.rllib``; the ``rllib`` extra).

Fast checks without a Ray cluster (config, env, policy mapping, modules, export), then the two
tests that start Ray. ``test_real_local_ray_run_resume_and_export``: a real local Ray instance
(``ray.init(num_cpus=2)``: GCS and raylet in their own processes) with one remote env runner
trains a few iterations with self-play snapshots, checkpoints, resumes, and exports a policy that
plays in a process where Ray and torch cannot be imported. About 60 s.
``test_run_joins_a_running_ray_cluster_with_address``: a Ray head started apart (``ray start --head
--block``) and the smoke run joining it with ``--address``. About 35-40 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("ray.rllib")

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from c8env import IllegalActionError, preset_names  # noqa: E402
from c8env.agents import load  # noqa: E402
from c8env.agents.policy import PolicyAgent  # noqa: E402
from training.config import TrainConfig, field_docs  # noqa: E402
from training.rllib.cli import build_parser, main  # noqa: E402
from training.rllib.config import RLlibConfig, load_rllib_config  # noqa: E402
from training.rllib.env import CrazyEightsMultiAgentEnv  # noqa: E402
from training.rllib.modules import MASKED, AgentModule, MaskedPPOModule  # noqa: E402
from training.rllib.train import MAIN, SeatMapping, export_weights, learner_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "rllib" / "smoke.yaml"


# ----- the config ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "rllib").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_load(path: Path) -> None:
    config = load_rllib_config(path)
    assert config.name == path.stem


def test_shared_fields_are_the_sb3_configs_own() -> None:
    sb3, rllib = field_docs(TrainConfig), field_docs(RLlibConfig)
    for name in ("rules", "num_players", "pi_layers", "gamma", "opponent_weights", "eval_deals", "keep_checkpoints"):
        assert rllib[name] == sb3[name]
    assert "Learner decisions" in rllib["total_steps"]
    assert RLlibConfig().run_root == "runs/rllib"


@pytest.mark.parametrize("override,needle", [
    ("num_players=8", "'num_players' = 8"),
    ("minibatch_size=100000", "at most train_batch_size"),
    ("opponent_weights.bogus=1", "unknown kind"),
    ("num_env_runner=2", "did you mean 'num_env_runners'"),
    ("rules=nope", "unknown rules preset"),
])
def test_bad_config_values_are_one_line_errors(override: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle) as err:
        load_rllib_config(SMOKE, [override])
    assert "\n" not in str(err.value)


def test_cli_refuses_bad_input_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--config", "nope.yaml"], ["--config", str(SMOKE), "--set", "num_learners=-1"],
                 ["--config", str(SMOKE), "--resume", "--overwrite"]):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
    main(["--config", str(SMOKE), "--address", "10.0.0.1:6379", "--num-env-runners", "4", "--print-config"])
    printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["address"] == "10.0.0.1:6379" and printed["num_env_runners"] == 4
    assert "num_envs_per_env_runner" in build_parser().format_help()


def test_an_existing_run_needs_resume_or_overwrite(tmp_path: Path) -> None:
    (tmp_path / "smoke-s0" / "checkpoints" / "ckpt_0000000100").mkdir(parents=True)
    (tmp_path / "smoke-s0" / "checkpoints" / "ckpt_0000000100.json").write_text("{}")
    with pytest.raises(SystemExit) as stop:
        main(["--config", str(SMOKE), "--set", f"run_root={tmp_path}"])
    assert stop.value.code == 2


def test_docs_commands_parse() -> None:
    """The ``python -m training.rllib`` lines of docs/rllib.md parse (test_docs checks its other commands)."""
    import shlex

    text = (ROOT / "docs" / "rllib.md").read_text()
    lines = [line for line in text.splitlines() if line.strip().startswith("python -m training.rllib")]
    assert len(lines) >= 3
    for line in lines:
        args = shlex.split(line, comments=True)[3:]
        if args != ["--help"]:
            build_parser().parse_args(args)


# ----- the env ------------------------------------------------------------------------------------
@pytest.mark.parametrize("num_players", range(2, 8))
def test_env_plays_every_preset_turn_by_turn(num_players: int) -> None:
    rng = np.random.default_rng(num_players)
    for rules in preset_names():
        env = CrazyEightsMultiAgentEnv({"num_players": num_players, "rules": rules})
        obs, _ = env.reset(seed=num_players)
        returns: dict[str, float] = {}
        for _ in range(20_000):
            (agent, ob), = obs.items()
            assert env.observation_spaces[agent].contains(ob)
            obs, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(ob["action_mask"])))})
            for a, r in rewards.items():
                returns[a] = returns.get(a, 0.0) + r
            if terminated["__all__"] or truncated["__all__"]:
                break
            assert len(obs) == 1
        assert terminated["__all__"], rules
        assert set(obs) == set(returns) and abs(sum(returns.values())) < 1e-9, (rules, returns)


def test_env_raises_on_an_illegal_action() -> None:
    env = CrazyEightsMultiAgentEnv({"num_players": 3})
    obs, _ = env.reset(seed=1)
    (agent, ob), = obs.items()
    with pytest.raises(IllegalActionError):
        env.step({agent: int(np.flatnonzero(ob["action_mask"] == 0)[0])})


# ----- the policy mapping -------------------------------------------------------------------------
def test_mapping_seats_one_learner_and_the_pool_by_weight() -> None:
    mapping = SeatMapping(4, {"random": 0.25, "greedy": 0.75, "self": 0.0}, False, ["main_0"])
    counts = {"random": 0, "greedy": 0}
    seats = [0] * 4
    for i in range(2000):
        table = mapping.seats(f"episode-{i}")
        assert table.count(MAIN) == 1 and len(set(table) - {MAIN}) == 1
        seats[table.index(MAIN)] += 1
        counts[next(m for m in table if m != MAIN)] += 1
        assert [mapping(f"player_{s}", type("E", (), {"id_": f"episode-{i}"})()) for s in range(4)] == table
    assert 0.2 < counts["random"] / 2000 < 0.3 and min(seats) > 400
    per_seat = SeatMapping(5, {"random": 1, "self": 1}, True, ["main_0", "main_9"])
    modules = {m for i in range(200) for m in per_seat.seats(str(i))}
    assert modules == {MAIN, "random", "main_0", "main_9"}


# ----- the modules and the export -----------------------------------------------------------------
def observations(count: int, num_players: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """``count`` observations of the player to move, from random legal play."""
    env = CrazyEightsMultiAgentEnv({"num_players": num_players, "rules": "special_cards"})
    rng = np.random.default_rng(seed)
    vectors, masks = [], []
    obs, _ = env.reset(seed=seed)
    while len(vectors) < count:
        (agent, ob), = obs.items()
        vectors.append(ob["observation"])
        masks.append(ob["action_mask"])
        obs, _, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(ob["action_mask"])))})
        if terminated["__all__"] or truncated["__all__"]:
            obs, _ = env.reset()
    return {"observation": np.stack(vectors), "action_mask": np.stack(masks)}


def test_masked_module_never_samples_an_illegal_action() -> None:
    module = learner_spec(RLlibConfig(pi_layers=[32], vf_layers=[32])).build()
    batch = observations(500)
    tensors = {Columns.OBS: {k: torch.from_numpy(v) for k, v in batch.items()}}
    logits = module.forward_exploration(tensors)[Columns.ACTION_DIST_INPUTS]
    assert (logits[torch.from_numpy(batch["action_mask"]) == 0] == MASKED).all()
    dist = module.get_exploration_action_dist_cls().from_logits(logits)
    for _ in range(20):
        actions = dist.sample().numpy()
        assert batch["action_mask"][np.arange(len(actions)), actions].all()
    assert module.compute_values(tensors).shape == (500,)


def test_agent_module_plays_the_agent() -> None:
    spec = learner_spec(RLlibConfig())
    module = AgentModule(observation_space=spec.observation_space, action_space=spec.action_space,
                         model_config={"spec": "greedy", "rules": "special_cards", "num_players": 3})
    batch = observations(200)
    actions = module.forward_inference({Columns.OBS: {k: torch.from_numpy(v) for k, v in batch.items()}})[
        Columns.ACTIONS]
    greedy = load("greedy", rules="special_cards", num_players=3)
    assert actions.tolist() == [greedy.act({"observation": v, "action_mask": m})
                                for v, m in zip(batch["observation"], batch["action_mask"], strict=True)]


def assert_export_matches(module: MaskedPPOModule, path: Path) -> None:
    """The exported file's masked argmax equals the module's on 1,000 observations."""
    batch = observations(1000, seed=3)
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: {k: torch.from_numpy(v) for k, v in batch.items()}})[
            Columns.ACTION_DIST_INPUTS].numpy()
    agent = PolicyAgent(path)
    exported = [agent.act({"observation": v, "action_mask": m})
                for v, m in zip(batch["observation"], batch["action_mask"], strict=True)]
    assert exported == logits.argmax(axis=1).tolist()
    np.testing.assert_allclose(np.where(batch["action_mask"] == 1, agent.logits(batch["observation"]), MASKED),
                               logits, rtol=1e-4, atol=1e-4)


def test_export_equals_the_module(tmp_path: Path) -> None:
    config = RLlibConfig(pi_layers=[48, 24], activation="relu", num_players=3, rules="special_cards")
    module = learner_spec(config).build()
    path = export_weights(module.get_state(), tmp_path / "p.npz", config, 0)
    assert_export_matches(module, path)


# ----- a real run (marked: the one test that starts Ray) -------------------------------------------
NO_RAY_NO_TORCH = textwrap.dedent("""
    import sys

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("ray", "torch"):
                raise ImportError("blocked: " + name)

    sys.meta_path.insert(0, Blocker())
    from c8env.agents import load
    from c8env.tools.cli import main
    load(sys.argv[1], num_players=2)
    main(["eval", sys.argv[1], "random", "--deals", "5", "--workers", "1", "--no-progress"])
""")


@pytest.mark.slow
def test_real_local_ray_run_resume_and_export(tmp_path: Path) -> None:
    import ray
    from ray.rllib.core.rl_module.rl_module import RLModule

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert ray.nodes()[0]["Alive"]  # a raylet of its own, not local mode
        args = ["--config", str(SMOKE), "--set", f"run_root={tmp_path}", "total_steps=1500", "snapshot_interval=500"]
        main(args)
        run = tmp_path / "smoke-s0"
        first = json.loads(max((run / "checkpoints").glob("ckpt_*.json")).read_text())
        assert first["step"] >= 1500 and len(first["snapshots"]) == 2 and first["snapshots"][0][1] == "main_0"
        main(["--resume", str(run), "--set", "total_steps=4000"])  # at least two iterations: a new snapshot
        final = json.loads((run / "eval.json").read_text())
        assert final["step"] >= 4000 > first["step"]
        ckpt = max(p for p in (run / "checkpoints").glob("ckpt_*") if p.is_dir())
        last = [m for _, m in json.loads(ckpt.with_suffix(".json").read_text())["snapshots"]]
        assert len(last) == 2 and "main_0" not in last  # a snapshot after the resume pushed main_0 out
        module = RLModule.from_checkpoint(ckpt / "learner_group" / "learner" / "rl_module" / MAIN)
    finally:
        ray.shutdown()
    assert_export_matches(module, run / "policy.npz")
    assert (run / "logs" / "tb").is_dir() and (run / "evals.jsonl").read_text().count("greedy") >= 1
    result = subprocess.run([sys.executable, "-c", NO_RAY_NO_TORCH, str(run / "policy.npz")], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "random" in result.stdout


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports free on 127.0.0.1 just now (bound to 0, then released)."""
    import socket

    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def pids_naming(needle: str) -> list[int]:
    """The processes whose command line contains ``needle`` (read from /proc)."""
    import os

    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the head's processes in /proc")
def test_run_joins_a_running_ray_cluster_with_address(tmp_path: Path) -> None:
    """A Ray head started apart (``ray start --head --block`` on free ports, its own temp dir and
    token) and the smoke run joining it with ``--address 127.0.0.1:PORT``: its env runner on the
    cluster, ``training`` shipped with the job; the head and all its processes ended afterwards."""
    import os
    import shutil
    import signal
    import tempfile
    import time
    import uuid

    temp_dir = Path(tempfile.mkdtemp(prefix="c8ray-", dir="/tmp"))  # short: Ray's socket paths live under it
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": uuid.uuid4().hex}
    env.pop("RAY_ADDRESS", None)
    env.pop("RAY_AUTH_TOKEN_PATH", None)
    port, client, agent, agent_grpc, metrics, runtime_env, node_manager, object_manager = free_ports(8)
    head_log = temp_dir / "head.log"
    with head_log.open("w") as log:
        head = subprocess.Popen(
            [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block", f"--port={port}",
             "--node-ip-address=127.0.0.1", "--num-cpus=2", "--include-dashboard=false", f"--temp-dir={temp_dir}",
             "--object-store-memory=100000000", f"--ray-client-server-port={client}",
             f"--dashboard-agent-listen-port={agent}", f"--dashboard-agent-grpc-port={agent_grpc}",
             f"--metrics-export-port={metrics}", f"--runtime-env-agent-port={runtime_env}",
             f"--node-manager-port={node_manager}", f"--object-manager-port={object_manager}",
             "--min-worker-port=0", "--max-worker-port=0", "--disable-usage-stats"],  # 0: workers on random ports
            cwd=temp_dir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while "Ray runtime started" not in head_log.read_text():
            assert head.poll() is None and time.monotonic() < deadline, head_log.read_text()[-3000:]
            time.sleep(0.2)
        result = subprocess.run(
            [sys.executable, "-m", "training.rllib", "--config", str(SMOKE), "--address", f"127.0.0.1:{port}",
             "--num-env-runners", "1", "--set", f"run_root={tmp_path}", "total_steps=1000"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=150)
        assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
        run = tmp_path / "smoke-s0"
        assert json.loads((run / "eval.json").read_text())["step"] >= 1000
        assert load(str(run / "policy.npz"), num_players=2) is not None
        logs = {p.name for p in temp_dir.glob("session_*/logs/*")}  # the head's session: the driver joined it
        assert any(name.startswith("python-core-driver-") for name in logs), sorted(logs)
        assert any(name.startswith("runtime_env_setup-") for name in logs), sorted(logs)  # py_modules shipped
        assert any(name.startswith("worker-") and "-ffffffff-" not in name for name in logs), sorted(logs)  # a job's
    finally:
        if head.poll() is None:
            head.send_signal(signal.SIGTERM)  # `ray start --block` stops its processes on a signal
            try:
                head.wait(timeout=30)
            except subprocess.TimeoutExpired:
                head.kill()
                head.wait(timeout=10)
        for _ in range(50):  # whatever of this head outlived it (raylet, gcs_server, workers): by pid
            left = pids_naming(str(temp_dir))
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        shutil.rmtree(temp_dir, ignore_errors=True)
    assert not pids_naming(str(temp_dir))
