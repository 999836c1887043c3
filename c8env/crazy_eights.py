"""PettingZoo AEC environment for Crazy Eights: ``crazy_eights_v0``.

The env is thin: it maps seats to agents, encodes observations and masks, hands
out rewards and renders. The rules live in :mod:`c8env.engine`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from c8env.cards import NUM_CARDS, NUM_RANKS, RANKS, SUITS, card_text
from c8env.engine import (
    ANY_SUIT,
    MAX_PLAYERS,
    NUM_ACTIONS,
    PHASE_NAMES,
    State,
    action_text,
    check_num_players,
)
from c8env.rules import RuleSet, load_rules

_MAX_OPPONENTS = MAX_PLAYERS - 1


def _build_layout() -> dict[str, slice]:
    sizes = [
        ("hand", NUM_CARDS),
        ("top_card", NUM_CARDS),
        ("suit_to_follow", 4),
        ("rank_to_follow", NUM_RANKS),
        ("any_card", 1),
        ("discard_pile", NUM_CARDS),
        ("opponent_hand_sizes", _MAX_OPPONENTS),
        ("stock_size", 1),
        ("pending_draw", 1),
        ("direction", 1),
        ("phase", len(PHASE_NAMES)),
        ("draws_this_turn", 1),
        ("num_players", MAX_PLAYERS - 1),
        ("scores", MAX_PLAYERS),
        ("wild_rank", NUM_RANKS),
        ("opponent_voids", _MAX_OPPONENTS * 4),
        ("countdown", MAX_PLAYERS),
    ]
    layout, start = {}, 0
    for name, size in sizes:
        layout[name] = slice(start, start + size)
        start += size
    return layout


#: Name -> slice of the observation vector (see :class:`raw_env` for the table).
OBS_LAYOUT: dict[str, slice] = _build_layout()
OBS_SIZE: int = max(s.stop for s in OBS_LAYOUT.values())

_HAND, _TOP, _SUIT, _RANK, _ANY, _DISCARD, _SIZES, _STOCK, _PENDING, _DIRECTION, _PHASE, _DRAWS, _PLAYERS, \
    _SCORES, _WILD, _VOIDS, _COUNTDOWN = (s.start for s in OBS_LAYOUT.values())
_SUIT_BITS = tuple(np.array([(v >> s) & 1 for s in range(4)], dtype=np.float32) for v in range(16))


def _bit_array(mask: int) -> np.ndarray:
    """A 52-bit set as a 0/1 uint8 array."""
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), dtype=np.uint8), count=NUM_CARDS,
                         bitorder="little")


def encode_observation(state: State, seat: int) -> np.ndarray:
    """The float32 observation vector of ``seat`` (seat-relative, hidden cards never shown)."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    n = state.num_players
    hand = _bit_array(state.bits[seat])
    if state.dups[seat]:
        hand = hand + _bit_array(state.dups[seat])
    obs[_HAND:_HAND + NUM_CARDS] = hand
    obs[_TOP + state.discard[-1]] = 1.0
    if state.suit == ANY_SUIT:
        obs[_ANY] = 1.0
    else:
        obs[_SUIT + state.suit] = 1.0
    if state.rank >= 0:
        obs[_RANK + state.rank] = 1.0
    obs[_DISCARD:_DISCARD + NUM_CARDS] = np.bincount(state.discard, minlength=NUM_CARDS)
    others = [(seat + k) % n for k in range(1, n)]
    sizes = state.sizes
    obs[_SIZES:_SIZES + n - 1] = [sizes[s] for s in others]
    obs[_STOCK] = len(state.stock)
    obs[_PENDING] = state.pending
    obs[_DIRECTION] = state.direction
    obs[_PHASE + state.phase] = 1.0
    obs[_DRAWS] = state.draws
    obs[_PLAYERS + n - 2] = 1.0
    if any(state.scores):
        obs[_SCORES:_SCORES + n] = [state.scores[s] for s in [seat, *others]]
    wild = state.wild_mask(seat)
    if wild:
        obs[_WILD + (wild & -wild).bit_length() - 1] = 1.0
    voids = state.voids
    for k, other in enumerate(others):
        if voids[other]:
            obs[_VOIDS + 4 * k:_VOIDS + 4 * k + 4] = _SUIT_BITS[voids[other]]
    if state.rules.countdown:
        obs[_COUNTDOWN:_COUNTDOWN + n] = [state.countdown[s] for s in [seat, *others]]
    return obs


