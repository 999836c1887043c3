"""``BatchedVecEnv``: the training envs as one batch of the batched engine, in the learner process.

The ``vec_env: batched`` backend of :func:`training.vec.make_vec_env`: the package's SB3 ``VecEnv`` over the learner
games (:class:`c8env.tools.maskable_ppo.LearnerVecEnv`, that of ``c8env exploit``) on ``config.n_envs`` games of
:class:`c8env.envs.learner_games.LearnerGames`, each with one learner seat against opponents drawn from the run's
:class:`training.pool.OpponentPool` at every episode's start, exactly as :class:`training.envs.PoolEnv` draws them
(random, greedy, and ``self`` snapshots played as NumPy policies, batched); the ``expert`` kind cannot be batched
and is refused. No worker processes: a step is a few compiled kernel calls for all games.

It speaks SB3's ``VecEnv`` protocol the way the subprocess backend does (``SingleAgentEnv``'s info keys at every
step; ``terminal_observation``, ``TimeLimit.truncated``, ``opponent_kind``, ``learner_won`` and ``episode`` at an
episode's end: :class:`~c8env.tools.maskable_ppo.LearnerVecEnv`), and ``env_method("set_snapshots", paths)`` updates
the pool. ``cutoff_reward`` ends a cut-off hand's episode with that reward.

With ``oracle_critic`` each observation is followed by the other players' hands (:func:`other_hands`), then
with ``oracle_stock_cards`` the stock's top cards (:func:`stock_top`), for the critic alone
(:class:`training.model.OracleCriticPolicy`); a ``terminal_observation`` has zeros there (it is only read to
value a truncated episode, and ``oracle_critic`` needs ``cutoff_reward``, which ends them).

With ``shaping`` each learner reward r becomes r + gamma * phi(s') - phi(s) (potential-based shaping), phi(s) the
learner's result of the hand played out from the learner's decision s on the true cards
(:func:`training.research.playouts.playout_values`: the learner's seat by the shaping network's argmax, or greedy,
the others greedy), phi = 0 once the episode has ended. Every player being deterministic, a play-out passes through
the next decision when the learner makes the play-out's move at a table of greedy players, so phi(s') = phi(s)
there and only the other steps are played out again. With ``shaping_stocks: K`` there is no potential: a learner
move other than the play-out's own earns how much better its play-out does than the play-out move's, the mean over
K stock orders (:func:`training.research.playouts.stock_sampled_advantages`), every other step 0. ``episode``
infos keep the unshaped return.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from c8env.agents import load
from c8env.agents.search_compiled import network
from c8env.cards import NUM_CARDS
from c8env.envs.learner_games import GREEDY, LEARNER, LearnerGames
from c8env.observation import OBS_SIZE
from c8env.tools.maskable_ppo import LearnerVecEnv
from c8env.vector import kernels
from training.config import TrainConfig
from training.envs import make_pool
from training.research.playouts import playout_moves, playout_values, stock_sampled_advantages


class BatchedVecEnv(LearnerVecEnv):
    """``config.n_envs`` pool games stepped as one batch (see the module docstring)."""

    def __init__(self, config: TrainConfig, snapshots: Sequence[str] = ()) -> None:
        if config.opponent_weights.get("expert", 0.0) > 0:
            raise ValueError("vec_env 'batched' cannot play the 'expert' opponent kind (opponent_weights.expert = "
                             f"{config.opponent_weights['expert']}); set opponent_weights.expert=0 or vec_env=subproc")
        self.pool = make_pool(config, list(snapshots))
        self.expert_spec = config.expert_spec
        self.oracle, self.stock_cards = config.oracle_critic, config.oracle_stock_cards
        space = None
        if self.oracle:
            extra = (config.num_players - 1 + self.stock_cards) * NUM_CARDS
            space = spaces.Box(low=-1.0, high=1e6, shape=(OBS_SIZE + extra,), dtype=np.float32)
        games = LearnerGames(config.n_envs, config.num_players, config.rules, config.episode, config.reward,
                             config.max_steps, opponents=self.pool)
        super().__init__(games, config.cutoff_reward, self._pool_kind, observation_space=space,
                         methods={"set_snapshots": self.pool.set_snapshots,
                                  "set_shaping_policy": self.set_shaping_policy})
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

    def _pool_kind(self, entry: str) -> str:
        """The pool kind of one opponent (``training.pool.OpponentPool.label``)."""
        return "expert" if entry == self.expert_spec else entry if entry in ("random", "greedy") else "self"

    def reset(self) -> np.ndarray:
        obs = super().reset()
        if self.shaping is not None and not self.stock_samples:
            self._potential = self._playouts()
        return obs

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

    def step_wait(self) -> VecEnvStepReturn:
        if self.shaping is None:
            return super().step_wait()
        games = self.games
        planned = playout_moves(games.games, games.table, games.learner_seat, self.shaping_net)
        if self.stock_samples:
            off = np.flatnonzero(self._actions != planned)
            advantages = stock_sampled_advantages(games.games, games.table, games.learner_seat, self.shaping_net,
                                                  off, self._actions, planned, self.stock_samples, self._stock_rng)
        obs, reward, dones, infos = self._step()
        if self.stock_samples:
            reward = np.zeros(self.num_envs)
            reward[off] = advantages
        else:
            reward = self._shaped(reward, dones, self._actions == planned)
        return obs, reward.astype(np.float32), dones, infos


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


__all__ = ["BatchedVecEnv", "other_hands", "stock_top"]
