"""Demonstrations for the behaviour-cloning warm start: (observation, mask, action, return) of an agent's play.

Hands are dealt as in training: the demonstrator takes a random seat, its opponents
come from the configured pool (``self`` opponents are the demonstrator itself, as no
snapshot exists yet), and every decision of every seat the demonstrator plays is
recorded with the discounted reward that seat finally got. NumPy and c8env only.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from c8env.agents import load
from c8env.engine import State
from c8env.episode import hand_rewards
from c8env.observation import StateObservation
from c8env.rules import load_rules
from training.config import TrainConfig
from training.pool import OpponentPool

_CHUNK = 20_000
_MAX_STEPS = 100_000


@dataclass
class Demonstrations:
    """Arrays of equal length: float32 observations, bool masks, int64 actions, float32 returns."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def concat(cls, parts: list[Demonstrations]) -> Demonstrations:
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("obs", "masks", "actions", "returns")))


def _record(config: TrainConfig, samples: int, seed: int) -> Demonstrations:
    """Play hands until ``samples`` demonstrator decisions are recorded."""
    rules = load_rules(config.rules)
    n = config.num_players
    spec = config.pretrain_agent
    rng = np.random.default_rng(seed)
    pool = OpponentPool(config.opponent_weights, n, config.expert_spec, config.pool_per_seat, snapshots=[spec])
    obs, masks, actions, returns = [], [], [], []
    while len(actions) < samples:
        learner = int(rng.integers(n))
        specs = [spec] * n
        for k, opponent in enumerate(pool(rng), start=1):
            specs[(learner + k) % n] = opponent
        agents = [load(s, rules=rules, num_players=n, seed=int(rng.integers(2**63))) for s in specs]
        state = State.new(n, rules, seed=int(rng.integers(2**63)))
        seats: list[int] = []
        steps = 0
        while not state.hand_over and steps < _MAX_STEPS:
            seat = state.current_player
            view = StateObservation(state, seat)
            action = agents[seat].act(view)
            if specs[seat] == spec:
                obs.append(view["observation"])
                masks.append(view["action_mask"].astype(bool))
                actions.append(action)
                seats.append(seat)
            state.apply(action)
            steps += 1
        final = hand_rewards(state, config.reward) if state.hand_over else [0.0] * state.num_players
        hand_returns = [0.0] * len(seats)
        later = [0] * n  # decisions of the same seat after this one
        for i in range(len(seats) - 1, -1, -1):
            hand_returns[i] = final[seats[i]] * config.gamma ** later[seats[i]]
            later[seats[i]] += 1
        returns.extend(hand_returns)
    return Demonstrations(np.stack(obs)[:samples], np.stack(masks)[:samples],
                          np.asarray(actions[:samples], dtype=np.int64),
                          np.asarray(returns[:samples], dtype=np.float32))


def record_demonstrations(config: TrainConfig, samples: int, seed: int, workers: int = 1) -> Demonstrations:
    """``samples`` decisions of ``config.pretrain_agent``, recorded in chunks (same result for any ``workers``)."""
    if not config.pretrain_agent:
        raise ValueError("config key 'pretrain_agent' is null: no demonstrator to record")
    sizes = [min(_CHUNK, samples - start) for start in range(0, samples, _CHUNK)]
    seeds = [int(np.random.SeedSequence([seed, i]).generate_state(1, np.uint64)[0]) for i in range(len(sizes))]
    workers = max(1, min(workers or os.cpu_count() or 1, len(sizes)))
    if workers == 1:
        parts = [_record(config, size, s) for size, s in zip(sizes, seeds, strict=True)]
    else:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_record, [config] * len(sizes), sizes, seeds))
    return Demonstrations.concat(parts)


__all__ = ["Demonstrations", "record_demonstrations"]
