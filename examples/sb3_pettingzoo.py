"""Stable-Baselines3 (sb3-contrib MaskablePPO) on c8env's PettingZoo AEC env, made single-agent by a small wrapper.

SB3 trains one agent in a Gymnasium env, so :class:`LearnerSeat` turns the turn-based AEC env from
``pettingzoo.make("aec", "c8env/crazy_eights-v2")`` into one: the learner takes a seat drawn at each reset,
c8env's built-in agents play the other seats between its decisions, the observation is the AEC
observation's ``observation`` vector, the reward is the learner's own (``env.rewards`` summed over the moves
since its last decision), and ``action_masks()`` returns the AEC ``action_mask``, which MaskablePPO asks for
at every step. (PettingZoo's SB3 tutorial does the same for Connect Four with one model playing both sides;
here the other seats are fixed opponents.) The trained model is saved as an SB3 ``.zip``, which
``c8env eval`` plays as it is, against ``random`` and ``greedy``.

    python examples/sb3_pettingzoo.py --steps 100000
    python examples/sb3_pettingzoo.py --quick       # a few seconds: what the test suite runs

Needs the ``train`` extra (torch first, then stable-baselines3 and sb3-contrib); ``pip install -e ".[examples]"``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium
import numpy as np
import pettingzoo
import sb3_contrib
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv

import c8env  # registers c8env/crazy_eights-v2 with PettingZoo
from c8env.agents import load
from c8env.tools.evaluation import evaluate


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="learner decisions to train for")
    parser.add_argument("--n-envs", type=int, default=8, help="AEC envs in SB3's DummyVecEnv")
    parser.add_argument("--opponents", default="greedy", help="comma-separated agent specs; one drawn per episode")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--eval-deals", type=int, default=1000, help="deals of each c8env eval (one hand per seat)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/examples/sb3"))
    parser.add_argument("--quick", action="store_true", help="a tiny run (the test suite's)")
    return parser


class LearnerSeat(gymnasium.Env):
    """One seat of a PettingZoo AEC env for a single-agent learner; built-in c8env agents in the others."""

    def __init__(self, num_players: int = 2, opponents: tuple[str, ...] = ("greedy",)) -> None:
        self.env = pettingzoo.make("aec", "c8env/crazy_eights-v2", num_players=num_players)
        first = self.env.possible_agents[0]
        self.observation_space = self.env.observation_space(first)["observation"]  # the 401-vector
        self.action_space = self.env.action_space(first)
        self.num_players, self.opponent_specs = num_players, opponents

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        while True:
            self.env.reset(seed=int(self.np_random.integers(2**31)))
            self.learner = self.env.possible_agents[int(self.np_random.integers(self.num_players))]
            spec = self.opponent_specs[int(self.np_random.integers(len(self.opponent_specs)))]
            self.opponents = {agent: load(spec, num_players=self.num_players, seed=int(self.np_random.integers(2**31)))
                              for agent in self.env.possible_agents if agent != self.learner}
            self._play_opponents()  # until the learner is to move
            if not (self.env.terminations[self.learner] or self.env.truncations[self.learner]):
                return self._observation(), {}  # else the hand ended before the learner's first move: deal again

    def step(self, action):
        self.env.step(int(action))
        reward = self.env.rewards[self.learner] + self._play_opponents()
        return (self._observation(), float(reward), self.env.terminations[self.learner],
                self.env.truncations[self.learner], {})

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (all False once its episode is over): MaskablePPO calls this."""
        return self.env.observe(self.learner)["action_mask"].astype(bool)

    def _observation(self) -> np.ndarray:
        return self.env.observe(self.learner)["observation"]

    def _play_opponents(self) -> float:
        """Let the opponents move until the learner's turn or the hand's end; the learner's reward meanwhile."""
        reward = 0.0
        while not (self.env.terminations[self.learner] or self.env.truncations[self.learner]):
            agent = self.env.agent_selection
            if agent == self.learner:
                break
            observation, *_ = self.env.last()
            self.env.step(self.opponents[agent].act(observation))
            reward += self.env.rewards[self.learner]
        return reward


def report(policy: Path, deals: int, players: int, seed: int) -> None:
    """``c8env eval POLICY random`` and ``c8env eval POLICY greedy``: the policy's win rate, 95% interval."""
    for opponent in ("random", "greedy"):
        table = evaluate([str(policy), opponent], num_players=players, deals=deals, seed=seed)
        stats = table.stats[0]
        low, high = stats.interval
        print(f"c8env eval {policy} {opponent} --deals {deals}: win rate {stats.win_rate:.1%} "
              f"[{low:.1%}, {high:.1%}] over {stats.hands:,} hands")


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.quick:
        args.steps, args.n_envs, args.eval_deals = 256, 2, 10
    torch.set_num_threads(1)  # small networks: more threads only wait on each other
    opponents = tuple(args.opponents.split(","))
    venv = DummyVecEnv([lambda: LearnerSeat(args.players, opponents) for _ in range(args.n_envs)])
    venv.seed(args.seed)
    n_steps = 64 if args.quick else 512
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=n_steps, learning_rate=3e-4, ent_coef=0.01,
                        policy_kwargs={"net_arch": [128, 128]}, seed=args.seed, device="cpu")
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    seconds = time.perf_counter() - start
    steps = model.num_timesteps
    print(f"trained {steps:,} learner steps in {seconds:.1f} s: {steps / seconds:,.0f} steps/s "
          f"(sb3-contrib {sb3_contrib.__version__}, PettingZoo {pettingzoo.__version__}, c8env {c8env.__version__})")
    args.out.mkdir(parents=True, exist_ok=True)
    model.save(args.out / "model.zip")
    print(f"wrote {args.out / 'model.zip'}")
    report(args.out / "model.zip", args.eval_deals, args.players, args.seed)


if __name__ == "__main__":
    main()
