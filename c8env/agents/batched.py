"""Batched agents: the ``greedy`` heuristic and seeded ``random`` agents as kernels over a batch of games.

The weights are greedy's own (:mod:`c8env.agents.greedy`); :func:`greedy_actions` and
:func:`autoplay` play them in a :class:`c8env.vector.VectorGames`.

:func:`greedy_all` chooses, in every game, the action of
:func:`c8env.agents.greedy.greedy_action` for the player to act; :class:`RandomAgents`
holds one generator per game and draws as :class:`c8env.agents.random_agent.RandomAgent`
does (``legal[default_rng(seed).integers(len(legal))]`` per decision), so a batch
reproduces the scalar agents decision for decision (``tests/agents/test_batched.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from c8env.actions import ANNOUNCE, DECLARE_BASE, DRAW, NUM_ACTIONS, PASS, STOP
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
from c8env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, SUIT_MASKS
from c8env.rules import Effect
from c8env.vector import kernels, rng
from c8env.vector.games import VectorGames, check_seeds, check_slots
from c8env.vector.jit import inline, jit
from c8env.vector.kernels import ANNOUNCE_PHASE, DECLARE, Games, Table

_SKIP, _DRAW_EFFECT, _ANY_NEXT_EFFECT = int(Effect.SKIP), int(Effect.DRAW), int(Effect.ANY_NEXT)
_SUIT_MASKS = np.array(SUIT_MASKS, dtype=np.int64)
_LOWEST = -(1 << 62)
#: ``seat_agents`` codes of :func:`autoplay_all` (``k >= 0``: random agent ``k``).
EXTERNAL, GREEDY = -1, -2


@jit
def popcount(x: int) -> int:
    """Number of cards in a card set (52 bits)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101 >> 56) & 0xFF


@jit
def _best_suit(g: Games, b: int, t: Table, p: int, next_voids: int) -> int:
    """``c8env.agents.greedy.best_suit``: the suit held most (non-wild), the next player's void, points."""
    wild = g.wild[b, p]
    best, best_score = 0, _LOWEST
    for suit in range(NUM_SUITS):
        score = SUIT_NEXT_VOID if (next_voids >> suit) & 1 else 0
        for card in range(suit * NUM_RANKS, (suit + 1) * NUM_RANKS):
            if (wild >> card) & 1:
                continue
            copies = ((g.held[b, p] >> card) & 1) + ((g.twice[b, p] >> card) & 1)
            score += copies * (SUIT_HELD + t.points[card])
        if score > best_score:
            best, best_score = suit, score
    return best


@inline
def _best_card(g: Games, b: int, t: Table, p: int, cards: int) -> int:
    """Greedy's pick among the card set ``cards`` (legal plays of seat ``p``), the lowest id on ties; -1 if empty."""
    n = t.num_players
    wild = g.wild[b, p]
    plain, plain_dups = g.held[b, p] & ~wild, g.twice[b, p] & ~wild
    fewest = 1 << 30
    for other in range(n):
        if other != p and g.sizes[b, other] < fewest:
            fewest = g.sizes[b, other]
    close = fewest <= 2
    nxt = (p + g.direction[b]) % n
    next_voids, next_size = g.voids[b, nxt], g.sizes[b, nxt]
    best, best_score = -1, _LOWEST
    while cards:
        action = kernels.lowest_card(cards)
        cards &= cards - 1
        if (wild >> action) & 1:
            score = t.points[action] - (0 if close else KEEP_WILD)
        else:
            suit = action // NUM_RANKS
            held = popcount(plain & _SUIT_MASKS[suit]) + popcount(plain_dups & _SUIT_MASKS[suit])
            score = t.points[action] + LONG_SUIT * (held - 1)
            if (next_voids >> suit) & 1:
                score += NEXT_VOID
            effect = t.effects[action]
            if effect == _SKIP or effect == _DRAW_EFFECT:
                score += ATTACK_CLOSE if next_size <= 2 else ATTACK_FAR
            elif effect == _ANY_NEXT_EFFECT:
                score += ANY_NEXT
        if score > best_score:
            best, best_score = action, score
    return best


@inline
def _declare_or_announce(g: Games, b: int, t: Table) -> int:
    """Greedy's move in the declare phase (the best suit) and the announce phase (announce); -1 in the play phase."""
    phase = g.phase[b]
    if phase == DECLARE:
        p = g.current[b]
        return DECLARE_BASE + _best_suit(g, b, t, p, g.voids[b, (p + g.direction[b]) % t.num_players])
    return ANNOUNCE if phase == ANNOUNCE_PHASE else -1


