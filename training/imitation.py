"""Imitation of an agent before PPO: its recorded demonstrations, and the behaviour-cloning step fitted to them.

:func:`record_demonstrations` plays hands as in training: the demonstrator takes a random
seat, its opponents come from the configured pool (``self`` opponents are the demonstrator
itself, as no snapshot exists yet), and every decision of every seat the demonstrator
plays is recorded with the discounted reward that seat finally got.
:func:`behaviour_clone` fits a MaskablePPO's actor to the moves and its critic to the returns.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from c8env.agents import load
from c8env.engine import State
from c8env.episode import hand_rewards, play_hand
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.seeding import derive_seed
from training.config import TrainConfig
from training.pool import OpponentPool

_CHUNK = 20_000  # demonstrations per chunk: each chunk has its own seed, so any worker count records the same


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


def _play_hand(state: State, agents: list[Any], demonstrator: list[bool]) -> list[tuple[int, np.ndarray, np.ndarray, int]]:
    """Play the hand of ``state``; the ``(seat, observation, mask, action)`` of each demonstrator decision."""
    decisions = []

    def choose(state: State) -> int:
        seat = state.current_player
        view = StateObservation(state, seat)
        action = agents[seat].act(view)
        if demonstrator[seat]:
            decisions.append((seat, view["observation"], view["action_mask"].astype(bool), action))
        return action

    play_hand(state, choose)
    return decisions


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
        decisions = _play_hand(state, agents, [s == spec for s in specs])
        final = hand_rewards(state, config.reward) if state.hand_over else [0.0] * n  # a cut-off hand: no reward
        later = [0] * n  # decisions of the same seat after this one
        hand_returns = [0.0] * len(decisions)
        for i in range(len(decisions) - 1, -1, -1):
            seat = decisions[i][0]
            hand_returns[i] = final[seat] * config.gamma ** later[seat]
            later[seat] += 1
        for (_, observation, mask, action), value in zip(decisions, hand_returns, strict=True):
            obs.append(observation)
            masks.append(mask)
            actions.append(action)
            returns.append(value)
    return Demonstrations(np.stack(obs)[:samples], np.stack(masks)[:samples],
                          np.asarray(actions[:samples], dtype=np.int64),
                          np.asarray(returns[:samples], dtype=np.float32))


def record_demonstrations(config: TrainConfig, samples: int, seed: int, workers: int = 1) -> Demonstrations:
    """``samples`` decisions of ``config.pretrain_agent``, recorded in chunks (same result for any ``workers``)."""
    if not config.pretrain_agent:
        raise ValueError("config key 'pretrain_agent' is null: no demonstrator to record")
    sizes = [min(_CHUNK, samples - start) for start in range(0, samples, _CHUNK)]
    seeds = [derive_seed(seed, i) for i in range(len(sizes))]
    workers = max(1, min(workers or os.cpu_count() or 1, len(sizes)))
    if workers == 1:
        parts = [_record(config, size, s) for size, s in zip(sizes, seeds, strict=True)]
    else:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_record, [config] * len(sizes), sizes, seeds))
    return Demonstrations.concat(parts)


# ----- behaviour cloning ------------------------------------------------------------------------------
def masked_logits(policy: Any, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """The actor's logits with illegal actions at -inf."""
    features = policy.extract_features(obs, policy.pi_features_extractor)
    logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
    return logits.masked_fill(~masks, float("-inf"))


def behaviour_clone(model: Any, demos: Demonstrations, config: TrainConfig, seed: int) -> dict[str, float]:
    """Fit the actor to the demonstrated actions and the critic to their returns, with Adam.

    The actor's loss is the cross-entropy of its masked logits against the demonstrated
    action smoothed by ``config.pretrain_smoothing`` over the legal actions (so the
    cloned policy keeps some probability on the alternatives for PPO to explore); the
    critic's is the squared error to the discounted returns. Returns the held-out
    accuracy (on decisions with a choice), the mean entropy there, and the last losses.
    """
    policy = model.policy
    rng = np.random.default_rng(seed)
    obs, masks = torch.as_tensor(demos.obs), torch.as_tensor(demos.masks)
    actions, returns = torch.as_tensor(demos.actions), torch.as_tensor(demos.returns)
    order = rng.permutation(len(demos))
    held = order[: max(1, len(order) // 20)]
    train = order[len(held):]
    smoothing = config.pretrain_smoothing
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.pretrain_lr)
    policy.set_training_mode(True)
    policy_loss = value_loss = float("nan")
    for _ in range(config.pretrain_epochs):
        perm = rng.permutation(train)
        for start in range(0, len(perm), config.pretrain_batch_size):
            batch = torch.as_tensor(perm[start:start + config.pretrain_batch_size])
            features = policy.extract_features(obs[batch], policy.pi_features_extractor)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            legal = masks[batch]
            log_p = torch.log_softmax(policy.action_net(latent_pi).masked_fill(~legal, float("-inf")), dim=1)
            log_p = log_p.masked_fill(~legal, 0.0)
            chosen = log_p.gather(1, actions[batch, None]).squeeze(1)
            spread = log_p.sum(1) / legal.sum(1)
            p_loss = -((1 - smoothing) * chosen + smoothing * spread).mean()
            v_loss = torch.nn.functional.mse_loss(policy.value_net(latent_vf).flatten(), returns[batch])
            loss = p_loss + config.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
            policy_loss, value_loss = p_loss.item(), v_loss.item()
    policy.set_training_mode(False)
    with torch.no_grad():
        held_t = torch.as_tensor(held)
        choice = masks[held_t].sum(1) > 1
        logits = masked_logits(policy, obs[held_t], masks[held_t])[choice]
        accuracy = float((logits.argmax(1) == actions[held_t][choice]).float().mean()) if choice.any() else 1.0
        probs = torch.softmax(logits, dim=1)
        entropy = float(-(probs * torch.log_softmax(logits, dim=1).nan_to_num(0.0, neginf=0.0)).sum(1).mean())
    return {"accuracy": accuracy, "entropy": entropy, "policy_loss": policy_loss, "value_loss": value_loss,
            "samples": float(len(demos))}


__all__ = ["Demonstrations", "behaviour_clone", "masked_logits", "record_demonstrations"]
