"""PettingZoo AEC environment for Crazy Eights: ``crazy_eights_v2``, the newest version (the older ones, kept for
ever: :mod:`c8env.envs.crazy_eights_v1`, :mod:`c8env.envs.crazy_eights_v0`; the table: :mod:`c8env.versions`).

The env is thin: it maps seats to agents and steps a :class:`c8env.episode.Episode`
(hand end, match continuation, truncation, rewards, infos); the rules live in
:mod:`c8env.engine`, the observation codec in :mod:`c8env.observation`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from c8env.engine import State, check_deal_fits, check_num_players, check_seed
from c8env.envs.spaces import action_space, check_render_mode, observation_dict_space, render_output
from c8env.envs.wrappers import wrap
from c8env.episode import Episode, read_state
from c8env.observation import OBS_LAYOUT, OBS_SIZE, action_mask, encode_global_state, encode_observation
from c8env.rules import RuleSet, load_rules
from c8env.text import render_text
from c8env.versions import LATEST, EnvVersion, get_version

#: The keys ``reset(options=...)`` understands.
RESET_OPTIONS = ("state",)
#: A key PettingZoo's ``api_test`` passes to check that ``reset`` takes options; tolerated and ignored.
_API_TEST_OPTION = "options"


def check_reset_options(options: Any) -> dict:
    """Validate ``reset``'s options: None or a dict whose keys are in :data:`RESET_OPTIONS`."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"options={options!r} is invalid; allowed: None or a dict with the key(s) {RESET_OPTIONS}")
    unknown = sorted(map(str, set(options) - set(RESET_OPTIONS) - {_API_TEST_OPTION}))
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; allowed: {', '.join(RESET_OPTIONS)}")
    return options


def env(**kwargs: Any) -> AECEnv:
    """The Crazy Eights AEC env wrapped like PettingZoo's classic envs (arguments as :class:`raw_env`):
    TerminateIllegalWrapper (illegal move: -1 and the game ends), AssertOutOfBoundsWrapper,
    OrderEnforcingWrapper (subclasses of PettingZoo's that read attributes directly:
    :mod:`c8env.envs.wrappers`)."""
    return wrap(raw_env(**kwargs))


