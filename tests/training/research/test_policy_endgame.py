"""Policy files with an endgame network (version 2): the first network plays until some player holds at most K
cards, and from then on the sum of both networks' logits, the suit declarations aside; such files are built by
``with_endgame`` (``python -m training.research.specialise --endgame``), read back with every check, and refused where
one MLP is needed (the compiled search's rollouts and beliefs, side-by-side files)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from c8env import raw_env
from c8env.actions import DECLARE_ACTIONS
from c8env.agents import ExpertAgent
from c8env.agents.policy import ENDGAME_VERSION, PolicyAgent, save_policy
from c8env.observation import OBS_LAYOUT, OBS_SIZE, fewest_cards
from c8env.rules import RuleSet
from training.research.specialise import main as specialise_main
from training.research.surgery import average_policies, with_endgame

SIZES = OBS_LAYOUT["opponent_hand_sizes"]


def write(path, seed: int, widths: tuple[int, ...] = (8, 6), players: int = 4, activation: str = "tanh"):
    rng = np.random.default_rng(seed)
    sizes = (OBS_SIZE, *widths, 60)
    layers = [(rng.normal(size=(out, inp)), rng.normal(size=out)) for inp, out in zip(sizes, sizes[1:], strict=False)]
    return save_policy(path, layers, activation, players, {"wild_rank": "8"})


def positions(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observation vectors at 4 players (random entries, then hands of 1 to 7 cards) and the fewest cards held."""
    rng = np.random.default_rng(seed)
    obs = rng.random((count, OBS_SIZE), dtype=np.float32)
    obs[:, :52] = 0.0
    own = rng.integers(1, 8, size=count)
    for row, cards in enumerate(own):
        obs[row, rng.choice(52, size=cards, replace=False)] = 1.0
    opponents = rng.integers(1, 8, size=(count, 3))
    obs[:, SIZES] = 0.0
    obs[:, SIZES.start:SIZES.start + 3] = opponents
    return obs, np.minimum(own, opponents.min(1))


def test_fewest_cards_reads_the_observers_hand_and_the_seated_opponents() -> None:
    env = raw_env(num_players=3)
    env.reset(seed=5)
    seen = set()
    for _ in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seen.add(int(fewest_cards(observation["observation"])))
        assert fewest_cards(observation["observation"]) == min(env.unwrapped.game.sizes)
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert len(seen) > 3
    obs, fewest = positions(30, 1)
    assert np.array_equal(fewest_cards(obs), fewest)


@pytest.mark.parametrize("cards", [1, 3])
def test_the_endgame_network_joins_once_some_player_holds_at_most_k_cards(tmp_path, cards) -> None:
    base, late = write(tmp_path / "base.npz", 0), write(tmp_path / "late.npz", 1, widths=(5,))  # depths may differ
    combined = PolicyAgent(with_endgame(base, late, cards, tmp_path / "out.npz"))
    assert combined.meta["version"] == ENDGAME_VERSION and combined.meta["endgame"] == {"max_cards": cards}
    assert combined.endgame_cards == cards and "late.npz" in combined.meta["description"]
    obs, fewest = positions(200, 2)
    expected = PolicyAgent(base).logits(obs)
    extra = PolicyAgent(late).logits(obs)
    extra[:, list(DECLARE_ACTIONS)] = 0.0
    joined = fewest <= cards
    assert 0 < joined.sum() < len(joined)
    expected[joined] += extra[joined]
    np.testing.assert_allclose(combined.logits(obs), expected, rtol=1e-5, atol=1e-5)
    masks = (np.random.default_rng(3).random((200, 60)) < 0.3).astype(np.int8)
    masks[:, 0] = 1
    one_by_one = [combined.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)]
    assert combined.act_batch(obs, masks).tolist() == one_by_one


def test_several_endgame_networks_add_their_logits(tmp_path) -> None:
    base = write(tmp_path / "base.npz", 0)
    lates = [write(tmp_path / f"late{i}.npz", 1 + i, widths=(5, 4)) for i in range(2)]
    combined = PolicyAgent(with_endgame(base, lates, 2, tmp_path / "out.npz"))
    obs, fewest = positions(100, 5)
    expected = PolicyAgent(base).logits(obs)
    extra = sum(PolicyAgent(late).logits(obs) for late in lates)
    extra[:, list(DECLARE_ACTIONS)] = 0.0
    expected[fewest <= 2] += extra[fewest <= 2]
    np.testing.assert_allclose(combined.logits(obs), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="has depth 2 .* the files must agree"):
        with_endgame(base, [lates[0], write(tmp_path / "deep.npz", 3, widths=(4,))], 1, tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="at least one endgame network"):
        with_endgame(base, [], 1, tmp_path / "bad.npz")


