"""``expert:explain_hand=TRIES`` (:class:`training.research.expert.ResearchExpert`): the search shown every move of
the hand (``watch``, through :func:`c8env.episode.play_watched`) explains the others' moves, as the product's
:class:`c8env.agents.best_response.GreedyBestResponse` does."""

from __future__ import annotations

import pytest

from c8env.agents import load
from c8env.agents.best_response import GUIDE, ROLLOUTS, SIMULATIONS, TOP, TRIES
from c8env.engine import State
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.seeding import derive_seed
from c8env.tools.evaluation import evaluate
from c8env.tools.evaluation.deals import agent_seed
from c8env.vector import COMPILED
from training.research.expert import ResearchExpert, load_research
from training.research.information import expert_search, play_informed, won_by

pytestmark = pytest.mark.skipif(not COMPILED, reason="explain_hand runs in the compiled search (numba)")
RULES = load_rules("standard")
SPEC = "expert:simulations=6,last_draws=1,explain_hand=20"


def test_the_spec_options_play_the_information_tools_hands() -> None:
    """The options in the spec and the information tool's flags (``--track-draws --explain-hand 20``) are one
    search: the same hands won."""
    by_spec = play_informed(SPEC, 4, 7, range(2), "none", False)
    by_flags = play_informed("expert:simulations=6", 4, 7, range(2), "none", True, hand_tries=20)
    assert by_spec == by_flags and by_spec[1] == 8


@pytest.mark.parametrize(("spec", "message"), [
    ("expert:explain_hand=-1", r"explain_hand=-1 is invalid .*allowed: an int >= 0"),
    ("expert:explain_hand=x", "explain_hand"),
])
def test_bad_explain_hand_is_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_research(spec, num_players=4)


def test_explain_hand_refuses_the_python_search_and_a_plain_observation() -> None:
    with pytest.raises(ValueError, match="compiled search only"):
        ResearchExpert(RULES, 4, explain_hand=10, compiled=False)
    state = State.new(4, RULES, seed=0)
    view = StateObservation(state, state.current_player)
    plain = {"observation": view["observation"], "action_mask": view["action_mask"]}
    with pytest.raises(ValueError, match="needs the StateObservation"):
        load_research(SPEC, num_players=4, seed=0).act(plain)


def test_only_a_search_that_explains_the_hand_watches() -> None:
    assert load_research(SPEC, num_players=4).watching
    assert not load_research("expert:last_draws=1", num_players=4).watching


def test_the_research_options_play_the_products_local_best_response() -> None:
    """``last_draws=1,explain_hand=10`` with :func:`c8env.agents.best_response.versus_greedy`'s guide, rollouts and
    budget is that agent: the same hands won against greedy, hand by hand."""
    spec = (f"expert:policy={GUIDE},rollouts={ROLLOUTS},simulations={SIMULATIONS},top={TOP},last_draws=1,"
            f"explain_hand={TRIES}")
    greedy, seed = load("greedy", num_players=2), 5
    research = [won_by(expert_search(spec, 2, agent_seed(derive_seed(seed, deal), rotation, 0)), (2 - rotation) % 2,
                       greedy, derive_seed(seed, deal), 2)
                for deal in range(2) for rotation in range(2)]
    product = evaluate(["c8env.agents.best_response:versus_greedy", "greedy"], deals=2, seed=seed)
    assert research == [record.winner == 0 for record in product.records]
