"""The batched engine (``c8env.vector``): NumPy's generator reproduced, and every game equal to the
scalar engine's game move by move (state, mask, observation, rewards, episode ends) for every preset
and 2-7 players, in hand and match episodes, compiled and (in a subprocess) without numba."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from c8env import IllegalActionError, preset_names
from c8env.engine import State
from c8env.episode import Episode
from c8env.observation import encode_observation
from c8env.seeding import derive_seed
from c8env.vector import VectorGames, rng
from c8env.vector.kernels import END_REASONS

ROOT = Path(__file__).resolve().parent.parent.parent


def generator(parts: list[int]) -> np.ndarray:
    words = np.zeros(16, dtype=np.uint64)
    count = 0
    for part in parts:
        count += rng.entropy_words(words[count:], np.uint64(part))
    gen = np.zeros(6, dtype=np.uint64)
    rng.seed_generator(words, count, gen, np.zeros(16, dtype=np.uint64))
    return gen


def test_generator_equals_numpys() -> None:
    draws = np.random.default_rng(7)
    order = np.zeros(104, dtype=np.int64)
    for trial in range(200):
        parts = [int(draws.integers(2**63)) if trial % 2 else int(draws.integers(2**20)), trial % 5, trial % 9]
        words = np.zeros(16, dtype=np.uint64)
        count = sum(rng.entropy_words(words[i:], np.uint64(p)) for i, p in [(0, parts[0])])
        count += rng.entropy_words(words[count:], np.uint64(parts[1]))
        count += rng.entropy_words(words[count:], np.uint64(parts[2]))
        state = np.zeros(4, dtype=np.uint64)
        rng.seed_state(words, count, state, np.zeros(16, dtype=np.uint64))
        assert (state == np.random.SeedSequence(parts).generate_state(4, np.uint64)).all()
        ours, theirs = generator(parts), np.random.default_rng(parts)
        assert [rng.next64(ours) for _ in range(3)] == list(theirs.bit_generator.random_raw(3))
        ours, theirs = generator(parts), np.random.default_rng(parts)
        players = 2 + trial % 6
        assert rng.below(ours, players) == theirs.integers(players)
        length = 1 + trial % 104
        rng.permute(ours, order, length)
        assert (order[:length] == theirs.permutation(length)).all()


def play_both(preset: str, n: int, games: int = 3, steps: int = 300, seed: int = 3, episode: str = "hand",
              reward: str = "win", max_steps: int | None = None) -> int:
    """Step a batch and, beside it, one scalar Episode per slot with the same seeds and actions; returns
    the number of episodes that ended."""
    batch = VectorGames(games, n, preset, episode=episode, reward=reward, max_steps=max_steps)
    batch.reset(seed)
    started = [0] * games

    def scalar(b: int) -> Episode:
        episode_ = Episode(episode, reward, max_steps)
        episode_.start(State.new(n, preset, seed=derive_seed(seed, b, started[b])))
        return episode_

    scalars = [scalar(b) for b in range(games)]
    ended = 0
    for step in range(steps):
        for b, ep in enumerate(scalars):
            state = ep.state
            where = f"{preset} {n}p game {b} step {step}"
            assert batch.to_dict(b) == state.to_dict(), where
            assert batch.current_player[b] == state.current_player, where
            assert (batch.action_mask[b] == state.legal_mask()).all(), where
            assert (batch.observation[b] == encode_observation(state, state.current_player)).all(), where
        actions = batch.random_actions()
        rewards, terminated, truncated = batch.step(actions)
        for b, ep in enumerate(scalars):
            expected = ep.step(int(actions[b]))
            assert np.allclose(rewards[b], np.zeros(n) if expected is None else expected), (preset, n, step, b)
            assert (terminated[b], truncated[b]) == (ep.terminated, ep.truncated), (preset, n, step, b)
            res = batch.results
            assert res.hand_over[b] == (expected is not None), (preset, n, step, b)
            if expected is not None:  # the hand's result, as the scalar Episode's info has it
                got = {"hand_winner": None if res.hand_winner[b] < 0 else int(res.hand_winner[b]),
                       "end_reason": END_REASONS[int(res.end_reason[b])], "scores": res.scores[b].tolist()}
                if "match_winner" in ep.result:
                    got["match_winner"] = None if res.match_winner[b] < 0 else int(res.match_winner[b])
                assert got == ep.result, (preset, n, step, b)
            if ep.done:
                assert (batch.final_observation[b] == encode_observation(ep.state, ep.state.current_player)).all()
                started[b] += 1
                ended += 1
                scalars[b] = scalar(b)
    return ended


@pytest.mark.slow
@pytest.mark.parametrize("n", range(2, 8))
@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_and_player_count_equals_the_scalar_engine(preset: str, n: int) -> None:
    play_both(preset, n, max_steps=150)  # short hands: many deals, truncations and autoresets


@pytest.mark.parametrize("preset,n", [("standard", 2), ("five_hands", 3), ("countdown", 2), ("uno_like", 4),
                                      ("penalty", 2), ("last_card", 5)])
def test_matches_with_points_equal_the_scalar_engine(preset: str, n: int) -> None:
    assert play_both(preset, n, games=2, steps=2500, episode="match", reward="points") >= 0


def test_whole_hands_end_in_both() -> None:
    assert play_both("special_cards", 2, games=4, steps=1500) > 0


def test_illegal_actions_are_refused_and_change_nothing() -> None:
    batch = VectorGames(3, 2)
    batch.reset(0)
    before = [batch.to_dict(b) for b in range(3)]
    actions = batch.random_actions()
    actions[1] = int(np.flatnonzero(batch.action_mask[1] == 0)[0])
    with pytest.raises(IllegalActionError, match="game 1"):
        batch.step(actions)
    actions[1] = 60
    with pytest.raises(IllegalActionError, match="out of range"):
        batch.step(actions)
    with pytest.raises(ValueError, match="shape"):
        batch.step(actions[:2])
    assert [batch.to_dict(b) for b in range(3)] == before


def test_bad_arguments() -> None:
    for kwargs, named in [({"num_envs": 0}, "num_envs"), ({"num_envs": 2, "num_players": 8}, "num_players"),
                          ({"num_envs": 2, "episode": "game"}, "episode"), ({"num_envs": 2, "rules": "nope"}, "nope")]:
        with pytest.raises(ValueError, match=named):
            VectorGames(**kwargs)
    with pytest.raises(RuntimeError, match="reset"):
        VectorGames(2).step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="seed"):
        VectorGames(2).reset(-1)


def test_without_autoreset_a_finished_game_must_be_reset() -> None:
    batch = VectorGames(2, 2, max_steps=3, autoreset=False)
    batch.reset(1)
    for _ in range(3):
        batch.step(batch.random_actions())
    assert batch.truncated.all()
    with pytest.raises(RuntimeError, match="autoreset"):
        batch.step(batch.random_actions())


def test_same_game_without_numba() -> None:
    """NUMBA_DISABLE_JIT=1 runs the same kernels as plain Python: the same games."""
    script = (
        "import json, numpy as np\n"
        "from c8env.vector import VectorGames, COMPILED\n"
        "games = VectorGames(2, 3, 'special_cards')\n"
        "games.reset(5)\n"
        "for _ in range(40):\n"
        "    games.step(games.random_actions())\n"
        "print(json.dumps({'compiled': COMPILED, 'games': [games.to_dict(b) for b in range(2)]}))\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    plain = json.loads(result.stdout)
    assert plain["compiled"] is False
    games = VectorGames(2, 3, "special_cards")
    games.reset(5)
    for _ in range(40):
        games.step(games.random_actions())
    assert plain["games"] == [games.to_dict(b) for b in range(2)]
