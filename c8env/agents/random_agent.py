"""The ``random`` agent: uniformly random legal actions from a seeded generator."""

from __future__ import annotations

import numpy as np

from c8env.agents.decision_view import StateObservation
from c8env.observation import check_observation


class RandomAgent:
    """Uniformly random legal actions, from a seeded generator."""

    #: The batched engine may play this agent with its compiled kernel (:mod:`c8env.agents.batched`: the same
    #: moves as ``RandomAgent(seed)``, from one generator per game seeded alike).
    batch_kernel = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        check_observation(observation, "RandomAgent", needs=0)  # it reads the mask alone
        if isinstance(observation, StateObservation):
            legal = observation.legal_actions()
        else:
            legal = np.flatnonzero(observation["action_mask"]).tolist()
        if not legal:
            raise ValueError("RandomAgent.act: the action mask has no legal action (not this agent's turn?)")
        return legal[self.rng.integers(len(legal))]

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`act` row by row (masks int8[k, 60]; the observations are not read): actions int64[k], the
        generator moving on as ``k`` calls of :meth:`act` would move it."""
        masks = np.asarray(masks)
        out = np.zeros(len(masks), dtype=np.int64)
        for row, mask in enumerate(masks):
            legal = np.flatnonzero(mask)
            if not len(legal):
                raise ValueError(f"RandomAgent.act_batch: row {row}'s action mask has no legal action")
            out[row] = legal[self.rng.integers(len(legal))]
        return out


__all__ = ["RandomAgent"]
