"""The PettingZoo env through its public API: observations, masks, rewards, episodes,
illegal actions and rendering (the env's docstring).

Positions are built as state dicts (``State.to_dict()`` format) and passed with
``env.reset(options={"state": d})``. Reminders: a card id is ``suit * 13 + rank``
(suits C, D, H, S; ranks A..K); the last element of ``stock`` is drawn next and the
last element of ``discard`` is the top card. Wrapper behaviour, pickling and
PettingZoo's own test suite live in ``test_env_pettingzoo.py``.
"""

from __future__ import annotations

import copy
import re
import time

import numpy as np
import pytest

import c8env
from c8env import (
    ANNOUNCE,
    DECLARE_BASE,
    DRAW,
    NUM_ACTIONS,
    OBS_LAYOUT,
    PASS,
    STOP,
    IllegalActionError,
    State,
    parse_card,
    preset_names,
)

DECLARES = [DECLARE_BASE + i for i in range(4)]
PRESETS = preset_names()
RANKS = "A23456789TJQK"
SUITS = "CDHS"


# ----- helpers ---------------------------------------------------------------------------------------
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


def part(env_or_obs, name, seat=None):
    """One named part of an observation vector (of ``seat``'s observation when given an env)."""
    if seat is not None:
        env_or_obs = env_or_obs.observe(agent(seat))
    vector = env_or_obs["observation"] if isinstance(env_or_obs, dict) else env_or_obs
    return vector[OBS_LAYOUT[name]]


def counts(*cards):
    out = np.zeros(52, dtype=np.float32)
    for text in cards:
        out[c(text)] += 1
    return out


def one_hot(size, index):
    out = np.zeros(size, dtype=np.float32)
    if index is not None:
        out[index] = 1
    return out


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


# ----- observation: shape and layout -----------------------------------------------------------------
def test_layout_tiles_the_vector_and_has_the_contract_names():
    slices = sorted(OBS_LAYOUT.values(), key=lambda s: s.start)
    position = 0
    for s in slices:
        assert s.step is None and s.start == position and s.stop > s.start
        position = s.stop
    assert position == c8env.OBS_SIZE
    sizes = {name: s.stop - s.start for name, s in OBS_LAYOUT.items()}
    required = {
        "hand": 52, "top_card": 52, "suit_to_follow": 4, "discard_pile": 52, "opponent_hand_sizes": 6,
        "stock_size": 1, "pending_draw": 1, "direction": 1, "phase": None, "draws_this_turn": 1,
        "num_players": None, "scores": None, "wild_rank": None, "opponent_voids": None,
    }
    for name, size in required.items():
        assert name in sizes, name
        if size is not None:
            assert sizes[name] == size, name
    assert sizes["opponent_voids"] == 6 * 4
    assert sizes["scores"] >= 7 and sizes["wild_rank"] == 13


def test_docstring_index_table_matches_the_layout():
    doc = c8env.raw_env.__doc__
    rows = re.findall(r"^\s*\|\s*(\d+)(?:-(\d+))?\s*\|\s*(\w+)\s*\|", doc, flags=re.MULTILINE)
    table = {name: (int(lo), int(hi or lo)) for lo, hi, name in rows if name in OBS_LAYOUT}
    assert table == {name: (s.start, s.stop - 1) for name, s in OBS_LAYOUT.items()}
    lengths = re.findall(r"vector of length (\d+)", doc)
    assert lengths and all(int(x) == c8env.OBS_SIZE for x in lengths), lengths


def test_observation_has_the_same_length_for_every_player_count_and_preset():
    lengths = set()
    for preset in PRESETS:
        for n in range(2, 8):
            env = c8env.env(num_players=n, rules=preset)
            env.reset(seed=n)
            for name in env.agents:
                obs = env.observe(name)
                assert obs["observation"].dtype == np.float32 and obs["observation"].ndim == 1
                assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].shape == (NUM_ACTIONS,)
                lengths.add(obs["observation"].shape[0])
                assert env.observation_space(name)["observation"].shape == obs["observation"].shape
                assert env.observation_space(name).contains(obs)
    assert lengths == {c8env.OBS_SIZE}
    assert len(PRESETS) == 14


# ----- observation: each part on fixed deals -------------------------------------------------------------
def test_hand_counts_two_decks_and_discard_pile_counts():
    data = {
        "hands": [["8H", "8H", "AC", "KS"], ["5D"], ["6D"], ["7D"], ["9D"], ["TD", "TD"]],
        "stock": ["2C", "3C"],
        "discard": ["5C", "5C", "9S", "9C"],
        "current_player": 0,
    }
    env = start(data)
    assert env.unwrapped.game.rules.num_decks(6) == 2
    for seat, hand in enumerate(data["hands"]):
        np.testing.assert_array_equal(part(env, "hand", seat), counts(*hand))
        np.testing.assert_array_equal(part(env, "discard_pile", seat), counts("5C", "5C", "9S", "9C"))
        np.testing.assert_array_equal(part(env, "top_card", seat), one_hot(52, c("9C")))
    # play one copy of the duplicated eight: one copy is left
    env.step(c("8H"))
    np.testing.assert_array_equal(part(env, "hand", 0), counts("8H", "AC", "KS"))
    np.testing.assert_array_equal(part(env, "top_card", 0), one_hot(52, c("8H")))
    np.testing.assert_array_equal(part(env, "discard_pile", 3), counts("5C", "5C", "9S", "9C", "8H"))


