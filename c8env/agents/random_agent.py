"""The ``random`` agent: uniformly random legal actions from a seeded generator."""

from __future__ import annotations

import numpy as np

from c8env.agents.decision_view import StateObservation
from c8env.observation import check_observation


class RandomAgent:
    """Uniformly random legal actions, from a seeded generator."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        check_observation(observation, "RandomAgent")
        if isinstance(observation, StateObservation):
            legal = observation.legal_actions()
        else:
            legal = np.flatnonzero(observation["action_mask"]).tolist()
        if not legal:
            raise ValueError("RandomAgent.act: the action mask has no legal action (not this agent's turn?)")
        return legal[self.rng.integers(len(legal))]


__all__ = ["RandomAgent"]
