"""``expert:explain_hand=TRIES``: the search shown every move of the hand (``watch``) explains the others' moves."""

from __future__ import annotations

import pytest

from c8env.agents import load, watchers
from c8env.engine import State
from c8env.episode import play_hand
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.tools.evaluation.deals import play_deals
from c8env.vector import COMPILED
from training.information import play_informed

pytestmark = pytest.mark.skipif(not COMPILED, reason="explain_hand runs in the compiled search (numba)")
RULES = load_rules("standard")
SPEC = "expert:simulations=6,last_draws=1,explain_hand=20"


def test_c8env_eval_shows_it_every_move_and_plays_the_information_tools_hands() -> None:
    records = play_deals([SPEC, "greedy", "greedy", "greedy"], ["expert", "g1", "g2", "g3"], RULES, 4, seed=7,
                         deals=range(2))
    informed = play_informed("expert:simulations=6", 4, 7, range(2), "none", True, hand_tries=20)
    assert informed == (sum(record.winner == 0 for record in records), 8)


def test_its_samples_read_the_other_seats_moves_of_this_hand_only() -> None:
    expert = load(SPEC, num_players=4, seed=0)
    greedy = load("greedy", num_players=4)
    histories = []  # at each of its decisions: (moves loaded into the search, the others' moves so far)
    others = 0

    def choose(state: State) -> int:
        view = StateObservation(state, state.current_player)
        if state.current_player != 2:
            return greedy.act(view)
        action = expert.act(view)
        histories.append((expert.compiled_kernel().history.count, others))
        return action

    def count(state: State, seat: int, action: int) -> None:
        nonlocal others
        others += seat != 2

    for deal in range(2):
        others, histories = 0, []
        play_hand(State.new(4, RULES, seed=deal), choose, on_move=count, watchers=watchers([expert, greedy]))
        assert len(histories) >= 3
        assert all(loaded == min(seen, 400) for loaded, seen in histories)
        assert histories[-1][0] > 0


@pytest.mark.parametrize(("spec", "message"), [
    ("expert:explain_hand=-1", r"explain_hand=-1 is invalid .*allowed: an int >= 0"),
    ("expert:explain_hand=x", "explain_hand"),
])
def test_bad_explain_hand_is_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load(spec, num_players=4)


def test_explain_hand_refuses_the_python_search_and_a_plain_observation() -> None:
    from c8env.agents.expert import ExpertAgent

    with pytest.raises(ValueError, match="compiled search only"):
        ExpertAgent(RULES, 4, explain_hand=10, compiled=False)
    state = State.new(4, RULES, seed=0)
    view = StateObservation(state, state.current_player)
    plain = {"observation": view["observation"], "action_mask": view["action_mask"]}
    with pytest.raises(ValueError, match="needs the StateObservation"):
        load(SPEC, num_players=4, seed=0).act(plain)


def test_only_agents_that_read_every_move_are_watchers() -> None:
    expert = load(SPEC, num_players=4, seed=0)
    assert watchers([expert, load("expert", num_players=4), load("greedy", num_players=4), expert]) == [expert]