@jit
def greedy_action(g: Games, b: int, t: Table, mask: np.ndarray) -> int:
    """``c8env.agents.greedy.greedy_action`` for game ``b``'s player to act (``mask``: his legal actions);
    -1 when no action is legal (a finished game)."""
    count, first = 0, -1
    for a in range(NUM_ACTIONS):
        if mask[a]:
            count += 1
            if first < 0:
                first = a
    if count <= 1:
        return first
    phase_move = _declare_or_announce(g, b, t)
    if phase_move >= 0:
        return phase_move
    if mask[STOP]:
        return STOP
    cards = 0
    for action in range(NUM_CARDS):
        if mask[action]:
            cards |= np.int64(1) << action
    best = _best_card(g, b, t, g.current[b], cards)
    if best >= 0:
        return best
    return DRAW if mask[DRAW] else PASS


@jit
def greedy_move(g: Games, b: int, t: Table, mask: np.ndarray) -> int:
    """:func:`greedy_action` for game ``b``'s player to act in a game not over, read from the hands; the
    legal mask is written to ``mask`` only when no card can be played (the search's rollouts)."""
    phase_move = _declare_or_announce(g, b, t)
    if phase_move >= 0:
        return phase_move
    p = g.current[b]
    wild = g.wild[b, p]
    if g.pending[b]:
        defence = g.held[b, p] & g.follow[b] & t.draw_cards & ~wild
        return _best_card(g, b, t, p, defence) if defence else DRAW
    if t.stop_threshold >= 0 and g.draws[b] == 0 and kernels.hand_points(g, b, p, t) <= t.stop_threshold:
        return STOP
    playable = g.held[b, p] & (g.follow[b] | wild)
    if playable:
        return _best_card(g, b, t, p, playable)
    kernels.legal_mask(g, b, t, mask)
    return DRAW if mask[DRAW] else PASS


@jit
def greedy_all(g: Games, t: Table, masks: np.ndarray, out: np.ndarray) -> None:
    """Greedy's action in every game (``masks``: int8[B, 60] legal actions; -1 where none is legal)."""
    for b in range(g.current.shape[0]):
        out[b] = greedy_action(g, b, t, masks[b])


@jit
def random_action(mask: np.ndarray, generator: np.ndarray) -> int:
    """``legal[generator.integers(len(legal))]`` (``RandomAgent.act``); -1, drawing nothing, when no action
    is legal."""
    count = 0
    for a in range(NUM_ACTIONS):
        count += mask[a]
    if count == 0:
        return -1
    pick = rng.below(generator, count)
    for a in range(NUM_ACTIONS):
        if mask[a]:
            if pick == 0:
                return a
            pick -= 1
    return -1


@jit
def random_all(masks: np.ndarray, generators: np.ndarray, active: np.ndarray, out: np.ndarray) -> None:
    """:func:`random_action` in every game where ``active[b]`` (else -1, and those games draw nothing)."""
    for b in range(masks.shape[0]):
        out[b] = random_action(masks[b], generators[b]) if active[b] else -1


@jit
def autoplay_all(g: Games, t: Table, seat_agents: np.ndarray, generators: np.ndarray, active: np.ndarray,
                 masks: np.ndarray, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                 final_obs: np.ndarray, autoreset: bool, s: kernels.Scratch, res: kernels.HandResults,
                 viewers: np.ndarray, fresh: bool = True) -> None:
    """In every game where ``active[b]``, the moves of built-in agents (:func:`kernels.move` each) until the
    episode ends or the player to act is ``EXTERNAL``: ``seat_agents[b, seat]`` is ``GREEDY``,
    ``EXTERNAL`` or ``k >= 0``, the random agent with generator ``generators[k, b]``. An episode's last
    view is seat ``viewers[b]``'s (-1: the player to act). With ``fresh`` every game's rewards and flags
    start cleared (:func:`kernels.clear`: ``rewards`` the sum over the moves made); without, they add to
    what is there. ``res`` records the hands that end (the caller clears ``res.hand_over``)."""
    for b in range(g.current.shape[0]):
        if fresh:
            kernels.clear(b, rewards, terminated, truncated)
        if not active[b]:
            continue
        while True:
            agent = seat_agents[b, g.current[b]]
            if agent == EXTERNAL:
                break
            kernels.legal_mask(g, b, t, masks[b])
            if agent == GREEDY:
                action = greedy_action(g, b, t, masks[b])
            else:
                action = random_action(masks[b], generators[agent, b])
            if kernels.move(g, b, t, action, rewards, terminated, truncated, final_obs, autoreset, s, res, viewers[b]):
                break


@jit
def seed_all(seeds: np.ndarray, slots: np.ndarray, generators: np.ndarray, s: kernels.Scratch) -> None:
    """``generators[b]`` = ``np.random.default_rng(seeds[b])`` in every slot ``b`` where ``slots[b]``."""
    for b in range(seeds.shape[0]):
        if slots[b]:
            count = rng.entropy_words(s.words, seeds[b])
            rng.seed_generator(s.words, count, generators[b], s.work)


