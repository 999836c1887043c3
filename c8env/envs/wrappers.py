"""The classic-env wrappers of ``c8env.env()``: PettingZoo's own, or subclasses that read attributes directly.

PettingZoo's wrappers forward every attribute through ``__getattr__``, one level per
wrapper; in the standard random loop that costs more than the game itself. The fast
subclasses here read the AEC attributes and the spaces straight from the unwrapped env and
otherwise behave as PettingZoo's (``OrderEnforcingWrapper`` still refuses reads before
``reset``). They rely on the wrappers' internals, hence the upper bound on
``pettingzoo`` in ``pyproject.toml``; ``wrap(env, fast=False)`` uses PettingZoo's
wrappers unchanged, and the tests run PettingZoo's ``api_test`` on both.
"""

from __future__ import annotations

import operator
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from c8env.actions import NUM_ACTIONS

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
    """A subclass of a PettingZoo wrapper that reads the AEC attributes straight from the unwrapped env."""

    def __init__(self: Any, inner: AECEnv, *args: Any, **kwargs: Any) -> None:
        base.__init__(self, inner, *args, **kwargs)
        self._base_env = inner.unwrapped

    def action_space(self: Any, agent: Any) -> Any:
        """The unwrapped env's ``action_space(agent)``, read directly (no wrapper changes it)."""
        return self._base_env.action_space(agent)

    def observation_space(self: Any, agent: Any) -> Any:
        """The unwrapped env's ``observation_space(agent)``, read directly (no wrapper changes it)."""
        return self._base_env.observation_space(agent)

    attrs: dict[str, Any] = {"__init__": __init__, "__doc__": base.__doc__, "action_space": action_space,
                             "observation_space": observation_space}
    for name in _AEC_ATTRIBUTES:
        attrs[name] = _direct(name, order_enforcing and name in _GUARDED_BEFORE_RESET)
    if order_enforcing:
        def step(self: Any, action: Any) -> None:
            """Refuse what is no action id at all (a bool, float, None for a live agent, 60, -1, text, an
            array of several values) with a ``TypeError``/``ValueError`` naming it and the legal actions,
            before the inner wrappers see it; integer-like actions (numpy ints, 0-d arrays) pass on as ints.
            A legal-range move that is illegal now still gets TerminateIllegalWrapper's penalty."""
            if type(action) is not int or not 0 <= action < NUM_ACTIONS:  # the common case costs one check
                env = self._base_env
                if self._has_reset and env.agents:
                    agent = env.agent_selection
                    if not (env.terminations[agent] or env.truncations[agent]):
                        action = env.game.check_action(action)
            base.step(self, action)

        attrs["step"] = step
    return type(base.__name__, (base,), attrs)


TerminateIllegalWrapper = _fast_wrapper(wrappers.TerminateIllegalWrapper)
AssertOutOfBoundsWrapper = _fast_wrapper(wrappers.AssertOutOfBoundsWrapper)
OrderEnforcingWrapper = _fast_wrapper(wrappers.OrderEnforcingWrapper, order_enforcing=True)


def wrap(env: AECEnv, fast: bool = True) -> AECEnv:
    """``env`` under the classic envs' wrappers: TerminateIllegalWrapper (an illegal move scores -1
    and ends the game), AssertOutOfBoundsWrapper, OrderEnforcingWrapper; the fast subclasses, or
    PettingZoo's own with ``fast=False``."""
    kinds = (TerminateIllegalWrapper, AssertOutOfBoundsWrapper, OrderEnforcingWrapper) if fast else (
        wrappers.TerminateIllegalWrapper, wrappers.AssertOutOfBoundsWrapper, wrappers.OrderEnforcingWrapper)
    terminate, bounds, order = kinds
    return order(bounds(terminate(env, illegal_reward=-1)))


__all__ = ["AssertOutOfBoundsWrapper", "OrderEnforcingWrapper", "TerminateIllegalWrapper", "wrap"]
