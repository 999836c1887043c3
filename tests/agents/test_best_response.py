"""The local best response to ``greedy`` (:mod:`c8env.agents.best_response`): the harnesses show a watching agent
every move (:func:`c8env.episode.play_watched`), its samples explain the greedy moves of the hand
(:mod:`c8env.agents.search_explained`), and ``c8env eval`` plays it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from c8env.agents import load
from c8env.agents.best_response import GreedyBestResponse, HandMoves, versus_greedy
from c8env.agents.search_compiled import PUBLIC, WORLD, generator_words, load_state
from c8env.agents.search_explained import MAX_EVENTS, ExplainedSearch, explained_world
from c8env.cards import iter_bits
from c8env.engine import State
from c8env.episode import play_watched
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.tools.evaluation import evaluate
from c8env.vector import COMPILED

RULES = load_rules("standard")
compiled = pytest.mark.skipif(not COMPILED, reason="the local best response runs in the compiled search (numba)")


def test_play_watched_shows_each_watcher_every_move_once_after_on_move() -> None:
    class Watcher:
        watching = True

        def __init__(self) -> None:
            self.seen: list[tuple[int, int, int]] = []

        def watch(self, before: State, action: int, after: State) -> None:
            self.seen.append((before.current_player, action, len(moves)))

    watcher, moves = Watcher(), []
    greedy = load("greedy", num_players=3)
    steps = play_watched(State.new(3, RULES, seed=1), lambda s: greedy.act(StateObservation(s, s.current_player)),
                         [watcher, greedy, watcher], on_move=lambda _, seat, action: moves.append((seat, action)))
    assert steps == len(moves) == len(watcher.seen) > 0
    assert [(seat, action) for seat, action, _ in watcher.seen] == moves
    assert [count for _, _, count in watcher.seen] == list(range(1, steps + 1))  # each after on_move


def test_hand_moves_keep_this_hands_moves_of_the_other_seats_in_the_searchs_numbering() -> None:
    greedy, moves = load("greedy", num_players=3), HandMoves()
    state = State.new(3, RULES, seed=2)
    for _ in range(9):
        before, action = state.copy(), greedy.act(StateObservation(state, state.current_player))
        state.apply(action)
        moves.watch(before, action, state)
    seen = moves.seen_by(state, 1)
    assert seen and all(seat in (1, 2) for _, seat, _, _ in seen)  # seat 2 is 1 after seat 1, seat 0 is 2
    assert [position.current_player for position, _, _, _ in seen] == [
        position.current_player for position, _, _, _ in moves.moves if position.current_player != 1]
    assert moves.seen_by(State.new(3, RULES, seed=3), 1) == []  # another hand: forgotten


def _greedy_hand_moves(deal: int, stop: int) -> tuple[State, list[tuple[State, int, int, int]]]:
    """Greedy plays deal ``deal`` at 4 players until seat 0 is to act after at least ``stop`` moves; the state then
    and the other seats' moves (position, seat, move, cards it drew), as :meth:`ExplainedSearch.observe_hand` takes
    them."""
    greedy = load("greedy", num_players=4)
    state, moves = State.new(4, RULES, seed=deal), []
    while not state.hand_over and not (len(moves) >= stop and state.current_player == 0):
        seat = state.current_player
        action = greedy.act(StateObservation(state, seat))
        before = state.copy()
        state.apply(action)
        if seat:
            moves.append((before, seat, action, max(0, state.sizes[seat] - before.sizes[seat])))
    return state, moves


def redealt(state: State, generator: np.random.Generator) -> tuple[dict[int, list[int]], list[int]]:
    """The other seats' hands and the stock dealt anew from their cards (the same sizes)."""
    seats = range(1, state.num_players)
    pool = [card for seat in seats for card in state.hand(seat)] + list(state.stock)
    pool = [pool[i] for i in generator.permutation(len(pool))]
    hands, start = {}, 0
    for seat in seats:
        hands[seat], start = pool[start:start + state.sizes[seat]], start + state.sizes[seat]
    return hands, pool[start:]


def _observed_hands(kernel: ExplainedSearch, deals: int, stop: int, tries: int) -> Iterator[
        tuple[State, list[tuple[State, int, int, int]]]]:
    """Each unfinished hand of :func:`_greedy_hand_moves` over ``deals`` deals, its moves given to ``kernel``."""
    for deal in range(deals):
        state, moves = _greedy_hand_moves(deal, stop)
        if not state.hand_over:
            kernel.observe_hand(moves, tries=tries)
            yield state, moves


def _explains_every_move(kernel: ExplainedSearch, world: State, moves: list,
                         generator: np.random.Generator) -> list[bool]:
    """Per opponent seat 1..3, whether his hand in ``world`` explained all his ``moves`` (drawn cards guessed once)."""
    return [kernel.explained(world, seat, generator) == sum(move[1] == seat for move in moves) for seat in (1, 2, 3)]


@compiled
def test_the_true_hands_explain_the_whole_hands_moves_through_the_draws_and_other_deals_seldom_do() -> None:
    kernel = ExplainedSearch(RULES, 4, "win")
    generator = np.random.default_rng(0)
    true = other = checked = 0
    for state, moves in _observed_hands(kernel, 12, 25, tries=1):
        for _ in range(10):
            true += sum(_explains_every_move(kernel, state, moves, generator))
            other += sum(_explains_every_move(kernel, state.with_hidden_cards(*redealt(state, generator)), moves,
                                              generator))
            checked += 3
    assert checked >= 200 and true / checked > 0.6 and other / checked < true / checked - 0.3


