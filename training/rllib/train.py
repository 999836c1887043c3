"""Train a c8env policy by self-play with RLlib's PPO (new API stack): ``python -m training.rllib``.

:func:`train` is the run, top to bottom:

1. the run directory ``<run_root>/<name>-s<seed>/`` gets the resolved ``config.yaml``;
2. Ray: a local instance (``num_cpus``), or the cluster at ``address``; the algorithm: PPO on
   :class:`~training.rllib.env.CrazyEightsMultiAgentEnv` with the modules ``main`` (the learner,
   :class:`~training.rllib.modules.MaskedPPOModule`, the only one trained), ``random`` and ``greedy``
   (``expert`` when its weight is positive; :class:`~training.rllib.modules.AgentModule`) and the
   snapshots ``main_<step>``, seated per episode by :class:`SeatMapping`; with ``--resume`` the
   latest checkpoint's state;
3. the loop: ``algo.train()`` iterations until ``total_steps`` learner decisions; every
   ``snapshot_interval`` steps a frozen copy of ``main`` joins as a module (``algo.add_module``, the
   oldest beyond ``max_snapshots`` leaves); every ``eval_interval`` steps ``main`` is exported to a
   NumPy policy file and evaluated with :func:`c8env.tools.evaluation.evaluate` against ``eval_opponents`` on
   seeded duplicate deals (win rate, 95% Wilson interval; ``evals.jsonl``, TensorBoard ``eval/``; none at
   step 0: an untrained network's argmax may draw until a hand's step limit), the
   best against greedy kept as ``best.npz``; every ``checkpoint_interval`` steps
   ``checkpoints/ckpt_<step>/`` (``algo.save_to_path``) and its ``.json`` sidecar (written last);
4. the end: a last checkpoint, ``policy.npz`` evaluated on fresh deals (``eval.md``, ``eval.json``).

Logs: TensorBoard ``logs/tb`` (``rollout/``, ``train/``, ``eval/``, ``pool/``, ``time/``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from c8env.agents.policy import save_policy
from c8env.rules import load_rules
from training.evaluation import (
    EVAL_SEED,
    FINAL_SEED,
    eval_scalars,
    evaluate_policy,
    record_evaluation,
    results_table,
)
from training.pool import OpponentPool
from training.rllib.config import RLlibConfig

#: The learner's module; snapshots are ``main_<step>``.
MAIN = "main"


class SeatMapping:
    """The policy mapping: ``(agent_id, episode) -> module id``, fixed per episode by a hash of its id.

    Each episode draws the learner's seat uniformly (``main``), then the opponents' kinds with the
    pool's weights (:class:`training.pool.OpponentPool`: one kind for the table, or one per seat with
    ``pool_per_seat``): ``random``, ``greedy``, ``expert`` play the built-in agents' modules, ``self``
    a snapshot module drawn uniformly (its weight goes to the other kinds until the first snapshot).
    """

    def __init__(self, num_players: int, weights: dict[str, float], per_seat: bool, snapshots: Sequence[str]) -> None:
        self.num_players = num_players
        self.pool = OpponentPool(weights, num_players, expert_spec="expert", per_seat=per_seat, snapshots=snapshots)

    def seats(self, episode_id: str) -> list[str]:
        """The module of each seat in the episode ``episode_id``."""
        digest = hashlib.blake2b(str(episode_id).encode(), digest_size=8).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        learner = int(rng.integers(self.num_players))
        opponents = self.pool(rng)
        return opponents[:learner] + [MAIN] + opponents[learner:]

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        return self.seats(episode.id_)[int(str(agent_id).rsplit("_", 1)[1])]


def agent_kinds(config: RLlibConfig) -> dict[str, str]:
    """The built-in agents' module ids and their specs (``expert`` only when it has weight)."""
    kinds = {"random": "random", "greedy": "greedy"}
    if config.opponent_weights.get("expert", 0.0) > 0:
        kinds["expert"] = config.expert_spec
    return kinds


