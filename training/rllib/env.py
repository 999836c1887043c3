"""``crazy_eights_v1`` (:func:`c8env.raw_env`) as an RLlib ``MultiAgentEnv``: turn-based, one observation per step for
the player to move.

The observation of each agent is the AEC env's own dict (``observation``: float32 401,
``action_mask``: int8 60), so RLlib's modules and c8env's agents read the same thing.
Each step rewards every agent that has moved (0 until a hand ends; RLlib adds them to each agent's last step);
at the episode's end each agent that moved gets its final observation. An illegal action
raises :class:`c8env.IllegalActionError` (the env is the raw AEC env, no penalty wrapper):
the masked modules never send one, and RLlib's env pre-check, which steps an unmasked
random action, is switched off in :func:`training.rllib.train.build_config`.
"""

from __future__ import annotations

from typing import Any

from ray.rllib.env.multi_agent_env import MultiAgentEnv

from c8env.envs.crazy_eights import raw_env

#: The name the env is registered under (``ray.tune.registry.register_env``; unchanged since v0).
ENV_NAME = "c8env_crazy_eights_v0"


class CrazyEightsMultiAgentEnv(MultiAgentEnv):
    """``crazy_eights_v1.raw_env(**env_config)`` for RLlib (keys as :class:`c8env.envs.crazy_eights.raw_env`'s arguments)."""

    def __init__(self, env_config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.env = raw_env(**dict(env_config or {}))
        self.possible_agents = list(self.env.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: self.env.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self.env.action_space(a) for a in self.possible_agents}
        self._moved: set[str] = set()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        self.env.reset(seed=seed, options=options)
        self._moved = set()
        agent = self.env.agent_selection
        return {agent: self.env.observe(agent)}, {}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        agent = self.env.agent_selection
        if agent not in action_dict:
            raise ValueError(f"it is {agent}'s turn; got actions for {sorted(action_dict)}")
        self.env.step(int(action_dict[agent]))
        self._moved.add(agent)
        rewards = {a: float(self.env.rewards[a]) for a in self._moved}  # RLlib wants one (0 too) per agent that moved
        terminated = any(self.env.terminations.values())
        truncated = any(self.env.truncations.values())
        if terminated or truncated:
            done = sorted(self._moved)
            obs = {a: self.env.observe(a) for a in done}
            infos = {a: dict(self.env.infos[a]) for a in done}
            return (obs, rewards, {**dict.fromkeys(done, terminated), "__all__": terminated},
                    {**dict.fromkeys(done, truncated), "__all__": truncated}, infos)
        nxt = self.env.agent_selection
        return {nxt: self.env.observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}


__all__ = ["ENV_NAME", "CrazyEightsMultiAgentEnv"]
