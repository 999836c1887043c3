"""Train a c8env policy by self-play with sb3-contrib's MaskablePPO.

    python -m training.train --config configs/train/default.yaml [--set key=value ...] [--resume]

The run reads top to bottom (:meth:`Trainer.run`):

1. the run directory ``<run_root>/<name>-s<seed>/`` gets the resolved ``config.yaml``;
2. fresh runs warm-start the policy by behaviour cloning ``pretrain_agent`` (cross-entropy
   on the masked logits, value head fitted to the demonstrations' returns); resumed runs
   load their latest checkpoint instead;
3. MaskablePPO trains on ``n_envs`` environments (one process each) whose opponents are
   sampled per episode from the pool: random, greedy, expert and frozen snapshots of the
   learner (``snapshots/*.npz``, exported every ``snapshot_interval`` steps);
4. every ``eval_interval`` steps the deterministic policy is evaluated against
   ``eval_opponents`` on seeded duplicate deals (win rate, 95% Wilson interval), logged as
   ``eval/win_rate_vs_<opponent>`` etc.; the best one against greedy is kept as
   ``best.zip``/``best.npz``; every ``checkpoint_interval`` steps ``checkpoints/ckpt_<step>.zip``
   (with a ``.json`` sidecar: config, pool, best) is written; SIGINT/SIGTERM stop the run at the
   next step with a checkpoint of the model as it was at the start of that rollout;
5. at the end ``policy.npz`` (the NumPy policy file, ``c8env.agents.load(path)``) is
   exported and evaluated on fresh deals; the table is printed and saved as ``eval.md``, the
   learning curves of the periodic evaluations as ``curves.png`` (:mod:`training.plot`).

Logs: ``logs/progress.csv`` and TensorBoard ``logs/tb`` (keys grouped: ``rollout/``,
``train/``, ``eval/``, ``pool/``, ``pretrain/``, ``time/``); ``evals.jsonl`` holds every evaluation.

This module imports torch and Stable-Baselines3 only inside functions: the env worker
processes, which import it as their ``__main__``, stay NumPy-only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from c8env.evaluate import evaluate
from training.config import TrainConfig, describe, load_config, parse_overrides
from training.envs import make_pool
from training.pool import Snapshots

#: Config keys that ``--resume`` may change (the others are fixed by the run's saved config).
RESUMABLE_KEYS = ("total_steps", "eval_interval", "eval_opponents", "eval_deals", "final_eval_deals", "eval_workers",
                  "checkpoint_interval", "keep_checkpoints", "torch_threads")
_EVAL_SEED, _FINAL_SEED = 1_000, 2_000


def _derived_seed(*parts: int) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0] >> 1)


def _slug(spec: str) -> str:
    """A log-key-safe name of an agent spec (``expert:simulations=20`` -> ``expert_simulations_20``)."""
    name = Path(spec).stem if spec.endswith(".npz") else spec
    return "".join(c if c.isalnum() else "_" for c in name)


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


class Trainer:
    """One training run (see the module docstring)."""

    def __init__(self, config: TrainConfig, progress: bool = True) -> None:
        self.config = config
        self.progress = progress
        self.run_dir = config.run_dir
        self.ckpt_dir = self.run_dir / "checkpoints"
        self.snapshots = Snapshots(self.run_dir / "snapshots", config.max_snapshots)
        self.best: dict[str, Any] = {}
        self.last_eval = ""
        self.model: Any = None
        self.callback: Any = None
        self.next = {"snapshot": 0, "eval": 0, "checkpoint": 0}
        self.last_checkpoint = -1
        self.seconds_before = 0.0  # training time of the run before this process (resumed runs)
        self.stop_requested = False
        self.start_time = time.perf_counter()

    # ----- the run directory ----------------------------------------------------------------------
    def prepare(self, resume: bool, overwrite: bool) -> Path | None:
        """Create (or reopen) the run directory; the checkpoint to resume from, or None."""
        from training.export import latest_checkpoint

        archive = latest_checkpoint(self.run_dir) if self.run_dir.is_dir() else None
        if archive is not None and not resume and not overwrite:
            raise ValueError(f"run directory {str(self.run_dir)!r} already holds a run (checkpoint {archive.name}); "
                             "pass --resume to continue it, --overwrite to start again, or change name/seed")
        if overwrite and self.run_dir.is_dir():
            shutil.rmtree(self.run_dir)
            archive = None
        if archive is None and self.run_dir.is_dir():  # a run stopped before its first checkpoint: start afresh
            if resume:
                self.say(f"no checkpoint in {self.run_dir}: starting a fresh run")
            for name in ("logs", "snapshots", "checkpoints"):
                shutil.rmtree(self.run_dir / name, ignore_errors=True)
            for name in ("evals.jsonl", "best.zip", "best.npz", "best.json", "eval_policy.npz"):
                (self.run_dir / name).unlink(missing_ok=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.yaml").write_text(self.config.to_yaml())
        return archive

    def say(self, text: str) -> None:
        if self.callback is not None:
            self.callback.write(text)
        else:
            print(text, file=sys.stderr, flush=True)

    # ----- the run --------------------------------------------------------------------------------
    def run(self, resume: bool = False, overwrite: bool = False) -> dict[str, Any]:
        import torch
        from sb3_contrib import MaskablePPO

        from training.callback import TrainCallback, make_logger
        from training.vec import make_vec_env

        config = self.config
        torch.set_num_threads(config.torch_threads)
        archive = self.prepare(resume, overwrite)
        state = json.loads(archive.with_suffix(".json").read_text()) if archive else None
        step0 = state["step"] if state else None
        if state:
            self.snapshots = Snapshots(self.snapshots.folder, config.max_snapshots,
                                       [tuple(e) for e in state["snapshots"]["entries"] if Path(e[1]).is_file()])
            self.best = state.get("best", {})
            self.seconds_before = state.get("seconds", 0.0)
            self._trim_evals(step0)
        logger = make_logger(self.run_dir / "logs", step0)
        env = make_vec_env(config, self.snapshots.paths)
        previous = {sig: signal.signal(sig, self._request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            if archive:
                self.model = MaskablePPO.load(str(archive), env=env, device="cpu")
                self.model.set_logger(logger)
                self.model.set_random_seed(_derived_seed(config.seed, step0))
                self.last_checkpoint = step0
                for key, interval in self._intervals().items():
                    self.next[key] = (step0 // interval + 1) * interval
                self.say(f"resuming {self.run_dir} from {archive.name} (step {step0:,})")
            else:
                from training.model import build_model

                self.model = build_model(config, env, logger)
                if config.pretrain_agent and config.pretrain_samples > 0:
                    self.pretrain()
            self.callback = TrainCallback(self, progress=self.progress)
            remaining = max(0, config.total_steps - self.model.num_timesteps)
            if not self.stop_requested:
                self.model.learn(remaining, callback=self.callback, reset_num_timesteps=archive is None)
            if self.stop_requested:
                self._interrupted()
                raise SystemExit(130)
            self.callback = None
            step = self.model.num_timesteps
            seconds = self.seconds()
            if self.last_checkpoint != step:
                self.checkpoint(step)
        except KeyboardInterrupt:  # a second signal: stop at once (the last periodic checkpoint stands)
            self.say("stopped at once; continue from the last periodic checkpoint with --resume")
            raise SystemExit(130) from None
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            try:
                env.close()
            except (OSError, EOFError):
                pass
        return self.finish(step, seconds)

    def _request_stop(self, signum: int, frame: Any) -> None:
        """SIGINT/SIGTERM: stop at the next env step (the callback returns False), then checkpoint; a second
        signal stops at once."""
        if self.stop_requested:
            raise KeyboardInterrupt
        self.stop_requested = True  # (no printing here: the main thread may be inside a write)

    def _interrupted(self) -> None:
        """Checkpoint the model as it was at the start of the interrupted rollout (nothing if training had not
        started: a resumed run then starts afresh or from its previous checkpoint)."""
        if self.callback is None or self.model is None or self.callback.rollout_step < 0:
            self.say("interrupted before training started; no checkpoint written")
            return
        self.callback.on_training_end()
        step = self.callback.rollout_step
        self.model.num_timesteps = step
        self.callback = None
        self.checkpoint(step)
        self.say(f"interrupted: checkpoint at step {step:,} in {self.ckpt_dir}; continue with --resume")

    def _intervals(self) -> dict[str, int]:
        c = self.config
        return {"snapshot": c.snapshot_interval, "eval": c.eval_interval, "checkpoint": c.checkpoint_interval}

    def seconds(self) -> float:
        return self.seconds_before + time.perf_counter() - self.start_time

    def pool_probabilities(self) -> dict[str, float]:
        return make_pool(self.config, self.snapshots.paths).probabilities()

    # ----- warm start -----------------------------------------------------------------------------
    def pretrain(self) -> None:
        from training.demos import record_demonstrations
        from training.model import behaviour_clone

        config = self.config
        start = time.perf_counter()
        demos = record_demonstrations(config, config.pretrain_samples, _derived_seed(config.seed, 7),
                                      workers=config.eval_workers)
        recorded = time.perf_counter() - start
        metrics = behaviour_clone(self.model, demos, config, _derived_seed(config.seed, 8))
        seconds = time.perf_counter() - start
        for key, value in metrics.items():
            self.model.logger.record(f"pretrain/{key}", value)
        self.model.logger.record("pretrain/seconds", seconds)
        self.model.logger.record("time/total_timesteps", 0, exclude="tensorboard")
        self.model.logger.dump(0)
        self.say(f"warm start: {len(demos):,} {config.pretrain_agent} decisions recorded in {recorded:.0f} s, "
                 f"cloned in {seconds - recorded:.0f} s; held-out accuracy {metrics['accuracy']:.1%}, "
                 f"entropy {metrics['entropy']:.2f} nats, value MSE {metrics['value_loss']:.3f}")

    # ----- periodic work (called at the start of each rollout) ------------------------------------
    def periodic(self, step: int) -> None:
        if step >= self.next["snapshot"]:
            self.snapshot(step)
        if step >= self.next["eval"]:
            self.periodic_eval(step)
        if step >= self.next["checkpoint"]:
            self.checkpoint(step)
        for key, interval in self._intervals().items():
            if step >= self.next[key]:
                self.next[key] = (step // interval + 1) * interval

    def export(self, path: Path, step: int) -> Path:
        from training.export import export_policy

        c = self.config
        return export_policy(self.model, path, c.num_players, c.rules,
                             f"MaskablePPO self-play, run {c.run_name}, {step} steps, {c.num_players} players, "
                             f"rules {c.rules}")

    def snapshot(self, step: int) -> None:
        path = self.export(self.snapshots.path_for(step), step)
        self.snapshots.add(step, str(path.resolve()))
        self.model.get_env().env_method("set_snapshots", self.snapshots.paths)

    def evaluate_policy(self, path: Path, deals: int, seed: int) -> list[dict[str, Any]]:
        """The policy file in one seat against each evaluation opponent in all the others."""
        c = self.config
        rows = []
        for opponent in c.eval_opponents:
            table = evaluate([str(path)] + [opponent] * (c.num_players - 1), c.num_players, c.rules, deals, seed,
                             workers=c.eval_workers)
            me = table.stats[0]
            low, high = me.interval
            rows.append({"opponent": opponent, "hands": me.hands, "win_rate": me.win_rate, "ci_low": low,
                         "ci_high": high, "points_per_hand": me.points / max(1, me.hands),
                         "fair_share": 1 / c.num_players})
        return rows

    def periodic_eval(self, step: int) -> None:
        c = self.config
        path = self.export(self.run_dir / "eval_policy.npz", step)
        rows = self.evaluate_policy(path, c.eval_deals, _EVAL_SEED + c.seed)
        logger = self.model.logger
        with (self.run_dir / "evals.jsonl").open("a") as fh:
            for row in rows:
                fh.write(json.dumps({"step": step, **row}) + "\n")
                slug = _slug(row["opponent"])
                for key in ("win_rate", "ci_low", "ci_high", "points_per_hand"):
                    logger.record(f"eval/{key}_vs_{slug}", row[key])
        logger.record("time/total_timesteps", step, exclude="tensorboard")
        logger.dump(step)
        self.last_eval = ", ".join(f"vs {r['opponent']} {r['win_rate']:.1%}" for r in rows)
        self.say(f"step {step:,}: eval " + "; ".join(
            f"vs {r['opponent']} {r['win_rate']:.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}]" for r in rows))
        target = next((r for r in rows if r["opponent"] == "greedy"), rows[-1])
        if not self.best or target["win_rate"] > self.best["win_rate"]:
            self.best = {"step": step, **target}
            self.model.save(str(self.run_dir / "best.zip"))
            shutil.copyfile(path, self.run_dir / "best.npz")
            _write_json(self.run_dir / "best.json", {"config": c.to_dict(), **self.best})

    def checkpoint(self, step: int) -> None:
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        stem = self.ckpt_dir / f"ckpt_{step:010d}"
        partial = stem.with_name(stem.name + ".partial.zip")
        self.model.save(str(partial))
        partial.replace(stem.with_suffix(".zip"))  # the .json sidecar, written last, marks it complete
        _write_json(stem.with_suffix(".json"), {
            "step": step, "seconds": self.seconds(), "config": self.config.to_dict(),
            "snapshots": self.snapshots.to_dict(), "best": self.best,
        })
        self.last_checkpoint = step
        done = sorted(self.ckpt_dir.glob("ckpt_*.json"))
        for old in done[: max(0, len(done) - self.config.keep_checkpoints)]:
            old.with_suffix(".zip").unlink(missing_ok=True)
            old.unlink()

    def _trim_evals(self, step: int) -> None:
        path = self.run_dir / "evals.jsonl"
        if path.is_file():
            lines = [line for line in path.read_text().splitlines() if line and json.loads(line)["step"] <= step]
            path.write_text("".join(line + "\n" for line in lines))

    # ----- the end --------------------------------------------------------------------------------
    def finish(self, step: int, seconds: float) -> dict[str, Any]:
        """Export ``policy.npz``, evaluate it on fresh deals, print and save the table."""
        c = self.config
        path = self.export(self.run_dir / "policy.npz", step)
        start = time.perf_counter()
        rows = self.evaluate_policy(path, c.final_eval_deals, _FINAL_SEED + c.seed)
        eval_seconds = time.perf_counter() - start
        speed = step / seconds if seconds else 0.0
        lines = [
            f"## {c.run_name}: {path}",
            "",
            f"MaskablePPO self-play, {step:,} steps in {seconds / 60:.1f} min ({speed:,.0f} steps/s overall); "
            f"{c.num_players} players, rules {c.rules}; evaluated on {c.final_eval_deals:,} fresh seeded deals x "
            f"{c.num_players} seat rotations per opponent ({eval_seconds:.0f} s); the policy in one seat, the "
            "opponent in the others.",
            "",
            "| opponent | hands | win rate | 95% CI | fair share | points/hand |",
            "|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(f"| {r['opponent']} | {r['hands']:,} | {r['win_rate']:.1%} | [{r['ci_low']:.1%}, "
                         f"{r['ci_high']:.1%}] | {r['fair_share']:.0%} | {r['points_per_hand']:+.2f} |")
        if self.best:
            lines += ["", f"Best periodic evaluation vs {self.best['opponent']}: {self.best['win_rate']:.1%} at step "
                          f"{self.best['step']:,} ({self.run_dir / 'best.npz'})."]
        if (self.run_dir / "evals.jsonl").is_file():
            from training.plot import plot_run

            lines += ["", f"Learning curves: {plot_run(self.run_dir)}"]
        text = "\n".join(lines)
        (self.run_dir / "eval.md").write_text(text + "\n")
        _write_json(self.run_dir / "eval.json", {"step": step, "seconds": seconds, "policy": str(path), "rows": rows})
        print(text, flush=True)
        return {"step": step, "seconds": seconds, "policy": path, "rows": rows}


# ----- command line ----------------------------------------------------------------------------------
def resolve_config(args: argparse.Namespace) -> TrainConfig:
    """The config of a command line: the YAML file (or a run directory's saved config) plus overrides."""
    overrides = parse_overrides(args.set or [])
    for flag, key in (("total_steps", "total_steps"), ("seed", "seed"), ("n_envs", "n_envs")):
        if getattr(args, flag) is not None:
            overrides.append((key, getattr(args, flag)))
    resume_dir = args.resume if isinstance(args.resume, str) else None
    if resume_dir:
        saved = Path(resume_dir) / "config.yaml"
        if not saved.is_file():
            raise ValueError(f"--resume {resume_dir!r}: no config.yaml there (not a run directory)")
        base = load_config(saved)
        changed = [key for key, _ in overrides if key.split(".")[0] not in RESUMABLE_KEYS]
        if changed:
            raise ValueError(f"cannot change {', '.join(changed)} when resuming; allowed: {', '.join(RESUMABLE_KEYS)}")
        config = load_config(saved, overrides)
        config.run_root = str(Path(resume_dir).resolve().parent)
        if config.run_dir.resolve() != Path(resume_dir).resolve():
            raise ValueError(f"--resume {resume_dir!r}: its config names run {base.run_name!r}; "
                             "pass the run directory itself")
        return config
    if not args.config:
        raise ValueError("pass --config configs/train/<name>.yaml (or --resume RUN_DIR)")
    config = load_config(args.config, overrides)
    if args.resume:
        saved = config.run_dir / "config.yaml"
        if saved.is_file():  # the run's saved config wins; only run-control keys may change
            base = load_config(saved)
            fixed = {k: v for k, v in config.to_dict().items() if k not in RESUMABLE_KEYS and k != "run_root"}
            differ = [k for k, v in fixed.items() if base.to_dict()[k] != v]
            if differ:
                raise ValueError(f"cannot change {', '.join(differ)} when resuming {str(config.run_dir)!r} (its "
                                 f"config.yaml differs); allowed: {', '.join(RESUMABLE_KEYS)}")
    return config


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training.train", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a c8env policy by self-play with MaskablePPO (see training/train.py).",
        epilog="config fields (YAML keys, and keys of --set):\n" + describe(),
    )
    parser.add_argument("--config", help="training config YAML (configs/train/<name>.yaml)")
    parser.add_argument("--set", nargs="+", metavar="KEY=VALUE", help="override config fields (values read as YAML)")
    parser.add_argument("--total-steps", dest="total_steps", type=int, help="shortcut for --set total_steps=N")
    parser.add_argument("--seed", type=int, help="shortcut for --set seed=N")
    parser.add_argument("--n-envs", dest="n_envs", type=int, help="shortcut for --set n_envs=N")
    parser.add_argument("--resume", nargs="?", const=True, default=False, metavar="RUN_DIR",
                        help="continue the run from its latest checkpoint (the config's run, or RUN_DIR)")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run directory and start again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    args = parser.parse_args(argv)
    try:
        config = resolve_config(args)
        if args.print_config:
            print(config.to_yaml(), end="")
            return
        if args.resume and args.overwrite:
            raise ValueError("--resume and --overwrite exclude each other")
        os.environ.setdefault("OMP_NUM_THREADS", str(config.torch_threads))
        Trainer(config, progress=not args.no_progress).run(resume=bool(args.resume), overwrite=args.overwrite)
    except ValueError as err:
        parser.exit(2, f"train: error: {err}\n")


if __name__ == "__main__":
    main()