class ActionSpace(spaces.Discrete):
    """``Discrete(60)`` whose masked ``sample`` is a fast uniform choice among the legal actions.

    Same contract as ``Discrete.sample(mask)`` (an int8 mask of 0s and 1s; ``start`` when
    nothing is legal), drawing from the space's own seeded ``np_random``.
    """

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None or probability is not None or not isinstance(mask, np.ndarray) or mask.dtype != np.int8 \
                or mask.shape != (self.n,):
            return super().sample(mask, probability)  # the standard checks and errors
        legal = np.flatnonzero(mask)
        if legal.size == 0 or mask.sum() != legal.size:  # nothing legal, or values other than 0/1
            return super().sample(mask)
        return self.start + legal[int(self.np_random.random() * legal.size)]

    def contains(self, x: Any) -> bool:
        if type(x) is int or isinstance(x, np.integer):
            return bool(self.start <= x < self.start + self.n)
        return super().contains(x)


_AEC_ATTRIBUTES = (
    "agent_selection", "agents", "possible_agents", "rewards", "terminations", "truncations", "infos",
    "_cumulative_rewards", "num_agents", "max_num_agents",
)
_GUARDED_BEFORE_RESET = {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}


def _direct(name: str, guarded: bool) -> property:
    read_through = operator.attrgetter(f"_base_env.{name}")
    if not guarded:
        return property(read_through, doc=f"``{name}`` of the unwrapped env, read directly.")

    def read(self: Any) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return read_through(self)

    return property(read, doc=f"``{name}`` of the unwrapped env, read directly.")


def _fast_wrapper(base: type, order_enforcing: bool = False) -> type:
    """A subclass of a PettingZoo wrapper that reads the AEC attributes straight from the unwrapped env.

    PettingZoo's wrappers forward every attribute through ``__getattr__``, one level
    per wrapper; in the standard random loop that costs more than the game itself.
    Behaviour is the wrapper's own (``OrderEnforcingWrapper`` still refuses reads
    before ``reset``).
    """

    def __init__(self: Any, inner: AECEnv, *args: Any, **kwargs: Any) -> None:
        base.__init__(self, inner, *args, **kwargs)
        self._base_env = inner.unwrapped

    attrs: dict[str, Any] = {"__init__": __init__, "__doc__": base.__doc__}
    for name in _AEC_ATTRIBUTES:
        attrs[name] = _direct(name, order_enforcing and name in _GUARDED_BEFORE_RESET)
    return type(base.__name__, (base,), attrs)


TerminateIllegalWrapper = _fast_wrapper(wrappers.TerminateIllegalWrapper)
AssertOutOfBoundsWrapper = _fast_wrapper(wrappers.AssertOutOfBoundsWrapper)
OrderEnforcingWrapper = _fast_wrapper(wrappers.OrderEnforcingWrapper, order_enforcing=True)


DEFAULT_MAX_STEPS = 100_000


def hand_rewards(state: State, reward: str) -> list[float]:
    """Every seat's reward for a finished hand. ``"win"``: +1 to the winner, -1/(n-1) to the
    others, all 0 when nobody won; ``"points"``: the zero-sum points transfers."""
    if reward == "points":
        return [float(x) for x in state.hand_transfers()]
    n = state.num_players
    if state.winner is None:
        return [0.0] * n
    out = [-1.0 / (n - 1)] * n
    out[state.winner] = 1.0
    return out


