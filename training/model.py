"""The MaskablePPO model: an exportable MLP over a fixed rescaling of the observation.

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


def build_model(config: TrainConfig, env: Any, logger: Any = None) -> Any:
    """A fresh MaskablePPO for ``config`` on ``env`` (seeded with ``config.seed``)."""
    from sb3_contrib import MaskablePPO

    learning_rate: Any = config.learning_rate
    if config.lr_schedule == "linear":
        start = config.learning_rate
        learning_rate = lambda progress_remaining: start * progress_remaining  # noqa: E731
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




# ----- behaviour-cloning warm start ---------------------------------------------------------------
def masked_logits(policy: Any, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """The actor's logits with illegal actions at -inf."""
    features = policy.extract_features(obs, policy.pi_features_extractor)
    logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
    return logits.masked_fill(~masks, float("-inf"))


def behaviour_clone(model: Any, demos: Any, config: TrainConfig, seed: int) -> dict[str, float]:
    """Fit the actor to the demonstrated actions and the critic to their returns, with Adam.

    The actor's loss is the cross-entropy of its masked logits against the demonstrated
    action smoothed by ``config.pretrain_smoothing`` over the legal actions (so the
    cloned policy keeps some probability on the alternatives for PPO to explore); the
    critic's is the squared error to the discounted returns. Returns the held-out
    accuracy (on decisions with a choice), the mean entropy there, and the last losses.
    """
    policy = model.policy
    rng = np.random.default_rng(seed)
    obs, masks = torch.as_tensor(demos.obs), torch.as_tensor(demos.masks)
    actions, returns = torch.as_tensor(demos.actions), torch.as_tensor(demos.returns)
    order = rng.permutation(len(demos))
    held = order[: max(1, len(order) // 20)]
    train = order[len(held):]
    smoothing = config.pretrain_smoothing
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.pretrain_lr)
    policy.set_training_mode(True)
    policy_loss = value_loss = float("nan")
    for _ in range(config.pretrain_epochs):
        perm = rng.permutation(train)
        for start in range(0, len(perm), config.pretrain_batch_size):
            batch = torch.as_tensor(perm[start:start + config.pretrain_batch_size])
            features = policy.extract_features(obs[batch], policy.pi_features_extractor)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            legal = masks[batch]
            log_p = torch.log_softmax(policy.action_net(latent_pi).masked_fill(~legal, float("-inf")), dim=1)
            log_p = log_p.masked_fill(~legal, 0.0)
            chosen = log_p.gather(1, actions[batch, None]).squeeze(1)
            spread = log_p.sum(1) / legal.sum(1)
            p_loss = -((1 - smoothing) * chosen + smoothing * spread).mean()
            v_loss = torch.nn.functional.mse_loss(policy.value_net(latent_vf).flatten(), returns[batch])
            loss = p_loss + config.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
            policy_loss, value_loss = p_loss.item(), v_loss.item()
    policy.set_training_mode(False)
    with torch.no_grad():
        held_t = torch.as_tensor(held)
        choice = masks[held_t].sum(1) > 1
        logits = masked_logits(policy, obs[held_t], masks[held_t])[choice]
        accuracy = float((logits.argmax(1) == actions[held_t][choice]).float().mean()) if choice.any() else 1.0
        probs = torch.softmax(logits, dim=1)
        entropy = float(-(probs * torch.log_softmax(logits, dim=1).nan_to_num(0.0, neginf=0.0)).sum(1).mean())
    return {"accuracy": accuracy, "entropy": entropy, "policy_loss": policy_loss, "value_loss": value_loss,
            "samples": float(len(demos))}

__all__ = ["ACTIVATIONS", "ScaledObservation", "behaviour_clone", "build_model", "masked_logits", "obs_scale",
           "policy_kwargs", "policy_layers"]
