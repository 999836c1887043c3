"""Property-based checks (Hypothesis) of the batched engine (:class:`c8env.vector.VectorGames`): generated sequences
of calls, good and bad (actions of every form, selections, seeds, game indices, finished games stepped without a
reset), under every preset and generated custom rule sets (``tests/vector/custom_rules.py``), 2-7 players, hands
and matches, with and without autoreset.

- a call is refused exactly when its input is bad, with the documented error only (``ValueError``, its subclass
  ``IllegalActionError``, ``RuntimeError`` for a call out of order) in one line naming the input;
- a refused call changes nothing (every array, the sampler, the rule table);
- the same seeds and actions give the same games, other seeds other deals;
- after every accepted call the cards of each game are conserved and a live game has a legal action.

Derandomized and sized to run in a few seconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from c8env import IllegalActionError, State
from c8env.seeding import derive_seed
from c8env.vector import VectorGames
from tests.vector.fuzz_inputs import (
    JUNK,
    SEED_JUNK,
    SETTINGS,
    TWO,
    action_inputs,
    as_int_ids,
    as_slots,
    batch_config,
    card_counts,
    check_refusal,
    first_illegal,
    games_state,
    is_seed,
    legal_choice,
    outcome,
    refused_unless,
    seed_inputs,
    seeds_inputs,
    slots_inputs,
    snapshot,
)

CALLS = ["play", "step", "step", "step", "reset", "reset_deals", "random_actions", "to_dict", "end_reason"]
GAME_INDICES = st.one_of(st.integers(-2, 5), st.sampled_from([1.5, "0", None, True, np.int64(0), np.uint8(1)]))


class Model:
    """What the caller knows of a VectorGames: whether it was reset, which games ended (autoreset off)."""

    def __init__(self, games: VectorGames) -> None:
        self.games, self.has_reset = games, False
        self.done = np.zeros(games.num_envs, dtype=bool)

    def step_errors(self, actions: Any, active: Any) -> dict[type[Exception], str | tuple[str, ...]]:
        """The error ``step(actions, active)`` must raise (none: it must be accepted) and what it must name."""
        games = self.games
        ids, selected = as_int_ids(actions, games.num_envs), as_slots(active, games.num_envs)
        if not self.has_reset:
            return {RuntimeError: "reset"}
        if ids is None or selected is None:
            return {ValueError: "actions" if ids is None else "active"}
        if not games.autoreset and (self.done & selected).any():
            return {RuntimeError: "reset"}
        illegal = first_illegal(ids, games.action_mask, selected)
        return {IllegalActionError: illegal} if illegal else {}


def check_invariants(model: Model) -> None:
    """Every game holds each card of its decks once per deck; a game still in play has a legal action."""
    games = model.games
    if not model.has_reset:
        return
    decks = games.rules.num_decks(games.num_players)
    for b in range(games.num_envs):
        assert (card_counts(games.games, b) == decks).all(), f"game {b}: cards not conserved"
        assert model.done[b] or games.action_mask[b].any(), f"game {b} is live without a legal action"


def fresh_deal(games: VectorGames, seed: int) -> dict[str, Any]:
    return State.new(games.num_players, games.rules, seed=seed).to_dict()


def play(games: VectorGames, model: Model, seed: int, moves: int) -> None:
    """Legal moves in the games still in play (hands end, matches go on, episodes are truncated)."""
    choices = np.random.default_rng(seed)
    for _ in range(moves):
        if not model.has_reset or model.done.all():
            return
        actions = legal_choice(games.action_mask, choices.integers(0, 1000, size=games.num_envs).tolist())
        _, terminated, truncated = games.step(actions, ~model.done)
        if not games.autoreset:
            model.done |= terminated | truncated


def check_call(games: VectorGames, model: Model, call: str, argument: Any, other: Any = None) -> None:
    """Make one public call with the given arguments; check that it is accepted or refused as the model says,
    that a refusal changes nothing, and what an accepted call must do."""
    size, before = games.num_envs, snapshot(games)
    if call == "step":
        expected, selected = model.step_errors(argument, other), as_slots(other, size)
        waiting = [games.to_dict(b) for b in range(size) if selected is not None and not selected[b]]
        result, err = outcome(lambda: games.step(argument, other))
        check_refusal(err, expected)
        if err is None:
            rewards, terminated, truncated = result
            assert rewards.shape == (size, games.num_players)
            assert not (terminated | truncated)[~selected].any() and not rewards[~selected].any()
            assert [games.to_dict(b) for b in range(size) if not selected[b]] == waiting  # inactive games wait
            if not games.autoreset:
                model.done |= terminated | truncated
    elif call == "reset":
        _, err = outcome(lambda: games.reset(argument))
        check_refusal(err, refused_unless(is_seed(argument), "seed"))
        if err is None:
            model.has_reset, model.done[:] = True, False
            assert [games.to_dict(b) for b in range(size)] == [
                fresh_deal(games, derive_seed(int(argument), b, 0)) for b in range(size)]
    elif call == "reset_deals":
        ids, selected = as_int_ids(argument, size), as_slots(other, size)
        seeds_ok = ids is not None and min(ids) >= 0
        _, err = outcome(lambda: games.reset_deals(argument, other))
        check_refusal(err, refused_unless(seeds_ok and selected is not None, "slots" if seeds_ok else "seeds"))
        if err is None:
            model.has_reset = True
            model.done[selected] = False
            for b in np.flatnonzero(selected).tolist():
                assert games.to_dict(b) == fresh_deal(games, ids[b])
    elif call == "random_actions":
        unchanged = snapshot({k: v for k, v in vars(games).items() if k != "_sampler"})
        picked, err = outcome(games.random_actions)
        check_refusal(err, refused_unless(model.has_reset, "reset", RuntimeError))
        if err is None:
            for b, action in enumerate(picked.tolist()):
                assert games.action_mask[b, action] if games.action_mask[b].any() else action == -1, (b, action)
            assert snapshot({k: v for k, v in vars(games).items() if k != "_sampler"}) == unchanged
    else:
        _, err = outcome(lambda: getattr(games, call)(argument))
        check_refusal(err, refused_unless(is_seed(argument, size), "game"))
        assert snapshot(games) == before
    if err is not None:
        assert snapshot(games) == before, f"{call} was refused but changed the games"
    check_invariants(model)


@SETTINGS
@given(batch_config(custom=True), st.booleans(), st.booleans(), st.data())
def test_call_sequences_are_applied_or_refused_without_change(config: dict[str, Any], autoreset: bool,
                                                              observations: bool, data: st.DataObject) -> None:
    games = VectorGames(**config, autoreset=autoreset, observations=observations)
    model, size = Model(games), games.num_envs
    if data.draw(st.integers(0, 3), label="reset first"):  # most sequences start from a reset (some do not)
        check_call(games, model, "reset", data.draw(st.integers(0, 2**64 - 1), label="first seed"))
    for call in data.draw(st.lists(st.sampled_from(CALLS), min_size=4, max_size=14), label="calls"):
        if call == "play":
            play(games, model, data.draw(st.integers(0, 2**32), label="seed"), data.draw(st.integers(1, 60)))
        elif call == "step":
            check_call(games, model, call, data.draw(action_inputs(games.action_mask), label="actions"),
                       data.draw(st.one_of(st.none(), slots_inputs(size)), label="active"))
        elif call == "reset":
            check_call(games, model, call, data.draw(seed_inputs(), label="seed"))
        elif call == "reset_deals":
            check_call(games, model, call, data.draw(seeds_inputs(size), label="seeds"),
                       data.draw(slots_inputs(size), label="slots"))
        elif call == "random_actions":
            check_call(games, model, call, None)
        else:
            check_call(games, model, call, data.draw(GAME_INDICES, label="game index"))


ARGUMENTS = st.one_of(
    st.lists(st.integers(-3, 63), min_size=1, max_size=4).map(np.array), st.lists(st.integers(0, 59), max_size=4),
    st.sampled_from([*JUNK, *SEED_JUNK, 2**63, np.uint64(5), np.array([[1], [1]]), [0, True], [[1], [1, 2]]]),
    GAME_INDICES,
)


@SETTINGS
@given(batch_config(custom=True), st.booleans(), st.integers(0, 200), st.sampled_from(CALLS[1:]), ARGUMENTS,
       st.one_of(st.none(), ARGUMENTS))
@example(TWO, True, 3, "step", np.array([2**64 - 1, 0], dtype=np.uint64), None).via("uint64 ids shown wrapped")
@example(TWO, True, 0, "random_actions", None, None).via("random_actions before reset gave action 0")
@example(TWO, False, 20, "random_actions", None, None).via("a finished game's random action was 0 (illegal)")
@example(TWO, True, 3, "to_dict", -1, None).via("a negative game index was game B - 1")
@example(TWO, True, 3, "end_reason", 2, None).via("end_reason(B) raised IndexError")
@example(TWO, True, 3, "step", [0, True], None).via("a bool in a list of actions was action 1")
@example(TWO, True, 3, "reset_deals", [7, True], None).via("a bool in a list of seeds was seed 1")
@example(TWO, True, 3, "step", [[1], [1, 2]], None).via("a ragged list: NumPy's message, naming no argument")
def test_one_call_after_some_moves(config: dict[str, Any], autoreset: bool, moves: int, call: str, argument: Any,
                                   other: Any) -> None:
    games = VectorGames(**config, autoreset=autoreset)
    model = Model(games)
    if moves:
        games.reset(moves)
        model.has_reset = True
        play(games, model, moves, moves)
    check_call(games, model, call, argument, other if call in ("step", "reset_deals") else None)


@SETTINGS
@given(batch_config(custom=True), st.booleans(), st.integers(0, 2**64 - 1), st.integers(0, 2**32), st.integers(1, 80))
def test_same_seeds_and_actions_give_the_same_games(config: dict[str, Any], autoreset: bool, seed: int,
                                                    moves_seed: int, moves: int) -> None:
    first, second = (VectorGames(**config, autoreset=autoreset) for _ in range(2))
    first.reset((seed + 1) % 2**64)  # played before, then reset: the same as a fresh batch
    first.step(first.random_actions())
    first.reset(seed)
    second.reset(seed)
    choices = np.random.default_rng(moves_seed)
    done = np.zeros(first.num_envs, dtype=bool)
    for move in range(moves):
        assert games_state(first.games) == games_state(second.games), f"move {move}"
        assert (first.action_mask == second.action_mask).all() and (first.observation == second.observation).all()
        if move % 10 == 9:  # explicit deals in some slots
            seeds = choices.integers(0, 2**63, size=first.num_envs)
            slots = choices.random(first.num_envs) < 0.5
            first.reset_deals(seeds, slots)
            second.reset_deals(seeds, slots)
            done &= ~slots
        if done.all():
            break
        actions = first.random_actions()
        assert (actions == second.random_actions()).all()
        out = [first.step(actions, ~done), second.step(actions, ~done)]
        assert all((a == b).all() for a, b in zip(*out, strict=True))
        if not autoreset:
            done |= out[0][1] | out[0][2]
    other = VectorGames(**config, autoreset=autoreset)
    other.reset((seed + 7) % 2**64)
    second.reset(seed)
    assert [other.to_dict(b)["hands"] for b in range(other.num_envs)] != [
        second.to_dict(b)["hands"] for b in range(second.num_envs)]
