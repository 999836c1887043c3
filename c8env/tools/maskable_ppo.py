"""MaskablePPO on c8env's batched envs, and its export to the NumPy policy file (the ``train`` extra).

What both ``training/`` (the self-play runs) and ``c8env exploit`` (a best response to a frozen
agent, :mod:`c8env.tools.exploit`) need, here in the package because ``training/`` is not in the
wheel:

* :class:`ScaledObservation`: the features extractor of c8env's policies, the observation times a
  fixed per-feature factor (:func:`obs_scale`), so counts that run into tens or hundreds do not
  swamp the one-hots;
* :func:`policy_layers` and :func:`save_npz`: a MaskablePPO actor as the ``(weight, bias)`` layers
  of the NumPy policy file (:mod:`c8env.agents.policy`), the scale folded into the first layer
  (``W @ (x * s) == (W * s) @ x``): ``c8env.agents.load(path)`` then plays the model's
  deterministic action with NumPy alone;
* :class:`LearnerVecEnv`: Stable-Baselines3's ``VecEnv`` protocol (with MaskablePPO's action
  masks) over :class:`c8env.envs.vector_envs.LearnerVectorEnv`, the learner's games against
  frozen batched opponents stepped as one batch in this process.

Imports torch and Stable-Baselines3: only the commands that train load this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvStepReturn

from c8env.actions import NUM_ACTIONS
from c8env.agents.policy import save_policy
from c8env.envs.spaces import vector_space
from c8env.observation import DRAW_RECORD_SIZE, OBS_LAYOUT, OBS_SIZE
from c8env.rules import load_rules
from c8env.versions import OBS_SIZES

if TYPE_CHECKING:
    from c8env.envs.vector_envs import LearnerVectorEnv

#: Divisors of the raw observation counts that can exceed a few units.
_SCALE_BY_PART = {"opponent_hand_sizes": 10.0, "stock_size": 20.0, "pending_draw": 5.0, "draws_this_turn": 5.0,
                  "scores": 100.0, "countdown": 8.0}
#: The activations a policy file can hold, by name.
ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}


def obs_scale() -> np.ndarray:
    """The fixed per-feature factor applied to the observation vector (1 for counts of 0-2 and one-hots)."""
    scale = np.ones(OBS_SIZE, dtype=np.float32)
    for part, divisor in _SCALE_BY_PART.items():
        scale[OBS_LAYOUT[part]] = 1.0 / divisor
    held = OBS_LAYOUT["opponent_last_draws"]  # each slot's last entry counts cards, as opponent_hand_sizes
    scale[held.start + DRAW_RECORD_SIZE - 1:held.stop:DRAW_RECORD_SIZE] = 1.0 / _SCALE_BY_PART["opponent_hand_sizes"]
    return scale


class ScaledObservation(BaseFeaturesExtractor):
    """Features = the observation's first ``inputs`` entries (all of them, or as many as an earlier vector had,
    ``c8env.versions.OBS_SIZES``) times :func:`obs_scale` (no learned parameters). Inputs past the observation
    vector (a space wider than ``OBS_SIZE``, e.g. hidden cards for a critic) follow them, multiplied by
    ``extra_scale``: 0 hides them from the network behind this extractor."""

    def __init__(self, observation_space: gymnasium.spaces.Box, extra_scale: float = 1.0,
                 inputs: int = OBS_SIZE) -> None:
        size = int(np.prod(observation_space.shape))
        if size < OBS_SIZE:
            raise ValueError(f"ScaledObservation needs at least the {OBS_SIZE} observation entries, got {size}")
        if inputs not in OBS_SIZES:
            raise ValueError(f"ScaledObservation inputs={inputs!r} is invalid; allowed: {', '.join(map(str, OBS_SIZES))}")
        super().__init__(observation_space, features_dim=size - OBS_SIZE + inputs)
        self.inputs = inputs
        """How many of the observation vector's first entries the features hold (the rest follow them)."""
        scale = np.concatenate([obs_scale()[:inputs], np.full(size - OBS_SIZE, extra_scale, dtype=np.float32)])
        self.register_buffer("scale", torch.as_tensor(scale))
        kept = np.r_[0:inputs, OBS_SIZE:size] if inputs < OBS_SIZE else None
        self.register_buffer("kept", None if kept is None else torch.as_tensor(kept))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        features = observations.flatten(1)
        if self.kept is not None:
            features = features.index_select(1, self.kept)
        return features * self.scale


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
        weight = weight * extractor.scale.cpu().numpy()[None, :]
        if weight[:, extractor.inputs:].any():
            raise ValueError("cannot export an actor that reads inputs past the observation vector (extra_scale != 0)")
        layers[0] = (weight[:, :extractor.inputs].copy(), bias)
    return layers, activation or "tanh"


def save_npz(model: Any, path: str | Path, num_players: int, rules: Any, description: str = "") -> Path:
    """Write ``model``'s actor (a MaskablePPO or its policy) as a NumPy policy file, atomically (a reader never
    sees half a file)."""
    layers, activation = policy_layers(getattr(model, "policy", model))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    save_policy(tmp, layers, activation, num_players, load_rules(rules).to_dict(), description)
    tmp.replace(path)
    return path


class LearnerVecEnv(VecEnv):
    """A :class:`~c8env.envs.vector_envs.LearnerVectorEnv` as Stable-Baselines3's ``VecEnv``.

    ``reset()`` seeds game ``b`` with ``seed + b`` after ``seed(seed)`` (SB3's per-env seeds, which the
    learner env takes the same way). An episode's end brings ``terminal_observation``,
    ``TimeLimit.truncated`` and ``learner_won`` (the hand, or the match, went to the learner's seat) in
    its info. ``env_method("action_masks")`` and ``has_attr("action_masks")`` answer MaskablePPO.
    """

    def __init__(self, env: LearnerVectorEnv) -> None:
        self.env = env
        super().__init__(env.num_envs, vector_space(), spaces.Discrete(NUM_ACTIONS))
        self._actions = np.zeros(self.num_envs, dtype=np.int64)

    def reset(self) -> np.ndarray:
        if any(self._options):
            raise ValueError(f"LearnerVecEnv takes no reset options, got {self._options}")
        seed = self._seeds[0] if self._seeds else None
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_info"]
            key = "match_winner" if "match_winner" in final else "hand_winner"
            winners, valid = final.get(key), final.get("_" + key)
            for b in np.flatnonzero(dones).tolist():
                won = winners is not None and bool(valid[b]) and bool(winners[b] == final["learner_seat"][b])
                infos[b] = {"terminal_observation": info["final_obs"][b].copy(),
                            "TimeLimit.truncated": bool(truncated[b] and not terminated[b]), "learner_won": won}
        return obs, reward.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name != "action_masks" or method_args or method_kwargs:
            raise AttributeError(f"LearnerVecEnv has no env method {method_name!r}; allowed: action_masks()")
        masks = self.env.action_masks()
        return [masks[i] for i in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in ("action_masks", "render_mode")

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        indices = list(self._get_indices(indices))
        if attr_name == "render_mode":
            return [None] * len(indices)
        if attr_name == "action_masks":
            return [lambda i=i: self.env.action_masks()[i] for i in indices]
        raise AttributeError(f"LearnerVecEnv has no env attribute {attr_name!r}; allowed: render_mode, action_masks")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"LearnerVecEnv has no settable env attributes (asked for {attr_name!r})")

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))


__all__ = ["ACTIVATIONS", "LearnerVecEnv", "ScaledObservation", "obs_scale", "policy_layers", "save_npz"]
