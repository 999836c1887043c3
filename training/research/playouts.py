"""Play-outs of real positions on their true cards, one seat by a network's argmax (or greedy), the others by
greedy (:func:`c8env.agents.search_compiled.playout_move`): the potentials and advantages of the training envs'
reward shaping (``shaping``, ``shaping_stocks``: :mod:`training.batched`).
"""

from __future__ import annotations

import numpy as np

from c8env.actions import NUM_ACTIONS
from c8env.agents.search_compiled import Network, playout_move
from c8env.vector import kernels
from c8env.vector.jit import jit
from c8env.vector.kernels import OVER, Games, Scratch, Table


@jit
def playout_all(g: Games, t: Table, seats: np.ndarray, net: Network, mask: np.ndarray, s: Scratch,
                out: np.ndarray) -> None:
    """Play every game of ``g`` to its hand's end (``g`` is changed: pass a copy), seat ``seats[b]`` by ``net``
    and the others by greedy (:func:`playout_move`), and write seat ``seats[b]``'s reward for the hand to
    ``out[b]``; 0 where the hand is still running when its moves reach ``t.max_steps``."""
    for b in range(g.current.shape[0]):
        steps = g.hand_steps[b]
        while g.phase[b] != OVER and steps < t.max_steps:
            kernels.apply(g, b, t, playout_move(g, b, t, seats[b], net, mask), s)
            steps += 1
        out[b] = 0.0
        if g.phase[b] == OVER:
            kernels.hand_rewards(g, b, t, s.row)
            out[b] = s.row[seats[b]]


@jit
def playout_first_moves(g: Games, t: Table, seats: np.ndarray, net: Network, mask: np.ndarray,
                        out: np.ndarray) -> None:
    """Each game's next move in :func:`playout_all` (its player to act is ``seats[b]`` or not), written to ``out``."""
    for b in range(g.current.shape[0]):
        out[b] = playout_move(g, b, t, seats[b], net, mask)


def playout_values(games: Games, table: Table, seats: np.ndarray, net: Network,
                   rows: np.ndarray | None = None) -> np.ndarray:
    """Per game (float64[B], or one per index in ``rows``), seat ``seats[b]``'s reward for the hand if it were
    played out from here on the true cards (hands and stock order), that seat by ``net`` (greedy if it has no
    layers) and the others by greedy (:func:`playout_all`); ``games`` is left as it is. Every player and every
    reshuffle is deterministic, so this is the hand's value under that play, not a sample."""
    rows = np.arange(games.current.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    work = Games(*(field[rows] for field in games))  # (a copy: fancy indexing)
    out = np.zeros(len(rows), dtype=np.float64)
    with np.errstate(over="ignore"):
        playout_all(work, table, np.asarray(seats, dtype=np.int64)[rows], net, np.zeros(NUM_ACTIONS, dtype=np.int8),
                    kernels.new_scratch(), out)
    return out


@jit
def _playout_after(g: Games, t: Table, first: np.ndarray, seats: np.ndarray, net: Network, mask: np.ndarray,
                   s: Scratch, out: np.ndarray) -> None:
    """:func:`playout_all` after the move ``first[b]`` in each game (legal: the caller's to check)."""
    for b in range(g.current.shape[0]):
        kernels.apply(g, b, t, first[b], s)
        g.hand_steps[b] += 1
    playout_all(g, t, seats, net, mask, s, out)


def stock_sampled_advantages(games: Games, table: Table, seats: np.ndarray, net: Network, rows: np.ndarray,
                             moves: np.ndarray, baseline: np.ndarray, samples: int,
                             generator: np.random.Generator) -> np.ndarray:
    """Per game of ``rows`` (float64[len(rows)]), how much better seat ``seats[b]`` does with ``moves[b]`` than with
    ``baseline[b]`` (two legal moves of that seat, to act), each followed by the play-out of :func:`playout_values`:
    the mean over ``samples`` stock orders (the stock shuffled and the reshuffles reseeded by ``generator``; the hands
    as they are), the same orders for both moves."""
    rows = np.asarray(rows, dtype=np.int64)
    picked = np.repeat(rows, samples)
    work = Games(*(field[picked] for field in games))  # (a copy: fancy indexing)
    keys = generator.random(work.stock.shape)
    keys[np.arange(work.stock.shape[1]) >= work.stock_len[:, None]] = 2.0  # the cards past the stock stay last
    work.stock[:] = np.take_along_axis(work.stock, np.argsort(keys, axis=1), axis=1)
    work.entropy[:] = generator.integers(0, 2**32, size=work.entropy.shape, dtype=np.uint64)
    work.entropy_len[:] = work.entropy.shape[1]
    twin = Games(*(np.copy(field) for field in work))
    seats = np.asarray(seats, dtype=np.int64)[picked]
    values = []
    for game, first in ((work, moves), (twin, baseline)):
        out = np.zeros(len(picked), dtype=np.float64)
        with np.errstate(over="ignore"):
            _playout_after(game, table, np.asarray(first, dtype=np.int64)[picked], seats, net,
                           np.zeros(NUM_ACTIONS, dtype=np.int8), kernels.new_scratch(), out)
        values.append(out)
    return (values[0] - values[1]).reshape(len(rows), samples).mean(axis=1)


def playout_moves(games: Games, table: Table, seats: np.ndarray, net: Network) -> np.ndarray:
    """Per game (int64[B]), the next move of :func:`playout_values`' play-out from here."""
    out = np.zeros(games.current.shape[0], dtype=np.int64)
    with np.errstate(over="ignore"):
        playout_first_moves(games, table, np.asarray(seats, dtype=np.int64), net, np.zeros(NUM_ACTIONS, dtype=np.int8),
                            out)
    return out


__all__ = ["playout_all", "playout_first_moves", "playout_moves", "playout_values", "stock_sampled_advantages"]