def test_a_file_with_an_endgame_network_plays_a_hand_and_is_refused_where_one_mlp_is_needed(tmp_path) -> None:
    base, late = write(tmp_path / "base.npz", 0), write(tmp_path / "late.npz", 1)
    combined = with_endgame(base, late, 2, tmp_path / "out.npz")
    agent = PolicyAgent(combined)
    env = raw_env(num_players=4)
    env.reset(seed=3)
    for _ in range(2000):
        if not env.agents:
            break
        _, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else agent.act(env.observe(env.agent_selection)))
    assert not env.agents  # the hand ended
    for build, who in ((lambda: ExpertAgent(RuleSet(), 4, rollouts=agent), "expert rollouts"),
                       (lambda: ExpertAgent(RuleSet(), 4, policy=agent, rollouts="policy"), "expert rollouts"),
                       (lambda: average_policies([combined, base], tmp_path / "avg.npz"), "average_policies"),
                       (lambda: with_endgame(combined, late, 1, tmp_path / "again.npz"), "with_endgame")):
        with pytest.raises(ValueError, match=f"{who}.*has an endgame network"):
            build()
    assert ExpertAgent(RuleSet(), 4, policy=agent).policy is agent  # the guide's logits are read in Python


def test_bad_endgame_files_and_arguments_are_refused(tmp_path) -> None:
    base, late = write(tmp_path / "base.npz", 0), write(tmp_path / "late.npz", 1)
    with pytest.raises(ValueError, match="max_cards=0 is invalid"):
        with_endgame(base, late, 0, tmp_path / "out.npz")
    with pytest.raises(ValueError, match="has num_players 2 .* the files must agree"):
        with_endgame(base, write(tmp_path / "p2.npz", 2, players=2), 1, tmp_path / "out.npz")
    good = with_endgame(base, late, 1, tmp_path / "good.npz")
    with np.load(good) as data:
        arrays = {key: data[key] for key in data.files}
    meta = json.loads(str(arrays["meta"]))
    for name, change, message in (
            ("no-max.npz", lambda m, a: m.pop("endgame"), "needs endgame: {max_cards"),
            ("zero-max.npz", lambda m, a: m.update(endgame={"max_cards": 0}), "needs endgame: {max_cards"),
            ("v1-extra.npz", lambda m, a: m.update(version=1), "holds no endgame network"),
            ("v3.npz", lambda m, a: m.update(version=3), "is not a c8env-policy v1 or v2 file"),
            ("short.npz", lambda m, a: (a.pop("endgame_w2"), a.pop("endgame_b2")),
             "the last layer of the endgame network gives 6 outputs")):
        changed_meta, changed = dict(meta), dict(arrays)
        change(changed_meta, changed)
        changed["meta"] = np.array(json.dumps(changed_meta))
        np.savez(tmp_path / name, **changed)
        with pytest.raises(ValueError, match=message):
            PolicyAgent(tmp_path / name)


def test_the_specialise_command_adds_an_endgame_network(tmp_path, capsys) -> None:
    base, specialist, late = (write(tmp_path / f"{name}.npz", seed) for seed, name in enumerate(("b", "s", "e")))
    out = tmp_path / "out.npz"
    specialise_main([str(out), str(base), str(specialist), "--endgame", str(late), "--endgame-cards", "2"])
    combined = PolicyAgent(out)
    assert combined.endgame_cards == 2 and "e.npz" in combined.meta["description"]
    obs, fewest = positions(100, 4)
    declaring = np.zeros((100, 60), dtype=np.int8)
    declaring[:, list(DECLARE_ACTIONS)] = 1
    assert combined.act_batch(obs, declaring).tolist() == PolicyAgent(specialist).act_batch(obs, declaring).tolist()
    early = fewest > 2
    np.testing.assert_allclose(combined.logits(obs[early])[:, :52], PolicyAgent(base).logits(obs[early])[:, :52],
                               rtol=1e-5, atol=1e-5)
    specialise_main([str(tmp_path / "only.npz"), str(base), "--endgame", str(late)])  # no declaration specialist
    assert PolicyAgent(tmp_path / "only.npz").endgame_cards == 1
    specialise_main([str(tmp_path / "two.npz"), str(base), "--endgame", str(late), "--endgame", str(specialist)])
    np.testing.assert_allclose(PolicyAgent(tmp_path / "two.npz").logits(obs[early]), PolicyAgent(base).logits(obs[early]),
                               rtol=1e-5, atol=1e-5)
    assert PolicyAgent(tmp_path / "two.npz").endgame_layers[0][0].shape[0] == 16  # two networks of 8, side by side
    capsys.readouterr()
    for argv, message in (([str(tmp_path / "o.npz"), str(base)], "give a SPECIALIST, an --endgame network, or both"),
                          ([str(tmp_path / "o.npz"), str(base), "--endgame", str(late), "--endgame-cards", "0"],
                           "0 is invalid; allowed: an int >= 1")):
        with pytest.raises(SystemExit) as exit_info:
            specialise_main(argv)
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err
