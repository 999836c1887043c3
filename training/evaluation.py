"""The periodic and final evaluations of both training paths (SB3 and RLlib): a policy file against
the config's evaluation opponents on duplicate deals (:func:`c8env.evaluate.evaluate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from c8env.evaluate import evaluate

#: Evaluation deals are seeded ``EVAL_SEED + seed`` (periodic: the same deals each time) and ``FINAL_SEED + seed``.
EVAL_SEED, FINAL_SEED = 1_000, 2_000


class EvalConfig(Protocol):
    """The config fields an evaluation reads (``TrainConfig`` and ``RLlibConfig`` have them)."""

    eval_opponents: list[str]
    num_players: int
    rules: Any
    eval_workers: int


def evaluate_policy(path: Path, config: EvalConfig, deals: int, seed: int) -> list[dict[str, Any]]:
    """The policy file in one seat against each evaluation opponent in all the others."""
    rows = []
    for opponent in config.eval_opponents:
        table = evaluate([str(path)] + [opponent] * (config.num_players - 1), config.num_players, config.rules, deals,
                         seed, workers=config.eval_workers)
        me = table.stats[0]
        low, high = me.interval
        rows.append({"opponent": opponent, "hands": me.hands, "win_rate": me.win_rate, "ci_low": low,
                     "ci_high": high, "points_per_hand": me.points / max(1, me.hands),
                     "fair_share": 1 / config.num_players})
    return rows


def log_name(spec: str) -> str:
    """A log-key-safe name of an agent spec (``expert:simulations=20`` -> ``expert_simulations_20``)."""
    name = Path(spec).stem if spec.endswith(".npz") else spec
    return "".join(c if c.isalnum() else "_" for c in name)


__all__ = ["EVAL_SEED", "FINAL_SEED", "EvalConfig", "evaluate_policy", "log_name"]
