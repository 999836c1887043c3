"""Training environments: ``SingleAgentEnv`` against the opponent pool, and the worker of the vectorised env.

This module imports Gymnasium, NumPy, cloudpickle and c8env only: the SubprocVecEnv
worker processes (:func:`worker`, started by :class:`training.vec.MaskedSubprocVecEnv`)
run it without ever importing torch or Stable-Baselines3; their snapshot opponents
are ``.npz`` files played with NumPy (``PoolEnv.worker_info()`` reports it).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import cloudpickle
import gymnasium
from gymnasium.wrappers import RecordEpisodeStatistics

from c8env.envs.single_agent import SingleAgentEnv
from training.config import TrainConfig
from training.pool import OpponentPool


class PoolEnv(gymnasium.Wrapper):
    """A :class:`SingleAgentEnv` whose opponents come from an :class:`OpponentPool`.

    Adds to the info of an episode's last step ``opponent_kind`` (the pool kind of that
    table) and ``learner_won``; ``set_snapshots(paths)`` updates the pool (called through
    ``VecEnv.env_method``). With ``cutoff_reward`` a hand cut off at ``max_steps`` ends the
    episode with that reward instead of a time-limit truncation.
    """

    def __init__(self, env: SingleAgentEnv, pool: OpponentPool, cutoff_reward: float | None = None) -> None:
        super().__init__(env)
        self.pool = pool
        self.cutoff_reward = cutoff_reward

    def set_snapshots(self, paths: list[str]) -> None:
        self.pool.set_snapshots(paths)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if truncated and not terminated and self.cutoff_reward is not None:  # a cut-off hand counts as lost
            reward, terminated, truncated = self.cutoff_reward, True, False
        if terminated or truncated:
            info["opponent_kind"] = self.pool.label()
            winner = info.get("match_winner", info["hand_winner"])  # -1: nobody (or the hand was cut off)
            info["learner_won"] = winner >= 0 and winner == info["learner_seat"]
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> Any:
        return self.env.action_masks()

    def worker_info(self) -> dict[str, Any]:
        """The process this env lives in, and whether torch was imported there."""
        return {"pid": os.getpid(), "torch_imported": "torch" in sys.modules}


def make_pool(config: TrainConfig, snapshots: list[str] = ()) -> OpponentPool:
    return OpponentPool(config.opponent_weights, config.num_players, config.expert_spec, config.pool_per_seat,
                        snapshots)


def make_env(config: TrainConfig, snapshots: list[str]) -> Callable[[], gymnasium.Env]:
    """A thunk building one training env: episode statistics (SB3's ``ep_rew_mean``) over the pool env."""

    def build() -> gymnasium.Env:
        pool = make_pool(config, snapshots)
        env = SingleAgentEnv(num_players=config.num_players, rules=config.rules, reward=config.reward,
                             episode=config.episode, max_steps=config.max_steps, opponents=pool,
                             illegal_action="raise")
        return RecordEpisodeStatistics(PoolEnv(env, pool, config.cutoff_reward))

    return build


# ----- the subprocess worker (the protocol of SB3's SubprocVecEnv, plus action masks) ------------------
class Pickled:
    """Sends a value (an env thunk) to a worker with cloudpickle."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __getstate__(self) -> bytes:
        return cloudpickle.dumps(self.value)

    def __setstate__(self, data: bytes) -> None:
        self.value = cloudpickle.loads(data)


def _wrapper_names(env: gymnasium.Env) -> set[str]:
    names = set()
    while True:
        names.update(f"{cls.__module__}.{cls.__qualname__}" for cls in type(env).__mro__)
        if not isinstance(env, gymnasium.Wrapper):
            return names
        env = env.env


def worker(remote: Any, parent_remote: Any, thunks: Pickled) -> None:
    """Serve a few envs over a pipe (commands and replies carry one entry per env of this worker).

    ``step`` replies ``(obs, reward, done, info, reset_info, next_mask)`` per env, resetting a
    finished env as SB3's SubprocVecEnv does; ``reset`` replies ``(obs, reset_info, mask)``.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the learner, which checkpoints and closes us
    parent_remote.close()
    envs = [thunk() for thunk in thunks.value]
    masks = [env.get_wrapper_attr("action_masks") for env in envs]
    while True:
        try:
            cmd, data = remote.recv()
        except (EOFError, KeyboardInterrupt):
            break
        if cmd == "step":
            replies = []
            for env, mask, action in zip(envs, masks, data, strict=True):
                observation, reward, terminated, truncated, info = env.step(action)
                done = terminated or truncated
                info["TimeLimit.truncated"] = truncated and not terminated
                reset_info: dict = {}
                if done:
                    info["terminal_observation"] = observation
                    observation, reset_info = env.reset()
                replies.append((observation, reward, done, info, reset_info, mask()))
            remote.send(replies)
        elif cmd == "reset":
            replies = []
            for env, mask, (seed, options) in zip(envs, masks, data, strict=True):
                observation, reset_info = env.reset(seed=seed, **({"options": options} if options else {}))
                replies.append((observation, reset_info, mask()))
            remote.send(replies)
        elif cmd == "env_method":
            name, args, kwargs, local = data
            remote.send([envs[i].get_wrapper_attr(name)(*args, **kwargs) for i in local])
        elif cmd == "get_attr":
            name, local = data
            remote.send([envs[i].get_wrapper_attr(name) for i in local])
        elif cmd == "set_attr":
            name, value, local = data
            for i in local:
                setattr(envs[i], name, value)
            remote.send(None)
        elif cmd == "has_attr":
            try:
                for env in envs:
                    env.get_wrapper_attr(data)
                remote.send(True)
            except AttributeError:
                remote.send(False)
        elif cmd == "is_wrapped":
            name, local = data
            remote.send([name in _wrapper_names(envs[i]) for i in local])
        elif cmd == "get_spaces":
            remote.send((envs[0].observation_space, envs[0].action_space))
        elif cmd == "close":
            for env in envs:
                env.close()
            remote.close()
            break
        else:
            remote.send(NotImplementedError(f"{cmd!r} is not implemented by the c8env training worker"))


__all__ = ["Pickled", "PoolEnv", "make_env", "make_pool", "worker"]
