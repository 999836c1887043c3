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

Each env version's observation is the vector's first entries (:mod:`c8env.versions`): v0 and v1 give the first
:data:`LEGACY_OBS_SIZE` (245), v2 all 401; a network trained on a version reads the first entries it was trained on.

:func:`encode_observation` writes the vector, :func:`decode_observation` reads it back
into an :class:`ObservedPosition`, :func:`action_mask` is the 60-long legal mask (all
zeros off turn), and :class:`StateObservation` is the observation dict of a seat
computed lazily from a state (c8env's own agents read the state's public facts instead
of decoding; every other agent gets :func:`sealed_observation`). NumPy only.
"""

from __future__ import annotations

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
#: The length of the vector before ``opponent_last_draws``: the observation of env versions 0 and 1.
LEGACY_OBS_SIZE = OBS_LAYOUT["opponent_last_draws"].start
#: The sizes :func:`encode_observation` writes: the observations of the env versions (:mod:`c8env.versions`).
ENCODED_SIZES = (OBS_SIZE, LEGACY_OBS_SIZE)

_HAND, _TOP, _SUIT, _RANK, _ANY, _DISCARD, _SIZES, _STOCK, _PENDING, _DIRECTION, _PHASE, _DRAWS, _PLAYERS, \
    _SCORES, _WILD, _VOIDS, _COUNTDOWN, _LAST_DRAWS, _SUIT_DRAWS, _DECLARED = (s.start for s in OBS_LAYOUT.values())


#: The other seats, clockwise from the observer: ``_OTHERS[num_players][seat]``.
_OTHERS = [[tuple((seat + k) % n for k in range(1, n)) for seat in range(n)] for n in range(MAX_PLAYERS + 1)]


def _unpack(bits: int, size: int) -> np.ndarray:
    """The first ``size`` bits of ``bits`` as float32 0s and 1s (bit i: entry i)."""
    return np.unpackbits(np.frombuffer(bits.to_bytes((size + 7) // 8, "little"), dtype=np.uint8), count=size,
                         bitorder="little").astype(np.float32)


def fewest_cards(observations: np.ndarray) -> np.ndarray:
    """The fewest cards any player holds, read from observation vectors (one, or a batch ``(k, OBS_SIZE)``):
    the observer's hand and each seated opponent's ``opponent_hand_sizes``."""
    vectors = np.asarray(observations, dtype=np.float32)
    own = vectors[..., _HAND:_HAND + NUM_CARDS].sum(-1)
    sizes = vectors[..., _SIZES:_SIZES + _MAX_OPPONENTS]
    return np.minimum(own, np.where(sizes > 0, sizes, np.inf).min(-1))


def encode_observation(state: State, seat: int, size: int = OBS_SIZE) -> np.ndarray:
    """The float32 observation vector of ``seat`` (seat-relative, hidden cards never shown): its first ``size``
    entries (an env version's observation, :mod:`c8env.versions`; the whole vector by default)."""
    if size not in ENCODED_SIZES:
        raise ValueError(f"size={size!r} is invalid; allowed: {OBS_SIZE} or {LEGACY_OBS_SIZE} (an env version's)")
    # The entries that are 0 or 1 are gathered as the bits of one int (bit i: entry i) and unpacked at once; the
    # second copies of cards (two decks) likewise, then added; the counts are set one by one.
    n = state.num_players
    held, twice = state.held_cards(seat)
    pile, pile_twice = state.discard_cards()
    bits = held | 1 << (_TOP + state.discard[-1]) | pile << _DISCARD | 1 << (_PHASE + state.phase) | 1 << (_PLAYERS + n - 2)
    if state.suit == ANY_SUIT:
        bits |= 1 << _ANY
    else:
        bits |= 1 << (_SUIT + state.suit)
    if state.rank >= 0:
        bits |= 1 << (_RANK + state.rank)
    wild = state.wild_mask(seat)
    if wild:
        bits |= 1 << (_WILD + (wild & -wild).bit_length() - 1)
    others = _OTHERS[n][seat]
    voids = state.voids
    records = []
    for k, other in enumerate(others):
        bits |= voids[other] << (_VOIDS + NUM_SUITS * k)
        if size == OBS_SIZE:
            record = state.records_of(other)
            draw = record[0]
            if draw is not None:
                bits |= (draw[0] | draw[1] << NUM_SUITS) << (_LAST_DRAWS + DRAW_RECORD_SIZE * k)
            records.append(record)
    obs = _unpack(bits, size)
    if twice or pile_twice:
        obs[:_SIZES] += _unpack(twice | pile_twice << _DISCARD, _SIZES)
    sizes = state.sizes
    for k, other in enumerate(others):
        obs[_SIZES + k] = sizes[other]
    obs[_STOCK] = len(state.stock)
    if state.pending:
        obs[_PENDING] = state.pending
    obs[_DIRECTION] = state.direction
    if state.draws:
        obs[_DRAWS] = state.draws
    scores = state.scores
    if any(scores):
        obs[_SCORES] = scores[seat]
        for k, other in enumerate(others):
            obs[_SCORES + 1 + k] = scores[other]
    if state.rules.countdown:
        obs[_COUNTDOWN:_COUNTDOWN + n] = [state.countdown[s] for s in [seat, *others]]
    for k, (draw, suit_draws, declared) in enumerate(records):
        if draw is not None and draw[2]:
            obs[_LAST_DRAWS + DRAW_RECORD_SIZE * k + DRAW_RECORD_SIZE - 1] = draw[2]
        hand_size = sizes[others[k]]
        if hand_size:
            at = _SUIT_DRAWS + NUM_SUITS * k
            for suit in range(NUM_SUITS):
                if suit_draws[suit]:
                    obs[at + suit] = suit_draws[suit] / hand_size
            if declared is not None:
                obs[_DECLARED + NUM_SUITS * k + declared[0]] = declared[1] / hand_size
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


def encode_global_state(state: State, size: int = OBS_SIZE) -> np.ndarray:
    """The global state of PettingZoo's ``env.state()``: the observation vector (of ``size`` entries) of every
    seat, seat 0 first, in 7 slots (zeros for seats beyond ``num_players``); float32 of ``7 * size``. It holds
    every hand (each seat's own part); the stock's order stays out."""
    out = np.zeros(MAX_PLAYERS * size, dtype=np.float32)
    for seat in range(state.num_players):
        out[seat * size:(seat + 1) * size] = encode_observation(state, seat, size)
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


def check_observation(observation: Any, who: str, needs: int = OBS_SIZE) -> None:
    """Refuse what is not an observation dict (a flat vector, a dict without a mask, wrong shapes) with a
    ``TypeError``/``ValueError`` naming ``who`` received what and what is allowed. The vector may be any env
    version's (:data:`ENCODED_SIZES`) that holds the first ``needs`` entries ``who`` reads."""
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
    sizes = [size for size in ENCODED_SIZES if size >= needs]
    for key, allowed in (("observation", sizes), ("action_mask", [NUM_ACTIONS])):
        try:
            value = np.asarray(observation[key], dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{who}.act: observation[{key!r}] is not numeric; allowed: {OBSERVATION_HELP}") from None
        if value.ndim != 1 or value.shape[0] not in allowed:
            reads = "" if key == "action_mask" else \
                f" ({who} reads {needs} entries; the env versions' observations have {OBS_SIZE} or {LEGACY_OBS_SIZE}: " \
                "c8env.versions)"
            raise ValueError(f"{who}.act: observation[{key!r}] has shape {value.shape}; allowed: "
                             f"{' or '.join(f'({size},)' for size in allowed)}{reads}")
        if key == "action_mask" and not np.isin(value, (0, 1)).all():
            raise ValueError(f"{who}.act: observation['action_mask'] holds values other than 0 and 1")


__all__ = ["DRAW_RECORD_SIZE", "ENCODED_SIZES", "GLOBAL_STATE_SIZE", "LEGACY_OBS_SIZE", "OBSERVATION_HELP", "check_observation", "fewest_cards", "OBS_LAYOUT", "OBS_SIZE", "ObservedPosition", "encode_global_state", "StateObservation", "action_mask", "decode_observation", "sealed_observation",
           "encode_observation"]
