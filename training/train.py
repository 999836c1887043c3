"""Train a c8env policy by self-play with sb3-contrib's MaskablePPO.

    python -m training.train --config configs/train/default.yaml [--set key=value ...] [--resume] [--overwrite]

:func:`train` is the run, top to bottom:

1. the run directory ``<run_root>/<name>-s<seed>/`` gets the resolved ``config.yaml``;
2. ``n_envs`` environments whose opponents are sampled per episode from the pool (random,
   greedy, expert and frozen snapshots of the learner, ``snapshots/*.npz``), and a fresh
   MaskablePPO, or with ``--resume`` the one of the run's latest checkpoint;
3. fresh runs warm-start the policy by behaviour cloning ``pretrain_agent`` (cross-entropy
   on the masked logits, value head fitted to the demonstrations' returns; :mod:`training.imitation`);
4. the learn loop: ``model.learn()`` runs whole rollouts up to the next periodic event, which
   the loop then does: every ``snapshot_interval`` steps a snapshot joins the pool; every
   ``eval_interval`` steps the deterministic policy is evaluated against ``eval_opponents`` on
   seeded duplicate deals (win rate, 95% Wilson interval), logged as ``eval/win_rate_vs_<opponent>``
   etc., the best one against greedy kept as ``best.zip``/``best.npz``/``best.json``; every
   ``checkpoint_interval`` steps ``checkpoints/ckpt_<step>.zip`` (with a ``.json`` sidecar: config,
   pool, best) is written. SIGINT/SIGTERM stop the run at the next step with a checkpoint of the
   model as it was at the start of that rollout;
5. a last checkpoint; ``policy.npz`` (the NumPy policy file, ``c8env.agents.load(path)``) is
   exported and evaluated on fresh deals; the table is printed and saved as ``eval.md``, the
   learning curves of the periodic evaluations as ``curves.png`` (:mod:`training.plot`).

The callback (:class:`training.callback.Recorder`) only records (training win rates per
opponent kind, pool probabilities, the progress bar) and raises the stop flag; with ``shaping: self``
:class:`training.callback.ShapingRefresh` gives the envs' play-outs the actor's weights at each rollout.

Logs: ``logs/progress.csv`` and TensorBoard ``logs/tb`` (keys grouped: ``rollout/``,
``train/``, ``eval/``, ``pool/``, ``pretrain/``, ``time/``); ``evals.jsonl`` holds every evaluation.
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
from typing import TYPE_CHECKING, Any

from c8env.seeding import derive_seed
from c8env.tools.argcheck import Parser, int_at_least
from training.checkpoints import damaged_list, resumable_checkpoint
from training.config import TrainConfig, describe, load_config, parse_overrides
from training.envs import make_pool
from training.evaluation import EVAL_SEED, FINAL_SEED, eval_scalars, evaluate_policy, record_evaluation, results_table
from training.export import export_policy
from training.plot import plot_run
from training.pool import Snapshots

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

#: Config keys that ``--resume`` may change (the others are fixed by the run's saved config).
RESUMABLE_KEYS = ("total_steps", "eval_interval", "eval_opponents", "eval_deals", "final_eval_deals", "eval_workers",
                  "checkpoint_interval", "keep_checkpoints", "torch_threads")


def train(config: TrainConfig, resume: bool = False, overwrite: bool = False, progress: bool = True) -> dict[str, Any]:
    """Run training (see the module docstring); returns the final step, seconds, policy path and evaluation rows."""
    # torch and SB3 are imported here, not at the top: the env worker processes (forkserver) import the main
    # module, which is this one under `python -m training.train`, and must stay torch-free.
    import torch
    from sb3_contrib import MaskablePPO

    from training.callback import Recorder, ShapingRefresh, make_logger
    from training.imitation import (
        Demonstrations,
        behaviour_clone,
        demonstrations,
        extra_demonstrations,
        load_prior,
        recording_seed,
    )
    from training.model import build_model, drop_critic
    from training.vec import make_vec_env

    start = time.perf_counter()
    torch.set_num_threads(config.torch_threads)

    # 1. the run directory and its config; a resumed run's state from its latest checkpoint
    run_dir = config.run_dir
    archive = open_run_dir(config, resume, overwrite)
    saved = json.loads(archive.with_suffix(".json").read_text()) if archive else {}
    step0 = saved.get("step", 0)
    snapshots = Snapshots(run_dir / "snapshots", config.max_snapshots,
                          [e for e in saved.get("snapshots", {}).get("entries", []) if Path(e[1]).is_file()])
    best: dict[str, Any] = saved.get("best", {})
    seconds_before = saved.get("seconds", 0.0)  # training time of the run before this process

    def seconds() -> float:
        return seconds_before + time.perf_counter() - start

    if archive:
        trim_evals(run_dir, step0)
    timing: dict[str, str] = {}  # each stage's time in this process, for the report

    # 2. the envs and the model (fresh, or the latest checkpoint's)
    logger = make_logger(run_dir / "logs", step0 if archive else None)
    env = make_vec_env(config, snapshots.paths)
    pool = make_pool(config, snapshots.paths)  # the learner's copy of the envs' pool, for the logs
    recorder = Recorder(config.total_steps, config.run_name, pool, progress)
    callbacks = [recorder, ShapingRefresh()] if config.shaping == "self" else [recorder]
    say = recorder.write
    previous = {sig: signal.signal(sig, recorder.request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        if archive:
            try:
                model = MaskablePPO.load(str(archive), env=env, device="cpu")
            except Exception as err:  # damage the checks of open_run_dir cannot see
                raise ValueError(f"--resume: checkpoint {archive} cannot be loaded ({type(err).__name__}: "
                                 f"{str(err)[:200]}); move it out of {archive.parent} to resume from an older one, "
                                 "or start again without --resume (--overwrite, or a new name or seed)") from None
            model.set_logger(logger)
            model.set_random_seed(derive_seed(config.seed, step0, bits=31))
            say(f"resuming {run_dir} from {archive.name} (step {step0:,})")
        else:
            model = build_model(config, env, logger)

            # 3. warm start: behaviour cloning of pretrain_agent's decisions
            if config.pretrain_agent and config.pretrain_samples > 0:
                if config.pretrain_prior:
                    load_prior(config)  # a wrong prior stops the run before the recording, not after it
                clock = time.perf_counter()
                # kept in the run directory unless the config names a file: --resume goes on with the recording
                recording = config if config.pretrain_demos else config.model_copy(
                    update={"pretrain_demos": str(run_dir / "demos.npz")})
                demos, loaded = demonstrations(recording, derive_seed(recording_seed(config), 7, bits=31),
                                               workers=config.eval_workers)
                own = len(demos)
                demos = Demonstrations.concat([demos, *extra_demonstrations(config)])
                recorded = time.perf_counter() - clock
                epochs = run_dir / "clone.jsonl"
                epochs.unlink(missing_ok=True)

                def log_epoch(row: dict[str, float]) -> None:
                    with epochs.open("a") as out:
                        out.write(json.dumps(row) + "\n")

                metrics = behaviour_clone(model, demos, config, derive_seed(config.seed, 8, bits=31), progress,
                                          log_epoch)
                cloned = time.perf_counter() - clock - recorded
                for key, value in {**metrics, "seconds": recorded + cloned}.items():
                    logger.record(f"pretrain/{key}", value)
                logger.record("time/total_timesteps", 0, exclude="tensorboard")
                logger.dump(0)
                source = f"loaded from {recording.pretrain_demos}" if loaded else f"recorded in {recorded:.0f} s"
                timing["recording"] = "loaded" if loaded else f"{recorded:.0f} s ({own / recorded:,.0f} decisions/s)"
                timing["cloning"] = f"{cloned:.0f} s ({config.pretrain_epochs} epochs)"
                if len(demos) > own:
                    source += f", {len(demos) - own:,} more from {', '.join(config.pretrain_extra_demos)}"
                say(f"warm start: {own:,} {config.pretrain_agent} decisions {source}, "
                    f"cloned in {cloned:.0f} s; held-out accuracy "
                    f"{metrics['accuracy']:.1%}, entropy {metrics['entropy']:.2f} nats, value MSE "
                    f"{metrics['value_loss']:.3f}")

        if not config.critic:
            drop_critic(model)

        # 4. the learn loop: learn() runs whole rollouts up to the next periodic event, then the loop does it
        intervals = {"snapshot": config.snapshot_interval, "eval": config.eval_interval,
                     "checkpoint": config.checkpoint_interval}
        due = {key: (step0 // n + 1) * n if archive else 0 for key, n in intervals.items()}
        rollout = config.n_steps * config.n_envs
        last_checkpoint = step0 if archive else -1
        # the first learn() call resets the envs (their first episodes draw from the pool as it is before the
        # step-0 snapshot): learning no steps does just that, so the run equals one long learn() call
        model.learn(0, reset_num_timesteps=False)
        ppo_clock, ppo_from = time.perf_counter(), model.num_timesteps
        while model.num_timesteps < config.total_steps and not recorder.stop_requested:
            step = model.num_timesteps
            if step >= due["snapshot"]:
                path = export(model, snapshots.path_for(step), config, step)
                snapshots.add(step, str(path.resolve()))
                pool.set_snapshots(snapshots.paths)
                env.env_method("set_snapshots", snapshots.paths)
            if step >= due["eval"]:
                rows, best = periodic_eval(model, config, step, seconds(), best)
                recorder.status = ", ".join(f"vs {r['opponent']} {r['win_rate']:.1%}" for r in rows)
                say(eval_line(step, rows))
            if step >= due["checkpoint"]:
                write_checkpoint(model, config, step, seconds(), snapshots, best)
                last_checkpoint = step
            due = {key: (step // n + 1) * n if step >= due[key] else due[key] for key, n in intervals.items()}
            rollouts = -(-(min(*due.values(), config.total_steps) - step) // rollout)  # rounded up
            model.learn(rollouts * rollout, callback=callbacks, reset_num_timesteps=False)
            if recorder.in_rollout:  # stopped mid-rollout: the model is as it was at that rollout's start
                model.num_timesteps = recorder.rollout_step
        step = model.num_timesteps
        if config.final_policy == "best" and not recorder.stop_requested and step > ppo_from and \
                step % config.eval_interval:  # the last policy is a candidate too
            rows, best = periodic_eval(model, config, step, seconds(), best)
            say(eval_line(step, rows))
        if recorder.stop_requested:
            if recorder.rollout_step < 0:
                say("interrupted before training started; no checkpoint written")
            else:
                write_checkpoint(model, config, step, seconds(), snapshots, best)
                say(f"interrupted: checkpoint at step {step:,} in {run_dir / 'checkpoints'}; continue with --resume")
            raise SystemExit(130)

        # 5. the end: a last checkpoint, then policy.npz evaluated on fresh deals
        train_seconds = seconds()
        if model.num_timesteps > ppo_from:
            ppo_seconds = time.perf_counter() - ppo_clock
            timing["PPO"] = (f"{ppo_seconds:.0f} s ({(model.num_timesteps - ppo_from) / ppo_seconds:,.0f} steps/s, "
                             "periodic evaluations included)")
        if last_checkpoint != step:
            write_checkpoint(model, config, step, train_seconds, snapshots, best)
    except KeyboardInterrupt:  # a second signal: stop at once (the last periodic checkpoint stands)
        say("stopped at once; continue from the last periodic checkpoint with --resume")
        raise SystemExit(130) from None
    finally:
        recorder.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        try:
            env.close()
        except (OSError, EOFError):
            pass
    path = export(model, run_dir / "policy.npz", config, step)
    if config.final_policy == "best" and (run_dir / "best.npz").is_file():
        shutil.copyfile(run_dir / "best.npz", path)
    clock = time.perf_counter()
    rows = evaluate_policy(path, config, config.final_eval_deals, FINAL_SEED + config.seed, progress)
    eval_seconds = time.perf_counter() - clock
    timing["evaluation"] = f"{eval_seconds:.0f} s"
    curves = plot_run(run_dir) if any((run_dir / f).is_file() for f in ("evals.jsonl", "clone.jsonl")) else None
    text = report(config, path, step, train_seconds, rows, eval_seconds, best, curves, timing)
    (run_dir / "eval.md").write_text(text + "\n")
    write_json(run_dir / "eval.json", {"step": step, "seconds": train_seconds, "policy": str(path), "rows": rows})
    print(text, flush=True)
    return {"step": step, "seconds": train_seconds, "policy": path, "rows": rows}


# ----- the run directory ------------------------------------------------------------------------------
def eval_line(step: int, rows: list[dict[str, Any]]) -> str:
    """The log line of a periodic evaluation: each opponent's win rate and interval."""
    return f"step {step:,}: eval " + "; ".join(
        f"vs {r['opponent']} {r['win_rate']:.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}]" for r in rows)


