"""``oracle_critic``: the batched envs append the other players' hands (and ``oracle_stock_cards`` of the stock) to
each observation, the critic reads them, the actor does not (and exports as any other), ``critic_lr_scale`` sets
the critic's own rate, and a run trains and resumes with them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO

from c8env.agents.policy import PolicyAgent
from c8env.cards import NUM_CARDS
from c8env.observation import OBS_SIZE
from c8env.tools.maskable_ppo import ScaledObservation, policy_layers, save_npz
from training.batched import BatchedVecEnv
from training.config import config_from_dict
from training.model import OracleCriticPolicy, build_model
from training.vec import make_vec_env

ROOT = Path(__file__).resolve().parent.parent.parent


def config(**fields):
    return config_from_dict({"num_players": 4, "n_envs": 6, "n_steps": 64, "batch_size": 128, "vec_env": "batched",
                             "pretrain_agent": None, "cutoff_reward": -1.0, "pi_layers": [32, 32],
                             "vf_layers": [32, 32], "opponent_weights": {"random": 0.5, "greedy": 0.5}, **fields})


def hidden_cards(env: BatchedVecEnv, stock_cards: int) -> np.ndarray:
    """The other hands from the learner's left, then the stock's top cards (the last of its array is drawn first),
    read card by card from the engine's state."""
    games, rows = env.games.games, []
    for b, seat in enumerate(env.games.learner_seat):
        row = []
        for k in range(1, env.games.num_players):
            held = int(games.held[b, (seat + k) % env.games.num_players])
            row += [(held >> card) & 1 for card in range(NUM_CARDS)]
        for depth in range(stock_cards):
            place = int(games.stock_len[b]) - 1 - depth
            row += [int(place >= 0 and games.stock[b, place] == card) for card in range(NUM_CARDS)]
        rows.append(row)
    return np.array(rows, dtype=np.float32)