def test_top_card_suit_and_rank_to_follow():
    # default: the top card's suit and rank
    env = start({"hands": [["AC", "KS"], ["2D", "3D"]], "discard": ["5D"], "stock": ["4C"]})
    for seat in (0, 1):
        np.testing.assert_array_equal(part(env, "top_card", seat), one_hot(52, c("5D")))
        np.testing.assert_array_equal(part(env, "suit_to_follow", seat), one_hot(4, SUITS.index("D")))
        np.testing.assert_array_equal(part(env, "rank_to_follow", seat), one_hot(13, RANKS.index("5")))
        assert part(env, "any_card", seat)[0] == 0
    # a declared suit: the suit only, no rank
    env = start({"hands": [["AC", "KS"], ["2D", "3D"]], "discard": ["5D", "8H"], "stock": ["4C"],
                 "suit_to_follow": "S", "rank_to_follow": None})
    np.testing.assert_array_equal(part(env, "top_card", 0), one_hot(52, c("8H")))
    np.testing.assert_array_equal(part(env, "suit_to_follow", 0), one_hot(4, SUITS.index("S")))
    assert not part(env, "rank_to_follow", 0).any()
    # declared through play: 8S then declare H
    env = start({"hands": [["8S", "KD", "3C"], ["2D", "3D"]], "discard": ["9C"], "stock": ["4C"]})
    env.step(c("8S"))
    np.testing.assert_array_equal(part(env, "phase", 0), one_hot(4, 1))  # declare
    env.step(DECLARE_BASE + SUITS.index("H"))
    for seat in (0, 1):
        np.testing.assert_array_equal(part(env, "suit_to_follow", seat), one_hot(4, SUITS.index("H")))
        assert not part(env, "rank_to_follow", seat).any()
        np.testing.assert_array_equal(part(env, "top_card", seat), one_hot(52, c("8S")))


def test_any_card_after_an_any_next_card():
    rules = "action_cards"  # A: any_next
    data = {"hands": [["AC", "KS", "4H"], ["2D", "3D", "JS"]], "discard": ["9C"], "stock": ["4C", "5S"],
            "current_player": 0}
    env = start(data, rules=rules)
    assert part(env, "any_card", 1)[0] == 0
    env.step(c("AC"))
    for seat in (0, 1):
        assert part(env, "any_card", seat)[0] == 1
        assert not part(env, "suit_to_follow", seat).any()
        np.testing.assert_array_equal(part(env, "top_card", seat), one_hot(52, c("AC")))
    assert_masks(env, [c("2D"), c("3D"), c("JS"), DRAW])  # any card goes
    # the same position as a state dict
    env = start({"hands": [["KS", "4H"], ["2D", "3D", "JS"]], "discard": ["9C", "AC"], "stock": ["4C", "5S"],
                 "current_player": 1, "suit_to_follow": "*"}, rules=rules)
    assert part(env, "any_card", 0)[0] == 1 and not part(env, "suit_to_follow", 0).any()
    assert_masks(env, [c("2D"), c("3D"), c("JS"), DRAW])


def test_opponent_hand_sizes_are_seat_relative():
    data = {
        "hands": [["AC"], ["2C", "3C"], ["4C", "5C", "6C"], ["7C", "9C", "TC", "JC"]],
        "discard": ["KD"], "stock": ["QC"], "current_player": 2,
    }
    env = start(data)
    sizes = [1, 2, 3, 4]
    for seat in range(4):
        expected = [sizes[(seat + k) % 4] for k in range(1, 4)] + [0, 0, 0]
        np.testing.assert_array_equal(part(env, "opponent_hand_sizes", seat), expected)
    # 7 players fill every slot
    hands7 = [[t] for t in ("AC", "2C", "3C", "4C", "5C", "6C", "7C")]
    hands7[3] = ["4C", "4D", "4H"]
    env = start({"hands": hands7, "discard": ["KD"], "stock": ["QC"], "current_player": 0})
    sizes = [len(h) for h in hands7]
    for seat in range(7):
        expected = [sizes[(seat + k) % 7] for k in range(1, 7)]
        np.testing.assert_array_equal(part(env, "opponent_hand_sizes", seat), expected)


