"""The research options' kernels of the compiled search (:class:`ResearchSearch`, run by
:class:`training.research.expert.ResearchExpert`): inference from play and samples that explain the moves seen.

With a :class:`Belief` (``belief=...``, 2 players) each sample's rollouts are weighted by how likely the opponent's
last observed move was in that sample (:func:`belief_weight`); with ``draws`` above 1 each sample is the one kept of
that many deals (:func:`drawn_world`). With a :class:`History` (:meth:`ResearchSearch.observe`) each sample is
instead a deal in which greedy opponents would have made every move observed since their last draws (rejection
sampling, :func:`consistent_world`; ``python -m training.research.information --explain-moves``), or every move of
the hand (:meth:`ResearchSearch.observe_hand`, :func:`explained_world`; ``explain_hand=TRIES``). Each sample's
rollouts are the product's (:func:`c8env.agents.search_compiled.sample_rollouts`); without a belief or a history
the samples are the product search's, draw for draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from c8env.actions import DECLARE_BASE
from c8env.agents import batched
from c8env.agents.search_compiled import (
    PUBLIC,
    ROLLOUT,
    WORLD,
    Hidden,
    Network,
    Work,
    copy_game,
    deal_hidden,
    last_hidden,
    load_state,
    network,
    network_logit,
    sample_rollouts,
)
from c8env.agents.search_explained import (
    DRAWN,
    HISTORY,
    MAX_EVENTS,
    ExplainedSearch,
    explained_world,
    load_history,
)
from c8env.engine import State
from c8env.rules import RuleSet
from c8env.vector import kernels, rng
from c8env.vector.jit import jit
from c8env.vector.kernels import Games, Scratch, Table

#: The row past the explained search's (:mod:`c8env.agents.search_explained`: a deal being weighed or tried, then the
#: positions of the observed moves, :class:`History`): the position the opponent's weighed move was made in.
BEFORE = HISTORY + MAX_EVENTS
#: Observed moves a :class:`History` since each opponent's last draw holds at most (the latest are kept).
MAX_HISTORY = 48
_UNIT = 1 << 30  # resolution of the uniform draws that keep one of a sample's deals


class Belief(NamedTuple):
    """The opponent (seat 1) model that weighs each sample, and the move it weighs: the card seat 1 played from
    the position in row ``BEFORE`` (his hand there is rebuilt per sample: the sample's hand plus that card) and
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
    ``HISTORY + i``. Since each one's last draw (``whole`` false, :func:`consistent_world`): holding that seat's
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


@jit
def policy_probability(g: Games, b: int, t: Table, seat: int, net: Network, mask: np.ndarray, action: int) -> float:
    """The network's probability of ``action`` for ``seat`` of row ``b``: its softmax over the legal actions."""
    x, width = last_hidden(g, b, t, seat, net)
    top, total = -np.inf, 0.0
    for a in range(mask.shape[0]):
        if mask[a]:
            top = max(top, network_logit(net, x, width, a))
    for a in range(mask.shape[0]):
        if mask[a]:
            total += np.exp(np.float64(network_logit(net, x, width, a) - top))
    chosen = np.exp(np.float64(network_logit(net, x, width, action) - top))
    return chosen / total


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
    Uses row ``ROLLOUT`` as scratch."""
    if belief.played < 0:
        return 1.0
    copy_game(g, BEFORE, ROLLOUT)
    g.held[ROLLOUT, 1], g.twice[ROLLOUT, 1], g.sizes[ROLLOUT, 1] = g.held[world, 1], g.twice[world, 1], g.sizes[world, 1]
    kernels.add_card(g, ROLLOUT, 1, belief.played)
    weight = _model_probability(g, ROLLOUT, t, belief, w, belief.played)
    kernels.apply(g, ROLLOUT, t, belief.played, s)
    if g.phase[ROLLOUT] == kernels.DECLARE and g.current[ROLLOUT] == 1 and belief.declared >= 0:
        weight *= _model_probability(g, ROLLOUT, t, belief, w, DECLARE_BASE + belief.declared)
    return weight


@jit
def drawn_world(g: Games, t: Table, h: Hidden, belief: Belief, gen: np.ndarray, w: Work, s: Scratch) -> float:
    """Deal ``belief.draws`` hidden hands and keep one in row ``WORLD``, each with probability in proportion to
    its weight (sampling-importance-resampling); the mean weight of the deals (the kept one's weight)."""
    total = 0.0
    for _ in range(belief.draws):
        copy_game(g, PUBLIC, DRAWN)
        deal_hidden(g, DRAWN, h, gen, w)
        weight = belief_weight(g, DRAWN, t, belief, w, s)
        total += weight
        if rng.below(gen, _UNIT) * total < weight * _UNIT:
            copy_game(g, DRAWN, WORLD)
    return total / belief.draws


@jit
def unexplained(g: Games, world: int, t: Table, history: History, w: Work) -> int:
    """How many of ``history``'s moves greedy would not have made with row ``world``'s hands (each seat's hand then:
    the sampled one plus the cards he has played since)."""
    misses = 0
    for i in range(history.count):
        row, seat, actor = HISTORY + i, history.seats[i], history.actors[i]
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
    """Deal the hidden cards into row ``WORLD`` until greedy would have made every move of ``history`` with them
    (rejection sampling), at most ``history.tries`` deals; failing that, the deal that explains the most moves."""
    fewest = history.count + 1
    for _ in range(history.tries):
        copy_game(g, PUBLIC, DRAWN)
        deal_hidden(g, DRAWN, h, gen, w)
        misses = unexplained(g, DRAWN, t, history, w)
        if misses < fewest:
            fewest = misses
            copy_game(g, DRAWN, WORLD)
        if misses == 0:
            return


@jit
def research_search(g: Games, t: Table, h: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
                    totals: np.ndarray, mass: np.ndarray, net: Network, belief: Belief, history: History, w: Work,
                    s: Scratch) -> None:
    """:func:`c8env.agents.search_compiled.search` with a belief and a history: sample 0 plays the public row as
    dealt, every other sample deals the hidden cards anew (or as ``history`` asks); ``totals[i]`` sums candidate
    ``i``'s rollouts, each times its sample's :func:`belief_weight` (1 without an observed move; with
    ``belief.draws > 1`` the sample is the one kept of that many deals, :func:`drawn_world`), and ``mass[0]`` sums
    the weights."""
    for sample in range(first, last):
        if sample == 0:
            world = PUBLIC
            weight = belief_weight(g, world, t, belief, w, s)
        elif belief.played >= 0 and belief.draws > 1:
            world = WORLD
            weight = drawn_world(g, t, h, belief, gen, w, s)
        elif history.count > 0 and history.whole:
            world = WORLD
            explained_world(g, t, h, history, gen, w)
            weight = 1.0
        elif history.count > 0:
            world = WORLD
            consistent_world(g, t, h, history, gen, w)
            weight = belief_weight(g, world, t, belief, w, s)
        else:
            world = WORLD
            copy_game(g, PUBLIC, WORLD)
            deal_hidden(g, WORLD, h, gen, w)
            weight = belief_weight(g, world, t, belief, w, s)
        mass[0] += weight
        sample_rollouts(g, world, t, candidates, weight, totals, net, w, s)


class ResearchSearch(ExplainedSearch):
    """:class:`~c8env.agents.search_explained.ExplainedSearch` with the research options: with ``belief_model``
    (``"greedy"`` or a network's layers and activation) the samples are weighted by the opponent's observed move
    (:meth:`weigh`), each the one kept of ``draws`` deals (:class:`Belief`); :meth:`observe` and :meth:`observe_hand`
    make them explain the moves seen (:class:`History`)."""

    def __init__(self, rules: RuleSet, num_players: int, reward: str,
                 rollout_policy: tuple[Sequence[tuple[np.ndarray, np.ndarray]], str] | None = None,
                 belief_model: str | tuple[Sequence[tuple[np.ndarray, np.ndarray]], str] | None = None,
                 epsilon: float = 0.0, draws: int = 1) -> None:
        super().__init__(rules, num_players, reward, rollout_policy)
        greedy = not isinstance(belief_model, tuple)
        model = network(*(((), "tanh") if greedy else belief_model))
        self.belief = Belief(-1, -1, greedy, float(epsilon), model, draws)
        self.belief_model = belief_model
        self.games = kernels.new_games(BEFORE + 1, num_players)
        self.history = History(0, *(np.zeros(MAX_EVENTS, dtype=np.int64) for _ in range(5)), 0, False,
                               np.zeros(3 * num_players, dtype=np.int64))
        self._weighed = self.belief

    def weigh(self, observed: tuple[State, int, int] | None) -> None:
        """Weigh the next runs' samples by seat 1's last move (needs ``belief_model``): the position he played
        from, the card he played and the suit to follow after his turn (-1: none); None: every sample weighs 1."""
        if observed is None:
            self._weighed = self.belief
            return
        if self.belief_model is None:
            raise ValueError("ResearchSearch.weigh: a move to weigh is given but the search has no belief_model")
        before, played, declared = observed
        load_state(self.games, BEFORE, before)
        self._weighed = self.belief._replace(played=played, declared=declared)

    def observe(self, moves: Sequence[tuple[State, int, int, int]], tries: int) -> None:
        """Make the next runs' samples explain ``moves`` (:class:`History`; the latest :data:`MAX_HISTORY` of them):
        each the position a greedy opponent moved in, his seat in the search's numbering, his move and the cards he
        has played since (that move's included); each sample the first of up to ``tries`` deals that does."""
        history = load_history(self.games, HISTORY, list(moves)[-MAX_HISTORY:], tries,
                               self.history._replace(whole=False))
        self.history = history._replace(extras=history.drawn, drawn=np.zeros(MAX_EVENTS, dtype=np.int64))

    def observe_hand(self, moves: Sequence[tuple[State, int, int, int]], tries: int) -> None:
        self.history = self.history._replace(whole=True)
        super().observe_hand(moves, tries)

    def unexplained(self, world: State) -> int:
        """How many of the observed moves (:meth:`observe`) greedy would not have made with ``world``'s hands (the
        observer at seat 0)."""
        load_state(self.games, WORLD, world)
        return unexplained(self.games, WORLD, self.table, self.history, self.work)

    def _samples(self, hidden: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
                 totals: np.ndarray, mass: np.ndarray) -> None:
        research_search(self.games, self.table, hidden, candidates, first, last, gen, totals, mass, self.network,
                        self._weighed, self.history, self.work, self.scratch)


__all__ = ["BEFORE", "MAX_HISTORY", "Belief", "History", "ResearchSearch", "belief_weight", "consistent_world",
           "drawn_world", "policy_probability", "research_search", "unexplained"]
