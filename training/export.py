"""Export a trained MaskablePPO policy to the NumPy-only policy file that ``c8env.agents.load(path)`` plays, or to ONNX.

    python -m training.export RUN_OR_CHECKPOINT OUT.npz [--best]
    python -m training.export RUN_OR_CHECKPOINT OUT.onnx [--best]

``RUN_OR_CHECKPOINT`` is a run directory (its newest intact checkpoint, damaged ones named and
skipped as ``--resume`` does; or ``best.zip`` with ``--best``) or a checkpoint ``.zip`` written by
:mod:`training.train` (its ``.json`` sidecar, or the run's ``config.yaml``, gives the player count and rules). The file
format is described in :mod:`c8env.agents.policy`; the exported agent plays the
masked argmax of the logits, the SB3 model's deterministic action. ``OUT.onnx`` writes the
same actor (features, policy net, action net: observation batch ``observation`` [batch, 401]
to ``logits`` [batch, 60]) as ONNX, played by :class:`c8env.agents.onnx_policy.OnnxAgent`;
:func:`export_onnx` exports any torch module mapping observations to logits.

The learner's self-play snapshots and periodic evaluations use :func:`export_policy` too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from c8env.rules import load_rules
from c8env.tools.argcheck import Parser, check_rules_arg, int_between, new_file
from c8env.tools.onnx_export import export_onnx
from training.checkpoints import damaged_list, resumable_checkpoint
from training.config import TrainConfig, config_from_dict, load_config


def export_policy(model: Any, path: str | Path, num_players: int, rules: Any, description: str = "") -> Path:
    """Write ``model``'s actor (a MaskablePPO or its policy) as a NumPy policy file, or as ONNX when ``path``
    ends in ``.onnx`` (:func:`export_onnx`, the same metadata as the NumPy file's)."""
    if str(path).endswith(".onnx"):
        meta = {"format": "c8env-onnx-policy", "num_players": num_players, "rules": load_rules(rules).to_dict(),
                "description": description}
        return export_onnx(model, path, meta)
    from c8env.tools.maskable_ppo import save_npz

    return save_npz(model, path, num_players, rules, description)  # atomic: env workers never read half a snapshot


def checkpoint_config(archive: Path) -> TrainConfig | None:
    """The training config of a checkpoint: its sidecar's, else the run directory's ``config.yaml``."""
    sidecar = archive.with_suffix(".json")
    if sidecar.is_file():
        return config_from_dict(json.loads(sidecar.read_text())["config"])
    for folder in (archive.parent, archive.parent.parent):
        if (folder / "config.yaml").is_file():
            return load_config(folder / "config.yaml")
    return None


def resolve_checkpoint(source: str | Path, best: bool = False) -> Path:
    """The checkpoint ``.zip`` named by a run directory (its newest intact checkpoint, as ``--resume`` takes: damaged
    ones are named in one line on stderr and skipped) or a path."""
    source = Path(source)
    if source.is_dir() and best:
        if not (source / "best.zip").is_file():
            raise ValueError(f"run directory {str(source)!r} has no best.zip")
        return source / "best.zip"
    if source.is_dir():
        archive, damaged = resumable_checkpoint(source)
        if archive is None:
            raise ValueError(f"run directory {str(source)!r} has no intact checkpoint (checkpoints/ckpt_*.zip with its "
                             f".json){', ' + damaged_list(damaged) if damaged else ''}")
        if damaged:
            print(f"{damaged_list(damaged)}: skipped; exporting {archive.name}, the newest intact one", file=sys.stderr,
                  flush=True)
        return archive
    if source.suffix == ".json" and source.with_suffix(".zip").is_file():
        return source.with_suffix(".zip")
    if source.suffix != ".zip" or not source.is_file():
        raise ValueError(f"{str(source)!r} is neither a run directory nor a checkpoint .zip")
    return source


def load_model(archive: str | Path) -> Any:
    """A checkpoint's MaskablePPO (CPU, no env)."""
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(str(archive), device="cpu")


def export_checkpoint(source: str | Path, out: str | Path, best: bool = False, num_players: int | None = None,
                      rules: str | None = None) -> Path:
    """Export the checkpoint named by ``source`` (see :func:`resolve_checkpoint`) to ``out``."""
    archive = resolve_checkpoint(source, best)
    config = checkpoint_config(archive)
    if config is None and (num_players is None or rules is None):
        raise ValueError(f"{str(archive)!r} has no .json sidecar or config.yaml; pass --players and --rules")
    num_players = num_players or config.num_players
    rules = rules or config.rules
    model = load_model(archive)
    name = config.run_name if config else archive.stem
    description = (f"MaskablePPO self-play, run {name}, {model.num_timesteps} steps, {num_players} players, "
                   f"rules {rules}")
    return export_policy(model, out, num_players, rules, description)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.export", description=__doc__.split("\n\n")[0])
    parser.add_argument("source", metavar="RUN_OR_CHECKPOINT", help="run directory or checkpoint .zip")
    parser.add_argument("out", metavar="OUT", help="policy file to write (.npz, or .onnx)")
    parser.add_argument("--best", action="store_true", help="export the run's best.zip (best evaluation vs greedy)")
    parser.add_argument("--players", type=int_between(2, 7), help="player count (default: from the checkpoint's config)")
    parser.add_argument("--rules", help="rules (default: from the checkpoint's config)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    suffix = Path(args.out).suffix
    if suffix not in (".npz", ".onnx"):
        parser.error(f"OUT must end in .npz or .onnx (c8env.agents.load recognises policy files by it), got {args.out!r}")
    try:
        new_file(suffix)(args.out)
    except argparse.ArgumentTypeError as err:
        parser.error(f"argument OUT: {err}")
    if args.rules is not None:
        check_rules_arg(parser, args.rules)
    try:
        path = export_checkpoint(args.source, args.out, args.best, args.players, args.rules)
    except ValueError as err:
        parser.fail(err)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
