"""The compiled search whose samples explain every move of the hand seen (:class:`ExplainedSearch`), run by
:class:`c8env.agents.best_response.GreedyBestResponse`.

Each sample (after the first, the public deal as the agent dealt it) deals the hidden cards seat by seat so that
greedy would have made every move of that seat in the hand (:func:`explained_world`): his hand is rebuilt backward
from the sampled one through his plays and draws (:func:`explained_moves`), and the deal kept is the first of up to
``tries`` that explains all his moves, else the best improved by up to ``tries`` swaps of one card. The rollouts are
the product search's (:func:`c8env.agents.search_compiled.sample_rollouts`); with no move seen the samples are the
product search's, draw for draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from c8env.actions import DECLARE_BASE
from c8env.agents import batched
from c8env.agents.search_compiled import (
    PUBLIC,
    ROWS,
    WORLD,
    CompiledSearch,
    Hidden,
    Network,
    Work,
    copy_game,
    deal_hidden,
    generator_words,
    load_state,
    sample_rollouts,
    set_generator_words,
)
from c8env.engine import State
from c8env.rules import RuleSet
from c8env.vector import kernels, rng
from c8env.vector.jit import jit
from c8env.vector.kernels import Games, Scratch, Table

#: The rows past the product search's: a deal being tried, then the positions of the moves seen.
DRAWN, HISTORY = ROWS, ROWS + 1
#: Moves of the hand a :class:`HandHistory` holds at most (the latest are kept).
MAX_EVENTS = 400


class HandHistory(NamedTuple):
    """The greedy opponents' moves of the hand that each sample must explain, in order: move ``i`` was made by seat
    ``seats[i]`` (the search's numbering; ``actors[i]`` in the position's) in the position of games row
    ``HISTORY + i``, and drew ``drawn[i]`` cards; up to ``tries`` deals (then swaps) per seat."""

    count: int
    seats: np.ndarray  # int64[MAX_EVENTS]
    actors: np.ndarray  # int64[MAX_EVENTS]
    actions: np.ndarray  # int64[MAX_EVENTS]
    drawn: np.ndarray  # int64[MAX_EVENTS]
    tries: int
    saved: np.ndarray  # int64[3 * P] work space: the seats' first constraint while explained_world pins their hands


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
def explained_moves(g: Games, world: int, seat: int, t: Table, history: HandHistory, gen: np.ndarray, w: Work) -> int:
    """Walk ``seat``'s moves of ``history`` backward from his hand in row ``world``: before a card he played he also
    held it; before a draw of k cards he held his hand less k of them, every card that then fitted among them (else
    greedy would not have drawn), the others drawn uniformly. How many of his moves, latest first, greedy makes with
    the hands so rebuilt before the first he does not (all of them: the deal explains his play)."""
    hand = g.held[world, seat]
    explained = 0
    for i in range(history.count - 1, -1, -1):
        if history.seats[i] != seat:
            continue
        action, row, actor, k = history.actions[i], HISTORY + i, history.actors[i], history.drawn[i]
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
def explained_world(g: Games, t: Table, h: Hidden, history: HandHistory, gen: np.ndarray, w: Work) -> None:
    """Deal the hidden cards into row ``WORLD`` seat by seat so that greedy would have made every move of each
    seat in ``history`` (:func:`explained_moves`), each seat's hand given those before: the first of up to
    ``history.tries`` deals that explains all his moves; failing that, from the deal that explains the most of
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
            copy_game(g, PUBLIC, DRAWN)
            deal_hidden(g, DRAWN, h, gen, w)
            explained = explained_moves(g, DRAWN, seat, t, history, gen, w)
            if explained > best:
                best, hand = explained, g.held[DRAWN, seat]
            if best == moves:
                break
        if best < moves:
            free = unseen & ~always
            for other in range(1, seat):
                free &= ~g.held[DRAWN, other]  # the hands pinned before his
            for _ in range(history.tries):
                if hand == 0 or (free & ~hand) == 0:
                    break
                swapped = hand & ~(np.int64(1) << _random_card(hand, gen)) | np.int64(1) << _random_card(free & ~hand, gen)
                _set_hand(g, DRAWN, seat, swapped)
                explained = explained_moves(g, DRAWN, seat, t, history, gen, w)
                if explained >= best:
                    best, hand = explained, swapped
                    if best == moves:
                        break
        h.num_rules[seat], h.forbidden[seat, 0], h.counts[seat, 0] = 1, ~hand, h.sizes[seat]
    copy_game(g, PUBLIC, WORLD)
    deal_hidden(g, WORLD, h, gen, w)
    for seat in range(n):
        h.forbidden[seat, 0], h.counts[seat, 0], h.num_rules[seat] = saved[3 * seat], saved[3 * seat + 1], saved[3 * seat + 2]


