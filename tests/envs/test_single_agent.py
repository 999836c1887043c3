"""The Gymnasium single-agent wrapper (``c8env.envs.single_agent.SingleAgentEnv``): API checkers, rewards
from fixed positions, opponents acting between the learner's turns, seats, seeding, errors,
and Stable-Baselines3 vectorized envs with action masks.

Positions are state dicts (``State.to_dict()`` format) passed with
``reset(options={"state": d})``; the last element of ``stock`` is drawn next and the last
element of ``discard`` is the top card. Points: K/Q/J 10, 10..2 face value, A 1, eight 50.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import c8env
from c8env import DRAW, IllegalActionError, parse_card
from c8env.agents import GreedyAgent, RandomAgent
from c8env.engine import ANNOUNCE_PHASE, DECLARE, END_REASONS
from c8env.envs.single_agent import SingleAgentEnv


def c(text: str) -> int:
    return parse_card(text)


class Scripted:
    """An opponent that plays the given actions in order (one list, shared by every seat it plays)."""

    def __init__(self, actions: list[int]) -> None:
        self.actions = actions
        self.calls = 0

    def act(self, observation: dict) -> int:
        self.calls += 1
        assert observation["action_mask"][self.actions[0]] == 1
        return self.actions.pop(0)


class Counting:
    """Wraps an agent and counts its moves."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0

    def act(self, observation: dict) -> int:
        self.calls += 1
        assert observation["action_mask"].any()
        return self.inner.act(observation)


def plain(info: dict) -> dict:
    """An info with its arrays as lists, to compare with ``==``."""
    return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in info.items()}


