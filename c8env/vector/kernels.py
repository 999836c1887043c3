"""The batched engine's kernels: the rules of :mod:`c8env.engine`, one game of a batch at a time.

Each function here is the scalar engine's method of the same name, rewritten over
struct-of-arrays state (:class:`Games`, one row per game) so that numba can compile
it (:mod:`c8env.vector.jit`). Hands are the engine's two 52-bit card sets (held at
least once, held twice); stock and discard pile are card arrays with a length (the
last card on top). Deals and reshuffles draw from :mod:`c8env.vector.rng`, which
reproduces NumPy's generator, so a game here is move for move the scalar engine's
game with the same seed (``tests/vector/test_games.py`` plays both side by side).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, NUM_ACTIONS, PASS, STOP
from c8env.cards import NUM_CARDS, NUM_RANKS, RANK_MASKS, SUIT_MASKS
from c8env.engine import ANY_SUIT
from c8env.engine import END_REASONS as _END_REASON_NAMES
from c8env.observation import DRAW_RECORD_SIZE, OBS_LAYOUT, OBS_SIZE
from c8env.rules import Effect
from c8env.vector import rng
from c8env.vector.jit import inline, jit

# Phases and end reasons as plain ints (the kernels' state); Phase and END_REASONS name them (the engine's codes:
# c8env.engine.END_REASONS, with None for 0, as State.end_reason while a hand runs).
PLAY, DECLARE, ANNOUNCE_PHASE, OVER = 0, 1, 2, 3
END_REASONS = (None, *_END_REASON_NAMES[1:])
_OUT, _BLOCKED, _STOP, _STOCK = (_END_REASON_NAMES.index(name) for name in ("out", "blocked", "stop", "stock"))
_SKIP, _REVERSE, _DRAW_EFFECT, _ANY_NEXT = int(Effect.SKIP), int(Effect.REVERSE), int(Effect.DRAW), \
    int(Effect.ANY_NEXT)
MAX_CARDS = 2 * NUM_CARDS
_ALL = (1 << NUM_CARDS) - 1
_SUIT_MASKS = np.array(SUIT_MASKS, dtype=np.int64)
_RANK_MASKS = np.array(RANK_MASKS, dtype=np.int64)
_DE_BRUIJN = 0x03F79D71B4CA8B09
_BIT_INDEX = np.array(sorted(range(64), key=lambda bit: ((1 << bit) * _DE_BRUIJN) % 2**64 >> 58), dtype=np.int64)
_HAND, _TOP, _SUIT, _RANK, _ANY, _DISCARD, _SIZES, _STOCK_SIZE, _PENDING, _DIRECTION, _PHASE, _DRAWS, \
    _PLAYERS, _SCORES, _WILD, _VOIDS, _COUNTDOWN, _LAST_DRAWS, _SUIT_DRAWS, _DECLARED = \
    (s.start for s in OBS_LAYOUT.values())


class Games(NamedTuple):
    """B games as arrays (one row per game); names as the scalar ``State``'s attributes."""

    held: np.ndarray  # int64[B, P] cards held at least once
    twice: np.ndarray  # int64[B, P] cards held twice
    sizes: np.ndarray  # int64[B, P]
    stock: np.ndarray  # int64[B, 104], stock_len[b] cards, the last on top
    stock_len: np.ndarray
    discard: np.ndarray  # int64[B, 104], discard_len[b] cards, the last on top
    discard_len: np.ndarray
    current: np.ndarray  # int64[B]
    dealer: np.ndarray
    suit: np.ndarray
    rank: np.ndarray
    follow: np.ndarray  # card set matching the top
    direction: np.ndarray
    phase: np.ndarray
    pending: np.ndarray
    draws: np.ndarray
    passes: np.ndarray
    scores: np.ndarray  # int64[B, P]
    hands_played: np.ndarray
    countdown: np.ndarray  # int64[B, P]
    wild: np.ndarray  # int64[B, P] card sets that are wild for each seat
    voids: np.ndarray  # int64[B, P] suit sets
    draw_suits: np.ndarray  # int64[B, P] State.last_draws in three arrays: the suit sets (0: no record),
    draw_ranks: np.ndarray  # int64[B, P] the rank sets
    draw_held: np.ndarray  # int64[B, P] and the fewest cards held since
    suit_draws: np.ndarray  # int64[B, P, 4] State.suit_draws
    declared: np.ndarray  # int64[B, P] State.declared: the suit declared plus 1 (0: none),
    declared_held: np.ndarray  # int64[B, P] and the fewest cards held since
    winner: np.ndarray  # -1: nobody
    end_reason: np.ndarray  # index into END_REASONS
    entropy: np.ndarray  # uint64[B, 4] the game's seed as 32-bit words
    entropy_len: np.ndarray
    reshuffles: np.ndarray
    hand_steps: np.ndarray  # moves of the hand in play (for truncation)
    episodes: np.ndarray  # episodes this slot has started (seeds its next game)


