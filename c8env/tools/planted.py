"""Agents with planted, known flaws: the power check of ``c8env exploit`` (docs/exploitability.md).

Each is a trained network (:data:`BASE`, or ``base=``) that plays as usual except in one kind of position, where
it makes a fixed mistake that costs it hands (its own network beats it). A best response should gain on them more
than on the network itself; docs/exploitability.md has what ``c8env exploit`` finds.
They load as agent specs (``c8env.agents.load("c8env.tools.planted:hearts")``) and play in batch.

- ``spends_eights``: it plays a wild card whenever one is legal, never keeping one for later;
- ``hearts``: with hearts to follow and no card drawn yet this turn, it draws a card first;
- ``complacent``: while an opponent holds :data:`COMPLACENT_AT` cards or more, it draws two cards before it plays.

``complacent`` has a written response that exploits it, ``exploit_complacent`` (:class:`WrittenExploit`): an
opponent who draws to hold that many cards makes it draw two a turn while it draws one. The other two have none
known: their network beats them already, and steering play toward their positions costs more than it takes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from c8env.actions import DRAW
from c8env.cards import NUM_RANKS, NUM_SUITS, RANKS, SUITS
from c8env.observation import OBS_LAYOUT
from c8env.rules import RuleSet, load_rules

#: The network each flawed agent plays when it is not making its mistake.
BASE = "iter6-standard-2p"
#: ``complacent`` draws while an opponent holds this many cards or more.
COMPLACENT_AT = 9
_HEARTS = SUITS.index("H")


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


def _spends_eights(ruleset: RuleSet) -> Rule:
    wilds = np.array([suit * NUM_RANKS + RANKS.index(ruleset.wild_rank) for suit in range(NUM_SUITS)])

    def flaw(observations: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
        legal = masks[:, wilds]
        return np.where(legal.any(axis=1), wilds[np.argmax(legal, axis=1)], actions)

    return flaw


def _drawn(observations: np.ndarray) -> np.ndarray:
    return observations[:, OBS_LAYOUT["draws_this_turn"]][:, 0]


def _hearts(observations: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
    follow = observations[:, OBS_LAYOUT["suit_to_follow"]][:, _HEARTS] > 0.5
    return np.where(follow & (_drawn(observations) == 0) & masks[:, DRAW], DRAW, actions)


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


def spends_eights(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None,
                  base: str = BASE) -> PlantedFlaw:
    """``base``, playing a wild card whenever one is legal."""
    ruleset = load_rules(rules)
    return _planted(PlantedFlaw, "spends_eights", _spends_eights(ruleset), ruleset, num_players, base)


def hearts(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None,
           base: str = BASE) -> PlantedFlaw:
    """``base``, drawing a card first whenever hearts is the suit to follow."""
    return _planted(PlantedFlaw, "hearts", _hearts, load_rules(rules), num_players, base)


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
PLANTED = ("spends_eights", "hearts", "complacent")

__all__ = ["BASE", "COMPLACENT_AT", "PLANTED", "PlantedFlaw", "WrittenExploit", "complacent", "exploit_complacent",
           "hearts", "spends_eights"]
