"""The results files the commands write and read one another's: the benchmark's (``c8env eval --bench``, ranked
by ``c8env leaderboard``), exploit's (``c8env exploit``, the leaderboard's *exploited* column) and the summaries
``c8env eval --out`` writes beside its CSV (which both readers pass over in a folder).

Both readers import the formats from here, and neither imports the other's command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: A benchmark results file: ``{"format": RESULTS_FORMAT, "format_version": RESULTS_VERSION, "protocol": {name,
#: version, sha256}, "c8env_version", "env_id", "obs_size", "max_hand_steps", "seed", "agent", "cells": [{rules,
#: players, opponent, deals, hands, wins, win_rate, ci_low, ci_high, points, points_per_hand, truncated, illegal,
#: fair_share}]}`` (:func:`c8env.tools.evaluation.bench.bench_results`).
RESULTS_FORMAT = "c8env-bench-results"
RESULTS_VERSION = 1
#: An exploit results file: ``{"format": EXPLOIT_FORMAT, "format_version": EXPLOIT_VERSION, "agent", "players",
#: "rules", "ruleset", "c8env_version", "env_id", "obs_size", "max_hand_steps", "seed", "seeds": {model, training,
#: curve, final}, "budget": {steps, evaluations, curve_deals, final_deals}, "hyperparameters", "steps",
#: "exploiter_step", "seconds":
#: {training, curve, final, total}, "start": {policy, why, deals, hands, wins, win_rate, ci_low, ci_high, fair_share,
#: points_per_hand, truncated, seed}, "final": {deals, hands, wins, win_rate, ci_low, ci_high, fair_share,
#: points_per_hand, truncated, seed}, "gain", "curve": [{step, seconds, hands, wins, win_rate, ci_low, ci_high}]}``
#: (:func:`c8env.tools.exploit.exploit`). ``start`` is the exploiter before training (the network ``policy``, a
#: policy name or file; ``why`` that choice in a phrase) and ``final`` the exploiter kept, both on the same fresh
#: deals; ``gain`` is final.win_rate - start.win_rate. Version 1 had no ``start`` and no ``gain``: its figure was a
#: fresh learner's final win rate.
EXPLOIT_FORMAT = "c8env-exploit-results"
EXPLOIT_VERSION = 2


def is_summary(data: Any) -> bool:
    """Whether ``data``, read from a JSON file, is a summary :func:`c8env.tools.evaluation.reports.write_rows` wrote
    (``c8env eval --out``'s ``eval.json`` or ``league.json``; ``bench.json``, which ``--bench --out`` wrote up to
    c8env 0.2.0): a table, not a results file."""
    return isinstance(data, dict) and set(data) == {"meta", "rows"}


def check_exploit_results(data: Any, path: Path | str) -> dict[str, Any]:
    """``data`` (read from ``path``) as an exploit results file of version :data:`EXPLOIT_VERSION`, with its
    ``path``; a one-line ``ValueError`` otherwise (one of version 1 says to rerun the exploiter)."""
    if not isinstance(data, dict) or data.get("format") != EXPLOIT_FORMAT:
        raise ValueError(f"{path}: not a c8env exploit results file (no \"format\": {EXPLOIT_FORMAT!r}); write one "
                         "with `c8env exploit AGENT --out DIR`")
    if data.get("format_version") == 1:
        raise ValueError(f"{path}: exploit results format version 1 (a fresh learner's win rate, not a gain); this "
                         f"c8env reads version {EXPLOIT_VERSION}: rerun `c8env exploit AGENT --out DIR`")
    if data.get("format_version") != EXPLOIT_VERSION:
        raise ValueError(f"{path}: exploit results format version {data.get('format_version')!r}; this c8env reads "
                         f"version {EXPLOIT_VERSION}")
    return {**data, "path": str(path)}


def best_exploiter(results: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The exploiter of an exploit run that won the most of the fresh hands: ``("learner", its figures)``, or
    ``("search response", its figures)`` where the run has a search response (``search_response``) that won more."""
    search = results.get("search_response")
    if search is not None and search["win_rate"] > results["final"]["win_rate"]:
        return "search response", search
    return "learner", results["final"]


def gain_over_start(results: dict[str, Any], figures: dict[str, Any]) -> float:
    """An exploiter's gain over the run's start on the same fresh hands (``figures``: its ``final`` or its
    ``search_response``), in win rate."""
    return round(figures["win_rate"] - results["start"]["win_rate"], 4)


def setting(results: dict[str, Any]) -> dict[str, Any]:
    """What makes exploit figures comparable: players, rules, budget, seed, learner and format."""
    return {key: results[key] for key in ("players", "ruleset", "budget", "seed", "hyperparameters", "max_hand_steps")}


def describe_setting(results: dict[str, Any]) -> str:
    """An exploit run's setting in words: players, rules, budget and seed."""
    budget = results["budget"]
    return (f"{results['players']} players, rules {results['rules']}, {budget['steps']:,} steps, seed "
            f"{results['seed']}")


def check_exploit_set(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Exploit results (with their ``path``) that can be compared: one setting (:func:`setting`), one file per
    agent; a one-line ``ValueError`` naming the files otherwise."""
    first = results[0]
    for data in results[1:]:
        if setting(data) != setting(first):
            raise ValueError(f"{data['path']} ({describe_setting(data)}) and {first['path']} "
                             f"({describe_setting(first)}) were run in different settings; compare exploit "
                             "results of one setting (players, rules, budget, seed, learner)")
    check_one_file_per_agent(results, "exploit results")
    return results


def check_one_file_per_agent(results: list[dict[str, Any]], kind: str) -> None:
    """A one-line ``ValueError`` naming the agents that appear in more than one of the ``kind`` files ``results``."""
    agents = [data["agent"] for data in results]
    twice = sorted({a for a in agents if agents.count(a) > 1})
    if twice:
        raise ValueError(f"agent(s) {twice} appear in more than one {kind} file; keep one file per agent")


__all__ = ["EXPLOIT_FORMAT", "EXPLOIT_VERSION", "RESULTS_FORMAT", "RESULTS_VERSION", "best_exploiter", "check_exploit_results",
           "check_exploit_set", "gain_over_start", "check_one_file_per_agent", "describe_setting", "is_summary", "setting"]
