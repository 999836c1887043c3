"""Training: config loading and errors, the opponent pool, the env workers, export equivalence, and a tiny
run in a subprocess (checkpoint, interruption, --resume, export, a full game with the exported policy)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import c8env
from c8env.agents import PolicyAgent, load
from c8env.envs.single_agent import SingleAgentEnv
from training.config import TrainConfig, config_from_dict, field_docs, load_config
from training.pool import OpponentPool, Snapshots

ROOT = Path(__file__).resolve().parent.parent.parent
#: The product's configs and the research's (run from the repository root, as the docs do).
CONFIGS = sorted([*(ROOT / "configs" / "train").glob("*.yaml"),
                  *(ROOT / "training" / "research" / "configs").glob("*.yaml")])
TINY = {
    "pi_layers": [32, 32], "vf_layers": [32, 32], "n_envs": 4, "n_workers": 2, "n_steps": 128, "batch_size": 256,
    "n_epochs": 2, "snapshot_interval": 512, "max_snapshots": 3, "pretrain_samples": 1000, "pretrain_epochs": 1,
    "eval_interval": 1024, "eval_deals": 10, "final_eval_deals": 10, "checkpoint_interval": 512,
    "keep_checkpoints": 2,
}


# ----- config --------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_config_loads(path, monkeypatch):
    monkeypatch.chdir(ROOT)
    config = load_config(path)
    assert config.name == path.stem
    assert config.run_dir == Path("runs") / f"{path.stem}-s{config.seed}"


def test_every_field_has_a_docstring():
    docs = field_docs()
    assert set(docs) == set(TrainConfig().to_dict())
    assert all(docs.values())


def test_overrides_are_typed():
    config = load_config(ROOT / "configs/train/default.yaml",
                         ["total_steps=1000", "seed=3", "pi_layers=[64, 64]", "opponent_weights.greedy=0.5",
                          "target_kl=null", "pretrain_agent=null", "pretrain_temperature=null",
                          "learning_rate=1e-3"])
    assert (config.total_steps, config.seed, config.pi_layers) == (1000, 3, [64, 64])
    assert config.opponent_weights["greedy"] == 0.5 and config.opponent_weights["random"] == 0.0
    assert config.target_kl is None and config.pretrain_agent is None and config.learning_rate == 1e-3
    assert config.run_dir == Path("runs/default-s3")


@pytest.mark.parametrize("overrides, message", [
    (["totl_steps=5"], "unknown config key 'totl_steps' (did you mean 'total_steps'?)"),
    (["n_envs=two"], "config key 'n_envs' = 'two' is invalid: should be a valid integer"),
    (["n_envs=1.5"], "config key 'n_envs' = 1.5 is invalid: should be a valid integer"),
    (["n_envs=2.0"], "config key 'n_envs' = 2.0 is invalid: should be a valid integer"),
    (["pool_per_seat=3"], "config key 'pool_per_seat' = 3 is invalid: should be a valid boolean"),
    (["pi_layers=[64, x]"], "config key 'pi_layers[1]' = 'x' is invalid: should be a valid integer"),
    (["pi_layers=[64, 0]"], "config key 'pi_layers' = [64, 0] is invalid: should be a list of layer sizes >= 1"),
    (["reward=score"], "config key 'reward' = 'score' is invalid: should be 'win' or 'points'"),
    (["n_envs=0"], "config key 'n_envs' = 0 is invalid: should be greater than or equal to 1"),
    (["num_players=9"], "config key 'num_players' = 9 is invalid: should be less than or equal to 7"),
    (["rules=nope"], "config key 'rules' = 'nope' is invalid: unknown rules preset 'nope'"),
    (["opponent_weights.gredy=1"], "unknown kind(s) ['gredy']; allowed: random, greedy, expert, self"),
    (["opponent_weights.greedy=many"], "config key 'opponent_weights.greedy' = 'many' is invalid: should be a valid number"),
    (["opponent_weights.greedy=-1"], "config key 'opponent_weights' = {'random': 0.0, 'greedy': -1, 'expert': 0.0, "
                                     "'self': 0.3} is invalid: should be weights >= 0 with a positive sum"),
    (["learning_rate=true"], "config key 'learning_rate' = True is invalid: should be a valid number"),
    (["learning_rate=.nan"], "config key 'learning_rate' = nan is invalid: should be a finite number"),
    (["seed.x=1"], "config key 'seed' is not a mapping"),
    (["total_steps"], "override 'total_steps' is invalid; write key=value"),
    (["batch_size=100000"], "config key 'batch_size' = 100000 is invalid: should be at most n_steps x n_envs = 4096"),
    (["pretrain_demos=demos.zip"], "config key 'pretrain_demos' = 'demos.zip' is invalid: should be a path ending in .npz"),
    (["pretrain_extra_demos=[a.npz, b.zip]"], "config key 'pretrain_extra_demos' = ['a.npz', 'b.zip'] is invalid: "
                                              "'b.zip' should be a path ending in .npz"),
    (["pretrain_agent=null", "pretrain_behaviour=greedy"], "config key 'pretrain_behaviour' = 'greedy' is invalid: "
                                                           "plays the demonstrator's seats: set pretrain_agent too"),
    (["pretrain_max_steps=0"], "config key 'pretrain_max_steps' = 0 is invalid: should be greater than or equal to 1"),
    (["pretrain_lr_schedule=linear"], "config key 'pretrain_lr_schedule' = 'linear' is invalid: should be 'constant' "
                                      "or 'cosine'"),
    (["pretrain_temperature=0"], "config key 'pretrain_temperature' = 0 is invalid: should be greater than 0"),
    (["pretrain_agent=greedy"], "config key 'pretrain_temperature' = 0.1 is invalid: soft targets need a searching "
                                   "demonstrator (pretrain_agent: expert...)"),
    (["pretrain_temperature=null", "pretrain_prior=iter6-standard-2p"], "config key 'pretrain_prior' = "
                                                                         "'iter6-standard-2p' is invalid: regularises "
                                           "the soft targets: set pretrain_temperature too"),
    (["pretrain_oracle=true"], "config key 'pretrain_oracle' = True is invalid: values a guided search's moves for "
                               "the soft targets: set pretrain_temperature and pretrain_agent: expert:policy=..."),
    (["oracle_critic=true"], "config key 'oracle_critic' = True is invalid: the other hands come from the batched "
                             "envs, and a cut-off hand must end its episode: set vec_env=batched and cutoff_reward"),
    (["oracle_critic=true", "cutoff_reward=-1", "vec_env=subproc"], "config key 'oracle_critic' = True is invalid: "
                                                                     "the other hands come from the batched envs"),
    (["pretrain_prior_weight=0"], "config key 'pretrain_prior_weight' = 0 is invalid: should be greater than 0"),
    (["obs_size=300"], "config key 'obs_size' = 300 is invalid: should be an env version's observation size: 401 (v2, "
                       "the whole observation) or 245 (v0 and v1: its first entries)"),
    (["obs_size=353"], "config key 'obs_size' = 353 is invalid: should be an env version's observation size"),
])
def test_config_errors_name_the_key(overrides, message):
    with pytest.raises(ValueError) as err:
        load_config(ROOT / "configs/train/default.yaml", overrides)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_config_types_are_strict():
    """An int field refuses floats and strings; a float field takes an int (as a float)."""
    for value in (2.5, "3", True):
        with pytest.raises(ValueError, match=f"config key 'n_envs' = {value!r} is invalid: should be a valid integer"):
            config_from_dict({"n_envs": value})
    with pytest.raises(ValueError, match="config key 'name' = 'a/b' is invalid"):
        TrainConfig(name="a/b")  # constructing the model directly reports errors the same way
    config = config_from_dict({"learning_rate": 1, "opponent_weights": {"greedy": 1}})
    assert config.learning_rate == 1.0 and isinstance(config.learning_rate, float)
    assert config.opponent_weights == {"greedy": 1.0} and isinstance(config.opponent_weights["greedy"], float)


def test_config_file_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="must hold a mapping"):
        load_config(bad)
    bad.write_text("lerning_rate: 0.1\n")
    with pytest.raises(ValueError, match="unknown config key 'lerning_rate'"):
        load_config(bad)
    with pytest.raises(ValueError, match="config key 'gamma' = 'high' is invalid: should be a valid number"):
        config_from_dict({"gamma": "high"})
    bad.write_text("learning_rate: 1e-3\nn_envs: 8\n")  # YAML 1.1 reads 1e-3 as a string; the config reads a float
    assert load_config(bad).learning_rate == 1e-3


def test_cli_reports_config_errors(capsys):
    from training.train import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--config", str(ROOT / "configs/train/default.yaml"), "--set", "n_epochs=many"])
    assert exit_info.value.code == 2
    assert "config key 'n_epochs' = 'many' is invalid: should be a valid integer" in capsys.readouterr().err
    main(["--config", str(ROOT / "configs/train/default.yaml"), "--total-steps", "77", "--print-config"])
    assert "total_steps: 77" in capsys.readouterr().out
    # a quoted value loses its quotes (an agent spec holds ':' and '='), an unquoted one is kept as written
    main(["--config", str(ROOT / "configs/train/default.yaml"), "--set", 'pretrain_agent="expert:simulations=30"',
          "name=my-run", "--print-config"])
    out = capsys.readouterr().out
    assert "pretrain_agent: expert:simulations=30\n" in out and "name: my-run\n" in out


def test_a_wrong_prior_or_behaviour_stops_the_run_before_the_recording(tmp_path, capsys):
    from training.train import main

    demos = tmp_path / "demos.npz"
    for setting, message in (("pretrain_prior=nothing.npz", "pretrain_prior: agent spec 'nothing.npz': no such policy file"),
                             ("pretrain_prior=greedy", "pretrain_prior 'greedy' is not a policy network"),
                             ("pretrain_behaviour=nothing.npz", "agent spec 'nothing.npz': no such policy file")):
        with pytest.raises(SystemExit) as exit_info:
            main(["--config", str(ROOT / "configs/train/default.yaml"), "--set", 'pretrain_agent="expert"',
                  "pretrain_temperature=0.1", setting, f"pretrain_demos={demos}", "total_steps=0",
                  f"run_root={tmp_path}", "--no-progress"])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    assert not demos.exists()


def test_help_lists_every_field_with_type_default_and_docstring(capsys):
    from training.train import main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name, doc in field_docs().items():
        assert f"  {name} (" in out and doc.split()[0] in out
    assert "  n_envs (int >= 1, default 16): Environments stepped in parallel" in out
    assert "  reward (Literal['win', 'points'], default 'win'): Reward of the env" in out
    assert "  target_kl (float | None > 0, default None): Stop an update's epochs early" in out


# ----- opponent pool -------------------------------------------------------------------------------
def test_pool_mixes_kinds_and_snapshots():
    pool = OpponentPool({"random": 1, "greedy": 3, "self": 4}, num_players=3)
    assert pool.probabilities() == {"random": 0.25, "greedy": 0.75, "expert": 0.0, "self": 0.0}
    pool.set_snapshots(["a.npz", "b.npz"])
    rng = np.random.default_rng(0)
    tables = [pool(rng) for _ in range(4000)]
    assert all(len(t) == 2 and len(set(t)) == 1 or t[0].endswith(".npz") for t in tables)
    kinds = [t[0] if not t[0].endswith(".npz") else "self" for t in tables]
    assert abs(kinds.count("self") / 4000 - 0.5) < 0.03
    assert abs(kinds.count("greedy") / 4000 - 0.375) < 0.03
    assert {s for t in tables for s in t if s.endswith(".npz")} == {"a.npz", "b.npz"}
    per_seat = OpponentPool({"random": 1, "greedy": 1}, num_players=4, per_seat=True)
    assert any(len(set(per_seat(rng))) > 1 for _ in range(50))
    assert per_seat.label() in ("random", "greedy", "mixed")
    with pytest.raises(ValueError, match="unknown opponent kind"):
        OpponentPool({"greedy": 1, "human": 1}, num_players=2)


def test_snapshots_keep_the_most_recent(tmp_path):
    snaps = Snapshots(tmp_path, limit=2)
    for step in (0, 10, 20):
        path = snaps.path_for(step)
        path.write_bytes(b"x")
        snaps.add(step, str(path))
    assert [s for s, _ in snaps.entries] == [10, 20]
    assert not snaps.path_for(0).exists()


def test_env_workers_do_not_import_torch():
    from training.vec import make_vec_env

    config = config_from_dict({**TINY, "pretrain_agent": None})
    env = make_vec_env(config, [])
    try:
        info = env.env_method("worker_info")
        assert len({i["pid"] for i in info}) == 2 and os.getpid() not in {i["pid"] for i in info}
        assert not any(i["torch_imported"] for i in info)
        env.seed(0)
        env.reset()
        masks = np.stack(env.env_method("action_masks"))
        actions = np.array([int(np.flatnonzero(m)[0]) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        assert obs.shape == (4, c8env.OBS_SIZE) and len(infos) == 4
        # interrupted half-way through collecting a step's replies (Ctrl-C in step_wait): close() still returns
        masks = np.stack(env.env_method("action_masks"))
        env.step_async(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        env._recv(0)
        assert env._pending == [0, 1]  # the second worker's reply is still owed
    finally:
        env.close()
    # close() drained the owed reply and the workers stopped at its message (not killed after the join's timeout)
    assert env.closed and env._pending == [0, 0]
    assert [p.exitcode for p in env.processes] == [0, 0]


@pytest.mark.slow
def test_env_workers_of_the_cli_do_not_import_torch():
    """Under ``python -m training.train`` the forkserver workers import ``training.train`` as their main module:
    it must not import torch at its top."""
    code = f"""
