"""The JAX rules (``c8env.jax``) against the batched engine: from the same position and the same action, the same
legal mask, observation, rewards, episode ends and next position, for every preset and 2-7 players (the position
passes between the two as ``State.to_dict()`` data, as the batched engine's own tests compare it with the scalar
engine). Deals and reshuffles draw from JAX keys: a move that reshuffles is compared card for card up to the
shuffled cards' order."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import c8env.jax as cj  # noqa: E402
from c8env import preset_names  # noqa: E402
from c8env.agents.batched import greedy_actions  # noqa: E402
from c8env.engine import END_REASONS, State  # noqa: E402
from c8env.jax._convert import position, with_view  # noqa: E402
from c8env.vector import VectorGames  # noqa: E402
from tests.golden.generate import GAMES, Game, digest, file_lines  # noqa: E402

#: One compiled step for every rule set (the rules are an argument); it compiles once per player count and batch.
STEP = jax.jit(jax.vmap(cj.step_fn, in_axes=(None, 0, 0, 0)))
VIEW = jax.jit(jax.vmap(with_view, in_axes=(None, 0)))


def stacked(states: list[Any]) -> Any:
    return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *states)


def row(states: Any, b: int) -> Any:
    return jax.tree_util.tree_map(lambda x: x[b], states)


def reshuffled_view(data: dict, drawer: int) -> dict:
    """A state dict with the stock and the drawer's hand (which took cards from a shuffled stock) as one multiset."""
    out = dict(data)
    out["stock"] = sorted(Counter(data["stock"] + data["hands"][drawer]).items())
    out["hands"] = [sorted(h) if p != drawer else len(h) for p, h in enumerate(data["hands"])]
    return out


def play_against_engine(preset: str, n: int, games: int = 4, steps: int = 100, seed: int = 0,
                        max_steps: int | None = 60, reward: str = "win", greedy: float = 0.5) -> Counter:
    """Step a batched-engine batch with legal actions (greedy's in a share ``greedy`` of the moves, else random)
    and, from each of its positions, the JAX env with the same actions; returns counts of what happened (moves
    compared, hands ended, truncations, reshuffles)."""
    batch = VectorGames(games, n, preset, reward=reward, max_steps=max_steps, autoreset=False)
    env = cj.env(n, preset, reward=reward, max_steps=max_steps)
    batch.reset(seed)
    seen: Counter = Counter()
    pick = np.random.default_rng(seed)
    keys = jax.random.split(jax.random.PRNGKey(seed), steps * games).reshape(steps, games, -1)
    for step in range(steps):
        before = [batch.to_dict(b) for b in range(games)]
        states = VIEW(env.table, stacked([position(before[b], env.rules, keys[step, b],
                                                   int(batch.games.hand_steps[b])) for b in range(games)]))
        where = f"{preset} {n}p step {step}"
        assert (np.asarray(states.legal_action_mask) == batch.action_mask.astype(bool)).all(), where
        assert (np.asarray(states.observation) == batch.observation).all(), where
        actions = np.where(pick.random(games) < greedy, greedy_actions(batch), batch.random_actions())
        shuffles = batch.games.reshuffles.copy()
        drawers = batch.current_player.copy()
        rewards, terminated, truncated = batch.step(actions)
        after = jax.tree_util.tree_map(np.asarray, STEP(env.table, states, actions, keys[step]))
        for b in range(games):
            got, want = env.to_dict(row(after, b)), batch.to_dict(b)
            at = f"{where} game {b} action {int(actions[b])}"
            if batch.games.reshuffles[b] != shuffles[b]:
                assert reshuffled_view(got, int(drawers[b])) == reshuffled_view(want, int(drawers[b])), at
                seen["reshuffles"] += 1
                continue
            assert got == want, at
            assert np.allclose(np.asarray(after.rewards[b]), rewards[b]), at
            assert (bool(after.terminated[b]), bool(after.truncated[b])) == (terminated[b], truncated[b]), at
            assert (np.asarray(after.observation[b]) == batch.observation[b]).all(), (at, np.flatnonzero(np.asarray(after.observation[b]) != batch.observation[b]), np.asarray(after.observation[b])[np.asarray(after.observation[b]) != batch.observation[b]], batch.observation[b][np.asarray(after.observation[b]) != batch.observation[b]])
            if terminated[b]:
                assert np.asarray(after.legal_action_mask[b]).all(), at  # Pgx: all True once terminated
                assert END_REASONS[int(after.end_reason[b])] == batch.end_reason(b), at
            else:
                assert (np.asarray(after.legal_action_mask[b]) == batch.action_mask[b].astype(bool)).all(), at
            seen["moves"] += 1
        seen["hands"] += int(terminated.sum())
        seen["truncated"] += int(truncated.sum())
        done = terminated | truncated
        if done.any():
            batch.reset_deals(np.arange(games, dtype=np.uint64) + 1000 * (step + 1), done)
    return seen


