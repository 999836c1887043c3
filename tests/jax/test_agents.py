"""Opponents inside jit (``c8env.jax.agents``): random, greedy and policy files as pure JAX functions, each the
NumPy agent's move on the same observation and mask."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import c8env.jax as cj  # noqa: E402
from c8env.agents import GreedyAgent  # noqa: E402
from c8env.agents.batched import greedy_actions  # noqa: E402
from c8env.agents.policy import PolicyAgent  # noqa: E402
from c8env.jax import agents  # noqa: E402
from c8env.vector import VectorGames  # noqa: E402

POLICIES = Path(__file__).resolve().parents[2] / "c8env" / "agents" / "policies"


def positions(n: int, preset: str, games: int = 16, steps: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to act over games played half greedily, half at random."""
    batch = VectorGames(games, n, preset)
    batch.reset(seed)
    pick = np.random.default_rng(seed)
    observations, masks = [], []
    for _ in range(steps):
        observations.append(batch.observation.copy())
        masks.append(batch.action_mask.copy())
        batch.step(np.where(pick.random(games) < 0.5, greedy_actions(batch), batch.random_actions()))
    return np.concatenate(observations), np.concatenate(masks)


@pytest.mark.parametrize("preset,n", [("standard", 2), ("special_cards", 3), ("uno_like", 4), ("countdown", 5),
                                      ("last_card", 7), ("stop_the_round", 2)])
def test_greedy_equals_the_numpy_agent(preset: str, n: int) -> None:
    env = cj.env(n, preset)
    observations, masks = positions(n, preset)
    ours = np.asarray(jax.jit(jax.vmap(agents.greedy(env)))(observations, masks))
    numpy_agent = GreedyAgent(env.rules)
    theirs = numpy_agent.act_batch(observations, masks)
    assert (ours == theirs).all(), np.flatnonzero(ours != theirs)[:5]
    assert len(set(theirs.tolist())) > 10  # cards, draws, passes and declarations among them


@pytest.mark.parametrize("name,n", [("ppo-standard-2p", 2), ("ensemble-standard-4p", 4)])
def test_policy_files_equal_the_numpy_agent(name: str, n: int) -> None:
    """A 245-input network and a 401-input one with an endgame network (``ensemble-standard-4p``)."""
    path = POLICIES / f"{name}.npz"
    observations, masks = positions(n, "standard", games=8, steps=50)
    ours = np.asarray(jax.jit(jax.vmap(agents.policy(path)))(observations, masks))
    theirs = PolicyAgent(path).act_batch(observations, masks)
    assert (ours == theirs).all(), np.flatnonzero(ours != theirs)[:5]


def test_random_picks_the_legal_action_numpy_would() -> None:
    """``legal_at`` is ``legal[k]``, the NumPy agent's map from its draw to a move; the draws are uniform."""
    masks = np.random.default_rng(1).random((50, 60)) < 0.2
    masks[:, 56] = True
    at = jax.jit(jax.vmap(agents.legal_at, in_axes=(None, 0)))
    for mask in masks:
        legal = np.flatnonzero(mask)
        assert (np.asarray(at(mask, np.arange(60)))[:len(legal)] == legal).all()
    mask = np.zeros(60, dtype=bool)
    mask[[3, 17, 56, 57]] = True
    keys = jax.random.split(jax.random.PRNGKey(0), 4000)
    picks = np.asarray(jax.jit(jax.vmap(agents.random_action, in_axes=(0, None)))(keys, mask))
    counts = np.bincount(picks, minlength=60)
    assert set(np.flatnonzero(counts)) == {3, 17, 56, 57}
    assert counts[[3, 17, 56, 57]].min() > 900  # 1000 expected each
