"""TorchRL: a masked PPO learner against a fixed c8env agent through ``PettingZooWrapper(env, use_mask=True)``.

TorchRL wraps a turn-based (AEC) PettingZoo env with one group per player: every env step is one player's
move, ``(player, "mask")`` says which player is acting, ``(player, "action_mask")`` holds c8env's legal
actions for the player to act, and every player's reward of the step is in ``("next", player, "reward")``.
``player_0`` is the learner: a ``ProbabilisticActor`` whose ``MaskedCategorical`` gives illegal actions
probability 0; ``player_1`` a ``TensorDictModule`` playing one of c8env's built-in agents (``greedy`` by
default). A ``Collector`` gathers both players' moves; the learner's decisions are then taken out of the
rollout, each with the reward it earned until its next decision (the opponent's moves in between included)
and the next observation it saw, and PPO (TorchRL's ``GAE`` and ``ClipPPOLoss``) trains on those. The
actor's network is exported to ONNX and played by ``c8env eval`` against ``random`` and ``greedy``.

    python examples/torchrl_pettingzoo.py --steps 20000
    python examples/torchrl_pettingzoo.py --quick   # a few seconds: what the test suite runs

Needs torchrl 0.14 and tensordict 0.14 (the ``examples`` extra: ``pip install -e ".[examples]"``) and the
``onnx`` extra.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import tensordict
import torch
import torchrl
from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import PettingZooWrapper
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import c8env
from c8env.agents import load
from c8env.tools.evaluation import evaluate
from c8env.tools.onnx_export import export_onnx

LEARNER, OPPONENT = "player_0", "player_1"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="env steps (moves of both players) to train for")
    parser.add_argument("--opponent", default="greedy", help="a c8env agent spec")
    parser.add_argument("--frames-per-batch", type=int, default=2048, help="env steps per PPO iteration")
    parser.add_argument("--eval-deals", type=int, default=1000, help="deals of each c8env eval (2 hands each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/examples/torchrl"))
    parser.add_argument("--quick", action="store_true", help="a tiny run (the test suite's)")
    return parser


class FixedAgent(nn.Module):
    """A c8env agent as a torch module: (observations, action masks) -> actions, through its ``act_batch``."""

    def __init__(self, spec: str, seed: int) -> None:
        super().__init__()
        self.agent = load(spec, seed=seed)

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        actions = self.agent.act_batch(observation.reshape(-1, observation.shape[-1]).numpy(),
                                       action_mask.reshape(-1, action_mask.shape[-1]).numpy().astype(np.int8))
        return torch.as_tensor(actions).reshape(action_mask.shape[:-1])


def learner_decisions(rollout: TensorDict) -> TensorDict:
    """The learner's decisions in a rollout of both players' moves (time first), as single-agent transitions.

    A decision's reward is the learner's reward summed over the steps until its next decision or the episode's
    end; ``("next", "observation")`` is the observation of its next decision. The last decision, whose outcome
    the rollout does not hold yet, is left out."""
    acting = rollout[LEARNER, "mask"][:, 0]
    rewards = rollout["next", LEARNER, "reward"][:, 0, 0]
    done = rollout["next", "done"][:, 0]
    steps = torch.nonzero(acting).flatten().tolist()
    keep, reward, ended, following = [], [], [], []
    for i, t in enumerate(steps):
        until = steps[i + 1] if i + 1 < len(steps) else len(acting)
        stop = next((s for s in range(t, until) if done[s]), None)  # the episode's last step, if before `until`
        if stop is None and i + 1 == len(steps):
            break  # the outcome of the last decision lies beyond the rollout
        keep.append(t)
        reward.append(rewards[t:(until if stop is None else stop + 1)].sum())
        ended.append(stop is not None)
        following.append(steps[i + 1] if i + 1 < len(steps) else t)
    observations = rollout[LEARNER, "observation", "observation"][:, 0]
    ended_t = torch.tensor(ended).unsqueeze(-1)
    return TensorDict({
        "observation": observations[keep],
        "action_mask": rollout[LEARNER, "action_mask"][keep, 0],
        "action": rollout[LEARNER, "action"][keep, 0],
        "action_log_prob": rollout[LEARNER, "action_log_prob"][keep, 0],
        "next": {"observation": observations[following], "reward": torch.stack(reward).unsqueeze(-1),
                 "done": ended_t, "terminated": ended_t},
    }, batch_size=[len(keep)])


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
        args.steps, args.frames_per_batch, args.eval_deals = 512, 256, 10
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: more threads only wait on each other
    warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested using version")
    env = PettingZooWrapper(env=c8env.env(num_players=2), use_mask=True, categorical_actions=True, seed=args.seed)

    actor_net = MLP(in_features=401, out_features=60, num_cells=[128, 128], activation_class=nn.Tanh)
    critic_net = MLP(in_features=401, out_features=1, num_cells=[128, 128], activation_class=nn.Tanh)
    # collection: the learner's actor on player_0's keys, the fixed agent on player_1's
    learner_actor = ProbabilisticActor(
        TensorDictModule(actor_net, in_keys=[(LEARNER, "observation", "observation")], out_keys=[(LEARNER, "logits")]),
        in_keys={"logits": (LEARNER, "logits"), "mask": (LEARNER, "action_mask")}, out_keys=[(LEARNER, "action")],
        distribution_class=MaskedCategorical, return_log_prob=True, log_prob_key=(LEARNER, "action_log_prob"))
    opponent = TensorDictModule(FixedAgent(args.opponent, args.seed),
                                in_keys=[(OPPONENT, "observation", "observation"), (OPPONENT, "action_mask")],
                                out_keys=[(OPPONENT, "action")])
    batches = -(-args.steps // args.frames_per_batch)  # whole batches
    collector = Collector(env, TensorDictSequential(learner_actor, opponent), frames_per_batch=args.frames_per_batch,
                          total_frames=batches * args.frames_per_batch, auto_register_policy_transforms=False)
    # training: the same networks on the learner's own transitions (flat keys)
    actor = ProbabilisticActor(TensorDictModule(actor_net, in_keys=["observation"], out_keys=["logits"]),
                               in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
                               distribution_class=MaskedCategorical, return_log_prob=True)
    critic = ValueOperator(critic_net, in_keys=["observation"])
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5)
    loss.set_keys(sample_log_prob="action_log_prob")
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic)
    optimizer = torch.optim.Adam(loss.parameters(), lr=3e-4)

    frames = decisions = 0
    start = time.perf_counter()
    for rollout in collector:
        frames += rollout.numel()
        batch = learner_decisions(rollout)
        decisions += batch.numel()
        with torch.no_grad():
            advantage(batch)
        for _ in range(4):  # epochs
            for idx in torch.randperm(batch.numel()).split(256):  # minibatches
                losses = loss(batch[idx])
                total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimizer.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimizer.step()
        won = int((batch["next", "reward"] > 0).sum())
        print(f"{frames:,} env steps: {batch.numel()} learner decisions, {int(batch['next', 'done'].sum())} hands "
              f"ended, {won} won")
    seconds = time.perf_counter() - start
    collector.shutdown()
    print(f"trained {frames:,} env steps (moves of both players; {decisions:,} learner decisions) in {seconds:.1f} s: "
          f"{frames / seconds:,.0f} steps/s (torchrl {torchrl.__version__}, tensordict {tensordict.__version__}, "
          f"c8env {c8env.__version__})")
    # TorchRL's MLP takes *inputs, which torch.export's dynamic batch axis refuses: nn.Sequential gives it one input
    policy = export_onnx(nn.Sequential(actor_net), args.out / "policy.onnx",
                         {"description": "examples/torchrl_pettingzoo.py"})
    print(f"wrote {policy}")
    report(policy, args.eval_deals, args.seed)


if __name__ == "__main__":
    main()