class raw_env(AECEnv, EzPickle):
    """Crazy Eights for 2-7 players, every variant of ``docs/rules.md``, as a PettingZoo AEC env.

    | Import             | ``from c8env import crazy_eights_v2``                                       |
    |--------------------|-----------------------------------------------------------------------------|
    | Also               | ``c8env.env(...)`` (wrapped), ``c8env.raw_env(...)``                        |
    | Registered id      | ``c8env/crazy_eights-v2``: ``pettingzoo.make("aec", "c8env/crazy_eights-v2")`` |
    | Actions            | Discrete                                                                    |
    | Parallel API       | No                                                                          |
    | Agents             | ``agents = ['player_0', ..., 'player_<n-1>']``, ``n = num_players``         |
    | Agents count       | 2-7                                                                         |
    | Action shape       | ()                                                                          |
    | Action values      | Discrete(60)                                                                |
    | Observation shape  | ``observation``: (401,), ``action_mask``: (60,)                             |
    | Observation values | ``observation``: float32 counts in [-1, 1e6]; ``action_mask``: int8 in {0, 1} |
    | State shape        | (2807,): 7 seats x 401                                                      |

    ## Description
    Players take turns to shed their hand onto the discard pile by matching its top
    card's suit or rank, or by playing a wild card (an eight) and declaring a suit.
    Who cannot or will not play draws. The first to go out wins the hand and scores
    the others' hand points. ``rules`` selects any preset or variant.

    ## Action Space
    ``Discrete(60)`` for every player count and variant:

    | id    | action                                                                  |
    |-------|-------------------------------------------------------------------------|
    | 0-51  | play the card with this id (``suit * 13 + rank``: AC=0, 8H=33, KS=51)  |
    | 52-55 | declare suit C, D, H, S (after a wild card, or as dealer)               |
    | 56    | draw one card (under a draw penalty: take the whole penalty)            |
    | 57    | pass (in the announce phase: decline to announce, taking the penalty)  |
    | 58    | announce "last card"                                                    |
    | 59    | call "stop"                                                             |

    ## Observation Space
    A dict: ``observation`` (float32 vector of length 401, the same for 2-7 players and
    every variant, seat-relative: the observer first, then the next players clockwise;
    :mod:`c8env.observation` encodes it) and ``action_mask`` (int8, 60; all zeros for
    agents not on turn). Index table (``c8env.OBS_LAYOUT`` maps each name to its slice; v0 and v1 give entries
    0-244 alone, :mod:`c8env.versions`):

    | index   | name                | meaning                                                     |
    |---------|---------------------|-------------------------------------------------------------|
    | 0-51    | hand                | copies of each card in the observer's hand (0, 1, 2)        |
    | 52-103  | top_card            | one-hot id of the discard pile's top card                   |
    | 104-107 | suit_to_follow      | one-hot suit C, D, H, S to follow (zeros when any card goes)|
    | 108-120 | rank_to_follow      | one-hot rank that matches (zeros after a declared suit)     |
    | 121     | any_card            | 1 when any card may be played (an ``any_next`` card on top) |
    | 122-173 | discard_pile        | copies of each card now in the discard pile                 |
    | 174-179 | opponent_hand_sizes | cards held by the next 1..6 players clockwise (0: no seat)  |
    | 180     | stock_size          | cards in the stock                                          |
    | 181     | pending_draw        | draw penalty in force                                       |
    | 182     | direction           | 1 clockwise, -1 counter-clockwise                           |
    | 183-186 | phase               | one-hot play, declare, announce, over                       |
    | 187     | draws_this_turn     | cards drawn so far this turn                                |
    | 188-193 | num_players         | one-hot 2..7                                                |
    | 194-200 | scores              | match totals, observer first                                |
    | 201-213 | wild_rank           | one-hot rank that is wild for the observer                  |
    | 214-237 | opponent_voids      | per next player (6 slots) and suit: drew or passed on it    |
    | 238-244 | countdown           | countdown counts, observer first (zeros without countdown)  |
    | 245-352 | opponent_last_draws | per next player (6 slots of 18): at his last voluntary draw |
    |         |                     | or pass this hand, the suits (4) and ranks (13) every card  |
    |         |                     | of which fitted, and the fewest cards he has held since     |
    | 353-376 | opponent_suit_draws | per next player (6 slots) and suit: the share of his cards  |
    |         |                     | held since his latest voluntary draw or pass at which every |
    |         |                     | card of that suit fitted (0: none)                          |
    | 377-400 | opponent_declared   | per next player (6 slots) and suit: at his last declared    |
    |         |                     | suit, the share of his cards held since (zeros: none)       |

    Values are raw counts (not normalized), but for the shares of the last two parts. Nothing hidden is shown: other hands
    and the stock order enter only as counts.

    ## Rewards
    At each hand's end. ``reward="win"``: the winner +1, every other player
    -1/(n-1); a blocked hand tied for fewest points gives everyone 0.
    ``reward="points"``: a zero-sum transfer whatever the scoring: each loser pays
    his hand points minus the winner's, the winner receives the sum.

    ## Starting State
    A seeded deal: the dealer is drawn from the seed, the player to his left leads.
    ``reset(options={"state": d})`` starts from any position in the
    ``State.to_dict()`` format (``docs/state-format.md``); its ``rules`` key must agree with the
    env's rules. Any other option key is refused with a ``ValueError`` (but ``options``, which
    PettingZoo's ``api_test`` passes to check that ``reset`` takes options, is ignored).

    ## State
    ``env.unwrapped.game`` is the engine :class:`c8env.State` of the position (``None`` before the
    first ``reset``): read it, copy it, ``to_dict()`` it. ``env.state()`` is PettingZoo's global
    state: the vector (float32, ``state_space``: ``Box`` of 7 x 401) of every seat's observation,
    seat 0 first, zeros for absent seats (:func:`c8env.observation.encode_global_state`).

    ## Episode End
    Termination when the hand ends (``episode="hand"``) or the match ends
    (``episode="match"``; the deal rotates left between hands). Truncation of
    all agents (reward 0, ``truncated`` True and ``terminated`` False) after ``max_steps``
    steps of one hand (default 10,000, ``c8env.episode.MAX_HAND_STEPS``, the cap of every
    tool: a policy that always draws can stall a hand for ever). The episode rules are
    :class:`c8env.episode.Episode`'s, shared with ``SingleAgentEnv``.

    ## Info
    Every agent's info has the same keys, numeric, from ``reset`` on: the last hand that
    ended in the episode, or neutral values before one did (:meth:`c8env.episode.Episode.info`):
    ``hand_winner`` (seat, -1: nobody), ``end_reason`` (code, the index of its name in
    ``c8env.engine.END_REASONS``: 0 none, 1 out, 2 blocked, 3 stop, 4 stock), ``scores``
    (int64 array, the match totals per seat) and, with ``episode="match"``, ``match_winner``
    (-1 until the match is over, and for a tie).

    ## Arguments
    ``num_players`` (2-7), ``rules`` (preset name, YAML path, dict or RuleSet),
    ``episode`` (``hand`` or ``match``), ``reward`` (``win`` or ``points``),
    ``max_steps`` (per hand, default 10,000), ``render_mode`` (``ansi`` or ``human``).

    ## Example
    >>> import c8env
    >>> env = c8env.env(num_players=3, rules="special_cards")
    >>> env.reset(seed=1)
    >>> for agent in env.agent_iter():
    ...     obs, reward, termination, truncation, info = env.last()
    ...     action = None if termination or truncation else env.action_space(agent).sample(obs["action_mask"])
    ...     env.step(action)
    >>> env.close()

    ## On accelerators
    ``c8env.jax.env(num_players, rules)`` is the same game (hand episodes, the v2 observation) as pure JAX functions
    in Pgx's API, which ``jax.jit`` and ``jax.vmap`` take: [c8env on JAX](jax.md) (the ``jax`` extra).

    ## Version History
    A version never changes what a learner sees or gets; any such change is a new version, and the old ids keep
    theirs (``c8env.versions.VERSIONS``; docs/versioning.md).

    * v2: the observation appends ``opponent_last_draws``, ``opponent_suit_draws`` and ``opponent_declared``:
      401 entries, the first 245 those of v1 (``crazy_eights_v2``, ``c8env.env``, the ``-v2`` ids).
    * v1: ``max_steps`` defaults to 10,000 (``MAX_HAND_STEPS``, the tools' cap) instead of 100,000, so a
      stalled hand is truncated in seconds; infos hold the same numeric keys at every step (also in v0).
      Observation: 245 entries.
    * v0: initial release (``max_steps`` default 100,000; observation: 245 entries). c8env 0.2: the engine state
      moved to ``env.unwrapped.game``; ``env.state()`` is unchanged.
    """

    #: The env version this class gives (its observation size and defaults): the newest.
    version: EnvVersion = LATEST
    metadata = {"render_modes": ["ansi", "human"], "name": LATEST.name, "is_parallelizable": False,
                "render_fps": 4}

    def __init__(
        self,
        num_players: int = 2,
        rules: str | dict | RuleSet = "standard",
        episode: str = "hand",
        reward: str = "win",
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        EzPickle.__init__(self, num_players, rules, episode, reward, max_steps, render_mode)
        super().__init__()
        self.num_players = check_num_players(num_players)
        self.rules = load_rules(rules)
        check_deal_fits(self.rules, self.num_players)  # refused here, not at the first reset
        self._episode = Episode(episode, reward, max_steps, self.version.max_steps)
        self.episode = episode
        self.reward_type = reward
        self.max_steps = self._episode.max_steps
        self.render_mode = check_render_mode(render_mode)
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._obs_size = self.version.obs_size
        self.observation_spaces = {a: observation_dict_space(self._obs_size) for a in self.possible_agents}
        self.action_spaces = {a: action_space() for a in self.possible_agents}
        self.state_space = spaces.Box(low=-1.0, high=1e6, shape=(self.version.global_state_size,), dtype=np.float32)
        self.game: State | None = None
        self._seeder: np.random.Generator | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        seed = check_seed(seed)
        options = check_reset_options(options)
        if "state" in options:  # checked before anything changes: a refused reset leaves the env as it was
            read_state(options["state"], self.rules, self.num_players, seed=0)
        if seed is not None or self._seeder is None:
            self._seeder = np.random.default_rng(seed)
        deal_seed = int(self._seeder.integers(2**63))
        if "state" in options:
            state = State.from_dict(options["state"], rules=self.rules, seed=deal_seed)
        else:
            state = State.new(self.num_players, self.rules, seed=deal_seed)
        self.game = state
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        rewards = self._episode.start(state)
        self.infos = {a: self._episode.info() for a in self.agents}
        if rewards is not None:
            self._hand_ended(rewards)
        self.agent_selection = self.agents[state.current_player]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        mask = action_mask(self.game, seat)
        if self.terminations[agent] or self.truncations[agent]:
            mask[:] = 0  # truncated mid-hand: nobody moves any more
        return {"observation": encode_observation(self.game, seat, self._obs_size), "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        rewards = self._episode.step(action)
        self._cumulative_rewards[agent] = 0.0
        if rewards is None:
            self.rewards = dict.fromkeys(self.agents, 0.0)
        else:
            self._hand_ended(rewards)
        if self._episode.truncated:
            self.truncations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.agents[self.game.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _hand_ended(self, rewards: list[float]) -> None:
        """A hand ended: its rewards and result for every agent; termination when the episode is over."""
        self.rewards = dict(zip(self.agents, rewards, strict=True))
        self.infos = {agent: self._episode.info() for agent in self.agents}
        if self._episode.terminated:
            self.terminations = dict.fromkeys(self.agents, True)

    def state(self) -> np.ndarray:
        """PettingZoo's global state: every seat's observation vector (:func:`encode_global_state`)."""
        if self.game is None:
            raise RuntimeError("state() before reset(): call reset() first")
        return encode_global_state(self.game, self._obs_size)

    def render(self) -> str | None:
        return render_output(self.render_mode, lambda: render_text(self.game))

    def close(self) -> None:
        pass


def released(number: int, module: str) -> tuple[type[raw_env], Callable[..., AECEnv]]:
    """``raw_env`` and ``env`` of an older version (its row of :data:`c8env.versions.VERSIONS`: its observation and
    defaults), for that version's module ``module`` (``c8env.envs.crazy_eights_vN``), where they pickle."""
    row = get_version(number)
    cls = type("raw_env", (raw_env,), {
        "__module__": module, "__qualname__": "raw_env", "version": row,
        "metadata": {**raw_env.metadata, "name": row.name},
        "__doc__": f"The env as version {row.number} gives it ({row.obs_size}-entry observation, ``max_steps`` "
                   f"{row.max_steps:,}): see :class:`c8env.envs.crazy_eights.raw_env`."})

    def make(**kwargs: Any) -> AECEnv:
        return wrap(cls(**kwargs))

    make.__module__, make.__name__, make.__qualname__ = module, "env", "env"
    make.__doc__ = f"The v{row.number} env wrapped like PettingZoo's classic envs (as :func:`c8env.env`)."
    return cls, make


__all__ = ["OBS_LAYOUT", "OBS_SIZE", "env", "raw_env", "released"]
