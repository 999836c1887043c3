"""The rules over JAX arrays: one game as a pytree of arrays, stepped by pure functions that jit and vmap.

A twin of :mod:`c8env.vector.kernels` (which is itself the twin of :mod:`c8env.engine`): the same state, the
same transitions, checked move by move against the batched engine (``tests/jax/test_rules.py``). Differences
of representation only: a hand is a count per card (``hand[p, c]``: 0, 1 or 2 copies) instead of two bit sets,
the wild cards and the cards to follow are derived from the ranks and suits, and deals and reshuffles draw from
JAX keys (so they are not NumPy's deals). Card sets that the kernels hold as bits are ``bool[52]`` here.

Every function takes one game; the env (:mod:`c8env.jax`) vmaps them. The rules themselves are a
:class:`Table` of arrays (an argument, not a constant), so one compiled step serves every rule set with the
same number of players.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, NUM_ACTIONS, PASS
from c8env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from c8env.engine import ANY_SUIT, COUNTDOWN_START, END_REASONS
from c8env.observation import DRAW_RECORD_SIZE, OBS_LAYOUT, OBS_SIZE
from c8env.rules import MAX_CARDS, Effect, RuleSet
from c8env.vector.games import rule_table

PLAY, DECLARE, ANNOUNCE_PHASE, OVER = 0, 1, 2, 3
_OUT, _BLOCKED, _STOP, _STOCK = (END_REASONS.index(name) for name in ("out", "blocked", "stop", "stock"))
_SKIP, _REVERSE, _DRAW_EFFECT, _ANY_NEXT = int(Effect.SKIP), int(Effect.REVERSE), int(Effect.DRAW), \
    int(Effect.ANY_NEXT)
_RESHUFFLE, _STOCK_END = 0, 2  # stock_exhausted: reshuffle, (1: pass), end
_CARDS = np.arange(NUM_CARDS)
_CARD_SUIT = _CARDS // NUM_RANKS
_CARD_RANK = _CARDS % NUM_RANKS
_POSITIONS = np.arange(MAX_CARDS)
_I32 = jnp.int32
_HAND, _TOP, _SUIT, _RANK, _ANY, _DISCARD, _SIZES, _STOCK_SIZE, _PENDING, _DIRECTION, _PHASE, _DRAWS, \
    _PLAYERS, _SCORES, _WILD, _VOIDS, _COUNTDOWN, _LAST_DRAWS, _SUIT_DRAWS, _DECLARED = \
    (s.start for s in OBS_LAYOUT.values())
#: ``_SHARES[held, size]`` = ``held / size`` as the NumPy codec rounds it (float64, then float32): XLA's float32
#: division may differ in the last bit.
_SHARES = (np.arange(MAX_CARDS + 1)[:, None] / np.maximum(np.arange(MAX_CARDS + 1), 1)[None, :]).astype(np.float32)


class Table(NamedTuple):
    """A rule set and the episode settings as arrays (:func:`make_table`); the kernels' ``Table`` field for field,
    less what hand episodes do not read (match settings, the batch seed)."""

    points: jax.Array  # int32[52]
    effects: jax.Array  # int32[52]
    draw_amounts: jax.Array  # int32[52]
    draw_cards: jax.Array  # bool[52] the cards that make the next player draw
    wild_rank: jax.Array  # rank index wild for everybody (without countdown)
    countdown: jax.Array  # bool
    draw_when_able: jax.Array  # bool
    max_draws: jax.Array  # -1: no limit
    stock_exhausted: jax.Array  # 0 reshuffle, 1 pass, 2 end
    penalty_scoring: jax.Array  # bool
    last_card_call: jax.Array  # bool
    last_card_penalty: jax.Array
    stop_threshold: jax.Array  # -1: none
    bury_starter: jax.Array  # bool
    decks: jax.Array
    deal_size: jax.Array
    points_reward: jax.Array  # bool: reward = points (else win)
    max_steps: jax.Array  # moves of a hand before truncation


def make_table(rules: RuleSet, num_players: int, reward: str, max_steps: int) -> Table:
    """The rules' table, built from the batched engine's (:func:`c8env.vector.rule_table`, one home for it)."""
    t = rule_table(rules, num_players, "hand", reward, max_steps)
    i32 = lambda value: jnp.asarray(value, dtype=_I32)  # noqa: E731
    return Table(
        points=i32(t.points), effects=i32(t.effects), draw_amounts=i32(t.draw_amounts),
        draw_cards=jnp.asarray([(t.draw_cards >> c) & 1 == 1 for c in range(NUM_CARDS)]),
        wild_rank=i32(t.wild_rank), countdown=jnp.asarray(t.countdown), draw_when_able=jnp.asarray(t.draw_when_able),
        max_draws=i32(t.max_draws), stock_exhausted=i32(t.stock_exhausted),
        penalty_scoring=jnp.asarray(t.penalty_scoring), last_card_call=jnp.asarray(t.last_card_call),
        last_card_penalty=i32(t.last_card_penalty), stop_threshold=i32(t.stop_threshold),
        bury_starter=jnp.asarray(t.bury_starter), decks=i32(t.decks), deal_size=i32(t.deal_size),
        points_reward=jnp.asarray(t.points_reward), max_steps=i32(t.max_steps))


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class State:
    """One game (a batch of them under vmap): Pgx's ``State`` fields, then the position.

    Pgx's fields: ``current_player``, ``observation`` (float32[401], the player to act's view),
    ``rewards`` (float32[P]), ``terminated``, ``truncated``, ``legal_action_mask`` (bool[60]; all True once
    terminated, as Pgx has it), ``_step_count`` (moves of the hand). The position mirrors the batched engine's
    ``Games`` row: ``hand`` (int8[P, 52] copies of each card), ``stock`` / ``discard`` (int8[104], the first
    ``stock_len`` / ``discard_len`` cards, the last on top; a reshuffled stock keeps the pile's order and is
    drawn from at random, ``unshuffled``) and the rest as :class:`c8env.vector.kernels.Games` names them;
    ``key`` is the JAX key that reshuffles draw from when ``step`` is given none.
    """

    current_player: jax.Array
    observation: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    legal_action_mask: jax.Array
    _step_count: jax.Array
    hand: jax.Array
    stock: jax.Array
    stock_len: jax.Array
    discard: jax.Array
    discard_len: jax.Array
    dealer: jax.Array
    suit: jax.Array
    rank: jax.Array
    direction: jax.Array
    phase: jax.Array
    pending: jax.Array
    draws: jax.Array
    passes: jax.Array
    scores: jax.Array
    hands_played: jax.Array
    countdown: jax.Array
    wild: jax.Array  # int32[P] the rank wild for each seat, as dealt (-1: none; the kernels' wild card sets)
    voids: jax.Array  # int32[P] suit sets
    draw_suits: jax.Array  # int32[P] last voluntary draw or pass: the suit sets (0: no record),
    draw_ranks: jax.Array  # the rank sets
    draw_held: jax.Array  # and the fewest cards held since
    suit_draws: jax.Array  # int32[P, 4]
    declared: jax.Array  # int32[P] the suit declared plus 1 (0: none),
    declared_held: jax.Array  # and the fewest cards held since
    winner: jax.Array  # -1: nobody
    end_reason: jax.Array  # index into c8env.engine.END_REASONS (0 while the hand runs)
    reshuffles: jax.Array
    unshuffled: jax.Array  # bool: the stock is a reshuffled pile in its old order, drawn from at random
    key: jax.Array

    def replace(self, **changes: Any) -> State:
        """A copy with some fields changed (Pgx's ``State.replace``)."""
        return dataclasses.replace(self, **changes)

    @property
    def env_id(self) -> str:
        """The env's id (Pgx's ``State.env_id``)."""
        return ENV_ID

    @property
    def num_players(self) -> int:
        """Seats of the game (static: the shape of ``rewards``)."""
        return self.rewards.shape[-1]


ENV_ID = "c8env/crazy_eights"


def step_count(state: State) -> jax.Array:
    """Moves made in the hand (Pgx's ``_step_count``: the one read of that field outside its class)."""
    return state._step_count


def blank_state(num_players: int, key: jax.Array) -> State:
    """An empty position of ``num_players`` seats (every field zero; the caller deals or fills it)."""
    n = num_players
    z = lambda *shape: jnp.zeros(shape, dtype=_I32)  # noqa: E731
    return State(
        current_player=z(), observation=jnp.zeros(OBS_SIZE, dtype=jnp.float32),
        rewards=jnp.zeros(n, dtype=jnp.float32), terminated=jnp.asarray(False), truncated=jnp.asarray(False),
        legal_action_mask=jnp.zeros(NUM_ACTIONS, dtype=bool), _step_count=z(),
        hand=jnp.zeros((n, NUM_CARDS), dtype=jnp.int8), stock=jnp.zeros(MAX_CARDS, dtype=jnp.int8), stock_len=z(),
        discard=jnp.zeros(MAX_CARDS, dtype=jnp.int8), discard_len=z(), dealer=z(), suit=z(), rank=z() - 1,
        direction=z() + 1, phase=z(), pending=z(), draws=z(), passes=z(), scores=z(n), hands_played=z(),
        countdown=z(n) + COUNTDOWN_START, wild=z(n) - 1, voids=z(n), draw_suits=z(n), draw_ranks=z(n), draw_held=z(n),
        suit_draws=z(n, NUM_SUITS), declared=z(n), declared_held=z(n), winner=z() - 1, end_reason=z(),
        reshuffles=z(), unshuffled=jnp.asarray(False), key=key)


# ----- derived card sets ------------------------------------------------------------------------------
def wild_ranks(t: Table, countdown: jax.Array) -> jax.Array:
    """The rank wild for each seat given its count (-1: none)."""
    return jnp.where(t.countdown, jnp.where(countdown > 0, countdown - 1, -1), t.wild_rank)


def wild_cards(s: State, seat: jax.Array) -> jax.Array:
    """bool[52]: the cards wild for ``seat``."""
    return _CARD_RANK == s.wild[seat]


def follow_cards(s: State) -> jax.Array:
    """bool[52]: the cards that match the top (every card after an ``any_next`` card)."""
    return (s.suit == ANY_SUIT) | (_CARD_SUIT == s.suit) | ((s.rank >= 0) & (_CARD_RANK == s.rank))


def hand_points(t: Table, s: State) -> jax.Array:
    """int32[P]: the points of each seat's hand."""
    return (s.hand.astype(_I32) * t.points).sum(-1)


def sizes(s: State) -> jax.Array:
    """int32[P]: cards held by each seat."""
    return s.hand.astype(_I32).sum(-1)


def select(condition: jax.Array, a: State, b: State) -> State:
    """``a`` where ``condition``, else ``b``, field by field."""
    return jax.tree_util.tree_map(lambda x, y: jnp.where(condition, x, y), a, b)


def _set_top(s: State, suit: jax.Array, rank: jax.Array) -> State:
    return s.replace(suit=jnp.asarray(suit, _I32), rank=jnp.asarray(rank, _I32))


# ----- deals ------------------------------------------------------------------------------------------
def deal(t: Table, num_players: int, key: jax.Array) -> State:
    """The first hand of a match, dealt from ``key`` (the dealer drawn too), as ``State.new`` deals it: each seat
    its cards, the next card turned up (buried while it is wild under ``starter_wild: bury``), the rest the
    stock."""
    n = num_players
    dealer_key, deck_key, state_key = jax.random.split(key, 3)
    s = blank_state(n, state_key)
    s = s.replace(wild=wild_ranks(t, s.countdown).astype(_I32))
    dealer = jax.random.randint(dealer_key, (), 0, n, dtype=_I32)
    total = NUM_CARDS * t.decks
    order = jnp.argsort(jnp.where(_POSITIONS < total, jax.random.uniform(deck_key, (MAX_CARDS,)), 2.0))
    stock = (order % NUM_CARDS).astype(jnp.int8)
    want = jnp.where(t.countdown, s.countdown, t.deal_size)
    # seats from the dealer's left take the top cards: the j-th card from the top goes to the seat whose share
    # holds j (a uniformly shuffled deck makes any such order the same deal)
    seats = (dealer + 1 + jnp.arange(n)) % n
    ends = jnp.cumsum(want[seats])
    dealt = ends[-1]
    j = _POSITIONS
    taker = seats[jnp.clip(jnp.searchsorted(ends, j, side="right"), 0, n - 1)]
    card = stock[jnp.clip(total - 1 - j, 0, MAX_CARDS - 1)].astype(_I32)
    hand = jnp.zeros((n, NUM_CARDS), _I32).at[taker, card].add((j < dealt).astype(_I32)).astype(jnp.int8)
    length = total - dealt - 1
    starter = stock[length].astype(_I32)
    wild_any = (_CARD_RANK[:, None] == s.wild[None, :]).any(1)  # wild for somebody

    def buried(carry: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        stock, starter, tries = carry  # list.insert(len // 2, starter), then pop the top
        middle = length // 2
        shifted = jnp.where((_POSITIONS > middle) & (_POSITIONS <= length), jnp.roll(stock, 1), stock)
        shifted = shifted.at[middle].set(starter.astype(jnp.int8))
        return shifted, shifted[length].astype(_I32), tries + 1

    def burying(carry: tuple[jax.Array, jax.Array, jax.Array]) -> jax.Array:
        _, starter, tries = carry
        return t.bury_starter & wild_any[starter] & (tries < length)

    stock, starter, _ = jax.lax.while_loop(burying, buried, (stock, starter, jnp.zeros((), _I32)))
    stock = jnp.where(_POSITIONS < length, stock, 0).astype(jnp.int8)
    wild_start = wild_any[starter]
    s = s.replace(hand=hand, stock=stock, stock_len=length, discard=jnp.zeros(MAX_CARDS, jnp.int8).at[0].set(
        starter.astype(jnp.int8)), discard_len=jnp.ones((), _I32), dealer=dealer,
        phase=jnp.where(wild_start, DECLARE, PLAY).astype(_I32),
        current_player=jnp.where(wild_start, dealer, (dealer + 1) % n).astype(_I32))
    return _set_top(s, starter // NUM_RANKS, jnp.where(wild_start, -1, starter % NUM_RANKS))


# ----- legal actions ----------------------------------------------------------------------------------
def legal_mask(t: Table, s: State) -> jax.Array:
    """bool[60]: the legal actions of the player to act (none once the hand is over)."""
    p = s.current_player
    held = s.hand[p] > 0
    wild = wild_cards(s, p)
    follow = follow_cards(s)
    pending = s.pending > 0
    playable = held & (follow | wild)
    any_play = playable.any()
    may_draw = (~((t.max_draws >= 0) & (s.draws >= t.max_draws)) & ~(any_play & ~t.draw_when_able)
                & ((s.stock_len > 0) | ((t.stock_exhausted == _RESHUFFLE) & (s.discard_len > 1))))
    may_pass = ~may_draw & (~any_play | (s.draws == t.max_draws))
    may_stop = (t.stop_threshold >= 0) & (s.draws == 0) & (hand_points(t, s)[p] <= t.stop_threshold)
    cards = jnp.where(pending, held & follow & t.draw_cards & ~wild, playable)
    play = jnp.concatenate([cards, jnp.zeros(NUM_SUITS, bool),
                            jnp.stack([pending | may_draw, ~pending & may_pass, jnp.asarray(False),
                                       ~pending & may_stop])])
    actions = jnp.arange(NUM_ACTIONS)
    declare = (actions >= DECLARE_BASE) & (actions < DECLARE_BASE + NUM_SUITS)
    announce = (actions == PASS) | (actions == ANNOUNCE)
    return jnp.select([s.phase == PLAY, s.phase == DECLARE, s.phase == ANNOUNCE_PHASE], [play, declare, announce],
                      jnp.zeros(NUM_ACTIONS, bool))


# ----- transitions ------------------------------------------------------------------------------------
def _advance(t: Table, s: State, step: jax.Array | int) -> State:
    n = s.num_players
    return s.replace(current_player=((s.current_player + step * s.direction) % n).astype(_I32),
                     phase=jnp.asarray(PLAY, _I32), draws=jnp.zeros((), _I32))


def _end_turn_after_play(t: Table, s: State) -> State:
    effect = jnp.where(s.rank >= 0, t.effects[s.discard[s.discard_len - 1].astype(_I32)], 0)  # a wild card carries no effect
    s = s.replace(direction=jnp.where(effect == _REVERSE, -s.direction, s.direction))
    return _advance(t, s, jnp.where(effect == _SKIP, 2, 1))


def _after_play(t: Table, s: State, p: jax.Array) -> State:
    announce = t.last_card_call & (sizes(s)[p] == 1)
    ended = _end_turn_after_play(t, s)
    return select(announce, s.replace(phase=jnp.asarray(ANNOUNCE_PHASE, _I32)), ended)


def end_hand(t: Table, s: State, winner: jax.Array, reason: jax.Array) -> State:
    """Score the hand and end it (``winner`` -1: the single lowest hand wins, if there is one)."""
    n = s.num_players
    points = hand_points(t, s)
    lowest = points.min()
    single = (points == lowest).sum() == 1
    winner = jnp.where((winner < 0) & single, jnp.argmin(points), winner).astype(_I32)
    won = jnp.arange(n) == winner
    collect = won * (points.sum() - n * points[jnp.maximum(winner, 0)])
    scores = s.scores + jnp.where(t.penalty_scoring, points, collect)
    return s.replace(scores=scores.astype(_I32), countdown=(s.countdown - (won & t.countdown)).astype(_I32),
                     winner=winner, end_reason=jnp.asarray(reason, _I32), phase=jnp.asarray(OVER, _I32),
                     pending=jnp.zeros((), _I32), hands_played=s.hands_played + 1)


def _reshuffle(s: State) -> State:
    """The discard pile but its top becomes the stock, shuffled lazily: it keeps the pile's order, marked
    ``unshuffled``, and each card drawn from it is a uniformly random one of those left (:func:`_take_top`), which
    deals the cards a shuffle would, without sorting the pile at every step of every game."""
    rest = s.discard_len - 1
    stock = jnp.where(_POSITIONS < rest, s.discard, 0).astype(jnp.int8)
    top = s.discard[rest]
    return s.replace(stock=stock, stock_len=rest, discard=jnp.zeros(MAX_CARDS, jnp.int8).at[0].set(top),
                     discard_len=jnp.ones((), _I32), reshuffles=s.reshuffles + 1, unshuffled=jnp.asarray(True))


def _take_top(s: State, p: jax.Array, count: jax.Array, key: jax.Array) -> State:
    """Seat ``p`` takes the stock's top ``count`` cards; from an ``unshuffled`` stock, each of them is first
    swapped with a uniformly random card at or below it (the top ``count`` steps of a Fisher-Yates shuffle)."""

    def swap(carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        stock, i = carry
        at = s.stock_len - 1 - i
        other = jax.random.randint(jax.random.fold_in(key, i), (), 0, at + 1)
        return stock.at[at].set(stock[other]).at[other].set(stock[at]), i + 1

    steps = jnp.where(s.unshuffled, count, 0)
    stock, _ = jax.lax.while_loop(lambda carry: carry[1] < steps, swap, (s.stock, jnp.zeros((), _I32)))
    s = s.replace(stock=stock)
    taken = (_POSITIONS >= s.stock_len - count) & (_POSITIONS < s.stock_len)
    cards = jnp.zeros(NUM_CARDS, _I32).at[s.stock.astype(_I32)].add(taken.astype(_I32))
    return s.replace(hand=s.hand.at[p].add(cards.astype(jnp.int8)), stock_len=s.stock_len - count)


def _draw_cards(t: Table, s: State, p: jax.Array, count: jax.Array, key: jax.Array
                ) -> tuple[State, jax.Array, jax.Array]:
    """Seat ``p`` draws ``count`` cards as the engine's ``_penalty_draw`` does (a voluntary draw is one such
    card): the stock, then under ``reshuffle`` the discard pile reshuffled (at most once: it leaves one card);
    returns the state, the cards drawn and whether an empty stock ended the hand (``stock_exhausted: end``)."""
    first_key, second_key = jax.random.split(key)
    first = jnp.minimum(count, s.stock_len)
    s = _take_top(s, p, first, first_key)
    left = count - first
    reshuffle = (left > 0) & (t.stock_exhausted == _RESHUFFLE) & (s.discard_len >= 2)
    s = select(reshuffle, _reshuffle(s), s)
    second = jnp.where(reshuffle, jnp.minimum(left, s.stock_len), 0)
    s = _take_top(s, p, second, second_key)
    return s, first + second, (left > 0) & (t.stock_exhausted == _STOCK_END)


def _record_draw(t: Table, s: State, p: jax.Array) -> State:
    """Seat ``p``'s voluntary draw or pass: the whole suits and ranks that fitted, and his suit records."""
    fitted = follow_cards(s) | wild_cards(s, p)
    whole_suits = fitted.reshape(NUM_SUITS, NUM_RANKS).all(1)
    whole_ranks = fitted.reshape(NUM_SUITS, NUM_RANKS).all(0)
    suits = (whole_suits * (1 << jnp.arange(NUM_SUITS))).sum().astype(_I32)
    ranks = (whole_ranks * (1 << jnp.arange(NUM_RANKS))).sum().astype(_I32)
    size = sizes(s)[p]
    voids = s.voids.at[p].set(jnp.where(s.suit != ANY_SUIT, s.voids[p] | (1 << jnp.minimum(s.suit, 3)), s.voids[p]))
    return s.replace(voids=voids, draw_suits=s.draw_suits.at[p].set(suits), draw_ranks=s.draw_ranks.at[p].set(ranks),
                     draw_held=s.draw_held.at[p].set(size),
                     suit_draws=s.suit_draws.at[p].set(jnp.where(whole_suits, size, s.suit_draws[p])))


Outcome = tuple[State, jax.Array, jax.Array, jax.Array]  # the state, whether the hand ends, its winner, the reason


def _no_end(s: State) -> Outcome:
    return s, jnp.asarray(False), jnp.asarray(-1, _I32), jnp.asarray(0, _I32)


def _play(t: Table, s: State, action: jax.Array, drawn: jax.Array, stock_end: jax.Array) -> Outcome:
    p, card = s.current_player, jnp.minimum(action, NUM_CARDS - 1)  # computed for every action under vmap
    hand = s.hand.at[p, card].add(jnp.int8(-1))
    size = hand[p].astype(_I32).sum()
    s = s.replace(hand=hand, discard=s.discard.at[s.discard_len].set(card.astype(jnp.int8)),
                  discard_len=s.discard_len + 1, voids=s.voids.at[p].set(0), passes=jnp.zeros((), _I32),
                  draw_held=s.draw_held.at[p].min(size), suit_draws=s.suit_draws.at[p].min(size),
                  declared_held=s.declared_held.at[p].min(size))
    suit, rank = card // NUM_RANKS, card % NUM_RANKS
    wild = wild_cards(s, p)[card]
    effect = t.effects[card]
    declare = _set_top(s.replace(phase=jnp.asarray(DECLARE, _I32)), suit, -1)
    played = _set_top(s, jnp.where(effect == _ANY_NEXT, ANY_SUIT, suit), rank)
    played = _after_play(t, played.replace(pending=played.pending + jnp.where(effect == _DRAW_EFFECT,
                                                                             t.draw_amounts[card], 0)), p)
    out = size == 0  # the hand ends with the top as it was
    s = select(out, s, select(wild, declare, played))
    return s, out, p, jnp.asarray(_OUT, _I32)


def _draw(t: Table, s: State, action: jax.Array, drawn: jax.Array, stock_end: jax.Array) -> Outcome:
    s = s.replace(draws=s.draws + 1, passes=jnp.zeros((), _I32))
    return _no_end(_record_draw(t, s, s.current_player))


def _take_penalty(t: Table, s: State, action: jax.Array, drawn: jax.Array, stock_end: jax.Array) -> Outcome:
    passes = jnp.where(drawn > 0, 0, s.passes + 1).astype(_I32)
    blocked = ~stock_end & (passes >= s.num_players)
    s = s.replace(pending=jnp.where(stock_end, s.pending, 0), passes=jnp.where(stock_end, s.passes, passes))
    s = select(stock_end | blocked, s, _advance(t, s, 1))
    return s, stock_end | blocked, jnp.asarray(-1, _I32), jnp.where(stock_end, _STOCK, _BLOCKED).astype(_I32)


def _pass(t: Table, s: State, action: jax.Array, drawn: jax.Array, stock_end: jax.Array) -> Outcome:
    s = _record_draw(t, s, s.current_player)
    out = ((t.stock_exhausted == _STOCK_END) & (s.stock_len == 0)
           & ((t.max_draws < 0) | (s.draws < t.max_draws)))
    passes = jnp.where(s.draws == 0, s.passes + 1, s.passes).astype(_I32)
    blocked = ~out & (passes >= s.num_players)
    s = s.replace(passes=jnp.where(out, s.passes, passes))
    s = select(out | blocked, s, _advance(t, s, 1))
    return s, out | blocked, jnp.asarray(-1, _I32), jnp.where(out, _STOCK, _BLOCKED).astype(_I32)


def _stop(t: Table, s: State, action: jax.Array, drawn: jax.Array, stock_end: jax.Array) -> Outcome:
    return s, jnp.asarray(True), jnp.asarray(-1, _I32), jnp.asarray(_STOP, _I32)


def _declare(t: Table, s: State, action: jax.Array, drawn: jax.Array, stock_end: jax.Array) -> Outcome:
    p, suit = s.current_player, action - DECLARE_BASE
    s = _set_top(s, suit, -1).replace(declared=s.declared.at[p].set(suit + 1),
                                      declared_held=s.declared_held.at[p].set(sizes(s)[p]))
    starter = s.discard_len == 1  # the dealer declared for a wild starter
    s = select(starter, _advance(t, s, 1), _after_play(t, s, p))
    return _no_end(s)


def _announce(t: Table, s: State, action: jax.Array, drawn: jax.Array, stock_end: jax.Array) -> Outcome:
    s = select(stock_end, s, _end_turn_after_play(t, s))
    return s, stock_end, jnp.asarray(-1, _I32), jnp.asarray(_STOCK, _I32)


_BRANCHES = (_play, _draw, _take_penalty, _pass, _stop, _declare, _announce)


def apply(t: Table, s: State, action: jax.Array, key: jax.Array) -> State:
    """Apply a legal action of the player to act (the kernels' ``apply``); the hand ends in phase ``over``."""
    action = jnp.asarray(action, _I32)
    p = s.current_player
    play = s.phase == PLAY
    draw_kind = jnp.where(s.pending > 0, 2, 1)
    branch = jnp.select([s.phase == DECLARE, s.phase == ANNOUNCE_PHASE, action < NUM_CARDS, action == DRAW,
                         action == PASS], [5, 6, 0, draw_kind, 3], 4)
    # the one draw of the move: a voluntary card, the pending penalty, or the last-card penalty
    count = jnp.select([play & (action == DRAW) & (s.pending > 0), play & (action == DRAW),
                        (s.phase == ANNOUNCE_PHASE) & (action == PASS)], [s.pending, 1, t.last_card_penalty], 0)
    s, drawn, stock_end = _draw_cards(t, s, p, count, key)
    s, ends, winner, reason = jax.lax.switch(branch, [lambda *a, f=f: f(t, *a) for f in _BRANCHES],
                                             s, action, drawn, stock_end)
    return select(ends, end_hand(t, s, winner, reason), s)


def hand_rewards(t: Table, s: State) -> jax.Array:
    """float32[P]: every seat's reward for the finished hand (``c8env.episode.hand_rewards``)."""
    n = s.num_players
    won = jnp.arange(n) == s.winner
    win = jnp.where(won, 1.0, -1.0 / (n - 1))
    points = hand_points(t, s)
    pay = jnp.where(won, 0, points - points[jnp.maximum(s.winner, 0)])
    transfers = jnp.where(won, pay.sum(), -pay)
    rewards = jnp.where(t.points_reward, transfers.astype(jnp.float32), win)
    return jnp.where(s.winner >= 0, rewards, 0.0).astype(jnp.float32)


# ----- observation ------------------------------------------------------------------------------------
def observe(t: Table, s: State, seat: jax.Array) -> jax.Array:
    """float32[401]: ``seat``'s observation vector (``c8env.observation.encode_observation``, the newest)."""
    n = s.num_players
    f32 = jnp.float32
    seat = jnp.asarray(seat, _I32)
    others = (seat + jnp.arange(1, n)) % n
    held = sizes(s)
    shares = jnp.asarray(_SHARES)
    obs = jnp.zeros(OBS_SIZE, f32)
    obs = obs.at[_HAND:_HAND + NUM_CARDS].set(s.hand[seat].astype(f32))
    obs = obs.at[_TOP + s.discard[s.discard_len - 1].astype(_I32)].set(1.0)
    obs = obs.at[jnp.where(s.suit == ANY_SUIT, _ANY, _SUIT + s.suit)].set(1.0)
    obs = obs.at[_RANK + s.rank].add(jnp.where(s.rank >= 0, 1.0, 0.0))
    discard = jnp.zeros(NUM_CARDS, f32).at[s.discard.astype(_I32)].add((_POSITIONS < s.discard_len).astype(f32))
    obs = obs.at[_DISCARD:_DISCARD + NUM_CARDS].set(discard)
    obs = obs.at[_SIZES:_SIZES + n - 1].set(held[others].astype(f32))
    bits4 = (s.voids[others][:, None] >> jnp.arange(NUM_SUITS)) & 1
    obs = obs.at[_VOIDS:_VOIDS + NUM_SUITS * (n - 1)].set(bits4.reshape(-1).astype(f32))
    suits = s.draw_suits[others]
    record = jnp.concatenate([(suits[:, None] >> jnp.arange(NUM_SUITS)) & 1,
                              (s.draw_ranks[others][:, None] >> jnp.arange(NUM_RANKS)) & 1,
                              s.draw_held[others][:, None]], axis=1)
    record = jnp.where(suits[:, None] != 0, record, 0).astype(f32)
    obs = obs.at[_LAST_DRAWS:_LAST_DRAWS + DRAW_RECORD_SIZE * (n - 1)].set(record.reshape(-1))
    size = held[others]
    share = jnp.where(size[:, None] > 0, shares[s.suit_draws[others], size[:, None]], 0.0)
    obs = obs.at[_SUIT_DRAWS:_SUIT_DRAWS + NUM_SUITS * (n - 1)].set(share.reshape(-1))
    declared = s.declared[others]
    at_suit = jnp.arange(NUM_SUITS)[None, :] == (declared - 1)[:, None]
    declared_share = shares[s.declared_held[others], size]
    declared_row = jnp.where(at_suit & (declared[:, None] > 0) & (size[:, None] > 0), declared_share[:, None], 0.0)
    obs = obs.at[_DECLARED:_DECLARED + NUM_SUITS * (n - 1)].set(declared_row.reshape(-1))
    obs = obs.at[_STOCK_SIZE].set(s.stock_len.astype(f32))
    obs = obs.at[_PENDING].set(s.pending.astype(f32))
    obs = obs.at[_DIRECTION].set(s.direction.astype(f32))
    obs = obs.at[_PHASE + s.phase].set(1.0)
    obs = obs.at[_DRAWS].set(s.draws.astype(f32))
    obs = obs.at[_PLAYERS + n - 2].set(1.0)
    relative = (seat + jnp.arange(n)) % n
    obs = obs.at[_SCORES:_SCORES + n].set(s.scores[relative].astype(f32))
    obs = obs.at[_COUNTDOWN:_COUNTDOWN + n].set(jnp.where(t.countdown, s.countdown[relative], 0).astype(f32))
    wild = s.wild[seat]
    return obs.at[_WILD + wild].add(jnp.where(wild >= 0, 1.0, 0.0))
