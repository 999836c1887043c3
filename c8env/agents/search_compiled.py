"""The ``expert``'s determinized Monte Carlo search, compiled on the batched engine's kernels.

:class:`CompiledSearch` runs the sample-and-rollout loop of
:class:`c8env.agents.expert.ExpertAgent` as one kernel: it deals the hidden cards of
each sample the way the agent does (same generator, same constraints), plays every
candidate out with greedy play by everyone (:func:`c8env.agents.batched.greedy_action`)
-- or, given a :class:`Network`, with the observer's own moves played by a trained
policy network (:func:`policy_action`) -- and sums the observer's rewards. Given the
same generator state it returns the same totals as the agent's Python loop, so the
agent's decisions do not depend on which loop ran (``tests/agents/test_search_compiled.py``); only the
time does.

With a :class:`Belief` (``expert:belief=...``, compiled only, 2 players) each sample's rollouts are
weighted by how likely the opponent's last observed move was in that sample (:func:`belief_weight`).
With a :class:`History` (:meth:`CompiledSearch.observe`) each sample is instead a deal in which greedy opponents would
have made every move observed (rejection sampling, :func:`consistent_world`; ``python -m training.information
--explain-moves``).

:func:`playout_values` plays real positions out on their true cards, one seat by a network's argmax (or greedy),
the others by greedy: the potentials of the training envs' reward shaping (``training.batched``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from c8env.actions import DECLARE_BASE, NUM_ACTIONS
from c8env.agents import batched
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS, POLICY_ROLLOUT_STEPS
from c8env.observation import OBS_SIZE
from c8env.rules import RuleSet
from c8env.vector import kernels, rng, rule_table
from c8env.vector.jit import jit
from c8env.vector.kernels import MAX_CARDS, OVER, Games, Scratch, Table

_PUBLIC, _WORLD, _ROLLOUT, _BEFORE, _DRAWN, _HISTORY = 0, 1, 2, 3, 4, 5  # the rows of the search's games (see Belief)
#: Observed moves a :class:`History` since each opponent's last draw holds at most (the latest are kept).
MAX_HISTORY = 48
#: Observed moves a whole hand's :class:`History` holds at most (the latest are kept).
MAX_EVENTS = 400
_UNIT = 1 << 30  # resolution of the uniform draws that keep one of a sample's deals
_END_REASONS = {reason: index for index, reason in enumerate(kernels.END_REASONS)}
_MAX_RULES = 5  # constraints per opponent seat (ExpertAgent._requirements gives 2; a count per suit and of wild cards, 5)
_MASK64 = (1 << 64) - 1


class Hidden(NamedTuple):
    """What the search deals at each sample: the unseen cards and, per seat, how many it holds and
    which cards it cannot hold (``forbidden[seat, k]``, ``counts[seat, k]`` for ``k < num_rules[seat]``)."""

    unseen: np.ndarray  # int64[MAX_CARDS], the first num_unseen entries
    num_unseen: int
    sizes: np.ndarray  # int64[P] hand size per seat (seat 0: the observer, not dealt)
    forbidden: np.ndarray  # int64[P, 2]
    counts: np.ndarray  # int64[P, 2]
    num_rules: np.ndarray  # int64[P]


class Work(NamedTuple):
    """The search kernel's work space."""

    order: np.ndarray  # int64[MAX_CARDS] a permutation
    pool: np.ndarray  # int64[MAX_CARDS] cards not yet dealt
    rest: np.ndarray  # int64[MAX_CARDS]
    mask: np.ndarray  # int8[60] legal actions


class Network(NamedTuple):
    """A policy network (:class:`c8env.agents.PolicyAgent`'s layers) in the kernels' form: every layer
    ``(in, out)`` (transposed, so each input adds a contiguous row) except the last, ``(actions, in)``, which
    is evaluated only for legal actions; packed in one array. No layers: no network (greedy rollouts)."""

    weights: np.ndarray  # float32: layer after layer, its weights then its biases
    shapes: np.ndarray  # int64[L, 2] (out, in) of each layer
    offsets: np.ndarray  # int64[L] where each layer's weights start (its biases follow them)
    relu: bool  # the hidden activation: relu (True) or tanh
    hidden: np.ndarray  # float32[2, widest hidden layer] activations
    obs: np.ndarray  # float32[OBS_SIZE] the observation of the position