@pytest.mark.parametrize("preset,n", [("standard", 2), ("last_card", 3), ("countdown", 5), ("stop_the_round", 7)])
def test_presets_and_player_counts_equal_the_batched_engine(preset: str, n: int) -> None:
    seen = play_against_engine(preset, n)
    assert seen["moves"] > 300 and seen["truncated"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("n", range(2, 8))
@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_and_player_count_equals_the_batched_engine(preset: str, n: int) -> None:
    seen = play_against_engine(preset, n, steps=60)
    assert seen["moves"] > 150


def test_whole_hands_points_and_reshuffles() -> None:
    """Long hands: hands won (points rewards), blocked or cut off, and reshuffles, as the batched engine has them."""
    seen = play_against_engine("special_cards", 2, steps=250, max_steps=None, reward="points", seed=3, greedy=0.2)
    assert seen["hands"] > 0 and seen["reshuffles"] > 0
    seen = play_against_engine("no_reshuffle", 3, steps=150, max_steps=None, seed=4)
    assert seen["hands"] > 0
    seen = play_against_engine("countdown", 2, steps=200, max_steps=None, seed=0, greedy=0.8)  # counts go down
    assert seen["hands"] > 4


MOVE = re.compile(r"move \d+: seat (\d+) legal \[([\d ]*)\] action (\d+) \(.*?\) obs ([0-9a-f]{16})(?: rewards \[(.*)\])?$")


@pytest.mark.parametrize("game", [game for game in GAMES if game.episode == "hand" and game.env_version is None],
                         ids=lambda game: game.name)
def test_the_golden_hands_replay(game: Game) -> None:
    """Each golden hand, from its recorded deal: at every move the JAX env's player to act, legal actions and
    observation digest are the file's, its next position the engine's, and the hand ends with the file's rewards
    and flags (after a reshuffle, which JAX keys order differently, the JAX game goes on from the engine's)."""
    env = cj.env(game.players, game.preset, reward=game.reward, max_steps=game.max_steps)
    engine = State.new(game.players, game.preset, seed=game.seed)
    copies = 4  # the batch size of the tests above: their compiled step serves here too
    states = VIEW(env.table, stacked([position(engine.to_dict(), env.rules, jax.random.PRNGKey(k))
                                      for k in range(copies)]))
    lines = [line for line in file_lines(game.path) if line.startswith("move ")]
    flags = None
    for number, line in enumerate(lines, 1):
        seat, legal, action, seen, rewards = MOVE.match(line).groups()
        first = row(states, 0)
        at = f"{game.name} move {number}"
        assert int(first.current_player) == int(seat), at
        assert np.flatnonzero(first.legal_action_mask).tolist() == [int(a) for a in legal.split()], at
        assert digest(first.observation, first.legal_action_mask) == seen, at
        shuffles = int(first.reshuffles)
        engine.apply(int(action))
        states = jax.tree_util.tree_map(np.asarray, STEP(env.table, states, np.full(copies, int(action)),
                                                         jax.random.split(jax.random.PRNGKey(number), copies)))
        after = row(states, 0)
        if int(after.reshuffles) != shuffles:  # the engine's stock order from here on
            states = VIEW(env.table, stacked([position(engine.to_dict(), env.rules, jax.random.PRNGKey(k), number)
                                              for k in range(copies)]))
        else:
            assert env.to_dict(after) == engine.to_dict(), at
        expected = [0.0] * game.players if rewards is None else [float(r) for r in rewards.split()]
        assert np.allclose(after.rewards, expected, atol=1e-6), at
        flags = (bool(after.terminated), bool(after.truncated))
    end = next(line for line in file_lines(game.path) if line.startswith("end: "))
    assert end.endswith(f"terminated {flags[0]}, truncated {flags[1]}"), game.name


def test_generated_rule_sets_equal_the_batched_engine() -> None:
    """Custom rules (every RuleSet field varied: tests/vector/custom_rules.py), hand episodes played to their end
    or cut off, as the batched engine is held to the scalar one."""
    from tests.vector.custom_rules import generated_games

    hands = [game for game in generated_games(16, seed=7) if game[2]["episode"] == "hand"]
    seen: Counter = Counter()
    for rules, players, settings in hands:
        seen += play_against_engine(rules, players, games=2, steps=settings["steps"], max_steps=settings["max_steps"],
                                    reward=settings["reward"], greedy=0.5, seed=players)
    assert len(hands) == 8 and seen["moves"] > 1500 and seen["hands"] > 0 and seen["truncated"] > 0
