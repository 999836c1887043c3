"""The RLModules of a run: the learner's masked PPO network and the built-in agents as frozen, mask-aware modules.

:class:`MaskedPPOModule` is an MLP actor (``pi_layers``, 60 logits) and a separate MLP critic
(``vf_layers``), as in the SB3 path, reading c8env's own observation dict: ``observation`` feeds
the networks, ``action_mask`` sets the logits of illegal actions to the float32 minimum before
any sampling or argmax, so no illegal action is ever drawn (its probability is exactly 0). The
actor's layers are exactly the NumPy policy file's (:func:`policy_layers`).

:class:`AgentModule` plays a c8env agent spec (``random``, ``greedy``, ``expert:...``): one
``act`` per row on the env runner, returning actions directly; it has no weights (a plain ``RLModule``, not a torch one: the learner gives it no optimizer) and is
never trained.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from c8env.actions import NUM_ACTIONS
from c8env.agents import load
from c8env.observation import OBS_SIZE

#: The logit of an illegal action.
MASKED = torch.finfo(torch.float32).min
_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def mlp(sizes: list[int], out: int, activation: str) -> nn.Sequential:
    """``OBS_SIZE -> sizes... -> out`` with ``activation`` between the layers (none after the last)."""
    layers: list[nn.Module] = []
    width = OBS_SIZE
    for size in sizes:
        layers += [nn.Linear(width, size), _ACTIVATIONS[activation]()]
        width = size
    layers.append(nn.Linear(width, out))
    return nn.Sequential(*layers)


def masked(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The logits with those of illegal actions (mask 0) set to :data:`MASKED`."""
    return torch.where(mask.bool(), logits, torch.full_like(logits, MASKED))


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """PPO's actor-critic on c8env observations with action masking (``model_config``: ``pi_layers``,
    ``vf_layers``, ``activation``)."""

    def setup(self) -> None:
        config = self.model_config
        activation = config.get("activation", "tanh")
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation={activation!r} is invalid; allowed: {', '.join(_ACTIVATIONS)}")
        self.pi = mlp(list(config.get("pi_layers", [256, 256])), NUM_ACTIONS, activation)
        self.vf = mlp(list(config.get("vf_layers", [256, 256])), 1, activation)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: masked(self.pi(obs["observation"]), obs["action_mask"])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)


class AgentModule(RLModule):
    """A c8env agent as a frozen module (``model_config``: ``spec``, ``rules``, ``num_players``, ``seed``)."""

    def setup(self) -> None:
        config = self.model_config
        self.agent = load(config["spec"], rules=config["rules"], num_players=config["num_players"],
                          seed=config.get("seed"))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        vectors = np.asarray(obs["observation"], dtype=np.float32)
        masks = np.asarray(obs["action_mask"]).astype(np.int8)
        actions = [self.agent.act({"observation": v, "action_mask": m}) for v, m in zip(vectors, masks, strict=True)]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("an AgentModule plays a fixed agent and is never trained")

    def get_state(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        pass


def policy_layers(module: MaskedPPOModule) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's ``(weight, bias)`` pairs (weights ``(out, in)``), as the NumPy policy file stores them."""
    return [(layer.weight.detach().cpu().numpy(), layer.bias.detach().cpu().numpy())
            for layer in module.pi if isinstance(layer, nn.Linear)]


__all__ = ["MASKED", "AgentModule", "MaskedPPOModule", "masked", "mlp", "policy_layers"]
