"""What the AEC env tests share (``test_aec_*.py``): envs started from state dicts, masks checked against
the engine's legal actions, final rewards collected. Wrapper behaviour, pickling and PettingZoo's own
test suite live in ``test_aec_pettingzoo.py``.

Positions are built as state dicts (``State.to_dict()`` format) and passed with
``env.reset(options={"state": d})``. Reminders: a card id is ``suit * 13 + rank``
(suits C, D, H, S; ranks A..K); the last element of ``stock`` is drawn next and the
last element of ``discard`` is the top card.
"""

from __future__ import annotations

import copy

import numpy as np

import c8env
from c8env import NUM_ACTIONS, parse_card, preset_names

PRESETS = preset_names()
SUITS = "CDHS"


def c(text):
    return parse_card(text)


def agent(seat):
    return f"player_{seat}"


def start(data, rules="standard", wrapped=False, seed=0, **kwargs):
    """An env (raw unless ``wrapped``) reset to the position ``data``."""
    make = c8env.env if wrapped else c8env.raw_env
    env = make(num_players=len(data["hands"]), rules=rules, **kwargs)
    env.reset(seed=seed, options={"state": copy.deepcopy(data)})
    return env


def mask_of(actions):
    out = np.zeros(NUM_ACTIONS, dtype=np.int8)
    out[list(actions)] = 1
    return out


def assert_masks(env, expected=None):
    """The acting agent's mask is the engine's legal actions (and ``expected`` when given); others' are 0."""
    state = env.unwrapped.game
    acting = env.agent_selection
    assert acting == agent(state.current_player)
    legal = state.legal_actions()
    if expected is not None:
        assert legal == sorted(expected)
    for name in env.possible_agents:
        mask = env.observe(name)["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,)
        if name == acting:
            np.testing.assert_array_equal(mask, mask_of(legal))
        else:
            assert not mask.any(), f"{name} is not on turn but has a mask {np.flatnonzero(mask)}"


def collect_final_rewards(env):
    """Step every terminated/truncated agent out with None; returns the reward ``last()`` gave each."""
    out = {}
    for name in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        assert termination or truncation
        out[name] = reward
        env.step(None)
    assert env.agents == []
    return out

