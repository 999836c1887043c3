"""Agents with planted, known flaws: the power check of ``c8env exploit`` (docs/exploitability.md).

Each is a trained network (:data:`BASE`, or ``base=``) that plays as usual except in one kind of position, where
it makes a fixed mistake that costs it hands (its own network beats it). Each has a written response that
exploits it (:class:`WrittenExploit`), so what a best response can gain on it is known; ``c8env exploit`` should
find a good part of that. They load as agent specs (``c8env.agents.load("c8env.tools.planted:clubs")``) and play
in batch.

- ``clubs``: while the last suit an opponent declared this hand is clubs, it draws a card before it plays. Its
  exploit, ``exploit_clubs``, declares clubs whenever it declares: one decision, which pays for the rest of the hand;
- ``complacent``: while an opponent holds :data:`COMPLACENT_AT` cards or more, it draws two cards before it plays.
  Its exploit, ``exploit_complacent``, draws to hold that many cards, and then draws one a turn while
  ``complacent`` draws two: a plan of several draws, each of which costs a card before it pays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from c8env.actions import DECLARE_ACTIONS, DRAW
from c8env.cards import SUITS
from c8env.observation import OBS_LAYOUT
from c8env.rules import RuleSet, load_rules

#: The network each flawed agent plays when it is not making its mistake.
BASE = "iter6-standard-2p"
#: ``complacent`` draws while an opponent holds this many cards or more.
COMPLACENT_AT = 9
_CLUBS = SUITS.index("C")


class PlantedFlaw:
    """``network``'s moves (a :class:`~c8env.agents.policy.PolicyAgent`), except where ``flaw(observations, masks,
    actions)`` replaces them (batched). ``c8env exploit`` starts its exploiter from ``network``."""

    def __init__(self, name: str, network: Any, flaw: Rule) -> None:
        self.name = name
        self.network = network
        self.flaw = flaw

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations = np.asarray(observations, dtype=np.float32)
        masks = np.asarray(masks).astype(bool)
        actions = np.asarray(self.network.act_batch(observations, masks.astype(np.int8)), dtype=np.int64)
        return self.flaw(observations, masks, actions)

    def act(self, observation: Any) -> int:
        vector = np.asarray(observation["observation"], dtype=np.float32)[None]
        mask = np.asarray(observation["action_mask"])[None]
        return int(self.act_batch(vector, mask)[0])


#: A flaw or an exploit's rule: (observations, masks, the network's actions) -> the actions played (batched).
Rule = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _drawn(observations: np.ndarray) -> np.ndarray:
    return observations[:, OBS_LAYOUT["draws_this_turn"]][:, 0]


def _clubs(observations: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
    declared = observations[:, OBS_LAYOUT["opponent_declared"]].reshape(len(observations), -1, len(SUITS))
    clubs = (declared[:, :, _CLUBS] > 0).any(axis=1)
    return np.where(clubs & (_drawn(observations) == 0) & masks[:, DRAW], DRAW, actions)


def _exploit_clubs(observations: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
    declares = np.isin(actions, DECLARE_ACTIONS)
    return np.where(declares, DECLARE_ACTIONS[_CLUBS], actions)


def _complacent(observations: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
    opponents = observations[:, OBS_LAYOUT["opponent_hand_sizes"]].max(axis=1)
    return np.where((opponents >= COMPLACENT_AT) & (_drawn(observations) < 2) & masks[:, DRAW], DRAW, actions)


def _exploit_complacent(observations: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
    held = observations[:, OBS_LAYOUT["hand"]].sum(axis=1)
    opponent = observations[:, OBS_LAYOUT["opponent_hand_sizes"]][:, 0]
    build = (held >= COMPLACENT_AT - 2) & (held <= COMPLACENT_AT) & (opponent < held + 3) & (_drawn(observations) < 3)
    return np.where(build & masks[:, DRAW], DRAW, actions)


class WrittenExploit(PlantedFlaw):
    """A written response to a planted flaw: ``network``'s moves, except where ``flaw`` (here the exploit's rule)
    replaces them."""


def _planted(kind: type[PlantedFlaw], name: str, rule: Rule, ruleset: RuleSet, num_players: int,
             base: str) -> PlantedFlaw:
    """A ``kind`` named ``name``: ``base``'s network for ``ruleset`` and ``num_players``, with ``rule``."""
    from c8env.agents import load

    return kind(name, load(base, ruleset, num_players), rule)


def clubs(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None,
          base: str = BASE) -> PlantedFlaw:
    """``base``, drawing a card before it plays while the last suit an opponent declared this hand is clubs."""
    return _planted(PlantedFlaw, "clubs", _clubs, load_rules(rules), num_players, base)


def exploit_clubs(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None,
                  base: str = BASE) -> WrittenExploit:
    """``base``, declaring clubs whenever it declares a suit: against ``clubs`` that opponent then draws a card a
    turn until another suit is declared. The written exploit of ``clubs``."""
    return _planted(WrittenExploit, "exploit_clubs", _exploit_clubs, load_rules(rules), num_players, base)


def complacent(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None,
               base: str = BASE) -> PlantedFlaw:
    """``base``, drawing two cards before it plays while an opponent holds :data:`COMPLACENT_AT` cards or more."""
    return _planted(PlantedFlaw, "complacent", _complacent, load_rules(rules), num_players, base)


def exploit_complacent(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None,
                       base: str = BASE) -> WrittenExploit:
    """``base``, drawing (at most three cards a turn) to hold :data:`COMPLACENT_AT` or one more cards after it
    plays, from :data:`COMPLACENT_AT` - 2 held, while its next opponent holds fewer than it plus three: against
    ``complacent`` that opponent then draws two a turn, and this agent one. The written exploit of ``complacent``
    (2 players)."""
    return _planted(WrittenExploit, "exploit_complacent", _exploit_complacent, load_rules(rules), num_players,
                    base)


#: The planted flaws, by name (``c8env.tools.planted:NAME``).
PLANTED = ("clubs", "complacent")

__all__ = ["BASE", "COMPLACENT_AT", "PLANTED", "PlantedFlaw", "WrittenExploit", "clubs", "complacent",
           "exploit_clubs", "exploit_complacent"]