def new_games(size: int, num_players: int) -> Games:
    """Zeroed arrays for ``size`` games."""
    z = lambda *shape: np.zeros(shape, dtype=np.int64)  # noqa: E731
    return Games(z(size, num_players), z(size, num_players), z(size, num_players), z(size, MAX_CARDS), z(size),
                 z(size, MAX_CARDS), z(size), z(size), z(size), z(size), z(size), z(size), z(size), z(size), z(size),
                 z(size), z(size), z(size, num_players), z(size), z(size, num_players), z(size, num_players),
                 z(size, num_players), z(size, num_players), z(size, num_players), z(size, num_players),
                 z(size, num_players, 4), z(size, num_players), z(size, num_players), z(size),
                 z(size), np.zeros((size, 4), dtype=np.uint64), z(size), z(size), z(size), z(size))


class HandResults(NamedTuple):
    """Per game, what the last hand that ended in a call left (``hand_over`` says which games have one; the
    other fields are meaningful only there)."""

    hand_over: np.ndarray  # bool[B]
    hand_winner: np.ndarray  # int64[B], -1: nobody (a tied blocked hand)
    end_reason: np.ndarray  # int64[B], index into END_REASONS
    scores: np.ndarray  # int64[B, P] after that hand
    match_winner: np.ndarray  # int64[B], -1: none (not a finished match, or a tie)


def new_results(size: int, num_players: int) -> HandResults:
    """Cleared results for ``size`` games."""
    return HandResults(np.zeros(size, dtype=bool), np.full(size, -1, dtype=np.int64), np.zeros(size, dtype=np.int64),
                       np.zeros((size, num_players), dtype=np.int64), np.full(size, -1, dtype=np.int64))


class Scratch(NamedTuple):
    """Work space of the kernels (they allocate nothing, so they run without reference counting)."""

    gen: np.ndarray  # uint64[6] a generator
    words: np.ndarray  # uint64[16] entropy words
    order: np.ndarray  # int64[104] a permutation
    seeds: np.ndarray  # uint64[4]
    work: np.ndarray  # uint64[16]
    row: np.ndarray  # float64[7] one game's rewards


def new_scratch() -> Scratch:
    """Work space for one caller of the kernels."""
    return Scratch(np.zeros(6, dtype=np.uint64), np.zeros(16, dtype=np.uint64), np.zeros(MAX_CARDS, dtype=np.int64),
                   np.zeros(4, dtype=np.uint64), np.zeros(16, dtype=np.uint64), np.zeros(7, dtype=np.float64))


class Table(NamedTuple):
    """The rules (per-card tables and settings as ints) and the episode settings the kernels read."""

    points: np.ndarray  # int64[52]
    effects: np.ndarray  # int64[52]
    draw_amounts: np.ndarray  # int64[52]
    draw_cards: int
    wild_rank: int  # rank index wild for everybody (no countdown)
    countdown: bool
    draw_when_able: bool
    max_draws: int  # -1: no limit
    stock_exhausted: int  # 0 reshuffle, 1 pass, 2 end
    penalty_scoring: bool
    last_card_call: bool
    last_card_penalty: int
    stop_threshold: int  # -1: none
    bury_starter: bool
    decks: int
    deal_size: int
    target: int
    match_hands: int  # -1: play to the target
    num_players: int
    match: bool  # episode = match (else hand)
    points_reward: bool  # reward = points (else win)
    max_steps: int  # moves of one hand before truncation
    seed: np.uint64  # the batch's seed: game b's k-th episode is seeded derive_seed(seed, b, k)


# ----- small helpers ----------------------------------------------------------------------------------
@inline
def add_card(g: Games, b: int, p: int, card: int) -> None:
    """Seat ``p`` of game ``b`` takes ``card`` into his hand."""
    bit = np.int64(1) << card
    if g.held[b, p] & bit:
        g.twice[b, p] |= bit
    else:
        g.held[b, p] |= bit
    g.sizes[b, p] += 1


@inline
def _remove(g: Games, b: int, p: int, card: int) -> None:
    bit = np.int64(1) << card
    if g.twice[b, p] & bit:
        g.twice[b, p] ^= bit
    else:
        g.held[b, p] ^= bit
    g.sizes[b, p] -= 1