class Belief(NamedTuple):
    """The opponent (seat 1) model that weighs each sample, and the move it weighs: the card seat 1 played from
    the position in row ``_BEFORE`` (his hand there is rebuilt per sample: the sample's hand plus that card) and
    the suit he then declared. ``played < 0``: nothing to weigh, every sample weighs 1."""

    played: int  # the card he played, or -1
    declared: int  # the suit to follow after his turn (his declaration if the card asked for one), or -1
    greedy: bool  # the model: greedy (its move has probability 1, any other ``epsilon``) or ``net`` (softmax)
    epsilon: float
    net: Network
    draws: int  # deals per sample (after the first): one is kept with probability in proportion to its weight


class History(NamedTuple):
    """Greedy opponents' observed moves that each sample's deal must explain: move ``i`` was made by seat
    ``seats[i]`` (the search's own numbering; ``actors[i]`` in the position's) in the position of games row
    ``_HISTORY + i``. Since each one's last draw (``whole`` false, :func:`consistent_world`): holding that seat's
    sampled hand plus ``extras[i]`` (the cards he has played since, that move's included); up to ``tries`` deals
    per sample. Every move of the hand in order (``whole``, :func:`explained_world`): his hand then rebuilt
    backward from the sampled one through his plays and draws (``drawn[i]`` cards drawn by move ``i``); up to
    ``tries`` deals per seat. None: every deal stands."""

    count: int
    seats: np.ndarray  # int64[MAX_EVENTS]
    actors: np.ndarray  # int64[MAX_EVENTS]
    actions: np.ndarray  # int64[MAX_EVENTS]
    extras: np.ndarray  # int64[MAX_EVENTS] bit sets
    drawn: np.ndarray  # int64[MAX_EVENTS]
    tries: int
    whole: bool
    saved: np.ndarray  # int64[3 * P] work space: the seats' first constraint while explained_world pins their hands


def network(layers: Sequence[tuple[np.ndarray, np.ndarray]], activation: str) -> Network:
    """The kernels' form of ``(weight (out, in), bias)`` layers with ``activation`` ``"tanh"`` or ``"relu"``;
    no layers: the empty network of greedy rollouts."""
    parts, shapes, offsets, start = [], [], [], 0
    for i, (weight, bias) in enumerate(layers):
        packed = weight if i == len(layers) - 1 else weight.T
        parts += [np.ascontiguousarray(packed, dtype=np.float32).ravel(), np.asarray(bias, dtype=np.float32)]
        shapes.append(weight.shape)
        offsets.append(start)
        start += weight.size + bias.size
    widest = max([w.shape[0] for w, _ in layers[:-1]], default=1)
    return Network(np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32),
                   np.array(shapes, dtype=np.int64).reshape(-1, 2), np.array(offsets, dtype=np.int64),
                   activation == "relu", np.zeros((2, widest), dtype=np.float32), np.zeros(OBS_SIZE, dtype=np.float32))


@jit
def _last_hidden(g: Games, b: int, t: Table, seat: int, net: Network) -> tuple[np.ndarray, int]:
    """The network's last hidden layer (activations, width) on ``seat``'s observation of row ``b``."""
    kernels.encode(g, b, t, seat, net.obs)
    weights = net.weights
    x, width = net.obs, net.shapes[0, 1]  # a network of LEGACY_OBS_SIZE inputs reads the vector's first ones
    last = net.shapes.shape[0] - 1
    for layer in range(last):  # slices index from 0: numba then vectorises the row additions
        out = net.hidden[layer % 2]
        size, at = net.shapes[layer, 0], net.offsets[layer]
        bias = weights[at + size * width:at + size * width + size]
        for j in range(size):
            out[j] = bias[j]
        for i in range(width):
            v = x[i]
            if v != 0.0:
                row = weights[at + i * size:at + (i + 1) * size]
                for j in range(size):
                    out[j] += v * row[j]
        if net.relu:
            for j in range(size):
                out[j] = max(out[j], np.float32(0.0))
        else:
            for j in range(size):
                out[j] = np.tanh(out[j])
        x, width = out, size
    return x, width


@jit
def _logit(net: Network, x: np.ndarray, width: int, action: int) -> float:
    """The network's output for ``action`` from its last hidden layer ``x``."""
    last = net.shapes.shape[0] - 1
    at = net.offsets[last]
    logit = net.weights[at + net.shapes[last, 0] * width + action]
    row = net.weights[at + action * width:at + (action + 1) * width]
    for i in range(width):
        logit += row[i] * x[i]
    return logit


@jit
def policy_action(g: Games, b: int, t: Table, net: Network, mask: np.ndarray, seat: int = 0) -> int:
    """The network's masked argmax for ``seat`` of row ``b`` (:meth:`c8env.agents.PolicyAgent.act` on the
    seat's observation, up to float rounding; the lowest action id on ties)."""
    legal, only = 0, -1
    for a in range(mask.shape[0]):
        if mask[a]:
            legal += 1
            only = a
    if legal == 1:
        return only
    x, width = _last_hidden(g, b, t, seat, net)
    best, best_logit = -1, -np.inf
    for a in range(mask.shape[0]):
        if mask[a]:
            logit = _logit(net, x, width, a)
            if logit > best_logit:
                best, best_logit = a, logit
    return best


