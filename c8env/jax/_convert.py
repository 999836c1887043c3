"""One game of :mod:`c8env.jax` to and from the state-dict format (``docs/state-format.md``), through the
engine's checked reader: the bridge the equality tests cross, and a way to start the JAX env from a position."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from c8env.actions import NUM_ACTIONS
from c8env.cards import NUM_CARDS, NUM_SUITS, RANKS, SUITS, card_text
from c8env.engine import ANY_SUIT, PHASE_NAMES, declaration_data, draw_record_data, suit_draws_data
from c8env.engine import State as EngineState
from c8env.jax import _game
from c8env.observation import OBS_SIZE
from c8env.rules import MAX_CARDS, RuleSet


def _cards(cards: list[int]) -> np.ndarray:
    out = np.zeros(MAX_CARDS, dtype=np.int8)
    out[:len(cards)] = cards
    return out


def position(data: Mapping[str, Any], rules: RuleSet, key: jax.Array, step_count: int = 0) -> _game.State:
    """The position of a state dict (checked by ``c8env.State.from_dict`` under ``rules``) as NumPy arrays, without
    its legal mask and observation (:func:`with_view` adds them); ``step_count``: moves of the hand made so far."""
    e = EngineState.from_dict(data, rules=rules)
    n = e.num_players
    i32 = lambda value: np.asarray(value, dtype=np.int32)  # noqa: E731
    hand = np.zeros((n, NUM_CARDS), dtype=np.int8)
    for seat in range(n):
        np.add.at(hand[seat], e.hand(seat), 1)
    records = [record or (0, 0, 0) for record in e.last_draws]
    declared = [(0, 0) if d is None else (d[0] + 1, d[1]) for d in e.declared]
    return _game.State(
        current_player=i32(e.current), observation=np.zeros(OBS_SIZE, dtype=np.float32),
        rewards=np.zeros(n, dtype=np.float32), terminated=np.asarray(e.hand_over), truncated=np.asarray(False),
        legal_action_mask=np.zeros(NUM_ACTIONS, dtype=bool), _step_count=i32(step_count), hand=hand,
        stock=_cards(e.stock), stock_len=i32(len(e.stock)), discard=_cards(e.discard),
        discard_len=i32(len(e.discard)), dealer=i32(e.dealer), suit=i32(e.suit), rank=i32(e.rank),
        direction=i32(e.direction), phase=i32(int(e.phase)), pending=i32(e.pending), draws=i32(e.draws),
        passes=i32(e.passes), scores=i32(e.scores), hands_played=i32(e.hands_played), countdown=i32(e.countdown),
        wild=i32([(e.wild_mask(p) & -e.wild_mask(p)).bit_length() - 1 for p in range(n)]),
        voids=i32(e.voids), draw_suits=i32([r[0] for r in records]), draw_ranks=i32([r[1] for r in records]),
        draw_held=i32([r[2] for r in records]), suit_draws=i32([list(r) for r in e.suit_draws]),
        declared=i32([d[0] for d in declared]), declared_held=i32([d[1] for d in declared]),
        winner=i32(-1 if e.winner is None else e.winner), end_reason=i32(0), reshuffles=i32(0),
        unshuffled=np.asarray(False), key=np.asarray(key))


@jax.jit
def with_view(table: _game.Table, s: _game.State) -> _game.State:
    """The state with its legal mask and the player to act's observation."""
    return s.replace(legal_action_mask=_game.legal_mask(table, s), observation=_game.observe(table, s,
                                                                                             s.current_player))


def to_dict(state: _game.State, rules: RuleSet) -> dict[str, Any]:
    """One game (not a batch) in the ``State.to_dict()`` format."""
    g = jax.tree_util.tree_map(np.asarray, state)
    n = g.hand.shape[0]
    ints = lambda values: [int(v) for v in values]  # noqa: E731
    winner = int(g.winner)
    return {
        "num_players": n,
        "hands": [[card_text(c) for c in range(NUM_CARDS) for _ in range(int(g.hand[p, c]))] for p in range(n)],
        "stock": [card_text(int(c)) for c in g.stock[:int(g.stock_len)]],
        "discard": [card_text(int(c)) for c in g.discard[:int(g.discard_len)]],
        "current_player": int(g.current_player),
        "dealer": int(g.dealer),
        "suit_to_follow": "*" if g.suit == ANY_SUIT else SUITS[int(g.suit)],
        "rank_to_follow": None if g.rank < 0 else RANKS[int(g.rank)],
        "direction": int(g.direction),
        "phase": PHASE_NAMES[int(g.phase)],
        "pending_draw": int(g.pending),
        "draws_this_turn": int(g.draws),
        "passes": int(g.passes),
        "scores": ints(g.scores),
        "hands_played": int(g.hands_played),
        "countdown": ints(g.countdown),
        "voids": [[SUITS[s] for s in range(NUM_SUITS) if (int(v) >> s) & 1] for v in g.voids],
        "last_draws": [draw_record_data((int(g.draw_suits[p]), int(g.draw_ranks[p]), int(g.draw_held[p]))
                                        if g.draw_suits[p] else None) for p in range(n)],
        "suit_draws": [suit_draws_data(tuple(ints(g.suit_draws[p]))) for p in range(n)],
        "declared": [declaration_data((int(g.declared[p]) - 1, int(g.declared_held[p])) if g.declared[p] else None)
                     for p in range(n)],
        "winner": None if winner < 0 else winner,
        "rules": rules.spec(),
    }