def check_episode_args(episode: str, reward: str, max_steps: int | None, render_mode: str | None) -> int:
    """Validate the episode arguments shared by the envs; returns ``max_steps`` with its default applied."""
    if episode not in ("hand", "match"):
        raise ValueError(f"episode={episode!r} is invalid; allowed: 'hand' or 'match'")
    if reward not in ("win", "points"):
        raise ValueError(f"reward={reward!r} is invalid; allowed: 'win' or 'points'")
    if max_steps is None:
        max_steps = DEFAULT_MAX_STEPS
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
        raise ValueError(f"max_steps={max_steps!r} is invalid; allowed: None or an int >= 1")
    if render_mode is not None and render_mode not in ("ansi", "human"):
        raise ValueError(f"render_mode={render_mode!r} is invalid; allowed: None, 'ansi' or 'human'")
    return max_steps


def env(**kwargs: Any) -> AECEnv:
    """The Crazy Eights AEC env wrapped like PettingZoo's classic envs (arguments as :class:`raw_env`):
    TerminateIllegalWrapper (illegal move: -1 and the game ends), AssertOutOfBoundsWrapper,
    OrderEnforcingWrapper (subclasses of PettingZoo's that read attributes directly)."""
    wrapped = raw_env(**kwargs)
    wrapped = TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = AssertOutOfBoundsWrapper(wrapped)
    wrapped = OrderEnforcingWrapper(wrapped)
    return wrapped


class raw_env(AECEnv, EzPickle):
    """Crazy Eights for 2-7 players, every variant of RULES.md, as a PettingZoo AEC env.

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
    A dict: ``observation`` (float32 vector of length 245, the same for 2-7 players and
    every variant, seat-relative: the observer first, then the next players clockwise)
    and ``action_mask`` (int8, 60; all zeros for agents not on turn). Index table
    (``c8env.OBS_LAYOUT`` maps each name to its slice):

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

    Values are raw counts (not normalized). Nothing hidden is shown: other hands
    and the stock order enter only as counts.

    ## Rewards
    At each hand's end. ``reward="win"``: the winner +1, every other player
    -1/(n-1); a blocked hand tied for fewest points gives everyone 0.
    ``reward="points"``: a zero-sum transfer whatever the scoring: each loser pays
    his hand points minus the winner's, the winner receives the sum.

    ## Starting State
    A seeded deal: the dealer is drawn from the seed, the player to his left leads.
    ``reset(options={"state": d})`` starts from any position in the
    ``State.to_dict()`` format.

    ## Episode End
    Termination when the hand ends (``episode="hand"``) or the match ends
    (``episode="match"``; the deal rotates left between hands). Truncation of
    all agents (reward 0) after ``max_steps`` steps of one hand.

    ## Arguments
    ``num_players`` (2-7), ``rules`` (preset name, YAML path, dict or RuleSet),
    ``episode`` (``hand`` or ``match``), ``reward`` (``win`` or ``points``),
    ``max_steps`` (per hand, default 100,000), ``render_mode`` (``ansi`` or ``human``).

    ## Example
    >>> import c8env
    >>> env = c8env.env(num_players=3, rules="special_cards")
    >>> env.reset(seed=1)
    >>> for agent in env.agent_iter():
    ...     obs, reward, termination, truncation, info = env.last()
    ...     action = None if termination or truncation else env.action_space(agent).sample(obs["action_mask"])
    ...     env.step(action)
    >>> env.close()

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "crazy_eights_v0", "is_parallelizable": False}

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
        max_steps = check_episode_args(episode, reward, max_steps, render_mode)
        self.episode = episode
        self.reward_type = reward
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(low=-1.0, high=1e6, shape=(OBS_SIZE,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            })
            for a in self.possible_agents
        }
        self.action_spaces = {a: ActionSpace(NUM_ACTIONS) for a in self.possible_agents}
        self.state: State | None = None
        self._seeder: np.random.Generator | None = None
        self._hand_steps = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None or self._seeder is None:
            self._seeder = np.random.default_rng(seed)
        deal_seed = int(self._seeder.integers(2**63))
        # Other option keys are ignored: PettingZoo's api_test resets with options it made up.
        options = options or {}
        if "state" in options:
            self.state = State.from_dict(options["state"], rules=self.rules, seed=deal_seed)
            if self.state.num_players != self.num_players:
                raise ValueError(
                    f"options['state'] has {self.state.num_players} players but the env has {self.num_players}"
                )
        else:
            self.state = State.new(self.num_players, self.rules, seed=deal_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._hand_steps = 0
        if self.state.hand_over:
            self._finish_hand()
        else:
            self.agent_selection = self.agents[self.state.current_player]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        state = self.state
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if not state.hand_over and seat == state.current_player and not (
            self.terminations[agent] or self.truncations[agent]
        ):
            mask[state.legal_actions()] = 1
        return {"observation": encode_observation(state, seat), "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.state
        state.apply(action)
        self._hand_steps += 1
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards[agent] = 0.0
        if state.hand_over:
            self._finish_hand()
        elif self._hand_steps >= self.max_steps:
            self.truncations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.agents[state.current_player]
        else:
            self.agent_selection = self.agents[state.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish_hand(self) -> None:
        """Hand out the hand's rewards, then end the episode or deal the next hand of the match."""
        state = self.state
        for agent, value in zip(self.agents, hand_rewards(state, self.reward_type), strict=True):
            self.rewards[agent] = value
        result = {"hand_winner": state.winner, "end_reason": state.end_reason, "scores": list(state.scores)}
        for agent in self.agents:
            self.infos[agent] = dict(result)
        if self.episode == "match" and not state.match_over:
            state.next_hand()
            self._hand_steps = 0
        else:
            self.terminations = dict.fromkeys(self.agents, True)
            if self.episode == "match":
                for agent in self.agents:
                    self.infos[agent]["match_winner"] = state.match_winner
        self.agent_selection = self.agents[state.current_player]

    def render(self) -> str | None:
        return render_output(self.render_mode, lambda: render_text(self.state))

    def close(self) -> None:
        pass