@jit
def policy_probability(g: Games, b: int, t: Table, seat: int, net: Network, mask: np.ndarray, action: int) -> float:
    """The network's probability of ``action`` for ``seat`` of row ``b``: its softmax over the legal actions."""
    x, width = _last_hidden(g, b, t, seat, net)
    top, total = -np.inf, 0.0
    for a in range(mask.shape[0]):
        if mask[a]:
            top = max(top, _logit(net, x, width, a))
    for a in range(mask.shape[0]):
        if mask[a]:
            total += np.exp(np.float64(_logit(net, x, width, a) - top))
    chosen = np.exp(np.float64(_logit(net, x, width, action) - top))
    return chosen / total


@jit
def copy_game(g: Games, src: int, dst: int) -> None:
    """Row ``dst`` becomes a copy of row ``src`` (the stock and discard pile up to their lengths)."""
    for p in range(g.held.shape[1]):
        g.held[dst, p] = g.held[src, p]
        g.twice[dst, p] = g.twice[src, p]
        g.sizes[dst, p] = g.sizes[src, p]
        g.scores[dst, p] = g.scores[src, p]
        g.countdown[dst, p] = g.countdown[src, p]
        g.wild[dst, p] = g.wild[src, p]
        g.voids[dst, p] = g.voids[src, p]
        g.draw_suits[dst, p] = g.draw_suits[src, p]
        g.draw_ranks[dst, p] = g.draw_ranks[src, p]
        g.draw_held[dst, p] = g.draw_held[src, p]
        for suit in range(4):
            g.suit_draws[dst, p, suit] = g.suit_draws[src, p, suit]
        g.declared[dst, p] = g.declared[src, p]
        g.declared_held[dst, p] = g.declared_held[src, p]
    for i in range(g.stock_len[src]):
        g.stock[dst, i] = g.stock[src, i]
    for i in range(g.discard_len[src]):
        g.discard[dst, i] = g.discard[src, i]
    for i in range(4):
        g.entropy[dst, i] = g.entropy[src, i]
    g.stock_len[dst] = g.stock_len[src]
    g.discard_len[dst] = g.discard_len[src]
    g.current[dst] = g.current[src]
    g.dealer[dst] = g.dealer[src]
    g.suit[dst] = g.suit[src]
    g.rank[dst] = g.rank[src]
    g.follow[dst] = g.follow[src]
    g.direction[dst] = g.direction[src]
    g.phase[dst] = g.phase[src]
    g.pending[dst] = g.pending[src]
    g.draws[dst] = g.draws[src]
    g.passes[dst] = g.passes[src]
    g.hands_played[dst] = g.hands_played[src]
    g.winner[dst] = g.winner[src]
    g.end_reason[dst] = g.end_reason[src]
    g.entropy_len[dst] = g.entropy_len[src]
    g.reshuffles[dst] = g.reshuffles[src]
    g.hand_steps[dst] = g.hand_steps[src]
    g.episodes[dst] = g.episodes[src]


@jit
def deal_hidden(g: Games, b: int, h: Hidden, gen: np.ndarray, w: Work) -> None:
    """Deal the unseen cards to seats 1..P-1 of row ``b`` and make the rest its stock, as
    ``ExpertAgent._deal_hidden``: the unseen cards in the order of ``gen.permutation``; each seat
    first takes, in that order, cards its constraints allow, then tops up from the end of the pool."""
    n = h.sizes.shape[0]
    rng.permute(gen, w.order, h.num_unseen)
    pool, rest = w.pool, w.rest
    length = h.num_unseen
    for i in range(length):
        pool[i] = h.unseen[w.order[i]]
    for seat in range(1, n):
        g.held[b, seat] = 0
        g.twice[b, seat] = 0
        g.sizes[b, seat] = 0
        for k in range(h.num_rules[seat]):
            want = min(h.counts[seat, k], h.sizes[seat])
            kept = 0
            for i in range(length):
                card = pool[i]
                if g.sizes[b, seat] < want and not (h.forbidden[seat, k] >> card) & 1:
                    kernels.add_card(g, b, seat, card)
                else:
                    rest[kept] = card
                    kept += 1
            for i in range(kept):
                pool[i] = rest[i]
            length = kept
        while g.sizes[b, seat] < h.sizes[seat] and length > 0:
            length -= 1
            kernels.add_card(g, b, seat, pool[length])
    for i in range(length):
        g.stock[b, i] = pool[i]
    g.stock_len[b] = length


