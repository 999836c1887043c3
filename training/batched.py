"""``BatchedVecEnv``: the training envs as one batch of the batched engine, in the learner process.

The ``vec_env: batched`` backend of :func:`training.vec.make_vec_env`. ``config.n_envs`` games
of :class:`c8env.envs.learner_games.LearnerGames`, each with one learner seat against opponents
drawn from the run's :class:`training.pool.OpponentPool` at every episode's start, exactly as
:class:`training.envs.PoolEnv` draws them (random, greedy, and ``self`` snapshots played as
NumPy policies, batched); the ``expert`` kind cannot be batched and is refused. No worker
processes: a step is a few compiled kernel calls for all games.

It speaks SB3's ``VecEnv`` protocol the way the subprocess backend does: per-env infos with
``SingleAgentEnv``'s keys at every step (``learner_seat``, ``skipped_deals``, the hand results with
neutral values where no hand ended, ``scores``, ``action_mask``), and at an episode's end ``terminal_observation``,
``TimeLimit.truncated``, ``opponent_kind``, ``learner_won`` and ``episode`` (``r``, ``l``,
``t``, as Gymnasium's ``RecordEpisodeStatistics``); ``env_method("action_masks")`` and
``has_attr("action_masks")`` answer MaskablePPO, ``env_method("set_snapshots", paths)``
updates the pool.

With ``oracle_critic`` each observation is followed by the other players' hands (:func:`other_hands`), then
with ``oracle_stock_cards`` the stock's top cards (:func:`stock_top`), for the critic alone
(:class:`training.model.OracleCriticPolicy`); a ``terminal_observation`` has zeros there (it is only read to
value a truncated episode, and ``oracle_critic`` needs ``cutoff_reward``, which ends them).

With ``shaping`` each learner reward r becomes r + gamma * phi(s') - phi(s) (potential-based shaping), phi(s) the
learner's result of the hand played out from the learner's decision s on the true cards
(:func:`c8env.agents.search_compiled.playout_values`: the learner's seat by the shaping network's argmax, or greedy,
the others greedy), phi = 0 once the episode has ended. Every player being deterministic, a play-out passes through
the next decision when the learner makes the play-out's move at a table of greedy players, so phi(s') = phi(s)
there and only the other steps are played out again. With ``shaping_stocks: K`` there is no potential: a learner
move other than the play-out's own earns how much better its play-out does than the play-out move's, the mean over
K stock orders (:func:`c8env.agents.search_compiled.stock_sampled_advantages`), every other step 0. ``episode``
infos keep the unshaped return.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvStepReturn

from c8env.actions import NUM_ACTIONS
from c8env.agents import load
from c8env.agents.search_compiled import network, playout_moves, playout_values, stock_sampled_advantages
from c8env.cards import NUM_CARDS
from c8env.envs.learner_games import GREEDY, LEARNER, LearnerGames
from c8env.envs.spaces import vector_space
from c8env.observation import OBS_SIZE
from c8env.vector import kernels
from training.config import TrainConfig
from training.envs import make_pool

#: What ``env_method`` and ``has_attr`` know (every env answers them).
METHODS = ("action_masks", "set_snapshots", "set_shaping_policy")


class BatchedVecEnv(VecEnv):
    """``config.n_envs`` pool games stepped as one batch (see the module docstring)."""

    def __init__(self, config: TrainConfig, snapshots: Sequence[str] = ()) -> None:
        if config.opponent_weights.get("expert", 0.0) > 0:
            raise ValueError("vec_env 'batched' cannot play the 'expert' opponent kind (opponent_weights.expert = "
                             f"{config.opponent_weights['expert']}); set opponent_weights.expert=0 or vec_env=subproc")
        self.pool = make_pool(config, list(snapshots))
        self.expert_spec = config.expert_spec
        self.games = LearnerGames(config.n_envs, config.num_players, config.rules, config.episode, config.reward,
                                  config.max_steps, opponents=self.pool)
        self.cutoff_reward = config.cutoff_reward
        self.oracle, self.stock_cards = config.oracle_critic, config.oracle_stock_cards
        space = vector_space()
        if self.oracle:
            extra = (config.num_players - 1 + self.stock_cards) * NUM_CARDS
            space = spaces.Box(low=-1.0, high=1e6, shape=(OBS_SIZE + extra,), dtype=np.float32)
        super().__init__(config.n_envs, space, spaces.Discrete(NUM_ACTIONS))
        self.shaping, self.gamma = config.shaping, config.gamma
        self.shaping_net = network([], "tanh")  # greedy; "self" until the first set_shaping_policy
        if self.shaping not in (None, "greedy", "self"):
            agent = load(self.shaping, rules=config.rules, num_players=config.num_players)
            if not hasattr(agent, "layers"):
                raise ValueError(f"config key 'shaping' = {self.shaping!r} is invalid: allowed: 'greedy', 'self' or "
                                 "a NumPy policy (shipped name or .npz path)")
            self.shaping_net = network(agent.single_network("config key 'shaping'"), agent.activation)
        self.stock_samples = config.shaping_stocks
        self._stock_rng = np.random.default_rng([config.seed, 5])  # the stock shuffles' own stream of the run's seed
        self._potential = np.zeros(self.num_envs, dtype=np.float64)
        self._match = config.episode == "match"
        self._actions = np.zeros(self.num_envs, dtype=np.int64)
        self._returns = np.zeros(self.num_envs, dtype=np.float64)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        self._started = np.zeros(self.num_envs, dtype=np.float64)

    def _kind(self, entries: list[str]) -> str:
        """The pool kind of one table (``training.pool.OpponentPool.label``)."""
        kinds = {"self" if e not in ("random", "greedy", self.expert_spec) else "expert" if e == self.expert_spec
                 else e for e in entries}
        return kinds.pop() if len(kinds) == 1 else "mixed"

    def _start_info(self, b: int) -> dict[str, Any]:
        """Game ``b``'s info as ``SingleAgentEnv.reset`` gives it (its episode has just begun)."""
        games = self.games
        return self._info(int(games.learner_seat[b]), int(games.skipped[b]), None, games.games.scores[b],
                          games.action_mask[b].astype(bool))

    def _info(self, seat: int, skipped: int, hand: int | None, scores: np.ndarray, mask: np.ndarray,
              match_over: bool = False) -> dict[str, Any]:
        """``SingleAgentEnv``'s info (``illegal_action="raise"``): ``hand`` is the game whose result (a hand ended in
        it in the step) fills the hand keys, None for neutral values."""
        res = self.games.results
        info: dict[str, Any] = {"learner_seat": seat, "skipped_deals": skipped,
                                "hand_winner": -1 if hand is None else int(res.hand_winner[hand]),
                                "end_reason": 0 if hand is None else int(res.end_reason[hand]),
                                "scores": np.array(scores, dtype=np.int64)}
        if self._match:
            info["match_winner"] = int(res.match_winner[hand]) if hand is not None and match_over else -1
        info["action_mask"] = mask
        return info

    # ----- stepping ------------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        if any(self._options):
            raise ValueError(f"vec_env 'batched' takes no reset options, got {self._options}")
        self.games.reset(self._seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [self._start_info(b) for b in range(self.num_envs)]
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self._started[:] = time.perf_counter()
        if self.shaping is not None and not self.stock_samples:
            self._potential = self._playouts()
        return self._observation(self.games.observation)

    # ----- shaping -------------------------------------------------------------------------------
    def _playouts(self, rows: np.ndarray | None = None) -> np.ndarray:
        """phi of the learner's decision in each game (or each of ``rows``)."""
        return playout_values(self.games.games, self.games.table, self.games.learner_seat, self.shaping_net, rows)

    def _shaped(self, reward: np.ndarray, dones: np.ndarray, follows: np.ndarray) -> np.ndarray:
        """``reward`` shaped (see the module docstring); ``follows``: the learner made the play-out's move."""
        greedy_table = ((self.games.opponent_kind == GREEDY) | (self.games.opponent_kind == LEARNER)).all(axis=1)
        potential = self._potential.copy()  # phi(s') where the play-out from s passed through s'
        redo = np.flatnonzero(dones | ~follows | ~greedy_table)
        if len(redo):
            potential[redo] = self._playouts(redo)
        shaped = reward + self.gamma * np.where(dones, 0.0, potential) - self._potential
        self._potential = potential  # a finished game's: its next episode's first decision
        return shaped

    def set_shaping_policy(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], activation: str) -> None:
        """``shaping: self``: the play-outs' network becomes these actor layers (:func:`c8env.tools.maskable_ppo.
        policy_layers`), and phi is valued again for every game (call it between rollouts)."""
        if self.shaping != "self":
            raise ValueError(f"set_shaping_policy needs shaping 'self', got {self.shaping!r}")
        self.shaping_net = network(layers, activation)
        if not self.stock_samples:
            self._potential = self._playouts()

    def _observation(self, observation: np.ndarray) -> np.ndarray:
        """The learners' observations, followed by the other hands and the stock's top cards with ``oracle_critic``."""
        if not self.oracle:
            return observation.copy()
        games = self.games.games
        return np.concatenate([observation, other_hands(games, self.games.learner_seat),
                               stock_top(games, self.stock_cards)], axis=1)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        games = self.games
        if self.shaping is not None:
            planned = playout_moves(games.games, games.table, games.learner_seat, self.shaping_net)
            if self.stock_samples:
                off = np.flatnonzero(self._actions != planned)
                advantages = stock_sampled_advantages(games.games, games.table, games.learner_seat, self.shaping_net,
                                                      off, self._actions, planned, self.stock_samples,
                                                      self._stock_rng)
        obs, reward, terminated, truncated = games.step(self._actions)
        if self.cutoff_reward is not None:  # a hand cut off at max_steps counts as lost, and ends the episode
            cut = truncated & ~terminated
            reward = np.where(cut, self.cutoff_reward, reward)
            terminated, truncated = terminated | cut, truncated & ~cut
        dones = terminated | truncated
        self._returns += reward
        if self.shaping is not None and self.stock_samples:
            reward = np.zeros(self.num_envs)
            reward[off] = advantages
        elif self.shaping is not None:
            reward = self._shaped(reward, dones, self._actions == planned)
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
        return self._observation(obs), reward.astype(np.float32), dones, infos

    def close(self) -> None:
        pass

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    # ----- per-env calls: every env shares the batch and the pool ---------------------------------
    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        indices = list(self._get_indices(indices))
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self.games.action_masks()
            return [masks[i] for i in indices]
        if method_name == "set_snapshots":
            self.pool.set_snapshots(*method_args, **method_kwargs)
            return [None] * len(indices)
        if method_name == "set_shaping_policy":
            self.set_shaping_policy(*method_args, **method_kwargs)
            return [None] * len(indices)
        raise AttributeError(f"vec_env 'batched' has no env method {method_name!r}; allowed: {', '.join(METHODS)}")

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in METHODS or attr_name == "render_mode"

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """``render_mode`` (None) or the methods of :data:`METHODS`, per env."""
        indices = list(self._get_indices(indices))
        if attr_name == "render_mode":
            return [None] * len(indices)
        if attr_name == "action_masks":
            return [lambda i=i: self.games.action_masks()[i] for i in indices]
        if attr_name == "set_snapshots":
            return [self.pool.set_snapshots] * len(indices)
        if attr_name == "set_shaping_policy":
            return [self.set_shaping_policy] * len(indices)
        raise AttributeError(f"vec_env 'batched' has no env attribute {attr_name!r}; allowed: render_mode, "
                             f"{', '.join(METHODS)}")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"vec_env 'batched' has no settable env attributes (asked for {attr_name!r})")

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))