@inline
def _set_top(g: Games, b: int, suit: int, rank: int) -> None:
    g.suit[b] = suit
    g.rank[b] = rank
    if suit == ANY_SUIT:
        g.follow[b] = _ALL
    else:
        g.follow[b] = _SUIT_MASKS[suit] | (_RANK_MASKS[rank] if rank >= 0 else 0)


@jit
def lowest_card(cards: int) -> int:
    """The smallest card id in a non-empty card set: the index of its lowest set bit, by de Bruijn
    multiplication (the top 6 bits of ``bit * _DE_BRUIJN`` differ for each of the 64 bits)."""
    return _BIT_INDEX[((cards & -cards) * _DE_BRUIJN >> 58) & 63]


@jit
def _card_set_points(cards: int, t: Table) -> int:
    total = 0
    while cards:
        total += t.points[lowest_card(cards)]
        cards &= cards - 1
    return total


@jit
def hand_points(g: Games, b: int, p: int, t: Table) -> int:
    """Points of the cards in a seat's hand."""
    return _card_set_points(g.held[b, p], t) + _card_set_points(g.twice[b, p], t)


@jit
def _wild_for(t: Table, count: int) -> int:
    if t.countdown:
        return _RANK_MASKS[count - 1] if count > 0 else 0
    return _RANK_MASKS[t.wild_rank]


@jit
def _set_wild(g: Games, b: int, t: Table) -> None:
    for p in range(t.num_players):
        g.wild[b, p] = _wild_for(t, g.countdown[b, p])


@jit
def _generator(g: Games, b: int, stream: int, s: Scratch) -> None:
    """``s.gen`` = the scalar engine's ``default_rng([entropy, hands_played, stream])``."""
    words = s.words
    count = g.entropy_len[b]
    for i in range(count):
        words[i] = g.entropy[b, i]
    count += rng.entropy_words(words[count:], np.uint64(g.hands_played[b]))
    count += rng.entropy_words(words[count:], np.uint64(stream))
    rng.seed_generator(words, count, s.gen, s.work)