@jit
def _playout_move(g: Games, b: int, t: Table, seat: int, net: Network, mask: np.ndarray) -> int:
    """The move of a play-out (:func:`playout_all`, :func:`rollout`) in row ``b``: ``seat``'s by ``net``'s argmax if
    it has layers, every other move greedy's (every move with no layers, or with ``seat`` -1)."""
    if net.shapes.shape[0] > 0 and g.current[b] == seat:
        kernels.legal_mask(g, b, t, mask)
        return policy_action(g, b, t, net, mask, seat)
    return batched.greedy_move(g, b, t, mask)


@jit
def rollout(g: Games, b: int, t: Table, action: int, net: Network, w: Work, s: Scratch) -> float:
    """Seat 0's reward after ``action`` in row ``b`` and greedy play by everyone to the hand's end, seat 0's
    first ``POLICY_ROLLOUT_STEPS`` moves played by ``net`` if it has layers (0 for a hand still running after
    ``MAX_HAND_STEPS`` moves)."""
    kernels.apply(g, b, t, action, s)
    steps = 0
    while g.phase[b] != OVER and steps < MAX_HAND_STEPS:
        seat = 0 if steps < POLICY_ROLLOUT_STEPS else -1
        kernels.apply(g, b, t, _playout_move(g, b, t, seat, net, w.mask), s)
        steps += 1
    if g.phase[b] != OVER:
        return 0.0
    kernels.hand_rewards(g, b, t, s.row)
    return s.row[0]


@jit
def playout_all(g: Games, t: Table, seats: np.ndarray, net: Network, mask: np.ndarray, s: Scratch,
                out: np.ndarray) -> None:
    """Play every game of ``g`` to its hand's end (``g`` is changed: pass a copy), seat ``seats[b]`` by ``net``
    and the others by greedy (:func:`_playout_move`), and write seat ``seats[b]``'s reward for the hand to
    ``out[b]``; 0 where the hand is still running when its moves reach ``t.max_steps``."""
    for b in range(g.current.shape[0]):
        steps = g.hand_steps[b]
        while g.phase[b] != OVER and steps < t.max_steps:
            kernels.apply(g, b, t, _playout_move(g, b, t, seats[b], net, mask), s)
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
        out[b] = _playout_move(g, b, t, seats[b], net, mask)


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


@jit
def _model_probability(g: Games, b: int, t: Table, belief: Belief, w: Work, action: int) -> float:
    """The belief model's probability that seat 1, to act in row ``b``, plays ``action``."""
    kernels.legal_mask(g, b, t, w.mask)
    if belief.greedy:
        return 1.0 if batched.greedy_action(g, b, t, w.mask) == action else belief.epsilon
    return policy_probability(g, b, t, 1, belief.net, w.mask, action)


@jit
def belief_weight(g: Games, world: int, t: Table, belief: Belief, w: Work, s: Scratch) -> float:
    """How likely seat 1's observed move (``belief``) was had he held row ``world``'s seat-1 hand plus the card
    he played: the model's probability of the play, times that of his declaration if the card asked for one.
    Uses row ``_ROLLOUT`` as scratch."""
    if belief.played < 0:
        return 1.0
    copy_game(g, _BEFORE, _ROLLOUT)
    g.held[_ROLLOUT, 1], g.twice[_ROLLOUT, 1], g.sizes[_ROLLOUT, 1] = g.held[world, 1], g.twice[world, 1], g.sizes[world, 1]
    kernels.add_card(g, _ROLLOUT, 1, belief.played)
    weight = _model_probability(g, _ROLLOUT, t, belief, w, belief.played)
    kernels.apply(g, _ROLLOUT, t, belief.played, s)
    if g.phase[_ROLLOUT] == kernels.DECLARE and g.current[_ROLLOUT] == 1 and belief.declared >= 0:
        weight *= _model_probability(g, _ROLLOUT, t, belief, w, DECLARE_BASE + belief.declared)
    return weight


@jit
def drawn_world(g: Games, t: Table, h: Hidden, belief: Belief, gen: np.ndarray, w: Work, s: Scratch) -> float:
    """Deal ``belief.draws`` hidden hands and keep one in row ``_WORLD``, each with probability in proportion to
    its weight (sampling-importance-resampling); the mean weight of the deals (the kept one's weight)."""
    total = 0.0
    for _ in range(belief.draws):
        copy_game(g, _PUBLIC, _DRAWN)
        deal_hidden(g, _DRAWN, h, gen, w)
        weight = belief_weight(g, _DRAWN, t, belief, w, s)
        total += weight
        if rng.below(gen, _UNIT) * total < weight * _UNIT:
            copy_game(g, _DRAWN, _WORLD)
    return total / belief.draws