@compiled
def test_explained_samples_deal_every_unseen_card_once_and_explain_more_than_uniform_deals() -> None:
    kernel = ExplainedSearch(RULES, 4, "win")
    generator = np.random.default_rng(1)
    sampled = uniform = checked = 0
    for state, moves in _observed_hands(kernel, 6, 30, tries=50):
        unseen = [card for seat in (1, 2, 3) for card in state.hand(seat)] + list(state.stock)
        hidden = kernel.hidden(unseen, [state.sizes[seat] for seat in (1, 2, 3)], {})
        load_state(kernel.games, PUBLIC, state)
        words = generator_words(generator)
        for _ in range(10):
            explained_world(kernel.games, kernel.table, hidden, kernel.history, words, kernel.work)
            hands = {seat: list(iter_bits(int(kernel.games.held[WORLD, seat]))) for seat in (1, 2, 3)}
            stock = list(kernel.games.stock[WORLD, :kernel.games.stock_len[WORLD]])
            assert [len(hands[seat]) for seat in (1, 2, 3)] == state.sizes[1:]
            assert sorted(sum(hands.values(), []) + stock) == sorted(unseen)
            world = state.with_hidden_cards(hands, stock)
            sampled += sum(_explains_every_move(kernel, world, moves, generator))
            uniform += sum(_explains_every_move(kernel, state.with_hidden_cards(*redealt(state, generator)), moves,
                                                generator))
            checked += 3
    assert checked >= 90 and sampled / checked > 0.5 and uniform / checked < sampled / checked - 0.3


@compiled
@pytest.mark.parametrize("tries", [0, -1, True, 1.5])
def test_observe_hand_refuses_bad_tries(tries: object) -> None:
    with pytest.raises(ValueError, match="tries must be an int >= 1"):
        ExplainedSearch(RULES, 2, "win").observe_hand([], tries=tries)


@compiled
def test_it_reads_the_other_seats_moves_of_this_hand_only() -> None:
    agent = GreedyBestResponse(RULES, 4, simulations=6, seed=0)
    greedy = load("greedy", num_players=4)
    histories = []  # at each of its decisions: (moves loaded into the search, the others' moves so far)
    others = 0

    def choose(state: State) -> int:
        view = StateObservation(state, state.current_player)
        if state.current_player != 2:
            return greedy.act(view)
        action = agent.act(view)
        histories.append((agent.compiled_kernel().history.count, others))
        return action

    def count(state: State, seat: int, action: int) -> None:
        nonlocal others
        others += seat != 2

    for deal in range(2):
        others, histories = 0, []
        play_watched(State.new(4, RULES, seed=deal), choose, [agent, greedy], on_move=count)
        assert len(histories) >= 3
        assert all(loaded == min(seen, MAX_EVENTS) for loaded, seen in histories)
        assert histories[-1][0] > 0


@compiled
def test_c8env_eval_plays_it_against_greedy_and_same_seeds_give_the_same_hands() -> None:
    first = evaluate(["c8env.agents.best_response:versus_greedy", "greedy"], deals=2, seed=11, progress=False)
    again = evaluate(["c8env.agents.best_response:versus_greedy", "greedy"], deals=2, seed=11, progress=False)
    assert len(first.records) == 4 and all(record.forfeit is None for record in first.records)
    assert [r.winner for r in first.records] == [r.winner for r in again.records]


@compiled
def test_it_refuses_a_plain_observation_the_python_search_and_bad_tries() -> None:
    state = State.new(2, RULES, seed=0)
    view = StateObservation(state, state.current_player)
    plain = {"observation": view["observation"], "action_mask": view["action_mask"]}
    with pytest.raises(ValueError, match="needs the StateObservation"):
        GreedyBestResponse(RULES, 2, simulations=4).act(plain)
    with pytest.raises(ValueError, match="compiled search only"):
        GreedyBestResponse(RULES, 2, compiled=False)
    with pytest.raises(ValueError, match=r"tries=0 is invalid; allowed: an int >= 1"):
        GreedyBestResponse(RULES, 2, tries=0)


@compiled
@pytest.mark.parametrize(("players", "rules", "message"), [
    (4, "standard", "num_players=4"), (2, "special_cards", "other rules")])
def test_versus_greedy_plays_its_networks_setting_only(players: int, rules: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"2 players under the standard rules.*{message}"):
        versus_greedy(rules, players)


def test_c8env_eval_shows_the_moves_to_its_own_watching_agents_only() -> None:
    """A user's agent that says it is ``watching`` is not shown the states (they hold every hand): it plays on its
    sealed observations alone."""

    class Peeker:
        watching = True

        def __init__(self) -> None:
            self.watched = 0

        def act(self, observation: dict) -> int:
            return int(np.flatnonzero(observation["action_mask"])[0])

        def watch(self, before: State, action: int, after: State) -> None:
            self.watched += 1

    peeker = Peeker()
    table = evaluate([peeker, "greedy"], deals=1, seed=0, workers=1)
    assert len(table.records) == 2 and peeker.watched == 0
