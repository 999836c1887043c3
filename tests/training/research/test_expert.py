"""The research expert (:mod:`training.research.expert`): c8env's ``load`` refuses its options in one line, its spec
parser builds it, without research options it makes the product's moves, and what its options and hooks do."""

from __future__ import annotations

import pytest

import c8env
from c8env.agents import OPTIONS, RESEARCH_OPTIONS, ExpertAgent, load, parse_options
from c8env.agents.expert import public_position
from c8env.engine import State
from c8env.observation import StateObservation
from training.research.expert import EXPERT_OPTIONS, ResearchExpert, load_research

MOVED = ("belief=greedy", "draws=2", "last_draws=1", "explain_hand=10")


@pytest.mark.parametrize("item", MOVED)
def test_load_refuses_a_research_option_in_one_line_saying_where_it_lives(item: str) -> None:
    key = item.partition("=")[0]
    for spec in (f"expert:{item}", f"expert:simulations=5,{item}"):
        with pytest.raises(ValueError) as error:
            load(spec, num_players=2)
        message = str(error.value)
        assert message == (f"agent spec option {key!r} for 'expert' is a research option, not part of c8env's agents: "
                           "it lives in training/research/expert.py (ResearchExpert)")
    with pytest.raises(ValueError, match="is a research option"):
        parse_options("expert", item)


def test_the_research_options_are_the_ones_c8env_refuses_and_not_its_own() -> None:
    assert set(EXPERT_OPTIONS) == set(RESEARCH_OPTIONS["expert"]) == {item.partition("=")[0] for item in MOVED}
    assert not set(EXPERT_OPTIONS) & set(OPTIONS["expert"])
    product = load("expert", num_players=2)
    assert type(product) is ExpertAgent
    assert not any(hasattr(product, name) for name in ("belief", "draws", "last_draws", "explain_hand", "moved",
                                                        "unasked", "watch", "watching"))


@pytest.mark.parametrize("spec", ["expert", "expert:simulations=12",
                                  "expert:simulations=8,policy=ppo-standard-2p,top=2"])
def test_without_research_options_it_makes_the_products_moves(spec: str) -> None:
    """The same seed, the same decisions and search results as the product's expert, over three hands."""
    research, product = load_research(spec, seed=3), load(spec, seed=3)
    assert type(research) is ResearchExpert and type(product) is ExpertAgent
    greedy = load("greedy")
    for hand in range(3):
        state = State.new(2, seed=hand)
        while not state.hand_over:
            view = StateObservation(state, state.current_player)
            if state.current_player == 1:
                state.apply(greedy.act(view))
                continue
            move = product.act(view)
            assert research.act(view) == move
            searched = (research.last_search, product.last_search)
            assert (searched[0] is None) == (searched[1] is None)
            if searched[0] is not None:
                assert searched[0][0] == searched[1][0] and (searched[0][1] == searched[1][1]).all()
            state.apply(move)


def test_load_research_builds_other_specs_as_load_does() -> None:
    assert type(load_research("greedy")) is type(load("greedy"))
    assert load_research("ppo-standard-2p").meta == load("ppo-standard-2p").meta


@pytest.mark.parametrize("spec, patterns", [
    ("expert:nonsense=1", ["option 'nonsense=1'", "allowed: simulations=<int>", "explain_hand=<int>"]),
    ("expert:last_draws", ["option 'last_draws'", "belief=<str>"]),
    ("expert:last_draws=1,last_draws=0", ["option 'last_draws'", "given twice"]),
    ("expert:last_draws=2", ["last_draws=2 is invalid", "allowed: 0 or 1"]),
    ("expert:draws=x", ["draws='x'", "is not an int"]),
    ("expert:simulations=0,last_draws=1", ["simulations=0", "out of range"]),
])
def test_load_research_refuses_bad_options_in_one_line(spec: str, patterns: list[str]) -> None:
    with pytest.raises(ValueError) as error:
        load_research(spec, num_players=4)
    message = str(error.value)
    assert "\n" not in message
    for pattern in patterns:
        assert pattern in message, message


def test_last_draws_keeps_each_opponents_last_draw_in_its_samples() -> None:
    """With last_draws=1 the opponent who drew with hearts and fives to follow is dealt no heart, five or eight
    (as many cards as he has held since); without it his samples may hold them."""
    state = c8env.State.from_dict({
        "hands": [["KS", "2C", "3C"], ["4C", "9D", "JD", "QD"], ["6S", "7S", "4S"], ["TC", "JC", "5D"]],
        "discard": ["5H"], "stock": ["AD", "2H", "3H", "4H", "6H", "7H", "9H", "TH", "JH", "KH"],
        "current_player": 1})
    state.apply(c8env.DRAW)  # seat 1 draws KH: it fits, so he plays it
    state.apply(c8env.parse_card("KH"))
    state.apply(c8env.DRAW)  # seat 2 draws JH and plays it
    state.apply(c8env.parse_card("JH"))
    state.apply(c8env.parse_card("JC"))  # seat 3
    observation = StateObservation(state, 0)
    data, unseen, sizes = public_position(observation, state.rules)
    assert data["last_draws"][1] == {"suits": ["H"], "ranks": ["5", "8"], "held": 4}
    fitted = c8env.cards.SUIT_MASKS[2] | c8env.cards.RANK_MASKS[4] | c8env.cards.RANK_MASKS[7]
    informed = load_research("expert:last_draws=1", num_players=4, seed=0)
    assert informed.last_draws and not load_research("expert", num_players=4).last_draws
    assert informed._requirements(data, sizes)[1][0] == (fitted, 4)
    held_fitting = [sum((fitted >> card) & 1 for card in informed._deal_hidden(unseen, sizes, informed._requirements(
        data, sizes))[1]) for _ in range(50)]
    assert max(held_fitting) == 0
    plain = load("expert", num_players=4, seed=0)
    assert max(sum((fitted >> card) & 1 for card in plain._deal_hidden(unseen, sizes, plain._requirements(
        data, sizes))[1]) for _ in range(50)) > 0


def test_moved_keeps_its_inference_true_when_another_agent_moves_for_it() -> None:
    """2 players: when another agent moves for the expert (a recording's behaviour agent), ``moved`` tells it the
    move made, so what it infers from the greedy opponent's draws holds of his true hand; without ``moved`` it
    infers from the move it chose, and is sometimes wrong."""
    rules = c8env.load_rules("standard")

    def false_inferences(tell: bool) -> int:
        false = 0
        for deal in range(30):
            expert, mover = load_research("expert:simulations=2", num_players=2, seed=deal), load("random", seed=deal)
            greedy = load("greedy", num_players=2)
            state = c8env.State.new(2, rules, seed=deal)
            while not state.hand_over:
                view = StateObservation(state, state.current_player)
                if state.current_player == 1:
                    state.apply(greedy.act(view))
                    continue
                expert.act(view)
                data, _, sizes = public_position(view, rules)
                held = state.held_cards(1)[0]
                false += sum(bin(held & ~cannot).count("1") < count
                             for cannot, count in expert._requirements(data, sizes)[1])
                action = mover.act(view)
                if tell:
                    expert.moved(action)
                state.apply(action)
        return false

    assert false_inferences(tell=True) == 0 and false_inferences(tell=False) > 0


def test_unasked_forgets_what_it_inferred() -> None:
    expert = load_research("expert:simulations=2", num_players=2, seed=0)
    state = State.new(2, seed=0)
    expert.act(StateObservation(state, state.current_player))
    assert expert._last is not None
    expert.unasked()
    assert expert._last is None and expert._known is None
