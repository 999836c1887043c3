"""``pretrain_oracle``: the guide's favourite played, the guide's candidates valued on the other players' true hands."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from c8env.agents import load
from c8env.agents.expert import public_position
from c8env.engine import State
from c8env.episode import play_hand
from c8env.observation import StateObservation
from c8env.rules import load_rules
from training.config import load_config
from training.imitation import demonstrations, record_demonstrations
from training.oracle import ORACLE_DECISIONS, OracleSearch

ROOT = Path(__file__).resolve().parent.parent.parent
GUIDE = str(ROOT / "training/research/policies/distill-standard-4p.npz")
GUIDED = f"expert:policy={GUIDE},simulations=8"


def _oracle(seed: int = 1) -> OracleSearch:
    return OracleSearch.from_expert(load(GUIDED, rules="standard", num_players=4, seed=seed))


def test_the_oracle_deals_the_true_hands_and_plays_the_guides_favourite() -> None:
    rules = load_rules("standard")
    greedy, guide = load("greedy", rules=rules, num_players=4), load(GUIDE, rules=rules, num_players=4)
    searched = []
    oracle = None  # a fresh oracle for each hand, below

    def choose(state: State) -> int:
        view = StateObservation(state, state.current_player)
        if state.current_player != 2:
            return greedy.act(view)
        action = oracle.act(view)
        data, unseen, sizes = public_position(view, rules)
        dealt = oracle._deal_hidden(unseen, sizes, oracle._requirements(data, sizes))
        assert [sorted(dealt[k]) for k in (1, 2, 3)] == [state.hand((2 + k) % 4) for k in (1, 2, 3)]
        legal = view.legal_actions()
        assert action == legal[int(guide.logits(view["observation"])[legal].argmax())]
        if oracle.last_search is not None:
            candidates, means = oracle.last_search
            assert set(candidates) <= set(legal) and means.shape == (len(candidates),)
            searched.append(action)
        return action

    for deal in range(3):
        oracle = _oracle(deal)
        play_hand(State.new(4, rules, seed=deal), choose)
    assert len(searched) >= 5


def test_the_oracle_stops_searching_after_its_first_decisions() -> None:
    oracle = _oracle()
    state = State.new(4, load_rules("standard"), seed=4)
    view = StateObservation(state, state.current_player)
    oracle._decisions = ORACLE_DECISIONS - 1
    oracle.act(view)
    assert oracle._decisions == ORACLE_DECISIONS
    oracle.last_search = ([0], np.zeros(1))
    oracle.act(view)
    assert oracle.last_search is None


def test_an_oracle_recording_values_the_guides_candidates(tmp_path: Path) -> None:
    config = load_config(ROOT / "training/research/configs/iter2-standard-4p.yaml", [
        f"pretrain_agent={GUIDED}", "pretrain_oracle=true", f"pretrain_demos={tmp_path / 'oracle.npz'}"])
    demos = record_demonstrations(config, 300, seed=2, workers=1, progress=False)
    plain = record_demonstrations(config.model_copy(update={"pretrain_oracle": False}), 300, seed=2, workers=1,
                                  progress=False)
    rows = np.isfinite(demos.values).any(1)
    assert rows.sum() > 30 and not (np.isfinite(demos.values) & ~demos.masks).any()
    guide = load(GUIDE, rules="standard", num_players=4)
    favourites = np.where(demos.masks, guide.logits(demos.obs), -np.inf).argmax(1)
    assert (demos.actions == favourites).all()  # the honest guide plays every move, searched or not
    assert not np.array_equal(demos.actions, plain.actions)  # the plain search plays its own choice


def test_a_recording_saved_before_a_recording_key_existed_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "demos.npz"
    config = load_config(ROOT / "configs/train/default.yaml", ["pretrain_agent=greedy", "pretrain_temperature=null", "pretrain_samples=50",
                                                               f"pretrain_demos={path}"])
    demos, _ = demonstrations(config, seed=1)
    with np.load(path) as saved:
        arrays = dict(saved)
    recording = json.loads(str(arrays["recording"]))
    del recording["pretrain_oracle"]
    np.savez(path, **{**arrays, "recording": json.dumps(recording)})
    again, loaded = demonstrations(config, seed=1)
    assert loaded and np.array_equal(again.actions, demos.actions)
    with pytest.raises(ValueError, match=r"differ: pretrain_oracle"):
        demonstrations(config.model_copy(update={"pretrain_oracle": True}), seed=1)


def test_the_oracle_refuses_an_unguided_expert_and_a_plain_observation() -> None:
    with pytest.raises(ValueError, match="the expert needs policy="):
        OracleSearch.from_expert(load("expert:simulations=8", rules="standard", num_players=4))
    state = State.new(4, load_rules("standard"), seed=4)
    view = StateObservation(state, state.current_player)
    with pytest.raises(TypeError, match="needs a StateObservation"):
        _oracle().act({"observation": view["observation"], "action_mask": view["action_mask"]})
