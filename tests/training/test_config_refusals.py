"""Training configs refuse what they cannot mean: a ``--set`` key given twice (also through a shortcut flag), a
dict field set whole and by entry, unknown keys, and config files naming a key twice; one line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.config import load_config, parse_overrides

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT = ROOT / "configs/train/default.yaml"


@pytest.mark.parametrize("overrides, words", [
    (["total_steps=1", "total_steps=2"], ["config key 'total_steps' is set twice", "set each key once"]),
    (["seed=1", "n_envs=4", "seed=1"], ["config key 'seed' is set twice"]),  # even to the same value
    (["opponent_weights.greedy=1", "opponent_weights.greedy=2"], ["'opponent_weights.greedy' is set twice"]),
    (["opponent_weights={greedy: 1}", "opponent_weights.self=1"], ["'opponent_weights.self' is set twice",
                                                                   "as 'opponent_weights' before"]),
    (["opponent_weights.self=1", "opponent_weights={greedy: 1}"], ["'opponent_weights' is set twice"]),
    (["opponent_weights={greedy: 1, greedy: 2}"], ["override 'opponent_weights={greedy: 1, greedy: 2}' is invalid",
                                                    "the key 'greedy' appears twice"]),
    (["totl_steps=5"], ["unknown config key 'totl_steps'", "did you mean 'total_steps'"]),
    (["opponent_weights.gredy=1"], ["unknown kind(s) ['gredy']"]),
    (["n_envs=0"], ["config key 'n_envs' = 0 is invalid"]),
])
def test_overrides_refuse_repeated_and_unknown_keys(overrides, words) -> None:
    with pytest.raises(ValueError) as info:
        load_config(DEFAULT, overrides)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message


def test_different_entries_of_one_dict_field_may_both_be_set() -> None:
    config = load_config(DEFAULT, ["opponent_weights.greedy=1", "opponent_weights.self=0.5"])
    assert config.opponent_weights["greedy"] == 1.0 and config.opponent_weights["self"] == 0.5
    assert parse_overrides(["pretrain_agent=\"expert:simulations=5,simulations=7\""])[0][0] == "pretrain_agent"


def test_a_shortcut_flag_and_set_of_the_same_key_are_refused(capsys) -> None:
    from training.train import main

    with pytest.raises(SystemExit) as info:
        main(["--config", str(DEFAULT), "--set", "total_steps=5", "--total-steps", "7", "--print-config"])
    assert info.value.code == 2
    assert "config key 'total_steps' is set twice" in capsys.readouterr().err


def test_a_config_file_naming_a_key_twice_is_refused(tmp_path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text("n_envs: 4\nlearning_rate: 1e-3\nn_envs: 8\n")
    with pytest.raises(ValueError) as info:
        load_config(path)
    message = str(info.value)
    assert "twice.yaml" in message and "line 3" in message and "'n_envs' appears twice (first on line 1)" in message
    path.write_text("opponent_weights: {greedy: 1, greedy: 2}\n")
    with pytest.raises(ValueError, match="'greedy' appears twice"):
        load_config(path)