def learner_spec(config: RLlibConfig) -> Any:
    """The ``RLModuleSpec`` of ``main`` and its snapshots."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from c8env.envs.spaces import action_space, observation_dict_space
    from training.rllib.modules import MaskedPPOModule

    return RLModuleSpec(module_class=MaskedPPOModule, observation_space=observation_dict_space(),
                        action_space=action_space(), model_config={
                            "pi_layers": config.pi_layers, "vf_layers": config.vf_layers,
                            "activation": config.activation})


def build_config(config: RLlibConfig, snapshots: Sequence[str] = ()) -> Any:
    """The ``PPOConfig`` of a run, with modules for the given snapshot ids."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from training.rllib.env import ENV_NAME, CrazyEightsMultiAgentEnv
    from training.rllib.modules import AgentModule

    register_env(ENV_NAME, CrazyEightsMultiAgentEnv)
    specs = {MAIN: learner_spec(config)}
    for module_id, spec in agent_kinds(config).items():
        specs[module_id] = RLModuleSpec(module_class=AgentModule, model_config={
            "spec": spec, "rules": config.rules, "num_players": config.num_players, "seed": config.seed})
    for module_id in snapshots:
        specs[module_id] = learner_spec(config)
    env_config = {"num_players": config.num_players, "rules": config.rules, "episode": config.episode,
                  "reward": config.reward}
    return (
        PPOConfig()
        # RLlib's env check steps an unmasked random action, which the env refuses (it raises)
        .environment(ENV_NAME, env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=config.num_env_runners, num_envs_per_env_runner=config.num_envs_per_env_runner,
                     num_cpus_per_env_runner=1)
        .learners(num_learners=config.num_learners, num_cpus_per_learner=1)
        .training(lr=config.learning_rate, gamma=config.gamma, lambda_=config.gae_lambda,
                  clip_param=config.clip_range, entropy_coeff=config.ent_coef, vf_loss_coeff=config.vf_coef,
                  grad_clip=config.max_grad_norm, use_kl_loss=config.kl_coeff > 0, kl_coeff=config.kl_coeff,
                  train_batch_size_per_learner=config.train_batch_size, minibatch_size=config.minibatch_size,
                  num_epochs=config.num_epochs)
        .multi_agent(policies=set(specs), policies_to_train=[MAIN],
                     policy_mapping_fn=SeatMapping(config.num_players, config.opponent_weights,
                                                   config.pool_per_seat, snapshots))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .debugging(seed=config.seed)
        .reporting(metrics_num_episodes_for_smoothing=200)
    )


# ----- Ray -------------------------------------------------------------------------------------------
def start_ray(config: RLlibConfig) -> bool:
    """Start (or join, with ``address``) Ray unless it is up; True when this call did (the run shuts it down).

    On a cluster the ``training`` package travels with the job (``py_modules``); c8env and the
    ``rllib`` extra must be installed on every machine.
    """
    import ray

    import training

    if ray.is_initialized():
        return False
    if config.address:
        ray.init(address=config.address, runtime_env={"py_modules": [str(Path(training.__file__).parent)]},
                 log_to_driver=False)
    else:
        ray.init(num_cpus=config.num_cpus, include_dashboard=False, log_to_driver=False)
    return True


# ----- export and evaluation --------------------------------------------------------------------------
def main_weights(algo: Any) -> dict[str, Any]:
    """The learner's weights of ``main`` (a torch state dict)."""
    return algo.learner_group.get_weights(module_ids=[MAIN])[MAIN]


def export_weights(weights: dict[str, Any], path: str | Path, config: RLlibConfig, step: int) -> Path:
    """Write ``main``'s actor as a NumPy policy file (:mod:`c8env.agents.policy`)."""
    layers = []
    for i in range(len(config.pi_layers) + 1):
        key = f"pi.{2 * i}"
        layers.append((np.asarray(weights[f"{key}.weight"]), np.asarray(weights[f"{key}.bias"])))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    save_policy(tmp, layers, config.activation, config.num_players, load_rules(config.rules).to_dict(),
                f"RLlib PPO self-play, run {config.run_name}, {step} steps, {config.num_players} players, "
                f"rules {config.rules}")
    tmp.replace(path)
    return path


