"""The research expert's inference from play (``expert:belief=MODEL``, :mod:`training.research.expert`): the option's
parsing and refusals, the sample weights of :func:`training.research.search_kernels.belief_weight` on constructed
positions, and the decisions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from c8env.agents import PolicyAgent, load
from c8env.agents.search_compiled import PUBLIC, WORLD, generator_words, load_state
from c8env.cards import NUM_CARDS, card_text, parse_card
from c8env.engine import State
from c8env.episode import play_hand
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.vector import COMPILED
from training.research.expert import GREEDY_EPSILON, ResearchExpert, load_research
from training.research.search_kernels import BEFORE, ResearchSearch, belief_weight, drawn_world

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba is not installed or is disabled")
RULES = load_rules("standard")
OWN_HAND = ["2C", "3C", "4C", "5C", "6C", "7C", "9C"]
#: A retired single-network 2-player policy, kept with the research.
NETWORK = Path(__file__).resolve().parents[3] / "training" / "research" / "policies" / "distill-standard-2p.npz"


def _position(opponent_hand: list[str], top: str) -> State:
    """Seat 1 to play on ``top`` holding ``opponent_hand``; seat 0 holds ``OWN_HAND``; the rest is the stock."""
    used = {*OWN_HAND, *opponent_hand, top}
    data = State.new(2, seed=0).to_dict() | {
        "hands": [OWN_HAND, opponent_hand], "discard": [top], "current_player": 1,
        "stock": [card_text(c) for c in range(NUM_CARDS) if card_text(c) not in used],
        "suit_to_follow": top[1], "rank_to_follow": top[0],
    }
    return State.from_dict(data, seed=0)


def _weight(model: str | PolicyAgent, before: State, hand_after: list[str], played: str, declared: int = -1) -> float:
    """The weight of a sample that gives seat 1 ``hand_after`` when he played ``played`` from ``before``."""
    search = ResearchSearch(RULES, 2, "win", None,
                            model if model == "greedy" else (model.layers, model.meta["activation"]), GREEDY_EPSILON)
    world = _position(hand_after, card_text(before.discard[-1]))
    load_state(search.games, BEFORE, before)
    load_state(search.games, WORLD, world)
    belief = search.belief._replace(played=parse_card(played), declared=declared)
    return belief_weight(search.games, WORLD, search.table, belief, search.work, search.scratch)


@pytest.mark.parametrize("spec,model", [("expert:belief=greedy", "greedy"),
                                        (f"expert:belief={NETWORK},simulations=20", PolicyAgent)])
def test_belief_option_loads(spec: str, model: str | type) -> None:
    agent = load_research(spec, seed=1)
    assert isinstance(agent, ResearchExpert)
    assert agent.belief == model if isinstance(model, str) else isinstance(agent.belief, model)


@pytest.mark.parametrize("spec,players,message", [
    ("expert:belief=nonsense", 2, "expert belief 'nonsense': no such policy file; allowed: greedy, "),
    ("expert:belief= ", 2, "option belief=' ' is invalid for 'expert' (out of range)"),
    ("expert:belief=greedy", 3, "num_players=3 is not allowed with it (2 players only)"),
    ("expert:draws=4", 2, "expert draws=4 chooses among deals by a belief's weights; give belief="),
    ("expert:belief=greedy,draws=0", 2, "option draws=0 is invalid for 'expert' (out of range)"),
])
def test_bad_belief_is_refused_in_one_line(spec: str, players: int, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as error:
        load_research(spec, num_players=players)
    assert "\n" not in str(error.value)


def test_belief_refuses_the_python_search() -> None:
    with pytest.raises(ValueError, match="expert belief runs in the compiled search only"):
        ResearchExpert(RULES, 2, belief="greedy", compiled=False)
    with pytest.raises(ValueError, match="expert belief=3 is invalid; allowed: None, 'greedy' or a PolicyAgent"):
        ResearchExpert(RULES, 2, belief=3)  # type: ignore[arg-type]


def test_greedy_belief_weighs_down_hands_greedy_would_have_played_otherwise() -> None:
    # on 5H seat 1 played 3H; greedy sheds the king of hearts first (more points), so a sample where he
    # still holds KH contradicts greedy; one where 3H was his only heart agrees with it
    before = _position(["3H", "KH", "2S", "4D"], "5H")
    assert _weight("greedy", before, ["KH", "2S", "4D"], "3H") == pytest.approx(GREEDY_EPSILON)
    before = _position(["3H", "QS", "2S", "4D"], "5H")
    assert _weight("greedy", before, ["QS", "2S", "4D"], "3H") == 1.0


def test_greedy_belief_weighs_the_declared_suit() -> None:
    # nothing but the eight fits clubs: greedy plays it and declares the suit it holds most
    before = _position(["8D", "2S", "3S", "4H"], "TC")
    assert _weight("greedy", before, ["2S", "3S", "4H"], "8D", declared=3) == 1.0
    assert _weight("greedy", before, ["2S", "3S", "4H"], "8D", declared=2) == pytest.approx(GREEDY_EPSILON)


def test_network_belief_is_the_networks_softmax_probability() -> None:
    network = PolicyAgent(NETWORK)
    before = _position(["3H", "KH", "2S", "4D"], "5H")
    observation = StateObservation(before, 1)
    logits = network.logits(np.asarray(observation["observation"], dtype=np.float32)).astype(np.float64)
    legal = np.flatnonzero(observation["action_mask"])
    probabilities = np.exp(logits[legal] - logits[legal].max())
    expected = probabilities[list(legal).index(parse_card("3H"))] / probabilities.sum()
    assert _weight(network, before, ["KH", "2S", "4D"], "3H") == pytest.approx(expected, rel=1e-4)


def test_draws_keep_deals_in_proportion_to_their_weights() -> None:
    # seat 1 played 3H on 5H and holds 3 unseen cards: greedy would have shed KH had he held it, so the deals
    # kept from 16 hold KH far less often than single deals do (about 0.05 times as often)
    before = _position(["3H", "KH", "2S", "4D"], "5H")
    public = _position(["KH", "2S", "4D"], "5H")
    unseen = [c for c in range(NUM_CARDS) if card_text(c) not in {*OWN_HAND, "5H", "3H"}]
    held_king = {}
    for draws in (1, 16):
        search = ResearchSearch(RULES, 2, "win", None, "greedy", GREEDY_EPSILON, draws)
        hidden = search.hidden(unseen, [3], {1: [(0, 3)]})
        load_state(search.games, PUBLIC, public)
        load_state(search.games, BEFORE, before)
        belief = search.belief._replace(played=parse_card("3H"))
        gen = generator_words(np.random.default_rng(5))
        held_king[draws] = sum(
            drawn_world(search.games, search.table, hidden, belief, gen, search.work, search.scratch) > 0
            and bool((search.games.held[WORLD, 1] >> parse_card("KH")) & 1) for _ in range(400))
    assert held_king[1] > 15 and held_king[16] < held_king[1] / 4


def _decisions(spec: str, seed: int) -> list[int]:
    """The moves of ``spec`` (seat 0) against greedy over three hands of a seeded game."""
    agent, greedy = load_research(spec, seed=seed), load("greedy")
    moves: list[int] = []
    for hand in range(3):
        state = State.new(2, seed=seed + hand)

        def choose(state: State) -> int:
            if state.current_player == 1:
                return greedy.act(StateObservation(state, 1))
            moves.append(agent.act(StateObservation(state, 0)))
            return moves[-1]

        play_hand(state, choose, 400)
    return moves


def test_belief_decisions_are_reproducible_and_differ_from_the_plain_search() -> None:
    spec = "expert:belief=greedy,simulations=30"
    assert _decisions(spec, 7) == _decisions(spec, 7)
    assert _decisions(spec, 7) != _decisions("expert:simulations=30", 7)
