"""The rules engine: a pure, seeded Crazy Eights state machine (no PettingZoo, no torch).

Hands are pairs of 52-bit sets (cards held at least once, cards held twice), so
one or two decks need no special case and legal moves are a few integer
operations. Play is driven by an explicit phase:

- ``PLAY``: the player to act plays a card, draws, passes or calls stop;
- ``DECLARE``: the player who just played a wild card (or the dealer, under
  ``starter_wild: dealer_declares``) names the suit to follow;
- ``ANNOUNCE``: under ``last_card_call``, the player left with one card
  announces "last card" (or passes, and draws the penalty);
- ``OVER``: the hand has ended; :meth:`State.next_hand` deals the next hand of a
  match.

Action ids are those of :mod:`c8env.actions` (0-51 play a card, 52-55 declare a
suit, 56 draw, 57 pass, 58 announce "last card", 59 stop). ``docs/rules.md`` states
every rule and variant; the engine's decisions where traditional rules leave a
detail open (also listed there):

- A hand ends the moment a player plays his last card, even a wild card (no suit
  is declared) and even under ``last_card_call`` (nothing to announce).
- A draw penalty is owed by the next player, who may answer with a legally
  matching card that has a draw effect (never with his own wild card) or take
  the whole penalty (``DRAW``), which ends his turn. If the stock runs out while a
  penalty is drawn, it is refilled under ``reshuffle``; the rest of the penalty is
  forgiven when it cannot be; under ``stock_exhausted: end`` the hand ends there.
  A penalty turn that drew nothing counts as a pass for the blocked-hand rule.
- Under ``stock_exhausted: end`` a pass made because the stock is empty (the
  draw limit not yet reached) ends the hand, scored as blocked.
- A new hand starts clockwise; the first player is the dealer's left-hand
  neighbour, the seat after the dealer.
- Countdown: a card is wild for the player whose count names its rank (count k =
  rank index k-1: 8, 7, ..., A) and a normal card for the others; a starter that
  is anybody's wild card counts as wild (buried, or declared by the dealer). The
  countdown ends the match (it replaces ``match_target`` and ``match_hands``).
- Sudden death: after a match's regular end, when the best total is tied, whole
  hands (all players) are played until one player's total is strictly best.
- The wild starter is buried in the middle of the stock (position len // 2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from typing import Any, TypeVar

import numpy as np

from c8env.actions import (
    ANNOUNCE,
    DECLARE_ACTIONS,
    DECLARE_BASE,
    DRAW,
    NUM_ACTIONS,
    PASS,
    STOP,
    ActionRangeError,
    ActionTypeError,
    IllegalActionError,
    action_id,
    action_text,
)
from c8env.cards import (
    ALL_CARDS_MASK,
    NUM_CARDS,
    NUM_RANKS,
    NUM_SUITS,
    RANK_MASKS,
    RANKS,
    SUIT_MASKS,
    SUITS,
    card_text,
    iter_bits,
    parse_card,
    parse_rank,
    parse_suit,
)
from c8env.rules import Effect, RuleSet, load_rules

T = TypeVar("T")


class Phase(IntEnum):
    """What the player to act does: play (or draw, pass, stop), declare a suit, announce; or the hand is over."""

    PLAY = 0
    DECLARE = 1
    ANNOUNCE = 2
    OVER = 3


# ``State.phase`` always holds a member, so the engine compares phases by identity (``is``): fast, exact.
PLAY, DECLARE, ANNOUNCE_PHASE, OVER = Phase
PHASE_NAMES = tuple(phase.name.lower() for phase in Phase)
#: Why a hand ended, by code: the envs' ``info["end_reason"]`` is the index of the name here, and
#: :attr:`State.end_reason` the name (``None`` for code 0). 0 ``none``: no hand ended (one still running, or
#: cut off at ``max_steps``); 1 ``out``: a player went out; 2 ``blocked``: every player passed in turn, fewest
#: points wins; 3 ``stop``: a player called stop; 4 ``stock``: the stock ran out under ``stock_exhausted: end``.
END_REASONS = ("none", "out", "blocked", "stop", "stock")
#: ``State.suit`` when any card may be played (an ``any_next`` card lies on top).
ANY_SUIT = 4
MIN_PLAYERS, MAX_PLAYERS = 2, 7

# Plain ints for the per-card effect table (comparing exact ints is CPython's fast path).
SKIP, REVERSE, DRAW_EFFECT, ANY_NEXT = (int(e) for e in (Effect.SKIP, Effect.REVERSE, Effect.DRAW, Effect.ANY_NEXT))
_ANNOUNCE_ACTIONS = (PASS, ANNOUNCE)
_STATE_KEYS = (
    "num_players", "hands", "stock", "discard", "current_player", "dealer", "suit_to_follow", "rank_to_follow",
    "direction", "phase", "pending_draw", "draws_this_turn", "passes", "scores", "hands_played", "countdown",
    "voids", "last_draws", "suit_draws", "declared", "winner", "rules",
)
#: Keys a state dict must hold (docs/state-format.md).
REQUIRED_STATE_KEYS = ("hands", "stock", "discard")

#: A seat's last voluntary draw or pass in this hand: (the suits, the ranks) every card of which fitted then,
#: wild cards included, as bit sets, and the fewest cards he has held since (docs/state-format.md).
DrawRecord = tuple[int, int, int]
#: A seat's record per suit (clubs, diamonds, hearts, spades): the fewest cards he has held since his latest voluntary
#: draw or pass in this hand at which every card of that suit fitted (0: none; docs/state-format.md).
SuitDraws = tuple[int, int, int, int]
#: A seat's last declaration in this hand: (the suit declared, the fewest cards he has held since).
Declaration = tuple[int, int]
_WHOLE: dict[int, tuple[int, int]] = {}
_FITTED: dict[int, int] = {}
#: A seat's records in ``State._records``, ``_STRIDE`` ints a seat: the cards held at his last draw or pass (the
#: draw record's ``held``), one such per suit (0: none), at his last declaration, the suits and ranks of the draw
#: record (``suits | ranks << 4``, 0: none: a record always has a suit) and the suit declared plus 1 (0: none).
#: Each ``held`` is as of his latest record (draw, pass or declaration): the fewest cards held since is the lower
#: of it and ``State._low``, the fewest he has held after a play since then (folded in at each record).
_DRAW_HELD, _SUIT_HELD, _DECLARED_HELD, _FIT, _DECLARED, _STRIDE = 0, 1, 5, 6, 7, 8
#: ``State._low`` of a seat that has played no card since his latest record.
_NO_PLAY = 1 << 62
#: The suits (indices) in a 4-bit suit set.
_SUITS_IN = tuple(tuple(s for s in range(NUM_SUITS) if (v >> s) & 1) for v in range(16))


def whole_suits_and_ranks(cards: int) -> tuple[int, int]:
    """The suits and the ranks (bit sets) all of whose cards lie in the card set ``cards``."""
    found = _WHOLE.get(cards)
    if found is None:
        suits = sum(1 << s for s, mask in enumerate(SUIT_MASKS) if mask & cards == mask)
        ranks = sum(1 << r for r, mask in enumerate(RANK_MASKS) if mask & cards == mask)
        found = _WHOLE[cards] = (suits, ranks)
    return found


def _fitted(cards: int) -> int:
    """:func:`whole_suits_and_ranks` of ``cards`` packed in one int, ``suits | ranks << 4``."""
    found = _FITTED.get(cards)
    if found is None:
        suits, ranks = whole_suits_and_ranks(cards)
        found = _FITTED[cards] = suits | ranks << 4
    return found


def wild_mask_for(rules: RuleSet, count: int) -> int:
    """Bit set of a player's wild cards: the rules' wild rank, or under countdown the rank his
    count names (count k = rank index k-1; none at 0)."""
    if rules.countdown:
        return RANK_MASKS[count - 1] if count > 0 else 0
    return rules.wild_mask


#: Cards each player is dealt in the first hand of a countdown match (one fewer after each hand he wins).
COUNTDOWN_START = 8


def check_deal_fits(rules: RuleSet, num_players: int, sizes: Sequence[int] | None = None) -> None:
    """Refuse (``ValueError``) a deal the decks cannot hold: ``sizes`` are the hands to deal, by default those
    of a match's first hand, so env constructors refuse such rules where they are given."""
    if sizes is None:
        sizes = [COUNTDOWN_START if rules.countdown else rules.deal_size(num_players)] * num_players
    decks = rules.num_decks(num_players)
    needed = sum(sizes) + 1
    if needed > decks * NUM_CARDS:
        raise ValueError(
            f"the deal needs {needed} cards (hands plus the starter) but decks={decks} holds "
            f"{decks * NUM_CARDS} for {num_players} players; lower hand_size or set decks: 2"
        )


