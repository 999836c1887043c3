"""The observation codec: what one seat sees, as a flat float32 vector, and back.

The vector has :data:`OBS_SIZE` (401) entries for every player count and variant and
is seat-relative: the observer first, then the next players clockwise. Hidden cards
(other hands, the stock order) enter only as counts. :data:`OBS_LAYOUT` names its
parts:

=========  ====================  ==============================================================
index      name                  meaning
=========  ====================  ==============================================================
0-51       hand                  copies of each card in the observer's hand (0, 1, 2)
52-103     top_card              one-hot id of the discard pile's top card
104-107    suit_to_follow        one-hot suit C, D, H, S to follow (zeros when any card goes)
108-120    rank_to_follow        one-hot rank that matches (zeros after a declared suit)
121        any_card              1 when any card may be played (an ``any_next`` card on top)
122-173    discard_pile          copies of each card now in the discard pile
174-179    opponent_hand_sizes   cards held by the next 1..6 players clockwise (0: no seat)
180        stock_size            cards in the stock
181        pending_draw          draw penalty in force
182        direction             1 clockwise, -1 counter-clockwise
183-186    phase                 one-hot play, declare, announce, over
187        draws_this_turn       cards drawn so far this turn
188-193    num_players           one-hot 2..7
194-200    scores                match totals, observer first
201-213    wild_rank             one-hot rank that is wild for the observer
214-237    opponent_voids        per next player (6 slots) and suit: drew or passed on it
238-244    countdown             countdown counts, observer first (zeros without countdown)
245-352    opponent_last_draws   per next player (6 slots of 18): his last voluntary draw or pass
                                 this hand: the suits (4) and ranks (13) every card of which
                                 fitted then, wild cards included, and the fewest cards he has
                                 held since (all zeros: none)
353-376    opponent_suit_draws   per next player (6 slots) and suit: the share of his cards held
                                 since his latest voluntary draw or pass this hand at which every
                                 card of that suit fitted (the fewest he has held since, over his
                                 hand size; 0: none)
377-400    opponent_declared     per next player (6 slots) and suit: at the suit of his last
                                 declaration this hand, the share of his cards held since (the
                                 fewest he has held since, over his hand size; zeros: none)
=========  ====================  ==============================================================

Entries 0-244 are the whole vector of the releases before ``opponent_last_draws``, entries 0-352 that of the
releases before ``opponent_suit_draws``: policies trained on them read the vector's first
:data:`LEGACY_OBS_SIZE` or :data:`DRAWS_OBS_SIZE` entries (:data:`EARLIER_OBS_SIZES`).

:func:`encode_observation` writes the vector, :func:`decode_observation` reads it back
into an :class:`ObservedPosition`, :func:`action_mask` is the 60-long legal mask (all
zeros off turn), and :class:`StateObservation` is the observation dict of a seat
computed lazily from a state (c8env's own agents read the state's public facts instead
of decoding; every other agent gets :func:`sealed_observation`). NumPy only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from c8env.actions import NUM_ACTIONS
from c8env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from c8env.engine import ANY_SUIT, MAX_PLAYERS, Phase, State

_MAX_OPPONENTS = MAX_PLAYERS - 1
#: Entries per opponent slot of ``opponent_last_draws``: suits fitted (4), ranks fitted (13), cards held since.
DRAW_RECORD_SIZE = NUM_SUITS + NUM_RANKS + 1


def _build_layout() -> dict[str, slice]:
    sizes = [
        ("hand", NUM_CARDS),
        ("top_card", NUM_CARDS),
        ("suit_to_follow", NUM_SUITS),
        ("rank_to_follow", NUM_RANKS),
        ("any_card", 1),
        ("discard_pile", NUM_CARDS),
        ("opponent_hand_sizes", _MAX_OPPONENTS),
        ("stock_size", 1),
        ("pending_draw", 1),
        ("direction", 1),
        ("phase", len(Phase)),
        ("draws_this_turn", 1),
        ("num_players", MAX_PLAYERS - 1),
        ("scores", MAX_PLAYERS),
        ("wild_rank", NUM_RANKS),
        ("opponent_voids", _MAX_OPPONENTS * NUM_SUITS),
        ("countdown", MAX_PLAYERS),
        ("opponent_last_draws", _MAX_OPPONENTS * DRAW_RECORD_SIZE),
        ("opponent_suit_draws", _MAX_OPPONENTS * NUM_SUITS),
        ("opponent_declared", _MAX_OPPONENTS * NUM_SUITS),
    ]
    layout, start = {}, 0
    for name, size in sizes:
        layout[name] = slice(start, start + size)
        start += size
    return layout


#: Name -> slice of the observation vector (the table in the module docstring).
OBS_LAYOUT: dict[str, slice] = _build_layout()
OBS_SIZE: int = max(s.stop for s in OBS_LAYOUT.values())
#: The length of the vector before ``opponent_last_draws``: networks trained on it read the vector's first entries.
LEGACY_OBS_SIZE = OBS_LAYOUT["opponent_last_draws"].start
#: The length of the vector before ``opponent_suit_draws``.
DRAWS_OBS_SIZE = OBS_LAYOUT["opponent_suit_draws"].start
#: The lengths the vector had in earlier releases: a network trained on one reads the vector's first entries.
EARLIER_OBS_SIZES = (DRAWS_OBS_SIZE, LEGACY_OBS_SIZE)

_HAND, _TOP, _SUIT, _RANK, _ANY, _DISCARD, _SIZES, _STOCK, _PENDING, _DIRECTION, _PHASE, _DRAWS, _PLAYERS, \
    _SCORES, _WILD, _VOIDS, _COUNTDOWN, _LAST_DRAWS, _SUIT_DRAWS, _DECLARED = (s.start for s in OBS_LAYOUT.values())
_SUIT_BITS = tuple(np.array([(v >> s) & 1 for s in range(NUM_SUITS)], dtype=np.float32) for v in range(16))


@functools.cache
def _record_bits(suits: int, ranks: int) -> np.ndarray:
    """The suits and ranks of a draw record as 17 0/1 floats."""
    return np.array([(suits >> s) & 1 for s in range(NUM_SUITS)] + [(ranks >> r) & 1 for r in range(NUM_RANKS)],
                    dtype=np.float32)


def _bit_array(mask: int) -> np.ndarray:
    """A 52-bit card set as a 0/1 uint8 array."""
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), dtype=np.uint8), count=NUM_CARDS,
                         bitorder="little")


def fewest_cards(observations: np.ndarray) -> np.ndarray:
    """The fewest cards any player holds, read from observation vectors (one, or a batch ``(k, OBS_SIZE)``):
    the observer's hand and each seated opponent's ``opponent_hand_sizes``."""
    vectors = np.asarray(observations, dtype=np.float32)
    own = vectors[..., _HAND:_HAND + NUM_CARDS].sum(-1)
    sizes = vectors[..., _SIZES:_SIZES + _MAX_OPPONENTS]
    return np.minimum(own, np.where(sizes > 0, sizes, np.inf).min(-1))


def encode_observation(state: State, seat: int) -> np.ndarray:
    """The float32 observation vector of ``seat`` (seat-relative, hidden cards never shown)."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    n = state.num_players
    held, twice = state.held_cards(seat)
    hand = _bit_array(held)
    if twice:
        hand = hand + _bit_array(twice)
    obs[_HAND:_HAND + NUM_CARDS] = hand
    obs[_TOP + state.discard[-1]] = 1.0
    if state.suit == ANY_SUIT:
        obs[_ANY] = 1.0
    else:
        obs[_SUIT + state.suit] = 1.0
    if state.rank >= 0:
        obs[_RANK + state.rank] = 1.0
    obs[_DISCARD:_DISCARD + NUM_CARDS] = np.bincount(state.discard, minlength=NUM_CARDS)
    others = [(seat + k) % n for k in range(1, n)]
    sizes = state.sizes
    obs[_SIZES:_SIZES + n - 1] = [sizes[s] for s in others]
    obs[_STOCK] = len(state.stock)
    obs[_PENDING] = state.pending
    obs[_DIRECTION] = state.direction
    obs[_PHASE + state.phase] = 1.0
    obs[_DRAWS] = state.draws
    obs[_PLAYERS + n - 2] = 1.0
    if any(state.scores):
        obs[_SCORES:_SCORES + n] = [state.scores[s] for s in [seat, *others]]
    wild = state.wild_mask(seat)
    if wild:
        obs[_WILD + (wild & -wild).bit_length() - 1] = 1.0
    voids, last_draws = state.voids, state.last_draws
    for k, other in enumerate(others):
        if voids[other]:
            obs[_VOIDS + 4 * k:_VOIDS + 4 * k + 4] = _SUIT_BITS[voids[other]]
        record = last_draws[other]
        if record is not None:
            at = _LAST_DRAWS + DRAW_RECORD_SIZE * k
            obs[at:at + DRAW_RECORD_SIZE - 1] = _record_bits(record[0], record[1])
            obs[at + DRAW_RECORD_SIZE - 1] = record[2]
        size = sizes[other]
        if size:
            suit_draws = state.suit_draws[other]
            if any(suit_draws):
                obs[_SUIT_DRAWS + 4 * k:_SUIT_DRAWS + 4 * k + 4] = [held / size for held in suit_draws]
            declared = state.declared[other]
            if declared is not None:
                obs[_DECLARED + 4 * k + declared[0]] = declared[1] / size
    if state.rules.countdown:
        obs[_COUNTDOWN:_COUNTDOWN + n] = [state.countdown[s] for s in [seat, *others]]
    return obs