def render_output(render_mode: str | None, text: Callable[[], str]) -> str | None:
    """What ``render()`` does with a render mode: warn without one, print for ``human``, return for ``ansi``."""
    if render_mode is None:
        from gymnasium import logger

        logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
        return None
    shown = text()
    if render_mode == "human":
        print(shown)
        return None
    return shown


def follow_text(state: State) -> str:
    """What the next card must match, e.g. ``H or rank 9``, ``D`` (after a wild) or ``any card``."""
    if state.suit == ANY_SUIT:
        return "any card"
    return SUITS[state.suit] + (f" or rank {RANKS[state.rank]}" if state.rank >= 0 else "")


def render_text(state: State) -> str:
    """A readable table of a state: the hand of the player to act, top card, suit, counts, scores."""
    n = state.num_players
    follow = follow_text(state)
    lines = [
        f"Crazy Eights | {n} players | phase {PHASE_NAMES[state.phase]} | hand {state.hands_played + 1}",
        f"top card {card_text(state.top_card)} | follow {follow} | stock {len(state.stock)} | "
        f"discard {len(state.discard)} | direction {'clockwise' if state.direction == 1 else 'counter-clockwise'}"
        + (f" | pending draw {state.pending}" if state.pending else ""),
        f"{'seat':<10} {'cards':>5} {'score':>6}  hand",
    ]
    for seat in range(n):
        to_act = seat == state.current_player and not state.hand_over
        shown = " ".join(card_text(c) for c in state.hand(seat)) if to_act or state.hand_over else ""
        marker = "*" if to_act else " "
        lines.append(f"{marker}player_{seat:<3} {state.sizes[seat]:>5} {state.scores[seat]:>6}  {shown}")
    if state.hand_over:
        who = f"player_{state.winner}" if state.winner is not None else "nobody (tie)"
        lines.append(f"hand over ({state.end_reason}): winner {who}")
    else:
        legal = ", ".join(action_text(a) for a in state.legal_actions())
        lines.append(f"legal: {legal}")
    return "\n".join(lines)