def check_num_players(num_players: Any) -> int:
    """Validate a player count (2-7)."""
    if not isinstance(num_players, (int, np.integer)) or isinstance(num_players, bool) or not (
        MIN_PLAYERS <= num_players <= MAX_PLAYERS
    ):
        raise ValueError(f"num_players={num_players!r} is invalid; allowed: an int from 2 to 7")
    return int(num_players)


def check_seed(seed: Any) -> int | None:
    """Validate a seed: None, or an int >= 0 (numpy integers too); returns it as a plain int or None."""
    if seed is None:
        return None
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= 0:
        return int(seed)
    raise ValueError(f"seed={seed!r} is invalid; allowed: None or an int >= 0")


def _entropy(seed: Any) -> int:
    seed = check_seed(seed)
    return int(np.random.SeedSequence().entropy) if seed is None else seed


class State:
    """One position of a Crazy Eights match: the hand in play, the match scores and the rules.

    Create with :meth:`new` (a seeded deal) or :meth:`from_dict`; advance with :meth:`apply`.
    """

    __slots__ = (
        "rules", "num_players", "_held", "_twice", "sizes", "stock", "discard", "current", "dealer", "suit", "rank",
        "direction", "phase", "pending", "draws", "passes", "scores", "hands_played", "countdown", "voids",
        "_low", "_records", "_pile", "_pile_twice", "winner", "end_reason", "_entropy", "_reshuffles", "_follow", "_wild_masks", "_legal",
    )

    # ----- construction -----------------------------------------------------------------------------
    @classmethod
    def _blank(cls, rules: RuleSet, num_players: int, entropy: int) -> State:
        s = cls.__new__(cls)
        s.rules = rules
        s.num_players = num_players
        s._held = [0] * num_players
        s._twice = [0] * num_players
        s.sizes = [0] * num_players
        s.stock = []
        s.discard = []
        s._pile = s._pile_twice = 0
        s.current = 0
        s.dealer = 0
        s.suit = 0
        s.rank = -1
        s.direction = 1
        s.phase = PLAY
        s.pending = 0
        s.draws = 0
        s.passes = 0
        s.scores = [0] * num_players
        s.hands_played = 0
        s.countdown = [COUNTDOWN_START] * num_players
        s.voids = [0] * num_players
        s._low = [_NO_PLAY] * num_players
        s._records = [0] * (_STRIDE * num_players)
        s.winner = None
        s.end_reason = None
        s._entropy = entropy
        s._reshuffles = 0
        s._follow = 0
        s._legal = None
        s._set_wild_masks()
        return s

    @classmethod
    def new(cls, num_players: int = 2, rules: Any = "standard", seed: int | None = None) -> State:
        """Deal the first hand of a match; the first dealer is drawn from ``seed``."""
        num_players = check_num_players(num_players)
        rules = load_rules(rules)
        s = cls._blank(rules, num_players, _entropy(seed))
        s._check_deal_fits()
        rng = s._rng(0)
        s.dealer = int(rng.integers(num_players))
        s._deal(rng)
        return s

    def _rng(self, stream: int) -> np.random.Generator:
        """Generator for this hand's deal (stream 0) or its k-th reshuffle (stream k)."""
        return np.random.default_rng([self._entropy, self.hands_played, stream])

    def _set_wild_masks(self) -> None:
        self._wild_masks = [wild_mask_for(self.rules, count) for count in self.countdown]

    def _deal_sizes(self) -> list[int]:
        if self.rules.countdown:
            return list(self.countdown)
        return [self.rules.deal_size(self.num_players)] * self.num_players

    def _check_deal_fits(self) -> None:
        check_deal_fits(self.rules, self.num_players, self._deal_sizes())

    def _deal(self, rng: np.random.Generator) -> None:
        n = self.num_players
        deck = list(range(NUM_CARDS)) * self.rules.num_decks(n)
        stock = [deck[i] for i in rng.permutation(len(deck)).tolist()]
        self._held = [0] * n
        self._twice = [0] * n
        self.sizes = [0] * n
        self._set_wild_masks()
        want = self._deal_sizes()
        for _ in range(max(want)):
            for k in range(1, n + 1):
                seat = (self.dealer + k) % n
                if self.sizes[seat] < want[seat]:
                    self._add(seat, stock.pop())
        any_wild = 0
        for mask in self._wild_masks:
            any_wild |= mask
        starter = stock.pop()
        if self.rules.starter_wild == "bury":
            for _ in range(len(stock)):
                if not (any_wild >> starter) & 1:
                    break
                stock.insert(len(stock) // 2, starter)
                starter = stock.pop()
        self.stock = stock
        self.discard = [starter]
        self._pile, self._pile_twice = 1 << starter, 0
        self.direction = 1
        self.pending = self.draws = self.passes = 0
        self.voids = [0] * n
        self._low = [_NO_PLAY] * n
        self._records = [0] * (_STRIDE * n)
        self.winner = self.end_reason = None
        self._reshuffles = 0
        self._legal = None
        if (any_wild >> starter) & 1:
            self.phase, self.current = DECLARE, self.dealer
            self._set_top(starter // NUM_RANKS, -1)
        else:
            self.phase, self.current = PLAY, (self.dealer + 1) % n
            self._set_top(starter // NUM_RANKS, starter % NUM_RANKS)

    def next_hand(self) -> None:
        """Deal the next hand of the match (the deal passes to the left)."""
        if self.phase is not OVER:
            raise ValueError("next_hand() needs a finished hand; the current hand is still in play")
        if self.match_over:
            raise ValueError("next_hand() called after the match ended")
        self.dealer = (self.dealer + 1) % self.num_players
        self._deal(self._rng(0))

    def copy(self) -> State:
        """An independent copy (cheap: a few list copies)."""
        s = State.__new__(State)
        s.rules = self.rules
        s.num_players = self.num_players
        s._held = self._held[:]
        s._twice = self._twice[:]
        s.sizes = self.sizes[:]
        s.stock = self.stock[:]
        s.discard = self.discard[:]
        s._pile = self._pile
        s._pile_twice = self._pile_twice
        s.current = self.current
        s.dealer = self.dealer
        s.suit = self.suit
        s.rank = self.rank
        s.direction = self.direction
        s.phase = self.phase
        s.pending = self.pending
        s.draws = self.draws
        s.passes = self.passes
        s.scores = self.scores[:]
        s.hands_played = self.hands_played
        s.countdown = self.countdown[:]
        s.voids = self.voids[:]
        s._low = self._low[:]
        s._records = self._records[:]
        s.winner = self.winner
        s.end_reason = self.end_reason
        s._entropy = self._entropy
        s._reshuffles = self._reshuffles
        s._follow = self._follow
        s._wild_masks = self._wild_masks
        s._legal = self._legal
        return s

    def with_hidden_cards(self, hands: Mapping[int, Sequence[int]], stock: Sequence[int]) -> State:
        """A copy whose given seats hold other cards and whose stock is replaced (for determinizing
        search agents; card ids, the stock's last element on top). Card counts are not checked."""
        s = self.copy()
        for seat, cards in hands.items():
            s._held[seat] = s._twice[seat] = s.sizes[seat] = 0
            for card in cards:
                s._add(seat, card)
        s.stock = list(stock)
        s._legal = None
        return s

    # ----- small helpers ----------------------------------------------------------------------------
    def _add(self, seat: int, card: int) -> None:
        bit = 1 << card
        if self._held[seat] & bit:
            self._twice[seat] |= bit
        else:
            self._held[seat] |= bit
        self.sizes[seat] += 1

    def _set_top(self, suit: int, rank: int) -> None:
        """Set what the next card must match: a suit (or ANY_SUIT) and a rank (-1: none)."""
        self.suit = suit
        self.rank = rank
        if suit == ANY_SUIT:
            self._follow = ALL_CARDS_MASK
        else:
            self._follow = SUIT_MASKS[suit] | (RANK_MASKS[rank] if rank >= 0 else 0)

    def held_cards(self, seat: int) -> tuple[int, int]:
        """A seat's hand as two card sets (bit ``c`` set for card id ``c``): the cards held at least
        once, and the cards held twice (two decks)."""
        return self._held[seat], self._twice[seat]

    def discard_cards(self) -> tuple[int, int]:
        """The discard pile as two card sets, as :meth:`held_cards`: the cards in it at least once, and twice."""
        return self._pile, self._pile_twice

    def follow_mask(self) -> int:
        """The card set that matches the top of the discard pile by suit or rank (every card while an
        ``any_next`` card lies on top); wild cards are not included unless they match."""
        return self._follow

    def hand(self, seat: int) -> list[int]:
        """Card ids in a seat's hand, ascending (a card held twice appears twice)."""
        return sorted(iter_bits(self._held[seat]) + iter_bits(self._twice[seat]))

    def hand_points(self, seat: int) -> int:
        """Points of the cards in a seat's hand."""
        table = self.rules.point_table
        return sum(table[c] for c in iter_bits(self._held[seat])) + sum(table[c] for c in iter_bits(self._twice[seat]))

    def wild_mask(self, seat: int) -> int:
        """Bit set of the cards that are wild for a seat."""
        return self._wild_masks[seat]

    @property
    def generator_key(self) -> tuple[int, int]:
        """``(entropy, reshuffles)``: the match's seed and the reshuffles of this hand so far, which
        seed this hand's next reshuffle (``default_rng([entropy, hands_played, reshuffles + 1])``)."""
        return self._entropy, self._reshuffles

    @property
    def current_player(self) -> int:
        """Seat to act."""
        return self.current

    @property
    def hand_over(self) -> bool:
        """Has the hand ended?"""
        return self.phase is OVER

    @property
    def top_card(self) -> int:
        """Id of the top card of the discard pile."""
        return self.discard[-1]

    # ----- legal actions ----------------------------------------------------------------------------
    def _compute_legal(self) -> Sequence[int]:
        """The legal actions, ascending (kept in ``_legal`` until the next move, and never changed)."""
        phase = self.phase
        if phase is PLAY:
            p = self.current
            rules = self.rules
            if self.pending:
                defence = self._held[p] & self._follow & rules.draw_cards_mask & ~self._wild_masks[p]
                return (*iter_bits(defence), DRAW)
            playable = self._held[p] & (self._follow | self._wild_masks[p])
            acts = []
            bits = playable
            while bits:  # iter_bits, inlined
                low = bits & -bits
                acts.append(low.bit_length() - 1)
                bits ^= low
            limit = rules.max_draws_per_turn
            draws = self.draws
            if (limit is None or draws < limit) and (not playable or rules.draw_when_able) and (
                    self.stock or (rules.stock_exhausted == "reshuffle" and len(self.discard) > 1)):
                acts.append(DRAW)
            elif not playable or draws == limit:
                acts.append(PASS)
            threshold = rules.stop_threshold
            if threshold is not None and draws == 0 and self.hand_points(p) <= threshold:
                acts.append(STOP)
            return acts
        if phase is DECLARE:
            return DECLARE_ACTIONS
        if phase is ANNOUNCE_PHASE:
            return _ANNOUNCE_ACTIONS
        return ()

    def legal_actions(self) -> list[int]:
        """Legal action ids for the player to act, ascending (empty when the hand is over)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return list(legal)

    def legal_mask(self) -> np.ndarray:
        """The 60-long int8 mask of legal actions."""
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        for action in legal:  # a few actions: cheaper one by one than as an index array
            mask[action] = 1
        return mask

    # ----- transitions ------------------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Apply one action of the player to act; raises :class:`IllegalActionError` and changes
        nothing if the action is not legal."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if type(action) is not int:
            action = self.check_action(action)
        if action not in legal:
            if not 0 <= action < NUM_ACTIONS:
                self.check_action(action)
            raise IllegalActionError(self._illegal_message(action, legal))
        self._legal = None
        p = self.current
        phase = self.phase
        if phase is PLAY:
            if action < NUM_CARDS:
                self._play(p, action)
            elif action == DRAW:
                if self.pending:
                    self._take_penalty(p)
                else:
                    self._draw(p)
            elif action == PASS:
                self._pass(p)
            else:
                self._end_hand(None, "stop")
        elif phase is DECLARE:
            suit = action - DECLARE_BASE
            self._set_top(suit, -1)
            self._record_declaration(p, suit)
            if len(self.discard) == 1:  # the dealer declared for a wild starter
                self._advance(1)
            else:
                self._after_play(p)
        else:  # ANNOUNCE_PHASE
            if action == PASS and self._penalty_draw(p, self.rules.last_card_penalty) < 0:
                return
            self._end_turn_after_play()

    def check_action(self, action: Any) -> int:
        """``action`` as a plain int action id (see :func:`c8env.actions.action_id`), legal or not; raises
        :class:`~c8env.actions.ActionTypeError` or :class:`~c8env.actions.ActionRangeError` (both
        :class:`IllegalActionError`) naming the legal actions when it is no action id at all."""
        try:
            return action_id(action)
        except (ActionTypeError, ActionRangeError) as err:
            legal = self.legal_actions()
            named = ", ".join(f"{a} ({action_text(a)})" for a in legal)
            raise type(err)(f"{err}; legal now: {named or 'none (the hand is over)'}") from None

    def _illegal_message(self, action: int, legal: Sequence[int]) -> str:
        if self.phase is OVER:
            return f"action {action} ({action_text(action)}) is illegal: the hand is over"
        named = ", ".join(f"{a} ({action_text(a)})" for a in legal)
        return (
            f"action {action} ({action_text(action)}) is illegal for player {self.current} in phase "
            f"{PHASE_NAMES[self.phase]!r}; legal: {named}"
        )

    def _play(self, p: int, card: int) -> None:
        # The engine's hottest path: the card leaves the hand, then _set_top, _after_play, _end_turn_after_play and
        # _advance for a card played normally, inlined.
        bit = 1 << card
        if self._twice[p] & bit:
            self._twice[p] ^= bit
        else:
            self._held[p] ^= bit
        size = self.sizes[p] - 1
        self.sizes[p] = size
        self.discard.append(card)
        if self._pile & bit:
            self._pile_twice |= bit
        else:
            self._pile |= bit
        self.voids[p] = 0
        self.passes = 0
        low = self._low
        if size < low[p]:
            low[p] = size
        if size == 0:
            self._end_hand(p, "out")
            return
        suit, rank = divmod(card, NUM_RANKS)
        if (self._wild_masks[p] >> card) & 1:
            self.phase = DECLARE
            self._set_top(suit, -1)
            return
        rules = self.rules
        effect = rules.effect_table[card]
        self.rank = rank
        if effect == ANY_NEXT:
            self.suit = ANY_SUIT
            self._follow = ALL_CARDS_MASK
        else:
            self.suit = suit
            self._follow = SUIT_MASKS[suit] | RANK_MASKS[rank]
            if effect == DRAW_EFFECT:
                self.pending += rules.draw_table[card]
        if rules.last_card_call and size == 1:
            self.phase = ANNOUNCE_PHASE
            return
        if effect == SKIP:
            self.current = (p + 2 * self.direction) % self.num_players
        else:
            if effect == REVERSE:
                self.direction = -self.direction
            self.current = (p + self.direction) % self.num_players
        self.draws = 0

    def _after_play(self, p: int) -> None:
        if self.rules.last_card_call and self.sizes[p] == 1:
            self.phase = ANNOUNCE_PHASE
        else:
            self._end_turn_after_play()

    def _end_turn_after_play(self) -> None:
        """End the turn of a player who played a card: apply its skip or reverse."""
        step = 1
        if self.rank >= 0:  # a card played as a wild card (rank -1) carries no effect
            effect = self.rules.effect_table[self.discard[-1]]
            if effect == SKIP:
                step = 2
            elif effect == REVERSE:
                self.direction = -self.direction
        self._advance(step)

    def _advance(self, step: int) -> None:
        self.current = (self.current + step * self.direction) % self.num_players
        self.phase = PLAY
        self.draws = 0

    def _reshuffle(self) -> None:
        top = self.discard.pop()
        rest = self.discard
        self._reshuffles += 1
        self.stock = [rest[i] for i in self._rng(self._reshuffles).permutation(len(rest)).tolist()]
        self.discard = [top]
        self._pile, self._pile_twice = 1 << top, 0

    def _draw(self, p: int) -> None:
        if not self.stock:
            self._reshuffle()
        bit = 1 << self.stock.pop()  # _add, inlined
        if self._held[p] & bit:
            self._twice[p] |= bit
        else:
            self._held[p] |= bit
        self.sizes[p] += 1
        self.draws += 1
        self.passes = 0
        if self.suit != ANY_SUIT:
            self.voids[p] |= 1 << self.suit
        self._record_draw(p)

    def _record_draw(self, p: int) -> None:
        """Note seat ``p``'s voluntary draw or pass: what fitted, and his hand size (his other records take the
        fewest cards he has held since his previous record)."""
        size = self.sizes[p]
        low = self._low[p]
        self._low[p] = _NO_PLAY
        rec = self._records
        b = _STRIDE * p
        fitting = self._follow | self._wild_masks[p]
        fit = _FITTED.get(fitting) or _fitted(fitting)
        rec[b + _DRAW_HELD] = size
        rec[b + _FIT] = fit
        if low != _NO_PLAY:  # he played since his previous record: the records this one leaves take it
            i = b + _SUIT_HELD
            if rec[i] > low:
                rec[i] = low
            if rec[i + 1] > low:
                rec[i + 1] = low
            if rec[i + 2] > low:
                rec[i + 2] = low
            if rec[i + 3] > low:
                rec[i + 3] = low
            if rec[b + _DECLARED_HELD] > low:
                rec[b + _DECLARED_HELD] = low
        for suit in _SUITS_IN[fit & 15]:
            rec[b + _SUIT_HELD + suit] = size

    def _record_declaration(self, p: int, suit: int) -> None:
        """Note seat ``p``'s declaration of ``suit`` (his other records take the fewest cards he has held since his
        previous record)."""
        size = self.sizes[p]
        low = self._low[p]
        self._low[p] = _NO_PLAY
        rec = self._records
        b = _STRIDE * p
        for i in range(b, b + _DECLARED_HELD):
            if rec[i] > low:
                rec[i] = low
        rec[b + _DECLARED_HELD] = size
        rec[b + _DECLARED] = suit + 1

    @property
    def last_draws(self) -> list[DrawRecord | None]:
        """Per seat, his last voluntary draw or pass in this hand (:data:`DrawRecord`), or None."""
        return [self.records_of(seat)[0] for seat in range(self.num_players)]

    @property
    def suit_draws(self) -> list[SuitDraws]:
        """Per seat, his record per suit (:data:`SuitDraws`)."""
        return [self.records_of(seat)[1] for seat in range(self.num_players)]

    @property
    def declared(self) -> list[Declaration | None]:
        """Per seat, his last declaration in this hand (:data:`Declaration`), or None."""
        return [self.records_of(seat)[2] for seat in range(self.num_players)]

    def records_of(self, seat: int) -> tuple[DrawRecord | None, SuitDraws, Declaration | None]:
        """A seat's records as they stand: his last voluntary draw or pass in this hand (:data:`DrawRecord`, None:
        none), his record per suit (:data:`SuitDraws`) and his last declaration (:data:`Declaration`, None: none)."""
        b = _STRIDE * seat
        draw_held, clubs, diamonds, hearts, spades, declared_held, fit, declared = self._records[b:b + _STRIDE]
        low = self._low[seat]
        if low != _NO_PLAY:  # he played since his latest record
            draw_held, declared_held = min(draw_held, low), min(declared_held, low)
            clubs, diamonds, hearts, spades = min(clubs, low), min(diamonds, low), min(hearts, low), min(spades, low)
        return ((fit & 15, fit >> 4, draw_held) if fit else None, (clubs, diamonds, hearts, spades),
                (declared - 1, declared_held) if declared else None)

    def _set_records(self, last_draws: Sequence[DrawRecord | None], suit_draws: Sequence[SuitDraws],
                     declared: Sequence[Declaration | None]) -> None:
        """Set every seat's records (``held`` values as they stand now)."""
        rec = [0] * (_STRIDE * self.num_players)
        for seat in range(self.num_players):
            b = _STRIDE * seat
            draw, declaration = last_draws[seat], declared[seat]
            if draw is not None:
                rec[b + _FIT] = draw[0] | draw[1] << 4
                rec[b + _DRAW_HELD] = draw[2]
            rec[b + _SUIT_HELD:b + _SUIT_HELD + NUM_SUITS] = suit_draws[seat]
            if declaration is not None:
                rec[b + _DECLARED] = declaration[0] + 1
                rec[b + _DECLARED_HELD] = declaration[1]
        self._records = rec
        self._low = [_NO_PLAY] * self.num_players

    def _penalty_draw(self, p: int, count: int) -> int:
        """Draw a penalty; returns the cards drawn, or -1 if the empty stock ended the hand."""
        rules = self.rules
        drawn = 0
        for _ in range(count):
            if not self.stock:
                if rules.stock_exhausted == "end":
                    self._end_hand(None, "stock")
                    return -1
                if rules.stock_exhausted == "pass" or len(self.discard) < 2:
                    break
                self._reshuffle()
            self._add(p, self.stock.pop())
            drawn += 1
        return drawn

    def _take_penalty(self, p: int) -> None:
        drawn = self._penalty_draw(p, self.pending)
        if drawn < 0:
            return
        self.pending = 0
        if drawn:
            self.passes = 0
        else:
            self.passes += 1
            if self.passes >= self.num_players:
                self._end_hand(None, "blocked")
                return
        self._advance(1)

    def _pass(self, p: int) -> None:
        if self.suit != ANY_SUIT:
            self.voids[p] |= 1 << self.suit
        self._record_draw(p)
        rules = self.rules
        limit = rules.max_draws_per_turn
        if rules.stock_exhausted == "end" and not self.stock and (limit is None or self.draws < limit):
            self._end_hand(None, "stock")
            return
        if self.draws == 0:
            self.passes += 1
            if self.passes >= self.num_players:
                self._end_hand(None, "blocked")
                return
        self._advance(1)

    def _end_hand(self, winner: int | None, reason: str) -> None:
        """End the hand: ``winner`` went out, or (winner None) find the strictly lowest hand."""
        n = self.num_players
        points = [self.hand_points(i) for i in range(n)]
        if winner is None:
            lowest = min(points)
            if points.count(lowest) == 1:
                winner = points.index(lowest)
        if self.rules.scoring == "penalty":
            for i in range(n):
                self.scores[i] += points[i]
        elif winner is not None:
            self.scores[winner] += sum(points) - n * points[winner]
        if winner is not None and self.rules.countdown:
            self.countdown[winner] -= 1
        self.winner = winner
        self.end_reason = reason
        self.phase = OVER
        self.pending = 0
        self.hands_played += 1

    # ----- results ----------------------------------------------------------------------------------
    def hand_transfers(self) -> list[int]:
        """Zero-sum points of a finished hand: each loser pays his hand points minus the winner's,
        the winner receives the sum; all zeros when nobody won (tie for fewest)."""
        if self.phase is not OVER:
            raise ValueError("hand_transfers() needs a finished hand")
        n = self.num_players
        if self.winner is None:
            return [0] * n
        points = [self.hand_points(i) for i in range(n)]
        pay = [points[i] - points[self.winner] for i in range(n)]
        pay[self.winner] = 0
        out = [-x for x in pay]
        out[self.winner] = sum(pay)
        return out

    def _best_seats(self) -> list[int]:
        best = min(self.scores) if self.rules.scoring == "penalty" else max(self.scores)
        return [i for i, s in enumerate(self.scores) if s == best]

    @property
    def match_over(self) -> bool:
        """Has the match ended (after this finished hand)?"""
        if self.phase is not OVER:
            return False
        rules = self.rules
        if rules.countdown:
            return min(self.countdown) == 0
        if rules.match_hands is not None:
            reached = self.hands_played >= rules.match_hands
        else:  # both scorings end once somebody reaches the target
            reached = max(self.scores) >= rules.target(self.num_players)
        return reached and len(self._best_seats()) == 1

    @property
    def match_winner(self) -> int | None:
        """Seat that won the match, or None while it goes on."""
        if not self.match_over:
            return None
        if self.rules.countdown:
            return self.countdown.index(0)
        return self._best_seats()[0]

    # ----- state as data ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data in the format of docs/state-format.md; :meth:`from_dict` rebuilds the state."""
        return {
            "num_players": self.num_players,
            "hands": [[card_text(c) for c in self.hand(i)] for i in range(self.num_players)],
            "stock": [card_text(c) for c in self.stock],
            "discard": [card_text(c) for c in self.discard],
            "current_player": self.current,
            "dealer": self.dealer,
            "suit_to_follow": "*" if self.suit == ANY_SUIT else SUITS[self.suit],
            "rank_to_follow": None if self.rank < 0 else RANKS[self.rank],
            "direction": self.direction,
            "phase": PHASE_NAMES[self.phase],
            "pending_draw": self.pending,
            "draws_this_turn": self.draws,
            "passes": self.passes,
            "scores": list(self.scores),
            "hands_played": self.hands_played,
            "countdown": list(self.countdown),
            "voids": [[SUITS[s] for s in range(4) if (v >> s) & 1] for v in self.voids],
            "last_draws": [draw_record_data(record) for record in self.last_draws],
            "suit_draws": [suit_draws_data(record) for record in self.suit_draws],
            "declared": [declaration_data(record) for record in self.declared],
            "winner": self.winner,
            "rules": self.rules.spec(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], rules: Any = None, seed: int | None = None) -> State:
        """Rebuild a state from :meth:`to_dict` data (missing optional keys take their defaults).

        The rules are the dict's ``rules`` key (a preset name, or a mapping of ``preset`` and the fields
        that differ); without it, the ``rules`` argument (a preset name, YAML path, dict or RuleSet),
        else ``standard``. A ``rules`` argument that contradicts the dict's ``rules`` key is a
        ``ValueError``. The whole position is checked against the rules (docs/state-format.md, "What
        ``from_dict`` checks"). ``seed`` seeds later reshuffles and deals, which the dict does not describe.
        """
        entropy = _entropy(seed)
        return _StateReader(data, rules).build(entropy)

    def __repr__(self) -> str:
        top = card_text(self.discard[-1]) if self.discard else "-"
        return (
            f"State(players={self.num_players}, phase={PHASE_NAMES[self.phase]}, current={self.current}, "
            f"top={top}, sizes={self.sizes}, stock={len(self.stock)}, scores={self.scores})"
        )