@jit
def unexplained(g: Games, world: int, t: Table, history: History, w: Work) -> int:
    """How many of ``history``'s moves greedy would not have made with row ``world``'s hands (each seat's hand then:
    the sampled one plus the cards he has played since)."""
    misses = 0
    for i in range(history.count):
        row, seat, actor = _HISTORY + i, history.seats[i], history.actors[i]
        g.held[row, actor], g.twice[row, actor], g.sizes[row, actor] = g.held[world, seat], g.twice[world, seat], g.sizes[world, seat]
        extra = history.extras[i]
        while extra:
            card = kernels.lowest_card(extra)
            kernels.add_card(g, row, actor, card)
            extra &= extra - 1
        kernels.legal_mask(g, row, t, w.mask)
        if batched.greedy_action(g, row, t, w.mask) != history.actions[i]:
            misses += 1
    return misses


@jit
def consistent_world(g: Games, t: Table, h: Hidden, history: History, gen: np.ndarray, w: Work) -> None:
    """Deal the hidden cards into row ``_WORLD`` until greedy would have made every move of ``history`` with them
    (rejection sampling), at most ``history.tries`` deals; failing that, the deal that explains the most moves."""
    fewest = history.count + 1
    for _ in range(history.tries):
        copy_game(g, _PUBLIC, _DRAWN)
        deal_hidden(g, _DRAWN, h, gen, w)
        misses = unexplained(g, _DRAWN, t, history, w)
        if misses < fewest:
            fewest = misses
            copy_game(g, _DRAWN, _WORLD)
        if misses == 0:
            return


@jit
def _set_hand(g: Games, b: int, seat: int, cards: int) -> None:
    g.held[b, seat], g.twice[b, seat], g.sizes[b, seat] = cards, 0, batched.popcount(cards)


@jit
def _random_card(cards: int, gen: np.ndarray) -> int:
    """One of ``cards`` (a non-empty set) drawn uniformly."""
    for _ in range(rng.below(gen, batched.popcount(cards))):
        cards &= cards - 1
    return kernels.lowest_card(cards)


@jit
def explained_moves(g: Games, world: int, seat: int, t: Table, history: History, gen: np.ndarray, w: Work) -> int:
    """Walk ``seat``'s moves of a whole-hand ``history`` backward from his hand in row ``world``: before a card he
    played he also held it; before a draw of k cards he held his hand less k of them, every card that then fitted
    among them (else greedy would not have drawn), the others drawn uniformly. How many of his moves, latest first,
    greedy makes with the hands so rebuilt before the first he does not (all of them: the deal explains his play)."""
    hand = g.held[world, seat]
    explained = 0
    for i in range(history.count - 1, -1, -1):
        if history.seats[i] != seat:
            continue
        action, row, actor, k = history.actions[i], _HISTORY + i, history.actors[i], history.drawn[i]
        if action < DECLARE_BASE:
            hand |= np.int64(1) << action
        if k > 0:
            _set_hand(g, row, actor, hand)
            kernels.legal_mask(g, row, t, w.mask)
            fitting, rest = 0, hand
            while rest:
                card = kernels.lowest_card(rest)
                rest &= rest - 1
                if w.mask[card]:
                    fitting |= np.int64(1) << card
            must = batched.popcount(fitting)
            if must > k or batched.popcount(hand) < k:
                return explained
            hand &= ~fitting
            for _ in range(k - must):
                hand &= ~(np.int64(1) << _random_card(hand, gen))
        _set_hand(g, row, actor, hand)
        kernels.legal_mask(g, row, t, w.mask)
        if batched.greedy_action(g, row, t, w.mask) != action:
            return explained
        explained += 1
    return explained


