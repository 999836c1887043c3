"""``VectorGames(threads=N)``: a batch stepped in ranges of slots on N threads plays the very games of one
thread (each game has its own generators), whatever the split; the self-play vector env passes it on."""

from __future__ import annotations

import pickle
import threading
import time

import numpy as np
import pytest

from c8env.envs.vector_envs import SelfPlayVectorEnv
from c8env.vector import VectorGames
from c8env.vector import games as games_module


def assert_same(one: VectorGames, many: VectorGames, where: str) -> None:
    """Every array a caller reads after a step, and every game's state, equal in both batches."""
    for name in ("observation", "action_mask", "rewards", "terminated", "truncated", "current_player"):
        assert np.array_equal(getattr(one, name), getattr(many, name)), f"{name} differs at {where}"
    ended = one.terminated | one.truncated
    assert np.array_equal(one.final_observation[ended], many.final_observation[ended]), f"final views at {where}"
    over = one.results.hand_over
    assert np.array_equal(over, many.results.hand_over), f"hand_over differs at {where}"
    for name in ("hand_winner", "end_reason", "scores", "match_winner"):
        assert np.array_equal(getattr(one.results, name)[over], getattr(many.results, name)[over]), \
            f"results.{name} differs at {where}"
    for name, array in one.games._asdict().items():  # every game's whole state
        assert np.array_equal(array, getattr(many.games, name)), f"games.{name} differs at {where}"


@pytest.mark.parametrize("num_envs,threads,num_players,rules,episode,observations,range_size", [
    (300, 2, 2, "standard", "hand", True, games_module.RANGE),
    (61, 3, 3, "five_hands", "match", True, 4),  # ranges of 4 games, the last one shorter
    (3, 4, 4, "uno_like", "hand", False, 1),  # more threads than games
])
def test_threads_play_the_games_of_one_thread(num_envs: int, threads: int, num_players: int, rules: str,
                                              episode: str, observations: bool, range_size: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(games_module, "RANGE", range_size)
    kwargs = {"num_players": num_players, "rules": rules, "episode": episode, "reward": "points", "max_steps": 80,
              "observations": observations}
    one, many = VectorGames(num_envs, threads=1, **kwargs), VectorGames(num_envs, threads=threads, **kwargs)
    assert (one.threads, many.threads) == (1, threads)
    for games in (one, many):
        games.reset(11)
    draws = np.random.default_rng(3)
    ended = 0
    for step in range(600):
        actions = one.random_actions()
        assert np.array_equal(actions, many.random_actions()), f"random actions differ at step {step}"
        active = None if step % 3 else draws.random(num_envs) < 0.7  # some games sit out some steps
        one.step(actions, active)
        many.step(actions, active)
        assert_same(one, many, f"step {step}")
        ended += int((one.terminated | one.truncated).sum())
        if step == 300:  # explicit deals in some slots, mid-run
            seeds = draws.integers(0, 2**63, num_envs)
            slots = draws.random(num_envs) < 0.5
            one.reset_deals(seeds, slots)
            many.reset_deals(seeds, slots)
            assert_same(one, many, "reset_deals")
    assert ended > num_envs  # truncations, hand and match ends and autoresets all happened along the way
    assert [one.to_dict(b) for b in range(num_envs)] == [many.to_dict(b) for b in range(num_envs)]


def test_a_pickled_batch_steps_on_threads_of_its_own() -> None:
    games = VectorGames(300, threads=2)
    games.reset(1)
    for _ in range(5):
        games.step(games.random_actions())
    copied = pickle.loads(pickle.dumps(games))
    for _ in range(5):
        actions = games.random_actions()
        assert np.array_equal(actions, copied.random_actions())
        games.step(actions)
        copied.step(actions)
    assert_same(games, copied, "after pickling")


def test_an_error_in_another_thread_is_raised_by_step() -> None:
    games = VectorGames(3 * games_module.RANGE, threads=2)
    games.reset(0)
    actions = games.random_actions()

    def step_range(*args: object) -> None:  # stands in for the kernel: the caller's thread is slow, the other fails
        if threading.current_thread() is threading.main_thread():
            time.sleep(0.2)
        else:
            raise RuntimeError(f"range from {args[-2]} failed")

    games._step = step_range
    with pytest.raises(RuntimeError, match="range from .* failed"):
        games.step(actions)


@pytest.mark.parametrize("threads", [0, -1, True, 1.5, "2", None])
def test_threads_must_be_a_positive_int(threads: object) -> None:
    with pytest.raises(ValueError, match=r"^threads=.* is invalid; allowed: an int >= 1$"):
        VectorGames(4, threads=threads)  # type: ignore[arg-type]


def test_self_play_vector_env_passes_threads_on() -> None:
    envs = [SelfPlayVectorEnv(num_envs=8, threads=threads, max_steps=50) for threads in (1, 2)]
    assert [env.games.threads for env in envs] == [1, 2]
    first, second = (env.reset(seed=5) for env in envs)
    assert np.array_equal(first[0], second[0])
    draws = np.random.default_rng(0)
    for _ in range(200):
        masks = envs[0].action_masks()
        actions = np.array([draws.choice(np.flatnonzero(mask)) for mask in masks])
        one, two = (env.step(actions) for env in envs)
        for a, b in zip(one[:4], two[:4], strict=True):
            assert np.array_equal(a, b)
        assert one[4].keys() == two[4].keys()
        for key in one[4]:
            assert np.array_equal(one[4][key], two[4][key]), key
