"""Policy files read again: the same bytes are parsed once and their agents share read-only layers; a file
rewritten in place (same size, other weights) is read anew."""

from __future__ import annotations

import numpy as np
import pytest

from c8env.agents.policy import PolicyAgent, save_policy
from c8env.observation import LEGACY_OBS_SIZE, OBS_SIZE


def layers(seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(8, OBS_SIZE)), rng.normal(size=8)), (rng.normal(size=(60, 8)), rng.normal(size=60))]


def test_a_policy_file_read_again_is_shared_until_it_changes(tmp_path) -> None:
    path = tmp_path / "p.npz"
    save_policy(path, layers(0), "tanh", 2, {})
    first, again = PolicyAgent(path), PolicyAgent(path)
    assert first.layers[0][0] is again.layers[0][0]
    with pytest.raises(ValueError, match="read-only"):
        first.layers[0][0][0, 0] = 1.0
    size = path.stat().st_size
    save_policy(path, layers(1), "tanh", 2, {})  # the same shapes: the same size, at once
    changed = PolicyAgent(path)
    assert path.stat().st_size == size
    observation = np.random.default_rng(2).random(OBS_SIZE, dtype=np.float32)
    (w0, b0), (w1, b1) = ((w.astype(np.float32), b.astype(np.float32)) for w, b in layers(1))
    assert np.array_equal(changed.logits(observation), np.tanh(observation @ w0.T + b0) @ w1.T + b1)
    assert not np.array_equal(changed.logits(observation), first.logits(observation))


def test_a_legacy_network_reads_the_first_entries_of_the_vector(tmp_path) -> None:
    """A file saved for the 245-entry vector (before opponent_last_draws) plays as a network of today's size whose
    weights on the new entries are zero; other input sizes are refused."""
    small = [(w[:, :LEGACY_OBS_SIZE], b) for w, b in layers(3)]
    save_policy(tmp_path / "legacy.npz", small, "tanh", 4, {})
    widened = [(np.pad(small[0][0], ((0, 0), (0, OBS_SIZE - LEGACY_OBS_SIZE))), small[0][1]), small[1]]
    save_policy(tmp_path / "wide.npz", widened, "tanh", 4, {})
    legacy, wide = PolicyAgent(tmp_path / "legacy.npz"), PolicyAgent(tmp_path / "wide.npz")
    assert (legacy.meta["obs_size"], wide.meta["obs_size"]) == (LEGACY_OBS_SIZE, OBS_SIZE)
    observations = np.random.default_rng(4).random((5, OBS_SIZE), dtype=np.float32)
    np.testing.assert_allclose(legacy.logits(observations), wide.logits(observations), rtol=1e-5, atol=1e-5)
    masks = np.ones((5, 60), dtype=np.int8)
    assert legacy.act({"observation": observations[0], "action_mask": masks[0]}) == int(np.argmax(wide.logits(observations[0])))
    with pytest.raises(ValueError, match=r"the first layer takes observations of 300 entries; c8env's observations have "
                                         r"401 or 245 entries \(v0 245, v1 245, v2 401\)"):
        save_policy(tmp_path / "bad.npz", [(np.zeros((60, 300)), np.zeros(60))], "tanh", 4, {})
