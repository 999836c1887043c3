"""``c8env.jax.env``: Pgx's functional API (a Pgx loop runs with only the env line changed), its deals, episode
ends, the illegal-action rule, ``observe`` for any seat, and the arguments it refuses."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import c8env.jax as cj  # noqa: E402
from c8env import State, preset_names  # noqa: E402
from c8env.cards import NUM_CARDS  # noqa: E402
from c8env.jax import agents  # noqa: E402
from c8env.observation import OBS_SIZE, encode_observation  # noqa: E402

B = 8


@pytest.fixture(scope="module")
def env() -> cj.Env:
    return cj.env(num_players=2, rules="standard", max_steps=200)


@pytest.fixture(scope="module")
def fns(env: cj.Env) -> tuple:
    """The env's init and step, jitted over a batch, compiled once for the module."""
    return jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))


def row(states: object, b: int) -> object:
    return jax.tree_util.tree_map(lambda x: np.asarray(x[b]), states)


def test_a_pgx_loop_runs_with_only_the_env_line_changed(env: cj.Env, fns: tuple) -> None:
    """Pgx's README loop: jit(vmap(init/step)), random legal actions from the mask, until every game ended."""
    init, step = fns
    assert (env.num_players, env.num_actions, env.observation_shape) == (2, 60, (OBS_SIZE,))
    key = jax.random.PRNGKey(42)
    key, subkey = jax.random.split(key)
    state = init(jax.random.split(subkey, B))
    ended = np.zeros(B, dtype=bool)
    totals = np.zeros((B, 2))
    moves = 0
    while not (state.terminated | state.truncated).all():
        key, subkey = jax.random.split(key)
        logits = jnp.log(state.legal_action_mask.astype(jnp.float32))
        action = jax.random.categorical(subkey, logits, axis=1)
        state = step(state, action, jax.random.split(key, B))
        totals += np.asarray(state.rewards)
        ended |= np.asarray(state.terminated | state.truncated)
        moves += 1
        for b in range(B):  # every position is one the engine's checked reader accepts
            if moves % 25 == 0:
                State.from_dict(env.to_dict(row(state, b)))
    assert moves <= 200 and ended.all()
    assert state.observation.shape == (B, OBS_SIZE) and state.rewards.shape == (B, 2)
    won = np.asarray(state.terminated) & (np.asarray(state.winner) >= 0)
    assert np.allclose(totals.sum(1), 0.0)
    assert (totals[won].max(1) == 1.0).all() and (totals[~np.asarray(state.terminated)] == 0).all()
    assert (np.asarray(state._step_count)[np.asarray(state.truncated)] == 200).all()


def test_deals_are_positions_of_the_rules(env: cj.Env) -> None:
    """Every preset's deal at every player count: the engine's reader accepts it (cards of the decks, hand sizes,
    the starter), the first player follows the dealer, and the dealer varies with the key."""
    init = jax.jit(cj.init_fn, static_argnums=1)
    keys = jax.random.split(jax.random.PRNGKey(3), 3)
    dealers: Counter = Counter()
    for i, preset in enumerate(preset_names()):
        n = 2 + i % 6
        game = cj.env(n, preset)
        for key in keys:
            s = init(game.table, n, key)
            data = game.to_dict(s)
            engine = State.from_dict(data, rules=preset)
            assert engine.to_dict() == data, preset
            cards = sum(len(h) for h in data["hands"]) + len(data["stock"]) + len(data["discard"])
            assert cards == NUM_CARDS * game.rules.num_decks(n), preset
            seat = int(s.current_player)
            assert seat == (int(s.dealer) + (0 if data["phase"] == "declare" else 1)) % n, preset
            assert (np.asarray(s.legal_action_mask) == engine.legal_mask().astype(bool)).all(), preset
            assert (np.asarray(s.observation) == encode_observation(engine, seat)).all(), preset
            dealers[(preset, int(s.dealer))] += 1
    assert len(dealers) > len(preset_names())


def test_observe_any_seat_and_the_key_of_the_state(env: cj.Env, fns: tuple) -> None:
    init, _ = fns
    state = row(init(jax.random.split(jax.random.PRNGKey(5), B)), 0)
    engine = State.from_dict(env.to_dict(state))
    for seat in range(2):
        assert (np.asarray(env.observe(state, seat)) == encode_observation(engine, seat)).all()
    assert (np.asarray(env.observe(state)) == np.asarray(state.observation)).all()
    action = int(np.flatnonzero(state.legal_action_mask)[0])
    after = jax.jit(env.step)(state, action)  # no key: the state's own key draws, and moves on
    assert not (np.asarray(after.key) == np.asarray(state.key)).all()
    assert int(after._step_count) == 1


