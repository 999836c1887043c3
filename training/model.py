"""The MaskablePPO model: an exportable MLP over a fixed rescaling of the observation, and its learning rate.

The policy is ``logits = action_net(policy_net(obs * OBS_SCALE))`` where ``policy_net``
is a stack of ``Linear`` + activation layers; :func:`policy_layers` turns it into the
``(weight, bias)`` list of the NumPy policy file, folding ``OBS_SCALE`` into the first
layer's weights (``W @ (x * s) == (W * s) @ x``). The features extractor, the export and the ``linear`` learning
rate (:class:`~c8env.tools.maskable_ppo.LinearDecay`) live in :mod:`c8env.tools.maskable_ppo` (in the package:
``c8env exploit`` trains the same model) and are imported here under their old names.
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from c8env.observation import OBS_SIZE
from c8env.tools.maskable_ppo import ACTIVATIONS, LinearDecay, ScaledObservation, obs_scale, policy_layers
from training.config import TrainConfig


def policy_kwargs(config: TrainConfig) -> dict[str, Any]:
    kwargs = {
        "net_arch": {"pi": list(config.pi_layers), "vf": list(config.vf_layers)},
        "activation_fn": ACTIVATIONS[config.activation],
        "features_extractor_class": ScaledObservation,
    }
    if config.obs_size != OBS_SIZE:
        kwargs["features_extractor_kwargs"] = {"inputs": config.obs_size}
    if config.oracle_critic:
        kwargs.update(share_features_extractor=False, critic_lr_scale=config.critic_lr_scale)
    return kwargs


class GroupScaledAdam(torch.optim.Adam):
    """Adam whose parameter groups each step at the learning rate times their ``lr_scale`` (SB3 sets one rate on
    every group before each update)."""

    def step(self, closure: Any = None) -> Any:
        rates = [group["lr"] for group in self.param_groups]
        for group in self.param_groups:
            group["lr"] *= group.get("lr_scale", 1.0)
        try:
            return super().step(closure)
        finally:
            for group, rate in zip(self.param_groups, rates, strict=True):
                group["lr"] = rate


class OracleCriticPolicy(MaskableActorCriticPolicy):
    """``oracle_critic``'s policy: the critic reads the observation and the hidden cards that follow it (the other
    hands, the stock's top cards: :mod:`training.batched`), the actor the observation alone (its extractor scales
    the hidden cards by 0), so the actor exports as any other. The critic's weights on them start at 0: it starts
    as a critic of the observation alone (the one a warm start fits) and learns what they add, its own layers at
    ``critic_lr_scale`` times the learning rate."""

    def __init__(self, *args: Any, critic_lr_scale: float = 1.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.share_features_extractor:
            raise ValueError("OracleCriticPolicy needs share_features_extractor=False")
        inputs = self.vf_features_extractor.inputs
        self.features_extractor = self.pi_features_extractor = ScaledObservation(self.observation_space,
                                                                                extra_scale=0.0, inputs=inputs)
        first = next((m for m in self.mlp_extractor.value_net if isinstance(m, torch.nn.Linear)), self.value_net)
        with torch.no_grad():
            first.weight[:, inputs:] = 0.0
        if critic_lr_scale != 1.0:
            critic = [*self.mlp_extractor.value_net.parameters(), *self.value_net.parameters()]
            others = [p for p in self.parameters() if all(p is not c for c in critic)]
            self.optimizer = GroupScaledAdam([{"params": others}, {"params": critic, "lr_scale": critic_lr_scale}],
                                             lr=self.optimizer.param_groups[0]["lr"], **self.optimizer_kwargs)


def build_model(config: TrainConfig, env: Any, logger: Any = None) -> MaskablePPO:
    """A fresh MaskablePPO for ``config`` on ``env`` (seeded with ``config.seed``)."""
    learning_rate = LinearDecay(config.learning_rate) if config.lr_schedule == "linear" else config.learning_rate
    model = MaskablePPO(
        OracleCriticPolicy if config.oracle_critic else "MlpPolicy", env, learning_rate=learning_rate,
        n_steps=config.n_steps, batch_size=config.batch_size,
        n_epochs=config.n_epochs, gamma=config.gamma, gae_lambda=config.gae_lambda, clip_range=config.clip_range,
        ent_coef=config.ent_coef, vf_coef=config.vf_coef, max_grad_norm=config.max_grad_norm,
        target_kl=config.target_kl, policy_kwargs=policy_kwargs(config), seed=config.seed, device="cpu", verbose=0,
    )
    if logger is not None:
        model.set_logger(logger)
    return model


def drop_critic(model: MaskablePPO) -> None:
    """``critic: false``: the model's value is 0 everywhere and stays so (its value head zeroed and frozen)."""
    head = model.policy.value_net
    with torch.no_grad():
        head.weight.zero_()
        head.bias.zero_()
    head.requires_grad_(False)


__all__ = ["ACTIVATIONS", "GroupScaledAdam", "LinearDecay", "OracleCriticPolicy", "ScaledObservation", "build_model",
           "drop_critic", "obs_scale", "policy_kwargs", "policy_layers"]