def other_hands(games: kernels.Games, learner_seat: np.ndarray) -> np.ndarray:
    """Per game, the cards of each other player in seat order from the learner's (seat + 1 first), as counts of
    each card id (float32[B, (n - 1) x 52]; 2 where a player holds both copies of a card)."""
    n = games.held.shape[1]
    rows = np.arange(len(learner_seat))[:, None]
    seats = (learner_seat[:, None] + np.arange(1, n)) % n
    bits = np.arange(NUM_CARDS, dtype=np.int64)
    counts = ((games.held[rows, seats][..., None] >> bits) & 1) + ((games.twice[rows, seats][..., None] >> bits) & 1)
    return counts.reshape(len(learner_seat), -1).astype(np.float32)


def stock_top(games: kernels.Games, count: int) -> np.ndarray:
    """Per game, the stock's top ``count`` cards (the next to be drawn first), each one-hot over the card ids; zeros
    where the stock holds fewer (float32[B, count x 52])."""
    size = len(games.stock_len)
    depth = games.stock_len[:, None] - 1 - np.arange(count)
    cards = np.take_along_axis(games.stock, np.maximum(depth, 0), axis=1)
    out = np.zeros((size, count, NUM_CARDS), dtype=np.float32)
    out[np.arange(size)[:, None], np.arange(count), cards] = depth >= 0
    return out.reshape(size, -1)


__all__ = ["BatchedVecEnv", "METHODS", "other_hands", "stock_top"]