def random_legal(env: SingleAgentEnv, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(env.action_masks())
    return int(legal[rng.integers(legal.size)])


def play_episode(env: SingleAgentEnv, seed: int, action_seed: int = 0, max_learner_steps: int = 100_000):
    """Play one episode with random legal learner moves; returns (observations, rewards, infos)."""
    rng = np.random.default_rng(action_seed)
    obs, info = env.reset(seed=seed)
    observations, rewards, infos = [obs], [], [info]
    for _ in range(max_learner_steps):
        obs, reward, terminated, truncated, info = env.step(random_legal(env, rng))
        observations.append(obs)
        rewards.append(reward)
        infos.append(info)
        if terminated or truncated:
            break
    return observations, rewards, infos


# Learner (seat 0) to act on 5C holding 2C and KD; the opponent at seat 1 holds 7C.
# The learner plays 2C, the opponent follows with 7C and goes out: the learner keeps KD (10 points).
LOSE_2P = {
    "hands": [["2C", "KD"], ["7C"]],
    "stock": ["4H", "9S", "JD"],
    "discard": ["3S", "5C"],
    "current_player": 0,
}
# Three players: the learner plays 2C, seat 1 plays 9C (its only clubs card), seat 2 goes out with 7C.
LOSE_3P = {
    "hands": [["2C", "KD"], ["9C", "TH"], ["7C"]],
    "stock": ["4H", "9S", "JD"],
    "discard": ["3S", "5C"],
    "current_player": 0,
}


# ----- API checkers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("render_mode", [None, "ansi"])
def test_gymnasium_check_env(render_mode):
    from gymnasium.utils.env_checker import check_env

    # The checkers step with unmasked random actions, so they need the penalty mode.
    env = SingleAgentEnv(num_players=3, opponents="greedy", illegal_action="penalty", render_mode=render_mode)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not having a spec.*")
        check_env(env)


@pytest.mark.parametrize("num_players", [2, 5])
def test_sb3_check_env(num_players):
    from stable_baselines3.common.env_checker import check_env

    check_env(SingleAgentEnv(num_players=num_players), warn=True, skip_render_check=True)


def test_spaces_match_the_aec_env():
    env = SingleAgentEnv(num_players=4)
    aec = c8env.raw_env(num_players=4)
    assert env.observation_space == aec.observation_space("player_0")["observation"]
    assert env.action_space.n == c8env.NUM_ACTIONS == 60
    obs, info = env.reset(seed=3)
    assert obs.dtype == np.float32 and obs.shape == env.observation_space.shape
    assert env.observation_space.contains(obs)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (60,)
    assert np.flatnonzero(mask).tolist() == env.unwrapped.game.legal_actions()


def test_observation_is_the_learners_aec_observation():
    env = SingleAgentEnv(num_players=3, learner_seat=1, opponents="random")
    obs, _ = env.reset(seed=5)
    state = env.unwrapped.game
    assert state.current_player == 1
    aec = c8env.raw_env(num_players=3)
    aec.reset(options={"state": state.to_dict()})
    expected = aec.observe("player_1")
    np.testing.assert_array_equal(obs, expected["observation"])
    np.testing.assert_array_equal(env.action_masks(), expected["action_mask"].astype(bool))


# ----- rewards from fixed positions -----------------------------------------------------------------
@pytest.mark.parametrize("opponents", ["greedy", Scripted([c("7C")])])
def test_hand_lost_on_opponent_move_2p(opponents):
    env = SingleAgentEnv(num_players=2, learner_seat=0, opponents=opponents)
    obs, info = env.reset(seed=0, options={"state": copy.deepcopy(LOSE_2P)})
    assert info["learner_seat"] == 0
    assert env.action_masks()[[c("2C"), DRAW]].all() and env.action_masks().sum() == 2
    obs, reward, terminated, truncated, info = env.step(c("2C"))
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["hand_winner"] == 1 and END_REASONS[info["end_reason"]] == "out"
    state = env.unwrapped.game
    assert state.hand_over and state.discard[-1] == c("7C") and state.sizes == [1, 0]
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(DRAW)


def test_hand_lost_on_opponent_move_points():
    env = SingleAgentEnv(num_players=2, learner_seat=0, opponents="greedy", reward="points")
    env.reset(seed=0, options={"state": copy.deepcopy(LOSE_2P)})
    _, reward, terminated, _, info = env.step(c("2C"))
    assert terminated and info["hand_winner"] == 1
    assert reward == -10.0  # the learner pays the KD it still holds


@pytest.mark.parametrize("reward_type, expected", [("win", -0.5), ("points", -10.0)])
def test_hand_lost_on_later_opponent_move_3p(reward_type, expected):
    seat1, seat2 = Counting(GreedyAgent(c8env.load_rules("standard"))), Scripted([c("7C")])
    env = SingleAgentEnv(num_players=3, learner_seat=0, opponents=[seat1, seat2], reward=reward_type)
    env.reset(seed=0, options={"state": copy.deepcopy(LOSE_3P)})
    _, reward, terminated, truncated, info = env.step(c("2C"))
    assert (reward, terminated, truncated) == (expected, True, False)
    assert info["hand_winner"] == 2
    assert seat1.calls == 1 and seat2.calls == 1  # both opponents moved before the learner's next turn
    assert env.unwrapped.game.discard[-3:] == [c("2C"), c("9C"), c("7C")]


def test_learner_wins_on_its_own_move():
    data = {"hands": [["6C"], ["KD", "QH"], ["2S", "3S"]], "stock": ["4H"], "discard": ["5C"], "current_player": 0}
    for reward_type, expected in [("win", 1.0), ("points", 25.0)]:
        env = SingleAgentEnv(num_players=3, learner_seat=0, opponents="random", reward=reward_type)
        env.reset(seed=1, options={"state": copy.deepcopy(data)})
        _, reward, terminated, _, info = env.step(c("6C"))
        assert (reward, terminated, info["hand_winner"]) == (expected, True, 0)


def test_opponents_move_first_until_learners_turn():
    """The learner sits at seat 2; seat 0 is to act: both opponents move during reset."""
    data = {"hands": [["9C", "KD"], ["4C", "QH"], ["2C", "3H"]], "stock": ["4H"], "discard": ["5C"],
            "current_player": 0}
    first, second = Scripted([c("9C")]), Scripted([c("4C")])
    env = SingleAgentEnv(num_players=3, learner_seat=2, opponents=[first, second])
    env.reset(seed=0, options={"state": copy.deepcopy(data)})
    assert first.calls == second.calls == 1
    state = env.unwrapped.game
    assert state.current_player == 2 and state.discard[-1] == c("4C")
    assert env.action_masks()[c("2C")]


def test_options_state_that_ends_before_the_learner_moves_is_refused():
    # Seat 1 is to act and goes out with 7C before the learner (seat 0) has a move.
    data = {"hands": [["2H", "KD"], ["7C"]], "stock": ["4H"], "discard": ["5C"], "current_player": 1}
    env = SingleAgentEnv(num_players=2, learner_seat=0, opponents=Scripted([c("7C")]))
    with pytest.raises(ValueError, match="before the learner"):
        env.reset(seed=0, options={"state": data})
    over = dict(LOSE_2P, phase="over")
    with pytest.raises(ValueError, match="over"):
        env.reset(seed=0, options={"state": over})
    with pytest.raises(ValueError, match="players"):
        SingleAgentEnv(num_players=3).reset(options={"state": copy.deepcopy(LOSE_2P)})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"seat": 1})


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("reward_type", ["win", "points"])
def test_rewards_equal_the_aec_env(num_players, reward_type):
    """Replay whole AEC games move by move through the wrapper: the learner's summed reward is its
    AEC reward. ``no_reshuffle`` keeps the replay independent of the reshuffle seed."""
    for game in range(3):
        aec = c8env.raw_env(num_players=num_players, rules="no_reshuffle", reward=reward_type)
        aec.reset(seed=100 + game)
        start = aec.game.to_dict()
        log, totals = [], dict.fromkeys(aec.agents, 0.0)
        rng = np.random.default_rng(game)
        for agent in aec.agent_iter():
            obs, reward, termination, truncation, _ = aec.last()
            totals[agent] += reward
            if termination or truncation:
                aec.step(None)
                continue
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            log.append(action)
            aec.step(action)
        learner = game % num_players
        replay = Scripted(log)  # every opponent seat plays the next logged move
        env = SingleAgentEnv(num_players=num_players, rules="no_reshuffle", reward=reward_type,
                             learner_seat=learner, opponents=replay)
        env.reset(seed=0, options={"state": start})
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, _ = env.step(replay.actions.pop(0))
            total += reward
            done = terminated or truncated
        assert not replay.actions
        assert total == pytest.approx(totals[f"player_{learner}"])


