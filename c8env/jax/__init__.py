"""c8env on JAX: Crazy Eights as pure functions that jit and vmap, with Pgx's functional API.

>>> import jax
>>> import c8env.jax
>>> env = c8env.jax.env(num_players=2, rules="standard")
>>> init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
>>> state = init(jax.random.split(jax.random.PRNGKey(0), 8))
>>> state.observation.shape, state.legal_action_mask.shape
((8, 401), (8, 60))

``env.init(key)`` deals a hand, ``env.step(state, action, key)`` plays one move and ``env.observe(state,
player_id)`` is a seat's observation vector (:data:`c8env.observation.OBS_SIZE` entries, the newest version), as
``pgx.core.Env`` has them; :class:`State` carries Pgx's fields (``current_player``, ``observation``,
``legal_action_mask``, ``rewards`` one per seat, ``terminated``, ``truncated``, ``_step_count``), so a Pgx loop
runs with only the env line changed. An episode is one hand (``episode="match"`` is refused: see
``docs/jax.md``); ``rewards`` are the hand's (``reward="win"`` or ``"points"``) at the step that ends it, and a hand
cut off after ``max_steps`` moves is ``truncated``. Like Pgx, a step from a finished state changes nothing and
gives zero rewards, and an illegal action ends the episode: the actor gets -1, every other seat +1/(n-1), the
position is left as it was.

The rules are :mod:`c8env.jax._game`, a twin of the batched engine's kernels checked move by move against them;
:mod:`c8env.jax.agents` plays random, greedy and c8env policy files inside jit. Needs the ``jax`` extra
(``pip install c8env[jax]``); nothing else in c8env imports this package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp

from c8env.actions import NUM_ACTIONS
from c8env.engine import check_deal_fits, check_num_players
from c8env.episode import check_episode_args
from c8env.jax import _convert, _game
from c8env.jax._game import ENV_ID, State, Table
from c8env.observation import OBS_SIZE
from c8env.rules import RuleSet, load_rules

#: The observation version the env gives (that of ``crazy_eights_v2``: :data:`c8env.observation.OBS_SIZE` entries).
VERSION = "v2"
_ILLEGAL_PENALTY = -1.0


def init_fn(table: Table, num_players: int, key: jax.Array) -> State:
    """A dealt hand with its mask and observation (the rules as an argument: :meth:`Env.init` fixes them)."""
    s = _game.deal(table, num_players, key)
    return s.replace(legal_action_mask=_game.legal_mask(table, s), observation=_game.observe(table, s,
                                                                                             s.current_player))


def step_fn(table: Table, state: State, action: jax.Array, key: jax.Array) -> State:
    """One move of the player to act, reshuffles drawn from ``key`` (:meth:`Env.step` with the rules an
    argument, so that one compiled step serves every rule set of a player count)."""
    n = state.num_players
    action = jnp.asarray(action, jnp.int32)
    in_range = (action >= 0) & (action < NUM_ACTIONS)
    legal = in_range & state.legal_action_mask[jnp.clip(action, 0, NUM_ACTIONS - 1)]
    moved = _game.apply(table, state.replace(_step_count=_game.step_count(state) + 1),
                        jnp.clip(action, 0, NUM_ACTIONS - 1), key)
    over = moved.phase == _game.OVER
    moved = moved.replace(rewards=jnp.where(over, _game.hand_rewards(table, moved), 0.0), terminated=over,
                          truncated=~over & (_game.step_count(moved) >= table.max_steps))
    seats = jnp.arange(n) == state.current_player
    penalised = state.replace(rewards=jnp.where(seats, _ILLEGAL_PENALTY, -_ILLEGAL_PENALTY / (n - 1)).astype(
        jnp.float32), terminated=jnp.asarray(True))
    after = _game.select(legal, moved, penalised)
    after = _game.select(state.terminated | state.truncated, state.replace(rewards=jnp.zeros_like(state.rewards)),
                         after)
    mask = jnp.where(after.terminated, True, _game.legal_mask(table, after))
    return after.replace(legal_action_mask=mask, observation=_game.observe(table, after, after.current_player))


class Env:
    """Crazy Eights with Pgx's functional API (``pgx.core.Env``): made by :func:`env`."""

    def __init__(self, num_players: int, rules: RuleSet, reward: str, max_steps: int) -> None:
        self.rules = rules
        self.reward = reward
        self.max_steps = max_steps
        self._num_players = num_players
        #: The rules as arrays (an argument of :func:`init_fn` and :func:`step_fn`).
        self.table = _game.make_table(rules, num_players, reward, max_steps)

    def init(self, key: jax.Array) -> State:
        """A new hand dealt from ``key`` (the first dealer drawn from it too)."""
        return init_fn(self.table, self._num_players, key)

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """Play ``action`` for the player to act; reshuffles draw from ``key`` (None: from the state's own key,
        which moves on)."""
        if key is None:
            key, following = jax.random.split(state.key)
            state = state.replace(key=following)
        return step_fn(self.table, state, action, key)

    def observe(self, state: State, player_id: jax.Array | None = None) -> jax.Array:
        """``player_id``'s observation vector (default: the player to act's, ``state.observation``)."""
        seat = state.current_player if player_id is None else player_id
        return jax.lax.stop_gradient(_game.observe(self.table, state, seat))

    @property
    def id(self) -> str:
        """The env's id."""
        return ENV_ID

    @property
    def version(self) -> str:
        """The observation version (``v2``: 401 entries)."""
        return VERSION

    @property
    def num_players(self) -> int:
        """Seats at the table."""
        return self._num_players

    @property
    def num_actions(self) -> int:
        """Size of the action space (60)."""
        return NUM_ACTIONS

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """Shape of one observation: ``(401,)``."""
        return (OBS_SIZE,)

    def from_dict(self, data: Mapping[str, Any], key: jax.Array, step_count: int = 0) -> State:
        """A state from ``State.to_dict()`` data (checked by :meth:`c8env.State.from_dict`); ``key`` seeds its
        reshuffles when ``step`` is given none, ``step_count`` is the moves of the hand already made."""
        return _convert.with_view(self.table, _convert.position(data, self.rules, key, step_count))

    def to_dict(self, state: State) -> dict[str, Any]:
        """One game (not a batch) as ``State.to_dict()`` data (``c8env.State.from_dict`` reads it)."""
        return _convert.to_dict(state, self.rules)


