"""Stable-Baselines3 models as agents: ``c8env.agents.load("model.zip")`` plays a saved SB3 model.

Supported: ``sb3_contrib`` ``MaskablePPO`` and ``stable_baselines3`` ``PPO`` and ``DQN``, told
apart by the policy class in the archive's ``data``; loaded on CPU. The agent plays the masked
argmax of the actor's logits (DQN: of the Q-values), the legal action of highest score (lowest
id on a tie), whatever the model would sample. The model's observation space is the vector
``Box(401)`` or a ``Dict`` with ``observation`` (401) and ``action_mask`` (60) entries, as
the env gives them. Loading an SB3 archive unpickles Python objects: load only files you trust.
Needs the ``train`` extra (torch, stable-baselines3, sb3-contrib).
"""

from __future__ import annotations

import base64
import functools
import importlib
import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from c8env.actions import NUM_ACTIONS
from c8env.agents.onnx_policy import MissingExtraError, _first_line, consistent_argmax
from c8env.observation import check_observation
from c8env.versions import OBS_SIZES, sizes_help

_SIZES = " or ".join(map(str, OBS_SIZES))  # for error messages

TRAIN_INSTALL = "pip install 'c8env[train]'"
ALGORITHMS = ("MaskablePPO", "PPO", "DQN")

try:
    import torch
    from stable_baselines3.common.policies import ActorCriticPolicy, BaseModel, BasePolicy
    from stable_baselines3.dqn.policies import DQNPolicy
except ImportError as _err:
    raise MissingExtraError(f"playing SB3 .zip models needs torch and stable-baselines3 ({_err}); install them: "
                            f"{TRAIN_INSTALL}") from None


def _scores(policy: BasePolicy, observations: Any) -> torch.Tensor:
    """Action scores of an SB3 policy for a batch of observation tensors: an actor-critic's logits, a DQN's
    Q-values."""
    if isinstance(policy, DQNPolicy):
        return policy.q_net(observations)
    if all(hasattr(policy, name) for name in ("pi_features_extractor", "mlp_extractor", "action_net")):  # PPO's,
        # MaskablePPO's (not an ActorCriticPolicy subclass)
        features = BaseModel.extract_features(policy, observations, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features))
    raise ValueError(f"cannot score with an SB3 {type(policy).__name__}; allowed: actor-critic (PPO, MaskablePPO) "
                     "and DQN policies")


class LogitsModule(torch.nn.Module):
    """An SB3 policy as a torch module from observations float32[batch, 401] to its scores float32[batch, 60]
    (what :func:`c8env.tools.onnx_export.export_onnx` exports)."""

    def __init__(self, policy: BasePolicy) -> None:
        super().__init__()
        space = policy.observation_space
        if not _vector_shape(getattr(space, "shape", None)):
            raise ValueError(f"cannot export an SB3 policy with observation space {space}; allowed: Box of "
                             f"{_SIZES} entries ({sizes_help()}; a Dict-space model plays from its .zip)")
        self.policy = policy

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return _scores(self.policy, observation)


def _policy_class(path: Path) -> tuple[type, dict[str, Any]]:
    """The policy class named in an SB3 archive's ``data`` (unpickled, as SB3's own load does), and the data."""
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
        serialized = data["policy_class"][":serialized:"]
    except (zipfile.BadZipFile, KeyError, TypeError, ValueError, OSError) as err:
        raise ValueError(f"{str(path)!r} is not a Stable-Baselines3 model archive ({_first_line(err)})") from None
    import cloudpickle

    try:
        return cloudpickle.loads(base64.b64decode(serialized)), data
    except Exception as err:  # a class from a module not installed here
        raise ValueError(f"{str(path)!r}: cannot read its policy class ({_first_line(err)})") from None


def _is_subclass(cls: type, module: str, name: str) -> bool:
    """Whether ``cls`` subclasses ``module.name`` (False when that module is not installed)."""
    try:
        base = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return False
    return issubclass(cls, base)


def detect_algorithm(path: str | Path) -> str:
    """Which supported algorithm saved ``path`` (one of :data:`ALGORITHMS`); a ValueError naming the file for any
    other archive."""
    path = Path(path)
    cls, data = _policy_class(path)
    if _is_subclass(cls, "sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"):
        return "MaskablePPO"
    if issubclass(cls, DQNPolicy):
        return "DQN"
    if issubclass(cls, ActorCriticPolicy) and "clip_range" in data \
            and not _is_subclass(cls, "sb3_contrib.common.recurrent.policies", "RecurrentActorCriticPolicy"):
        return "PPO"
    if cls.__module__.startswith("sb3_contrib.common.maskable"):
        raise MissingExtraError(f"{str(path)!r} is a MaskablePPO model; playing it needs sb3-contrib: {TRAIN_INSTALL}")
    raise ValueError(f"{str(path)!r}: SB3 model with policy {cls.__module__}.{cls.__qualname__} is not supported; "
                     f"allowed: {', '.join(ALGORITHMS)} (or export its policy to ONNX: docs/benchmark-your-agent.md)")


