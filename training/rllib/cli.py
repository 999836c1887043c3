"""The command line of the RLlib path: ``python -m training.rllib`` (the parser, config resolution, main)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from c8env.tools.argcheck import Parser, int_at_least
from training.config import parse_overrides
from training.rllib.config import RESUMABLE_KEYS, RLlibConfig, describe_rllib, load_rllib_config


def resolve_config(args: argparse.Namespace) -> RLlibConfig:
    """The config of a command line: the YAML file (or a run directory's saved config) plus overrides."""
    overrides = parse_overrides(args.set or [])
    for flag in ("total_steps", "seed", "num_env_runners", "address"):
        if getattr(args, flag) is not None:
            overrides.append((flag, getattr(args, flag)))
    if isinstance(args.resume, str):
        saved = Path(args.resume) / "config.yaml"
        if not saved.is_file():
            raise ValueError(f"--resume {args.resume!r}: no config.yaml there (not a run directory)")
        source = saved
    elif args.config:
        source = Path(args.config)
    else:
        raise ValueError("pass --config configs/rllib/<name>.yaml (or --resume RUN_DIR)")
    config = load_rllib_config(source, overrides)
    if isinstance(args.resume, str):
        config.run_root = str(Path(args.resume).resolve().parent)
        if config.run_dir.resolve() != Path(args.resume).resolve():
            raise ValueError(f"--resume {args.resume!r}: its config names run {config.run_name!r}; "
                             "pass the run directory itself")
    if args.resume:
        saved = config.run_dir / "config.yaml"
        if saved.is_file():  # the run's saved config wins; only run-control keys may change
            base = load_rllib_config(saved).to_dict()
            differ = [k for k, v in config.to_dict().items()
                      if k not in RESUMABLE_KEYS and k != "run_root" and base[k] != v]
            if differ:
                raise ValueError(f"cannot change {', '.join(differ)} when resuming {str(config.run_dir)!r}; "
                                 f"allowed: {', '.join(RESUMABLE_KEYS)}")
    return config


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m training.rllib", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a c8env policy by self-play with RLlib's PPO, locally or on a Ray cluster "
                    "(see docs/rllib.md).",
        epilog="config fields (YAML keys, and keys of --set):\n" + describe_rllib(),
    )
    parser.add_argument("--config", help="training config YAML (configs/rllib/<name>.yaml)")
    parser.add_argument("--set", nargs="+", metavar="KEY=VALUE", help="override config fields (values read as YAML)")
    parser.add_argument("--total-steps", dest="total_steps", type=int_at_least(1), help="shortcut for --set total_steps=N")
    parser.add_argument("--seed", type=int_at_least(0), help="shortcut for --set seed=N")
    parser.add_argument("--num-env-runners", dest="num_env_runners", type=int_at_least(0),
                        help="shortcut for --set num_env_runners=N")
    parser.add_argument("--address", help="join the Ray cluster at this address (auto, or HOST:PORT of `ray start "
                                          "--head`); shortcut for --set address=...")
    parser.add_argument("--resume", nargs="?", const=True, default=False, metavar="RUN_DIR",
                        help="continue the run from its latest checkpoint (the config's run, or RUN_DIR)")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run directory and start again")
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
    except ValueError as err:
        parser.fail(err)
    os.environ.setdefault("OMP_NUM_THREADS", str(config.torch_threads))
    from training.rllib.train import RunDirError, train

    try:
        train(config, resume=bool(args.resume), overwrite=args.overwrite, say=lambda text: print(text, flush=True))
    except RunDirError as err:  # other errors (Ray's, RLlib's) keep their traceback
        parser.fail(err)


__all__ = ["build_parser", "main", "resolve_config"]