def test_stock_pending_direction_draws_num_players():
    data = {
        "hands": [["2D", "9S", "KH"], ["3C", "4C"], ["5H"]],
        "discard": ["5C", "2C"], "stock": ["AS", "AH", "AD", "6C", "7S"],
        "current_player": 0, "pending_draw": 2, "direction": -1,
    }
    env = start(data, rules="special_cards")
    for seat in range(3):
        assert part(env, "stock_size", seat)[0] == 5
        assert part(env, "pending_draw", seat)[0] == 2
        assert part(env, "direction", seat)[0] == -1
        assert part(env, "draws_this_turn", seat)[0] == 0
        np.testing.assert_array_equal(part(env, "num_players", seat), one_hot(6, 3 - 2))
        np.testing.assert_array_equal(part(env, "phase", seat), one_hot(4, 0))
    env.step(DRAW)  # take the penalty: 2 cards, turn passes counter-clockwise to seat 2
    assert env.agent_selection == "player_2"
    for seat in range(3):
        assert part(env, "stock_size", seat)[0] == 3
        assert part(env, "pending_draw", seat)[0] == 0
    np.testing.assert_array_equal(part(env, "hand", 0), counts("2D", "9S", "KH", "7S", "6C"))
    # a voluntary draw counts in draws_this_turn
    data = {"hands": [["KH"], ["3C", "4C"]], "discard": ["5C"], "stock": ["AS", "AH", "AD"],
            "draws_this_turn": 2, "direction": 1}
    env = start(data)
    assert part(env, "direction", 0)[0] == 1
    assert part(env, "draws_this_turn", 0)[0] == 2 and part(env, "draws_this_turn", 1)[0] == 2
    env.step(DRAW)
    assert part(env, "draws_this_turn", 0)[0] == 3 and part(env, "stock_size", 1)[0] == 2
    for n in range(2, 8):
        env = c8env.raw_env(num_players=n)
        env.reset(seed=n)
        for seat in range(n):
            np.testing.assert_array_equal(part(env, "num_players", seat), one_hot(6, n - 2))


def test_phase_one_hot_for_every_phase():
    # play, declare, announce
    env = start({"hands": [["5C", "8S"], ["KD", "2H"]], "discard": ["9C"], "stock": ["4D"]}, rules="last_card")
    np.testing.assert_array_equal(part(env, "phase", 1), one_hot(4, 0))
    env.step(c("8S"))
    np.testing.assert_array_equal(part(env, "phase", 1), one_hot(4, 1))
    env.step(DECLARE_BASE)  # clubs; one card left: announce
    np.testing.assert_array_equal(part(env, "phase", 1), one_hot(4, 2))
    env.step(ANNOUNCE)
    np.testing.assert_array_equal(part(env, "phase", 0), one_hot(4, 0))
    # over
    env = start({"hands": [["5C"], ["KD", "2H"]], "discard": ["9C"], "stock": ["4D"]})
    env.step(c("5C"))
    for seat in (0, 1):
        np.testing.assert_array_equal(part(env, "phase", seat), one_hot(4, 3))
        assert not env.observe(agent(seat))["action_mask"].any()


def test_scores_are_seat_relative():
    data = {"hands": [["AC"], ["2C"], ["3C"], ["4C"]], "discard": ["KD"], "stock": ["QC"],
            "scores": [10, 20, 30, 40], "hands_played": 1}
    env = start(data)
    for seat in range(4):
        expected = [[10, 20, 30, 40][(seat + k) % 4] for k in range(4)] + [0, 0, 0]
        np.testing.assert_array_equal(part(env, "scores", seat), expected)


def test_wild_rank_and_countdown_slots():
    data = {"hands": [["AC", "KS"], ["2D", "3D"], ["4H"]], "discard": ["5D"], "stock": ["4C"]}
    env = start(data)
    for seat in range(3):
        np.testing.assert_array_equal(part(env, "wild_rank", seat), one_hot(13, RANKS.index("8")))
        assert not part(env, "countdown", seat).any()
    env = start(data, rules="crazy_aces")
    for seat in range(3):
        np.testing.assert_array_equal(part(env, "wild_rank", seat), one_hot(13, RANKS.index("A")))
    # countdown: each player's own wild rank (count k = rank index k-1) and the counts, observer first
    data = dict(data, countdown=[8, 5, 1])
    env = start(data, rules="countdown")
    wild = {0: "8", 1: "5", 2: "A"}
    for seat in range(3):
        np.testing.assert_array_equal(part(env, "wild_rank", seat), one_hot(13, RANKS.index(wild[seat])))
        expected = [[8, 5, 1][(seat + k) % 3] for k in range(3)] + [0] * 4
        np.testing.assert_array_equal(part(env, "countdown", seat), expected)
    # a count of 0 has no wild rank (it ends the match: a finished hand)
    env = start(dict(data, countdown=[8, 0, 1], phase="over", hands_played=3), rules="countdown")
    assert not part(env, "wild_rank", 1).any()