class RandomAgents:
    """One seeded random agent per game: agent ``b`` plays as ``RandomAgent(seeds[b])``.

    >>> agents = RandomAgents([7, 8, 9])
    >>> mask = np.zeros((3, 60), dtype=np.int8); mask[:, [3, 17, 56]] = 1
    >>> agents.actions(mask).shape
    (3,)
    """

    def __init__(self, seeds: Any) -> None:
        size = np.asarray(seeds).shape[0] if np.ndim(seeds) == 1 else 0
        if size < 1:
            raise ValueError(f"seeds must be a 1-D int array with one seed per game, got {seeds!r}")
        self.num_envs = size
        self.generators = np.zeros((size, 6), dtype=np.uint64)
        self._scratch = kernels.new_scratch()
        self.reseed(seeds)

    def reseed(self, seeds: Any, slots: Any = None) -> None:
        """Agent ``b`` starts over as ``RandomAgent(seeds[b])``, for every ``b`` where ``slots[b]`` (None:
        all; the other seeds are ignored)."""
        seeds = check_seeds(seeds, self.num_envs)
        slots = check_slots(slots, self.num_envs)
        with np.errstate(over="ignore"):
            seed_all(seeds, slots, self.generators, self._scratch)

    def actions(self, action_mask: np.ndarray, active: Any = None) -> np.ndarray:
        """Each active agent's random legal action (int64[B]) for its game's mask (int8[B, 60]); -1 for the
        games not active (their generators do not move) and where no action is legal."""
        active = check_slots(active, self.num_envs, "active")
        if action_mask.shape != (self.num_envs, NUM_ACTIONS) or action_mask.dtype != np.int8:
            raise ValueError(f"action_mask must be int8 of shape ({self.num_envs}, {NUM_ACTIONS}), "
                             f"got {action_mask.dtype} {action_mask.shape}")
        out = np.zeros(self.num_envs, dtype=np.int64)
        with np.errstate(over="ignore"):
            random_all(action_mask, self.generators, active, out)
        return out


def greedy_actions(games: VectorGames) -> np.ndarray:
    """Per game (int64[B]), the action of :func:`c8env.agents.greedy.greedy_action` for its player to act;
    -1 for a finished game (autoreset off)."""
    games.check_reset()
    out = np.zeros(games.num_envs, dtype=np.int64)
    with np.errstate(over="ignore"):
        greedy_all(games.games, games.table, games.action_mask, out)
    return out


def autoplay(games: VectorGames, seat_agents: np.ndarray, randoms: Sequence[RandomAgents] = (),
             active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Let built-in agents make their moves in ``games``, many per game in one compiled call.

    ``seat_agents`` (int[B, num_players]) names each seat's agent in each game: ``GREEDY``
    (:func:`greedy_actions`), ``EXTERNAL`` (the caller's: play stops there), or ``k >= 0``,
    the random agent of ``randoms[k]`` for that game (its generator moves on). Every active
    game (``active``, bool[B], default all) plays until its episode ends or an ``EXTERNAL`` seat
    is to act; each move as ``games.step`` makes it (autoreset, ``final_observation``). Returns
    ``(rewards[B, P], terminated[B], truncated[B])``, the rewards summed over the moves made.
    """
    games.check_reset()
    size, players = games.num_envs, games.num_players
    seat_agents = np.asarray(seat_agents)
    if seat_agents.shape != (size, players) or seat_agents.dtype.kind not in "iu":
        raise ValueError(f"seat_agents must be an int array of shape ({size}, {players}), "
                         f"got {seat_agents.dtype} {seat_agents.shape}")
    for agent in randoms:
        if not isinstance(agent, RandomAgents) or agent.num_envs != size:
            raise ValueError(f"randoms must hold RandomAgents for {size} games, got {agent!r}")
    bad = (seat_agents < GREEDY) | (seat_agents >= len(randoms))
    if bad.any():
        choices = f"or a random agent 0..{len(randoms) - 1}" if randoms else "(no random agents given)"
        raise ValueError(f"seat_agents holds {int(seat_agents[bad][0])}; allowed: GREEDY ({GREEDY}), "
                         f"EXTERNAL ({EXTERNAL}) {choices}")
    generators = np.stack([agent.generators for agent in randoms]) if randoms else \
        np.zeros((0, size, 6), dtype=np.uint64)
    codes = seat_agents.astype(np.int64)

    viewers = np.full(size, -1, dtype=np.int64)  # an episode's last view: its player to act, as step gives it

    def play(g: Games, t: Table, active: np.ndarray, *results: Any) -> None:
        autoplay_all(g, t, codes, generators, active, *results, viewers)

    results = games.run_kernel(play, active)
    for agent, moved in zip(randoms, generators, strict=True):
        agent.generators[:] = moved
    return results


__all__ = ["EXTERNAL", "GREEDY", "RandomAgents", "autoplay", "autoplay_all", "greedy_action", "greedy_actions",
           "greedy_all", "greedy_move", "popcount", "random_action", "random_all", "seed_all"]