def action_mask(state: State, seat: int) -> np.ndarray:
    """The int8 mask of ``seat``'s legal actions: the state's legal actions on its turn, else all zeros."""
    if seat == state.current_player and not state.hand_over:
        return state.legal_mask()
    return np.zeros(NUM_ACTIONS, dtype=np.int8)


class ObservedPosition(NamedTuple):
    """An observation vector read back: the observer's public view of the position.

    Seat-relative lists hold the observer first (``scores``, ``countdown``) or the
    opponents clockwise from the observer (``opponent_sizes``, ``opponent_voids``).
    """

    num_players: int
    hand: np.ndarray
    """Copies of each card id in the observer's hand (int, 52)."""
    top_card: int
    suit: int
    """Suit index to follow, or ``ANY_SUIT`` when any card may be played."""
    rank: int
    """Rank index that matches, or -1 (after a declared suit)."""
    discard_pile: np.ndarray
    """Copies of each card id in the discard pile (int, 52)."""
    opponent_sizes: list[int]
    stock_size: int
    pending_draw: int
    direction: int
    phase: Phase
    draws_this_turn: int
    scores: list[int]
    wild_rank: int
    """Rank index that is wild for the observer, or -1 (countdown at zero)."""
    opponent_voids: list[int]
    """Per opponent, the suits (bit ``s`` for suit ``s``) he drew or passed on since his last play."""
    countdown: list[int]
    """Countdown counts (zeros when the rules have no countdown)."""
    opponent_last_draws: list[tuple[int, int, int] | None]
    """Per opponent, his last voluntary draw or pass this hand: (suits, ranks) bit sets every card of which
    fitted then, and the fewest cards he has held since; None when he has made none."""
    opponent_suit_draws: list[tuple[int, ...]]
    """Per opponent and suit, the fewest cards he has held since his latest voluntary draw or pass at which every
    card of it fitted (0: none)."""
    opponent_declared: list[tuple[int, int] | None]
    """Per opponent, his last declaration this hand: the suit and the fewest cards he has held since; None: none."""


