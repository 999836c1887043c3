"""The RLlib run's configuration: :class:`RLlibConfig`, loaded from ``configs/rllib/<name>.yaml`` like the SB3 path's.

Fields with the same meaning as :class:`training.config.TrainConfig`'s (the game, the network,
the PPO coefficients, the opponent pool, evaluation and checkpoints) are that model's own
fields, docstrings and bounds included; the RLlib-only ones are the batch, the scale
(``num_env_runners``, ``num_envs_per_env_runner``, ``num_learners``, ``num_cpus``,
``address``) and the KL penalty. Loading, ``--set`` overrides and the one-line errors are
:mod:`training.config`'s, given this model.

NumPy, PyYAML, pydantic and c8env only: no Ray or torch here.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo

from training.config import (
    RunConfig,
    TrainConfig,
    check_layers,
    check_name,
    check_rules,
    check_weights,
    config_from_dict,
    describe,
    error_text,
    load_config,
)


def shared(name: str, **changes: Any) -> Any:
    """A copy of ``TrainConfig``'s field ``name`` (type bounds, docstring), with ``default=`` etc. changed."""
    info: FieldInfo = copy.deepcopy(TrainConfig.model_fields[name])
    if "default" in changes:
        info.default = changes.pop("default")
        info.default_factory = None
    if "description" in changes:
        info.description = changes.pop("description")
    if changes:
        raise TypeError(f"shared({name!r}): cannot change {sorted(changes)}")
    return info


class RLlibConfig(RunConfig, BaseModel):
    """Everything an RLlib training run needs; see each field's docstring."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, use_attribute_docstrings=True,
                              validate_assignment=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:  # one line naming the key, the value and what is allowed
            raise ValueError(error_text(err, type(self))) from None

    # ----- the game (as the SB3 path) ------------------------------------------------------------
    name: str = shared("name")
    rules: str = shared("rules")
    num_players: int = shared("num_players")
    reward: Literal["win", "points"] = shared("reward")
    episode: Literal["hand", "match"] = shared("episode")

    # ----- the network (as the SB3 path) ---------------------------------------------------------
    pi_layers: list[int] = shared("pi_layers")
    vf_layers: list[int] = shared("vf_layers")
    activation: Literal["tanh", "relu"] = shared("activation")

    # ----- PPO -----------------------------------------------------------------------------------
    learning_rate: float = shared("learning_rate")
    train_batch_size: int = Field(8192, ge=1)
    """Env steps (every player's moves, the learner's about 1/num_players of them) per learner per iteration."""
    minibatch_size: int = Field(1024, ge=1)
    """Minibatch size of the PPO updates (at most train_batch_size)."""
    num_epochs: int = Field(4, ge=1)
    """Passes over each iteration's batch."""
    gamma: float = shared("gamma")
    gae_lambda: float = shared("gae_lambda")
    clip_range: float = shared("clip_range")
    ent_coef: float = shared("ent_coef")
    vf_coef: float = shared("vf_coef")
    max_grad_norm: float = shared("max_grad_norm")
    kl_coeff: float = Field(0.0, ge=0)
    """Initial coefficient of RLlib's adaptive KL penalty (0: no KL term, as SB3's PPO)."""

    # ----- the run and its scale -----------------------------------------------------------------
    total_steps: int = shared("total_steps",
                              description="Learner decisions (module ``main``'s steps, the SB3 path's env transitions) "
                                          "to train for; the run stops after the iteration that reaches them.")
    seed: int = shared("seed")
    num_env_runners: int = Field(1, ge=0)
    """Ray actors stepping envs (0: the driver samples itself); on a cluster they spread over the machines."""
    num_envs_per_env_runner: int = Field(8, ge=1)
    """Envs each env runner steps in one batch (one forward pass per module per step)."""
    num_learners: int = Field(0, ge=0)
    """Learner actors (0: the driver updates the network; n > 0: n remote learners, data-parallel)."""
    num_cpus: int | None = Field(2, ge=1)
    """CPUs of the local Ray instance started when ``address`` is null (null: all of the machine's)."""
    address: str | None = None
    """A running Ray cluster to join (``auto``, or ``HOST:6379`` of ``ray start --head``); null: start a local Ray."""
    torch_threads: int = shared("torch_threads")
    run_root: str = shared("run_root", default="runs/rllib")

    # ----- the opponent pool (as the SB3 path: modules instead of files) -------------------------
    opponent_weights: dict[str, float] = shared("opponent_weights")
    expert_spec: str = shared("expert_spec")
    pool_per_seat: bool = shared("pool_per_seat")
    snapshot_interval: int = shared("snapshot_interval")
    max_snapshots: int = shared("max_snapshots")

    # ----- evaluation and checkpoints (as the SB3 path) ------------------------------------------
    eval_interval: int = shared("eval_interval")
    eval_opponents: list[str] = shared("eval_opponents")
    eval_deals: int = shared("eval_deals")
    final_eval_deals: int = shared("final_eval_deals")
    eval_workers: int = shared("eval_workers")
    checkpoint_interval: int = shared("checkpoint_interval")
    keep_checkpoints: int = shared("keep_checkpoints")

    _check_name = field_validator("name")(check_name)
    _check_rules = field_validator("rules")(check_rules)
    _check_layers = field_validator("pi_layers", "vf_layers")(check_layers)
    _check_weights = field_validator("opponent_weights")(check_weights)

    @model_validator(mode="after")
    def _check_minibatch(self) -> RLlibConfig:
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"config key 'minibatch_size' = {self.minibatch_size!r} is invalid: should be at most "
                             f"train_batch_size = {self.train_batch_size}")
        return self



#: Keys ``--resume`` may change (the others are fixed by the run's saved config).
RESUMABLE_KEYS = ("total_steps", "eval_interval", "eval_opponents", "eval_deals", "final_eval_deals", "eval_workers",
                  "checkpoint_interval", "keep_checkpoints", "torch_threads", "num_env_runners",
                  "num_envs_per_env_runner", "num_learners", "num_cpus", "address")


def load_rllib_config(path: str | Path, overrides: list[str] | list[tuple[str, Any]] = ()) -> RLlibConfig:
    """Load ``configs/rllib/<name>.yaml`` (``name`` defaults to the file's stem) and apply overrides."""
    return load_config(path, overrides, RLlibConfig)


def rllib_config_from_dict(data: dict[str, Any], overrides: list[tuple[str, Any]] = ()) -> RLlibConfig:
    return config_from_dict(data, overrides, RLlibConfig)


def describe_rllib() -> str:
    """One line per field (for ``--help``)."""
    return describe(RLlibConfig)


__all__ = ["RESUMABLE_KEYS", "RLlibConfig", "describe_rllib", "load_rllib_config", "rllib_config_from_dict", "shared"]
