"""The MaskablePPO model: an exportable MLP over a fixed rescaling of the observation, and its learning rate.

The policy is ``logits = action_net(policy_net(obs * OBS_SCALE))`` where ``policy_net``
is a stack of ``Linear`` + activation layers; :func:`policy_layers` turns it into the
``(weight, bias)`` list of the NumPy policy file, folding ``OBS_SCALE`` into the first
layer's weights (``W @ (x * s) == (W * s) @ x``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from c8env.observation import OBS_LAYOUT, OBS_SIZE
from training.config import TrainConfig

#: Divisors of the raw observation counts that can exceed a few units.
_SCALE_BY_PART = {"opponent_hand_sizes": 10.0, "stock_size": 20.0, "pending_draw": 5.0, "draws_this_turn": 5.0,
                  "scores": 100.0, "countdown": 8.0}
ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}


def obs_scale() -> np.ndarray:
    """The fixed per-feature factor applied to the observation vector (1 for counts of 0-2 and one-hots)."""
    scale = np.ones(OBS_SIZE, dtype=np.float32)
    for part, divisor in _SCALE_BY_PART.items():
        scale[OBS_LAYOUT[part]] = 1.0 / divisor
    return scale


class ScaledObservation(BaseFeaturesExtractor):
    """Features = the observation times :func:`obs_scale` (no learned parameters)."""

    def __init__(self, observation_space: gymnasium.spaces.Box) -> None:
        super().__init__(observation_space, features_dim=int(np.prod(observation_space.shape)))
        self.register_buffer("scale", torch.as_tensor(obs_scale()))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return observations.flatten(1) * self.scale


def policy_kwargs(config: TrainConfig) -> dict[str, Any]:
    return {
        "net_arch": {"pi": list(config.pi_layers), "vf": list(config.vf_layers)},
        "activation_fn": ACTIVATIONS[config.activation],
        "features_extractor_class": ScaledObservation,
    }


class LinearDecay:
    """The ``linear`` learning rate: ``start * remaining``, ``remaining = 1 - step / total_steps`` of the whole run.

    SB3 hands a schedule the progress of the current ``learn()`` call, but a run learns in
    chunks (one ``learn()`` per periodic event); so :class:`training.callback.Recorder` sets
    :attr:`remaining` at each rollout's end, just before the PPO update reads the rate, to the
    value one ``learn()`` call over the whole run would pass (SB3's own formula).
    """

    def __init__(self, start: float) -> None:
        self.start = start
        self.remaining = 1.0

    def set_step(self, step: int, total_steps: int) -> None:
        self.remaining = 1.0 - float(step) / float(max(total_steps, 1))

    def __call__(self, progress_remaining: float) -> float:
        return self.start * self.remaining


def build_model(config: TrainConfig, env: Any, logger: Any = None) -> MaskablePPO:
    """A fresh MaskablePPO for ``config`` on ``env`` (seeded with ``config.seed``)."""
    learning_rate = LinearDecay(config.learning_rate) if config.lr_schedule == "linear" else config.learning_rate
    model = MaskablePPO(
        "MlpPolicy", env, learning_rate=learning_rate, n_steps=config.n_steps, batch_size=config.batch_size,
        n_epochs=config.n_epochs, gamma=config.gamma, gae_lambda=config.gae_lambda, clip_range=config.clip_range,
        ent_coef=config.ent_coef, vf_coef=config.vf_coef, max_grad_norm=config.max_grad_norm,
        target_kl=config.target_kl, policy_kwargs=policy_kwargs(config), seed=config.seed, device="cpu", verbose=0,
    )
    if logger is not None:
        model.set_logger(logger)
    return model


def policy_layers(policy: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The ``(weight (out, in), bias)`` layers and activation name of a MaskableActorCriticPolicy's actor."""
    extractor = policy.pi_features_extractor
    if not isinstance(extractor, ScaledObservation) and type(extractor).__name__ != "FlattenExtractor":
        raise ValueError(f"cannot export a policy with features extractor {type(extractor).__name__}")
    linears, activation = [], None
    for module in policy.mlp_extractor.policy_net:
        if isinstance(module, torch.nn.Linear):
            linears.append(module)
            continue
        name = next((key for key, cls in ACTIVATIONS.items() if isinstance(module, cls)), None)
        if name is None:
            raise ValueError(f"cannot export policy layer {module!r}; allowed: Linear, Tanh, ReLU")
        if activation not in (None, name):
            raise ValueError("cannot export a policy mixing activations")
        activation = name
    linears.append(policy.action_net)
    layers = [(m.weight.detach().cpu().numpy().astype(np.float32).copy(),
               m.bias.detach().cpu().numpy().astype(np.float32).copy()) for m in linears]
    if isinstance(extractor, ScaledObservation):
        weight, bias = layers[0]
        layers[0] = (weight * extractor.scale.cpu().numpy()[None, :], bias)
    return layers, activation or "tanh"


__all__ = ["ACTIVATIONS", "LinearDecay", "ScaledObservation", "build_model", "obs_scale", "policy_kwargs",
           "policy_layers"]