def _algorithm_class(name: str) -> Any:
    if name == "MaskablePPO":
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as err:
            raise MissingExtraError(f"playing MaskablePPO models needs sb3-contrib ({err}): {TRAIN_INSTALL}") from None
        return MaskablePPO
    from stable_baselines3 import DQN, PPO

    return {"PPO": PPO, "DQN": DQN}[name]


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int) -> tuple[str, Any]:
    """The algorithm name and the model of ``path`` on CPU (cached per file version: the scalar engine loads an
    agent per hand)."""
    algorithm = detect_algorithm(path)
    # schedules are not needed to play, and their pickles may not load under another Python
    custom = {"learning_rate": 0.0, "lr_schedule": lambda _: 0.0, "clip_range": lambda _: 0.0,
              "exploration_schedule": lambda _: 0.0}
    try:
        model = _algorithm_class(algorithm).load(path, device="cpu", custom_objects=custom)
    except Exception as err:
        raise ValueError(f"{path!r}: {algorithm}.load failed ({_first_line(err)})") from None
    model.policy.set_training_mode(False)
    _check_spaces(path, model)
    return algorithm, model


def _check_spaces(path: str, model: Any) -> None:
    from gymnasium import spaces

    action, observation = model.action_space, model.observation_space
    if not isinstance(action, spaces.Discrete) or action.n != NUM_ACTIONS:
        raise ValueError(f"{path!r}: action space {action}; expected Discrete({NUM_ACTIONS})")
    if isinstance(observation, spaces.Dict):
        shapes = {key: getattr(space, "shape", None) for key, space in observation.spaces.items()}
        if set(shapes) != {"observation", "action_mask"} or shapes["action_mask"] != (NUM_ACTIONS,) \
                or not _vector_shape(shapes["observation"]):
            raise ValueError(f"{path!r}: Dict observation space {shapes}; expected observation of "
                             f"{_SIZES} entries and action_mask ({NUM_ACTIONS},) ({sizes_help()})")
    elif not _vector_shape(getattr(observation, "shape", None)):
        raise ValueError(f"{path!r}: observation space {observation}; expected a Box of {_SIZES} entries "
                         f"({sizes_help()}) or a Dict of observation and action_mask")


def _vector_shape(shape: Any) -> bool:
    """Whether ``shape`` is that of an env version's observation vector."""
    return isinstance(shape, tuple) and len(shape) == 1 and shape[0] in OBS_SIZES


class SB3Agent:
    """Plays a saved SB3 model (see the module docstring): the masked argmax of its logits or Q-values."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"SB3 model file {str(path)!r} does not exist")
        stat = path.stat()
        self.algorithm, self.model = _load(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        self.policy = self.model.policy
        self.path = path
        self.name = path.stem
        space = self.model.observation_space
        self._dict_dtypes = ({key: space[key].dtype for key in ("observation", "action_mask")}
                             if hasattr(space, "spaces") else None)
        self.inputs: int = (space["observation"] if self._dict_dtypes else space).shape[0]
        """The observation entries the model reads: its env version's observation size (:mod:`c8env.versions`)."""

    def scores(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The model's scores float32[k, 60] (logits or Q-values) for observations float32[k, 401] (or 245: the
        first ``inputs`` entries are fed) and masks."""
        observations = np.asarray(observations, dtype=np.float32)[:, :self.inputs]
        if self._dict_dtypes is None:
            given: Any = observations
        else:
            given = {"observation": observations.astype(self._dict_dtypes["observation"]),
                     "action_mask": np.asarray(masks).astype(self._dict_dtypes["action_mask"])}
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # a small MLP: one thread is fastest (several fight over a small machine's cores)
        try:
            with torch.no_grad():
                tensor, _ = self.policy.obs_to_tensor(given)
                return _scores(self.policy, tensor).cpu().numpy().astype(np.float32)
        finally:
            torch.set_num_threads(threads)

    def act(self, observation: Mapping[str, Any]) -> int:
        check_observation(observation, "SB3Agent", self.inputs)
        mask = np.asarray(observation["action_mask"])
        legal = mask.astype(bool)
        if not legal.any():
            raise ValueError("SB3Agent.act: the action mask has no legal action (not this agent's turn?)")
        scores = self.scores(np.asarray(observation["observation"], dtype=np.float32)[None], mask[None])[0]
        return int(np.argmax(np.where(legal, scores, -np.inf)))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for a batch: observations float32[k, 401] and masks int8[k, 60] in, actions int64[k] out
        (row ``i`` is exactly ``act`` of row ``i``: :func:`~c8env.agents.onnx_policy.consistent_argmax`)."""
        return consistent_argmax(self.scores, observations, masks, self.inputs)


__all__ = ["ALGORITHMS", "LogitsModule", "SB3Agent", "detect_algorithm"]