def test_opponent_voids_after_draws_and_passes():
    d_bit = one_hot(4, SUITS.index("D"))
    data = {
        "hands": [["KS", "2H"], ["3S", "4S"], ["5H", "6S"]],
        "discard": ["5D"], "stock": ["7D", "AS"], "current_player": 0,
    }
    env = start(data)
    for seat in range(3):
        assert not part(env, "opponent_voids", seat).any()
    env.step(DRAW)  # seat 0 draws AS with diamonds to follow
    # seat 0 is slot 0 for seat 2 (its next player clockwise) and slot 1 for seat 1
    np.testing.assert_array_equal(part(env, "opponent_voids", 2).reshape(6, 4)[0], d_bit)
    np.testing.assert_array_equal(part(env, "opponent_voids", 1).reshape(6, 4)[1], d_bit)
    assert part(env, "opponent_voids", 2).sum() == 1 and part(env, "opponent_voids", 1).sum() == 1
    assert not part(env, "opponent_voids", 0).any()  # the observer's own voids are no opponent's
    env.step(DRAW)  # 7D
    assert_masks(env, [c("7D")])  # stock empty, nothing to reshuffle: no draw
    env.step(c("7D"))  # a play clears seat 0's voids
    for seat in range(3):
        assert not part(env, "opponent_voids", seat).any()

    # voids given in the dict, then a pass with diamonds to follow
    data = {
        "hands": [["KS", "2D"], ["3S", "4S"], ["5H", "6S"]],
        "discard": ["5D"], "stock": [], "current_player": 1,
        "voids": [["C", "H"], [], []],
    }
    env = start(data)
    ch = one_hot(4, SUITS.index("C")) + one_hot(4, SUITS.index("H"))
    np.testing.assert_array_equal(part(env, "opponent_voids", 1).reshape(6, 4)[1], ch)
    np.testing.assert_array_equal(part(env, "opponent_voids", 2).reshape(6, 4)[0], ch)
    assert env.unwrapped.game.legal_actions() == [PASS]  # empty stock, nothing to reshuffle
    env.step(PASS)
    np.testing.assert_array_equal(part(env, "opponent_voids", 0).reshape(6, 4)[0], d_bit)
    np.testing.assert_array_equal(part(env, "opponent_voids", 2).reshape(6, 4)[1], d_bit)
    # a penalty draw is no void: special_cards, seat 0 takes a draw-2 with clubs to follow
    data = {"hands": [["KS", "9H"], ["3S", "4S"]], "discard": ["5C", "2C"], "stock": ["6D", "7D", "AS"],
            "pending_draw": 2, "current_player": 0}
    env = start(data, rules="special_cards")
    env.step(DRAW)
    assert not part(env, "opponent_voids", 1).any()


# ----- observation: nothing hidden leaks -------------------------------------------------------------------
def random_positions(preset, n, rng, count):
    """``count`` positions (state dicts, hand in play) reached by random play from seeded deals."""
    out = []
    while len(out) < count:
        state = State.new(n, preset, seed=int(rng.integers(2**31)))
        for _ in range(int(rng.integers(0, 120))):
            if state.hand_over:
                break
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
        if not state.hand_over:
            out.append((state, state.to_dict()))
    return out


def hidden_variants(d, seat, rng):
    """Copies of ``d`` that differ only in what ``seat`` cannot see: other hands' cards and the stock."""
    n = len(d["hands"])
    others = [j for j in range(n) if j != seat]
    variants = []
    if len(others) >= 2:  # one card swapped between two other hands
        j, k = (int(x) for x in rng.choice(others, 2, replace=False))
        v = copy.deepcopy(d)
        a, b = int(rng.integers(len(v["hands"][j]))), int(rng.integers(len(v["hands"][k])))
        v["hands"][j][a], v["hands"][k][b] = v["hands"][k][b], v["hands"][j][a]
        variants.append(v)
        equal = [(j, k) for j in others for k in others if j < k and len(d["hands"][j]) == len(d["hands"][k])]
        if equal:  # two other hands of equal size swapped whole
            j, k = equal[int(rng.integers(len(equal)))]
            v = copy.deepcopy(d)
            v["hands"][j], v["hands"][k] = v["hands"][k], v["hands"][j]
            variants.append(v)
    if d["stock"]:
        j = others[int(rng.integers(len(others)))]  # an opponent's card swapped with a stock card
        v = copy.deepcopy(d)
        a, b = int(rng.integers(len(v["hands"][j]))), int(rng.integers(len(v["stock"])))
        v["hands"][j][a], v["stock"][b] = v["stock"][b], v["hands"][j][a]
        variants.append(v)
        v = copy.deepcopy(d)  # the stock in another order
        v["stock"] = [v["stock"][i] for i in rng.permutation(len(v["stock"]))]
        variants.append(v)
    # every hidden card dealt anew (other hands and stock keep their sizes)
    v = copy.deepcopy(d)
    pool = [card for j in others for card in v["hands"][j]] + v["stock"]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    for j in others:
        size = len(v["hands"][j])
        v["hands"][j], pool = pool[:size], pool[size:]
    v["stock"] = pool
    variants.append(v)
    return variants