def set_damaged_aside(damaged: list[tuple[Path, str]]) -> Path | None:
    """Move the files of damaged checkpoints to ``checkpoints/damaged/`` (kept for a look, out of the run's way);
    returns that folder."""
    if not damaged:
        return None
    folder = damaged[0][0].parent / "damaged"
    folder.mkdir(exist_ok=True)
    for stem, _ in damaged:
        for path in (stem.with_suffix(".zip"), stem.with_suffix(".json")):
            if path.is_file():
                path.replace(folder / path.name)
    return folder


def open_run_dir(config: TrainConfig, resume: bool, overwrite: bool) -> Path | None:
    """Create (or reopen) the run directory and write its ``config.yaml``; the checkpoint to resume from, or None.

    With ``resume``, damaged checkpoints (a truncated or garbled ``.zip`` or ``.json``, one of the pair missing) are
    named in one line and set aside, and the run resumes from the newest intact one; with none intact, a
    ``ValueError`` says how to start again."""
    run_dir = config.run_dir
    if overwrite and run_dir.is_dir():
        shutil.rmtree(run_dir)
    archive, damaged = resumable_checkpoint(run_dir) if run_dir.is_dir() else (None, [])
    if (archive is not None or damaged) and not resume:
        newest = archive.name if archive is not None else damaged[0][0].name
        raise ValueError(f"run directory {str(run_dir)!r} already holds a run (checkpoint {newest}); "
                         "pass --resume to continue it, --overwrite to start again, or change name/seed")
    if damaged:
        listed = damaged_list(damaged)
        if archive is None:
            raise ValueError(f"--resume: no intact checkpoint in {str(run_dir / 'checkpoints')!r}, {listed}; start "
                             "again without --resume: --overwrite replaces the run, or give it a new name or seed "
                             "(--set name=NEW, --seed N)")
        folder = set_damaged_aside(damaged)
        print(f"{listed}: moved to {folder}; resuming from {archive.name}, the newest intact one", file=sys.stderr,
              flush=True)
    if archive is None and run_dir.is_dir():  # a run stopped before its first checkpoint: start afresh
        if resume:
            print(f"no checkpoint in {run_dir}: starting again from the warm start (its recording, kept in the run "
                  "directory, goes on where it stopped)", file=sys.stderr, flush=True)
        for name in ("logs", "snapshots", "checkpoints"):
            shutil.rmtree(run_dir / name, ignore_errors=True)
        for name in ("evals.jsonl", "best.zip", "best.npz", "best.json", "eval_policy.npz"):
            (run_dir / name).unlink(missing_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(config.to_yaml())
    return archive


def trim_evals(run_dir: Path, step: int) -> None:
    """Drop the evaluations after ``step`` (a resumed run redoes them)."""
    path = run_dir / "evals.jsonl"
    if path.is_file():
        lines = [line for line in path.read_text().splitlines() if line and json.loads(line)["step"] <= step]
        path.write_text("".join(line + "\n" for line in lines))


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def write_checkpoint(model: MaskablePPO, config: TrainConfig, step: int, seconds: float, snapshots: Snapshots,
                     best: dict[str, Any]) -> None:
    """``checkpoints/ckpt_<step>.zip`` and its ``.json`` sidecar (written last: it marks the checkpoint complete);
    only the newest ``keep_checkpoints`` are kept."""
    folder = config.run_dir / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"ckpt_{step:010d}"
    partial = stem.with_name(stem.name + ".partial.zip")
    model.save(str(partial))
    partial.replace(stem.with_suffix(".zip"))
    write_json(stem.with_suffix(".json"), {"step": step, "seconds": seconds, "config": config.to_dict(),
                                           "snapshots": snapshots.to_dict(), "best": best})
    done = sorted(folder.glob("ckpt_*.json"))
    for old in done[: max(0, len(done) - config.keep_checkpoints)]:
        old.with_suffix(".zip").unlink(missing_ok=True)
        old.unlink()


# ----- export and evaluation --------------------------------------------------------------------------
def export(model: MaskablePPO, path: Path, config: TrainConfig, step: int) -> Path:
    """The policy as a NumPy policy file (snapshots, evaluations, ``policy.npz``)."""
    return export_policy(model, path, config.num_players, config.rules,
                         f"MaskablePPO self-play, run {config.run_name}, {step} steps, {config.num_players} players, "
                         f"rules {config.rules}")


def periodic_eval(model: MaskablePPO, config: TrainConfig, step: int, seconds: float,
                  best: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Evaluate the policy at ``step``, ``seconds`` of wall-clock time into the run (``evals.jsonl``, ``eval/``
    logs); when it beats ``best`` against greedy, and leaves no more than 1 hand in 1,000 unfinished against any
    opponent, it becomes ``best.zip``/``best.npz``/``best.json``. Returns the rows and the best evaluation so far."""
    run_dir = config.run_dir
    path = export(model, run_dir / "eval_policy.npz", config, step)
    rows = evaluate_policy(path, config, config.eval_deals, EVAL_SEED + config.seed)
    for key, value in eval_scalars(rows).items():
        model.logger.record(key, value)
    model.logger.record("time/total_timesteps", step, exclude="tensorboard")
    model.logger.dump(step)
    better = record_evaluation(run_dir, step, seconds, rows, best)
    if better is not None:
        best = better
        model.save(str(run_dir / "best.zip"))
        shutil.copyfile(path, run_dir / "best.npz")
        write_json(run_dir / "best.json", {"config": config.to_dict(), **best})
    return rows, best


def report(config: TrainConfig, path: Path, step: int, seconds: float, rows: list[dict[str, Any]],
           eval_seconds: float, best: dict[str, Any], curves: Path | None, timing: dict[str, str] | None = None) -> str:
    """The Markdown table of the final evaluation (``eval.md``), and each stage's time in this process."""
    speed = step / seconds if seconds else 0.0
    lines = [
        f"## {config.run_name}: {path}",
        "",
        f"MaskablePPO self-play, {step:,} steps in {seconds / 60:.1f} min ({speed:,.0f} steps/s overall); "
        f"{config.num_players} players, rules {config.rules}; evaluated on {config.final_eval_deals:,} fresh seeded "
        f"deals x {config.num_players} seat rotations per opponent ({eval_seconds:.0f} s); the policy in one seat, "
        "the opponent in the others.",
        "",
        *results_table(rows),
    ]
    if best:
        chosen = config.final_policy == "best"
        lines += ["", f"Best periodic evaluation vs {best['opponent']}: {best['win_rate']:.1%} at step "
                      f"{best['step']:,} ({config.run_dir / 'best.npz'}"
                      + ("; the policy above, final_policy: best)." if chosen else ").")]
    if timing:
        lines += ["", "Time per stage: " + "; ".join(f"{stage} {text}" for stage, text in timing.items()) + "."]
    if curves is not None:
        lines += ["", f"Learning curves: {curves}"]
    return "\n".join(lines)


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


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m training.train", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a c8env policy by self-play with MaskablePPO (see training/train.py).",
        epilog="config fields (YAML keys, and keys of --set):\n" + describe(),
    )
    parser.add_argument("--config", help="training config YAML (configs/train/<name>.yaml)")
    parser.add_argument("--set", nargs="+", metavar="KEY=VALUE", help="override config fields (values read as YAML)")
    parser.add_argument("--total-steps", dest="total_steps", type=int_at_least(0), help="shortcut for --set total_steps=N")
    parser.add_argument("--seed", type=int_at_least(0), help="shortcut for --set seed=N")
    parser.add_argument("--n-envs", dest="n_envs", type=int_at_least(1), help="shortcut for --set n_envs=N")
    parser.add_argument("--resume", nargs="?", const=True, default=False, metavar="RUN_DIR",
                        help="continue the run from its latest checkpoint (the config's run, or RUN_DIR)")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run directory and start again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = resolve_config(args)
        if args.print_config:
            print(config.to_yaml(), end="")
            return
        if args.resume and args.overwrite:
            raise ValueError("--resume and --overwrite exclude each other")
        os.environ.setdefault("OMP_NUM_THREADS", str(config.torch_threads))
        train(config, resume=bool(args.resume), overwrite=args.overwrite, progress=not args.no_progress)
    except ValueError as err:
        parser.fail(err)


if __name__ == "__main__":
    main()
