"""Evaluation on the batched engine: the same hand records as the scalar engine (random, greedy, policy files;
2 and 4 players; a plain and a special-card preset; hands cut off), and the engine choice checked."""

from __future__ import annotations

import warnings

import pytest

from c8env.agents import PolicyMismatchWarning, load
from c8env.tools import evaluation
from c8env.tools.evaluation import build_parser, evaluate
from c8env.vector import VectorGames


def records(specs: list[str], num_players: int, rules: str, deals: int, engine: str) -> list[dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PolicyMismatchWarning)  # policies played outside their training
        table = evaluate(specs, num_players, rules, deals, seed=5, workers=1, engine=engine)
    return [vars(record) for record in table.records]


@pytest.mark.parametrize("specs,num_players,rules,deals", [
    (["greedy", "random"], 2, "standard", 60),
    (["random", "random"], 2, "special_cards", 40),
    (["ppo-standard-2p", "greedy"], 2, "standard", 30),
    (["greedy", "random"], 4, "special_cards", 25),
    (["ppo-standard-4p", "random", "greedy"], 4, "standard", 15),
    (["random", "ppo-standard-2p"], 4, "special_cards", 10),
])
def test_batched_records_equal_the_scalar_records(specs: list[str], num_players: int, rules: str, deals: int) -> None:
    batched = records(specs, num_players, rules, deals, "batched")
    assert len(batched) == deals * num_players
    assert batched == records(specs, num_players, rules, deals, "scalar")
    assert batched == records(specs, num_players, rules, deals, "auto")


def test_hands_cut_off_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluation.deals, "MAX_HAND_STEPS", 40)
    batched = records(["random", "greedy"], 3, "special_cards", 20, "batched")
    assert any(r["truncated"] for r in batched) and not all(r["truncated"] for r in batched)
    assert all(r["steps"] == 40 and r["winner"] is None and r["transfers"] == [0, 0] for r in batched if r["truncated"])
    assert batched == records(["random", "greedy"], 3, "special_cards", 20, "scalar")


def test_a_policys_batched_move_is_its_own() -> None:
    agent = load("ppo-standard-2p")
    games = VectorGames(64, 2)
    games.reset(3)
    for _ in range(30):
        chosen = agent.act_batch(games.observation, games.action_mask)
        for b in range(64):
            observation = {"observation": games.observation[b], "action_mask": games.action_mask[b]}
            assert chosen[b] == agent.act(observation)
        games.step(games.random_actions())


def test_engine_choice_is_checked() -> None:
    with pytest.raises(ValueError, match="engine='turbo' is invalid; allowed: auto, scalar, batched"):
        evaluate(["greedy", "random"], deals=1, engine="turbo")
    with pytest.raises(ValueError, match="engine='batched' cannot play 'expert:simulations=2'"):
        evaluate(["greedy", "expert:simulations=2"], deals=1, engine="batched")
    table = evaluate(["greedy", "expert:simulations=2"], deals=1, workers=1)  # auto: the scalar engine
    assert table.hands == 2
    assert build_parser().parse_args(["greedy", "random", "--engine", "scalar"]).engine == "scalar"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["greedy", "random", "--engine", "turbo"])