@pytest.mark.parametrize("stock_cards", [0, 3, 60])
def test_the_observation_is_followed_by_the_other_hands_and_the_stock(stock_cards):
    """Same seeds, same actions: the oracle envs' first 401 entries are the plain envs' observation, the rest the
    other players' true hands and the stock's top cards, at every step (hands dealt anew after episodes end
    included; 60 cards: more than the stock holds, zeros below its bottom)."""
    oracle = make_vec_env(config(oracle_critic=True, oracle_stock_cards=stock_cards), [])
    plain = make_vec_env(config(), [])
    assert oracle.observation_space.shape == (OBS_SIZE + (3 + stock_cards) * NUM_CARDS,)
    for env in (oracle, plain):
        env.seed(5)
    obs, base = oracle.reset(), plain.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        assert np.array_equal(obs[:, :OBS_SIZE], base)
        assert np.array_equal(obs[:, OBS_SIZE:], hidden_cards(oracle, stock_cards))
        masks = np.stack(oracle.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        oracle.step_async(actions)
        plain.step_async(actions)
        (obs, _, _, infos), (base, _, _, plain_infos) = oracle.step_wait(), plain.step_wait()
        for info, plain_info in zip(infos, plain_infos, strict=True):
            if "terminal_observation" in info:
                ended += 1
                assert np.array_equal(info["terminal_observation"][:OBS_SIZE], plain_info["terminal_observation"])
                assert not info["terminal_observation"][OBS_SIZE:].any()
    assert ended > 0


def test_the_actor_ignores_the_hands_and_exports_as_any_other(tmp_path):
    """The critic's value moves with the hidden hands (once its weights on them are trained), the actor's
    logits do not; the exported NumPy policy reads the 401-entry observation and gives the torch actor's logits."""
    env = make_vec_env(config(oracle_critic=True), [])
    model = build_model(config(oracle_critic=True), env)
    policy = model.policy
    assert isinstance(policy, OracleCriticPolicy)
    first = policy.mlp_extractor.value_net[0]
    assert not first.weight[:, OBS_SIZE:].any()  # the critic starts from the observation alone
    env.seed(1)
    obs = torch.as_tensor(env.reset())
    shuffled = obs.clone()
    shuffled[:, OBS_SIZE:] = shuffled[torch.randperm(len(obs)), OBS_SIZE:]
    with torch.no_grad():
        first.weight[:, OBS_SIZE:] = torch.randn_like(first.weight[:, OBS_SIZE:])
        logits = [policy.action_net(policy.mlp_extractor.forward_actor(policy.pi_features_extractor(x)))
                  for x in (obs, shuffled)]
        values = [policy.predict_values(x) for x in (obs, shuffled)]
    assert torch.equal(logits[0], logits[1])
    assert not torch.equal(values[0], values[1])
    path = tmp_path / "actor.npz"
    save_npz(model, path, 4, "standard")
    exported = PolicyAgent(path)
    assert np.allclose(exported.logits(obs[:, :OBS_SIZE].numpy()), logits[0].numpy(), atol=1e-5)


def test_a_plain_space_and_an_actor_reading_the_hands_are_refused():
    with pytest.raises(ValueError, match="at least the 401 observation entries"):
        ScaledObservation(spaces.Box(0.0, 1.0, (10,)))
    model = build_model(config(oracle_critic=True), make_vec_env(config(oracle_critic=True), []))
    model.policy.pi_features_extractor.scale[OBS_SIZE] = 1.0
    with pytest.raises(ValueError, match="reads inputs past the observation vector"):
        policy_layers(model.policy)


@pytest.mark.slow
def test_a_run_warm_starts_trains_and_resumes_with_the_oracle_critic(tmp_path):
    """training.train with oracle_critic: the warm start's fit, PPO, evaluation and export; --resume reloads it."""
    fields = {"num_players": 4, "pi_layers": [32, 32], "vf_layers": [32, 32], "n_envs": 8, "n_steps": 64,
              "batch_size": 256, "n_epochs": 2, "pretrain_agent": "greedy", "pretrain_samples": 500,
              "pretrain_epochs": 1, "eval_interval": 1024, "eval_deals": 5, "final_eval_deals": 5,
              "checkpoint_interval": 1024, "vec_env": "batched", "cutoff_reward": -1.0, "max_steps": 1000,
              "oracle_critic": True, "oracle_stock_cards": 2, "critic_lr_scale": 5.0, "run_root": str(tmp_path),
              "opponent_weights": {"greedy": 1.0}}
    path = tmp_path / "oracle.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items()))
    command = [sys.executable, "-m", "training.train", "--config", str(path), "--no-progress"]
    for extra in (["--total-steps", "1024"], ["--total-steps", "2048", "--resume"]):
        result = subprocess.run(command + extra, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / "oracle-s0"
    assert PolicyAgent(run / "policy.npz").layers[0][0].shape[1] == OBS_SIZE
    model = MaskablePPO.load(str(sorted((run / "checkpoints").glob("*.zip"))[-1]), device="cpu")
    assert isinstance(model.policy, OracleCriticPolicy) and model.num_timesteps == 2048
    assert [group.get("lr_scale", 1.0) for group in model.policy.optimizer.param_groups] == [1.0, 5.0]
    assert model.policy.mlp_extractor.value_net[0].weight[:, OBS_SIZE:].abs().sum() > 0  # PPO trained them


def test_the_critic_learns_at_its_own_scale_of_the_rate():
    """critic_lr_scale=10: Adam's first step moves the critic's weights 10 times as far as the actor's (each by
    about the rate times the scale), and leaves the rate SB3 set on every group as it was."""
    model = build_model(config(oracle_critic=True, critic_lr_scale=10.0, learning_rate=1e-3),
                        make_vec_env(config(oracle_critic=True), []))
    policy = model.policy
    actor, critic = policy.action_net.weight, policy.value_net.weight
    before = actor.detach().clone(), critic.detach().clone()
    obs = torch.rand(4, OBS_SIZE + 3 * NUM_CARDS)
    values, _, _ = policy.evaluate_actions(obs, torch.zeros(4, dtype=torch.long))
    loss = values.sum() + policy.get_distribution(obs).distribution.logits.sum()
    policy.optimizer.zero_grad()
    loss.backward()
    policy.optimizer.step()
    moved = [(after.detach() - start).abs().max().item() for after, start in zip((actor, critic), before, strict=True)]
    assert moved[0] == pytest.approx(1e-3, rel=0.05) and moved[1] == pytest.approx(1e-2, rel=0.05)
    assert [group["lr"] for group in policy.optimizer.param_groups] == [1e-3, 1e-3]
    with pytest.raises(ValueError, match="critic_lr_scale.*set oracle_critic=true"):
        config(critic_lr_scale=10.0)
    with pytest.raises(ValueError, match="oracle_stock_cards.*set oracle_critic=true"):
        config(oracle_stock_cards=4)
