"""The planted flaws of ``c8env.tools.planted``: each plays its network's moves except in its one kind of position."""

from __future__ import annotations

import numpy as np
import pytest

from c8env.actions import DRAW
from c8env.agents import batch_mode, load
from c8env.cards import NUM_RANKS, NUM_SUITS, SUITS
from c8env.observation import OBS_LAYOUT
from c8env.tools.planted import BASE, COMPLACENT_AT, PLANTED, PlantedFlaw, WrittenExploit
from tests.agents.positions import positions

HEARTS = SUITS.index("H")
EIGHTS = [suit * NUM_RANKS + 7 for suit in range(NUM_SUITS)]  # standard rules: the eights are wild


@pytest.fixture(scope="module")
def seen() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    observations, masks = positions(4000, seed=5)
    network = load(BASE)
    return observations, masks, np.asarray(network.act_batch(observations, masks))


def _where(name: str, observations: np.ndarray, masks: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, int]:
    """Where flaw ``name`` changes the base network's move, and the move it plays there (per row)."""
    legal = masks.astype(bool)
    if name == "spends_eights":
        wild = legal[:, EIGHTS]
        return wild.any(axis=1), np.array(EIGHTS)[np.argmax(wild, axis=1)]
    drawn = observations[:, OBS_LAYOUT["draws_this_turn"]][:, 0]
    if name == "complacent":
        opponent = observations[:, OBS_LAYOUT["opponent_hand_sizes"]][:, 0]
        return (opponent >= COMPLACENT_AT) & (drawn < 2) & legal[:, DRAW], np.full(len(base), DRAW)
    hearts = observations[:, OBS_LAYOUT["suit_to_follow"]][:, HEARTS] > 0.5
    return hearts & (drawn == 0) & legal[:, DRAW], np.full(len(base), DRAW)


@pytest.mark.parametrize("name", PLANTED)
def test_a_flaw_changes_only_its_positions(name, seen):
    observations, masks, base = seen
    agent = load(f"c8env.tools.planted:{name}")
    assert isinstance(agent, PlantedFlaw) and batch_mode(agent) == "act_batch" and agent.network.name == BASE
    actions = np.asarray(agent.act_batch(observations, masks))
    flawed, move = _where(name, observations, masks, base)
    assert flawed.sum() >= 50, "the positions hold too few of the flaw's positions to test it"
    assert np.array_equal(actions[~flawed], base[~flawed])
    assert np.array_equal(actions[flawed], move[flawed])
    assert (actions != base).sum() >= 10  # it is a flaw: the network would often have played otherwise
    assert masks[np.arange(len(actions)), actions].all()  # and every move is legal
    one = {"observation": observations[0], "action_mask": masks[0]}
    assert agent.act(one) == actions[0]


def test_a_flaw_on_another_network():
    from c8env.tools.planted import hearts

    assert hearts(base="rollout6-standard-2p").network.name == "rollout6-standard-2p"


def test_the_written_exploit_of_complacent_draws_to_hold_enough_cards(seen):
    observations, masks, base = seen
    agent = load("c8env.tools.planted:exploit_complacent")
    assert isinstance(agent, WrittenExploit) and agent.network.name == BASE
    actions = np.asarray(agent.act_batch(observations, masks))
    held = observations[:, OBS_LAYOUT["hand"]].sum(axis=1)
    opponent = observations[:, OBS_LAYOUT["opponent_hand_sizes"]][:, 0]
    drawn = observations[:, OBS_LAYOUT["draws_this_turn"]][:, 0]
    builds = (held >= COMPLACENT_AT - 2) & (held <= COMPLACENT_AT) & (opponent < held + 3) & (drawn < 3)
    builds &= masks[:, DRAW].astype(bool)
    assert builds.sum() >= 50
    assert (actions[builds] == DRAW).all() and np.array_equal(actions[~builds], base[~builds])


def test_the_written_exploit_beats_complacent_by_more_than_its_network_does():
    from c8env.tools.evaluation.runner import evaluate

    def rate(agent: str) -> float:
        table = evaluate([agent, "c8env.tools.planted:complacent"], deals=40, seed=11, workers=1)
        return table.stats[0].win_rate

    assert rate("c8env.tools.planted:exploit_complacent") >= rate(BASE) + 0.1