# ----- deals ------------------------------------------------------------------------------------------
@jit
def _deal(g: Games, b: int, t: Table, s: Scratch) -> None:
    n = t.num_players
    total = NUM_CARDS * t.decks
    order = s.order
    rng.permute(s.gen, order, total)
    for i in range(total):
        g.stock[b, i] = order[i] % NUM_CARDS  # the deck is 0..51 repeated per deck
    length = total
    for p in range(n):
        g.held[b, p] = 0
        g.twice[b, p] = 0
        g.sizes[b, p] = 0
        g.voids[b, p] = 0
        g.draw_suits[b, p] = 0
        g.draw_ranks[b, p] = 0
        g.draw_held[b, p] = 0
        for suit in range(4):
            g.suit_draws[b, p, suit] = 0
        g.declared[b, p] = 0
        g.declared_held[b, p] = 0
    _set_wild(g, b, t)
    most = 0
    for p in range(n):
        want = g.countdown[b, p] if t.countdown else t.deal_size
        most = max(most, want)
    for _ in range(most):
        for k in range(1, n + 1):
            seat = (g.dealer[b] + k) % n
            want = g.countdown[b, seat] if t.countdown else t.deal_size
            if g.sizes[b, seat] < want:
                length -= 1
                add_card(g, b, seat, g.stock[b, length])
    any_wild = 0
    for p in range(n):
        any_wild |= g.wild[b, p]
    length -= 1
    starter = g.stock[b, length]
    if t.bury_starter:
        for _ in range(length):
            if not (any_wild >> starter) & 1:
                break
            middle = length // 2  # list.insert(len // 2, starter), then pop the top
            for i in range(length, middle, -1):
                g.stock[b, i] = g.stock[b, i - 1]
            g.stock[b, middle] = starter
            starter = g.stock[b, length]
    g.stock_len[b] = length
    g.discard[b, 0] = starter
    g.discard_len[b] = 1
    g.direction[b] = 1
    g.pending[b] = 0
    g.draws[b] = 0
    g.passes[b] = 0
    g.winner[b] = -1
    g.end_reason[b] = 0
    g.reshuffles[b] = 0
    g.hand_steps[b] = 0
    if (any_wild >> starter) & 1:
        g.phase[b] = DECLARE
        g.current[b] = g.dealer[b]
        _set_top(g, b, starter // NUM_RANKS, -1)
    else:
        g.phase[b] = PLAY
        g.current[b] = (g.dealer[b] + 1) % n
        _set_top(g, b, starter // NUM_RANKS, starter % NUM_RANKS)


@jit
def new_game(g: Games, b: int, t: Table, entropy: np.uint64, s: Scratch) -> None:
    """Deal the first hand of a match seeded ``entropy`` (the scalar ``State.new(seed=entropy)``)."""
    g.entropy_len[b] = rng.entropy_words(g.entropy[b], entropy)
    g.hands_played[b] = 0
    for p in range(t.num_players):
        g.scores[b, p] = 0
        g.countdown[b, p] = 8
    _generator(g, b, 0, s)
    g.dealer[b] = rng.below(s.gen, t.num_players)
    _deal(g, b, t, s)


@jit
def next_hand(g: Games, b: int, t: Table, s: Scratch) -> None:
    """Deal the next hand of the match (the deal passes to the left)."""
    g.dealer[b] = (g.dealer[b] + 1) % t.num_players
    _generator(g, b, 0, s)
    _deal(g, b, t, s)


@jit
def episode_seed(t: Table, b: int, episode: int, s: Scratch) -> np.uint64:
    """``derive_seed(seed, b, episode)``: the seed of a slot's episode."""
    words, out = s.words, s.seeds
    count = rng.entropy_words(words, np.uint64(t.seed))
    count += rng.entropy_words(words[count:], np.uint64(b))
    count += rng.entropy_words(words[count:], np.uint64(episode))
    rng.seed_state(words, count, out, s.work)
    return out[0]


@jit
def derive_seeds(first: np.ndarray, second: np.ndarray, out: np.ndarray, s: Scratch) -> None:
    """``out[j]`` = ``derive_seed(first[j], second[j])`` (:func:`c8env.seeding.derive_seed`) for every ``j``."""
    words, state = s.words, s.seeds
    for j in range(out.shape[0]):
        count = rng.entropy_words(words, first[j])
        count += rng.entropy_words(words[count:], second[j])
        rng.seed_state(words, count, state, s.work)
        out[j] = state[0]


# ----- legal actions ----------------------------------------------------------------------------------
@inline
def _may_draw(g: Games, b: int, t: Table, playable: int) -> bool:
    if t.max_draws >= 0 and g.draws[b] >= t.max_draws:
        return False
    if playable and not t.draw_when_able:
        return False
    return g.stock_len[b] > 0 or (t.stock_exhausted == 0 and g.discard_len[b] > 1)


@inline
def legal_mask(g: Games, b: int, t: Table, mask: np.ndarray) -> None:
    """Write the 60 legal-action flags of game ``b``'s player to act into ``mask``."""
    mask[:] = 0
    phase = g.phase[b]
    if phase == PLAY:
        p = g.current[b]
        if g.pending[b]:
            defence = g.held[b, p] & g.follow[b] & t.draw_cards & ~g.wild[b, p]
            while defence:
                mask[lowest_card(defence)] = 1
                defence &= defence - 1
            mask[DRAW] = 1
            return
        playable = g.held[b, p] & (g.follow[b] | g.wild[b, p])
        cards = playable
        while cards:
            mask[lowest_card(cards)] = 1
            cards &= cards - 1
        if _may_draw(g, b, t, playable):
            mask[DRAW] = 1
        elif not playable or g.draws[b] == t.max_draws:
            mask[PASS] = 1
        if t.stop_threshold >= 0 and g.draws[b] == 0 and hand_points(g, b, p, t) <= t.stop_threshold:
            mask[STOP] = 1
    elif phase == DECLARE:
        for suit in range(4):
            mask[DECLARE_BASE + suit] = 1
    elif phase == ANNOUNCE_PHASE:
        mask[PASS] = 1
        mask[ANNOUNCE] = 1


# ----- transitions ------------------------------------------------------------------------------------
@inline
def _advance(g: Games, b: int, t: Table, step: int) -> None:
    g.current[b] = (g.current[b] + step * g.direction[b]) % t.num_players
    g.phase[b] = PLAY
    g.draws[b] = 0


@inline
def _end_turn_after_play(g: Games, b: int, t: Table) -> None:
    step = 1
    if g.rank[b] >= 0:  # a card played as a wild card (rank -1) carries no effect
        effect = t.effects[g.discard[b, g.discard_len[b] - 1]]
        if effect == _SKIP:
            step = 2
        elif effect == _REVERSE:
            g.direction[b] = -g.direction[b]
    _advance(g, b, t, step)


@inline
def _after_play(g: Games, b: int, t: Table, p: int) -> None:
    if t.last_card_call and g.sizes[b, p] == 1:
        g.phase[b] = ANNOUNCE_PHASE
    else:
        _end_turn_after_play(g, b, t)


@jit
def _end_hand(g: Games, b: int, t: Table, winner: int, reason: int) -> None:
    n = t.num_players
    lowest, count, total, best = 1 << 30, 0, 0, 0
    for p in range(n):
        points = hand_points(g, b, p, t)
        total += points
        if points < lowest:
            lowest, count, best = points, 1, p
        elif points == lowest:
            count += 1
    if winner < 0 and count == 1:
        winner = best
    if t.penalty_scoring:
        for p in range(n):
            g.scores[b, p] += hand_points(g, b, p, t)
    elif winner >= 0:
        g.scores[b, winner] += total - n * hand_points(g, b, winner, t)
    if winner >= 0 and t.countdown:
        g.countdown[b, winner] -= 1
    g.winner[b] = winner
    g.end_reason[b] = reason
    g.phase[b] = OVER
    g.pending[b] = 0
    g.hands_played[b] += 1


@jit
def _reshuffle(g: Games, b: int, s: Scratch) -> None:
    top = g.discard[b, g.discard_len[b] - 1]
    rest = g.discard_len[b] - 1
    g.reshuffles[b] += 1
    _generator(g, b, g.reshuffles[b], s)
    order = s.order
    rng.permute(s.gen, order, rest)
    for i in range(rest):
        g.stock[b, i] = g.discard[b, order[i]]
    g.stock_len[b] = rest
    g.discard[b, 0] = top
    g.discard_len[b] = 1


@inline
def _pop_stock(g: Games, b: int) -> int:
    g.stock_len[b] -= 1
    return g.stock[b, g.stock_len[b]]


@inline
def _draw(g: Games, b: int, p: int, s: Scratch) -> None:
    if g.stock_len[b] == 0:
        _reshuffle(g, b, s)
    add_card(g, b, p, _pop_stock(g, b))
    g.draws[b] += 1
    g.passes[b] = 0
    if g.suit[b] != ANY_SUIT:
        g.voids[b, p] |= 1 << g.suit[b]
    _record_draw(g, b, p)


@inline
def _record_draw(g: Games, b: int, p: int) -> None:
    """Note seat ``p``'s voluntary draw or pass (``State._record_draw``): the whole suits and ranks that fitted."""
    fitted = g.follow[b] | g.wild[b, p]
    suits = 0
    for suit in range(4):
        if _SUIT_MASKS[suit] & fitted == _SUIT_MASKS[suit]:
            suits |= 1 << suit
    ranks = 0
    for rank in range(NUM_RANKS):
        if _RANK_MASKS[rank] & fitted == _RANK_MASKS[rank]:
            ranks |= 1 << rank
    g.draw_suits[b, p] = suits
    g.draw_ranks[b, p] = ranks
    g.draw_held[b, p] = g.sizes[b, p]
    for suit in range(4):
        if (suits >> suit) & 1:
            g.suit_draws[b, p, suit] = g.sizes[b, p]


@jit
def _penalty_draw(g: Games, b: int, t: Table, p: int, count: int, s: Scratch) -> int:
    """Draw a penalty; returns the cards drawn, or -1 if the empty stock ended the hand."""
    drawn = 0
    for _ in range(count):
        if g.stock_len[b] == 0:
            if t.stock_exhausted == 2:
                _end_hand(g, b, t, -1, _STOCK)
                return -1
            if t.stock_exhausted == 1 or g.discard_len[b] < 2:
                break
            _reshuffle(g, b, s)
        add_card(g, b, p, _pop_stock(g, b))
        drawn += 1
    return drawn


@jit
def _take_penalty(g: Games, b: int, t: Table, p: int, s: Scratch) -> None:
    drawn = _penalty_draw(g, b, t, p, g.pending[b], s)
    if drawn < 0:
        return
    g.pending[b] = 0
    if drawn:
        g.passes[b] = 0
    else:
        g.passes[b] += 1
        if g.passes[b] >= t.num_players:
            _end_hand(g, b, t, -1, _BLOCKED)
            return
    _advance(g, b, t, 1)


@inline
def _pass(g: Games, b: int, t: Table, p: int) -> None:
    if g.suit[b] != ANY_SUIT:
        g.voids[b, p] |= 1 << g.suit[b]
    _record_draw(g, b, p)
    if t.stock_exhausted == 2 and g.stock_len[b] == 0 and (t.max_draws < 0 or g.draws[b] < t.max_draws):
        _end_hand(g, b, t, -1, _STOCK)
        return
    if g.draws[b] == 0:
        g.passes[b] += 1
        if g.passes[b] >= t.num_players:
            _end_hand(g, b, t, -1, _BLOCKED)
            return
    _advance(g, b, t, 1)


@inline
def _play(g: Games, b: int, t: Table, p: int, card: int) -> None:
    _remove(g, b, p, card)
    g.discard[b, g.discard_len[b]] = card
    g.discard_len[b] += 1
    g.voids[b, p] = 0
    g.passes[b] = 0
    size = g.sizes[b, p]
    if g.draw_held[b, p] > size:
        g.draw_held[b, p] = size
    for suit in range(4):
        if g.suit_draws[b, p, suit] > size:
            g.suit_draws[b, p, suit] = size
    if g.declared_held[b, p] > size:
        g.declared_held[b, p] = size
    if size == 0:
        _end_hand(g, b, t, p, _OUT)
        return
    suit, rank = card // NUM_RANKS, card % NUM_RANKS
    if (g.wild[b, p] >> card) & 1:
        g.phase[b] = DECLARE
        _set_top(g, b, suit, -1)
        return
    effect = t.effects[card]
    if effect == _ANY_NEXT:
        _set_top(g, b, ANY_SUIT, rank)
    else:
        _set_top(g, b, suit, rank)
        if effect == _DRAW_EFFECT:
            g.pending[b] += t.draw_amounts[card]
    _after_play(g, b, t, p)


@inline
def apply(g: Games, b: int, t: Table, action: int, s: Scratch) -> None:
    """Apply a legal action of game ``b``'s player to act (legality is checked by the caller)."""
    p = g.current[b]
    phase = g.phase[b]
    if phase == PLAY:
        if action < NUM_CARDS:
            _play(g, b, t, p, action)
        elif action == DRAW:
            if g.pending[b]:
                _take_penalty(g, b, t, p, s)
            else:
                _draw(g, b, p, s)
        elif action == PASS:
            _pass(g, b, t, p)
        else:
            _end_hand(g, b, t, -1, _STOP)
    elif phase == DECLARE:
        _set_top(g, b, action - DECLARE_BASE, -1)
        g.declared[b, p] = action - DECLARE_BASE + 1
        g.declared_held[b, p] = g.sizes[b, p]
        if g.discard_len[b] == 1:  # the dealer declared for a wild starter
            _advance(g, b, t, 1)
        else:
            _after_play(g, b, t, p)
    else:  # ANNOUNCE_PHASE
        if action == PASS and _penalty_draw(g, b, t, p, t.last_card_penalty, s) < 0:
            return
        _end_turn_after_play(g, b, t)


# ----- results ----------------------------------------------------------------------------------------
@jit
def match_over(g: Games, b: int, t: Table) -> bool:
    """Has game ``b``'s match ended (its hand being over)?"""
    if g.phase[b] != OVER:
        return False
    n = t.num_players
    if t.countdown:
        for p in range(n):
            if g.countdown[b, p] == 0:
                return True
        return False
    if t.match_hands >= 0:
        reached = g.hands_played[b] >= t.match_hands
    else:
        reached = False
        for p in range(n):
            if g.scores[b, p] >= t.target:
                reached = True
    return reached and match_winner(g, b, t) >= 0


@jit
def match_winner(g: Games, b: int, t: Table) -> int:
    """The seat with the single best total (countdown: the count at zero), or -1 when tied."""
    n = t.num_players
    if t.countdown:
        for p in range(n):
            if g.countdown[b, p] == 0:
                return p
        return -1
    best, seat, count = g.scores[b, 0], 0, 1
    for p in range(1, n):
        score = g.scores[b, p]
        if score == best:
            count += 1
        elif (score < best) if t.penalty_scoring else (score > best):
            best, seat, count = score, p, 1
    return seat if count == 1 else -1


@jit
def hand_rewards(g: Games, b: int, t: Table, out: np.ndarray) -> None:
    """Every seat's reward for game ``b``'s finished hand (``c8env.episode.hand_rewards``)."""
    n = t.num_players
    winner = g.winner[b]
    for p in range(n):
        out[p] = 0.0
    if winner < 0:
        return
    if not t.points_reward:
        for p in range(n):
            out[p] = -1.0 / (n - 1)
        out[winner] = 1.0
        return
    own = hand_points(g, b, winner, t)
    total = 0
    for p in range(n):
        if p != winner:
            pay = hand_points(g, b, p, t) - own
            out[p] = -pay
            total += pay
    out[winner] = total


# ----- observation ------------------------------------------------------------------------------------
@inline
def encode(g: Games, b: int, t: Table, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation vector of game ``b`` (``c8env.observation.encode_observation``)."""
    obs[:] = 0.0
    n = t.num_players
    held, twice = g.held[b, seat], g.twice[b, seat]
    while held:
        obs[_HAND + lowest_card(held)] = 1.0
        held &= held - 1
    while twice:
        obs[_HAND + lowest_card(twice)] = 2.0  # held twice: held at least once too
        twice &= twice - 1
    obs[_TOP + g.discard[b, g.discard_len[b] - 1]] = 1.0
    if g.suit[b] == ANY_SUIT:
        obs[_ANY] = 1.0
    else:
        obs[_SUIT + g.suit[b]] = 1.0
    if g.rank[b] >= 0:
        obs[_RANK + g.rank[b]] = 1.0
    for i in range(g.discard_len[b]):
        obs[_DISCARD + g.discard[b, i]] += 1.0
    for k in range(1, n):
        other = (seat + k) % n
        obs[_SIZES + k - 1] = g.sizes[b, other]
        voids = g.voids[b, other]
        for s in range(4):
            obs[_VOIDS + 4 * (k - 1) + s] = (voids >> s) & 1
        suits = g.draw_suits[b, other]
        if suits:
            at = _LAST_DRAWS + DRAW_RECORD_SIZE * (k - 1)
            ranks = g.draw_ranks[b, other]
            for s in range(4):
                obs[at + s] = (suits >> s) & 1
            for r in range(NUM_RANKS):
                obs[at + 4 + r] = (ranks >> r) & 1
            obs[at + DRAW_RECORD_SIZE - 1] = g.draw_held[b, other]
        size = g.sizes[b, other]
        if size:
            for s in range(4):
                obs[_SUIT_DRAWS + 4 * (k - 1) + s] = g.suit_draws[b, other, s] / size
            if g.declared[b, other]:
                obs[_DECLARED + 4 * (k - 1) + g.declared[b, other] - 1] = g.declared_held[b, other] / size
    obs[_STOCK_SIZE] = g.stock_len[b]
    obs[_PENDING] = g.pending[b]
    obs[_DIRECTION] = g.direction[b]
    obs[_PHASE + g.phase[b]] = 1.0
    obs[_DRAWS] = g.draws[b]
    obs[_PLAYERS + n - 2] = 1.0
    for k in range(n):
        other = (seat + k) % n
        obs[_SCORES + k] = g.scores[b, other]
        if t.countdown:
            obs[_COUNTDOWN + k] = g.countdown[b, other]
    wild = g.wild[b, seat]
    if wild:
        obs[_WILD + lowest_card(wild)] = 1.0  # the clubs card of the wild rank: its rank index


# ----- the batch step ---------------------------------------------------------------------------------
@jit
def start_episode(g: Games, b: int, t: Table, s: Scratch) -> None:
    """Slot ``b``'s next episode: a new game seeded ``derive_seed(seed, b, episodes[b])``."""
    entropy = episode_seed(t, b, g.episodes[b], s)
    g.episodes[b] += 1
    new_game(g, b, t, entropy, s)


@jit
def reset_all(g: Games, t: Table, s: Scratch) -> None:
    """Start every slot's first episode."""
    for b in range(g.current.shape[0]):
        g.episodes[b] = 0
        start_episode(g, b, t, s)


@jit
def deal_slots(g: Games, t: Table, seeds: np.ndarray, slots: np.ndarray, s: Scratch) -> None:
    """Deal ``State.new(seed=seeds[b])`` in every slot ``b`` where ``slots[b]``."""
    for b in range(g.current.shape[0]):
        if slots[b]:
            new_game(g, b, t, seeds[b], s)


@inline
def move(g: Games, b: int, t: Table, action: int, rewards: np.ndarray, terminated: np.ndarray,
         truncated: np.ndarray, final_obs: np.ndarray, autoreset: bool, s: Scratch, res: HandResults,
         viewer: int) -> bool:
    """Apply a legal action in game ``b`` and settle its episode, the one place the batched engine does so:
    ``rewards[b]`` gains the rewards of a hand that ends, whose result goes to ``res``; ``terminated[b]`` /
    ``truncated[b]`` are set when the episode ends, whose last observation goes to ``final_obs[b]`` (the view
    of seat ``viewer``, or with ``viewer < 0`` of the player to act), and with ``autoreset`` the slot is dealt
    its next game at once. Returns whether the episode ended."""
    apply(g, b, t, action, s)
    g.hand_steps[b] += 1
    if g.phase[b] == OVER:
        row = s.row
        hand_rewards(g, b, t, row)
        for p in range(t.num_players):
            rewards[b, p] += row[p]
            res.scores[b, p] = g.scores[b, p]
        res.hand_over[b] = True
        res.hand_winner[b] = g.winner[b]
        res.end_reason[b] = g.end_reason[b]
        res.match_winner[b] = -1
        if t.match and not match_over(g, b, t):
            next_hand(g, b, t, s)
        else:
            terminated[b] = True
            if t.match:
                res.match_winner[b] = match_winner(g, b, t)
    elif g.hand_steps[b] >= t.max_steps:
        truncated[b] = True
    if terminated[b] or truncated[b]:
        encode(g, b, t, g.current[b] if viewer < 0 else viewer, final_obs[b])
        if autoreset:
            start_episode(g, b, t, s)
        return True
    return False


@inline
def clear(b: int, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> None:
    """Game ``b``'s results before a call: no reward, no episode end (the caller clears ``hand_over``)."""
    rewards[b, :] = 0.0
    terminated[b] = False
    truncated[b] = False


@jit
def first_illegal(actions: np.ndarray, active: np.ndarray, masks: np.ndarray) -> int:
    """The first active game whose action is out of range or not legal in ``masks``, or -1."""
    for b in range(actions.shape[0]):
        if active[b]:
            action = actions[b]
            if action < 0 or action >= NUM_ACTIONS or masks[b, action] == 0:
                return b
    return -1


@jit
def step_range(g: Games, t: Table, actions: np.ndarray, active: np.ndarray, rewards: np.ndarray,
               terminated: np.ndarray, truncated: np.ndarray, final_obs: np.ndarray, autoreset: bool, s: Scratch,
               res: HandResults, observations: bool, obs: np.ndarray, masks: np.ndarray, lo: int, hi: int) -> None:
    """One move (:func:`move`) in every game ``b`` from ``lo`` to ``hi - 1`` where ``active[b]``, then its legal
    mask and, with ``observations``, its observation (the others: unchanged, reward 0, flags False, no hand
    over). Games are independent: a batch may be stepped in ranges on several threads, each with its own
    ``s``."""
    for b in range(lo, hi):
        clear(b, rewards, terminated, truncated)
        res.hand_over[b] = False
        if active[b]:
            move(g, b, t, actions[b], rewards, terminated, truncated, final_obs, autoreset, s, res, -1)
            if observations:
                encode(g, b, t, g.current[b], obs[b])
            legal_mask(g, b, t, masks[b])


@jit
def observe_all(g: Games, t: Table, obs: np.ndarray, masks: np.ndarray) -> None:
    """The observation and legal mask of every game's player to act."""
    for b in range(g.current.shape[0]):
        encode(g, b, t, g.current[b], obs[b])
        legal_mask(g, b, t, masks[b])


@jit
def masks_all(g: Games, t: Table, masks: np.ndarray) -> None:
    """The legal mask of every game's player to act (no observation)."""
    for b in range(g.current.shape[0]):
        legal_mask(g, b, t, masks[b])


@jit
def observe_slots(g: Games, t: Table, slots: np.ndarray, observations: bool, obs: np.ndarray,
                  masks: np.ndarray) -> None:
    """The legal mask, and with ``observations`` the observation, of the player to act in every game
    where ``slots[b]``."""
    for b in range(g.current.shape[0]):
        if slots[b]:
            if observations:
                encode(g, b, t, g.current[b], obs[b])
            legal_mask(g, b, t, masks[b])


@jit
def random_actions(masks: np.ndarray, gen: np.ndarray, out: np.ndarray) -> None:
    """A uniformly random legal action per game (``masks`` int8[B, 60]); -1 (and no draw) for a game without one."""
    for b in range(masks.shape[0]):
        count = 0
        for a in range(NUM_ACTIONS):
            count += masks[b, a]
        if count == 0:
            out[b] = -1
            continue
        pick = rng.interval(gen, count - 1)
        for a in range(NUM_ACTIONS):
            if masks[b, a]:
                if pick == 0:
                    out[b] = a
                    break
                pick -= 1


__all__ = ["END_REASONS", "MAX_CARDS", "OBS_SIZE", "Games", "HandResults", "Scratch", "Table", "add_card", "apply",
           "clear", "deal_slots", "derive_seeds", "encode", "first_illegal", "hand_rewards", "legal_mask", "match_over",
           "match_winner", "move", "new_game", "new_games", "new_results", "new_scratch", "observe_all", "observe_slots",
           "random_actions", "reset_all", "step_range"]
