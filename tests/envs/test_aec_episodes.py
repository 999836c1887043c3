"""The PettingZoo env's rewards and episodes through its public API: going out, blocked and stopped
hands, match episodes, truncation, reset with a state (the env's docstring).

Positions are built as state dicts (``State.to_dict()`` format) and passed with
``env.reset(options={"state": d})``. Reminders: a card id is ``suit * 13 + rank``
(suits C, D, H, S; ranks A..K); the last element of ``stock`` is drawn next and the
last element of ``discard`` is the top card.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import c8env
from c8env import DRAW, PASS, STOP
from c8env.engine import END_REASONS
from c8env.episode import DEFAULT_MAX_STEPS, MAX_HAND_STEPS, V0_MAX_STEPS
from tests.envs.aec_helpers import agent, assert_masks, c, collect_final_rewards, start

# ----- rewards -------------------------------------------------------------------------------------------
GOING_OUT = {"hands": [["5C"], ["KD", "2H"], ["8S", "3S"]], "discard": ["9C"], "stock": ["4D", "JD"],
             "current_player": 0}


@pytest.mark.parametrize("wrapped", [False, True])
def test_win_reward_going_out(wrapped):
    env = start(GOING_OUT, wrapped=wrapped)
    env.step(c("5C"))
    assert env.rewards == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.infos["player_1"]["hand_winner"] == 0
    assert collect_final_rewards(env) == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}


@pytest.mark.parametrize("n", range(2, 8))
def test_win_reward_for_every_player_count(n):
    hands = [["5C"]] + [[f"{r}S", f"{r}H"] for r in "234567"[: n - 1]]
    env = start({"hands": hands, "discard": ["9C"], "stock": ["4D"]})
    env.step(c("5C"))
    expected = {agent(i): (1.0 if i == 0 else -1.0 / (n - 1)) for i in range(n)}
    assert env.rewards == pytest.approx(expected)
    assert sum(env.rewards.values()) == pytest.approx(0.0)
    assert collect_final_rewards(env) == pytest.approx(expected)


@pytest.mark.parametrize("rules, expected, scores", [
    ("standard", [65, -12, -53], [65, 0, 0]),
    ("penalty", [65, -12, -53], [0, 12, 53]),  # a zero-sum transfer whatever the scoring
    ("crazy_aces", [23, -12, -11], [23, 0, 0]),  # the eight scores 8
])
def test_points_reward_going_out(rules, expected, scores):
    env = start(GOING_OUT, rules=rules, reward="points")
    env.step(c("5C"))
    assert env.rewards == {agent(i): float(x) for i, x in enumerate(expected)}
    assert env.unwrapped.game.scores == scores
    assert collect_final_rewards(env) == {agent(i): float(x) for i, x in enumerate(expected)}


NO_RESHUFFLE = {"preset": "standard", "stock_exhausted": "pass"}


def blocked_position(hands):
    """Seat 2 must pass with an empty stock after two passes: the hand is blocked."""
    return {"hands": hands, "discard": ["9C"], "stock": [], "current_player": 2, "passes": 2}


@pytest.mark.parametrize("reward", ["win", "points"])
def test_blocked_hand_tied_gives_everyone_zero(reward):
    env = start(blocked_position([["KD"], ["KH"], ["QS"]]), rules=NO_RESHUFFLE, reward=reward, wrapped=True)
    assert_masks(env, [PASS])
    env.step(PASS)
    state = env.unwrapped.game
    assert state.hand_over and state.winner is None
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}
    assert all(env.terminations.values())
    assert env.infos["player_0"]["hand_winner"] == -1 and env.infos["player_0"]["end_reason"] == 2  # blocked
    assert collect_final_rewards(env) == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}


@pytest.mark.parametrize("reward, expected", [("win", [-0.5, 1.0, -0.5]), ("points", [-5.0, 12.0, -7.0])])
def test_blocked_hand_with_a_winner(reward, expected):
    # hand points 10, 5, 12: seat 1 wins; each pays the difference to its 5
    env = start(blocked_position([["KD"], ["5H"], ["QS", "2S"]]), rules=NO_RESHUFFLE, reward=reward)
    env.step(PASS)
    assert env.unwrapped.game.winner == 1
    assert env.rewards == {agent(i): x for i, x in enumerate(expected)}
    assert env.unwrapped.game.scores == [0, 12, 0]
    assert collect_final_rewards(env) == {agent(i): x for i, x in enumerate(expected)}


@pytest.mark.parametrize("reward, expected", [("win", [-0.5, 1.0, -0.5]), ("points", [-5.0, 12.0, -7.0])])
def test_hand_ended_by_the_empty_stock_is_scored_as_blocked(reward, expected):
    data = {"hands": [["KD"], ["5H"], ["QS", "2S"]], "discard": ["9C"], "stock": [], "current_player": 0}
    env = start(data, rules="five_hands", reward=reward)
    assert_masks(env, [PASS])
    env.step(PASS)
    assert env.rewards == {agent(i): x for i, x in enumerate(expected)}
    assert env.unwrapped.game.scores == [10, 5, 12]  # penalty scoring: each adds his own points


@pytest.mark.parametrize("reward, expected", [("win", [-0.5, -0.5, 1.0]), ("points", [-1.0, -8.0, 9.0])])
def test_stop_is_scored_as_blocked(reward, expected):
    # seat 0 (3 points) stops, but seat 2 (2 points) holds the strictly lowest hand
    data = {"hands": [["AC", "2D"], ["KD"], ["2S"]], "discard": ["9H"], "stock": ["4C"], "current_player": 0}
    env = start(data, rules="stop_the_round", reward=reward)
    env.step(STOP)
    assert env.unwrapped.game.winner == 2
    assert env.rewards == {agent(i): x for i, x in enumerate(expected)}
    assert collect_final_rewards(env) == {agent(i): x for i, x in enumerate(expected)}


# ----- episodes ----------------------------------------------------------------------------------------
def test_hand_episode_terminates_every_agent_at_the_hand_end():
    env = start(GOING_OUT, wrapped=True, episode="hand")
    env.step(c("5C"))
    assert env.terminations == {"player_0": True, "player_1": True, "player_2": True}
    seen = []
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        assert termination and not truncation and not obs["action_mask"].any()
        seen.append(name)
        env.step(None)
    assert sorted(seen) == ["player_0", "player_1", "player_2"] and env.agents == []
    # a seeded random hand also ends in termination
    env = c8env.env(num_players=4, episode="hand")
    env.reset(seed=5)
    for _ in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else env.action_space(env.agent_selection).sample(obs["action_mask"]))
    assert env.unwrapped.game.hand_over and env.unwrapped.game.hands_played == 1


def play_match(env, rng, reward):
    """Plays the env's match to its end at random; checks the per-hand rewards, dealer rotation and
    per-hand infos; returns (rewards received through last(), expected sums, hand count)."""
    state = env.unwrapped.game
    n = state.num_players
    received = dict.fromkeys(env.possible_agents, 0.0)
    expected = dict.fromkeys(env.possible_agents, 0.0)
    hands = 0
    first = state.hands_played
    dealer = state.dealer
    for name in env.agent_iter():
        obs, r, termination, truncation, info = env.last()
        received[name] += r
        if termination or truncation:
            assert termination and not truncation
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        plays = [a for a in legal if a < DRAW]
        action = int(rng.choice(plays if plays and rng.random() < 0.8 else legal))
        probe = state.copy()
        probe.apply(action)
        env.step(action)
        if probe.hand_over:  # this step ended a hand: its rewards now, the next deal with the next dealer
            hands += 1
            if reward == "win":
                hand = [0.0] * n if probe.winner is None else [
                    1.0 if i == probe.winner else -1.0 / (n - 1) for i in range(n)]
            else:
                hand = [float(x) for x in probe.hand_transfers()]
            assert env.rewards == pytest.approx({agent(i): hand[i] for i in range(n)})
            for i in range(n):
                expected[agent(i)] += hand[i]
            winner = env.infos[agent(0)]["hand_winner"]
            assert winner == (-1 if probe.winner is None else probe.winner)
            assert env.infos[agent(0)]["end_reason"] == END_REASONS.index(probe.end_reason)
            assert env.infos[agent(0)]["scores"].tolist() == probe.scores
            assert state.hands_played == first + hands
            if probe.match_over:
                assert all(env.terminations.values())
                assert env.infos[agent(0)]["match_winner"] == probe.match_winner is not None
            else:
                assert env.infos[agent(0)]["match_winner"] == -1
                assert not any(env.terminations.values())
                dealer = (dealer + 1) % n
                assert state.dealer == dealer and not state.hand_over
                assert sum(state.sizes) + len(state.stock) + len(state.discard) == 52 * state.rules.num_decks(n)
    assert state.match_over
    return received, expected, hands


@pytest.mark.parametrize("rules, n, reward", [
    ({"preset": "standard", "match_target": 60}, 3, "win"),
    ({"preset": "special_cards", "match_target": 40}, 2, "points"),
    ("five_hands", 4, "points"),
    ("five_hands", 3, "win"),
    ("penalty", 2, "win"),
    ("countdown", 2, "points"),
])
def test_match_episode_plays_hands_until_the_match_ends(rules, n, reward):
    rng = np.random.default_rng(7)
    env = c8env.env(num_players=n, rules=rules, episode="match", reward=reward)
    for seed in range(3):
        env.reset(seed=seed)
        received, expected, hands = play_match(env, rng, reward)
        assert received == pytest.approx(expected)
        if reward == "points":
            assert sum(received.values()) == pytest.approx(0.0)
        if rules == "five_hands":
            assert hands >= 5
    assert env.agents == []


def test_match_continues_after_a_fixed_first_hand():
    data = dict(GOING_OUT, hands=[["5C"], ["KD", "2H"]])  # 2 players: seat 0 goes out, scores 12 of 100
    env = start(data, wrapped=True, episode="match")
    assert env.unwrapped.game.dealer == 1
    env.step(c("5C"))
    state = env.unwrapped.game
    assert not any(env.terminations.values()) and not any(env.truncations.values())
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert state.scores == [12, 0] and state.hands_played == 1 and state.dealer == 0
    assert sorted(state.sizes) == [7, 7] and state.to_dict()["phase"] in ("play", "declare")
    assert env.agent_selection == agent(state.current_player)
    assert env.infos["player_1"]["hand_winner"] == 0
    received, expected, _ = play_match(env, np.random.default_rng(3), "win")
    expected["player_0"] += 1.0
    expected["player_1"] -= 1.0
    assert received == pytest.approx(expected)


@pytest.mark.parametrize("wrapped", [False, True])
def test_max_steps_truncates_every_agent_with_reward_zero(wrapped):
    make = c8env.env if wrapped else c8env.raw_env
    env = make(num_players=3, max_steps=5)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert not any(env.truncations.values())
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.truncations == {"player_0": True, "player_1": True, "player_2": True}
    assert not any(env.terminations.values())
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}
    assert not env.unwrapped.game.hand_over
    assert all(not env.observe(a)["action_mask"].any() for a in env.agents)
    final = {}
    for name in env.agent_iter():
        _, r, termination, truncation, _ = env.last()
        assert truncation and not termination
        final[name] = r
        env.step(None)
    assert final == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}


def test_max_steps_counts_per_hand_in_a_match():
    data = dict(GOING_OUT, hands=[["5C"], ["KD", "2H"]])
    env = start(data, episode="match", max_steps=3, wrapped=True)
    state = env.unwrapped.game
    rng = np.random.default_rng(1)
    received = {"player_0": 0.0, "player_1": 0.0}
    truncated_after = None
    steps_in_hand_2 = 0
    for name in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        received[name] += reward
        if termination or truncation:
            assert truncation and not termination
            env.step(None)
            continue
        if state.hands_played == 0:
            env.step(c("5C"))  # hand 1 ends after one step; hand 2 is dealt (7 cards each)
            assert not any(env.truncations.values()) and not any(env.terminations.values())
            continue
        steps_in_hand_2 += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if truncated_after is None and any(env.truncations.values()):
            truncated_after = steps_in_hand_2
            assert all(env.truncations.values()) and not any(env.terminations.values())
            assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
            assert not state.hand_over and state.hands_played == 1
    assert truncated_after == 3  # 4 steps in all, 3 in this hand
    assert received == {"player_0": 1.0, "player_1": -1.0}  # hand 1's rewards; the truncation adds 0


def test_default_max_steps_is_the_tools_cap_in_v1_and_v2_and_100000_in_v0():
    from c8env import crazy_eights_v0, crazy_eights_v1

    assert c8env.raw_env().max_steps == MAX_HAND_STEPS == DEFAULT_MAX_STEPS == 10_000
    assert crazy_eights_v1.raw_env().max_steps == crazy_eights_v1.env().unwrapped.max_steps == 10_000
    assert crazy_eights_v0.raw_env().max_steps == crazy_eights_v0.env().unwrapped.max_steps == V0_MAX_STEPS == 100_000
    assert crazy_eights_v0.raw_env(max_steps=7).max_steps == 7 and c8env.raw_env(max_steps=7).max_steps == 7
    assert isinstance(crazy_eights_v0.raw_env(), c8env.raw_env)


def always_draw(mask: np.ndarray) -> int:
    """The policy that stalls a hand: draw whenever allowed, else pass, else the first legal action."""
    legal = np.flatnonzero(mask)
    return DRAW if mask[DRAW] else PASS if mask[PASS] else int(legal[0])


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_always_drawing_players_are_truncated_at_the_default_cap(episode):
    """A hand that nobody ends is cut off after MAX_HAND_STEPS moves: truncation (not termination), reward 0,
    the steady info keys all along."""
    env = c8env.env(num_players=2, episode=episode)
    env.reset(seed=0)
    keys = set(env.infos["player_0"])
    steps = 0
    for _ in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        assert set(info) == keys and reward == 0.0
        if termination or truncation:
            assert truncation and not termination
            env.step(None)
            continue
        env.step(always_draw(obs["action_mask"]))
        steps += 1
    assert steps == MAX_HAND_STEPS and not env.unwrapped.game.hand_over
    assert keys == {"hand_winner", "end_reason", "scores"} | ({"match_winner"} if episode == "match" else set())


FULL_STATE = {
    "num_players": 3,
    "hands": [["AC", "KS"], ["2D", "5H", "8H"], ["3C", "TC", "JD"]],
    "stock": ["4C", "QD", "6S"],
    "discard": ["9D", "5C", "2C"],
    "current_player": 1,
    "dealer": 0,
    "suit_to_follow": "C",
    "rank_to_follow": "2",
    "direction": -1,
    "phase": "play",
    "pending_draw": 2,
    "draws_this_turn": 0,
    "passes": 0,
    "scores": [5, 0, 17],
    "hands_played": 2,
    "countdown": [8, 8, 8],
    "voids": [["H"], [], ["D", "S"]],
}


@pytest.mark.parametrize("wrapped", [False, True])
def test_reset_with_a_state_starts_from_it(wrapped):
    env = start(FULL_STATE, rules="special_cards", wrapped=wrapped, seed=9)
    got = env.unwrapped.game.to_dict()
    for key, value in FULL_STATE.items():
        assert got[key] == value, key
    assert env.agent_selection == "player_1"
    assert not any(env.terminations.values()) and not any(env.truncations.values())
    assert_masks(env, [c("2D"), DRAW])
    # a partial dict: the given keys are kept, the others take their defaults
    partial = {"hands": [["AC", "KS"], ["2D", "5H"]], "stock": [], "discard": ["9D"], "current_player": 1}
    env2 = start(partial, wrapped=wrapped)
    got = env2.unwrapped.game.to_dict()
    for key, value in partial.items():
        assert got[key] == value, key
    assert got["dealer"] == 0 and got["stock"] == [] and got["suit_to_follow"] == "D"
    assert env2.agent_selection == "player_1"
    # the state dict is not changed by the env, and a later plain reset deals anew
    data = copy.deepcopy(FULL_STATE)
    env.reset(seed=2, options={"state": data})
    env.step(DRAW)
    assert data == FULL_STATE
    env.reset(seed=3)
    assert env.unwrapped.game.hands_played == 0


def test_reset_with_a_state_of_the_wrong_size_raises():
    env = c8env.raw_env(num_players=2)
    with pytest.raises(ValueError, match="3 players"):
        env.reset(options={"state": copy.deepcopy(FULL_STATE)})
    with pytest.raises(ValueError, match="hands"):
        env.reset(options={"state": {"discard": ["9C"]}})
