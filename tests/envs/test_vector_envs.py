"""The batched Gymnasium vector envs (``c8env.envs.vector_envs``) against the scalar ``SingleAgentEnv`` and the engine."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from c8env import IllegalActionError, State
from c8env.agents import GreedyAgent, RandomAgent
from c8env.envs.learner_games import LearnerGames
from c8env.envs.single_agent import SingleAgentEnv
from c8env.envs.vector_envs import LEARNER_ID, SELF_PLAY_ID, LearnerVectorEnv, SelfPlayVectorEnv
from c8env.observation import encode_observation

#: SingleAgentEnv's info keys (``illegal_action="raise"``): LearnerVectorEnv gives them all at every step.
KEYS = {"learner_seat", "skipped_deals", "hand_winner", "end_reason", "scores", "action_mask"}


def entry(info: dict[str, Any], b: int) -> dict[str, Any]:
    """Game ``b``'s entries of a vector info (arrays as lists), but the final observation and info."""
    out = {}
    for key, value in info.items():
        if not key.startswith("_") and key not in ("final_obs", "final_info") and info["_" + key][b]:
            out[key] = value[b].tolist() if isinstance(value[b], np.ndarray) else value[b]
    return out


def keys(info: dict[str, Any]) -> set[str]:
    return {k for k in info if not k.startswith("_") and k not in ("final_obs", "final_info")}


def sync_envs(num_envs: int, **kwargs: Any) -> SyncVectorEnv:
    return SyncVectorEnv([lambda: SingleAgentEnv(illegal_action="raise", **kwargs) for _ in range(num_envs)],
                         autoreset_mode=AutoresetMode.SAME_STEP)


@pytest.mark.filterwarnings("ignore::c8env.agents.PolicyMismatchWarning")
@pytest.mark.parametrize("num_players,episode,opponents", [
    (2, "hand", "greedy"), (2, "hand", "ppo-standard-2p"), (2, "hand", "random"), (3, "hand", "greedy"),
    (4, "hand", "ppo-standard-4p"), (4, "hand", ["random", "greedy", "random"]), (2, "match", "greedy"),
    (3, "match", ["greedy", "ppo-standard-4p"]),
])
def test_learner_env_plays_the_episodes_of_sync_single_agent_envs(num_players: int, episode: str,
                                                                  opponents: Any) -> None:
    """Same seeds, same learner actions: the same observations, rewards, flags, infos and final views."""
    kwargs = dict(num_players=num_players, episode=episode, opponents=opponents)
    batched, scalar = LearnerVectorEnv(num_envs=5, **kwargs), sync_envs(5, **kwargs)
    obs, info = batched.reset(seed=11)
    obs2, info2 = scalar.reset(seed=11)
    assert np.array_equal(obs, obs2) and np.array_equal(info["learner_seat"], info2["learner_seat"])
    expected = KEYS | ({"match_winner"} if episode == "match" else set())
    assert keys(info) == keys(info2) == expected
    for b in range(5):
        assert entry(info, b) == entry(info2, b)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(400):
        mask = batched.action_masks()
        assert np.array_equal(mask, np.stack(scalar.call("action_masks")))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, reward, terminated, truncated, info = batched.step(actions)
        obs2, reward2, terminated2, truncated2, info2 = scalar.step(actions)
        assert np.array_equal(obs, obs2)
        assert np.array_equal(reward, reward2)
        assert np.array_equal(terminated, terminated2) and np.array_equal(truncated, truncated2)
        assert keys(info) == keys(info2) == expected
        for b in range(5):
            assert entry(info, b) == entry(info2, b)
        ended = terminated | truncated
        if ended.any():
            assert np.array_equal(info["_final_obs"], ended) and np.array_equal(info2["_final_obs"], ended)
            assert keys(info["final_info"]) == keys(info2["final_info"]) == expected
            for b in np.flatnonzero(ended):
                assert np.array_equal(info["final_obs"][b], info2["final_obs"][b])
                assert entry(info["final_info"], b) == entry(info2["final_info"], b)
            finished += int(ended.sum())
    assert finished >= 5


def test_learner_env_follows_gymnasium_vector_conventions() -> None:
    env = gymnasium.make_vec(LEARNER_ID, num_envs=3, opponents="random")
    assert isinstance(env, LearnerVectorEnv) and env.num_envs == 3
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.single_action_space == gymnasium.spaces.Discrete(60)
    assert env.action_space == gymnasium.spaces.MultiDiscrete([60, 60, 60])
    obs, info = env.reset(seed=5)
    assert obs in env.observation_space and obs.dtype == np.float32
    again, _ = env.reset(seed=5)
    assert np.array_equal(obs, again)  # seeded resets are reproducible
    first = []
    for repeat in range(2):
        env.reset(seed=5)
        rng = np.random.default_rng(1)
        trace = []
        for _ in range(100):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
            obs, reward, terminated, truncated, info = env.step(actions)
            assert obs in env.observation_space
            assert np.array_equal(info["action_mask"], env.action_masks()) and info["_action_mask"].all()
            trace.append((obs.copy(), reward.copy(), terminated.copy()))
        if repeat == 0:
            first = trace
    assert all(np.array_equal(a, b) for x, y in zip(first, trace, strict=True) for a, b in zip(x, y, strict=True))
    env.close()