import json, sys
import training.train
sys.modules["__main__"] = training.train  # as under `python -m training.train`
from training.config import config_from_dict
from training.vec import make_vec_env
env = make_vec_env(config_from_dict({{**{TINY!r}, "pretrain_agent": None}}), [])
print(json.dumps(env.env_method("worker_info")))
env.close()
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout.splitlines()[-1])
    assert len(info) == TINY["n_envs"] and not any(i["torch_imported"] for i in info)


def test_linear_lr_learned_in_chunks_equals_one_learn_call():
    """The run learns in chunks (one learn() per periodic event); the linear learning rate follows the run's global
    step (the Recorder updates it), so the result equals one learn() call over all the steps."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.callback import Recorder
    from training.envs import make_env, make_pool
    from training.model import build_model

    config = config_from_dict({**TINY, "vec_env": "dummy", "n_envs": 2, "n_steps": 64, "batch_size": 64,
                               "pretrain_agent": None, "lr_schedule": "linear", "total_steps": 512})
    models = []
    for chunks in ([512], [0, 128, 256, 128]):
        model = build_model(config, DummyVecEnv([make_env(config, [])] * 2))
        recorder = Recorder(config.total_steps, "test", make_pool(config), progress=False)
        for steps in chunks:
            model.learn(steps, callback=recorder, reset_num_timesteps=False)
        models.append(model)
    assert models[0].num_timesteps == models[1].num_timesteps == 512
    for a, b in zip(models[0].policy.parameters(), models[1].policy.parameters(), strict=True):
        assert torch.equal(a, b)
    assert models[1].policy.optimizer.param_groups[0]["lr"] == 0.0  # the last update: 1 - 512 / 512


# ----- demonstrations ------------------------------------------------------------------------------
def test_a_saved_recording_serves_fewer_decisions_and_records_only_the_chunks_more_need(tmp_path, monkeypatch):
    from training import imitation

    monkeypatch.setattr(imitation, "_CHUNK", 100)
    config = config_from_dict({**TINY, "pretrain_agent": "greedy", "pretrain_samples": 230,
                               "pretrain_demos": str(tmp_path / "demos.npz")})
    more = config.model_copy(update={"pretrain_samples": 450})
    fresh = {n: imitation.record_demonstrations(config.model_copy(update={"pretrain_samples": n}), n, 3,
                                                progress=False) for n in (120, 450)}
    recorded, record = [], imitation._record  # the decisions each chunk recorded

    def spy(config, samples, *args, **kwargs):
        recorded.append(samples)
        return record(config, samples, *args, **kwargs)

    monkeypatch.setattr(imitation, "_record", spy)
    assert not imitation.demonstrations(config, 3)[1] and recorded == [100, 100, 30]

    def same(demos, other) -> bool:
        return all(np.array_equal(getattr(demos, k), getattr(other, k), equal_nan=True) for k in imitation._FIELDS)

    fewer, loaded = imitation.demonstrations(config.model_copy(update={"pretrain_samples": 120}), 3)
    assert loaded and same(fewer, fresh[120]) and recorded == [100, 100, 30]
    longer, loaded = imitation.demonstrations(more, 3)  # the part-chunk (30) again, then the rest
    assert not loaded and same(longer, fresh[450]) and recorded == [100, 100, 30, 100, 100, 50]
    again, loaded = imitation.demonstrations(more, 3)
    assert loaded and same(again, fresh[450]) and len(recorded) == 6


def test_a_behaviour_plays_the_demonstrators_seats_and_the_demonstrator_labels_the_positions_it_reaches(monkeypatch):
    from training import imitation

    config = config_from_dict({**TINY, "pretrain_agent": "greedy", "pretrain_samples": 300})
    plain = imitation.record_demonstrations(config, 300, 3, progress=False)
    same = imitation.record_demonstrations(config.model_copy(update={"pretrain_behaviour": "greedy"}), 300, 3,
                                           progress=False)
    assert all(np.array_equal(getattr(plain, k), getattr(same, k), equal_nan=True) for k in imitation._FIELDS)

    asked: dict[str, list[tuple[bytes, int]]] = {"greedy": [], "random": []}  # each agent's positions and moves
    real_load = imitation.load_research

    def spying_load(spec, **kwargs):
        agent = real_load(spec, **kwargs)
        act = agent.act

        def spied(view):
            move = act(view)
            if spec in asked:
                asked[spec].append((view["observation"].tobytes(), move))
            return move

        agent.act = spied
        return agent

    monkeypatch.setattr(imitation, "load_research", spying_load)
    dagger = imitation.record_demonstrations(config.model_copy(update={"pretrain_behaviour": "random"}), 300, 3,
                                             progress=False)
    labels = set(asked["greedy"])
    assert all((obs.tobytes(), int(move)) in labels for obs, move in zip(dagger.obs, dagger.actions, strict=True))
    reached = [obs for obs, _ in asked["random"]]
    assert len(reached) >= 300 and reached[:300] == [obs.tobytes() for obs in dagger.obs]  # random was asked each
    disagree = np.mean([move != int(label) for (_, move), label in zip(asked["random"][:300], dagger.actions,
                                                                      strict=True)])
    assert disagree > 0.2 and not np.array_equal(plain.obs, dagger.obs)  # its moves, not greedy's, were played


def test_an_endgame_only_recording_labels_the_endgame_and_replays_to_the_same_decisions(tmp_path, monkeypatch):
    from c8env.observation import fewest_cards
    from training import imitation

    config = config_from_dict({**TINY, "num_players": 4, "pretrain_agent": "greedy", "pretrain_behaviour": "random",
                               "pretrain_endgame_only": 2, "pretrain_samples": 200,
                               "opponent_weights": {"random": 1.0, "greedy": 0.0, "expert": 0.0, "self": 0.0},
                               "pretrain_demos": str(tmp_path / "endgame.npz")})
    labelled: list[bytes] = []  # the positions greedy (the demonstrator) was asked about
    real_load = imitation.load_research

    def spying_load(spec, **kwargs):
        agent = real_load(spec, **kwargs)
        if spec == "greedy":
            act = agent.act
            agent.act = lambda view: labelled.append(view["observation"].tobytes()) or act(view)
        return agent

    monkeypatch.setattr(imitation, "load_research", spying_load)
    recorded, loaded = imitation.demonstrations(config, 3)
    assert not loaded and len(recorded) == 200 and (fewest_cards(recorded.obs) <= 2).all()
    assert labelled[:200] == [obs.tobytes() for obs in recorded.obs]  # asked there only (the rest: random)
    assert (fewest_cards(np.frombuffer(b"".join(labelled), np.float32).reshape(len(labelled), -1)) <= 2).all()
    plain = imitation.record_demonstrations(config.model_copy(update={"pretrain_endgame_only": None}), 200, 3,
                                            progress=False)
    assert (fewest_cards(plain.obs) > 2).mean() > 0.5  # most positions of a whole recording come before
    again, loaded = imitation.demonstrations(config, 3)
    assert loaded and np.array_equal(again.obs, recorded.obs) and np.array_equal(again.actions, recorded.actions)
    assert np.array_equal(imitation.extra_demonstrations(config.model_copy(update={
        "pretrain_extra_demos": [config.pretrain_demos]}))[0].obs, recorded.obs)
    with pytest.raises(ValueError, match="pretrain_endgame_only' = 1 is invalid: the behaviour plays the positions "
                                         "left unlabelled: set pretrain_behaviour"):
        config_from_dict({**TINY, "pretrain_agent": "greedy", "pretrain_endgame_only": 1})


def test_an_expert_labelling_the_endgame_alone_forgets_what_it_inferred_from_moves_it_did_not_choose(monkeypatch):
    from c8env.observation import fewest_cards
    from training import imitation
    from training.research.expert import ResearchExpert

    forgotten = []
    real_unasked = ResearchExpert.unasked

    def spying_unasked(agent):
        real_unasked(agent)
        forgotten.append((agent._last, agent._known, agent._position))

    monkeypatch.setattr(ResearchExpert, "unasked", spying_unasked)
    config = config_from_dict({**TINY, "pretrain_agent": "expert:simulations=4", "pretrain_behaviour": "greedy",
                               "pretrain_endgame_only": 1, "pretrain_samples": 40})
    demos = imitation.record_demonstrations(config, 40, 3, progress=False)
    assert len(demos) == 40 and (fewest_cards(demos.obs) <= 1).all()
    assert forgotten and all(state == (None, None, None) for state in forgotten)


def test_recorded_hands_are_cut_off_after_pretrain_max_steps():
    from training import imitation

    config = config_from_dict({**TINY, "pretrain_agent": "greedy", "pretrain_samples": 100})
    plain = imitation.record_demonstrations(config, 100, 3, progress=False)
    capped = imitation.record_demonstrations(config.model_copy(update={"pretrain_max_steps": 4}), 100, 3,
                                             progress=False)
    assert (plain.returns != 0).any() and (capped.returns == 0).all()  # no hand ends in 4 moves: all cut off
    assert np.array_equal(capped.obs[:2], plain.obs[:2]) and not np.array_equal(capped.obs, plain.obs)


def test_extra_demonstrations_add_saved_recordings_of_any_settings(tmp_path):
    from training import imitation

    path = tmp_path / "dagger.npz"
    recorder = config_from_dict({**TINY, "pretrain_agent": "greedy", "pretrain_behaviour": "random",
                                 "pretrain_samples": 120, "pretrain_demos": str(path)})
    recorded, _ = imitation.demonstrations(recorder, 3)
    fitter = config_from_dict({**TINY, "pretrain_agent": "expert", "pretrain_extra_demos": [str(path)]})
    (extra,) = imitation.extra_demonstrations(fitter)  # replayed from the moves: the positions random reached
    assert all(np.array_equal(getattr(extra, k), getattr(recorded, k), equal_nan=True) for k in imitation._FIELDS)
    missing = fitter.model_copy(update={"pretrain_extra_demos": [str(tmp_path / "none.npz")]})
    with pytest.raises(ValueError, match="none.npz is not a file"):
        imitation.extra_demonstrations(missing)


def test_demonstrations_keep_the_search_results_and_are_saved_reused_and_checked(tmp_path):
    from training.imitation import demonstrations

    path = tmp_path / "demos.npz"
    config = config_from_dict({**TINY, "pretrain_agent": "expert:simulations=5", "pretrain_samples": 300,
                               "pretrain_demos": str(path)})
    demos, loaded = demonstrations(config, seed=3)
    assert not loaded and path.is_file() and len(demos) == 300
    searched = np.isfinite(demos.values)
    rows = np.flatnonzero(searched.any(1))
    assert 50 < len(rows) < 300 and not (searched & ~demos.masks).any()  # only legal moves are searched
    assert (demos.masks[rows].sum(1) > 1).all() and (searched[rows].sum(1) > 1).all()
    best = np.where(searched, demos.values, -np.inf).argmax(1)
    assert (best[rows] == demos.actions[rows]).all()  # the expert played its best searched move

    again, loaded = demonstrations(config, seed=3)
    assert loaded and all(np.array_equal(getattr(demos, k), getattr(again, k), equal_nan=True)
                          for k in ("obs", "masks", "actions", "returns", "values"))
    with pytest.raises(ValueError, match=r"recorded with other settings \(differ: pretrain_agent\)"):
        demonstrations(config.model_copy(update={"pretrain_agent": "expert:simulations=6"}), seed=3)
    with pytest.raises(ValueError, match=r"\(differ: seed\)"):
        demonstrations(config, seed=4)
    with np.load(path) as saved:  # the file holds the hands' moves, not their observations
        arrays = {key: saved[key] for key in saved.files}
    assert "obs" not in arrays and arrays["moves"].dtype == np.int16 and arrays["moves"].size > 300
    np.savez(path, **{**arrays, "moves": arrays["moves"][::-1]})
    with pytest.raises(c8env.IllegalActionError):  # other moves do not replay
        demonstrations(config, seed=3)
    del arrays["moves"]
    np.savez(path, **{**arrays, "obs": demos.obs, "masks": demos.masks})  # as c8env 0.2.0 saved them
    with pytest.raises(ValueError, match="holds observations, as those saved by c8env 0.2.0 and earlier do, instead "
                                         "of the moves that replay them; delete it to record again"):
        demonstrations(config, seed=3)


def test_search_targets_are_a_softmax_of_the_searched_results():
    from training.imitation import Demonstrations, search_targets

    values = np.full((3, 61), np.nan, dtype=np.float32)
    values[0, [2, 5, 9]] = [0.5, 0.3, -1.0]
    values[1, [0, 1]] = [0.2, 0.2]
    demos = Demonstrations(np.zeros((3, 353), np.float32), np.ones((3, 61), bool), np.array([2, 0, 7]),
                           np.zeros(3, np.float32), values)
    sharp, flat = search_targets(demos, 0.01), search_targets(demos, 1e6)
    assert np.allclose(sharp.sum(1), 1) and np.allclose(flat.sum(1), 1)
    assert sharp[0, 2] > 0.99 and np.allclose(flat[0, [2, 5, 9]], 1 / 3) and flat[0].astype(bool).sum() == 3
    assert np.allclose(sharp[1, [0, 1]], 0.5)  # a tie stays a tie
    assert sharp[2, 7] == 1.0 and sharp[2].sum() == 1.0  # not searched: the demonstrated move
    expected = np.exp(np.array([0.5, 0.3, -1.0]) / 0.2)
    assert np.allclose(search_targets(demos, 0.2)[0, [2, 5, 9]], expected / expected.sum())
    prior = np.log(np.full((3, 61), 1 / 61))
    prior[0, [2, 5, 9]] = [-3.0, 0.0, -1.0]
    with_prior = search_targets(demos, 0.2, prior)
    expected = np.exp(np.array([0.5, 0.3, -1.0]) / 0.2 + [-3.0, 0.0, -1.0])
    assert np.allclose(with_prior[0, [2, 5, 9]], expected / expected.sum()) and with_prior[0, 5] > with_prior[0, 2]
    assert np.allclose(with_prior[1:], search_targets(demos, 0.2)[1:])  # a flat prior, a plain decision: unchanged


def test_prior_log_probs_are_the_networks_times_the_weight():
    from training.imitation import Demonstrations, prior_log_probs

    env = c8env.env(num_players=2, rules="standard")
    obs, masks = [], []
    for seed in range(6):
        env.reset(seed=seed)
        observation = env.observe(env.agent_selection)
        obs.append(observation["observation"])
        masks.append(observation["action_mask"].astype(bool))
    obs, masks = np.array(obs, np.float32), np.array(masks)
    demos = Demonstrations(obs, masks, masks.argmax(1), np.zeros(6, np.float32), np.full(masks.shape, np.nan))
    config = config_from_dict({**TINY, "pretrain_agent": "expert", "pretrain_temperature": 0.1,
                               "pretrain_prior": str(ROOT / "training/research/policies/rollout-standard-2p.npz"),
                               "pretrain_prior_weight": 2.0})
    log_probs = prior_log_probs(config, demos)
    logits = PolicyAgent(ROOT / "training/research/policies/rollout-standard-2p.npz").logits(obs)
    for row in range(6):
        legal = logits[row, masks[row]]
        assert np.allclose(log_probs[row, masks[row]], 2.0 * (legal - np.log(np.exp(legal).sum())), atol=1e-5)
        assert np.all(log_probs[row, ~masks[row]] == -np.inf)
    with pytest.raises(ValueError, match="pretrain_prior 'greedy' is not a policy network"):
        prior_log_probs(config.model_copy(update={"pretrain_prior": "greedy"}), demos)


def test_soft_targets_train_the_actor_towards_the_search_results(tmp_path):
    """A clone fitted to nearly flat soft targets keeps probability on every searched move; the clone of the
    chosen moves on the same decisions puts it on one; a heavy ``pretrain_prior`` makes it play the prior's."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.envs import make_env
    from training.imitation import behaviour_clone, masked_logits, record_demonstrations
    from training.model import build_model

    settings = {**TINY, "pretrain_agent": "expert:simulations=5", "vec_env": "dummy", "n_envs": 2, "n_workers": 1,
                "batch_size": 128, "pretrain_epochs": 40, "pretrain_lr": 3e-3, "pretrain_batch_size": 64}
    demos = record_demonstrations(config_from_dict(settings), 400, seed=1)
    rows = np.isfinite(demos.values).any(1)
    entropy = {}
    for temperature in (None, 100.0):
        config = config_from_dict({**settings, "pretrain_temperature": temperature})
        model = build_model(config, DummyVecEnv([make_env(config, [])] * 2))
        behaviour_clone(model, demos, config, seed=2)
        with torch.no_grad():
            logits = masked_logits(model.policy, torch.as_tensor(demos.obs[rows]), torch.as_tensor(demos.masks[rows]))
            p = torch.softmax(logits, 1)
            entropy[temperature] = float(-(p * torch.log(p.clamp_min(1e-12))).sum(1).mean())
    assert entropy[100.0] > entropy[None] + 0.2
    # a heavy prior pulls the clone to the prior network's choice among the searched moves
    prior = PolicyAgent(ROOT / "training/research/policies/rollout-standard-2p.npz").logits(demos.obs[rows])
    prior_choice = np.where(np.isfinite(demos.values[rows]), prior, -np.inf).argmax(1)
    agreement = {}
    for weight in (None, 20.0):
        extra = {} if weight is None else {
            "pretrain_prior": str(ROOT / "training/research/policies/rollout-standard-2p.npz"),
            "pretrain_prior_weight": weight}
        config = config_from_dict({**settings, "pretrain_temperature": 0.1, **extra})
        model = build_model(config, DummyVecEnv([make_env(config, [])] * 2))
        behaviour_clone(model, demos, config, seed=2)
        with torch.no_grad():
            logits = masked_logits(model.policy, torch.as_tensor(demos.obs[rows]), torch.as_tensor(demos.masks[rows]))
        agreement[weight] = float((logits.argmax(1).numpy() == prior_choice).mean())
    assert agreement[20.0] > agreement[None] + 0.1 and agreement[20.0] > 0.9


