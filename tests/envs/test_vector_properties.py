"""Property-based checks (Hypothesis) of the batched single-agent games and the Gymnasium vector envs
(:class:`c8env.envs.learner_games.LearnerGames`, :class:`c8env.envs.vector_envs.LearnerVectorEnv`,
:class:`c8env.envs.vector_envs.SelfPlayVectorEnv`): generated sequences of resets (seeds good and bad, per-game
seed lists, options) and steps (actions of every form, legal and not), under every preset, 2-7 players, hands and
matches, short ``max_steps`` (episodes end and are autoreset within a few steps).

- a call is refused exactly when its input is bad, with the documented error only (``ValueError``, its subclass
  ``IllegalActionError``, ``RuntimeError`` for a step before any reset), in one line naming the input;
- a refused call changes nothing (every array, every generator, the env's own generator);
- the same seeds and actions give the same episodes, other seeds other ones;
- after every accepted call each game conserves its cards and waits for a player who has a legal action.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from c8env import IllegalActionError
from c8env.envs.learner_games import LearnerGames
from c8env.envs.vector_envs import LearnerVectorEnv, SelfPlayVectorEnv
from c8env.vector import VectorGames
from tests.vector.fuzz_inputs import (
    JUNK,
    SETTINGS,
    TWO,
    action_inputs,
    as_int_ids,
    batch_config,
    card_counts,
    check_refusal,
    first_illegal,
    games_state,
    is_seed,
    legal_choice,
    outcome,
    refused_unless,
    seed_inputs,
    snapshot,
)

OPPONENTS = st.sampled_from(["random", "greedy", "mixed"])
OPTIONS = st.sampled_from([None, None, None, {}, {"state": {}}, {"seed": 1}, 0, [], "", np.array([1, 2]), "x"])


def learner_kwargs(config: dict[str, Any], opponents: str) -> dict[str, Any]:
    """A config with opponents: one kind for every seat, or random and greedy in turn."""
    mixed = [("random", "greedy")[k % 2] for k in range(config["num_players"] - 1)]
    return dict(config, opponents=mixed if opponents == "mixed" else opponents)


def per_game_seeds(size: int, none: bool = True) -> st.SearchStrategy[Any]:
    """A list of per-game seeds (LearnerGames.reset), good or bad (a wrong length, a bad entry); None entries
    (fresh entropy at a first reset) where ``none``."""
    nothing = st.none() if none else st.nothing()
    entry = st.one_of(nothing, st.integers(0, 2**70), st.sampled_from([-1, 1.5, "1", True]))
    return st.one_of(st.lists(st.one_of(nothing, st.integers(0, 2**63)), min_size=size, max_size=size),
                     st.lists(entry, min_size=size, max_size=size), st.lists(entry, max_size=size + 1).map(tuple))


def seed_accepted(seed: Any, size: int, per_game: bool) -> bool:
    """Whether a reset takes ``seed``: None or an int >= 0, or (``per_game``) a list of those, one per game."""
    if per_game and isinstance(seed, Sequence) and not isinstance(seed, (str, bytes)):
        return len(seed) == size and all(s is None or is_seed(s, None) for s in seed)
    return seed is None or is_seed(seed, None)


def step_errors(has_reset: bool, actions: Any, mask: np.ndarray) -> dict[type[Exception], str | tuple[str, ...]]:
    """The errors a step with ``actions`` may raise (none: it must be accepted) and the word each must hold: before
    any reset a RuntimeError, or a ValueError for malformed actions (the envs check them first)."""
    ids = as_int_ids(actions, mask.shape[0])
    if not has_reset:
        return {RuntimeError: "reset", **({ValueError: "actions"} if ids is None else {})}
    if ids is None:
        return {ValueError: "actions"}
    illegal = first_illegal(ids, mask)
    return {IllegalActionError: illegal} if illegal else {}


def check_games(games: LearnerGames | VectorGames) -> None:
    """Each game holds every card of its decks and waits for a player with a legal action (the learner's
    turn in LearnerGames)."""
    decks = games.rules.num_decks(games.num_players)
    for b in range(games.num_envs):
        assert (card_counts(games.games, b) == decks).all(), f"game {b}: cards not conserved"
        assert games.action_mask[b].any(), f"game {b} waits without a legal action"
    if isinstance(games, LearnerGames):
        assert (games.games.current == games.learner_seat).all()


def check_step(target: LearnerGames | LearnerVectorEnv | SelfPlayVectorEnv, actions: Any, has_reset: bool) -> bool:
    """Step with ``actions``: accepted or refused as it must be (a refusal changing nothing); whether accepted."""
    before = snapshot(target)
    expected = step_errors(has_reset, actions, target.action_masks())
    result, err = outcome(lambda: target.step(actions))
    check_refusal(err, expected)
    if err is not None:
        assert snapshot(target) == before, "a refused step changed the games"
    elif isinstance(target, (LearnerVectorEnv, SelfPlayVectorEnv)):
        size = target.num_envs
        obs, reward, terminated, truncated, info = result
        assert obs.shape[0] == reward.shape[0] == terminated.shape[0] == size
        ended = info.get("_final_obs", np.zeros(size, dtype=bool))
        assert (ended == (terminated | truncated)).all()
    return err is None


def check_learner_reset(games: LearnerGames, seed: Any) -> bool:
    """``games.reset(seed)``: accepted or refused as it must be; whether accepted."""
    before = snapshot(games)
    _, err = outcome(lambda: games.reset(seed))
    check_refusal(err, refused_unless(seed_accepted(seed, games.num_envs, True), "seed"))
    if err is not None:
        assert snapshot(games) == before, "a refused reset changed the games"
    return err is None


def play(target: LearnerGames | LearnerVectorEnv | SelfPlayVectorEnv, seed: int, moves: int) -> None:
    """Legal moves (episodes end and restart)."""
    choices = np.random.default_rng(seed)
    for _ in range(moves):
        target.step(legal_choice(target.action_masks(), choices.integers(0, 1000, size=target.num_envs).tolist()))


# ----- LearnerGames -----------------------------------------------------------------------------------------------
@SETTINGS
@given(batch_config(), OPPONENTS, st.integers(0, 30), st.one_of(seed_inputs(none=True), per_game_seeds(2)))
@example(TWO, "random", 3, b"\x01\x02").via("per-game seeds given as bytes were taken as ints")
def test_learner_games_reset_after_some_moves(config: dict[str, Any], opponents: str, moves: int, seed: Any) -> None:
    games = LearnerGames(**learner_kwargs(config, opponents))
    if moves:
        games.reset(moves)
        play(games, moves, moves)
    if check_learner_reset(games, seed) or moves:
        check_games(games)


@SETTINGS
@given(batch_config(), OPPONENTS, st.data())
def test_learner_games_calls_are_applied_or_refused_without_change(config: dict[str, Any], opponents: str,
                                                                   data: st.DataObject) -> None:
    games = LearnerGames(**learner_kwargs(config, opponents))
    has_reset, size = False, games.num_envs
    if data.draw(st.integers(0, 3), label="reset first"):  # most sequences start from a reset (some do not)
        has_reset = check_learner_reset(games, data.draw(st.integers(0, 2**40), label="first seed"))
    for call in data.draw(st.lists(st.sampled_from(["step", "step", "play", "reset"]), min_size=4, max_size=12),
                          label="calls"):
        if call == "reset":
            seed = data.draw(st.one_of(seed_inputs(), per_game_seeds(size, none=False)), label="seed")
            has_reset = check_learner_reset(games, seed) or has_reset
        elif call == "step":
            check_step(games, data.draw(action_inputs(games.action_masks()), label="actions"), has_reset)
        elif has_reset:
            play(games, data.draw(st.integers(0, 2**32), label="play seed"), data.draw(st.integers(1, 40)))
        if has_reset:
            check_games(games)


@SETTINGS
@given(batch_config(), OPPONENTS, st.integers(0, 2**40), st.integers(0, 2**32), st.integers(1, 60))
def test_learner_games_same_seeds_same_episodes(config: dict[str, Any], opponents: str, seed: int,
                                                moves_seed: int, moves: int) -> None:
    kwargs = learner_kwargs(config, opponents)
    first, second = LearnerGames(**kwargs), LearnerGames(**kwargs)
    first.reset(seed + 1)
    first.step(legal_choice(first.action_mask, [0] * first.num_envs))
    first.reset(seed)  # played before: a seeded reset starts over
    second.reset([seed + b for b in range(second.num_envs)])  # the same seeds, as a list
    choices = np.random.default_rng(moves_seed)
    for move in range(moves):
        assert games_state(first.games) == games_state(second.games), f"move {move}"
        assert snapshot(first.opponents) == snapshot(second.opponents)
        assert (first.learner_seat == second.learner_seat).all() and (first.skipped == second.skipped).all()
        actions = legal_choice(first.action_mask, choices.integers(0, 1000, size=first.num_envs).tolist())
        out = [first.step(actions), second.step(actions)]
        assert all((a == b).all() for a, b in zip(*out, strict=True))
    other = LearnerGames(**kwargs)
    other.reset(seed + 1000)
    second.reset(seed)
    assert games_state(other.games) != games_state(second.games)


# ----- the Gymnasium vector envs ------------------------------------------------------------------------------------
def make_env(kind: str, config: dict[str, Any], opponents: str) -> LearnerGames | LearnerVectorEnv | SelfPlayVectorEnv:
    """A LearnerGames (``learner_games``), LearnerVectorEnv (``learner``) or SelfPlayVectorEnv (``self_play``)."""
    if kind == "learner_games":
        return LearnerGames(**learner_kwargs(config, opponents))
    return LearnerVectorEnv(**learner_kwargs(config, opponents)) if kind == "learner" else SelfPlayVectorEnv(**config)


ENVS = st.sampled_from(["learner", "self_play"])
ACTIONS = st.one_of(st.lists(st.integers(-3, 63), min_size=1, max_size=4).map(np.array),
                    st.lists(st.integers(0, 59), max_size=4), st.sampled_from(JUNK + [[0, True], [[1], [1, 2]]]))


@SETTINGS
@given(st.sampled_from(["learner_games", "learner", "self_play"]), batch_config(), OPPONENTS, st.integers(0, 30),
       ACTIONS)
@example("learner_games", TWO, "random", 3, np.array([2**64 - 1, 2**63], dtype=np.uint64)).via(
    "uint64 ids from 2**63 were named wrapped to negative ones")
@example("learner", TWO, "random", 3, [0, True]).via("a bool in a list of actions was action 1")
@example("self_play", TWO, "random", 3, [[1], [1, 2]]).via("a ragged list: NumPy's message, naming no argument")
def test_one_step_after_some_moves(kind: str, config: dict[str, Any], opponents: str, moves: int,
                                   actions: Any) -> None:
    target = make_env(kind, config, opponents)
    if moves:
        target.reset(moves) if kind == "learner_games" else target.reset(seed=moves)
        play(target, moves, moves)
    if check_step(target, actions, moves > 0) or moves:
        check_games(target.games if kind != "learner_games" else target)


def check_env_reset(env: LearnerVectorEnv | SelfPlayVectorEnv, seed: Any, options: Any) -> bool:
    """``env.reset(seed=seed, options=options)``: accepted or refused as it must be; whether accepted."""
    before, size = snapshot(env), env.num_envs
    result, err = outcome(lambda: env.reset(seed=seed, options=options))
    options_ok = options is None or (isinstance(options, dict) and not options)
    seed_ok = seed_accepted(seed, size, False) and (isinstance(env, LearnerVectorEnv) or seed is None or seed < 2**64)
    check_refusal(err, refused_unless(options_ok and seed_ok, "seed" if options_ok else "options"))
    if err is not None:
        assert snapshot(env) == before, "a refused reset changed the env"
        return False
    obs, info = result
    assert obs.shape == (size, env.single_observation_space.shape[0])
    assert (info["action_mask"] == env.action_masks()).all()
    return True


@SETTINGS
@given(ENVS, batch_config(), OPPONENTS, st.integers(0, 30), seed_inputs(none=True), OPTIONS)
@example("learner", TWO, "random", 3, -1, None).via("a bad seed raised gymnasium.error.Error (not ValueError)")
@example("learner", TWO, "random", 3, np.int64(5), None).via("a NumPy int seed raised gymnasium.error.Error")
@example("self_play", TWO, "random", 3, 2**64, None).via("seed 2**64 was refused after the env's generator moved")
@example("self_play", TWO, "random", 0, None, np.array([1, 2])).via("array options: NumPy's truth-value error")
@example("learner", TWO, "random", 0, None, []).via("falsy non-dict options were taken")
def test_vector_env_reset_after_some_moves(kind: str, config: dict[str, Any], opponents: str, moves: int, seed: Any,
                                          options: Any) -> None:
    env = make_env(kind, config, opponents)
    if moves:
        env.reset(seed=moves)
        play(env, moves, moves)
    if check_env_reset(env, seed, options) or moves:
        check_games(env.games)


@SETTINGS
@given(ENVS, batch_config(), OPPONENTS, st.data())
def test_vector_env_calls_are_applied_or_refused_without_change(kind: str, config: dict[str, Any], opponents: str,
                                                                data: st.DataObject) -> None:
    env = make_env(kind, config, opponents)
    has_reset = False
    if data.draw(st.integers(0, 3), label="reset first"):
        has_reset = check_env_reset(env, data.draw(st.integers(0, 2**40), label="first seed"), None)
    for call in data.draw(st.lists(st.sampled_from(["step", "step", "play", "reset"]), min_size=4, max_size=12),
                          label="calls"):
        if call == "reset":
            has_reset = check_env_reset(env, data.draw(seed_inputs(), label="seed"),
                                        data.draw(OPTIONS, label="options")) or has_reset
        elif call == "step":
            check_step(env, data.draw(action_inputs(env.action_masks()), label="actions"), has_reset)
        elif has_reset:
            play(env, data.draw(st.integers(0, 2**32), label="play seed"), data.draw(st.integers(1, 40)))
        if has_reset:
            check_games(env.games)


@SETTINGS
@given(ENVS, batch_config(), OPPONENTS, st.integers(0, 2**40), st.integers(0, 2**32), st.integers(1, 60))
def test_vector_env_same_seeds_same_episodes(kind: str, config: dict[str, Any], opponents: str, seed: int,
                                             moves_seed: int, moves: int) -> None:
    first, second, other = (make_env(kind, config, opponents) for _ in range(3))
    outs = [first.reset(seed=seed), second.reset(seed=seed)]
    assert snapshot(outs[0]) == snapshot(outs[1])
    choices = np.random.default_rng(moves_seed)
    for move in range(moves):
        actions = legal_choice(first.action_masks(), choices.integers(0, 1000, size=first.num_envs).tolist())
        outs = [first.step(actions), second.step(actions)]
        assert snapshot(outs[0]) == snapshot(outs[1]), f"move {move}"
    assert snapshot(other.reset(seed=seed + 1)) != snapshot(second.reset(seed=seed))