def decode_observation(vector: np.ndarray) -> ObservedPosition:
    """Read an observation vector (as :func:`encode_observation` writes it) back into named facts."""
    obs = np.asarray(vector)

    def part(name: str) -> np.ndarray:
        return obs[OBS_LAYOUT[name]]

    n = int(np.argmax(part("num_players"))) + 2
    rank, wild, voids = part("rank_to_follow"), part("wild_rank"), part("opponent_voids")
    sizes = [int(x) for x in part("opponent_hand_sizes")[:n - 1]]
    return ObservedPosition(
        num_players=n,
        hand=part("hand").astype(int),
        top_card=int(np.argmax(part("top_card"))),
        suit=ANY_SUIT if part("any_card")[0] else int(np.argmax(part("suit_to_follow"))),
        rank=int(np.argmax(rank)) if rank.any() else -1,
        discard_pile=part("discard_pile").astype(int),
        opponent_sizes=sizes,
        stock_size=int(part("stock_size")[0]),
        pending_draw=int(part("pending_draw")[0]),
        direction=int(part("direction")[0]),
        phase=Phase(int(np.argmax(part("phase")))),
        draws_this_turn=int(part("draws_this_turn")[0]),
        scores=[int(x) for x in part("scores")[:n]],
        wild_rank=int(np.argmax(wild)) if wild.any() else -1,
        opponent_voids=[sum(1 << s for s in range(NUM_SUITS) if voids[NUM_SUITS * k + s]) for k in range(n - 1)],
        countdown=[int(x) for x in part("countdown")[:n]],
        opponent_last_draws=[_read_record(part("opponent_last_draws")[DRAW_RECORD_SIZE * k:DRAW_RECORD_SIZE * (k + 1)])
                             for k in range(n - 1)],
        opponent_suit_draws=[tuple(round(float(share) * size) for share in part("opponent_suit_draws")[4 * k:4 * k + 4])
                             for k, size in enumerate(sizes)],
        opponent_declared=[_read_declared(part("opponent_declared")[4 * k:4 * k + 4], size)
                           for k, size in enumerate(sizes)],
    )


def _read_record(entries: np.ndarray) -> tuple[int, int, int] | None:
    """One opponent slot of ``opponent_last_draws`` read back (None: no record)."""
    if not entries.any():
        return None
    suits = sum(1 << s for s in range(NUM_SUITS) if entries[s])
    ranks = sum(1 << r for r in range(NUM_RANKS) if entries[NUM_SUITS + r])
    return suits, ranks, int(entries[-1])