def _declarations(count: int, longest: list[int], seed: int) -> Any:
    """Demonstrations: suit declarations with a hand of 4 cards of one suit (``longest``, drawn per decision) and 1
    of each other, each declaring its longest suit; and as many card plays, each playing the ace of clubs."""
    from c8env.actions import DECLARE_BASE
    from c8env.observation import OBS_SIZE
    from training.imitation import Demonstrations

    rng = np.random.default_rng(seed)
    obs = np.zeros((2 * count, OBS_SIZE), np.float32)
    masks = np.zeros((2 * count, 60), bool)
    suits = rng.choice(longest, size=count)
    for row, suit in enumerate(suits):
        for other in range(4):
            ranks = rng.choice([r for r in range(13) if r != 7], size=4 if other == suit else 1, replace=False)
            obs[row, 13 * other + ranks] = 1.0
    masks[:count, DECLARE_BASE:DECLARE_BASE + 4] = True
    obs[count:, 0], masks[count:, [0, 1]] = 1.0, True
    actions = np.concatenate([DECLARE_BASE + suits, np.zeros(count, np.int64)])
    return Demonstrations(obs, masks, actions, np.zeros(2 * count, np.float32), np.full(masks.shape, np.nan, np.float32))


def test_suit_permutations_teach_the_clone_a_rule_its_demonstrations_show_in_one_suit_only():
    """Every demonstrated declaration names clubs, the longest suit there: the clone of the decisions as they are
    declares clubs whatever it holds, the clone shown them with the suits renamed declares the longest suit. A fit
    of the declarations alone drops the card plays; rules that treat the suits apart refuse the permutations."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    from c8env.actions import DECLARE_BASE
    from training.envs import make_env
    from training.imitation import behaviour_clone, masked_logits
    from training.model import build_model

    demos, test = _declarations(300, [0], seed=1), _declarations(200, [1, 2, 3], seed=2)
    assert len(demos.declarations()) == 300 and (demos.declarations().actions >= DECLARE_BASE).all()
    accuracy = {}
    for permuted in (False, True):
        config = config_from_dict({**TINY, "vec_env": "dummy", "n_envs": 2, "n_workers": 1, "pretrain_epochs": 30,
                                   "pretrain_lr": 3e-3, "pretrain_batch_size": 32, "pretrain_decisions": "declare",
                                   "pretrain_suit_permutations": permuted})
        model = build_model(config, DummyVecEnv([make_env(config, [])] * 2))
        behaviour_clone(model, demos, config, seed=3)
        with torch.no_grad():
            logits = masked_logits(model.policy, torch.as_tensor(test.obs[:200]), torch.as_tensor(test.masks[:200]))
        accuracy[permuted] = float((logits.argmax(1).numpy() == test.actions[:200]).mean())
    assert accuracy[False] < 0.2 and accuracy[True] > 0.8, accuracy
    plays = type(demos)(*(getattr(demos, k)[300:] for k in ("obs", "masks", "actions", "returns", "values")))
    with pytest.raises(ValueError, match="hold no suit declaration"):
        behaviour_clone(model, plays, config, seed=3)
    with pytest.raises(ValueError, match="pretrain_suit_permutations.*treat some suits apart"):
        config_from_dict({**TINY, "rules": "uno_like", "pretrain_suit_permutations": True})


def test_an_endgame_fit_keeps_the_moves_with_a_choice_once_some_player_holds_few_cards():
    """``pretrain_decisions: endgame`` fits the decisions with two legal moves or more, declarations aside, where the
    observer or a seated opponent holds at most ``pretrain_endgame_cards`` cards; none such is an error."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from c8env.actions import DECLARE_BASE
    from c8env.observation import OBS_LAYOUT, OBS_SIZE
    from training.envs import make_env
    from training.imitation import Demonstrations, behaviour_clone
    from training.model import build_model

    sizes = OBS_LAYOUT["opponent_hand_sizes"].start
    rows = [  # (own cards, opponents' cards, legal moves, declaring)
        (1, (5, 6, 7), 2, False), (4, (5, 1, 7), 3, False), (4, (5, 2, 7), 2, False), (1, (5, 6, 7), 1, False),
        (3, (1, 6, 7), 4, True), (2, (2, 6, 7), 2, False)]
    obs = np.zeros((len(rows), OBS_SIZE), np.float32)
    masks = np.zeros((len(rows), 60), bool)
    for row, (own, opponents, legal, declaring) in enumerate(rows):
        obs[row, :own] = 1.0
        obs[row, sizes:sizes + 3] = opponents
        masks[row, (DECLARE_BASE if declaring else 0) + np.arange(legal)] = True
    demos = Demonstrations(obs, masks, masks.argmax(1),
                           np.arange(len(rows), dtype=np.float32), np.full(masks.shape, np.nan, np.float32))
    assert demos.endgame(1).returns.tolist() == [0, 1]
    assert demos.endgame(2).returns.tolist() == [0, 1, 2, 5]
    config = config_from_dict({**TINY, "vec_env": "dummy", "n_envs": 2, "n_workers": 1,
                               "pretrain_decisions": "endgame", "pretrain_endgame_cards": 1})
    model = build_model(config, DummyVecEnv([make_env(config, [])] * 2))
    far = type(demos)(*(getattr(demos, k)[2:4] for k in ("obs", "masks", "actions", "returns", "values")))
    with pytest.raises(ValueError, match="hold no decision with a choice where some player holds at most 1 card"):
        behaviour_clone(model, far, config, seed=3)
    with pytest.raises(ValueError, match="pretrain_endgame_cards"):
        config_from_dict({**TINY, "pretrain_endgame_cards": 0})


