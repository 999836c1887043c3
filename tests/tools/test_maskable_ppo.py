"""``c8env.tools.maskable_ppo``: the one SB3 ``VecEnv`` over the learner games (``c8env exploit``'s, and the training
job's ``vec_env: batched`` over its pool) and the one linear learning rate."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")  # the train extra
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402

from c8env.envs.learner_games import LearnerGames  # noqa: E402
from c8env.envs.vector_envs import LearnerVectorEnv  # noqa: E402
from c8env.tools.maskable_ppo import LearnerVecEnv, LinearDecay  # noqa: E402
from tests.cutoffs import cut_off_ends  # noqa: E402


def games(**kwargs) -> LearnerGames:
    return LearnerGames(4, 3, "standard", "hand", "win", kwargs.pop("max_steps", None), **kwargs)


def test_the_vec_env_steps_as_the_gymnasium_learner_env():
    """Same seeds, same actions: the observations, rewards and episode ends of ``LearnerVectorEnv``; an ended
    episode's info has its last view, its result and its statistics, and every info ``SingleAgentEnv``'s keys."""
    env = LearnerVecEnv(games(opponents=["greedy", "random"]))
    reference = LearnerVectorEnv(4, 3, "standard", opponents=["greedy", "random"])
    env.seed(7)
    obs = env.reset()
    expected, _ = reference.reset(seed=7)
    assert np.array_equal(obs, expected) and is_masking_supported(env)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(200):
        masks = get_action_masks(env)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, reward, done, infos = env.step(actions)
        expected, expected_reward, terminated, truncated, info = reference.step(actions)
        assert np.array_equal(obs, expected) and np.array_equal(reward, expected_reward.astype(np.float32))
        assert np.array_equal(done, terminated | truncated) and reward.dtype == np.float32
        for b, info_b in enumerate(infos):
            assert {"learner_seat", "skipped_deals", "hand_winner", "end_reason", "scores", "action_mask"} <= set(info_b)
            if done[b]:
                ended += 1
                assert np.array_equal(info_b["terminal_observation"], info["final_obs"][b])
                assert info_b["learner_won"] == (info_b["hand_winner"] == info_b["learner_seat"])
                assert info_b["opponent_kind"] == "mixed" and info_b["episode"]["l"] >= 1
    assert ended


def test_a_cut_off_hand_ends_with_cutoff_reward_and_methods_answer_for_the_batch():
    seen = []
    env = LearnerVecEnv(games(opponents="random", max_steps=6), cutoff_reward=-2.0,
                        methods={"note": lambda value: seen.append(value)})
    env.seed(1)
    env.reset()
    cut = cut_off_ends(env, 30)
    assert cut and all(r == -2.0 and not truncated for r, truncated in cut)
    assert env.env_method("note", 5) == [None] * 4 and seen == [5]  # one call for the whole batch
    assert env.has_attr("note") and env.has_attr("action_masks") and not env.has_attr("nope")
    with pytest.raises(AttributeError, match="no env method 'render'; allowed: action_masks, note"):
        env.env_method("render")


def test_the_linear_rate_follows_the_run_step_set_at_each_rollout_end():
    rate = LinearDecay(3e-4)
    assert rate(0.1) == 3e-4  # before the first rollout: the start, whatever SB3's progress of one learn() call
    rate.set_step(2_500, 10_000)
    assert rate(1.0) == pytest.approx(3e-4 * 0.75)