@pytest.mark.parametrize("n", range(2, 8))
def test_no_hidden_information_in_any_observation(n):
    from c8env.observation import encode_observation

    rng = np.random.default_rng(100 + n)
    checked = 0
    for preset in PRESETS:
        env = c8env.raw_env(num_players=n, rules=preset)
        for state, d in random_positions(preset, n, rng, 3):
            env.reset(seed=1, options={"state": copy.deepcopy(d)})
            base = {a: env.observe(a) for a in env.agents}
            for seat in range(n):  # the dict round trip shows the same as the live state
                np.testing.assert_array_equal(base[agent(seat)]["observation"], encode_observation(state, seat))
            for seat in range(n):
                for v in hidden_variants(d, seat, rng):
                    env.reset(seed=1, options={"state": v})
                    obs = env.observe(agent(seat))
                    np.testing.assert_array_equal(obs["observation"], base[agent(seat)]["observation"])
                    np.testing.assert_array_equal(obs["action_mask"], base[agent(seat)]["action_mask"])
                    checked += 1
    assert checked > 100


def test_hidden_cards_change_what_the_owner_sees():
    # the converse: the observer's own hand does show (so the no-leak test is not vacuous)
    d = {"hands": [["AC", "KS"], ["2D", "3D"]], "discard": ["5D"], "stock": ["4C", "QH"]}
    env = start(d)
    before = env.observe("player_1")["observation"].copy()
    env.reset(options={"state": dict(d, hands=[["AC", "KS"], ["2D", "QH"]], stock=["4C", "3D"])})
    assert not np.array_equal(env.observe("player_1")["observation"], before)


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


# ----- rewards -------------------------------------------------------------------------------------------
GOING_OUT = {"hands": [["5C"], ["KD", "2H"], ["8S", "3S"]], "discard": ["9C"], "stock": ["4D", "JD"],
             "current_player": 0}


@pytest.mark.parametrize("wrapped", [False, True])
def test_win_reward_going_out(wrapped):
    env = start(GOING_OUT, wrapped=wrapped)
    env.step(c("5C"))
    assert env.rewards == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.infos["player_1"]["hand_winner"] == 0
    assert collect_final_rewards(env) == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}


@pytest.mark.parametrize("n", range(2, 8))
def test_win_reward_for_every_player_count(n):
    hands = [["5C"]] + [[f"{r}S", f"{r}H"] for r in "234567"[: n - 1]]
    env = start({"hands": hands, "discard": ["9C"], "stock": ["4D"]})
    env.step(c("5C"))
    expected = {agent(i): (1.0 if i == 0 else -1.0 / (n - 1)) for i in range(n)}
    assert env.rewards == pytest.approx(expected)
    assert sum(env.rewards.values()) == pytest.approx(0.0)
    assert collect_final_rewards(env) == pytest.approx(expected)


@pytest.mark.parametrize("rules, expected, scores", [
    ("standard", [65, -12, -53], [65, 0, 0]),
    ("penalty", [65, -12, -53], [0, 12, 53]),  # a zero-sum transfer whatever the scoring
    ("crazy_aces", [23, -12, -11], [23, 0, 0]),  # the eight scores 8
])
def test_points_reward_going_out(rules, expected, scores):
    env = start(GOING_OUT, rules=rules, reward="points")
    env.step(c("5C"))
    assert env.rewards == {agent(i): float(x) for i, x in enumerate(expected)}
    assert env.unwrapped.game.scores == scores
    assert collect_final_rewards(env) == {agent(i): float(x) for i, x in enumerate(expected)}


NO_RESHUFFLE = {"preset": "standard", "stock_exhausted": "pass"}


def blocked_position(hands):
    """Seat 2 must pass with an empty stock after two passes: the hand is blocked."""
    return {"hands": hands, "discard": ["9C"], "stock": [], "current_player": 2, "passes": 2}


@pytest.mark.parametrize("reward", ["win", "points"])
def test_blocked_hand_tied_gives_everyone_zero(reward):
    env = start(blocked_position([["KD"], ["KH"], ["QS"]]), rules=NO_RESHUFFLE, reward=reward, wrapped=True)
    assert_masks(env, [PASS])
    env.step(PASS)
    state = env.unwrapped.game
    assert state.hand_over and state.winner is None
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}
    assert all(env.terminations.values())
    assert env.infos["player_0"]["hand_winner"] is None
    assert collect_final_rewards(env) == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}


