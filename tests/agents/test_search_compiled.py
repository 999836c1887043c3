"""The expert's compiled search (``c8env.agents.search_compiled``) against its Python loop: the same decisions,
with the agent's generator advanced the same way, for every preset and 2-7 players, with greedy
rollouts and with a network playing the searcher's moves (``rollouts="policy"``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from c8env import preset_names
from c8env.actions import NUM_ACTIONS
from c8env.agents import POLICY_DIR, PolicyAgent, load
from c8env.agents import expert as expert_module
from c8env.agents.expert import ExpertAgent
from c8env.agents.policy import save_policy
from c8env.agents.search_compiled import generator_words, load_state, network, policy_action, set_generator_words
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS, play_hand
from c8env.observation import OBS_SIZE, StateObservation
from c8env.rules import RuleSet, load_rules
from c8env.vector import COMPILED, kernels, rule_table
from tests.vector.custom_rules import generated_games

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba is not installed or is disabled")


def _searched_decisions_agree(rules: RuleSet, n: int, hands: int, simulations: int, match: bool = False,
                              **options: Any) -> int:
    """Play ``hands`` hands (fresh deals, or with ``match`` the hands of one match, while it goes on), the searcher
    (compiled and Python loops side by side) in seat ``hand % n`` against greedy; assert the same decision at every
    turn and the same generator state after each hand. Returns how many decisions had a choice."""
    searched = 0
    state = State.new(n, rules, seed=100)

    def play(hand: int) -> None:
        nonlocal searched, state
        fast = ExpertAgent(rules, n, simulations=simulations, seed=hand, compiled=True, **options)
        slow = ExpertAgent(rules, n, simulations=simulations, seed=hand, compiled=False, **options)
        greedy = load("greedy", rules=rules, num_players=n)

        def choose(state: State) -> int:
            nonlocal searched
            seat = state.current_player
            view = StateObservation(state, seat)
            if seat != hand % n:
                return greedy.act(view)
            ours, theirs = fast.act(view), slow.act(view)
            assert ours == theirs, f"{rules.spec()} {n} players, hand {hand}: compiled {ours}, python {theirs}"
            if slow.last_search is None:
                assert fast.last_search is None
            else:  # the same candidates, each with the same mean rollout result
                assert fast.last_search[0] == slow.last_search[0]
                assert np.allclose(fast.last_search[1], slow.last_search[1], rtol=1e-12, atol=1e-12), (
                    f"{rules.spec()} {n} players, hand {hand}: compiled {fast.last_search}, python {slow.last_search}")
            searched += len(state.legal_actions()) > 1
            return ours

        if not match:
            state = State.new(n, rules, seed=100 + hand)
        elif hand:
            state.next_hand()
        play_hand(state, choose)
        assert fast.rng.bit_generator.state == slow.rng.bit_generator.state

    for hand in range(hands):
        if match and hand and (not state.hand_over or state.match_over):
            break
        play(hand)
    return searched


@pytest.mark.parametrize("index", range(len(preset_names())))
def test_compiled_search_decides_as_the_python_loop(index: int) -> None:
    preset = preset_names()[index]
    assert _searched_decisions_agree(load_rules(preset), 2 + index % 6, hands=2, simulations=6) > 0, preset


def test_compiled_search_decides_as_the_python_loop_under_custom_rules() -> None:
    """The custom rule sets of tests/vector/custom_rules.py (every RuleSet field varied), each over the hands of a
    match (under the countdown, the counts fall and other ranks turn wild): the same decisions."""
    searched = [_searched_decisions_agree(rules, n, hands=3, simulations=4, match=True)
                for rules, n, _ in generated_games(48, seed=55)]
    assert sum(searched) > 0 and searched.count(0) < len(searched) // 4, searched


def test_generator_words_round_trip() -> None:
    source = np.random.default_rng(11)
    source.integers(2**32, dtype=np.uint32)  # leave a buffered 32-bit half
    copy = np.random.default_rng(0)
    set_generator_words(copy, generator_words(source))
    assert copy.bit_generator.state == source.bit_generator.state
    assert (copy.permutation(50) == source.permutation(50)).all()


def test_compiled_search_under_a_time_budget_plays_legal_moves() -> None:
    rules = load_rules("standard")
    agent = ExpertAgent(rules, 2, simulations=10_000, time_ms=5, seed=1, compiled=True)
    greedy = load("greedy")
    state = State.new(2, rules, seed=3)

    def choose(s: State) -> int:
        view = StateObservation(s, s.current_player)
        action = (agent if s.current_player == 0 else greedy).act(view)
        assert action in s.legal_actions()
        return action

    play_hand(state, choose)
    assert state.hand_over


def test_compiled_option_is_checked() -> None:
    with pytest.raises(ValueError, match="compiled='yes' is invalid"):
        ExpertAgent(load_rules("standard"), 2, compiled="yes")  # type: ignore[arg-type]


def _random_policy(tmp_path, hidden: list[int], activation: str, seed: int) -> PolicyAgent:
    """A policy file of random layers (obs -> hidden... -> 60 logits)."""
    gen = np.random.default_rng(seed)
    widths = [OBS_SIZE, *hidden, NUM_ACTIONS]
    layers = [(gen.normal(0, 1 / np.sqrt(n_in), (n_out, n_in)), gen.normal(0, 0.1, n_out))
              for n_in, n_out in zip(widths, widths[1:], strict=False)]
    path = save_policy(tmp_path / f"random-{activation}-{len(hidden)}.npz", layers, activation, 2, {})
    return PolicyAgent(path)


@pytest.mark.parametrize("hidden, activation", [([], "tanh"), ([32], "relu"), ([256, 256], "tanh"), ([16, 24, 8], "relu")])
def test_policy_action_is_the_policy_agents_move(tmp_path, hidden, activation) -> None:
    agent = _random_policy(tmp_path, hidden, activation, seed=len(hidden))
    net = network(agent.layers, activation)
    rules = load_rules("special_cards")
    table = rule_table(rules, 3, "hand", "win", MAX_HAND_STEPS)
    games, mask = kernels.new_games(1, 3), np.zeros(NUM_ACTIONS, dtype=np.int8)
    gen, compared = np.random.default_rng(4), 0
    for hand in range(20):
        state = State.new(3, rules, seed=hand)
        while not state.hand_over and compared < 400:
            if state.current_player == 0:
                load_state(games, 0, state)
                kernels.legal_mask(games, 0, table, mask)
                assert policy_action(games, 0, table, net, mask) == agent.act(StateObservation(state, 0))
                compared += 1
            legal = state.legal_actions()
            state.apply(legal[gen.integers(len(legal))])
    assert compared == 400


@pytest.mark.parametrize("preset, players, policy", [("standard", 2, "ppo-standard-2p"), ("standard", 4, "ppo-standard-4p"),
                                                     ("special_cards", 2, "ppo-special_cards-2p"),
                                                     ("uno_like", 3, "ppo-standard-2p")])
def test_policy_rollouts_compiled_decide_as_the_python_loop(preset, players, policy) -> None:
    network_agent = PolicyAgent(POLICY_DIR / f"{policy}.npz")
    assert _searched_decisions_agree(load_rules(preset), players, hands=2, simulations=5, policy=network_agent,
                                     rollouts="policy") > 0


def test_policy_rollouts_hand_the_turns_to_greedy_after_the_step_limit(monkeypatch) -> None:
    """The network plays the searcher's turns of a rollout's first POLICY_ROLLOUT_STEPS moves only (so a
    network that stalls cannot run every rollout to the cut-off); greedy finishes the hand."""
    calls: list[dict] = []

    class Counting(PolicyAgent):
        def act(self, observation: dict) -> int:
            calls.append(observation)
            return super().act(observation)

    rules = load_rules("standard")
    agent = ExpertAgent(rules, 2, simulations=1, seed=0, policy=Counting(POLICY_DIR / "ppo-standard-2p.npz"),
                        rollouts="policy", compiled=False)
    state = State.new(2, rules, seed=1)
    unlimited = agent._rollout(state, state.legal_actions()[0])
    assert len(calls) > 4 and unlimited != 0.0
    calls.clear()
    monkeypatch.setattr(expert_module, "POLICY_ROLLOUT_STEPS", 4)
    assert agent._rollout(state, state.legal_actions()[0]) != 0.0  # the hand was played to its end
    assert 0 < len(calls) <= 2  # seat 0's turns among the first 4 moves


def test_policy_rollouts_need_a_policy() -> None:
    rules = load_rules("standard")
    with pytest.raises(ValueError, match="rollouts='policy' plays a network"):
        ExpertAgent(rules, 2, rollouts="policy")
    with pytest.raises(ValueError, match="rollouts='net' is invalid; allowed: 'greedy', 'policy' or a PolicyAgent"):
        ExpertAgent(rules, 2, rollouts="net")


@pytest.mark.parametrize("guided", [False, True])
def test_another_network_in_the_rollouts_compiled_decides_as_the_python_loop(tmp_path, guided) -> None:
    """``rollouts=<a PolicyAgent>``: that network plays the searcher's rollout moves, with or without a guide;
    the compiled and Python loops agree, and its moves (not the guide's) decide."""
    small = _random_policy(tmp_path, [16, 16], "relu", seed=3)
    guide = PolicyAgent(POLICY_DIR / "ppo-standard-2p.npz") if guided else None
    rules = load_rules("standard")
    assert _searched_decisions_agree(rules, 2, hands=2, simulations=5, policy=guide, rollouts=small) > 0
    agent = ExpertAgent(rules, 2, simulations=1, seed=0, policy=guide, rollouts=small, compiled=False)
    assert agent.rollout_policy is small
    moves: list[dict] = []
    small.act = lambda observation: moves.append(observation) or PolicyAgent.act(small, observation)
    state = State.new(2, rules, seed=1)
    agent._rollout(state, state.legal_actions()[0])
    assert moves and all(observation["observation"].shape == (OBS_SIZE,) for observation in moves)