def draw_record_data(record: DrawRecord | None) -> dict[str, Any] | None:
    """A :data:`DrawRecord` as state-dict data: ``{"suits": [...], "ranks": [...], "held": n}`` or None."""
    if record is None:
        return None
    suits, ranks, held = record
    return {"suits": [SUITS[s] for s in range(NUM_SUITS) if (suits >> s) & 1],
            "ranks": [RANKS[r] for r in range(NUM_RANKS) if (ranks >> r) & 1], "held": held}


def suit_draws_data(record: SuitDraws) -> dict[str, int]:
    """A :data:`SuitDraws` record as state-dict data: suit char -> cards held since, the suits without one left out."""
    return {SUITS[suit]: held for suit, held in enumerate(record) if held}


def declaration_data(record: Declaration | None) -> dict[str, Any] | None:
    """A :data:`Declaration` as state-dict data: ``{"suit": suit char, "held": n}`` or None."""
    return None if record is None else {"suit": SUITS[record[0]], "held": record[1]}


class _StateReader:
    """Validates a state dict key by key, with errors that name the key and what is allowed."""

    def __init__(self, data: Mapping[str, Any], rules: Any) -> None:
        if not isinstance(data, Mapping):
            raise TypeError(f"state must be a dict in the State.to_dict() format, got {type(data).__name__}")
        unknown = sorted(map(str, set(data) - set(_STATE_KEYS)))
        if unknown:
            raise ValueError(f"unknown state key(s) {unknown}; allowed: {', '.join(_STATE_KEYS)}")
        for key in REQUIRED_STATE_KEYS:
            if key not in data:
                raise ValueError(
                    f"state dict is missing the required key {key!r}; required: {', '.join(REQUIRED_STATE_KEYS)} "
                    "(an empty stock is written \"stock\": [])"
                )
        self.data = data
        self.rules = self._rules(rules)

    def _rules(self, given: Any) -> RuleSet:
        """The position's rules: its ``rules`` key, checked against the ``rules`` argument."""
        argument = None if given is None else load_rules(given)
        if "rules" not in self.data:
            return argument if argument is not None else load_rules("standard")
        spec = self.data["rules"]
        if isinstance(spec, str):
            try:
                own = RuleSet.from_preset(spec)
            except ValueError as err:
                raise ValueError(f"state key 'rules': {err}") from None
        elif isinstance(spec, Mapping):
            try:
                own = RuleSet.from_dict(spec)
            except ValueError as err:
                raise ValueError(f"state key 'rules': {err}") from None
        else:
            raise ValueError(
                f"state key 'rules' = {spec!r} is invalid; allowed: a preset name, or a mapping of 'preset' and "
                "the RuleSet fields that differ"
            )
        if argument is not None and argument != own:
            raise ValueError(
                f"the rules argument contradicts the state's 'rules' key {spec!r} (fields that differ: "
                f"{', '.join(own.differences(argument))}); pass rules=None or the same rules"
            )
        return own

    def int_(self, key: str, default: int, low: int, high: int | None = None) -> int:
        value = self.data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
            allowed = f"an int from {low} to {high}" if high is not None else f"an int >= {low}"
            raise ValueError(f"state key {key!r} = {value!r} is invalid; allowed: {allowed}")
        return value

    def cards(self, key: str, value: Any) -> list[int]:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"state key {key!r} must be a list of card texts, got {value!r}")
        try:
            return [parse_card(text) for text in value]
        except ValueError as err:
            raise ValueError(f"state key {key!r}: {err}") from None

    def int_list(self, key: str, default: list[int], n: int, low: int, high: int | None) -> list[int]:
        value = self.data.get(key, default)
        if not isinstance(value, (list, tuple)) or len(value) != n or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= low and (high is None or v <= high) for v in value
        ):
            bound = f"{low}..{high}" if high is not None else f">= {low}"
            raise ValueError(f"state key {key!r} = {value!r} is invalid; allowed: a list of {n} ints {bound}")
        return list(value)

    def build(self, entropy: int) -> State:
        data, rules = self.data, self.rules
        hands_data = data["hands"]
        if not isinstance(hands_data, (list, tuple)):
            raise ValueError(f"state key 'hands' must be a list (one list of card texts per seat), got {hands_data!r}")
        n = check_num_players(data.get("num_players", len(hands_data)))
        if len(hands_data) != n:
            raise ValueError(f"state key 'hands' has {len(hands_data)} hands but num_players is {n}")
        hands = [self.cards(f"hands[{i}]", h) for i, h in enumerate(hands_data)]
        stock = self.cards("stock", data["stock"])
        discard = self.cards("discard", data["discard"])
        if not discard:
            raise ValueError("state key 'discard' is empty; it must hold at least the top card")
        decks = rules.num_decks(n)
        seen = [0] * NUM_CARDS
        for card in [c for h in hands for c in h] + stock + discard:
            seen[card] += 1
            if seen[card] > decks:
                raise ValueError(
                    f"card {card_text(card)} appears {seen[card]} times in the state but decks={decks} "
                    f"holds it {decks} time(s)"
                )
        phase_name = data.get("phase", "play")
        if phase_name not in PHASE_NAMES:
            raise ValueError(f"state key 'phase' = {phase_name!r} is invalid; allowed: {', '.join(PHASE_NAMES)}")
        phase = Phase(PHASE_NAMES.index(phase_name))
        if phase is not OVER:
            for i, h in enumerate(hands):
                if not h:
                    raise ValueError(
                        f"state key 'hands[{i}]' is empty but phase is {phase_name!r}; a hand ends when a player "
                        "plays his last card (use phase 'over')"
                    )
        s = State._blank(rules, n, entropy)
        for i, h in enumerate(hands):
            for card in h:
                s._add(i, card)
        s.stock = stock
        s.discard = discard
        for card in discard:
            bit = 1 << card
            if s._pile & bit:
                s._pile_twice |= bit
            else:
                s._pile |= bit
        s.phase = phase
        s.current = self.int_("current_player", 0, 0, n - 1)
        direction = data.get("direction", 1)
        if type(direction) is not int or direction not in (1, -1):
            raise ValueError(f"state key 'direction' = {direction!r} is invalid; allowed: 1 or -1")
        s.direction = direction
        s.dealer = self.int_("dealer", (s.current - direction) % n, 0, n - 1)
        s.pending = self.int_("pending_draw", 0, 0)
        s.draws = self.int_("draws_this_turn", 0, 0)
        s.passes = self.int_("passes", 0, 0, n - 1 if phase is not OVER else n)
        s.hands_played = self.int_("hands_played", 0, 0)
        s.scores = self.int_list("scores", [0] * n, n, 0, None)
        s.countdown = self.int_list("countdown", [8] * n, n, 0, 8)
        s._set_wild_masks()
        s.voids = self._voids(n)
        s._set_records(self._last_draws(s.sizes), self._suit_draws(s.sizes), self._declared(s.sizes))
        top = discard[-1]
        suit_text = data.get("suit_to_follow", SUITS[top // NUM_RANKS])
        if suit_text == "*":
            suit = ANY_SUIT
        else:
            try:
                suit = parse_suit(suit_text)
            except ValueError:
                raise ValueError(f"state key 'suit_to_follow' = {suit_text!r} is invalid; allowed: C, D, H, S or *") from None
        any_wild = 0
        for mask in s._wild_masks:
            any_wild |= mask
        default_rank = None if (any_wild >> top) & 1 else RANKS[top % NUM_RANKS]
        rank_text = data.get("rank_to_follow", default_rank)
        if rank_text is None:
            rank = -1
        else:
            try:
                rank = parse_rank(rank_text)
            except ValueError:
                raise ValueError(
                    f"state key 'rank_to_follow' = {rank_text!r} is invalid; allowed: a rank char or null"
                ) from None
        s._set_top(suit, rank)
        winner = data.get("winner")
        if winner is not None and (phase is not OVER or not isinstance(winner, int) or isinstance(winner, bool)
                                   or not 0 <= winner < n):
            raise ValueError(f"state key 'winner' = {winner!r} is invalid; allowed: null, or a seat when phase is 'over'")
        s.winner = winner
        if winner is not None and rules.countdown and s.countdown[winner] < 8:
            # the hand was played with the count before the winner's went down: its wild cards, as dealt
            s._wild_masks[winner] = wild_mask_for(rules, s.countdown[winner] + 1)
        self._check_reachable(s, hands)
        return s

    def _check_reachable(self, s: State, hands: list[list[int]]) -> None:
        """Checks across keys: could the rules reach this position? (docs/state-format.md)"""
        rules, n, phase = self.rules, s.num_players, s.phase
        top = s.discard[-1]
        top_suit, top_rank = divmod(top, NUM_RANKS)
        any_wild = 0
        for mask in s._wild_masks:
            any_wild |= mask
        effect = rules.effect_table[top]
        preset = rules.spec() if isinstance(rules.spec(), str) else "these rules"

        def refuse(what: str, why: str) -> None:
            raise ValueError(f"{what} cannot happen under {preset}: {why} (docs/state-format.md)")

        # what to follow (after the last card of a hand it is no longer updated: nothing to check)
        if phase is OVER:
            pass
        elif s.suit == ANY_SUIT:
            if effect != ANY_NEXT:
                refuse("state key 'suit_to_follow' = '*'", f"the top card {card_text(top)} has no any_next effect")
            if s.rank != top_rank:
                refuse(f"state key 'rank_to_follow' = {RANKS[s.rank] if s.rank >= 0 else None!r} with suit '*'",
                       f"an any_next card leaves its own rank to follow ({RANKS[top_rank]!r})")
        elif s.rank < 0:
            if not (any_wild >> top) & 1:
                refuse("state key 'rank_to_follow' = null",
                       f"only a wild card on top leaves no rank to follow, and {card_text(top)} is wild for nobody")
        else:
            if (s.suit, s.rank) != (top_suit, top_rank):
                refuse(f"following {SUITS[s.suit]}/{RANKS[s.rank]}",
                       f"a card played normally leaves its own suit and rank ({card_text(top)}) to follow")
            if not rules.countdown and (any_wild >> top) & 1:
                refuse(f"state key 'rank_to_follow' = {RANKS[s.rank]!r}",
                       f"the top card {card_text(top)} is a wild card, which leaves only the declared suit")
        # the phase
        if phase is DECLARE:
            if not ((s._wild_masks[s.current] >> top) & 1 or (len(s.discard) == 1 and (any_wild >> top) & 1)):
                refuse("phase 'declare'", f"the top card {card_text(top)} is not a wild card of player {s.current} "
                       "(nor a wild starter for the dealer)")
            if s.suit != top_suit or s.rank >= 0:
                refuse("phase 'declare'", f"before the declaration the suit to follow is the wild card's ({SUITS[top_suit]}) "
                       "and there is no rank to follow")
        elif phase is ANNOUNCE_PHASE:
            if not rules.last_card_call:
                refuse("phase 'announce'", "last_card_call is off")
            if s.sizes[s.current] != 1:
                refuse("phase 'announce'", f"player {s.current} holds {s.sizes[s.current]} cards, not 1")
        elif phase is OVER:
            if s.hands_played < 1:
                refuse("phase 'over' with hands_played 0", "a finished hand counts itself in hands_played")
            empty = [i for i, h in enumerate(hands) if not h]
            if len(empty) > 1:
                refuse(f"empty hands at seats {empty}", "the hand ends when the first player goes out")
            if empty and s.winner != empty[0]:
                refuse(f"state key 'winner' = {s.winner!r}", f"player {empty[0]} went out, so he won the hand")
        # the penalty
        if s.pending:
            if not rules.draw_cards_mask:
                refuse(f"state key 'pending_draw' = {s.pending}", "these rules have no draw cards")
            if phase is OVER or phase is DECLARE:
                refuse(f"state key 'pending_draw' = {s.pending} in phase {PHASE_NAMES[phase]!r}",
                       "a penalty is only pending in phases play and announce")
            if effect != DRAW_EFFECT or s.rank < 0:
                refuse(f"state key 'pending_draw' = {s.pending}", f"the top card {card_text(top)} was not played as a draw card")
            most = rules.num_decks(n) * sum(rules.draw_table)
            if not rules.draw_table[top] <= s.pending <= most:
                refuse(f"state key 'pending_draw' = {s.pending}",
                       f"{card_text(top)} makes {rules.draw_table[top]}, and all draw cards stacked make {most}")
            if phase is PLAY and s.draws:
                refuse("state keys 'pending_draw' and 'draws_this_turn' both > 0",
                       "a player who owes a penalty has not drawn this turn")
        limit = rules.max_draws_per_turn
        if limit is not None and s.draws > limit:
            refuse(f"state key 'draws_this_turn' = {s.draws}", f"max_draws_per_turn is {limit}")
        if s.direction == -1 and Effect.REVERSE not in rules.effect_table:
            refuse("state key 'direction' = -1", "no card reverses the direction")
        # the match
        if rules.countdown:
            if phase is not OVER and min(s.countdown) < 1:
                refuse(f"state key 'countdown' = {s.countdown}", "a count of 0 ends the match")
        elif s.countdown != [8] * n:
            refuse(f"state key 'countdown' = {s.countdown}", "without the countdown rule every count stays 8")
        if s.hands_played == 0 and any(s.scores):
            refuse(f"state key 'scores' = {s.scores} with hands_played 0", "scores come from finished hands")
        if phase is not OVER:
            s.phase = OVER  # ask the match rules whether the match already ended with these totals
            ended = s.match_over
            s.phase = phase
            if ended:
                refuse(f"a hand in play with scores {s.scores}, hands_played {s.hands_played} and countdown "
                       f"{s.countdown}", "the match ended with these totals, so no further hand was dealt")

    def _per_seat(self, key: str, sizes: list[int], default: list[Any], allowed: str,
                  parse: Callable[[Any, int], T]) -> list[T]:
        """The per-seat list under ``key`` (``default`` where absent), each entry read by ``parse(entry, the seat's
        hand size)``, which raises TypeError or ValueError for an entry outside ``allowed``."""
        value = self.data.get(key, default)
        if not isinstance(value, (list, tuple)) or len(value) != len(sizes):
            raise ValueError(f"state key '{key}' = {value!r} is invalid; allowed: {allowed}")
        out: list[T] = []
        for seat, entry in enumerate(value):
            try:
                out.append(parse(entry, sizes[seat]))
            except (TypeError, ValueError):
                raise ValueError(f"state key '{key}' has {entry!r} for seat {seat}; allowed: {allowed}") from None
        return out

    def _last_draws(self, sizes: list[int]) -> list[DrawRecord | None]:
        def parse(entry: Any, size: int) -> DrawRecord | None:
            if entry is None:
                return None
            if not isinstance(entry, Mapping) or set(entry) != {"suits", "ranks", "held"} \
                    or not all(isinstance(entry[key], (list, tuple)) for key in ("suits", "ranks")) or not entry["suits"] \
                    or type(entry["held"]) is not int or not 0 <= entry["held"] <= size:
                raise ValueError
            suits = sum({1 << parse_suit(text) for text in entry["suits"]})
            ranks = sum({1 << parse_rank(text) for text in entry["ranks"]})
            return suits, ranks, entry["held"]

        return self._per_seat("last_draws", sizes, [None] * len(sizes),
                              f"a list of {len(sizes)} entries, each null or {{'suits': [suit chars, at least one], "
                              "'ranks': [rank chars], 'held': n} with 0 <= held <= the seat's hand size", parse)

    def _suit_draws(self, sizes: list[int]) -> list[SuitDraws]:
        def parse(entry: Any, size: int) -> SuitDraws:
            if not isinstance(entry, Mapping):
                raise ValueError
            record = [0] * NUM_SUITS
            for text, held in entry.items():
                suit = parse_suit(text)
                if type(held) is not int or not 1 <= held <= size or record[suit]:
                    raise ValueError
                record[suit] = held
            return tuple(record)  # type: ignore[return-value]

        return self._per_seat("suit_draws", sizes, [{} for _ in sizes],
                              f"a list of {len(sizes)} dicts, each suit char -> n with 1 <= n <= the seat's hand size",
                              parse)

    def _declared(self, sizes: list[int]) -> list[Declaration | None]:
        def parse(entry: Any, size: int) -> Declaration | None:
            if entry is None:
                return None
            if not isinstance(entry, Mapping) or set(entry) != {"suit", "held"} or type(entry["held"]) is not int \
                    or not 0 <= entry["held"] <= size:
                raise ValueError
            return parse_suit(entry["suit"]), entry["held"]

        return self._per_seat("declared", sizes, [None] * len(sizes),
                              f"a list of {len(sizes)} entries, each null or {{'suit': suit char, 'held': n}} with "
                              "0 <= n <= the hand size", parse)

    def _voids(self, n: int) -> list[int]:
        value = self.data.get("voids", [[] for _ in range(n)])
        if not isinstance(value, (list, tuple)) or len(value) != n:
            raise ValueError(f"state key 'voids' = {value!r} is invalid; allowed: a list of {n} lists of suit chars")
        out = []
        for seat_voids in value:
            if not isinstance(seat_voids, (list, tuple)):
                raise ValueError(f"state key 'voids' has {seat_voids!r}; allowed: a list of suit chars C, D, H, S")
            mask = 0
            for text in seat_voids:
                try:
                    mask |= 1 << parse_suit(text)
                except ValueError:
                    raise ValueError(f"state key 'voids' has {text!r}; allowed: suit chars C, D, H, S") from None
            out.append(mask)
        return out
