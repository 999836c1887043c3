"""One batched-agent protocol: ``act_batch(observations, masks) -> actions`` on the random, greedy and policy
agents, each row the move ``act`` makes; :func:`c8env.agents.batch_mode` tells evaluation and the learner games
how to play an agent, instead of ``isinstance`` checks; a policy's batched move is exactly its ``act`` wherever
it runs, near ties included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from c8env.agents import POLICY_DIR, PolicyAgent, batch_mode, load
from c8env.agents.policy import TIE_MARGIN
from c8env.envs.learner_games import LearnerGames
from c8env.tools.evaluation import evaluate
from c8env.vector import VectorGames

POLICY = POLICY_DIR / "ppo-standard-2p.npz"


def batches(games: int = 48, steps: int = 25, players: int = 3, seed: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observations, masks) of a batch of random games at several steps."""
    vector = VectorGames(games, players, "special_cards")
    vector.reset(seed)
    out = []
    for _ in range(steps):
        out.append((vector.observation.copy(), vector.action_mask.copy()))
        vector.step(vector.random_actions())
    return out


def one_by_one(agent: object, observations: np.ndarray, masks: np.ndarray) -> list[int]:
    return [agent.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks, strict=True)]


class Jittery(PolicyAgent):
    """A policy whose batched logits differ from its one-observation logits in the last bits (as another
    summation order can make them): a near tie may flip in a batch."""

    def logits(self, vector: np.ndarray) -> np.ndarray:
        out = super().logits(vector)
        if np.ndim(vector) == 2:
            out = out + (TIE_MARGIN / 10) * np.sin(np.arange(out.size, dtype=np.float32)).reshape(out.shape)
        return out

    def ties(self, observations: np.ndarray, masks: np.ndarray) -> int:
        """Rows where the plain batched argmax is not :meth:`act`'s move (the case act_batch must mend)."""
        plain = np.argmax(np.where(masks.astype(bool), self.logits(observations), -np.inf), axis=1)
        return int((plain != np.array(one_by_one(self, observations, masks))).sum())


def near_tie_policy(tmp_path: Path) -> Jittery:
    """ppo-standard-2p with its last layer squashed, so that many decisions are near ties."""
    with np.load(POLICY) as data:
        arrays = {k: data[k] for k in data.files}
    last = max(int(k[1:]) for k in arrays if k.startswith("w"))
    arrays[f"w{last}"] = arrays[f"w{last}"] * 1e-4
    arrays[f"b{last}"] = np.zeros_like(arrays[f"b{last}"])
    path = tmp_path / "flat.npz"
    np.savez(path, **arrays)
    return Jittery(path)


def test_batch_mode_of_every_agent() -> None:
    assert batch_mode(load("random", seed=1)) == "random"
    assert batch_mode(load("greedy")) == "greedy"
    assert batch_mode(load("ppo-standard-2p")) == "act_batch"
    assert batch_mode(load("expert:simulations=2")) is None

    class Mine:
        def act(self, observation: dict) -> int:
            return int(np.flatnonzero(observation["action_mask"])[0])

    class MineBatched(Mine):
        def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return np.argmax(masks, axis=1)

    class Wrong(Mine):
        batch_kernel = "turbo"

    assert batch_mode(Mine()) is None and batch_mode(MineBatched()) == "act_batch"
    with pytest.raises(ValueError, match="Wrong.batch_kernel='turbo' is invalid; allowed: 'random', 'greedy'"):
        batch_mode(Wrong())


@pytest.mark.parametrize("spec", ["random", "greedy", "ppo-standard-2p"])
def test_act_batch_is_act_row_by_row(spec: str) -> None:
    batched, single = load(spec, num_players=3, rules="special_cards", seed=9), \
        load(spec, num_players=3, rules="special_cards", seed=9)
    for observations, masks in batches():
        chosen = batched.act_batch(observations, masks)
        assert chosen.dtype == np.int64 and chosen.shape == (len(masks),)
        assert chosen.tolist() == one_by_one(single, observations, masks)  # random: the same generator stream


def test_a_policys_batched_move_is_its_act_on_near_ties(tmp_path: Path) -> None:
    agent = near_tie_policy(tmp_path)
    flipped = 0
    for observations, masks in batches(players=2):
        flipped += agent.ties(observations, masks)
        assert agent.act_batch(observations, masks).tolist() == one_by_one(agent, observations, masks)
    assert flipped > 0, "no near tie flipped: the test would not see a plain argmax"


def test_learner_games_play_a_policy_exactly_as_its_act_near_ties_included(tmp_path: Path) -> None:
    agent = near_tie_policy(tmp_path)
    calls, flipped = [], 0
    original = agent.act_batch

    def spy(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        chosen = original(observations, masks)
        calls.append((observations.copy(), masks.copy(), chosen.copy()))
        return chosen

    agent.act_batch = spy
    games = LearnerGames(32, 2, opponents=agent)
    games.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        masks = games.action_masks()
        games.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    assert calls, "the learner games never asked the policy for a move"
    for observations, masks, chosen in calls:
        flipped += agent.ties(observations, masks)
        assert chosen.tolist() == one_by_one(agent, observations, masks)
    assert flipped > 0


def test_evaluation_plays_any_act_batch_agent_on_the_batched_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy is played through its act_batch (no isinstance check): the batched and scalar engines agree."""
    seen = []
    original = PolicyAgent.act_batch

    def spy(self: PolicyAgent, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        seen.append(len(masks))
        return original(self, observations, masks)

    monkeypatch.setattr(PolicyAgent, "act_batch", spy)
    batched = evaluate(["ppo-standard-2p", "greedy"], deals=20, seed=4, engine="batched")
    assert sum(seen) > 0
    scalar = evaluate(["ppo-standard-2p", "greedy"], deals=20, seed=4, engine="scalar", workers=1)
    assert [r.__dict__ for r in batched.records] == [r.__dict__ for r in scalar.records]
