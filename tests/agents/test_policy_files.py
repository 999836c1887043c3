"""Policy files read again: the same bytes are parsed once and their agents share read-only layers; a file
rewritten in place (same size, other weights) is read anew."""

from __future__ import annotations

import numpy as np
import pytest

from c8env.agents.policy import PolicyAgent, save_policy
from c8env.observation import OBS_SIZE


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
