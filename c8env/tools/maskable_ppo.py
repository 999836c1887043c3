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
  masks) over :class:`c8env.envs.learner_games.LearnerGames`, the learner's games against
  batched opponents stepped as one batch in this process (``training``'s ``vec_env: batched`` is one);
* :class:`LinearDecay`: the learning rate decaying linearly over a run that learns in several ``learn()`` calls.

Imports torch and Stable-Baselines3: only the commands that train load this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
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
    from c8env.envs.learner_games import LearnerGames

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


def start_kwargs(agent: Any) -> dict[str, Any]:
    """The MaskablePPO ``policy_kwargs`` of an actor that can hold a single-network policy (a
    :class:`~c8env.agents.policy.PolicyAgent`): its hidden sizes for the actor and the critic, its activation,
    :class:`ScaledObservation` over its inputs."""
    hidden = [int(weight.shape[0]) for weight, _ in agent.single_network("a warm start")[:-1]]
    return {"net_arch": {"pi": hidden, "vf": list(hidden)}, "activation_fn": ACTIVATIONS[agent.meta["activation"]],
            "features_extractor_class": ScaledObservation, "features_extractor_kwargs": {"inputs": agent.inputs}}


def load_actor(policy: Any, agent: Any, critic_from_actor: bool = True) -> None:
    """Set a MaskableActorCriticPolicy's actor (built with :func:`start_kwargs`) to ``agent``'s network, so it plays
    the file's moves (the scale the export folds into the first layer taken out again); with ``critic_from_actor``
    the critic's hidden layers start as copies of the actor's (its value head stays fresh)."""
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [policy.action_net]
    layers = agent.single_network("a warm start")
    if [tuple(m.weight.shape) for m in linears] != [w.shape for w, _ in layers]:
        raise ValueError(f"the actor's layers {[tuple(m.weight.shape) for m in linears]} do not match the file's "
                         f"{[w.shape for w, _ in layers]}")
    scale = policy.pi_features_extractor.scale.cpu().numpy()[:agent.inputs]
    with torch.no_grad():
        for index, (module, (weight, bias)) in enumerate(zip(linears, layers, strict=True)):
            module.weight.copy_(torch.tensor(weight / scale[None, :] if index == 0 else weight))
            module.bias.copy_(torch.tensor(bias))
        if critic_from_actor:
            critic = [m for m in policy.mlp_extractor.value_net if isinstance(m, torch.nn.Linear)]
            for module, source in zip(critic, linears[:-1], strict=True):
                module.weight.copy_(source.weight)
                module.bias.copy_(source.bias)


class LinearDecay:
    """The learning rate ``start * remaining``, ``remaining = 1 - step / total_steps`` of the whole run.

    SB3 hands a schedule the progress of the current ``learn()`` call, but a run learns in several calls (one per
    periodic event or curve point); so a callback sets :attr:`remaining` at each rollout's end (:meth:`set_step`),
    just before the PPO update reads the rate, to the value one ``learn()`` call over the whole run would pass (SB3's
    own formula)."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.remaining = 1.0

    def set_step(self, step: int, total_steps: int) -> None:
        self.remaining = 1.0 - float(step) / float(max(total_steps, 1))

    def __call__(self, progress_remaining: float) -> float:
        return self.start * self.remaining


class LearnerVecEnv(VecEnv):
    """:class:`~c8env.envs.learner_games.LearnerGames` (one learner seat per game, the opponents batched) as
    Stable-Baselines3's ``VecEnv``, stepped as one batch in this process.

    Infos as ``SingleAgentEnv``'s (``illegal_action="raise"``) at every step: ``learner_seat``, ``skipped_deals``, the
    hand results with neutral values where no hand ended (``hand_winner``, ``end_reason``, ``match_winner`` in match
    mode), ``scores``, ``action_mask``; at an episode's end also ``terminal_observation`` (zeros past the
    observation vector, in a wider space), ``TimeLimit.truncated``, ``learner_won`` (the hand, or the match, went to
    the learner's seat), ``opponent_kind`` (``kind_of`` of each opponent of the table, or ``mixed`` where they
    differ) and ``episode`` (``r``, ``l``, ``t``, as Gymnasium's ``RecordEpisodeStatistics``).

    ``reset()`` seeds game ``b`` with SB3's per-env seed (``seed + b`` after ``seed(seed)``). With ``cutoff_reward``
    a hand cut off at the games' ``max_steps`` ends its episode with that reward (no time-limit truncation to
    bootstrap). ``env_method("action_masks")`` and ``has_attr("action_masks")`` answer MaskablePPO; ``methods`` are
    further env methods, each called once for the whole batch (e.g. an opponent pool's ``set_snapshots``).
    ``observation_space`` (default: the observation vector's) may be wider, for a subclass's :meth:`_observation`.
    """

    def __init__(self, games: LearnerGames, cutoff_reward: float | None = None,
                 kind_of: Callable[[Any], str] = str, methods: dict[str, Callable[..., Any]] | None = None,
                 observation_space: spaces.Box | None = None) -> None:
        self.games = games
        self.cutoff_reward = cutoff_reward
        self.kind_of = kind_of
        self.methods = {"action_masks": self.action_masks, **(methods or {})}
        super().__init__(games.num_envs, observation_space or vector_space(), spaces.Discrete(NUM_ACTIONS))
        self._match = games.episode == "match"
        self._actions = np.zeros(self.num_envs, dtype=np.int64)
        self._returns = np.zeros(self.num_envs, dtype=np.float64)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        self._started = np.zeros(self.num_envs, dtype=np.float64)

    def _observation(self, observation: np.ndarray) -> np.ndarray:
        """What the learner is handed for the games' observations (a copy; a subclass may append inputs)."""
        return observation.copy()

    def _kind(self, entries: Sequence[Any]) -> str:
        """The ``opponent_kind`` of one table."""
        kinds = {self.kind_of(entry) for entry in entries}
        return kinds.pop() if len(kinds) == 1 else "mixed"

    def _start_info(self, b: int) -> dict[str, Any]:
        """Game ``b``'s info as ``SingleAgentEnv.reset`` gives it (its episode has just begun)."""
        games = self.games
        return self._info(int(games.learner_seat[b]), int(games.skipped[b]), None, games.games.scores[b],
                          games.action_mask[b].astype(bool))

    def _info(self, seat: int, skipped: int, hand: int | None, scores: np.ndarray, mask: np.ndarray,
              match_over: bool = False) -> dict[str, Any]:
        """``SingleAgentEnv``'s info: ``hand`` is the game whose result (a hand ended in it in the step) fills the
        hand keys, None for neutral values."""
        res = self.games.results
        info: dict[str, Any] = {"learner_seat": seat, "skipped_deals": skipped,
                                "hand_winner": -1 if hand is None else int(res.hand_winner[hand]),
                                "end_reason": 0 if hand is None else int(res.end_reason[hand]),
                                "scores": np.array(scores, dtype=np.int64)}
        if self._match:
            info["match_winner"] = int(res.match_winner[hand]) if hand is not None and match_over else -1
        info["action_mask"] = mask
        return info

    def reset(self) -> np.ndarray:
        if any(self._options):
            raise ValueError(f"{type(self).__name__} takes no reset options, got {self._options}")
        self.games.reset(self._seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [self._start_info(b) for b in range(self.num_envs)]
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self._started[:] = time.perf_counter()
        return self._observation(self.games.observation)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        obs, reward, dones, infos = self._step()
        return obs, reward.astype(np.float32), dones, infos

    def _step(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """:meth:`step_wait` with the rewards as float64 (the episode returns in the infos summed from them)."""
        games = self.games
        obs, reward, terminated, truncated = games.step(self._actions)
        if self.cutoff_reward is not None:  # a hand cut off at max_steps counts as lost, and ends the episode
            cut = truncated & ~terminated
            reward = np.where(cut, self.cutoff_reward, reward)
            terminated, truncated = terminated | cut, truncated & ~cut
        dones = terminated | truncated
        self._returns += reward
        self._lengths += 1
        res = games.results
        infos: list[dict[str, Any]] = []
        now = time.perf_counter()
        masks = games.action_masks()
        for b in range(self.num_envs):
            seat = int(games.final_seat[b])
            hand = b if res.hand_over[b] else None
            if dones[b]:  # the finished episode's last info: its totals, an empty mask
                info = self._info(seat, int(games.final_skipped[b]), hand, games.final_scores[b],
                                  np.zeros(NUM_ACTIONS, dtype=bool), bool(terminated[b]))
            else:
                info = self._info(seat, int(games.skipped[b]), hand, games.games.scores[b], masks[b])
            info["TimeLimit.truncated"] = bool(truncated[b] and not terminated[b])
            if dones[b]:
                winner = info.get("match_winner", info["hand_winner"])
                final = games.final_observation[b]
                info.update(terminal_observation=np.pad(final, (0, self.observation_space.shape[0] - OBS_SIZE)),
                            opponent_kind=self._kind(games.final_opponents[b]),
                            learner_won=winner >= 0 and winner == seat,
                            episode={"r": float(self._returns[b]), "l": int(self._lengths[b]),
                                     "t": round(now - self._started[b], 6)})
                self.reset_infos[b] = self._start_info(b)
                self._returns[b] = 0.0
                self._lengths[b] = 0
                self._started[b] = now
            infos.append(info)
        return self._observation(obs), reward, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in each game (bool[B, 60])."""
        return self.games.action_masks()

    def close(self) -> None:
        pass

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    # ----- per-env calls: every env shares the batch ------------------------------------------------------------
    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        indices = list(self._get_indices(indices))
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self.games.action_masks()
            return [masks[i] for i in indices]
        if method_name in self.methods and method_name != "action_masks":
            self.methods[method_name](*method_args, **method_kwargs)
            return [None] * len(indices)
        raise AttributeError(f"{type(self).__name__} has no env method {method_name!r}; allowed: "
                             f"{', '.join(self.methods)}")

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in self.methods or attr_name == "render_mode"

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """``render_mode`` (None) or the env methods, per env."""
        indices = list(self._get_indices(indices))
        if attr_name == "render_mode":
            return [None] * len(indices)
        if attr_name == "action_masks":
            return [lambda i=i: self.games.action_masks()[i] for i in indices]
        if attr_name in self.methods:
            return [self.methods[attr_name]] * len(indices)
        raise AttributeError(f"{type(self).__name__} has no env attribute {attr_name!r}; allowed: render_mode, "
                             f"{', '.join(self.methods)}")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"{type(self).__name__} has no settable env attributes (asked for {attr_name!r})")

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))


__all__ = ["ACTIVATIONS", "LearnerVecEnv", "LinearDecay", "ScaledObservation", "load_actor", "obs_scale",
           "policy_layers", "save_npz", "start_kwargs"]
