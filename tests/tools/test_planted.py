"""The planted flaws of ``c8env.tools.planted``: each plays its network's moves except in its one kind of position."""

from __future__ import annotations

import numpy as np
import pytest

from c8env.actions import DECLARE_ACTIONS, DRAW
from c8env.agents import batch_mode, load
from c8env.cards import SUITS
from c8env.observation import OBS_LAYOUT
from c8env.tools.planted import BASE, COMPLACENT_AT, PLANTED, PlantedFlaw, WrittenExploit
from tests.agents.positions import positions

CLUBS = SUITS.index("C")


@pytest.fixture(scope="module")
def seen() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    observations, masks = positions(4000, seed=5)
    network = load(BASE)
    return observations, masks, np.asarray(network.act_batch(observations, masks))


def _where(name: str, observations: np.ndarray, masks: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, int]:
    """Where flaw ``name`` changes the base network's move, and the move it plays there (per row)."""
    legal = masks.astype(bool)
    drawn = observations[:, OBS_LAYOUT["draws_this_turn"]][:, 0]
    if name == "complacent":
        opponent = observations[:, OBS_LAYOUT["opponent_hand_sizes"]][:, 0]
        return (opponent >= COMPLACENT_AT) & (drawn < 2) & legal[:, DRAW], np.full(len(base), DRAW)
    clubs = observations[:, OBS_LAYOUT["opponent_declared"]][:, CLUBS] > 0  # 2 players: one opponent, slot 0
    return clubs & (drawn == 0) & legal[:, DRAW], np.full(len(base), DRAW)


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
    from c8env.tools.planted import clubs

    assert clubs(base="rollout6-standard-2p").network.name == "rollout6-standard-2p"


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


def test_the_written_exploit_of_clubs_declares_clubs(seen):
    observations, masks, base = seen
    agent = load("c8env.tools.planted:exploit_clubs")
    assert isinstance(agent, WrittenExploit) and agent.network.name == BASE
    actions = np.asarray(agent.act_batch(observations, masks))
    declares = np.isin(base, DECLARE_ACTIONS)
    assert declares.sum() >= 20 and (base[declares] != DECLARE_ACTIONS[CLUBS]).sum() >= 10
    assert (actions[declares] == DECLARE_ACTIONS[CLUBS]).all() and np.array_equal(actions[~declares], base[~declares])


@pytest.mark.parametrize("name", PLANTED)
def test_the_written_exploit_beats_its_flaw_by_more_than_their_network_does(name):
    from c8env.tools.evaluation.runner import evaluate

    def rate(agent: str) -> float:
        table = evaluate([agent, f"c8env.tools.planted:{name}"], deals=40, seed=11, workers=1)
        return table.stats[0].win_rate

    assert rate(f"c8env.tools.planted:exploit_{name}") >= rate(BASE) + 0.1


@pytest.mark.slow  # (a training run of 12 rollouts of the 512x512 network: about 3 minutes on 2 cores)
def test_the_exploiter_learns_to_declare_clubs_against_clubs(tmp_path):
    """The power check's direction at a small budget: against ``clubs`` the exploiter is a trained checkpoint (not
    its start), and it declares clubs in more of the positions where it declares a suit than its start does."""
    from c8env.tools.exploit import exploit

    results = exploit("c8env.tools.planted:clubs", steps=196_608, evaluations=1, curve_deals=300, final_deals=20,
                      out=tmp_path, progress=False)
    assert results["exploiter_step"] > 0 and results["curve"][-1]["win_rate"] > results["curve"][0]["win_rate"]
    observations, masks = positions(20_000, seed=5)
    declaring = masks[:, list(DECLARE_ACTIONS)].any(axis=1)
    observations, masks = observations[declaring], masks[declaring]
    assert len(observations) >= 500

    def clubs_share(agent: str) -> float:
        return float(np.mean(np.asarray(load(agent).act_batch(observations, masks)) == DECLARE_ACTIONS[CLUBS]))

    assert clubs_share(str(tmp_path / "c8env.tools.planted_clubs-exploiter.npz")) >= clubs_share(BASE) + 0.05
