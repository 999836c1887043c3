"""The PettingZoo env's action masks (every phase, and random games of every preset) and illegal actions,
through its public API (the env's docstring).

Positions are built as state dicts (``State.to_dict()`` format) and passed with
``env.reset(options={"state": d})``. Reminders: a card id is ``suit * 13 + rank``
(suits C, D, H, S; ranks A..K); the last element of ``stock`` is drawn next and the
last element of ``discard`` is the top card.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import c8env
from c8env import ANNOUNCE, DECLARE_BASE, DRAW, PASS, STOP, IllegalActionError
from tests.envs.aec_helpers import PRESETS, agent, assert_masks, c, collect_final_rewards, start

DECLARES = [DECLARE_BASE + i for i in range(4)]


# ----- action masks ------------------------------------------------------------------------------------
def test_mask_in_play_phase():
    env = start({"hands": [["5D", "9C", "8S", "KH"], ["2H", "3H"], ["4S"]], "discard": ["5C"],
                 "stock": ["QD"], "current_player": 0})
    assert_masks(env, [c("5D"), c("9C"), c("8S"), DRAW])
    # draw_when_able: false -- a player who can play may not draw
    env = start({"hands": [["5D", "KH"], ["2H", "3H"]], "discard": ["5C"], "stock": ["QD"]},
                rules={"preset": "standard", "draw_when_able": False})
    assert_masks(env, [c("5D")])
    # draw limit reached (draw_one): play or pass
    env = start({"hands": [["5D", "KH"], ["2H", "3H"]], "discard": ["5C"], "stock": ["QD"], "draws_this_turn": 1},
                rules="draw_one")
    assert_masks(env, [c("5D"), PASS])


def test_mask_in_declare_phase():
    env = start({"hands": [["8S", "KD", "3C"], ["2H", "3H"], ["4S"]], "discard": ["9C"], "stock": ["QD"]})
    env.step(c("8S"))
    assert env.agent_selection == "player_0"
    assert_masks(env, DECLARES)
    env.step(DECLARE_BASE + 2)
    assert env.agent_selection == "player_1"
    assert_masks(env, [c("2H"), c("3H"), DRAW])


def test_mask_for_the_dealer_declaring_a_wild_starter():
    env = c8env.raw_env(num_players=3, rules="dealer_declares")
    for seed in range(500):
        env.reset(seed=seed)
        state = env.unwrapped.game
        if state.to_dict()["phase"] == "declare":
            break
    else:
        pytest.fail("no wild starter in 500 deals")
    assert env.agent_selection == agent(state.dealer)
    assert state.to_dict()["discard"][-1][0] == "8"
    assert_masks(env, DECLARES)


def test_mask_in_announce_phase():
    env = start({"hands": [["5C", "KD"], ["2H", "3H"], ["4S"]], "discard": ["9C"], "stock": ["QD", "JD"]},
                rules="last_card")
    env.step(c("5C"))
    assert env.agent_selection == "player_0"
    assert_masks(env, [PASS, ANNOUNCE])
    env.step(PASS)  # no announcement: draws 2
    assert env.unwrapped.game.to_dict()["hands"][0] == ["JD", "QD", "KD"]
    assert env.agent_selection == "player_1"


def test_mask_with_stop():
    env = start({"hands": [["AC", "2D"], ["KH", "3H"], ["4S"]], "discard": ["9H"], "stock": ["QD"]},
                rules="stop_the_round")
    assert_masks(env, [DRAW, STOP])
    env.step(DRAW)  # after a draw it is no longer the start of the turn
    assert_masks(env, [PASS])  # drew QD: no match, nothing left to draw, and no stop after a draw
    # too many points: no stop
    env = start({"hands": [["KC", "2D"], ["KH", "3H"]], "discard": ["9H"], "stock": ["QD"]}, rules="stop_the_round")
    assert_masks(env, [DRAW])


def test_mask_under_a_pending_draw():
    env = start({"hands": [["4S"], ["2D", "2H", "5C", "8S", "QC"], ["3H"]], "discard": ["9C", "2C"],
                 "stock": ["QD", "JD"], "pending_draw": 2, "current_player": 1}, rules="special_cards")
    assert_masks(env, [c("2D"), c("2H"), DRAW])  # only a matching draw card defends; no wild card
    env = start({"hands": [["4S"], ["2S", "QH", "2D", "8H"]], "discard": ["9S", "QS"], "stock": ["QD", "JD"],
                 "pending_draw": 5, "current_player": 1}, rules="uno_like")
    assert_masks(env, [c("2S"), DRAW])


def _step_checked(env, rng, stats, full_check, play_bias):
    """One step of the acting agent with its mask checked against the engine and illegal actions tried.

    The policy is uniformly random among the masked actions, or (with probability ``play_bias``)
    among the masked plays and declarations, which makes hands short and varied.
    """
    name = env.agent_selection
    state = env.unwrapped.game
    obs, _, termination, truncation, _ = env.last()
    if termination or truncation:
        assert not obs["action_mask"].any()
        env.step(None)
        return
    mask = obs["action_mask"]
    legal = state.legal_actions()
    assert np.flatnonzero(mask).tolist() == legal
    if full_check:
        for other in env.agents:
            if other != name:
                assert not env.observe(other)["action_mask"].any()
        for action in legal:  # every masked action is accepted (on a copy)
            state.copy().apply(action)
        illegal = np.flatnonzero(mask == 0)
        bad = int(illegal[int(rng.integers(len(illegal)))])
        before = state.to_dict()
        with pytest.raises(IllegalActionError):
            env.step(bad)
        assert state.to_dict() == before and env.agent_selection == name
        np.testing.assert_array_equal(env.observe(name)["observation"], obs["observation"])
        stats["illegal"] += 1
    elif rng.random() < 0.1:
        illegal = np.flatnonzero(mask == 0)
        with pytest.raises(IllegalActionError):
            env.step(int(illegal[int(rng.integers(len(illegal)))]))
        stats["illegal"] += 1
    choices = legal
    if play_bias and rng.random() < play_bias:
        choices = [a for a in legal if a < DRAW] or legal
    env.step(choices[int(rng.integers(len(choices)))])
    stats["steps"] += 1
    stats["actions"].update(legal)


@pytest.mark.slow
@pytest.mark.parametrize("n", range(2, 8))
def test_random_games_masks_are_the_legal_actions(n):
    """Hundreds of random games per player count (thousands in all) over every preset, hands and
    matches: every step's mask is the engine's legal actions (all zeros for the others), the chosen
    masked action is accepted, unmasked ones raise IllegalActionError and change nothing."""
    rng = np.random.default_rng(2024 + n)
    stats = {"games": 0, "steps": 0, "illegal": 0, "actions": set()}
    started = time.perf_counter()
    for preset in PRESETS:
        envs = {episode: c8env.raw_env(num_players=n, rules=preset, episode=episode) for episode in ("hand", "match")}
        for game in range(30):
            uniform = game < 3  # a few games of uniformly random play (about a thousand steps each)
            env = envs["match" if game % 6 == 5 else "hand"]
            env.reset(seed=int(rng.integers(2**31)))
            for _ in env.agent_iter():
                _step_checked(env, rng, stats, full_check=rng.random() < 0.02, play_bias=0 if uniform else 0.8)
            stats["games"] += 1
    assert stats["games"] == 30 * len(PRESETS)
    # every kind of action came up
    assert set(range(DECLARE_BASE, DECLARE_BASE + 4)) | {DRAW, PASS, ANNOUNCE, STOP} <= stats["actions"]
    print(n, {k: v for k, v in stats.items() if k != "actions"}, f"{time.perf_counter() - started:.1f}s")



# ----- illegal actions -----------------------------------------------------------------------------------
ILLEGAL_POSITION = {"hands": [["5C", "KD"], ["2H", "3H"], ["4S"]], "discard": ["9C"], "stock": ["4D", "JD"]}


def test_raw_env_illegal_action_raises_and_changes_nothing():
    env = start(ILLEGAL_POSITION)
    assert env.unwrapped.game.legal_actions() == [c("5C"), DRAW]
    before = env.unwrapped.game.to_dict()
    observations = {a: env.observe(a) for a in env.agents}
    snapshot = repr((env.agent_selection, env.rewards, env._cumulative_rewards, env.terminations,
                     env.truncations, env.infos))  # infos hold arrays: compared as text
    for bad in (c("KD"), c("2H"), DECLARE_BASE, PASS, ANNOUNCE, STOP, np.int64(c("KD"))):
        with pytest.raises(IllegalActionError) as err:
            env.step(bad)
        assert isinstance(err.value, ValueError)
        message = str(err.value)
        assert str(int(bad)) in message
        assert "5C" in message and "draw" in message and str(DRAW) in message  # the legal ones
        assert env.unwrapped.game.to_dict() == before
        assert repr((env.agent_selection, env.rewards, env._cumulative_rewards, env.terminations,
                     env.truncations, env.infos)) == snapshot
        for a in env.agents:
            np.testing.assert_array_equal(env.observe(a)["observation"], observations[a]["observation"])
            np.testing.assert_array_equal(env.observe(a)["action_mask"], observations[a]["action_mask"])
    assert "KD" in str(pytest.raises(IllegalActionError, env.step, c("KD")).value)
    for bad in (60, -1, None, 4.0, "4", True):  # out of range, or not an int action id at all
        with pytest.raises(IllegalActionError) as err:
            env.step(bad)
        message = str(err.value)
        assert repr(bad) in message or str(bad) in message
        assert "5C" in message and str(DRAW) in message, message  # the legal ones
        assert env.unwrapped.game.to_dict() == before
    env.step(c("5C"))  # the legal move still works
    assert env.agent_selection == "player_1"


@pytest.mark.parametrize("n", [2, 3, 5])
def test_wrapped_env_ends_the_game_on_an_illegal_action(n):
    hands = [["5C", "KD"]] + [[f"{r}H", f"{r}S"] for r in "34567"[: n - 1]]
    env = start({"hands": hands, "discard": ["9C"], "stock": ["4D"]}, wrapped=True)
    env.step(c("KD"))
    assert all(env.terminations.values())
    assert env.rewards == {agent(i): (-1.0 if i == 0 else 0.0) for i in range(n)}
    assert collect_final_rewards(env) == {agent(i): (-1.0 if i == 0 else 0.0) for i in range(n)}
    # mid-game, a seeded game: the offender gets -1, whoever it is
    env = c8env.env(num_players=n)
    env.reset(seed=4)
    for _ in range(7):
        obs = env.observe(env.agent_selection)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    final = collect_final_rewards(env)
    assert final == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
