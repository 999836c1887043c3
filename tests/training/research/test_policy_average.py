"""Averaged and specialised policy files: one MLP whose logits are the mean of its members' logits, or a
specialist's for some actions and a base's for the others, played as any policy file; files that disagree are
refused, naming what differs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from c8env import agents, raw_env
from c8env.actions import DECLARE_ACTIONS
from c8env.agents.policy import PolicyAgent, save_policy
from c8env.observation import OBS_SIZE
from training.research.average import main
from training.research.specialise import main as specialise_main
from training.research.surgery import average_policies, specialise_policies

RETIRED = Path(__file__).resolve().parents[3] / "training" / "research" / "policies"


def write(path, seed: int, widths: tuple[int, ...] = (8, 6), activation: str = "tanh", players: int = 2,
          rules: dict | None = None):
    rng = np.random.default_rng(seed)
    sizes = (OBS_SIZE, *widths, 60)
    layers = [(rng.normal(size=(out, inp)), rng.normal(size=out)) for inp, out in zip(sizes, sizes[1:], strict=False)]
    return save_policy(path, layers, activation, players, rules or {"wild_rank": "8"})


@pytest.mark.parametrize("widths, activation", [((8, 6), "tanh"), ((5,), "relu"), ((), "tanh"), ((4, 7, 3), "relu")])
def test_the_average_plays_the_mean_of_its_members_logits(tmp_path, widths, activation) -> None:
    paths = [write(tmp_path / f"m{i}.npz", i, widths, activation) for i in range(3)]
    average = PolicyAgent(average_policies(paths, tmp_path / "avg.npz"))
    members = [PolicyAgent(p) for p in paths]
    batch = np.random.default_rng(9).random((50, OBS_SIZE), dtype=np.float32)
    expected = sum(m.logits(batch) for m in members) / 3
    np.testing.assert_allclose(average.logits(batch), expected, rtol=1e-5, atol=1e-5)
    assert len(average.layers) == len(members[0].layers)
    assert average.meta["num_players"] == 2 and average.meta["activation"] == activation
    assert "m0.npz" in average.meta["description"]


def test_an_average_of_shipped_clones_plays_a_hand(tmp_path) -> None:
    out = tmp_path / "new" / "folder" / "avg.npz"  # its folder is created
    main([str(out), str(RETIRED / "iter3-rollouts-standard-2p.npz"),
          str(RETIRED / "iter4-rollouts-standard-2p.npz")])
    seats = {"player_0": agents.load(str(out)), "player_1": agents.load("greedy")}
    env = raw_env(num_players=2)
    env.reset(seed=3)
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else seats[agent].act(env.observe(agent)))
    assert not env.agents  # the hand ended
    assert out.stat().st_size < 2 * (RETIRED / "iter4-rollouts-standard-2p.npz").stat().st_size  # zeros packed


@pytest.mark.parametrize("other, named", [
    ({"activation": "relu"}, "activation"), ({"widths": (8,)}, "depth"), ({"players": 4}, "num_players"),
    ({"rules": {"wild_rank": "A"}}, "rules")])
def test_files_that_disagree_are_refused(tmp_path, other, named) -> None:
    first = write(tmp_path / "a.npz", 0)
    second = write(tmp_path / "b.npz", 1, **other)
    with pytest.raises(ValueError, match=f"has {named} .* the files must agree"):
        average_policies([first, second], tmp_path / "avg.npz")


def test_the_command_refuses_bad_input(tmp_path, capsys) -> None:
    one = write(tmp_path / "a.npz", 0)
    for argv, message in (([str(tmp_path / "avg.npz"), str(one)], "at least 2 policy files"),
                          ([str(tmp_path / "avg.txt"), str(one), str(one)], "does not end in .npz"),
                          ([str(tmp_path / "avg.npz"), str(one), str(tmp_path / "missing.npz")], "does not exist"),
                          ([str(one / "avg.npz"), str(one), str(one)], "exists and is not a folder")):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("widths, activation", [((8, 6), "tanh"), ((5,), "relu"), ((), "tanh")])
def test_a_specialised_policy_takes_the_specialists_logits_of_its_actions_and_the_bases_of_the_others(
        tmp_path, widths, activation) -> None:
    base, specialist = (write(tmp_path / f"{name}.npz", seed, widths, activation)
                        for seed, name in enumerate(("base", "spec")))
    combined = PolicyAgent(specialise_policies(base, specialist, list(DECLARE_ACTIONS), tmp_path / "out.npz"))
    batch = np.random.default_rng(9).random((50, OBS_SIZE), dtype=np.float32)
    expected = PolicyAgent(base).logits(batch)
    expected[:, list(DECLARE_ACTIONS)] = PolicyAgent(specialist).logits(batch)[:, list(DECLARE_ACTIONS)]
    np.testing.assert_allclose(combined.logits(batch), expected, rtol=1e-5, atol=1e-5)
    assert len(combined.layers) == len(PolicyAgent(base).layers)


def test_the_specialise_command_writes_a_file_that_declares_as_the_specialist_and_refuses_bad_input(
        tmp_path, capsys) -> None:
    base, specialist = write(tmp_path / "base.npz", 0), write(tmp_path / "spec.npz", 1)
    out = tmp_path / "new" / "folder" / "out.npz"  # its folder is created
    specialise_main([str(out), str(base), str(specialist)])
    declaring = np.zeros(60, dtype=np.int8)
    declaring[list(DECLARE_ACTIONS)] = 1
    for seed in range(20):
        observation = {"observation": np.random.default_rng(seed).random(OBS_SIZE, dtype=np.float32),
                       "action_mask": declaring}
        assert PolicyAgent(out).act(observation) == PolicyAgent(specialist).act(observation)
    for argv, message in (([str(tmp_path / "o.npz"), str(base), str(write(tmp_path / "p4.npz", 2, players=4))],
                           "has num_players 4"),
                          ([str(tmp_path / "o.npz"), str(base), str(specialist), "--actions", "play"],
                           "invalid choice"),
                          ([str(base / "o.npz"), str(base), str(specialist)], "exists and is not a folder")):
        with pytest.raises(SystemExit) as exit_info:
            specialise_main(argv)
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err
