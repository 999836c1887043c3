"""Tianshou 2.x multi-agent: a masked PPO learner against a fixed agent in c8env's PettingZoo AEC env.

Tianshou's ``PettingZooEnv`` wraps ``c8env.env()``: every player's move is one env step, the observation is
``{"agent_id", "obs", "mask"}`` (the mask is c8env's ``action_mask``) and the reward a vector, one entry per
player. The 2.x algorithm API seats one algorithm per player with ``MultiAgentOnPolicyAlgorithm``:
``player_0`` is PPO with a masked actor (illegal logits set to -1e8 before the ``Categorical``), ``player_1``
a frozen algorithm playing one of c8env's built-in agents (``random`` by default).

Tianshou's dispatcher hands each player only its own transitions, which fits games where everyone moves at
every step; in a turn-based game the opponent's moves fall between the learner's. :class:`TurnBasedPPO`
therefore folds them into the learner's transitions before the advantages are computed: each learner
transition gets the learner's rewards until its next move (the loss the opponent's winning move brings
included), ends where the hand ends, and its next observation is the learner's own next one. The trained
actor is exported to ONNX and played by ``c8env eval`` against ``random`` and ``greedy``.

    python examples/tianshou_marl.py --steps 60000
    python examples/tianshou_marl.py --quick        # a few seconds of training: what the test suite runs

Needs tianshou 2.0 (the ``examples`` extra: ``pip install -e ".[examples]"``) and the ``onnx`` extra.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import tianshou
import torch
from tianshou.algorithm import PPO
from tianshou.algorithm.algorithm_base import OnPolicyAlgorithm, TrainingStats
from tianshou.algorithm.algorithm_base import Policy as TianshouPolicy
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOnPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
from tianshou.data.utils.converter import to_torch_as
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OnPolicyTrainerParams
from torch import nn

import c8env
from c8env.agents import load
from c8env.tools.evaluation import evaluate
from c8env.tools.onnx_export import export_onnx

LEARNER = "player_0"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000, help="env steps (moves of both players) to train for")
    parser.add_argument("--opponent", default="random", help="a c8env agent spec for player_1")
    parser.add_argument("--n-envs", type=int, default=8, help="envs in Tianshou's DummyVectorEnv")
    parser.add_argument("--eval-deals", type=int, default=1000, help="deals of each c8env eval (2 hands each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/examples/tianshou"))
    parser.add_argument("--quick", action="store_true", help="a tiny run (the test suite's)")
    return parser


def mlp(out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(401, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(), nn.Linear(128, out))


class MaskedActor(nn.Module):
    """Tianshou actor: the observation Batch's ``obs`` to logits, illegal ones (``mask`` False) set to -1e8."""

    def __init__(self) -> None:
        super().__init__()
        self.logits = mlp(60)

    def forward(self, obs, state=None, info=None):
        logits = self.logits(torch.as_tensor(obs.obs, dtype=torch.float32))
        legal = torch.as_tensor(obs.mask, dtype=torch.bool)
        return torch.where(legal, logits, torch.tensor(-1e8)), state