# ----- seats, seeding, opponents --------------------------------------------------------------------
def test_fixed_and_random_seat():
    fixed = SingleAgentEnv(num_players=4, learner_seat=3)
    for seed in range(10):
        _, info = fixed.reset(seed=seed)
        assert info["learner_seat"] == 3 == fixed.learner_seat
        assert fixed.unwrapped.game.current_player == 3
    free = SingleAgentEnv(num_players=4)
    seats = set()
    for seed in range(40):
        _, info = free.reset(seed=seed)
        seats.add(info["learner_seat"])
        assert free.unwrapped.game.current_player == info["learner_seat"]
        assert free.reset(seed=seed)[1]["learner_seat"] == info["learner_seat"]
    assert seats == {0, 1, 2, 3}


@pytest.mark.parametrize("opponents", ["random", "greedy", "expert:simulations=3", ["random", "greedy"]])
def test_reproducible(opponents):
    a = play_episode(SingleAgentEnv(num_players=3, opponents=opponents), seed=7, max_learner_steps=60)
    b = play_episode(SingleAgentEnv(num_players=3, opponents=opponents), seed=7, max_learner_steps=60)
    assert len(a[0]) == len(b[0])
    for x, y in zip(a[0], b[0], strict=True):
        np.testing.assert_array_equal(x, y)
    assert a[1] == b[1] and [plain(i) for i in a[2]] == [plain(i) for i in b[2]]


