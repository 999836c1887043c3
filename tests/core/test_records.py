"""The per-seat records (``State.last_draws``, ``suit_draws``, ``declared``) against their definition, over random play
in every preset: the engine keeps them lazily (each ``held`` as of the seat's latest record, and the fewest cards he
has held after a play since), so these tests recompute them the plain way, move by move; and the discard pile's card
sets (``State.discard_cards``), which the observation reads."""

from __future__ import annotations

import random

import pytest

from c8env import DRAW, PASS, State
from c8env.actions import DECLARE_BASE
from c8env.cards import RANK_MASKS, SUIT_MASKS
from c8env.engine import DECLARE, PLAY
from c8env.rules import preset_names


class Reference:
    """The records by their definition: set at each voluntary draw or pass and each declaration, then lowered to
    every hand size the seat holds afterwards."""

    def __init__(self, num_players: int) -> None:
        self.draws: list[tuple[int, int, int] | None] = [None] * num_players
        self.suits = [[0] * 4 for _ in range(num_players)]
        self.declared: list[tuple[int, int] | None] = [None] * num_players

    def before(self, state: State, action: int) -> tuple[int, int, int] | None:
        """What a move records, read before it is applied: (kind, seat, what), or None."""
        p = state.current_player
        if state.phase is PLAY and ((action == DRAW and not state.pending) or action == PASS):
            fits = state.follow_mask() | state.wild_mask(p)
            suits = sum(1 << s for s, mask in enumerate(SUIT_MASKS) if fits & mask == mask)
            ranks = sum(1 << r for r, mask in enumerate(RANK_MASKS) if fits & mask == mask)
            return 0, p, suits | ranks << 4
        if state.phase is DECLARE:
            return 1, p, action - DECLARE_BASE
        return None

    def after(self, state: State, noted: tuple[int, int, int] | None) -> None:
        if noted is not None:
            kind, p, what = noted
            size = state.sizes[p]
            if kind == 0:
                self.draws[p] = (what & 15, what >> 4, size)
                for suit in range(4):
                    if (what >> suit) & 1:
                        self.suits[p][suit] = size
            else:
                self.declared[p] = (what, size)
        for p, size in enumerate(state.sizes):
            draw, declared = self.draws[p], self.declared[p]
            if draw is not None:
                self.draws[p] = (draw[0], draw[1], min(draw[2], size))
            self.suits[p] = [min(held, size) for held in self.suits[p]]
            if declared is not None:
                self.declared[p] = (declared[0], min(declared[1], size))

    def check(self, state: State) -> None:
        assert state.last_draws == self.draws
        assert state.suit_draws == [tuple(held) for held in self.suits]
        assert state.declared == self.declared
        for p in range(state.num_players):
            assert state.records_of(p) == (self.draws[p], tuple(self.suits[p]), self.declared[p])


def pile_sets(discard: list[int]) -> tuple[int, int]:
    once = twice = 0
    for card in discard:
        if (once >> card) & 1:
            twice |= 1 << card
        else:
            once |= 1 << card
    return once, twice


@pytest.mark.parametrize("preset", preset_names())
@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_the_records_and_the_discard_sets_follow_their_definition(preset: str, num_players: int) -> None:
    rng = random.Random(f"{preset}-{num_players}")
    for deal in range(3):
        state = State.new(num_players, preset, seed=deal)
        reference = Reference(num_players)
        copies: list[tuple[State, dict]] = []
        for _ in range(400):
            if state.hand_over:
                break
            action = rng.choice(state.legal_actions())
            noted = reference.before(state, action)
            state.apply(action)
            reference.after(state, noted)
            reference.check(state)
            assert state.discard_cards() == pile_sets(state.discard)
            if rng.random() < 0.05:
                copies.append((state.copy(), state.to_dict()))
            if rng.random() < 0.05:  # the records and the pile rebuilt from the state dict go on alike
                state = State.from_dict(state.to_dict(), seed=deal)
                reference.check(state)
                assert state.discard_cards() == pile_sets(state.discard)
        for kept, data in copies:  # a copy's records are its own: the moves played after it left them alone
            assert kept.to_dict() == data


def test_a_copy_plays_on_apart_from_its_original() -> None:
    state = State.new(2, "standard", seed=3)
    rng = random.Random(3)
    for _ in range(30):
        state.apply(rng.choice(state.legal_actions()))
    twin = state.copy()
    before = twin.to_dict()
    moves = []
    while not state.hand_over and len(moves) < 200:
        moves.append(rng.choice(state.legal_actions()))
        state.apply(moves[-1])
    assert len(moves) > 20 and twin.to_dict() == before
    for action in moves:
        twin.apply(action)
    assert twin.to_dict() == state.to_dict()