@jit
def explained_world(g: Games, t: Table, h: Hidden, history: History, gen: np.ndarray, w: Work) -> None:
    """Deal the hidden cards into row ``_WORLD`` seat by seat so that greedy would have made every move of each
    seat in a whole-hand ``history`` (:func:`explained_moves`), each seat's hand given those before: the first of up
    to ``history.tries`` deals that explains all his moves; failing that, from the deal that explains the most of
    his latest, up to ``history.tries`` swaps of one of his cards for another he may hold (kept when they explain
    no fewer of his moves) until his hand explains them all."""
    n = h.sizes.shape[0]
    saved = history.saved
    unseen = 0
    for i in range(h.num_unseen):
        unseen |= np.int64(1) << h.unseen[i]
    for seat in range(n):
        saved[3 * seat], saved[3 * seat + 1], saved[3 * seat + 2] = h.forbidden[seat, 0], h.counts[seat, 0], h.num_rules[seat]
    for seat in range(1, n):
        moves = 0
        for i in range(history.count):
            moves += history.seats[i] == seat
        if moves == 0:
            continue
        always = 0  # cards he cannot hold: those of a constraint on his whole hand
        for k in range(h.num_rules[seat]):
            if h.counts[seat, k] >= h.sizes[seat]:
                always |= h.forbidden[seat, k]
        best, hand = -1, 0
        for _ in range(history.tries):
            copy_game(g, _PUBLIC, _DRAWN)
            deal_hidden(g, _DRAWN, h, gen, w)
            explained = explained_moves(g, _DRAWN, seat, t, history, gen, w)
            if explained > best:
                best, hand = explained, g.held[_DRAWN, seat]
            if best == moves:
                break
        if best < moves:
            free = unseen & ~always
            for other in range(1, seat):
                free &= ~g.held[_DRAWN, other]  # the hands pinned before his
            for _ in range(history.tries):
                if hand == 0 or (free & ~hand) == 0:
                    break
                swapped = hand & ~(np.int64(1) << _random_card(hand, gen)) | np.int64(1) << _random_card(free & ~hand, gen)
                _set_hand(g, _DRAWN, seat, swapped)
                explained = explained_moves(g, _DRAWN, seat, t, history, gen, w)
                if explained >= best:
                    best, hand = explained, swapped
                    if best == moves:
                        break
        h.num_rules[seat], h.forbidden[seat, 0], h.counts[seat, 0] = 1, ~hand, h.sizes[seat]
    copy_game(g, _PUBLIC, _WORLD)
    deal_hidden(g, _WORLD, h, gen, w)
    for seat in range(n):
        h.forbidden[seat, 0], h.counts[seat, 0], h.num_rules[seat] = saved[3 * seat], saved[3 * seat + 1], saved[3 * seat + 2]


@jit
def search(g: Games, t: Table, h: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
           totals: np.ndarray, mass: np.ndarray, net: Network, belief: Belief, history: History, w: Work,
           s: Scratch) -> None:
    """Samples ``first`` to ``last - 1`` of the search: sample 0 plays the public row as dealt, every
    other sample deals the hidden cards anew; ``totals[i]`` sums candidate ``i``'s rollouts, each times its
    sample's :func:`belief_weight` (1 without an observed move; with ``belief.draws > 1`` the sample is the one
    kept of that many deals, :func:`drawn_world`), and ``mass[0]`` sums the weights."""
    for sample in range(first, last):
        if sample == 0:
            world = _PUBLIC
            weight = belief_weight(g, world, t, belief, w, s)
        elif belief.played >= 0 and belief.draws > 1:
            world = _WORLD
            weight = drawn_world(g, t, h, belief, gen, w, s)
        elif history.count > 0 and history.whole:
            world = _WORLD
            explained_world(g, t, h, history, gen, w)
            weight = 1.0
        elif history.count > 0:
            world = _WORLD
            consistent_world(g, t, h, history, gen, w)
            weight = belief_weight(g, world, t, belief, w, s)
        else:
            world = _WORLD
            copy_game(g, _PUBLIC, _WORLD)
            deal_hidden(g, _WORLD, h, gen, w)
            weight = belief_weight(g, world, t, belief, w, s)
        mass[0] += weight
        for i in range(candidates.shape[0]):
            copy_game(g, world, _ROLLOUT)
            totals[i] += weight * rollout(g, _ROLLOUT, t, candidates[i], net, w, s)


# ----- from Python --------------------------------------------------------------------------------
def load_state(g: Games, b: int, state: State) -> None:
    """Row ``b`` of ``g`` becomes ``state`` (its reshuffles continue as the state's would)."""
    n = state.num_players
    for p in range(n):
        g.held[b, p], g.twice[b, p] = state.held_cards(p)
        g.sizes[b, p] = state.sizes[p]
        g.scores[b, p] = state.scores[p]
        g.countdown[b, p] = state.countdown[p]
        g.wild[b, p] = state.wild_mask(p)
        g.voids[b, p] = state.voids[p]
        draw, suit_draws, declared = state.records_of(p)
        g.draw_suits[b, p], g.draw_ranks[b, p], g.draw_held[b, p] = draw or (0, 0, 0)
        g.suit_draws[b, p] = suit_draws
        g.declared[b, p], g.declared_held[b, p] = (0, 0) if declared is None else (declared[0] + 1, declared[1])
    g.stock[b, :len(state.stock)] = state.stock
    g.stock_len[b] = len(state.stock)
    g.discard[b, :len(state.discard)] = state.discard
    g.discard_len[b] = len(state.discard)
    g.current[b] = state.current_player
    g.dealer[b] = state.dealer
    g.suit[b] = state.suit
    g.rank[b] = state.rank
    g.follow[b] = state.follow_mask()
    g.direction[b] = state.direction
    g.phase[b] = int(state.phase)
    g.pending[b] = state.pending
    g.draws[b] = state.draws
    g.passes[b] = state.passes
    g.hands_played[b] = state.hands_played
    g.winner[b] = -1 if state.winner is None else state.winner
    g.end_reason[b] = _END_REASONS[state.end_reason]
    entropy, reshuffles = state.generator_key
    g.entropy[b, :] = 0
    g.entropy_len[b] = rng.entropy_words(g.entropy[b], np.uint64(entropy))
    g.reshuffles[b] = reshuffles
    g.hand_steps[b] = 0