def test_cosine_schedule_decays_the_warm_start_to_zero():
    """The cosine schedule starts at the full rate, halves it midway and ends near 0; constant stays at 1;
    the two schedules fit different weights from the same demonstrations and seed."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.envs import make_env
    from training.imitation import behaviour_clone, lr_factor, record_demonstrations
    from training.model import build_model

    assert [lr_factor("cosine", k, 10) for k in (0, 5)] == [1.0, 0.5] and lr_factor("cosine", 9, 10) < 0.03
    assert {lr_factor("constant", k, 10) for k in range(10)} == {1.0}
    settings = {**TINY, "vec_env": "dummy", "n_envs": 2, "n_workers": 1, "batch_size": 128, "pretrain_epochs": 3}
    demos = record_demonstrations(config_from_dict(settings), 600, seed=1)
    weights = {}
    for schedule in ("constant", "cosine"):
        config = config_from_dict({**settings, "pretrain_lr_schedule": schedule})
        model = build_model(config, DummyVecEnv([make_env(config, [])] * 2))
        behaviour_clone(model, demos, config, seed=2)
        weights[schedule] = torch.cat([p.detach().flatten() for p in model.policy.parameters()])
    assert not torch.allclose(weights["constant"], weights["cosine"])


# ----- export --------------------------------------------------------------------------------------
@pytest.mark.parametrize("activation, obs_size", [("tanh", 401), ("relu", 245)])
def test_exported_policy_matches_the_sb3_model(tmp_path, activation, obs_size):
    """(obs_size 245: the network reads the observation's entries before opponent_last_draws, as the files shipped
    before them; the others are not inputs of the exported file, and the SB3 model's moves are still its own)"""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.envs import make_env
    from training.export import export_policy
    from training.imitation import behaviour_clone, record_demonstrations
    from training.model import build_model

    config = config_from_dict({**TINY, "activation": activation, "obs_size": obs_size, "pi_layers": [64, 48], "vec_env": "dummy",
                               "n_envs": 2, "n_workers": 1, "batch_size": 128, "pretrain_samples": 2000})
    model = build_model(config, DummyVecEnv([make_env(config, [])] * 2))
    behaviour_clone(model, record_demonstrations(config, 2000, seed=1), config, seed=2)  # non-trivial logits
    path = export_policy(model, tmp_path / "p.npz", 2, "standard", "test")
    agent = load(str(path))
    assert isinstance(agent, PolicyAgent) and agent.meta["activation"] == activation
    assert agent.meta["obs_size"] == obs_size == agent.layers[0][0].shape[1]

    env = SingleAgentEnv(num_players=2, opponents="random")
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    observations, masks = [], []
    while len(observations) < 1000:
        mask = env.action_masks()
        observations.append(obs)
        masks.append(mask)
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
    observations, masks = np.stack(observations), np.stack(masks)
    sb3_actions, _ = model.predict(observations, action_masks=masks, deterministic=True)
    numpy_actions = [agent.act({"observation": o, "action_mask": m.astype(np.int8)})
                     for o, m in zip(observations, masks, strict=True)]
    assert len(set(numpy_actions)) > 5  # the policy does not play one action everywhere
    assert list(sb3_actions) == numpy_actions


# ----- a tiny run in a subprocess ------------------------------------------------------------------
def _train(args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "training.train", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def _checkpoint_steps(run):
    return sorted(json.loads(p.read_text())["step"] for p in (run / "checkpoints").glob("ckpt_*.json"))


@pytest.fixture
def processes():
    """Training subprocesses started by a test, killed if the test fails half-way."""
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.slow
def test_tiny_run_checkpoints_resumes_and_exports(tmp_path, processes):
    config = tmp_path / "tiny.yaml"
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in {**TINY, "run_root": str(tmp_path)}.items()))
    run = tmp_path / "tiny-s5"

    # 1. a long run, stopped by SIGTERM once it has written a checkpoint past step 0
    proc = _train(["--config", str(config), "--seed", "5", "--total-steps", "1000000"])
    processes.append(proc)
    deadline = time.time() + 120
    while not (run.exists() and max(_checkpoint_steps(run), default=0) > 0):
        assert proc.poll() is None, proc.communicate()
        assert time.time() < deadline, "no checkpoint after step 0 within 120 s"
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted: checkpoint at step" in err
    stopped = _checkpoint_steps(run)[-1]
    assert stopped >= 512 and (run / "config.yaml").is_file()
    assert (run / "snapshots").is_dir() and (run / "logs" / "progress.csv").is_file()
    assert any((run / "logs" / "tb").iterdir())

    # 2. without --resume the run directory is not overwritten
    again = _train(["--config", str(config), "--seed", "5"])
    processes.append(again)
    _, err = again.communicate(timeout=60)
    assert again.returncode == 2 and "pass --resume" in err

    # 3. --resume continues from the checkpoint to the end and prints the evaluation table
    target = stopped + 1024
    proc = _train(["--config", str(config), "--seed", "5", "--resume", "--total-steps", str(target)])
    processes.append(proc)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert f"resuming {run} from ckpt_{stopped:010d}.zip" in err
    assert "| opponent | hands | win rate | 95% CI |" in out and "| greedy |" in out and "| random |" in out
    steps = _checkpoint_steps(run)
    assert steps[-1] >= target and steps[0] > stopped
    evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
    assert {e["opponent"] for e in evals} == {"random", "greedy"} and evals[0]["step"] == 0
    header = (run / "logs" / "progress.csv").read_text().splitlines()[0].split(",")
    for key in ("eval/win_rate_vs_greedy", "eval/ci_low_vs_greedy", "pool/size", "train/win_rate_vs_greedy",
                "pretrain/accuracy", "rollout/ep_rew_mean", "time/fps"):
        assert key in header
    assert (run / "policy.npz").is_file() and (run / "eval.md").is_file()
    assert f"Learning curves: {run / 'curves.png'}" in out
    assert (run / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # 4. export the run and play a full game with the policy in the AEC env
    out_path = tmp_path / "exported.npz"
    proc = subprocess.run([sys.executable, "-m", "training.export", str(run), str(out_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    agent = load(str(out_path))
    assert agent.meta["num_players"] == 2 and "tiny-s5" in agent.meta["description"]
    _plays_a_hand(agent)


def _plays_a_hand(agent: Any) -> None:
    """``agent`` plays seat 0 of a whole hand in the AEC env against a random agent, with legal moves only."""
    env = c8env.env(num_players=2)
    env.reset(seed=3)
    opponent = load("random", seed=0)
    moves, ended, final = 0, set(), {}
    for name in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            ended.add(name)
            final[name] = reward
            env.step(None)
            continue
        action = (agent if name == "player_0" else opponent).act(obs)
        assert obs["action_mask"][action], (name, action)
        env.step(action)
        moves += 1
    assert moves > 0 and ended == {"player_0", "player_1"} and sum(final.values()) == 0
    assert env.unwrapped.game.hand_over


def test_plot_draws_a_run_and_rejects_what_is_not_one(tmp_path):
    from training.plot import main as plot_main
    from training.plot import read_evals

    run = tmp_path / "run-s0"
    run.mkdir()
    rows = [{"step": step, "opponent": opponent, "hands": 200, "win_rate": rate, "ci_low": rate - 0.05,
             "ci_high": rate + 0.05, "points_per_hand": 0.0, "fair_share": 0.5}
            for step, rates in ((2000, (0.9, 0.55)), (0, (0.8, 0.5)))
            for opponent, rate in zip(("random", "greedy"), rates, strict=True)]
    (run / "evals.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    curves = read_evals(run)
    assert list(curves) == ["random", "greedy"]
    assert [r["step"] for r in curves["greedy"]] == [0, 2000]
    plot_main([str(run), "--out", str(tmp_path / "c.png")])
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    # records with their wall-clock time add a second row of panels (the same curves against time)
    clocked = [{**r, "seconds": r["step"] / 10, "cut_off": 5 * (r["step"] > 0)} for r in rows]  # step 2000 stalls
    (run / "evals.jsonl").write_text("".join(json.dumps(r) + "\n" for r in clocked))
    plot_main([str(run), "--out", str(tmp_path / "clock.png")])
    height = [int.from_bytes(path.read_bytes()[20:24], "big") for path in (tmp_path / "c.png", tmp_path / "clock.png")]
    assert height[1] == 2 * height[0]

    with pytest.raises(ValueError, match="has no evals.jsonl"):
        read_evals(tmp_path)
    (run / "evals.jsonl").write_text('{"step": 1}\n')
    with pytest.raises(ValueError, match="line 1 is not an evaluation record"):
        read_evals(run)


def test_plot_draws_the_expert_iteration_csv_and_rejects_other_csvs(tmp_path):
    from training.plot import ITERATION_COLUMNS, read_iteration
    from training.plot import main as plot_main

    rows = [(1, "a", "t", "hard", 20, 0.58, 0.57, 0.59, 1000, 0.5, 0.48, 0.52, 500),
            (2, "b", "t", "soft", 40, 0.61, 0.60, 0.62, 1000, 0.52, 0.50, 0.54, 500)]
    table = tmp_path / "steps.csv"
    table.write_text(",".join(ITERATION_COLUMNS) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    assert [r["fit"] for r in read_iteration(table)] == ["hard", "soft"]
    plot_main([str(table)])
    assert (tmp_path / "steps.png").read_bytes()[:4] == b"\x89PNG"
    (tmp_path / "other.csv").write_text("step,network\n1,a\n")
    with pytest.raises(ValueError, match=r"not an expert-iteration CSV: no rows or no column\(s\) \['teacher'"):
        read_iteration(tmp_path / "other.csv")
    with pytest.raises(ValueError, match="does not exist"):
        read_iteration(tmp_path / "missing.csv")


@pytest.mark.slow
def test_same_seed_same_policy(tmp_path, processes):
    """Two runs of one config and seed (warm start, subprocess envs, snapshots, PPO) give byte-identical policies."""
    config = tmp_path / "tiny.yaml"
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in TINY.items()))
    policies = []
    for root, seed in (("a", 9), ("b", 9), ("c", 10)):
        proc = _train(["--config", str(config), "--seed", str(seed), "--total-steps", "1024", "--no-progress",
                       "--set", f"run_root={tmp_path / root}"])
        processes.append(proc)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        policies.append((tmp_path / root / f"tiny-s{seed}" / "policy.npz").read_bytes())
    assert policies[0] == policies[1]
    assert policies[0] != policies[2]


@pytest.mark.slow
def test_pretrain_seed_fits_another_seed_to_the_same_recording(tmp_path, processes):
    """``pretrain_seed``: a run of another seed loads the recording of that seed (the members of an average) and
    fits another network to it; without it, the saved recording is refused as another seed's."""
    config = tmp_path / "clone.yaml"
    settings = {**TINY, "total_steps": 0, "pretrain_samples": 300, "final_eval_deals": 3, "vec_env": "dummy",
                "pretrain_demos": str(tmp_path / "demos.npz"), "run_root": str(tmp_path)}
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()))
    outputs = []
    for extra in ([], ["--seed", "1", "--set", "pretrain_seed=0"], ["--seed", "2"]):
        proc = _train(["--config", str(config), "--no-progress", *extra])
        processes.append(proc)
        out, err = proc.communicate(timeout=300)
        outputs.append((proc.returncode, out + err))
    assert outputs[0][0] == 0 and "decisions recorded in" in outputs[0][1]
    assert outputs[1][0] == 0 and f"decisions loaded from {tmp_path / 'demos.npz'}" in outputs[1][1]
    assert outputs[2][0] != 0 and "(differ: seed)" in outputs[2][1]
    first, second = ((tmp_path / f"clone-s{seed}" / "policy.npz") for seed in (0, 1))
    assert load(str(first)).layers[0][0].tolist() != load(str(second)).layers[0][0].tolist()


@pytest.mark.slow
def test_a_run_fits_its_recording_and_the_extra_ones(tmp_path, processes):
    """``pretrain_extra_demos``: a saved recording's decisions are added to the run's own, and the run says so."""
    from training.imitation import demonstrations

    extra = tmp_path / "dagger.npz"
    demonstrations(config_from_dict({**TINY, "pretrain_behaviour": "random", "pretrain_samples": 200,
                                     "pretrain_demos": str(extra)}), 5)
    config = tmp_path / "fit.yaml"
    settings = {**TINY, "total_steps": 0, "pretrain_samples": 300, "final_eval_deals": 3, "vec_env": "dummy",
                "pretrain_extra_demos": [str(extra)], "run_root": str(tmp_path)}
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()))
    proc = _train(["--config", str(config), "--no-progress"])
    processes.append(proc)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "warm start: 300 greedy decisions recorded in" in out + err and f"200 more from {extra}," in out + err


@pytest.mark.slow
def test_a_guided_search_distilled_without_ppo(tmp_path, processes):
    """``total_steps: 0``: the network is the clone of the demonstrator (here the policy-guided expert, one step
    of expert iteration), exported and evaluated on fresh deals."""
    spec = "expert:policy=ppo-standard-2p,top=2,prior=0,simulations=4"
    config = tmp_path / "distil.yaml"
    settings = {**TINY, "total_steps": 0, "pretrain_agent": spec, "pretrain_samples": 300, "final_eval_deals": 3,
                "eval_opponents": ["greedy", "expert:simulations=4"], "vec_env": "subproc", "run_root": str(tmp_path)}
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()))
    proc = _train(["--config", str(config), "--no-progress"])
    processes.append(proc)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"warm start: 300 {spec} decisions recorded" in out + err
    assert "0 steps" in out and "| expert:simulations=4 | 6 |" in out
    _plays_a_hand(load(str(tmp_path / "distil-s0" / "policy.npz")))  # a playable NumPy policy
    assert _checkpoint_steps(tmp_path / "distil-s0") == [0]