@pytest.mark.parametrize("reward, expected", [("win", [-0.5, 1.0, -0.5]), ("points", [-5.0, 12.0, -7.0])])
def test_blocked_hand_with_a_winner(reward, expected):
    # hand points 10, 5, 12: seat 1 wins; each pays the difference to its 5
    env = start(blocked_position([["KD"], ["5H"], ["QS", "2S"]]), rules=NO_RESHUFFLE, reward=reward)
    env.step(PASS)
    assert env.unwrapped.game.winner == 1
    assert env.rewards == {agent(i): x for i, x in enumerate(expected)}
    assert env.unwrapped.game.scores == [0, 12, 0]
    assert collect_final_rewards(env) == {agent(i): x for i, x in enumerate(expected)}


@pytest.mark.parametrize("reward, expected", [("win", [-0.5, 1.0, -0.5]), ("points", [-5.0, 12.0, -7.0])])
def test_hand_ended_by_the_empty_stock_is_scored_as_blocked(reward, expected):
    data = {"hands": [["KD"], ["5H"], ["QS", "2S"]], "discard": ["9C"], "stock": [], "current_player": 0}
    env = start(data, rules="five_hands", reward=reward)
    assert_masks(env, [PASS])
    env.step(PASS)
    assert env.rewards == {agent(i): x for i, x in enumerate(expected)}
    assert env.unwrapped.game.scores == [10, 5, 12]  # penalty scoring: each adds his own points


@pytest.mark.parametrize("reward, expected", [("win", [-0.5, -0.5, 1.0]), ("points", [-1.0, -8.0, 9.0])])
def test_stop_is_scored_as_blocked(reward, expected):
    # seat 0 (3 points) stops, but seat 2 (2 points) holds the strictly lowest hand
    data = {"hands": [["AC", "2D"], ["KD"], ["2S"]], "discard": ["9H"], "stock": ["4C"], "current_player": 0}
    env = start(data, rules="stop_the_round", reward=reward)
    env.step(STOP)
    assert env.unwrapped.game.winner == 2
    assert env.rewards == {agent(i): x for i, x in enumerate(expected)}
    assert collect_final_rewards(env) == {agent(i): x for i, x in enumerate(expected)}


# ----- episodes ----------------------------------------------------------------------------------------
def test_hand_episode_terminates_every_agent_at_the_hand_end():
    env = start(GOING_OUT, wrapped=True, episode="hand")
    env.step(c("5C"))
    assert env.terminations == {"player_0": True, "player_1": True, "player_2": True}
    seen = []
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        assert termination and not truncation and not obs["action_mask"].any()
        seen.append(name)
        env.step(None)
    assert sorted(seen) == ["player_0", "player_1", "player_2"] and env.agents == []
    # a seeded random hand also ends in termination
    env = c8env.env(num_players=4, episode="hand")
    env.reset(seed=5)
    for _ in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else env.action_space(env.agent_selection).sample(obs["action_mask"]))
    assert env.unwrapped.game.hand_over and env.unwrapped.game.hands_played == 1


def play_match(env, rng, reward):
    """Plays the env's match to its end at random; checks the per-hand rewards, dealer rotation and
    per-hand infos; returns (rewards received through last(), expected sums, hand count)."""
    state = env.unwrapped.game
    n = state.num_players
    received = dict.fromkeys(env.possible_agents, 0.0)
    expected = dict.fromkeys(env.possible_agents, 0.0)
    hands = 0
    first = state.hands_played
    dealer = state.dealer
    for name in env.agent_iter():
        obs, r, termination, truncation, info = env.last()
        received[name] += r
        if termination or truncation:
            assert termination and not truncation
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        plays = [a for a in legal if a < DRAW]
        action = int(rng.choice(plays if plays and rng.random() < 0.8 else legal))
        probe = state.copy()
        probe.apply(action)
        env.step(action)
        if probe.hand_over:  # this step ended a hand: its rewards now, the next deal with the next dealer
            hands += 1
            if reward == "win":
                hand = [0.0] * n if probe.winner is None else [
                    1.0 if i == probe.winner else -1.0 / (n - 1) for i in range(n)]
            else:
                hand = [float(x) for x in probe.hand_transfers()]
            assert env.rewards == pytest.approx({agent(i): hand[i] for i in range(n)})
            for i in range(n):
                expected[agent(i)] += hand[i]
            assert env.infos[agent(0)]["hand_winner"] == probe.winner
            assert env.infos[agent(0)]["scores"] == probe.scores
            assert state.hands_played == first + hands
            if probe.match_over:
                assert all(env.terminations.values())
                assert env.infos[agent(0)]["match_winner"] == probe.match_winner is not None
            else:
                assert not any(env.terminations.values())
                dealer = (dealer + 1) % n
                assert state.dealer == dealer and not state.hand_over
                assert sum(state.sizes) + len(state.stock) + len(state.discard) == 52 * state.rules.num_decks(n)
    assert state.match_over
    return received, expected, hands