class Critic(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.value = mlp(1)

    def forward(self, obs, **kwargs):
        return self.value(torch.as_tensor(obs.obs, dtype=torch.float32))


def fold_opponent_moves(buffer, indices: np.ndarray, rew: np.ndarray):
    """The learner's transitions at ``indices`` with the opponent's moves that follow each folded in: the
    learner's reward (``rew``: its column of the buffer's rewards) summed until its next move, whether the hand
    ended (terminated) or the rollout stopped (truncated) before it, and the index of the last step folded in."""
    reward, last = rew[indices].astype(np.float64), indices.copy()
    terminated, truncated = buffer.terminated[indices].copy(), buffer.truncated[indices].copy()
    walking = ~(terminated | truncated)
    while walking.any():
        following = buffer.next(last)  # an index is its own next at the end of what was collected
        stuck = walking & (following == last)
        truncated |= stuck  # the rollout stops mid-hand: bootstrap there, as Tianshou does
        theirs = walking & ~stuck & (buffer.obs.agent_id[following] != LEARNER)
        reward[theirs] += rew[following[theirs]]
        last[theirs] = following[theirs]
        terminated[theirs] |= buffer.terminated[last[theirs]]
        truncated[theirs] |= buffer.truncated[last[theirs]]
        walking = theirs & ~(terminated | truncated)
    return reward, terminated, truncated, last


class TurnBasedPPO(PPO):
    """PPO whose transitions are the learner's decisions, with the opponent's moves in between folded in."""

    def _add_returns_and_advantages(self, batch, buffer, indices):
        # buffer.rew is the learner's column here (the multi-agent dispatcher selected it)
        reward, terminated, truncated, last = fold_opponent_moves(buffer, indices, np.asarray(buffer.rew))
        batch.obs_next = buffer.obs_next[last]  # the learner's next view (or the hand's last one)
        with torch.no_grad():
            batch.v_s = self.critic(batch.obs).flatten()
            v_next = self.critic(batch.obs_next).flatten().numpy() * ~terminated
        v_s = batch.v_s.numpy()
        end = terminated | truncated  # GAE does not run on past a hand's end or the rollout's
        delta = reward + self.gamma * v_next - v_s
        advantages, running = np.zeros_like(delta), 0.0
        for t in reversed(range(len(delta))):
            running = delta[t] + self.gamma * self.gae_lambda * (0.0 if end[t] else running)
            advantages[t] = running
        batch.returns = to_torch_as(advantages + v_s, batch.v_s)
        batch.adv = to_torch_as(advantages, batch.v_s)
        return batch


class FixedAgent(OnPolicyAlgorithm):
    """A c8env agent (``random``, ``greedy``, a policy file) as a Tianshou algorithm that never learns."""

    class Policy(TianshouPolicy):
        def __init__(self, action_space, agent) -> None:
            super().__init__(action_space=action_space)
            self.agent = agent

        def forward(self, batch, state=None, **kwargs):
            observations = np.asarray(batch.obs.obs, dtype=np.float32)
            masks = np.asarray(batch.obs.mask).astype(np.int8)
            return Batch(act=self.agent.act_batch(observations, masks))

    def __init__(self, action_space, spec: str, seed: int) -> None:
        super().__init__(policy=self.Policy(action_space, load(spec, seed=seed)))

    def _update_with_batch(self, batch, batch_size, repeat) -> TrainingStats:
        return TrainingStats()


class ActorLogits(nn.Module):
    """The actor's network alone (observations -> logits), for the ONNX export."""

    def __init__(self, actor: MaskedActor) -> None:
        super().__init__()
        self.net = actor.logits

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return self.net(observation)


def make_env() -> PettingZooEnv:
    return PettingZooEnv(c8env.env(num_players=2))


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
        args.steps, args.n_envs, args.eval_deals = 512, 2, 10
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(1)  # small networks: more threads only wait on each other
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)  # per-player returns: a (n, 2) array, fine
    env = make_env()
    actor = MaskedActor()
    learner = TurnBasedPPO(policy=DiscreteActorPolicy(actor=actor, action_space=env.action_space), critic=Critic(),
                           optim=AdamOptimizerFactory(lr=3e-4), gamma=0.99, gae_lambda=0.95, ent_coef=0.01,
                           max_grad_norm=0.5)
    algorithm = MultiAgentOnPolicyAlgorithm(algorithms=[learner, FixedAgent(env.action_space, args.opponent, args.seed)],
                                            env=env)  # in the order of env.agents: player_0, player_1

    envs = DummyVectorEnv([make_env for _ in range(args.n_envs)])
    envs.seed(args.seed)
    rollout = 256 if args.quick else 4096  # env steps per update
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(rollout, args.n_envs))
    collector.reset()
    epoch_steps = rollout * max(1, args.steps // (10 * rollout))  # whole rollouts: the trainer collects those
    start = time.perf_counter()

    def progress(epoch: int, env_step: int) -> None:
        if env_step % epoch_steps == 0:
            print(f"epoch {epoch}: {env_step:,} env steps, {time.perf_counter() - start:.0f} s", flush=True)

    result = algorithm.run_training(OnPolicyTrainerParams(
        training_collector=collector, max_epochs=max(1, args.steps // epoch_steps), epoch_num_steps=epoch_steps,
        collection_step_num_env_steps=rollout, batch_size=256, update_step_num_repetitions=4,
        training_fn=progress, multi_agent_return_reduction=lambda returns: returns[:, 0], show_progress=False))
    seconds = time.perf_counter() - start
    steps = result.train_step
    print(f"trained {steps:,} env steps (moves of both players) in {seconds:.1f} s: {steps / seconds:,.0f} steps/s "
          f"(tianshou {tianshou.__version__}, c8env {c8env.__version__})")
    policy = export_onnx(ActorLogits(actor), args.out / "policy.onnx", {"description": "examples/tianshou_marl.py"})
    print(f"wrote {policy}")
    report(policy, args.eval_deals, args.seed)


if __name__ == "__main__":
    main()
