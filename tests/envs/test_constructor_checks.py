"""Arguments are refused where they are given: a deal that cannot fit fails in every env's constructor, not at the
first reset (issue 26)."""

from __future__ import annotations

import gymnasium
import pytest

import c8env
from c8env.envs.learner_games import LearnerGames
from c8env.envs.single_agent import SingleAgentEnv
from c8env.vector import VectorGames

TOO_BIG = {"preset": "standard", "hand_size": 30}
MESSAGE = r"the deal needs 211 cards \(hands plus the starter\) but decks=2 holds 104 for 7 players"


@pytest.mark.parametrize("make", [
    lambda: c8env.env(num_players=7, rules=TOO_BIG),
    lambda: c8env.raw_env(num_players=7, rules=TOO_BIG),
    lambda: SingleAgentEnv(num_players=7, rules=TOO_BIG),
    lambda: VectorGames(4, 7, TOO_BIG),
    lambda: LearnerGames(4, 7, TOO_BIG),
    lambda: gymnasium.make_vec("c8env/LearnerVector-v2", num_envs=2, num_players=7, rules=TOO_BIG),
    lambda: gymnasium.make_vec("c8env/SelfPlayVector-v2", num_envs=2, num_players=7, rules=TOO_BIG),
], ids=["env", "raw_env", "SingleAgentEnv", "VectorGames", "LearnerGames", "LearnerVector", "SelfPlayVector"])
def test_a_deal_that_cannot_fit_is_refused_by_the_constructor(make):
    with pytest.raises(ValueError, match=MESSAGE):
        make()


def test_a_deal_that_fits_still_builds_and_deals():
    env = c8env.env(num_players=7, rules={"preset": "standard", "hand_size": 14})  # 99 of 104 cards
    env.reset(seed=0)
    assert len(env.unwrapped.game.hand(0)) == 14
    countdown = c8env.env(num_players=7, rules="countdown")  # 8 cards each at first
    countdown.reset(seed=0)