def test_an_illegal_action_loses_and_a_finished_game_stays(env: cj.Env, fns: tuple) -> None:
    init, step = fns
    state = init(jax.random.split(jax.random.PRNGKey(7), B))
    masks = np.asarray(state.legal_action_mask)
    illegal = np.array([int(np.flatnonzero(~m)[0]) for m in masks])
    after = step(state, illegal, jax.random.split(jax.random.PRNGKey(8), B))
    assert np.asarray(after.terminated).all() and np.asarray(after.legal_action_mask).all()
    actor = np.asarray(state.current_player)
    rewards = np.asarray(after.rewards)
    assert (rewards[np.arange(B), actor] == -1.0).all() and (rewards[np.arange(B), 1 - actor] == 1.0).all()
    for b in range(B):
        assert env.to_dict(row(after, b)) == env.to_dict(row(state, b))
    again = step(after, np.full(B, 56), jax.random.split(jax.random.PRNGKey(9), B))
    assert (np.asarray(again.rewards) == 0).all() and np.asarray(again.terminated).all()
    assert env.to_dict(row(again, 0)) == env.to_dict(row(after, 0))


def test_auto_reset_and_greedy_inside_jit() -> None:
    """``auto_reset`` deals a fresh hand where one ended; greedy, inside the same jitted scan, wins hands."""
    game = cj.env(2, "standard")
    act = agents.greedy(game)
    step = cj.auto_reset(game.step, game.init)

    def move(state: cj.State, key: jax.Array) -> tuple[cj.State, tuple[jax.Array, jax.Array]]:
        state = jax.vmap(step)(state, jax.vmap(act)(state.observation, state.legal_action_mask),
                               jax.random.split(key, B))
        return state, (state.terminated, state.rewards)

    state = jax.vmap(game.init)(jax.random.split(jax.random.PRNGKey(11), B))
    final, (terminated, rewards) = jax.jit(lambda s, k: jax.lax.scan(move, s, jax.random.split(k, 150)))(
        state, jax.random.PRNGKey(12))
    ends = np.asarray(terminated).sum(0)
    assert (ends >= 1).all() and ends.max() >= 2  # greedy ends hands in well under 150 moves; slots play on
    assert (np.asarray(final._step_count) < 150).all()  # every ended hand was replaced by a new one
    assert np.allclose(np.asarray(rewards).sum(-1), 0.0)


@pytest.mark.parametrize("kwargs,named", [({"episode": "match"}, "episode"), ({"num_players": 8}, "num_players"),
                                          ({"reward": "money"}, "reward"), ({"rules": "nope"}, "nope"),
                                          ({"max_steps": 0}, "max_steps")])
def test_bad_arguments(kwargs: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        cj.env(**kwargs)


def test_a_reshuffled_stock_deals_uniformly_random_cards(env: cj.Env) -> None:
    """The discard pile reshuffled (lazily: each card drawn is a uniformly random one of those left): over many
    keys, the first draw and the next are spread evenly over the pile, and never the same card twice."""
    data = env.to_dict(row(jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(2), 1)), 0))
    data = {**data, "discard": data["stock"] + data["discard"], "stock": []}  # the stock all played out
    state = env.from_dict(data, jax.random.PRNGKey(0))
    assert bool(state.legal_action_mask[56])  # draw: the pile is reshuffled
    draw = jax.jit(jax.vmap(env.step, in_axes=(0, None, 0)))  # one compiled draw for both
    copies = jax.tree_util.tree_map(lambda x: np.repeat(np.asarray(x)[None], 3000, axis=0), state)
    first = draw(copies, 56, jax.random.split(jax.random.PRNGKey(1), 3000))
    second = draw(first, 56, jax.random.split(jax.random.PRNGKey(4), 3000))
    seat = int(state.current_player)
    pile = Counter(data["discard"][:-1])
    hands = [np.asarray(state.hand[seat])[None, :], np.asarray(first.hand[:, seat]), np.asarray(second.hand[:, seat])]
    counts = []
    for earlier, later in zip(hands, hands[1:], strict=False):
        added = later - earlier
        assert (added.sum(1) == 1).all() and (added >= 0).all()  # one card each time
        counts.append(Counter(np.argmax(added, axis=1).tolist()))
    assert (hands[2] - hands[0]).max() <= 1  # the two draws are two different cards
    assert np.asarray(first.unshuffled).all() and (np.asarray(first.stock_len) == len(pile) - 1).all()
    for drawn in counts:
        assert len(drawn) == len(pile) and min(drawn.values()) > 3000 / len(pile) * 0.6