@pytest.mark.parametrize("rules, n, reward", [
    ({"preset": "standard", "match_target": 60}, 3, "win"),
    ({"preset": "special_cards", "match_target": 40}, 2, "points"),
    ("five_hands", 4, "points"),
    ("five_hands", 3, "win"),
    ("penalty", 2, "win"),
    ("countdown", 2, "points"),
])
def test_match_episode_plays_hands_until_the_match_ends(rules, n, reward):
    rng = np.random.default_rng(7)
    env = c8env.env(num_players=n, rules=rules, episode="match", reward=reward)
    for seed in range(3):
        env.reset(seed=seed)
        received, expected, hands = play_match(env, rng, reward)
        assert received == pytest.approx(expected)
        if reward == "points":
            assert sum(received.values()) == pytest.approx(0.0)
        if rules == "five_hands":
            assert hands >= 5
    assert env.agents == []


def test_match_continues_after_a_fixed_first_hand():
    data = dict(GOING_OUT, hands=[["5C"], ["KD", "2H"]])  # 2 players: seat 0 goes out, scores 12 of 100
    env = start(data, wrapped=True, episode="match")
    assert env.unwrapped.game.dealer == 1
    env.step(c("5C"))
    state = env.unwrapped.game
    assert not any(env.terminations.values()) and not any(env.truncations.values())
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert state.scores == [12, 0] and state.hands_played == 1 and state.dealer == 0
    assert sorted(state.sizes) == [7, 7] and state.to_dict()["phase"] in ("play", "declare")
    assert env.agent_selection == agent(state.current_player)
    assert env.infos["player_1"]["hand_winner"] == 0
    received, expected, _ = play_match(env, np.random.default_rng(3), "win")
    expected["player_0"] += 1.0
    expected["player_1"] -= 1.0
    assert received == pytest.approx(expected)


@pytest.mark.parametrize("wrapped", [False, True])
def test_max_steps_truncates_every_agent_with_reward_zero(wrapped):
    make = c8env.env if wrapped else c8env.raw_env
    env = make(num_players=3, max_steps=5)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert not any(env.truncations.values())
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.truncations == {"player_0": True, "player_1": True, "player_2": True}
    assert not any(env.terminations.values())
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}
    assert not env.unwrapped.game.hand_over
    assert all(not env.observe(a)["action_mask"].any() for a in env.agents)
    final = {}
    for name in env.agent_iter():
        _, r, termination, truncation, _ = env.last()
        assert truncation and not termination
        final[name] = r
        env.step(None)
    assert final == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}


def test_max_steps_counts_per_hand_in_a_match():
    data = dict(GOING_OUT, hands=[["5C"], ["KD", "2H"]])
    env = start(data, episode="match", max_steps=3, wrapped=True)
    state = env.unwrapped.game
    rng = np.random.default_rng(1)
    received = {"player_0": 0.0, "player_1": 0.0}
    truncated_after = None
    steps_in_hand_2 = 0
    for name in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        received[name] += reward
        if termination or truncation:
            assert truncation and not termination
            env.step(None)
            continue
        if state.hands_played == 0:
            env.step(c("5C"))  # hand 1 ends after one step; hand 2 is dealt (7 cards each)
            assert not any(env.truncations.values()) and not any(env.terminations.values())
            continue
        steps_in_hand_2 += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if truncated_after is None and any(env.truncations.values()):
            truncated_after = steps_in_hand_2
            assert all(env.truncations.values()) and not any(env.terminations.values())
            assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
            assert not state.hand_over and state.hands_played == 1
    assert truncated_after == 3  # 4 steps in all, 3 in this hand
    assert received == {"player_0": 1.0, "player_1": -1.0}  # hand 1's rewards; the truncation adds 0


def test_default_max_steps_is_100000():
    assert c8env.raw_env().max_steps == 100_000


FULL_STATE = {
    "num_players": 3,
    "hands": [["AC", "KS"], ["2D", "5H", "8H"], ["3C", "TC", "JD"]],
    "stock": ["4C", "QD", "6S"],
    "discard": ["9D", "5C", "2C"],
    "current_player": 1,
    "dealer": 0,
    "suit_to_follow": "C",
    "rank_to_follow": "2",
    "direction": -1,
    "phase": "play",
    "pending_draw": 2,
    "draws_this_turn": 0,
    "passes": 0,
    "scores": [5, 0, 17],
    "hands_played": 2,
    "countdown": [8, 8, 8],
    "voids": [["H"], [], ["D", "S"]],
}