def env(num_players: int = 2, rules: str | dict | RuleSet = "standard", episode: str = "hand", reward: str = "win",
        max_steps: int | None = None) -> Env:
    """The JAX env of a player count (2-7) and rule set (any preset, YAML path, dict or RuleSet).

    ``episode`` must be ``"hand"`` (one hand per episode); ``reward`` ``"win"`` or ``"points"``; ``max_steps``
    (default :data:`c8env.episode.DEFAULT_MAX_STEPS`) the moves after which a hand is truncated.
    """
    n = check_num_players(num_players)
    ruleset = load_rules(rules)
    check_deal_fits(ruleset, n)
    max_steps = check_episode_args(episode, reward, max_steps)
    if episode != "hand":
        raise ValueError(f"episode={episode!r} is not supported by c8env.jax; allowed: 'hand' (an episode is one "
                         "hand; see docs/jax.md)")
    return Env(n, ruleset, reward, max_steps)


def auto_reset(step: Callable[[State, jax.Array, jax.Array], State],
               init: Callable[[jax.Array], State]) -> Callable[[State, jax.Array, jax.Array], State]:
    """``step`` with ``pgx.experimental.auto_reset``'s rule: where a step ends the episode, the state returned is a
    new hand (dealt from the key) carrying that step's ``rewards``, ``terminated`` and ``truncated``; the next step
    clears them and plays on in the new hand."""

    def wrapped(state: State, action: jax.Array, key: jax.Array) -> State:
        step_key, init_key = jax.random.split(key)
        ended = state.terminated | state.truncated
        state = _game.select(ended, state.replace(terminated=jnp.asarray(False), truncated=jnp.asarray(False),
                                                  rewards=jnp.zeros_like(state.rewards)), state)
        after = step(state, action, step_key)
        fresh = init(init_key).replace(rewards=after.rewards, terminated=after.terminated,
                                       truncated=after.truncated)
        return _game.select(after.terminated | after.truncated, fresh, after)

    return wrapped


__all__ = ["VERSION", "Env", "State", "Table", "auto_reset", "env", "init_fn", "step_fn"]
