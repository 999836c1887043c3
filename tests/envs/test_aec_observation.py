"""The PettingZoo env's observations through its public API: the layout, each part on fixed deals,
and nothing hidden leaking (the env's docstring).

Positions are built as state dicts (``State.to_dict()`` format) and passed with
``env.reset(options={"state": d})``. Reminders: a card id is ``suit * 13 + rank``
(suits C, D, H, S; ranks A..K); the last element of ``stock`` is drawn next and the
last element of ``discard`` is the top card.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import c8env
from c8env import ANNOUNCE, DECLARE_BASE, DRAW, NUM_ACTIONS, OBS_LAYOUT, PASS, State
from tests.envs.aec_helpers import PRESETS, SUITS, agent, assert_masks, c, start

RANKS = "A23456789TJQK"


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


@pytest.mark.slow
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