# ----- the run directory -------------------------------------------------------------------------------
class RunDirError(ValueError):
    """The run directory refuses the request (a run is there and neither --resume nor --overwrite was given)."""


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest complete checkpoint sidecar ``checkpoints/ckpt_<step>.json`` (its folder beside it), or None."""
    done = sorted((run_dir / "checkpoints").glob("ckpt_*.json"))
    return next((meta for meta in reversed(done) if meta.with_suffix("").is_dir()), None)


def open_run_dir(config: RLlibConfig, resume: bool, overwrite: bool) -> Path | None:
    """Create (or reopen) the run directory and write its ``config.yaml``; the checkpoint to resume from, or None."""
    run_dir = config.run_dir
    meta = latest_checkpoint(run_dir) if run_dir.is_dir() else None
    if meta is not None and not resume and not overwrite:
        raise RunDirError(f"run directory {str(run_dir)!r} already holds a run (checkpoint {meta.stem}); pass "
                         "--resume to continue it, --overwrite to start again, or change name/seed")
    if overwrite and run_dir.is_dir():
        shutil.rmtree(run_dir)
        meta = None
    if meta is None and run_dir.is_dir():  # stopped before its first checkpoint: start afresh
        for name in ("logs", "checkpoints"):
            shutil.rmtree(run_dir / name, ignore_errors=True)
        for name in ("evals.jsonl", "best.npz", "best.json", "eval_policy.npz"):
            (run_dir / name).unlink(missing_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(config.to_yaml())
    return meta


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


# ----- the run ----------------------------------------------------------------------------------------
class Run:
    """The state of one run: the algorithm, its step count, snapshots, best evaluation and logs."""

    def __init__(self, config: RLlibConfig, meta: Path | None) -> None:
        from torch.utils.tensorboard import SummaryWriter

        saved = json.loads(meta.read_text()) if meta else {}
        self.config = config
        self.step: int = saved.get("step", 0)
        self.seconds_before: float = saved.get("seconds", 0.0)
        self.snapshots: list[tuple[int, str]] = [(int(s), m) for s, m in saved.get("snapshots", [])]
        self.best: dict[str, Any] = saved.get("best", {})
        self.algo = build_config(config, [m for _, m in self.snapshots]).build_algo()
        if meta:
            self.algo.restore_from_path(str(meta.with_suffix("").resolve()))
            self.trim_evals()
        self.writer = SummaryWriter(str(config.run_dir / "logs" / "tb"), purge_step=self.step if meta else None)
        self.start = time.perf_counter()

    def seconds(self) -> float:
        return self.seconds_before + time.perf_counter() - self.start

    def mapping(self) -> SeatMapping:
        c = self.config
        return SeatMapping(c.num_players, c.opponent_weights, c.pool_per_seat, [m for _, m in self.snapshots])

    def add_snapshot(self) -> None:
        """A frozen copy of ``main`` joins as module ``main_<step>``; the oldest beyond ``max_snapshots`` leaves."""
        module_id = f"{MAIN}_{self.step}"
        if any(m == module_id for _, m in self.snapshots):
            return
        self.snapshots.append((self.step, module_id))
        dropped = self.snapshots[:-self.config.max_snapshots]
        self.snapshots = self.snapshots[-self.config.max_snapshots:]
        self.algo.add_module(module_id, learner_spec(self.config),
                             new_agent_to_module_mapping_fn=self.mapping())
        self.algo.learner_group.set_weights({module_id: main_weights(self.algo)})
        self.algo.env_runner_group.sync_weights(from_worker_or_learner_group=self.algo.learner_group,
                                                policies=[module_id], inference_only=True)
        for _, old in dropped:
            self.algo.remove_module(old, new_agent_to_module_mapping_fn=self.mapping())

    def iterate(self) -> dict[str, Any]:
        """One ``algo.train()``; logs its metrics and returns the result."""
        clock = time.perf_counter()
        result = self.algo.train()
        seconds = time.perf_counter() - clock
        runners = result.get("env_runners", {})
        learner_steps = int(runners.get("num_module_steps_sampled", {}).get(MAIN, 0))
        self.step += learner_steps
        scalars = {"time/learner_steps_per_second": learner_steps / seconds,
                   "time/env_steps_per_second": float(runners.get("num_env_steps_sampled", 0)) / seconds}
        for module_id, value in runners.get("module_episode_returns_mean", {}).items():
            scalars[f"rollout/return_mean_{module_id}"] = float(value)
        for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "total_loss"):
            if key in result.get("learners", {}).get(MAIN, {}):
                scalars[f"train/{key}"] = float(result["learners"][MAIN][key])
        for kind, p in self.mapping().pool.probabilities().items():
            scalars[f"pool/p_{kind}"] = p
        for key, value in scalars.items():
            self.writer.add_scalar(key, value, self.step)
        return scalars

    def evaluate(self) -> list[dict[str, Any]]:
        """The periodic evaluation of ``main`` (``evals.jsonl``, ``eval/`` logs, ``best.npz``)."""
        run_dir = self.config.run_dir
        path = export_weights(main_weights(self.algo), run_dir / "eval_policy.npz", self.config, self.step)
        rows = evaluate_policy(path, self.config, self.config.eval_deals, EVAL_SEED + self.config.seed)
        for key, value in eval_scalars(rows).items():
            self.writer.add_scalar(key, value, self.step)
        self.writer.flush()
        better = record_evaluation(run_dir, self.step, self.seconds(), rows, self.best)
        if better is not None:
            self.best = better
            shutil.copyfile(path, run_dir / "best.npz")
            write_json(run_dir / "best.json", {"config": self.config.to_dict(), **self.best})
        return rows

    def checkpoint(self) -> None:
        """``checkpoints/ckpt_<step>/`` and its sidecar (written last: it marks the checkpoint complete)."""
        folder = self.config.run_dir / "checkpoints"
        path = folder / f"ckpt_{self.step:010d}"
        self.algo.save_to_path(str(path.resolve()))
        write_json(path.with_suffix(".json"), {"step": self.step, "seconds": self.seconds(),
                                               "config": self.config.to_dict(),
                                               "snapshots": [[s, m] for s, m in self.snapshots], "best": self.best})
        done = sorted(folder.glob("ckpt_*.json"))
        for old in done[: max(0, len(done) - self.config.keep_checkpoints)]:
            shutil.rmtree(old.with_suffix(""), ignore_errors=True)
            old.unlink()

    def trim_evals(self) -> None:
        """Drop the evaluations logged after the checkpoint (a resumed run redoes them)."""
        path = self.config.run_dir / "evals.jsonl"
        if path.is_file():
            lines = [line for line in path.read_text().splitlines() if line and json.loads(line)["step"] <= self.step]
            path.write_text("".join(line + "\n" for line in lines))

    def close(self) -> None:
        self.writer.close()
        self.algo.stop()


def train(config: RLlibConfig, resume: bool = False, overwrite: bool = False, say: Any = print) -> dict[str, Any]:
    """Run training (see the module docstring); returns the final step, seconds, policy path and evaluation rows."""
    import ray
    import torch

    torch.set_num_threads(config.torch_threads)
    run_dir = config.run_dir
    meta = open_run_dir(config, resume, overwrite)
    started = start_ray(config)
    try:
        run = Run(config, meta)
        try:
            if meta:
                say(f"resuming {run_dir} from {meta.stem} (step {run.step:,})")
            intervals = {"snapshot": config.snapshot_interval, "eval": config.eval_interval,
                         "checkpoint": config.checkpoint_interval}
            due = {key: (run.step // n + 1) * n if meta else 0 for key, n in intervals.items()}
            if not meta:  # an untrained network's argmax can draw until the hand's step limit: no evaluation at 0
                due["eval"] = config.eval_interval
            last_checkpoint = run.step if meta else -1
            while run.step < config.total_steps:
                if run.step >= due["snapshot"]:
                    run.add_snapshot()
                if run.step >= due["eval"]:
                    rows = run.evaluate()
                    say(f"step {run.step:,}: eval " + "; ".join(
                        f"vs {r['opponent']} {r['win_rate']:.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}]"
                        for r in rows))
                if run.step >= due["checkpoint"] and run.step > last_checkpoint:
                    run.checkpoint()
                    last_checkpoint = run.step
                due = {key: (run.step // n + 1) * n if run.step >= due[key] else due[key]
                       for key, n in intervals.items()}
                scalars = run.iterate()
                say(f"step {run.step:,}/{config.total_steps:,}: {scalars['time/learner_steps_per_second']:,.0f} "
                    f"learner steps/s, return {scalars.get(f'rollout/return_mean_{MAIN}', float('nan')):+.2f}")
            train_seconds = run.seconds()
            if last_checkpoint != run.step:
                run.checkpoint()
            step = run.step
            path = export_weights(main_weights(run.algo), run_dir / "policy.npz", config, step)
            best = run.best
        finally:
            run.close()
    finally:
        if started:
            ray.shutdown()
    clock = time.perf_counter()
    rows = evaluate_policy(path, config, config.final_eval_deals, FINAL_SEED + config.seed)
    eval_seconds = time.perf_counter() - clock
    text = report(config, path, step, train_seconds, rows, eval_seconds, best)
    (run_dir / "eval.md").write_text(text + "\n")
    write_json(run_dir / "eval.json", {"step": step, "seconds": train_seconds, "policy": str(path), "rows": rows})
    say(text)
    return {"step": step, "seconds": train_seconds, "policy": path, "rows": rows}


def report(config: RLlibConfig, path: Path, step: int, seconds: float, rows: list[dict[str, Any]],
           eval_seconds: float, best: dict[str, Any]) -> str:
    """The Markdown table of the final evaluation (``eval.md``)."""
    speed = step / seconds if seconds else 0.0
    lines = [
        f"## {config.run_name}: {path}",
        "",
        f"RLlib PPO self-play, {step:,} learner steps in {seconds / 60:.1f} min ({speed:,.0f} steps/s overall; "
        f"{config.num_env_runners} env runners x {config.num_envs_per_env_runner} envs, {config.num_learners} "
        f"learners); {config.num_players} players, rules {config.rules}; evaluated on {config.final_eval_deals:,} "
        f"fresh seeded deals x {config.num_players} seat rotations per opponent ({eval_seconds:.0f} s).",
        "",
        *results_table(rows),
    ]
    if best:
        lines += ["", f"Best periodic evaluation vs {best['opponent']}: {best['win_rate']:.1%} at step "
                      f"{best['step']:,} ({config.run_dir / 'best.npz'})."]
    return "\n".join(lines)


__all__ = ["MAIN", "Run", "RunDirError", "SeatMapping", "build_config", "learner_spec", "export_weights", "main_weights",
           "start_ray", "train"]
