"""A CleanRL-style single-file PPO on c8env's batched vector env, masks from ``info["action_mask"]``.

The loop of CleanRL's ``ppo.py`` (rollout storage, GAE, clipped surrogate, value loss, entropy bonus) on
``gymnasium.make_vec("c8env/LearnerVector-v2", num_envs=...)``: every game seats one learner against
built-in opponents, which the env plays in batch between the learner's decisions. The only change for
card games is the mask: the logits of illegal actions are set to a large negative number before sampling,
both while collecting and in the update. The trained actor is exported to ONNX and played by
``c8env eval`` against ``random`` and ``greedy``.

    python examples/cleanrl_ppo.py --steps 300000
    python examples/cleanrl_ppo.py --quick          # a few seconds: what the test suite runs

Needs torch and the ``onnx`` extra (``pip install -e ".[examples]"`` installs every example's libraries).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import c8env  # registers c8env/LearnerVector-v2
from c8env.tools.evaluation import evaluate
from c8env.tools.onnx_export import export_onnx


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300_000, help="learner decisions to train for")
    parser.add_argument("--num-envs", type=int, default=64, help="games stepped as one batch")
    parser.add_argument("--num-steps", type=int, default=128, help="rollout length per game")
    parser.add_argument("--opponents", default="greedy", help="random, greedy or a .npz policy")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--eval-deals", type=int, default=1000, help="deals of each c8env eval (2 hands each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/examples/cleanrl"))
    parser.add_argument("--quick", action="store_true", help="a tiny run (the test suite's)")
    return parser


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """CleanRL's actor and critic, two separate MLPs; the actor alone maps observations to logits."""

    def __init__(self, obs_size: int, num_actions: int, hidden: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_size, hidden)), nn.Tanh(),
                                    layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
                                    layer_init(nn.Linear(hidden, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_size, hidden)), nn.Tanh(),
                                   layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
                                   layer_init(nn.Linear(hidden, num_actions), std=0.01))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        logits = torch.where(mask, self.actor(x), torch.tensor(-1e8))  # illegal actions: probability 0
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def train(args: argparse.Namespace) -> tuple[Agent, int, float]:
    envs = gymnasium.make_vec("c8env/LearnerVector-v2", num_envs=args.num_envs, opponents=args.opponents)
    obs_size, num_actions = envs.single_observation_space.shape[0], int(envs.single_action_space.n)
    agent = Agent(obs_size, num_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    gamma, gae_lambda, clip, ent_coef, vf_coef, epochs, minibatches = 0.99, 0.95, 0.2, 0.01, 0.5, 4, 4

    n, b = args.num_steps, args.num_envs
    obs = torch.zeros((n, b, obs_size))
    masks = torch.zeros((n, b, num_actions), dtype=torch.bool)
    actions, logprobs, rewards, dones, values = (torch.zeros((n, b)) for _ in range(5))

    next_obs, info = envs.reset(seed=args.seed)
    next_obs, next_mask = torch.tensor(next_obs), torch.tensor(info["action_mask"])
    next_done = torch.zeros(b)
    iterations = max(1, args.steps // (n * b))
    episodes, wins, start = 0, 0, time.perf_counter()
    for iteration in range(1, iterations + 1):
        for param_group in optimizer.param_groups:  # anneal the learning rate to 0
            param_group["lr"] = (1.0 - (iteration - 1.0) / iterations) * args.lr
        for step in range(n):
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            # same-step autoreset: where an episode ended, next_obs and the mask are already the next episode's
            next_obs, reward, terminated, truncated, info = envs.step(action.numpy())
            rewards[step] = torch.tensor(reward, dtype=torch.float32)
            next_done = torch.tensor(np.logical_or(terminated, truncated), dtype=torch.float32)
            next_obs, next_mask = torch.tensor(next_obs), torch.tensor(info["action_mask"])
            episodes += int(terminated.sum())
            wins += int((reward[terminated] > 0).sum())

        with torch.no_grad():  # generalised advantage estimation
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            last = 0
            for t in reversed(range(n)):
                nonterminal = 1.0 - (next_done if t == n - 1 else dones[t + 1])
                following = next_value if t == n - 1 else values[t + 1]
                delta = rewards[t] + gamma * following * nonterminal - values[t]
                advantages[t] = last = delta + gamma * gae_lambda * nonterminal * last
            returns = advantages + values

        b_obs, b_masks = obs.reshape(-1, obs_size), masks.reshape(-1, num_actions)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_adv, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        batch, minibatch = n * b, n * b // minibatches
        for _ in range(epochs):
            order = torch.randperm(batch)
            for lo in range(0, batch, minibatch):
                idx = order[lo:lo + minibatch]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[idx], b_masks[idx],
                                                                              b_actions.long()[idx])
                ratio = (newlogprob - b_logprobs[idx]).exp()
                adv = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
                newvalue = newvalue.view(-1)
                v_clipped = b_values[idx] + torch.clamp(newvalue - b_values[idx], -clip, clip)
                v_loss = 0.5 * torch.max((newvalue - b_returns[idx]) ** 2, (v_clipped - b_returns[idx]) ** 2).mean()
                loss = pg_loss - ent_coef * entropy.mean() + vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
        if iteration % 10 == 0 or iteration == iterations:
            print(f"iteration {iteration}/{iterations}: {iteration * n * b:,} steps, "
                  f"{wins}/{episodes} hands won since the last report")
            episodes = wins = 0
    seconds = time.perf_counter() - start
    envs.close()
    return agent, iterations * n * b, seconds


def report(policy: Path, deals: int, seed: int) -> None:
    """``c8env eval POLICY random`` and ``c8env eval POLICY greedy``: the policy's win rate, 95% interval."""
    for opponent in ("random", "greedy"):
        table = evaluate([str(policy), opponent], deals=deals, seed=seed)
        stats = table.stats[0]
        low, high = stats.interval
        print(f"c8env eval {policy} {opponent} --deals {deals}: win rate {stats.win_rate:.1%} "
              f"[{low:.1%}, {high:.1%}] over {stats.hands:,} hands")


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.quick:
        args.steps, args.num_envs, args.num_steps, args.eval_deals = 512, 8, 64, 10
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    agent, steps, seconds = train(args)
    print(f"trained {steps:,} learner steps in {seconds:.1f} s: {steps / seconds:,.0f} steps/s "
          f"(torch {torch.__version__}, c8env {c8env.__version__})")
    policy = export_onnx(agent.actor, args.out / "policy.onnx", {"description": "examples/cleanrl_ppo.py"})
    print(f"wrote {policy}")
    report(policy, args.eval_deals, args.seed)


if __name__ == "__main__":
    main()