def test_spec_opponents_are_seeded_from_the_env_seed():
    """Same position and learner moves, another env seed: the random opponent plays differently."""
    start = c8env.State.new(2, seed=0).to_dict()
    start["current_player"] = 0
    env = SingleAgentEnv(num_players=2, learner_seat=0, opponents="random")

    def run(seed):
        rng = np.random.default_rng(0)
        observations = [env.reset(seed=seed, options={"state": copy.deepcopy(start)})[0]]
        for _ in range(30):
            observations.append(env.step(random_legal(env, rng))[0])
        return observations

    runs = [run(s) for s in (1, 1, 2)]
    assert all(np.array_equal(x, y) for x, y in zip(runs[0], runs[1], strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(runs[0], runs[2], strict=False))
    # A later unseeded reset continues the seeded stream: reproducible too.
    env.reset(seed=9)
    after = env.reset()[0]
    env.reset(seed=9)
    np.testing.assert_array_equal(env.reset()[0], after)


def test_opponent_callable_called_once_per_episode():
    calls = []

    def pick(rng):
        assert isinstance(rng, np.random.Generator)
        calls.append(int(rng.integers(1000)))
        return ["greedy", "random"] if calls[-1] % 2 else [GreedyAgent(c8env.load_rules("standard")), "random"]

    env = SingleAgentEnv(num_players=3, opponents=pick)
    assert calls == []
    for episode in range(3):
        play_episode(env, seed=episode, max_learner_steps=5)
        assert len(calls) == episode + 1
    again = []
    env2 = SingleAgentEnv(num_players=3, opponents=lambda rng: again.append(int(rng.integers(1000))) or "random")
    for episode in range(3):
        env2.reset(seed=episode)
    assert again == calls


def test_opponents_act_between_learner_turns():
    opponents = [Counting(RandomAgent(seed=s)) for s in range(3)]
    env = SingleAgentEnv(num_players=4, learner_seat=1, opponents=opponents)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        before = sum(o.calls for o in opponents)
        _, _, terminated, truncated, _ = env.step(random_legal(env, rng))
        if terminated or truncated:
            break
        state = env.unwrapped.game
        assert state.current_player == 1
        if before == sum(o.calls for o in opponents):  # no opponent moved: the learner's turn goes on
            assert state.draws > 0 or state.phase in (DECLARE, ANNOUNCE_PHASE)
    assert all(o.calls > 0 for o in opponents)


@pytest.mark.parametrize("kind", ["random", "greedy"])
def test_state_observation_path_equals_plain_observation(kind):
    """Built-in opponents read a StateObservation straight from the state; handed the plain
    observation dict instead, they decode the vector. Both give the same game."""
    rules = c8env.load_rules("special_cards")

    class Plain:
        def __init__(self, agent):
            self.agent = agent

        def act(self, observation):
            return self.agent.act({"observation": observation["observation"],
                                   "action_mask": observation["action_mask"]})

    def make(wrap):
        agents = [RandomAgent(seed=s) if kind == "random" else GreedyAgent(rules) for s in range(2)]
        return SingleAgentEnv(num_players=3, rules=rules, learner_seat=0, opponents=[wrap(a) for a in agents])

    for seed in range(3):
        fast = play_episode(make(lambda a: a), seed=seed, action_seed=seed)
        slow = play_episode(make(Plain), seed=seed, action_seed=seed)
        assert len(fast[0]) == len(slow[0]) and fast[1] == slow[1]
        assert all(np.array_equal(x, y) for x, y in zip(fast[0], slow[0], strict=True))


def test_match_episode():
    env = SingleAgentEnv(num_players=3, rules="five_hands", episode="match", opponents="greedy")
    _, rewards, infos = play_episode(env, seed=4)
    state = env.unwrapped.game
    assert state.match_over and state.hands_played >= 5
    assert infos[-1]["match_winner"] == (-1 if state.match_winner is None else state.match_winner)
    assert all(info["match_winner"] == -1 for info in infos[:-1])
    hands_ended = sum(1 for info in infos[1:] if info["end_reason"] != 0)
    assert 1 <= hands_ended <= state.hands_played


def test_truncation():
    env = SingleAgentEnv(num_players=2, opponents="random", max_steps=6)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(6):
        _, reward, terminated, truncated, _ = env.step(random_legal(env, rng))
        if truncated:
            break
    assert truncated and not terminated and reward == 0.0
    assert not env.action_masks().any()


# ----- errors ---------------------------------------------------------------------------------------
def test_illegal_learner_action_raises_and_changes_nothing():
    env = SingleAgentEnv(num_players=2, learner_seat=0, opponents="greedy", illegal_action="raise")
    env.reset(seed=0, options={"state": copy.deepcopy(LOSE_2P)})
    before = env.unwrapped.game.to_dict()
    pattern = rf"action {c('KD')} \(play KD\) is illegal for player 0.*legal: {c('2C')} \(play 2C\), 56 \(draw\)"
    with pytest.raises(IllegalActionError, match=pattern):
        env.step(c("KD"))
    assert env.unwrapped.game.to_dict() == before
    obs, reward, terminated, *_ = env.step(np.int64(c("2C")))  # numpy integers are accepted
    assert terminated


def test_illegal_action_penalty_mode():
    env = SingleAgentEnv(num_players=2, learner_seat=0, opponents="greedy", illegal_action="penalty",
                         illegal_reward=-2.0)
    env.reset(seed=0, options={"state": copy.deepcopy(LOSE_2P)})
    _, reward, terminated, truncated, info = env.step(c("KD"))
    assert (reward, terminated, truncated, info["illegal_action"]) == (-2.0, True, False, c("KD"))


def test_illegal_opponent_action_names_the_opponent():
    class Cheater:
        def act(self, observation):
            return 59  # stop: never legal under the standard rules

    env = SingleAgentEnv(num_players=3, learner_seat=0, opponents=["random", Cheater()])
    with pytest.raises(IllegalActionError, match=r"opponent Cheater at seat 2 returned an illegal action: action 59"):
        play_episode(env, seed=0)


@pytest.mark.parametrize("kwargs, pattern", [
    ({"num_players": 8}, "num_players"),
    ({"rules": "nope"}, "nope"),
    ({"episode": "game"}, "episode"),
    ({"reward": "score"}, "reward"),
    ({"max_steps": 0}, "max_steps"),
    ({"render_mode": "rgb_array"}, "render_mode"),
    ({"learner_seat": 2}, "learner_seat"),
    ({"illegal_action": "ignore"}, "illegal_action"),
    ({"opponents": "champion"}, "champion"),
    ({"opponents": "expert:foo=1"}, "foo"),
    ({"opponents": ["random", "random"]}, "2 entries"),
    ({"opponents": 3}, "opponents"),
])
def test_bad_arguments(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        SingleAgentEnv(**kwargs)


# ----- rendering ------------------------------------------------------------------------------------
def test_render_modes(capsys):
    env = SingleAgentEnv(num_players=2, learner_seat=1, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert text.startswith("learner: player_1\nCrazy Eights | 2 players") and "*player_1" in text
    human = SingleAgentEnv(num_players=2, render_mode="human")
    human.reset(seed=0)
    assert human.render() is None
    assert "Crazy Eights" in capsys.readouterr().out


# ----- Stable-Baselines3 vectorized envs ------------------------------------------------------------
def _make_env(seat=None):
    return lambda: SingleAgentEnv(num_players=2, opponents="random", learner_seat=seat)


@pytest.mark.parametrize("vec", ["dummy", "subproc"])
def test_vec_envs_with_action_masks(vec):
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    cls = DummyVecEnv if vec == "dummy" else SubprocVecEnv
    venv = cls([_make_env(), _make_env(1)])
    try:
        assert is_masking_supported(venv)
        venv.seed(3)
        obs = venv.reset()
        assert obs.shape == (2, c8env.OBS_SIZE)
        rng = np.random.default_rng(0)
        dones = 0
        for _ in range(300):
            masks = get_action_masks(venv)
            assert masks.shape == (2, 60) and masks.dtype == bool and masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, done, infos = venv.step(actions)
            dones += int(done.sum())
            for d, r, info in zip(done, rewards, infos, strict=True):
                if d:  # the vec env reset it: the episode's last observation is in the info
                    assert r in (1.0, -1.0, 0.0) and info["terminal_observation"].shape == (c8env.OBS_SIZE,)
        assert venv.env_method("action_masks")[0].shape == (60,)
        assert venv.get_attr("learner_seat")[1] == 1
    finally:
        venv.close()


def test_deal_that_ends_before_the_learner_moves_is_replaced():
    """With one card each, the opponent often goes out on the first move: that deal is replaced."""
    env = SingleAgentEnv(num_players=2, rules={"hand_size": 1}, learner_seat=0, opponents="greedy")
    skipped = 0
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        state = env.unwrapped.game
        assert not state.hand_over and state.current_player == 0 and env.action_masks().any()
        skipped += info["skipped_deals"]
        assert plain(env.reset(seed=seed)[1]) == plain(info)
    assert skipped > 0


def test_match_mode_carries_a_hand_lost_before_the_learner_moves():
    """Match mode: the opponent goes out before the learner's first move; the next hand is dealt and
    the learner's -1 comes with its first step."""
    data = {"hands": [["2H", "KD"], ["7C"]], "stock": ["4H", "9S", "JD"], "discard": ["5C"], "current_player": 1}
    env = SingleAgentEnv(num_players=2, episode="match", learner_seat=0, opponents="greedy")
    _, info = env.reset(seed=0, options={"state": data})
    state = env.unwrapped.game
    assert state.hands_played == 1 and not state.hand_over and state.current_player == 0
    assert state.scores == [0, 12]  # 2H + KD
    _, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert (reward, terminated, truncated) == (-1.0, False, False)
