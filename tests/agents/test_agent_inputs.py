"""Agents refuse what is no observation, and a trained policy played outside its training says so."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("spec", ["random", "greedy", "expert:simulations=2", "ppo-standard-2p"])
def test_agents_refuse_what_is_no_observation(spec: str) -> None:
    from c8env import agents

    agent = agents.load(spec, seed=0)
    for bad, error in ((np.zeros(353), TypeError), (None, TypeError), ({"observation": np.zeros(353)}, ValueError),
                       ({"observation": np.zeros(10), "action_mask": np.ones(60)}, ValueError),
                       ({"observation": np.zeros(353), "action_mask": np.full(60, 2)}, ValueError)):
        with pytest.raises(error, match=r"\.act: .*|\.act: observation"):
            agent.act(bad)


def test_policy_played_outside_its_training_says_so() -> None:
    import warnings

    from c8env import agents

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agents.load("ppo-standard-2p", rules="standard", num_players=2)  # as trained: no word
    with pytest.warns(agents.PolicyMismatchWarning, match=r"trained for 2 players \(played with 4\)"):
        agents.load("ppo-standard-2p", rules="standard", num_players=4)
    with pytest.warns(agents.PolicyMismatchWarning, match=r"other rules \(fields that differ: wild_rank"):
        agents.load("ppo-standard-2p", rules="crazy_aces", num_players=2)
