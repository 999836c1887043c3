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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from c8env.actions import NUM_ACTIONS
from c8env.agents import batched
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS, POLICY_ROLLOUT_STEPS
from c8env.observation import OBS_SIZE
from c8env.rules import RuleSet
from c8env.vector import kernels, rng, rule_table
from c8env.vector.jit import jit
from c8env.vector.kernels import MAX_CARDS, OVER, Games, Scratch, Table

#: The rows of the search's games: the public position as first dealt, each later sample's deal, a rollout.
PUBLIC, WORLD, ROLLOUT = 0, 1, 2
#: Rows of the search's games (a subclass that needs more allocates its own).
ROWS = 3
_END_REASONS = {reason: index for index, reason in enumerate(kernels.END_REASONS)}
_MASK64 = (1 << 64) - 1


class Hidden(NamedTuple):
    """What the search deals at each sample: the unseen cards and, per seat, how many it holds and
    which cards it cannot hold (``forbidden[seat, k]``, ``counts[seat, k]`` for ``k < num_rules[seat]``)."""

    unseen: np.ndarray  # int64[MAX_CARDS], the first num_unseen entries
    num_unseen: int
    sizes: np.ndarray  # int64[P] hand size per seat (seat 0: the observer, not dealt)
    forbidden: np.ndarray  # int64[P, K] (K: the most constraints of a seat)
    counts: np.ndarray  # int64[P, K]
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
def last_hidden(g: Games, b: int, t: Table, seat: int, net: Network) -> tuple[np.ndarray, int]:
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
def network_logit(net: Network, x: np.ndarray, width: int, action: int) -> float:
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
    x, width = last_hidden(g, b, t, seat, net)
    best, best_logit = -1, -np.inf
    for a in range(mask.shape[0]):
        if mask[a]:
            logit = network_logit(net, x, width, a)
            if logit > best_logit:
                best, best_logit = a, logit
    return best


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
def playout_move(g: Games, b: int, t: Table, seat: int, net: Network, mask: np.ndarray) -> int:
    """The move of a play-out (:func:`rollout`) in row ``b``: ``seat``'s by ``net``'s argmax if it has layers,
    every other move greedy's (every move with no layers, or with ``seat`` -1)."""
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
        kernels.apply(g, b, t, playout_move(g, b, t, seat, net, w.mask), s)
        steps += 1
    if g.phase[b] != OVER:
        return 0.0
    kernels.hand_rewards(g, b, t, s.row)
    return s.row[0]


@jit
def sample_rollouts(g: Games, world: int, t: Table, candidates: np.ndarray, weight: float, totals: np.ndarray,
                    net: Network, w: Work, s: Scratch) -> None:
    """Add each candidate's rollout from row ``world`` (played in row ``ROLLOUT``), times ``weight``, to ``totals``."""
    for i in range(candidates.shape[0]):
        copy_game(g, world, ROLLOUT)
        totals[i] += weight * rollout(g, ROLLOUT, t, candidates[i], net, w, s)


@jit
def search(g: Games, t: Table, h: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
           totals: np.ndarray, mass: np.ndarray, net: Network, w: Work, s: Scratch) -> None:
    """Samples ``first`` to ``last - 1`` of the search: sample 0 plays the public row as dealt, every
    other sample deals the hidden cards anew (row ``WORLD``); ``totals[i]`` sums candidate ``i``'s rollouts and
    ``mass[0]`` counts the samples."""
    for sample in range(first, last):
        world = PUBLIC
        if sample > 0:
            world = WORLD
            copy_game(g, PUBLIC, WORLD)
            deal_hidden(g, WORLD, h, gen, w)
        mass[0] += 1.0
        sample_rollouts(g, world, t, candidates, 1.0, totals, net, w, s)


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
    moves in the rollouts are the network's."""

    def __init__(self, rules: RuleSet, num_players: int, reward: str,
                 rollout_policy: tuple[Sequence[tuple[np.ndarray, np.ndarray]], str] | None = None) -> None:
        self.num_players = num_players
        self.network = network(*(rollout_policy or ((), "tanh")))
        self.table = rule_table(rules, num_players, "hand", reward, MAX_HAND_STEPS)
        self.games = kernels.new_games(ROWS, num_players)
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
        width = max([1, *(len(rules) for rules in requirements.values())])  # constraints of the most constrained seat
        forbidden = np.zeros((n, width), dtype=np.int64)
        counts = np.zeros((n, width), dtype=np.int64)
        num_rules = np.zeros(n, dtype=np.int64)
        for seat, rules in requirements.items():
            num_rules[seat] = len(rules)
            for k, (cards_out, count) in enumerate(rules):
                forbidden[seat, k], counts[seat, k] = cards_out, count
        return Hidden(cards, len(unseen), np.array([0, *sizes], dtype=np.int64), forbidden, counts, num_rules)

    def run(self, public: State, hidden: Hidden, candidates: Sequence[int], first: int, last: int,
            generator: np.random.Generator, totals: np.ndarray, mass: np.ndarray | None = None) -> None:
        """Add samples ``first`` to ``last - 1`` to ``totals`` (float64, one per candidate) and their weights to
        ``mass[0]`` (1 each), drawing the hidden cards from ``generator`` (advanced as the Python loop would
        advance it)."""
        load_state(self.games, PUBLIC, public)
        gen = generator_words(generator)
        with np.errstate(over="ignore"):
            self._samples(hidden, np.asarray(candidates, dtype=np.int64), first, last, gen, totals,
                          np.zeros(1) if mass is None else mass)
        set_generator_words(generator, gen)

    def _samples(self, hidden: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
                 totals: np.ndarray, mass: np.ndarray) -> None:
        """Run the kernel of :meth:`run` on the loaded public row and the generator's words."""
        search(self.games, self.table, hidden, candidates, first, last, gen, totals, mass, self.network, self.work,
               self.scratch)


__all__ = ["PUBLIC", "ROLLOUT", "ROWS", "WORLD", "CompiledSearch", "Hidden", "Network", "Work", "copy_game",
           "deal_hidden", "generator_words", "last_hidden", "load_state", "network", "network_logit", "playout_move",
           "policy_action", "rollout", "sample_rollouts", "search", "set_generator_words"]
