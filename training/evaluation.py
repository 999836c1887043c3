"""The periodic and final evaluations of both training paths (SB3 and RLlib): a policy file against
the config's evaluation opponents on duplicate deals (:func:`c8env.tools.evaluation.evaluate`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Protocol

from c8env.tools.evaluation import evaluate

#: Evaluation deals are seeded ``EVAL_SEED + seed`` (periodic: the same deals each time) and ``FINAL_SEED + seed``.
EVAL_SEED, FINAL_SEED = 1_000, 2_000


class EvalConfig(Protocol):
    """The config fields an evaluation reads (``TrainConfig`` and ``RLlibConfig`` have them)."""

    eval_opponents: list[str]
    num_players: int
    rules: Any
    eval_workers: int


def evaluate_policy(path: Path, config: EvalConfig, deals: int, seed: int,
                    progress: bool = False) -> list[dict[str, Any]]:
    """The policy file in one seat against each evaluation opponent in all the others (``cut_off``: hands still
    running after :data:`c8env.tools.evaluation.MAX_HAND_STEPS` moves); ``progress``: a bar per opponent."""
    rows = []
    for opponent in config.eval_opponents:
        if progress:
            print(f"evaluating vs {opponent}: {deals:,} deals x {config.num_players} seats", file=sys.stderr,
                  flush=True)
        table = evaluate([str(path)] + [opponent] * (config.num_players - 1), config.num_players, config.rules, deals,
                         seed, workers=config.eval_workers, progress=progress)
        me = table.stats[0]
        low, high = me.interval
        rows.append({"opponent": opponent, "hands": me.hands, "win_rate": me.win_rate, "ci_low": low,
                     "ci_high": high, "points_per_hand": me.points / max(1, me.hands),
                     "fair_share": 1 / config.num_players, "cut_off": table.truncated})
    return rows


def stalls(rows: list[dict[str, Any]]) -> bool:
    """Whether more than 1 hand in 1,000 of any row was cut off unfinished (a policy that stalls)."""
    return any(row.get("cut_off", 0) * 1000 > row["hands"] for row in rows)


def record_evaluation(run_dir: Path, step: int, seconds: float, rows: list[dict[str, Any]],
                      best: dict[str, Any]) -> dict[str, Any] | None:
    """Append a periodic evaluation to ``evals.jsonl``; the new best (its row against greedy, or the last
    opponent's, with the step) when it beats ``best`` and does not stall, else None."""
    with (Path(run_dir) / "evals.jsonl").open("a") as fh:
        for row in rows:
            fh.write(json.dumps({"step": step, "seconds": round(seconds, 1), **row}) + "\n")
    target = next((r for r in rows if r["opponent"] == "greedy"), rows[-1])
    if stalls(rows) or (best and target["win_rate"] <= best["win_rate"]):
        return None
    return {"step": step, **target}


def eval_scalars(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The ``eval/<key>_vs_<opponent>`` log scalars of an evaluation's rows."""
    return {f"eval/{key}_vs_{log_name(row['opponent'])}": row[key] for row in rows
            for key in ("win_rate", "ci_low", "ci_high", "points_per_hand", "cut_off")}


def results_table(rows: list[dict[str, Any]]) -> list[str]:
    """The Markdown table of an evaluation's rows."""
    lines = ["| opponent | hands | win rate | 95% CI | fair share | points/hand | cut off unfinished |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['opponent']} | {r['hands']:,} | {r['win_rate']:.1%} | [{r['ci_low']:.1%}, "
                     f"{r['ci_high']:.1%}] | {r['fair_share']:.0%} | {r['points_per_hand']:+.2f} | {r['cut_off']} |")
    return lines


def log_name(spec: str) -> str:
    """A log-key-safe name of an agent spec (``expert:simulations=20`` -> ``expert_simulations_20``)."""
    name = Path(spec).stem if spec.endswith(".npz") else spec
    return "".join(c if c.isalnum() else "_" for c in name)


__all__ = ["EVAL_SEED", "FINAL_SEED", "EvalConfig", "eval_scalars", "evaluate_policy", "log_name", "record_evaluation", "results_table",
           "stalls"]
