"""Opponents inside jit: ``random``, ``greedy`` and c8env policy files as pure JAX functions of one observation
vector and legal mask (vmap them for a batch), each the move of the NumPy agent on the same inputs
(``tests/jax/test_agents.py``).

- :func:`random_action` ``(key, mask)``: a uniformly random legal action, as :class:`c8env.agents.RandomAgent`
  picks it (``legal[integers(len(legal))]``) with the index drawn from a JAX key instead of NumPy's generator.
- :func:`greedy` ``(env)`` returns ``act(observation, mask)``: :func:`c8env.agents.greedy.greedy_action` on the
  view decoded from the observation, under the env's rules.
- :func:`policy` ``(path)`` returns ``act(observation, mask)``: the masked argmax of a policy file's logits
  (:class:`c8env.agents.policy.PolicyAgent`; an endgame network included).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp

from c8env.actions import ANNOUNCE, DECLARE_ACTIONS, DECLARE_BASE, DRAW, NUM_ACTIONS, PASS, STOP
from c8env.agents.greedy import (
    ANY_NEXT,
    ATTACK_CLOSE,
    ATTACK_FAR,
    KEEP_WILD,
    LONG_SUIT,
    NEXT_VOID,
    SUIT_HELD,
    SUIT_NEXT_VOID,
)
from c8env.agents.policy import PolicyAgent
from c8env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from c8env.jax import Env
from c8env.observation import OBS_LAYOUT
from c8env.rules import Effect

Act = Callable[[jax.Array, jax.Array], jax.Array]
_PART = {name: (s.start, s.stop) for name, s in OBS_LAYOUT.items()}
_SKIP, _DRAW_EFFECT, _ANY_NEXT_EFFECT = int(Effect.SKIP), int(Effect.DRAW), int(Effect.ANY_NEXT)
_CARDS = jnp.arange(NUM_CARDS)
_NEG = -(1 << 30)


def _part(observation: jax.Array, name: str) -> jax.Array:
    start, stop = _PART[name]
    return observation[start:stop]


def legal_at(mask: jax.Array, index: jax.Array) -> jax.Array:
    """The ``index``-th legal action of ``mask`` (``np.flatnonzero(mask)[index]``)."""
    legal = jnp.asarray(mask).astype(bool)
    return jnp.argmax(legal & (jnp.cumsum(legal) == index + 1)).astype(jnp.int32)


def random_action(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniformly random legal action: ``legal[k]`` with ``k`` uniform below the number of legal actions."""
    count = jnp.asarray(mask).astype(jnp.int32).sum()
    return legal_at(mask, jax.random.randint(key, (), 0, jnp.maximum(count, 1)))


def greedy(env: Env) -> Act:
    """Greedy's move as a pure function of ``(observation, mask)`` under ``env``'s rules."""
    points = jnp.asarray(env.rules.point_table, jnp.int32)
    effects = jnp.asarray(env.rules.effect_table, jnp.int32)

    def act(observation: jax.Array, mask: jax.Array) -> jax.Array:
        legal = jnp.asarray(mask).astype(bool)
        counts = _part(observation, "hand").astype(jnp.int32)
        n = jnp.argmax(_part(observation, "num_players")) + 2
        phase = jnp.argmax(_part(observation, "phase"))
        wild_rank = _part(observation, "wild_rank")
        wild = jnp.where(wild_rank.any(), (_CARDS % NUM_RANKS) == jnp.argmax(wild_rank), False)
        slot = jnp.where(_part(observation, "direction")[0] == 1, 0, n - 2)  # the next player in the play's direction
        sizes = _part(observation, "opponent_hand_sizes")
        voids = _part(observation, "opponent_voids").reshape(-1, NUM_SUITS)
        next_voids, next_size = voids[slot] > 0, sizes[slot]
        close = jnp.where(jnp.arange(sizes.shape[0]) < n - 1, sizes, 1 << 20).min() <= 2
        plain = jnp.where(wild, 0, counts)
        by_suit = plain.reshape(NUM_SUITS, NUM_RANKS)
        suit_scores = (by_suit * (SUIT_HELD + points.reshape(NUM_SUITS, NUM_RANKS))).sum(1)
        suit_scores = suit_scores + jnp.where(next_voids, SUIT_NEXT_VOID, 0)
        suit = _CARDS // NUM_RANKS
        card_scores = jnp.where(
            wild, points - jnp.where(close, 0, KEEP_WILD),
            points + LONG_SUIT * (by_suit.sum(1)[suit] - 1) + jnp.where(next_voids[suit], NEXT_VOID, 0)
            + jnp.where((effects == _SKIP) | (effects == _DRAW_EFFECT), jnp.where(next_size <= 2, ATTACK_CLOSE,
                                                                                   ATTACK_FAR), 0)
            + jnp.where(effects == _ANY_NEXT_EFFECT, ANY_NEXT, 0))
        playable = legal[:NUM_CARDS]
        best_card = jnp.argmax(jnp.where(playable, card_scores, _NEG))
        fallback = jnp.where(legal[DRAW], DRAW, PASS)
        return jnp.select(
            [legal.sum() == 1, phase == 1, phase == 2, legal[STOP], playable.any()],
            [jnp.argmax(legal), DECLARE_BASE + jnp.argmax(suit_scores), ANNOUNCE, STOP, best_card],
            fallback).astype(jnp.int32)

    return act


def policy(path: str | Path) -> Act:
    """A c8env policy file's move as a pure function of ``(observation, mask)`` (read and checked by
    :class:`c8env.agents.policy.PolicyAgent`)."""
    agent = PolicyAgent(path)
    activation = {"tanh": jnp.tanh, "relu": jax.nn.relu}[agent.meta["activation"]]
    layers = [(jnp.asarray(w), jnp.asarray(b)) for w, b in agent.layers]
    endgame = [(jnp.asarray(w), jnp.asarray(b)) for w, b in agent.endgame_layers]
    inputs, endgame_cards = agent.inputs, agent.endgame_cards
    declares = jnp.isin(jnp.arange(NUM_ACTIONS), jnp.asarray(DECLARE_ACTIONS))

    def forward(network: list[tuple[jax.Array, jax.Array]], x: jax.Array) -> jax.Array:
        for i, (weight, bias) in enumerate(network):
            x = x @ weight.T + bias
            if i < len(network) - 1:
                x = activation(x)
        return x

    def logits(observation: jax.Array) -> jax.Array:
        x = jnp.asarray(observation, jnp.float32)[:inputs]
        out = forward(layers, x)
        if endgame_cards is not None:
            own = _part(observation, "hand").sum()
            sizes = _part(observation, "opponent_hand_sizes")
            fewest = jnp.minimum(own, jnp.where(sizes > 0, sizes, jnp.inf).min())
            extra = jnp.where(declares, 0.0, forward(endgame, x))
            out = out + jnp.where(fewest <= endgame_cards, extra, 0.0)
        return out

    def act(observation: jax.Array, mask: jax.Array) -> jax.Array:
        legal = jnp.asarray(mask).astype(bool)
        return jnp.argmax(jnp.where(legal, logits(observation), -jnp.inf)).astype(jnp.int32)

    act.logits = logits  # type: ignore[attr-defined]
    return act


__all__ = ["Act", "greedy", "legal_at", "policy", "random_action"]