@pytest.mark.parametrize("wrapped", [False, True])
def test_reset_with_a_state_starts_from_it(wrapped):
    env = start(FULL_STATE, rules="special_cards", wrapped=wrapped, seed=9)
    got = env.unwrapped.game.to_dict()
    for key, value in FULL_STATE.items():
        assert got[key] == value, key
    assert env.agent_selection == "player_1"
    assert not any(env.terminations.values()) and not any(env.truncations.values())
    assert_masks(env, [c("2D"), DRAW])
    # a partial dict: the given keys are kept, the others take their defaults
    partial = {"hands": [["AC", "KS"], ["2D", "5H"]], "stock": [], "discard": ["9D"], "current_player": 1}
    env2 = start(partial, wrapped=wrapped)
    got = env2.unwrapped.game.to_dict()
    for key, value in partial.items():
        assert got[key] == value, key
    assert got["dealer"] == 0 and got["stock"] == [] and got["suit_to_follow"] == "D"
    assert env2.agent_selection == "player_1"
    # the state dict is not changed by the env, and a later plain reset deals anew
    data = copy.deepcopy(FULL_STATE)
    env.reset(seed=2, options={"state": data})
    env.step(DRAW)
    assert data == FULL_STATE
    env.reset(seed=3)
    assert env.unwrapped.game.hands_played == 0


def test_reset_with_a_state_of_the_wrong_size_raises():
    env = c8env.raw_env(num_players=2)
    with pytest.raises(ValueError, match="3 players"):
        env.reset(options={"state": copy.deepcopy(FULL_STATE)})
    with pytest.raises(ValueError, match="hands"):
        env.reset(options={"state": {"discard": ["9C"]}})


# ----- illegal actions -----------------------------------------------------------------------------------
ILLEGAL_POSITION = {"hands": [["5C", "KD"], ["2H", "3H"], ["4S"]], "discard": ["9C"], "stock": ["4D", "JD"]}


def test_raw_env_illegal_action_raises_and_changes_nothing():
    env = start(ILLEGAL_POSITION)
    assert env.unwrapped.game.legal_actions() == [c("5C"), DRAW]
    before = env.unwrapped.game.to_dict()
    observations = {a: env.observe(a) for a in env.agents}
    snapshot = copy.deepcopy((env.agent_selection, env.rewards, env._cumulative_rewards, env.terminations,
                              env.truncations, env.infos))
    for bad in (c("KD"), c("2H"), DECLARE_BASE, PASS, ANNOUNCE, STOP, np.int64(c("KD"))):
        with pytest.raises(IllegalActionError) as err:
            env.step(bad)
        assert isinstance(err.value, ValueError)
        message = str(err.value)
        assert str(int(bad)) in message
        assert "5C" in message and "draw" in message and str(DRAW) in message  # the legal ones
        assert env.unwrapped.game.to_dict() == before
        assert copy.deepcopy((env.agent_selection, env.rewards, env._cumulative_rewards, env.terminations,
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


# ----- rendering -----------------------------------------------------------------------------------------
RENDER_POSITION = {
    "hands": [["5C", "KD"], ["2H", "3H", "4H"], ["9S"]],
    "discard": ["7D", "9C"], "stock": ["4D", "JD", "QD", "AS"], "current_player": 0,
    "scores": [12, 0, 40],
    "hands_played": 1,
}


def _seat_line(text, seat):
    lines = [line for line in text.splitlines() if f"player_{seat}" in line]
    assert len(lines) == 1, text
    return lines[0].replace("*", " ").split()


def test_render_ansi_shows_the_acting_hand_top_card_suit_counts_and_scores():
    env = start(RENDER_POSITION, render_mode="ansi")
    text = env.render()
    assert isinstance(text, str)
    assert "5C" in text and "KD" in text  # the acting player's hand
    for hidden in ("2H", "3H", "4H", "9S", "4D", "JD", "QD", "AS"):  # nobody else's cards, nor the stock
        assert hidden not in text
    assert "9C" in text  # top card
    follow = [line for line in text.splitlines() if "follow" in line]
    assert follow and re.search(r"follow\W+C\b", follow[0]), text
    assert re.search(r"stock\D+4\b", text)
    for seat, (size, score) in enumerate([(2, 12), (3, 0), (1, 40)]):
        tokens = _seat_line(text, seat)
        assert str(size) in tokens and str(score) in tokens, tokens
    # after a wild card and a declared suit the suit to follow shows
    env = start(dict(RENDER_POSITION, hands=[["8C", "KD"], ["2H", "3H", "4H"], ["9S"]]), render_mode="ansi")
    env.step(c("8C"))
    env.step(DECLARE_BASE + SUITS.index("H"))
    text = env.render()
    assert re.search(r"follow\W+H\b", [line for line in text.splitlines() if "follow" in line][0]), text
    assert "2H" in text and "3H" in text and "KD" not in text  # now player_1's hand shows


def test_render_human_prints(capsys):
    env = start(RENDER_POSITION, render_mode="human")
    printed_at_reset = capsys.readouterr().out
    assert env.render() is None
    out = capsys.readouterr().out
    expected = start(RENDER_POSITION, render_mode="ansi").render()
    assert out.strip() == expected.strip()
    assert printed_at_reset.strip() == expected.strip()
    env.step(DRAW)  # each step prints too
    assert "AS" in capsys.readouterr().out


def test_render_without_a_mode_returns_none():
    env = start(RENDER_POSITION)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None