@jit
def explained_search(g: Games, t: Table, h: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
                     totals: np.ndarray, mass: np.ndarray, net: Network, history: HandHistory, w: Work,
                     s: Scratch) -> None:
    """:func:`c8env.agents.search_compiled.search` whose samples after the first explain ``history``
    (:func:`explained_world`; without moves, dealt as the product search deals them)."""
    for sample in range(first, last):
        world = PUBLIC
        if sample > 0:
            world = WORLD
            if history.count > 0:
                explained_world(g, t, h, history, gen, w)
            else:
                copy_game(g, PUBLIC, WORLD)
                deal_hidden(g, WORLD, h, gen, w)
        mass[0] += 1.0
        sample_rollouts(g, world, t, candidates, 1.0, totals, net, w, s)


def load_history(games: Games, first_row: int, moves: Sequence[tuple[State, int, int, int]], tries: int,
                 history: NamedTuple) -> NamedTuple:
    """``history`` (a :class:`HandHistory` or a tuple with its fields) holding ``moves`` (the latest
    :data:`MAX_EVENTS`; each the position the mover moved in, his seat in the search's numbering, his move and the
    cards it drew), their positions loaded into rows ``first_row + i`` of ``games``; up to ``tries`` deals per
    seat."""
    moves = list(moves)[-MAX_EVENTS:]
    seats, actors, actions, drawn = (np.zeros(MAX_EVENTS, dtype=np.int64) for _ in range(4))
    for i, (position, seat, action, cards) in enumerate(moves):
        load_state(games, first_row + i, position)
        seats[i], actors[i], actions[i], drawn[i] = seat, position.current_player, action, cards
    return history._replace(count=len(moves), seats=seats, actors=actors, actions=actions, drawn=drawn, tries=tries)


class ExplainedSearch(CompiledSearch):
    """:class:`~c8env.agents.search_compiled.CompiledSearch` whose samples explain the moves given to
    :meth:`observe_hand` as greedy players' (:func:`explained_world`)."""

    def __init__(self, rules: RuleSet, num_players: int, reward: str,
                 rollout_policy: tuple[Sequence[tuple[np.ndarray, np.ndarray]], str] | None = None) -> None:
        super().__init__(rules, num_players, reward, rollout_policy)
        self.games = kernels.new_games(HISTORY + MAX_EVENTS, num_players)
        self.history = HandHistory(0, *(np.zeros(MAX_EVENTS, dtype=np.int64) for _ in range(4)), 1,
                                   np.zeros(3 * num_players, dtype=np.int64))

    def observe_hand(self, moves: Sequence[tuple[State, int, int, int]], tries: int) -> None:
        """Make the next runs' samples explain every move of ``moves`` (the latest :data:`MAX_EVENTS`): the greedy
        opponents' moves of the hand in order, each the position he moved in, his seat in the search's numbering,
        his move and the cards it drew; each seat's hand the first of up to ``tries`` deals that does, else a local
        search from the best."""
        if not isinstance(tries, int) or isinstance(tries, bool) or tries < 1:
            raise ValueError(f"ExplainedSearch.observe_hand: tries must be an int >= 1, got {tries!r}")
        self.history = load_history(self.games, HISTORY, moves, tries, self.history)

    def explained(self, world: State, seat: int, generator: np.random.Generator) -> int:
        """How many of ``seat``'s moves (:meth:`observe_hand`; the search's numbering), latest first, greedy makes
        with his hand in ``world`` (the observer at seat 0) rebuilt backward through his plays and draws, before the
        first he does not (:func:`explained_moves`; which cards he drew is drawn from ``generator``)."""
        load_state(self.games, WORLD, world)
        gen = generator_words(generator)
        with np.errstate(over="ignore"):
            count = explained_moves(self.games, WORLD, seat, self.table, self.history, gen, self.work)
        set_generator_words(generator, gen)
        return int(count)

    def _samples(self, hidden: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
                 totals: np.ndarray, mass: np.ndarray) -> None:
        explained_search(self.games, self.table, hidden, candidates, first, last, gen, totals, mass, self.network,
                         self.history, self.work, self.scratch)


__all__ = ["DRAWN", "HISTORY", "MAX_EVENTS", "ExplainedSearch", "HandHistory", "explained_moves",
           "explained_search", "explained_world", "load_history"]
