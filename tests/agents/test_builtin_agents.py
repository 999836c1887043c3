"""Built-in opponents (``c8env.agents``): legal moves in random games of every preset and player
count, seeded reproducibility, ``available()``, bad specs, greedy's strength against random, and
the expert's single-legal-action shortcut.

Games run on ``c8env.raw_env`` (one agent per seat, each fed its own observation dict).
"""

from __future__ import annotations

import copy
import zipfile

import numpy as np
import pytest

import c8env
from c8env import DRAW, preset_names
from c8env.agents import (
    BUILTIN,
    POLICY_DIR,
    ExpertAgent,
    GreedyAgent,
    PolicyAgent,
    RandomAgent,
    available,
    load,
    shipped_policies,
)
from c8env.agents.policy import save_policy

PRESETS = preset_names()
PLAYER_COUNTS = range(2, 8)
MAX_STEPS = 20_000  # a hand this long is truncated (every hand below ends well before)


@pytest.fixture(scope="module")
def policy_path(tmp_path_factory):
    """A small random two-layer network in the exported policy format (biased against drawing, so
    that its games end: a policy that always draws can hoard the whole deck)."""
    rng = np.random.default_rng(0)
    bias = rng.normal(0, 1.0, 60)
    bias[DRAW] = -10.0
    layers = [
        (rng.normal(0, 0.1, (32, c8env.OBS_SIZE)), np.zeros(32)),
        (rng.normal(0, 1.0, (60, 32)), bias),
    ]
    path = tmp_path_factory.mktemp("policy") / "tiny.npz"
    return save_policy(path, layers, activation="tanh", num_players=2, rules={}, description="test")


def play_hand(agents, rules, seed, max_steps=MAX_STEPS):
    """Play one hand with one agent per seat; every action must be a legal int.
    Returns (actions, env, truncated)."""
    env = c8env.raw_env(num_players=len(agents), rules=rules, max_steps=max_steps)
    env.reset(seed=seed)
    actions, truncated = [], False
    for agent_name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            truncated |= truncation
            env.step(None)
            continue
        seat = int(agent_name.split("_")[1])
        action = agents[seat].act(obs)
        assert isinstance(action, int), f"{type(agents[seat]).__name__} returned {action!r}"
        assert obs["action_mask"][action] == 1, (
            f"{type(agents[seat]).__name__} at seat {seat} returned illegal {action} "
            f"(legal {np.flatnonzero(obs['action_mask']).tolist()})"
        )
        actions.append(action)
        env.step(action)
    assert env.game.hand_over != truncated
    return actions, env, truncated


# ----- legal moves ------------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", PRESETS)
def test_random_greedy_policy_play_legal_moves(preset, policy_path):
    kinds = ["random", "greedy", str(policy_path), "random"]
    for n in PLAYER_COUNTS:
        for game in range(3):  # the seats rotate through the kinds
            agents = [load(kinds[(seat + n + game) % len(kinds)], rules=preset, num_players=n, seed=seat)
                      for seat in range(n)]
            actions, _, truncated = play_hand(agents, preset, seed=10 * n + game)
            assert actions and not truncated


@pytest.mark.parametrize("preset", PRESETS)
def test_expert_plays_legal_moves(preset):
    n = 2 + PRESETS.index(preset) % 6
    agents = [load("expert:simulations=5", rules=preset, num_players=n, seed=1)]
    agents += [load("greedy", rules=preset, num_players=n) for _ in range(n - 1)]
    _, env, truncated = play_hand(agents, preset, seed=PRESETS.index(preset))
    assert env.game.hand_over and not truncated


def test_load_returns_the_right_classes(policy_path):
    rules = c8env.load_rules("standard")
    assert isinstance(load("random"), RandomAgent)
    assert isinstance(load("greedy", rules=rules), GreedyAgent)
    expert = load("expert:simulations=7,time_ms=50", num_players=3)
    assert isinstance(expert, ExpertAgent) and (expert.simulations, expert.time_ms) == (7, 50.0)
    assert isinstance(load(policy_path), PolicyAgent)
    assert isinstance(load(str(policy_path)), PolicyAgent)