def generator_words(generator: np.random.Generator) -> np.ndarray:
    """A NumPy PCG64 generator's state as the kernels' six words (:mod:`c8env.vector.rng`)."""
    state = generator.bit_generator.state
    if state["bit_generator"] != "PCG64":
        raise ValueError(f"the search needs a PCG64 generator, got {state['bit_generator']}")
    words = state["state"]
    return np.array([words["state"] >> 64, words["state"] & _MASK64, words["inc"] >> 64, words["inc"] & _MASK64,
                     state["has_uint32"], state["uinteger"]], dtype=np.uint64)


def set_generator_words(generator: np.random.Generator, words: np.ndarray) -> None:
    """Put the kernels' six words back into a NumPy PCG64 generator."""
    w = [int(x) for x in words]
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
        "has_uint32": w[4], "uinteger": w[5],
    }


class CompiledSearch:
    """The search of one agent (its rules, player count and reward), reusable across decisions; with
    ``rollout_policy`` (:meth:`c8env.agents.PolicyAgent`'s ``layers`` and ``activation`` name) the observer's
    moves in the rollouts are the network's; with ``belief_model`` (``"greedy"`` or a network's layers and
    activation) the samples are weighted by the opponent's observed move (:meth:`run`'s ``observed``), each the one
    kept of ``draws`` deals (:class:`Belief`)."""

    def __init__(self, rules: RuleSet, num_players: int, reward: str,
                 rollout_policy: tuple[Sequence[tuple[np.ndarray, np.ndarray]], str] | None = None,
                 belief_model: str | tuple[Sequence[tuple[np.ndarray, np.ndarray]], str] | None = None,
                 epsilon: float = 0.0, draws: int = 1) -> None:
        self.num_players = num_players
        self.network = network(*(rollout_policy or ((), "tanh")))
        greedy = not isinstance(belief_model, tuple)
        self.belief = Belief(-1, -1, greedy, float(epsilon), network(*(((), "tanh") if greedy else belief_model)), draws)
        self.belief_model = belief_model
        self.table = rule_table(rules, num_players, "hand", reward, MAX_HAND_STEPS)
        self.games = kernels.new_games(_HISTORY + MAX_EVENTS, num_players)
        self.history = History(0, *(np.zeros(MAX_EVENTS, dtype=np.int64) for _ in range(5)), 0, False,
                               np.zeros(3 * num_players, dtype=np.int64))
        self.work = Work(np.zeros(MAX_CARDS, dtype=np.int64), np.zeros(MAX_CARDS, dtype=np.int64),
                         np.zeros(MAX_CARDS, dtype=np.int64), np.zeros(NUM_ACTIONS, dtype=np.int8))
        self.scratch = kernels.new_scratch()

    def hidden(self, unseen: Sequence[int], sizes: Sequence[int],
               requirements: Mapping[int, Sequence[tuple[int, int]]]) -> Hidden:
        """The kernel's form of the unseen cards, the opponents' sizes (seats 1..P-1) and their
        ``(forbidden cards, count)`` constraints."""
        n = self.num_players
        cards = np.zeros(MAX_CARDS, dtype=np.int64)
        cards[:len(unseen)] = unseen
        forbidden = np.zeros((n, _MAX_RULES), dtype=np.int64)
        counts = np.zeros((n, _MAX_RULES), dtype=np.int64)
        num_rules = np.zeros(n, dtype=np.int64)
        for seat, rules in requirements.items():
            if len(rules) > _MAX_RULES:
                raise ValueError(f"seat {seat} has {len(rules)} constraints; the search takes at most {_MAX_RULES}")
            num_rules[seat] = len(rules)
            for k, (cards_out, count) in enumerate(rules):
                forbidden[seat, k], counts[seat, k] = cards_out, count
        return Hidden(cards, len(unseen), np.array([0, *sizes], dtype=np.int64), forbidden, counts, num_rules)

    def observe(self, moves: Sequence[tuple[State, int, int, int]], tries: int) -> None:
        """Make the next runs' samples explain ``moves`` (:class:`History`; the latest :data:`MAX_HISTORY` of them):
        each the position a greedy opponent moved in, his seat in the search's numbering, his move and the cards he
        has played since (that move's included); each sample the first of up to ``tries`` deals that does."""
        self._load_history(list(moves)[-MAX_HISTORY:], tries, whole=False)

    def observe_hand(self, moves: Sequence[tuple[State, int, int, int]], tries: int) -> None:
        """Make the next runs' samples explain every move of ``moves`` (:func:`explained_world`; the latest
        :data:`MAX_EVENTS` of them): the greedy opponents' moves of the hand in order, each the position he moved in,
        his seat in the search's numbering, his move and the cards it drew; each seat's hand the first of up to
        ``tries`` deals that does, else a local search from the best."""
        if tries < 1:
            raise ValueError(f"CompiledSearch.observe_hand: tries must be at least 1, got {tries}")
        self._load_history(list(moves)[-MAX_EVENTS:], tries, whole=True)

    def _load_history(self, moves: list[tuple[State, int, int, int]], tries: int, whole: bool) -> None:
        """:attr:`history` of ``moves``, their last entry the cards drawn (``whole``) or played since."""
        seats, actors, actions, extras, drawn = (np.zeros(MAX_EVENTS, dtype=np.int64) for _ in range(5))
        for i, (position, seat, action, cards) in enumerate(moves):
            load_state(self.games, _HISTORY + i, position)
            seats[i], actors[i], actions[i] = seat, position.current_player, action
            (drawn if whole else extras)[i] = cards
        self.history = History(len(moves), seats, actors, actions, extras, drawn, tries, whole, self.history.saved)

    def explained(self, world: State, seat: int, generator: np.random.Generator) -> int:
        """How many of ``seat``'s moves (:meth:`observe_hand`; the search's numbering), latest first, greedy makes with
        his hand in ``world`` (the observer at seat 0) rebuilt backward through his plays and draws, before the
        first he does not (:func:`explained_moves`; which cards he drew is drawn from ``generator``)."""
        load_state(self.games, _WORLD, world)
        gen = generator_words(generator)
        with np.errstate(over="ignore"):
            count = explained_moves(self.games, _WORLD, seat, self.table, self.history, gen, self.work)
        set_generator_words(generator, gen)
        return int(count)

    def unexplained(self, world: State) -> int:
        """How many of the observed moves (:meth:`observe`) greedy would not have made with ``world``'s hands (the
        observer at seat 0)."""
        load_state(self.games, _WORLD, world)
        return unexplained(self.games, _WORLD, self.table, self.history, self.work)

    def run(self, public: State, hidden: Hidden, candidates: Sequence[int], first: int, last: int,
            generator: np.random.Generator, totals: np.ndarray, mass: np.ndarray | None = None,
            observed: tuple[State, int, int] | None = None) -> None:
        """Add samples ``first`` to ``last - 1`` to ``totals`` (float64, one per candidate) and their weights to
        ``mass[0]``, drawing the hidden cards from ``generator`` (advanced as the Python loop would advance it).
        ``observed``: seat 1's last move to weigh the samples by (needs ``belief_model``): the position he played
        from, the card he played and the suit to follow after his turn (-1: none)."""
        load_state(self.games, _PUBLIC, public)
        belief = self.belief
        if observed is not None:
            if self.belief_model is None:
                raise ValueError("CompiledSearch.run: observed is given but the search has no belief_model")
            before, played, declared = observed
            load_state(self.games, _BEFORE, before)
            belief = belief._replace(played=played, declared=declared)
        gen = generator_words(generator)
        with np.errstate(over="ignore"):
            search(self.games, self.table, hidden, np.asarray(candidates, dtype=np.int64), first, last, gen,
                   totals, np.zeros(1) if mass is None else mass, self.network, belief, self.history, self.work,
                   self.scratch)
        set_generator_words(generator, gen)


__all__ = ["MAX_EVENTS", "MAX_HISTORY", "Belief", "CompiledSearch", "Hidden", "History", "Network", "Work", "belief_weight", "consistent_world", "copy_game", "deal_hidden",
           "drawn_world", "explained_moves", "explained_world", "generator_words", "load_state", "network", "playout_all", "playout_first_moves",
           "playout_moves", "playout_values", "policy_action", "policy_probability", "rollout", "search",
           "set_generator_words", "stock_sampled_advantages", "unexplained"]
