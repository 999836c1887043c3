"""What every env reports, whatever happens: the same info keys with numeric values from ``reset`` on (the AEC env,
``SingleAgentEnv``, the vector envs; hands, matches, truncation, illegal moves), the mask in ``info["action_mask"]``,
and the one default cap on moves per hand (``MAX_HAND_STEPS``): a policy that always draws is truncated there.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest

import c8env
from c8env import DRAW, PASS
from c8env.engine import END_REASONS
from c8env.envs.single_agent import SingleAgentEnv
from c8env.envs.vector_envs import LearnerVectorEnv, SelfPlayVectorEnv
from c8env.episode import MAX_HAND_STEPS

HAND_KEYS = {"hand_winner", "end_reason", "scores"}


def hand_keys(episode: str) -> set[str]:
    return HAND_KEYS | ({"match_winner"} if episode == "match" else set())


def assert_numeric(info: dict[str, Any], keys: set[str], num_players: int) -> None:
    """``info`` has exactly ``keys``; every value an int or a numeric array (what Tianshou's ``Batch`` stacks); the
    hand keys in range."""
    assert set(info) == keys, sorted(set(info) ^ keys)
    for key, value in info.items():
        assert isinstance(value, (int, np.integer, np.ndarray)) and not isinstance(value, bool), (key, value)
        assert not isinstance(value, np.ndarray) or value.dtype.kind in "biu", (key, value.dtype)
    assert -1 <= info["hand_winner"] < num_players and 0 <= info["end_reason"] < len(END_REASONS)
    assert info["scores"].shape == (num_players,) and info["scores"].dtype == np.int64
    assert (info["end_reason"] == 0) <= (info["hand_winner"] == -1)  # no hand ended: nobody won one
    assert info.get("match_winner", -1) >= -1


def always_draw(mask: np.ndarray) -> int:
    """The policy that stalls a hand: draw whenever allowed, else pass, else the first legal action."""
    return DRAW if mask[DRAW] else PASS if mask[PASS] else int(np.flatnonzero(mask)[0])


class AlwaysDraw:
    """An opponent that always draws, counting its moves."""

    def __init__(self) -> None:
        self.moves = 0

    def act(self, observation: dict) -> int:
        self.moves += 1
        return always_draw(observation["action_mask"])


# ----- the AEC env -------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,rules,episode,max_steps", [
    (2, "standard", "hand", None), (3, "special_cards", "hand", None), (2, "five_hands", "match", None),
    (3, "countdown", "match", None), (3, "standard", "hand", 30), (2, "five_hands", "match", 40),
])
def test_aec_infos_have_the_same_numeric_keys_at_every_step(n, rules, episode, max_steps):
    env = c8env.env(num_players=n, rules=rules, episode=episode, max_steps=max_steps)
    rng = np.random.default_rng(0)
    for seed in range(2):
        env.reset(seed=seed)
        keys = hand_keys(episode)
        for info in env.infos.values():
            assert_numeric(info, keys, n)
            assert info["hand_winner"] == -1 and info["end_reason"] == 0 and not info["scores"].any()
        ended = 0
        for _ in env.agent_iter():
            obs, _, termination, truncation, info = env.last()
            assert_numeric(info, keys, n)
            for other in env.infos.values():
                assert_numeric(other, keys, n)
            ended += info["end_reason"] != 0
            env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert ended or max_steps


# ----- SingleAgentEnv ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n,rules,episode,max_steps,illegal_action", [
    (2, "standard", "hand", None, "raise"), (3, "special_cards", "hand", None, "penalty"),
    (2, "five_hands", "match", None, "raise"), (4, "penalty", "match", None, "penalty"),
    (2, "standard", "hand", 8, "penalty"), (3, "five_hands", "match", 25, "raise"),
])
def test_single_agent_infos_have_the_same_numeric_keys_and_the_mask(n, rules, episode, max_steps, illegal_action):
    env = SingleAgentEnv(num_players=n, rules=rules, episode=episode, max_steps=max_steps, opponents="random",
                         illegal_action=illegal_action)
    keys = {"learner_seat", "skipped_deals", "action_mask"} | hand_keys(episode) | (
        {"illegal_action"} if illegal_action == "penalty" else set())
    rng = np.random.default_rng(1)
    seen = {"truncated": 0, "hands": 0}
    for seed in range(4):
        _, info = env.reset(seed=seed)
        done = False
        while True:
            assert_numeric(info, keys, n)
            assert info["action_mask"].dtype == bool and np.array_equal(info["action_mask"], env.action_masks())
            assert info["learner_seat"] == env.learner_seat and info.get("illegal_action", -1) == -1
            if done:
                break
            legal = np.flatnonzero(info["action_mask"])
            _, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
            done = terminated or truncated
            seen["hands"] += info["end_reason"] != 0
            seen["truncated"] += truncated
            if truncated:
                assert not terminated and info["end_reason"] == 0 and info["hand_winner"] == -1
        assert not info["action_mask"].any()  # the episode is over
    assert seen["hands"] if max_steps is None else seen["truncated"]
    if illegal_action == "penalty":
        env.reset(seed=0)
        illegal = int(np.flatnonzero(~env.action_masks())[0])
        _, reward, terminated, truncated, info = env.step(illegal)
        assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, illegal)
        assert_numeric(info, keys, n)


def test_always_drawing_learner_is_truncated_at_the_default_cap():
    """SingleAgent-v2 (default max_steps): a learner and an opponent that always draw are cut off after
    MAX_HAND_STEPS moves of the hand, both counted: truncated, not terminated, reward 0, no hand result."""
    opponent = AlwaysDraw()
    env = gymnasium.make("c8env/SingleAgent-v2", opponents=opponent)
    assert env.unwrapped.max_steps == MAX_HAND_STEPS == 10_000
    _, info = env.reset(seed=0)
    learner_moves = 0
    while True:
        _, reward, terminated, truncated, info = env.step(always_draw(info["action_mask"]))
        learner_moves += 1
        if terminated or truncated:
            break
        assert reward == 0.0
    assert truncated and not terminated and reward == 0.0
    assert learner_moves + opponent.moves == MAX_HAND_STEPS
    assert info["end_reason"] == 0 and info["hand_winner"] == -1 and not info["action_mask"].any()
    with pytest.warns(DeprecationWarning, match="out of date"):  # Gymnasium's word on an older version
        assert gymnasium.make("c8env/SingleAgent-v0").unwrapped.max_steps == 100_000  # v0 keeps its default


# ----- the vector envs ---------------------------------------------------------------------------------
def assert_vector_numeric(info: dict[str, Any], keys: set[str], num_envs: int) -> None:
    """Every key in ``keys`` a numeric array of ``num_envs`` rows with an all-True Gymnasium mask ``_key``."""
    assert {k for k in info if not k.startswith("_") and k not in ("final_obs", "final_info")} == keys
    for key in keys:
        value = info[key]
        assert isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and len(value) == num_envs, key
        assert info["_" + key].dtype == bool and info["_" + key].all(), key


@pytest.mark.parametrize("episode,max_steps", [("hand", None), ("match", None), ("hand", 12), ("match", 30)])
def test_learner_vector_infos_are_steady(episode, max_steps):
    env = LearnerVectorEnv(num_envs=4, num_players=3, episode=episode, max_steps=max_steps, opponents="random")
    keys = {"learner_seat", "skipped_deals", "action_mask"} | hand_keys(episode)
    _, info = env.reset(seed=2)
    assert_vector_numeric(info, keys, 4)
    assert (info["hand_winner"] == -1).all() and (info["end_reason"] == 0).all()
    rng = np.random.default_rng(0)
    hands = cut = 0
    for _ in range(300):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        _, _, terminated, truncated, info = env.step(actions)
        assert_vector_numeric(info, keys, 4)
        assert np.array_equal(info["action_mask"], env.action_masks())
        done = terminated | truncated
        if done.any():
            final = info["final_info"]
            assert {k for k in final if not k.startswith("_")} == keys
            assert np.array_equal(final["_hand_winner"], done)
            assert (final["end_reason"][truncated & ~terminated] == 0).all()
            assert not final["action_mask"][done].any()
            hands += int((final["end_reason"][done] != 0).sum())
        hands += int((info["end_reason"] != 0).sum())
        cut += int((truncated & ~terminated).sum())
    assert hands if max_steps is None else cut


@pytest.mark.parametrize("episode,max_steps", [("hand", None), ("match", None), ("hand", 9)])
def test_self_play_infos_are_steady(episode, max_steps):
    n = 3
    env = SelfPlayVectorEnv(num_envs=4, num_players=n, episode=episode, max_steps=max_steps)
    keys = {"player", "rewards", "current_player", "action_mask"} | hand_keys(episode)
    _, info = env.reset(seed=5)
    assert_vector_numeric(info, keys, 4)
    assert (info["player"] == -1).all() and not info["rewards"].any() and not info["scores"].any()
    rng = np.random.default_rng(0)
    hands = 0
    for _ in range(1500):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        _, _, terminated, truncated, info = env.step(actions)
        assert_vector_numeric(info, keys, 4)
        over = info["end_reason"] != 0
        assert not info["rewards"][~over].any()  # rewards come only with a hand's end
        won = over & (info["hand_winner"] >= 0)
        assert (info["rewards"][won, info["hand_winner"][won]] == 1.0).all()
        assert not (truncated & over).any()
        if episode == "match":
            assert (info["match_winner"][~terminated] == -1).all()
        hands += int(over.sum())
    assert hands or max_steps


def test_always_drawing_vector_games_are_truncated_at_the_default_cap():
    """The -v2 vector envs cut a stalled hand off after MAX_HAND_STEPS moves; -v0 keeps 100,000."""
    env = gymnasium.make_vec("c8env/SelfPlayVector-v2", num_envs=3, num_players=2)
    assert env.games.max_steps == MAX_HAND_STEPS
    _, info = env.reset(seed=0)
    for step in range(1, MAX_HAND_STEPS + 1):
        _, reward, terminated, truncated, info = env.step(np.array([always_draw(m) for m in info["action_mask"]]))
        assert not terminated.any() and not reward.any()
        assert truncated.all() == (step == MAX_HAND_STEPS) and (truncated.any() <= truncated.all())
    assert (info["end_reason"] == 0).all() and (info["hand_winner"] == -1).all()
    learner = gymnasium.make_vec("c8env/LearnerVector-v2", num_envs=3, num_players=2, opponents="random")
    _, info = learner.reset(seed=0)
    truncated_games = set()
    for _ in range(MAX_HAND_STEPS):
        _, _, terminated, truncated, info = learner.step(np.array([always_draw(m) for m in info["action_mask"]]))
        cut = truncated & ~terminated
        assert not (truncated & terminated).any()
        if cut.any():
            assert (info["final_info"]["end_reason"][cut] == 0).all()
            truncated_games |= set(np.flatnonzero(cut).tolist())
        if len(truncated_games) == 3:
            break
    assert truncated_games == {0, 1, 2}
    for env_id in ("c8env/SelfPlayVector-v0", "c8env/LearnerVector-v0"):
        with pytest.warns(DeprecationWarning, match="out of date"):
            assert gymnasium.make_vec(env_id, num_envs=1).games.max_steps == 100_000