def _read_declared(entries: np.ndarray, size: int) -> tuple[int, int] | None:
    """One opponent slot of ``opponent_declared`` read back (None: no declaration, or a hand of 0 cards)."""
    if not entries.any():
        return None
    suit = int(np.argmax(entries))
    return suit, round(float(entries[suit]) * size)


#: Length of the global state vector of :func:`encode_global_state` (``env.state()``): one observation per seat slot.
GLOBAL_STATE_SIZE = MAX_PLAYERS * OBS_SIZE


def encode_global_state(state: State) -> np.ndarray:
    """The global state of PettingZoo's ``env.state()``: the observation vector of every seat, seat 0
    first, in 7 slots of ``OBS_SIZE`` (zeros for seats beyond ``num_players``); float32 of
    :data:`GLOBAL_STATE_SIZE`. It holds every hand (each seat's own part); the stock's order stays out."""
    out = np.zeros(GLOBAL_STATE_SIZE, dtype=np.float32)
    for seat in range(state.num_players):
        out[seat * OBS_SIZE:(seat + 1) * OBS_SIZE] = encode_observation(state, seat)
    return out


class StateObservation(Mapping):
    """The observation dict of one seat of a state, each key computed on first access.

    Built-in agents recognise it and read the same public facts straight from the state
    (:attr:`state`, :meth:`legal_actions`) instead of decoding the vector; evaluation and
    search use it to skip encoding.
    """

    __slots__ = ("_state", "_seat", "_cache")

    def __init__(self, state: State, seat: int) -> None:
        self._state, self._seat, self._cache = state, seat, {}

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self._cache:
            if key == "observation":
                self._cache[key] = encode_observation(self._state, self._seat)
            elif key == "action_mask":
                self._cache[key] = action_mask(self._state, self._seat)
            else:
                raise KeyError(key)
        return self._cache[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("observation", "action_mask"))

    def __len__(self) -> int:
        return 2

    @property
    def seat(self) -> int:
        """The observer's seat."""
        return self._seat

    @property
    def state(self) -> State:
        """The state observed, for agents that read its public facts; it is this seat's turn when
        :meth:`legal_actions` is not empty."""
        return self._state

    def legal_actions(self) -> list[int]:
        """The observer's legal actions (empty when it is not his turn)."""
        state = self._state
        return state.legal_actions() if self._seat == state.current_player and not state.hand_over else []


def sealed_observation(state: State, seat: int) -> dict[str, np.ndarray]:
    """The observation dict of ``seat`` as a plain dict of fresh arrays (no view of anything else): what
    agents that are not c8env's own receive, so nothing they are given leads to another hand or the stock."""
    return {"observation": encode_observation(state, seat), "action_mask": action_mask(state, seat)}


#: What an agent's ``act`` takes, for error messages.
OBSERVATION_HELP = (f"the env's observation dict {{'observation': float32[{OBS_SIZE}], 'action_mask': int8[{NUM_ACTIONS}]}} "
                    "(or a StateObservation)")


def check_observation(observation: Any, who: str) -> None:
    """Refuse what is not an observation dict (a flat vector, a dict without a mask, wrong shapes) with a
    ``TypeError``/``ValueError`` naming ``who`` received what and what is allowed."""
    if isinstance(observation, StateObservation):
        return
    if not isinstance(observation, Mapping):
        shown = f"an array of shape {observation.shape}" if isinstance(observation, np.ndarray) \
            else f"{type(observation).__name__}"
        raise TypeError(f"{who}.act: got {shown}; allowed: {OBSERVATION_HELP}")
    missing = [key for key in ("observation", "action_mask") if key not in observation]
    if missing:
        raise ValueError(f"{who}.act: the observation dict lacks {missing} (keys: {sorted(map(str, observation))}); "
                         f"allowed: {OBSERVATION_HELP}")
    for key, size in (("observation", OBS_SIZE), ("action_mask", NUM_ACTIONS)):
        try:
            value = np.asarray(observation[key], dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{who}.act: observation[{key!r}] is not numeric; allowed: {OBSERVATION_HELP}") from None
        if value.shape != (size,):
            raise ValueError(f"{who}.act: observation[{key!r}] has shape {value.shape}; allowed: {OBSERVATION_HELP}")
        if key == "action_mask" and not np.isin(value, (0, 1)).all():
            raise ValueError(f"{who}.act: observation['action_mask'] holds values other than 0 and 1")


__all__ = ["DRAWS_OBS_SIZE", "DRAW_RECORD_SIZE", "EARLIER_OBS_SIZES", "GLOBAL_STATE_SIZE", "LEGACY_OBS_SIZE", "OBSERVATION_HELP", "check_observation", "fewest_cards", "OBS_LAYOUT", "OBS_SIZE", "ObservedPosition", "encode_global_state", "StateObservation", "action_mask", "decode_observation", "sealed_observation",
           "encode_observation"]
