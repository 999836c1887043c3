"""``expert:explain_hand=TRIES`` (:class:`training.research.expert.ResearchExpert`): the search shown every move of
the hand (``watch``, through :func:`training.research.expert.play_watched`) explains the others' moves."""

from __future__ import annotations

import pytest

from c8env.agents import load
from c8env.engine import State
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.vector import COMPILED
from training.research.expert import ResearchExpert, load_research, play_watched
from training.research.information import play_informed

pytestmark = pytest.mark.skipif(not COMPILED, reason="explain_hand runs in the compiled search (numba)")
RULES = load_rules("standard")
SPEC = "expert:simulations=6,last_draws=1,explain_hand=20"


def test_the_spec_options_play_the_information_tools_hands() -> None:
    """The options in the spec and the information tool's flags (``--track-draws --explain-hand 20``) are one
    search: the same hands won."""
    by_spec = play_informed(SPEC, 4, 7, range(2), "none", False)
    by_flags = play_informed("expert:simulations=6", 4, 7, range(2), "none", True, hand_tries=20)
    assert by_spec == by_flags and by_spec[1] == 8


def test_its_samples_read_the_other_seats_moves_of_this_hand_only() -> None:
    expert = load_research(SPEC, num_players=4, seed=0)
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
        play_watched(State.new(4, RULES, seed=deal), choose, [expert, greedy, expert], on_move=count)
        assert len(histories) >= 3
        assert all(loaded == min(seen, 400) for loaded, seen in histories)
        assert histories[-1][0] > 0


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
