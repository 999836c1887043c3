"""``shaping``: play-outs on the true cards replay the hand their players would play, the batched envs shape each
learner reward by them (r + gamma * phi(s') - phi(s)) and change nothing else, and ``shaping: self`` plays out
with the actor's weights of each rollout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from c8env.agents import load
from c8env.agents.search_compiled import network
from c8env.envs.learner_games import LearnerGames
from c8env.tools.maskable_ppo import policy_layers
from training.callback import ShapingRefresh
from training.config import config_from_dict
from training.model import build_model, drop_critic
from training.research.playouts import playout_moves, playout_values, stock_sampled_advantages
from training.vec import make_vec_env

ROOT = Path(__file__).resolve().parent.parent.parent
#: Retired clones of the search (single networks), kept with the research.
CLONE_2P, CLONE_4P = (str(ROOT / "training" / "research" / "policies" / f"distill-standard-{n}p.npz") for n in (2, 4))


def config(**fields):
    return config_from_dict({"num_players": 4, "n_envs": 8, "n_steps": 32, "batch_size": 128, "vec_env": "batched",
                             "pretrain_agent": None, "cutoff_reward": -1.0, "max_steps": 1000, "gamma": 1.0,
                             "pi_layers": [32, 32], "vf_layers": [32, 32], "opponent_weights": {"greedy": 1.0},
                             **fields})


def fresh_phi(env) -> np.ndarray:
    games = env.games
    return playout_values(games.games, games.table, games.learner_seat, env.shaping_net)


def reset_pair(shaped: dict, plain: dict, seed: int):
    """Shaped and plain batched envs of :func:`config` with these fields, seeded alike and reset: ``(shaped env,
    plain env, shaped observations, plain observations)``."""
    envs = [make_vec_env(config(**fields), []) for fields in (shaped, plain)]
    for env in envs:
        env.seed(seed)
    return envs[0], envs[1], envs[0].reset(), envs[1].reset()


@pytest.mark.parametrize(("players", "policy"), [(2, None), (4, None), (2, CLONE_2P), (4, CLONE_4P)])
def test_a_playout_is_the_hand_its_players_play(players, policy):
    """A learner who plays the play-out's own moves against greedy: every play-out from one of its decisions ends as
    the hand does (greedy, the network's argmax and the reshuffles are deterministic)."""
    games = LearnerGames(16, players, opponents="greedy")
    games.reset(7)
    agent = None if policy is None else load(policy, num_players=players)
    net = network([], "tanh") if agent is None else network(agent.layers, agent.activation)
    phis: list[list[float]] = [[] for _ in range(16)]
    checked = 0
    while checked < 40:
        phi = playout_values(games.games, games.table, games.learner_seat, net)
        for b in range(16):
            phis[b].append(phi[b])
        _, reward, terminated, truncated = games.step(playout_moves(games.games, games.table, games.learner_seat, net))
        for b in np.flatnonzero(terminated | truncated):
            assert phis[b] == [reward[b]] * len(phis[b])
            phis[b], checked = [], checked + 1


@pytest.mark.parametrize(("shaping", "gamma", "opponents"), [("greedy", 1.0, {"greedy": 1.0}),
                                                             (CLONE_4P, 0.9, {"greedy": 1.0}),
                                                             ("greedy", 1.0, {"greedy": 0.5, "random": 0.5})])
def test_the_envs_shape_the_rewards_and_nothing_else(shaping, gamma, opponents):
    """Same seeds, same actions (the play-out's move mostly, a random one at times): observations, ends and infos
    are the unshaped envs'; each reward is r + gamma * phi(s') - phi(s) with phi valued afresh (0 after the end),
    also where the envs skipped a play-out because the learner made its move at a greedy table."""
    shaped_env, plain_env, obs, base = reset_pair({"shaping": shaping, "gamma": gamma, "opponent_weights": opponents},
                                                  {"gamma": gamma, "opponent_weights": opponents}, 3)
    rng = np.random.default_rng(0)
    ended = deviations = 0
    for _ in range(150):
        assert np.array_equal(obs, base)
        phi = fresh_phi(shaped_env)
        games = shaped_env.games
        actions = playout_moves(games.games, games.table, games.learner_seat, shaped_env.shaping_net)
        masks = np.stack(shaped_env.env_method("action_masks"))
        off = rng.random(len(actions)) < 0.1
        actions[off] = [rng.choice(np.flatnonzero(m)) for m in masks[off]]
        deviations += off.sum()
        for env in (shaped_env, plain_env):
            env.step_async(actions)
        (obs, reward, dones, infos), (base, plain_reward, plain_dones, plain_infos) = \
            shaped_env.step_wait(), plain_env.step_wait()
        assert np.array_equal(dones, plain_dones)
        expected = plain_reward + gamma * np.where(dones, 0.0, fresh_phi(shaped_env)) - phi
        assert np.allclose(reward, expected, atol=1e-6)
        for info, plain_info in zip(infos, plain_infos, strict=True):
            assert info.keys() == plain_info.keys()
            if "episode" in info:
                ended += 1
                assert info["episode"]["r"] == plain_info["episode"]["r"]  # the unshaped return
    assert ended > 10 and deviations > 50


def test_stock_sampled_rewards_go_to_the_moves_off_the_playout():
    """``shaping_stocks``: a learner move that is the play-out's own earns 0, the others the mean advantage over the
    sampled stock orders (0 for the same move, a draw of the generator otherwise); observations, ends and infos are
    the unshaped envs'."""
    shaped_env, plain_env, obs, base = reset_pair({"shaping": CLONE_4P, "shaping_stocks": 4}, {}, 4)
    rng = np.random.default_rng(1)
    rewarded = 0
    for _ in range(60):
        assert np.array_equal(obs, base)
        games = shaped_env.games
        planned = playout_moves(games.games, games.table, games.learner_seat, shaped_env.shaping_net)
        actions = planned.copy()
        masks = np.stack(shaped_env.env_method("action_masks"))
        off = (rng.random(len(actions)) < 0.3) & (masks.sum(axis=1) > 1)
        others = masks & (np.arange(masks.shape[1]) != planned[:, None])
        actions[off] = [rng.choice(np.flatnonzero(m)) for m in others[off]]
        rows = np.flatnonzero(off)
        again = [stock_sampled_advantages(games.games, games.table, games.learner_seat, shaped_env.shaping_net, rows,
                                          actions, moves, 4, np.random.default_rng(9)) for moves in (actions, planned)]
        assert not again[0].any()  # a move against itself, whatever the stock orders
        assert np.array_equal(again[1], stock_sampled_advantages(  # one generator state, one result
            games.games, games.table, games.learner_seat, shaped_env.shaping_net, rows, actions, planned, 4,
            np.random.default_rng(9)))
        for env in (shaped_env, plain_env):
            env.step_async(actions)
        (obs, reward, dones, infos), (base, _, plain_dones, plain_infos) = shaped_env.step_wait(), plain_env.step_wait()
        assert np.array_equal(dones, plain_dones) and not reward[~off].any()
        rewarded += np.count_nonzero(reward[off])
        assert [info.get("episode", {}).get("r") for info in infos] == \
            [info.get("episode", {}).get("r") for info in plain_infos]
    assert rewarded > 20


def test_the_rollouts_play_out_with_the_actors_weights():
    """``shaping: self``: at a rollout's start the envs' play-out network becomes the actor's layers."""
    cfg = config(shaping="self")
    env = make_vec_env(cfg, [])
    model = build_model(cfg, env)
    assert env.shaping_net.shapes.shape[0] == 0  # greedy until the first rollout
    start = network(*policy_layers(model.policy))
    model.learn(cfg.n_steps * cfg.n_envs, callback=[ShapingRefresh()])
    assert np.array_equal(env.shaping_net.weights, start.weights)
    assert np.allclose(env._potential, fresh_phi(env))
    assert not np.array_equal(network(*policy_layers(model.policy)).weights, start.weights)  # PPO moved it


def test_without_a_critic_the_advantages_are_the_shaped_rewards():
    """``critic: false``: the value is 0 before and after PPO's updates, so with ``gae_lambda: 0`` each advantage
    in the rollout buffer is the shaped reward of its step."""
    cfg = config(shaping="greedy", critic=False, gae_lambda=0.0)
    env = make_vec_env(cfg, [])
    model = build_model(cfg, env)
    drop_critic(model)
    model.learn(2 * cfg.n_steps * cfg.n_envs)
    buffer = model.rollout_buffer
    assert not buffer.values.any()
    assert np.array_equal(buffer.advantages.ravel(), buffer.rewards.swapaxes(0, 1).ravel())  # (flattened by PPO)
    assert (buffer.rewards != 0).any()
    obs = torch.as_tensor(env.reset())
    with torch.no_grad():
        assert not model.policy.predict_values(obs).any()


def test_bad_shaping_is_refused():
    with pytest.raises(ValueError, match="config key 'shaping' = 'random' is invalid: allowed: 'greedy', 'self'"):
        make_vec_env(config(shaping="random"), [])
    env = make_vec_env(config(shaping="greedy"), [])
    with pytest.raises(ValueError, match="set_shaping_policy needs shaping 'self', got 'greedy'"):
        env.env_method("set_shaping_policy", [], "tanh")
    with pytest.raises(ValueError, match="config key 'shaping' = 'self' is invalid: .*set vec_env=batched, "
                                         "episode=hand and cutoff_reward"):
        config(shaping="self", episode="match")
    with pytest.raises(ValueError, match="config key 'shaping_stocks' = 4 is invalid: samples the play-outs of "
                                         "shaping: set shaping too"):
        config(shaping_stocks=4)


@pytest.mark.slow
def test_a_run_trains_with_shaping_self_and_no_critic(tmp_path):
    """training.train with ``shaping: self``, ``critic: false`` and ``gae_lambda: 0``: warm start, PPO, evaluation,
    export; the checkpoint's value head is still 0."""
    fields = {"num_players": 4, "pi_layers": [32, 32], "vf_layers": [32, 32], "n_envs": 8, "n_steps": 64,
              "batch_size": 256, "n_epochs": 2, "pretrain_agent": "greedy", "pretrain_samples": 500,
              "pretrain_epochs": 1, "eval_interval": 1024, "eval_deals": 5, "final_eval_deals": 5,
              "vec_env": "batched", "cutoff_reward": -1.0, "max_steps": 1000, "shaping": "self", "gae_lambda": 0.0,
              "critic": False,
              "run_root": str(tmp_path), "opponent_weights": {"greedy": 1.0}}
    path = tmp_path / "shaped.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items()))
    command = [sys.executable, "-m", "training.train", "--config", str(path), "--no-progress", "--total-steps", "1024"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / "shaped-s0"
    assert load(str(run / "policy.npz"), num_players=4).layers[0][0].shape == (32, 401)
    model = MaskablePPO.load(str(sorted((run / "checkpoints").glob("*.zip"))[-1]), device="cpu")
    assert not model.policy.value_net.weight.any() and not model.policy.value_net.bias.any()
