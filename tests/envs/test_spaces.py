"""The env's action space: its masked ``sample`` is a uniform draw among the legal actions from the space's own
seeded ``np_random``, with ``Discrete.sample``'s contract (``start`` when nothing is legal, masks of 0s and 1s)."""

from __future__ import annotations

import numpy as np
import pytest

from c8env.actions import NUM_ACTIONS
from c8env.envs.spaces import action_space


def test_a_masked_sample_is_the_legal_action_its_random_number_picks() -> None:
    space, twin = action_space(), action_space()
    space.seed(7)
    twin.seed(7)
    masks = np.random.default_rng(1).random((500, NUM_ACTIONS)) < np.linspace(0.02, 0.6, 500)[:, None]
    seen: set[int] = set()
    for row in masks.astype(np.int8):
        legal = np.flatnonzero(row)
        if not legal.size:
            continue
        drawn = space.sample(row)
        assert type(drawn) is int and drawn == legal[int(twin.np_random.random() * legal.size)]
        seen.add(drawn)
    assert seen == set(range(NUM_ACTIONS))


def test_nothing_legal_gives_start_and_other_values_are_refused_as_discrete_does() -> None:
    space = action_space()
    space.seed(0)
    assert space.sample(np.zeros(NUM_ACTIONS, dtype=np.int8)) == 0
    for values in ({3: 2}, {3: -1}, {3: 3, 9: -1}):  # the last sums to its count of nonzero entries
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        for index, value in values.items():
            mask[index] = value
        with pytest.raises(AssertionError, match="should be 0 or 1"):
            space.sample(mask)