def test_policy_agent_plays_the_masked_argmax(policy_path):
    agent = PolicyAgent(policy_path)
    env = c8env.raw_env(num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    logits = agent.logits(obs["observation"])
    legal = np.flatnonzero(obs["action_mask"])
    assert agent.act(obs) == legal[np.argmax(logits[legal])]
    assert agent.meta["description"] == "test"


# ----- reproducibility --------------------------------------------------------------------------------
@pytest.mark.parametrize("specs", [["random", "random", "random"], ["expert:simulations=5", "random", "greedy"]])
def test_seeded_agents_reproducible(specs):
    def game(agent_seed):
        agents = [load(spec, rules="special_cards", num_players=3, seed=agent_seed + seat)
                  for seat, spec in enumerate(specs)]
        return play_hand(agents, "special_cards", seed=11)[0]

    assert game(0) == game(0)
    assert game(0) != game(100)


# ----- available() and bad specs ------------------------------------------------------------------------
def test_available_lists_the_builtins():
    names = available()
    assert names[:3] == list(BUILTIN) == ["random", "greedy", "expert"]
    assert len(names) == len(set(names))
    assert names[3] == "expert-strong" and isinstance(load("expert-strong"), ExpertAgent)  # the named search
    for name in names[4:]:  # shipped trained policies load by name
        assert isinstance(load(name), PolicyAgent)


def test_shipped_policies_are_the_catalogs_networks():
    assert shipped_policies() == ["iter6-standard-2p", "rollout6-standard-2p", "ppo-standard-2p",
                                  "ensemble-standard-4p", "ppo-standard-4p", "ppo-special_cards-2p"]


SHIPPED = [("ppo-standard-2p", 2, "standard", 0.85), ("ppo-standard-4p", 4, "standard", 0.6),
           ("ppo-special_cards-2p", 2, "special_cards", 0.85), ("iter6-standard-2p", 2, "standard", 0.85),
           ("rollout6-standard-2p", 2, "standard", 0.85), ("ensemble-standard-4p", 4, "standard", 0.6)]


@pytest.mark.parametrize("name, players, rules, floor", SHIPPED)
def test_shipped_policy_was_trained_for_its_table_and_beats_random(name, players, rules, floor):
    """The file's metadata names its player count and rules; it wins far more than its fair share vs random."""
    from c8env.tools.evaluation import evaluate

    agent = load(name, rules=rules, num_players=players)
    assert agent.meta["num_players"] == players
    assert agent.meta["rules"] == c8env.load_rules(rules).to_dict()
    table = evaluate([name] + ["random"] * (players - 1), players, rules, deals=60, seed=3, workers=1)
    assert table.stats[0].win_rate > floor, table.markdown()


@pytest.mark.slow
@pytest.mark.parametrize("opponent", ["random", "greedy"])
@pytest.mark.parametrize("name, players, rules", [entry[:3] for entry in SHIPPED])
def test_shipped_policy_finishes_its_hands(name, players, rules, opponent):
    """No shipped policy stalls (every seat rotation of 1,000 deals, batched engine): at most 1 hand in 1,000 is
    cut off at 10,000 moves. Four greedy players stall on their own (four eights passed round a table whose
    stock and discard pile hold two cards each, each declaring a suit the next player cannot follow), so at
    4 players the policy with greedy opponents may be cut off no more often than the greedy table alone."""
    from c8env.tools.evaluation import evaluate

    table = evaluate([name] + [opponent] * (players - 1), players, rules, deals=1000, seed=11, engine="batched")
    limit = table.hands // 1000
    if players > 2 and opponent == "greedy":
        alone = evaluate([opponent] * players, players, rules, deals=1000, seed=11, engine="batched")
        limit = max(limit, alone.truncated)
    assert table.truncated <= limit, table.markdown()


@pytest.mark.parametrize("spec, patterns", [
    ("champion", ["'champion'", "allowed: random, greedy, expert"]),
    ("expert:foo=1", ["'foo=1'", "'expert'", "simulations=<int>", "time_ms=<float>"]),
    ("expert:simulations=many", ["simulations='many'", "int"]),
    ("expert:simulations=0", ["simulations=0", ">= 1"]),
    ("greedy:depth=2", ["'depth=2'", "'greedy'", "allowed: none"]),
    (42, ["42", "random, greedy, expert"]),
    ("missing/policy.npz", ["'missing/policy.npz'", "no such policy file", "random, greedy, expert"]),
])
def test_bad_specs(spec, patterns):
    with pytest.raises(ValueError) as info:
        load(spec)
    for pattern in patterns:
        assert pattern in str(info.value), str(info.value)


def _corrupt_files(directory, good):
    raw = good.read_bytes()
    arrays = dict(np.load(good))
    files = {
        "garbage": b"not a policy" * 20,
        "empty": b"",
        "truncated": raw[: len(raw) // 2],
    }
    for name, content in files.items():
        (directory / f"{name}.npz").write_bytes(content)
    variants = {
        "no_meta": {k: v for k, v in arrays.items() if k != "meta"},
        "no_bias": {k: v for k, v in arrays.items() if k != "b1"},
        "bad_json": {**arrays, "meta": np.array("{not json")},
        "bad_activation": {**arrays, "meta": np.array(str(arrays["meta"]).replace('"tanh"', '"gelu"'))},
        "wrong_shape": {**arrays, "w1": np.zeros((60, 31), dtype=np.float32)},
        "wrong_outputs": {**arrays, "w1": np.zeros((50, 32), dtype=np.float32), "b1": np.zeros(50, np.float32)},
        "other_format": {**arrays, "meta": np.array('{"format": "other"}')},
    }
    for name, content in variants.items():
        np.savez(directory / f"{name}.npz", **content)
    return sorted(directory.glob("*.npz"))


def test_corrupt_policy_files(tmp_path, policy_path):
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    paths = _corrupt_files(corrupt, policy_path)
    assert len(paths) == 10
    for path in paths:
        with pytest.raises(ValueError) as info:
            load(path)
        assert str(path) in str(info.value), str(info.value)
    assert zipfile.is_zipfile(policy_path)


# ----- strength and shortcuts -----------------------------------------------------------------------
def test_greedy_beats_random():
    """A genuine property: greedy wins about 96% of 2-player hands against random."""
    rules = c8env.load_rules("standard")
    wins = 0
    hands = 200
    for game in range(hands):
        greedy_seat = game % 2
        agents = [GreedyAgent(rules), RandomAgent(seed=game)]
        if greedy_seat == 1:
            agents.reverse()
        _, env, _ = play_hand(agents, rules, seed=1_000 + game)
        wins += env.game.winner == greedy_seat
    assert wins >= 0.8 * hands, f"greedy won {wins} of {hands}"


def test_expert_returns_the_only_legal_action_without_searching(monkeypatch):
    # Nothing in the expert's hand fits the 5C: drawing is its only legal action.
    data = {"hands": [["2H", "3H", "KD"], ["7C", "9S"]], "stock": ["4H", "9D", "JD"], "discard": ["3S", "5C"],
            "current_player": 0}
    env = c8env.raw_env(num_players=2)
    env.reset(options={"state": copy.deepcopy(data)})
    obs = env.observe("player_0")
    assert np.flatnonzero(obs["action_mask"]).tolist() == [DRAW]
    expert = load("expert:simulations=1000000", num_players=2, seed=0)

    def no_search(*args, **kwargs):
        raise AssertionError("the expert searched with a single legal action")

    monkeypatch.setattr(expert, "_search", no_search)
    monkeypatch.setattr(expert, "_rollout", no_search)
    assert expert.act(obs) == DRAW


@pytest.mark.parametrize("preset", ["standard", "countdown"])
def test_expert_plays_the_later_hands_of_a_match(preset):
    """An observation does not tell how many hands were played: the expert's position counts the fewest that give
    its scores and counts (with none, ``State.from_dict`` refused the scores of a later hand as unreachable)."""
    env = c8env.raw_env(num_players=2, rules=preset, episode="match")
    env.reset(seed=2)
    expert, greedy = load("expert:simulations=4", rules=preset, num_players=2, seed=0), load("greedy", rules=preset)
    later = 0
    for name in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated or later == 20:
            break
        game = env.unwrapped.game
        later += game.hands_played > 0 and name == "player_0"
        action = (expert if name == "player_0" else greedy).act(obs)
        assert obs["action_mask"][action]
        env.step(action)
    assert later == 20 and (any(game.scores) or min(game.countdown) < 8)


@pytest.mark.parametrize("compiled", [False, True])
def test_expert_keeps_the_mean_results_of_its_last_search(compiled):
    """``last_search``: the searched candidates and their mean rollout results, the played move the best of
    them; None after a decision it took without searching."""
    expert = ExpertAgent(c8env.raw_env(num_players=2).rules, 2, simulations=6, seed=1, compiled=compiled)
    calls = []
    search = expert._search

    def spy(*args):
        calls.append(1)
        return search(*args)

    expert._search = spy
    searched = unsearched = 0
    for hand in range(4):
        env = c8env.raw_env(num_players=2)
        env.reset(seed=hand)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            before = len(calls)
            action = expert.act(obs)
            if len(calls) == before:
                assert expert.last_search is None
                unsearched += 1
            else:
                candidates, values = expert.last_search
                legal = np.flatnonzero(obs["action_mask"]).tolist()
                assert len(candidates) == len(values) > 1 and set(candidates) <= set(legal)
                assert action == candidates[int(np.argmax(values))] and np.all(np.abs(values) <= 1)
                searched += 1
            env.step(action)
    assert searched > 10 and unsearched > 10


# ----- the policy-guided expert (expert:policy=...) ---------------------------------------------------
def _guided_decisions(spec: str, hands: int, seed: int = 0) -> list[tuple[list[int], list[int], int]]:
    """(policy's candidates best first, the expert's candidates before guidance, action) of every
    searched or guided decision of ``spec`` against greedy over ``hands`` hands."""
    expert = load(spec, num_players=2, seed=seed)
    record: list = []
    guide = expert._guide

    def spy(observation, candidates):
        kept, bonus, favourite = guide(observation, candidates)
        record.append([kept, list(candidates), None])
        return kept, bonus, favourite

    expert._guide = spy
    for hand in range(hands):
        env = c8env.raw_env(num_players=2)
        env.reset(seed=seed + hand)
        greedy = GreedyAgent(env.rules)
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seat = env.agents.index(agent)
            mover = expert if seat == hand % 2 else greedy
            before = len(record)
            action = mover.act(obs)
            if mover is expert and len(record) > before:
                record[-1][2] = action
            env.step(action)
    return record


def test_guided_expert_searches_only_the_policys_top_candidates():
    policy = load("ppo-standard-2p")
    record = _guided_decisions("expert:policy=ppo-standard-2p,top=2,simulations=10", hands=6)
    assert len(record) > 20
    for kept, candidates, action in record:
        assert len(kept) == min(2, len(candidates)) and set(kept) <= set(candidates)
        assert action in kept
    assert isinstance(policy, PolicyAgent)


def test_guided_expert_with_top_1_plays_the_policys_choice_without_searching(monkeypatch):
    def no_search(*args, **kwargs):
        raise AssertionError("a single guided candidate needs no search")

    expert = load("expert:policy=ppo-standard-2p,top=1", num_players=2, seed=0)
    monkeypatch.setattr(ExpertAgent, "_search", no_search)
    policy = load("ppo-standard-2p")
    record = _guided_decisions("expert:policy=ppo-standard-2p,top=1", hands=4)
    assert len(record) > 10 and isinstance(expert, ExpertAgent)
    assert all(kept == [action] for kept, _, action in record)
    # the kept candidate is the network's favourite among the expert's candidates
    env = c8env.raw_env(num_players=2)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    candidates = np.flatnonzero(obs["action_mask"]).tolist()
    kept, bonus, favourite = expert._guide(obs, candidates)
    logits = policy.logits(obs["observation"])[candidates].astype(np.float64)
    assert kept == [candidates[int(np.argmax(logits))]] and bonus.tolist() == [0.0]
    assert favourite == pytest.approx(np.exp(logits.max()) / np.exp(logits).sum())


@pytest.mark.parametrize("confident", [0, 1.5, True, "0.5"])
def test_confident_out_of_range_is_refused(confident):
    with pytest.raises(ValueError, match=r"confident=.*allowed: None or a number in \(0, 1\]"):
        ExpertAgent(c8env.load_rules("standard"), 2, policy=load("ppo-standard-2p"), confident=confident)
    with pytest.raises(ValueError, match="give policy="):
        ExpertAgent(c8env.load_rules("standard"), 2, confident=0.5)


def _spy_on_guide(expert: ExpertAgent) -> list:
    """The list to which each of ``expert``'s guide calls will append what it returned."""
    seen: list = []
    guide = expert._guide
    expert._guide = lambda observation, candidates: seen.append(guide(observation, candidates)) or seen[-1]
    return seen


def test_confident_guided_expert_searches_only_where_the_guide_doubts():
    """confident=P: the guide's favourite is played unsearched where its probability (softmax over the
    candidates) is P or more; elsewhere the search runs as without the option, on the same samples."""
    spec = "expert:policy=ppo-standard-2p,simulations=8"
    env = c8env.raw_env(num_players=2)
    sure = doubtful = 0
    for seed in range(60):
        env.reset(seed=seed)
        obs = env.observe(env.agent_selection)
        plain, confident = load(spec, seed=seed), load(spec + ",confident=0.6", seed=seed)
        seen = _spy_on_guide(confident)
        action = confident.act(obs)
        if not seen:  # a single candidate: nothing to guide
            continue
        kept, _, favourite = seen[0]
        if favourite >= 0.6:
            sure += 1
            assert confident.last_search is None and action == kept[0]
        else:
            doubtful += 1
            assert action == plain.act(obs) and confident.last_search[0] == plain.last_search[0] == kept
            np.testing.assert_array_equal(confident.last_search[1], plain.last_search[1])
    assert sure >= 3 and doubtful >= 3


def test_guided_expert_is_reproducible_and_prior_breaks_ties_towards_the_policy():
    first = _guided_decisions("expert:policy=ppo-standard-2p,simulations=8", hands=3, seed=5)
    again = _guided_decisions("expert:policy=ppo-standard-2p,simulations=8", hands=3, seed=5)
    assert [r[2] for r in first] == [r[2] for r in again]
    # with an overwhelming prior the search cannot outvote the network: its first candidate is played
    for kept, _, action in _guided_decisions("expert:policy=ppo-standard-2p,prior=1000,simulations=4", hands=3):
        assert action == kept[0]


def test_expert_with_policy_rollouts_searches_the_guided_candidates_and_differs_from_greedy_rollouts():
    """rollouts=policy keeps the guided candidates (top=2 here) but judges them by rollouts in which the network
    plays the searcher's moves: on the same samples, some choices differ from the greedy rollouts' choices."""
    spec = "expert:policy=ppo-standard-2p,top=2,simulations=12"
    with_policy = _guided_decisions(spec + ",rollouts=policy", hands=8, seed=2)
    with_greedy = _guided_decisions(spec, hands=8, seed=2)
    assert load(spec + ",rollouts=policy").rollouts == "policy" and load(spec).rollouts == "greedy"
    rolling = load(spec + ",rollouts=policy")
    assert rolling.rollout_policy is rolling.policy
    assert len(with_policy) > 20
    for kept, candidates, action in with_policy:
        assert len(kept) == min(2, len(candidates)) and action in kept
    # the hands diverge after the first differing move: compare the decisions up to there
    first = next((i for i, (a, b) in enumerate(zip(with_policy, with_greedy, strict=False)) if a[2] != b[2]), None)
    assert first is not None, "the network's rollouts changed no decision"
    assert with_policy[:first] == with_greedy[:first] and with_policy[first][0] == with_greedy[first][0]


def test_expert_rollouts_name_another_network_than_the_guide(tmp_path):
    """rollouts=NAME: that network plays the searcher's rollout moves, beside a guide or without one; a spec
    ending in a .npz path is still the expert's (not a policy file)."""
    path = tmp_path / "net.npz"
    path.write_bytes((POLICY_DIR / "ppo-standard-2p.npz").read_bytes())
    assert load(f"expert:rollouts={path}", num_players=2).rollout_policy.meta == load(str(path)).meta
    assert load(f"expert:policy={path}", num_players=2).policy.meta == load(str(path)).meta
    plain = load("expert:rollouts=ppo-standard-2p", num_players=2)
    assert plain.policy is None and plain.rollout_policy.meta == load("ppo-standard-2p").meta
    guided = load("expert:policy=iter6-standard-2p,rollouts=ppo-standard-2p", num_players=2)
    assert guided.policy.layers[0][0].shape != guided.rollout_policy.layers[0][0].shape
    assert load("expert", num_players=2).rollout_policy is None


@pytest.mark.parametrize("spec, patterns", [
    ("expert:policy=nope", ["expert policy 'nope'", "no such policy file", "ppo-standard-2p"]),
    ("expert:top=2", ["top, prior, confident and rollouts=policy", "policy="]),
    ("expert:rollouts=policy", ["top, prior, confident and rollouts=policy", "policy="]),
    ("expert:confident=0.9", ["top, prior, confident and rollouts=policy", "policy="]),
    ("expert:policy=ppo-standard-2p,confident=0", ["confident=0.0", "a number in (0, 1]"]),
    ("expert:policy=ppo-standard-2p,confident=1.5", ["confident=1.5", "a number in (0, 1]"]),
    ("expert:policy=ppo-standard-2p,rollouts=nets", ["expert rollouts 'nets'", "no such policy file",
                                                     "allowed: greedy, policy, iter6-standard-2p"]),
    ("expert:policy=ppo-standard-2p,top=0", ["top=0", ">= 1"]),
    ("expert:policy=ppo-standard-2p,prior=-1", ["prior=-1.0", ">= 0"]),
])
def test_guided_expert_bad_options(spec, patterns):
    with pytest.raises(ValueError) as err:
        load(spec, num_players=2)
    for pattern in patterns:
        assert pattern in str(err.value)


@pytest.mark.parametrize("spec, patterns", [
    ("expert:simulations=5,simulations=7", ["option 'simulations'", "given twice", "give it once"]),
    ("expert:time_ms=5, time_ms=5", ["option 'time_ms'", "given twice"]),
    ("expert:policy=ppo-standard-2p,top=2,top=3", ["option 'top'", "given twice"]),
    ("expert:simulations=-3", ["simulations=-3", "out of range", "an int >= 1"]),
    ("expert:time_ms=-1", ["time_ms=-1.0", "out of range", "a finite number > 0"]),
    ("expert:time_ms=0", ["time_ms=0.0", "a finite number > 0"]),
    ("expert:time_ms=inf", ["time_ms=inf", "a finite number > 0"]),
    ("expert:time_ms=nan", ["time_ms=nan", "a finite number > 0"]),
    ("expert:policy=ppo-standard-2p,prior=inf", ["prior=inf", "a finite number >= 0"]),
    ("expert:policy=ppo-standard-2p,top=0", ["top=0", "out of range", "an int >= 1"]),
    ("expert:policy=", ["policy=''", "a shipped policy name or a .npz path"]),
    ("expert:simulations=2.5", ["simulations='2.5'", "is not an int"]),
    ("expert:time_ms=fast", ["time_ms='fast'", "is not a float"]),
    ("expert:simulations", ["'simulations'", "simulations=<int>"]),
    ("random:seed=1", ["'seed=1'", "'random'", "allowed: none"]),
])
def test_spec_options_refuse_what_they_cannot_mean(spec, patterns):
    """Repeated, unknown, mistyped and out-of-range options: one line naming the key (none is silently kept)."""
    with pytest.raises(ValueError) as info:
        load(spec, num_players=2)
    message = str(info.value)
    assert "\n" not in message
    for pattern in patterns:
        assert pattern in message, message