def test_learner_rewards_masks_and_autoreset() -> None:
    """Random play for many episodes: masks never empty, one reward per hand (+1 or -1/(n-1) or 0 summed over
    an episode), a finished episode's final view is its own and the next episode starts at once."""
    env = LearnerVectorEnv(num_envs=8, num_players=3, opponents="random")
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(2)
    returns = np.zeros(8)
    seen = set()
    for _ in range(1500):
        mask = env.action_masks()
        assert mask.any(axis=1).all()
        obs, reward, terminated, truncated, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
        returns += reward
        assert not truncated.any()
        for b in np.flatnonzero(terminated):
            final = info["final_info"]
            assert final["end_reason"][b] != 0
            winner = final["hand_winner"][b]
            expected = 0.0 if winner < 0 else 1.0 if winner == final["learner_seat"][b] else -0.5
            assert returns[b] == expected
            assert not np.array_equal(info["final_obs"][b], obs[b])
            seen.add(expected)
            returns[b] = 0.0
    assert seen >= {1.0, -0.5}


def test_learner_env_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="cannot be played in batch"):
        LearnerVectorEnv(num_envs=2, opponents="expert")
    with pytest.raises(ValueError, match="one spec per opponent seat"):
        LearnerVectorEnv(num_envs=2, num_players=3, opponents=["greedy"])
    with pytest.raises(ValueError, match="num_envs"):
        LearnerVectorEnv(num_envs=0)
    env = LearnerVectorEnv(num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="options"):
        env.reset(seed=0, options={"state": {}})
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3, dtype=np.int64))
    illegal = np.array([int(np.flatnonzero(~m)[0]) for m in env.action_masks()])
    with pytest.raises(IllegalActionError, match="illegal in game 0"):
        env.step(illegal)
    assert np.array_equal(env.reset(seed=0)[0], obs)


def test_pool_callable_draws_each_episodes_opponents() -> None:
    """A callable gets a generator seeded from the game's own and picks the episode's opponents, as in
    SingleAgentEnv: the same choices, so the same games."""
    def pool(rng: np.random.Generator) -> str:
        return ["random", "greedy"][int(rng.integers(2))]

    batched = LearnerGames(6, 2, opponents=pool)
    batched.reset(4)
    for b in range(6):
        scalar = SingleAgentEnv(2, opponents=pool)
        obs, info = scalar.reset(seed=4 + b)
        assert np.array_equal(batched.observation[b], obs)
        kind = {RandomAgent: "random", GreedyAgent: "greedy"}[type(scalar.opponents[1 - info["learner_seat"]])]
        assert batched.opponents[b] == [kind]
    assert {o[0] for o in batched.opponents} == {"random", "greedy"}


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_deals_that_end_before_the_learner_moves(episode: str) -> None:
    """One card each: the opponent often goes out first. Hand mode replaces the deal (``skipped_deals``), match
    mode pays the lost hand with the learner's first step; both as SingleAgentEnv."""
    kwargs = dict(num_players=2, rules={"hand_size": 1}, learner_seat=0, opponents="greedy", episode=episode)
    batched, scalar = LearnerVectorEnv(num_envs=30, **kwargs), sync_envs(30, **kwargs)
    obs, info = batched.reset(seed=0)
    obs2, info2 = scalar.reset(seed=0)
    assert np.array_equal(obs, obs2)
    for b in range(30):
        assert entry(info, b) == entry(info2, b)
    if episode == "hand":
        assert info["skipped_deals"].any()
    rewards = []
    for _ in range(20):
        actions = np.array([np.flatnonzero(m)[-1] for m in batched.action_masks()])
        obs, reward, terminated, truncated, info = batched.step(actions)
        obs2, reward2, terminated2, truncated2, info2 = scalar.step(actions)
        assert np.array_equal(obs, obs2) and np.array_equal(reward, reward2)
        assert np.array_equal(terminated, terminated2)
        for b in range(30):
            assert entry(info, b) == entry(info2, b)
        rewards.append(reward)
    assert np.isin(np.concatenate(rewards), [-1.0, 0.0, 1.0, 2.0, -2.0]).all()


def test_self_play_env() -> None:
    env = gymnasium.make_vec(SELF_PLAY_ID, num_envs=4, num_players=3)
    assert isinstance(env, SelfPlayVectorEnv)
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    ended = 0
    for step in range(2000):
        games = env.unwrapped.games
        for b in range(4 if step % 10 == 0 else 0):  # the observation is the player to act's view of the game
            state = State.from_dict(games.to_dict(b))
            assert np.array_equal(obs[b], encode_observation(state, info["current_player"][b]))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        before = info["current_player"]
        obs, reward, terminated, truncated, info = env.step(actions)
        assert np.array_equal(info["player"], before)
        assert np.array_equal(reward, info["rewards"][np.arange(4), before])
        assert np.allclose(info["rewards"].sum(axis=1), 0.0)  # zero-sum
        assert not (info["rewards"].any(axis=1) & ~terminated).any()  # hands pay only at their end (win reward)
        ended += int(terminated.sum())
        if terminated.any():
            assert np.array_equal(info["_final_obs"], terminated | truncated)
    assert ended >= 5
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(2, dtype=np.int64))
