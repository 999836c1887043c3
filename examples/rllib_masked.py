"""RLlib (new API stack): PPO with an action-masking RLModule on c8env's PettingZoo AEC env.

RLlib's own ``PettingZooEnv`` wrapper turns ``c8env.env()`` into a turn-based ``MultiAgentEnv``: each step
holds the observation of the player to move, c8env's dict ``{"observation": float32[401], "action_mask":
int8[60]}``. Two RLModules share the table: ``learner`` (:class:`MaskedPPOModule`, an MLP actor and critic
whose illegal logits are set to the float32 minimum, so an illegal action has probability 0) and
``greedy`` (:class:`FixedAgentModule`, c8env's built-in agent, never trained). The policy mapping seats the
learner in a seat drawn per episode. The trained actor is exported to ONNX and played by ``c8env eval``
against ``random`` and ``greedy``. (c8env's full RLlib training path, with self-play snapshots and
checkpoints, is ``python -m training.rllib``: docs/rllib.md.)

    python examples/rllib_masked.py --steps 60000
    python examples/rllib_masked.py --quick         # about a minute (Ray's start): what the test suite runs

Needs the ``rllib`` extra (torch first, then ray[rllib]) and the ``onnx`` extra; ``pip install -e ".[examples]"``.
"""

from __future__ import annotations

import argparse
import time
import zlib
from pathlib import Path

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env
from torch import nn

import c8env
from c8env.agents import load
from c8env.tools.evaluation import evaluate
from c8env.tools.onnx_export import export_onnx

ENV = "c8env_crazy_eights"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000, help="learner decisions to train for")
    parser.add_argument("--opponent", default="greedy", help="a c8env agent spec for the other seat")
    parser.add_argument("--num-env-runners", type=int, default=1, help="Ray actors that step envs (0: the driver)")
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray instance")
    parser.add_argument("--eval-deals", type=int, default=1000, help="deals of each c8env eval (2 hands each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/examples/rllib"))
    parser.add_argument("--quick", action="store_true", help="a tiny run (the test suite's)")
    return parser


def mlp(out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(401, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(), nn.Linear(128, out))


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """PPO's actor and critic on c8env's observation dict; the action mask sets illegal logits to the minimum."""

    def setup(self) -> None:
        self.pi, self.vf = mlp(60), mlp(1)

    def _forward(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        logits = self.pi(obs["observation"])
        masked = torch.where(obs["action_mask"].bool(), logits, torch.finfo(logits.dtype).min)
        return {Columns.ACTION_DIST_INPUTS: masked}

    def compute_values(self, batch, embeddings=None):
        return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)


class FixedAgentModule(RLModule):
    """A c8env agent (``model_config["spec"]``) as an RLModule returning actions directly; never trained."""

    def setup(self) -> None:
        self.agent = load(self.model_config["spec"], seed=self.model_config.get("seed"))

    def _forward(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        actions = self.agent.act_batch(np.asarray(obs["observation"], dtype=np.float32),
                                       np.asarray(obs["action_mask"]).astype(np.int8))
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch, **kwargs):
        raise NotImplementedError("a fixed agent is never trained")


def learner_seat(agent_id: str, episode, **kwargs) -> str:
    """The policy mapping: the learner in seat 0 or 1, drawn from the episode's id; the fixed agent in the other."""
    return "learner" if zlib.crc32(str(episode.id_).encode()) % 2 == int(agent_id.rsplit("_", 1)[1]) else "opponent"


def build_algo(args: argparse.Namespace):
    register_env(ENV, lambda config: PettingZooEnv(c8env.env(num_players=2)))
    spaces = c8env.env(num_players=2)
    obs_space, act_space = spaces.observation_space("player_0"), spaces.action_space("player_0")
    batch = 1024 if args.quick else 4096
    config = (
        PPOConfig()
        .environment(ENV, disable_env_checking=True)  # RLlib's check steps unmasked random actions
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=8)
        .multi_agent(policies={"learner", "opponent"}, policy_mapping_fn=learner_seat, policies_to_train=["learner"])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "learner": RLModuleSpec(module_class=MaskedPPOModule, observation_space=obs_space, action_space=act_space),
            "opponent": RLModuleSpec(module_class=FixedAgentModule, observation_space=obs_space,
                                     action_space=act_space, model_config={"spec": args.opponent, "seed": args.seed}),
        }))
        .training(lr=3e-4, entropy_coeff=0.01, train_batch_size_per_learner=batch, minibatch_size=256, num_epochs=4)
        .debugging(seed=args.seed)
    )
    return config.build_algo()


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
        args.steps, args.eval_deals = 500, 10
    torch.set_num_threads(1)  # small networks: more threads only wait on each other
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    try:
        algo = build_algo(args)
        steps, start = 0, time.perf_counter()
        while steps < args.steps:
            result = algo.train()
            runners = result["env_runners"]
            steps += int(runners["num_module_steps_sampled"]["learner"])
            returns = runners.get("module_episode_returns_mean", {})
            print(f"{steps:,} learner decisions: mean return {returns.get('learner', float('nan')):+.3f}")
        seconds = time.perf_counter() - start
        print(f"trained {steps:,} learner decisions in {seconds:.1f} s: {steps / seconds:,.0f} steps/s "
              f"(ray {ray.__version__}, c8env {c8env.__version__})")
        weights = algo.learner_group.get_weights(module_ids=["learner"])["learner"]  # the trained state dict
        actor = mlp(60)
        actor.load_state_dict({k.removeprefix("pi."): torch.as_tensor(v) for k, v in weights.items()
                               if k.startswith("pi.")})
        algo.stop()
    finally:
        if started_ray:
            ray.shutdown()
    policy = export_onnx(actor, args.out / "policy.onnx", {"description": "examples/rllib_masked.py"})
    print(f"wrote {policy}")
    report(policy, args.eval_deals, args.seed)


if __name__ == "__main__":
    main()
