"""A batched engine: B games of Crazy Eights held as arrays and stepped together.

:class:`VectorGames` keeps the state of ``num_envs`` games in struct-of-arrays form
(:class:`c8env.vector.kernels.Games`) and steps all of them with one call, compiled
with numba when it is installed (``pip install c8env[fast]``; without it the same
code runs as plain Python, identical and slow). Every game is the scalar engine's
game: slot ``b``'s ``k``-th episode is ``State.new(num_players, rules,
seed=derive_seed(seed, b, k))``, and the same actions give the same moves, masks,
observations and rewards (tested move by move against :class:`c8env.State` for every
preset and 2-7 players).

>>> from c8env.vector import VectorGames
>>> games = VectorGames(num_envs=4, num_players=2)
>>> games.reset(seed=0)
>>> games.observation.shape, games.action_mask.shape
((4, 401), (4, 60))
>>> rewards, terminated, truncated = games.step(games.random_actions())

Per game, after :meth:`reset` and each :meth:`step`: ``current_player[B]``,
``observation[B, 401]`` (the ``OBS_LAYOUT`` vector seen by the player to move; not
written with ``observations=False``), ``action_mask[B, 60]``. :meth:`step` returns ``rewards[B, num_players]`` (non-zero at
a hand's end, as ``c8env.episode.hand_rewards``), ``terminated[B]`` and
``truncated[B]``. Episodes are hands or matches (``episode``), truncated after
``max_steps`` moves of one hand, like the envs' :class:`c8env.episode.Episode`.

Autoreset (``autoreset=True``, the default) is Gymnasium's *same-step* mode: a game
whose episode ends in a step is replaced within that step by its slot's next game,
so the step returns the finished episode's rewards and flags together with the new
game's first observation (``final_observation[b]`` holds the finished game's last
view, that of its player to act, for the games that ended in the step). With ``autoreset=False`` a finished game stays as it is
until :meth:`reset`, and stepping it is an error.

``threads=N`` shares each :meth:`VectorGames.step` among N threads (ranges of games stepped by the
compiled kernels without the GIL); every game has its own generators, so the games are the same for
any N.

Beyond one action per game: :meth:`VectorGames.reset_deals` deals given seeds into given
slots and ``step(actions, active)`` moves only some games. The batched agents live with the
other agents (:mod:`c8env.agents.batched`: ``greedy_actions(games)``, seeded ``RandomAgents``
and ``autoplay``, which plays built-in agents' moves many at a time; ``docs/vector.md``).

This package is the engine alone: :mod:`c8env.vector.games` (:class:`VectorGames`),
:mod:`c8env.vector.kernels` (the rules over arrays), :mod:`c8env.vector.rng` (NumPy's
generators re-implemented for the kernels) and :mod:`c8env.vector.jit` (optional numba).
"""

from __future__ import annotations

from c8env.vector.games import VectorGames, derive_seeds, rule_table
from c8env.vector.jit import COMPILED

__all__ = ["COMPILED", "VectorGames", "derive_seeds", "rule_table"]
