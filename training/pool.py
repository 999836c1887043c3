"""The self-play opponent pool: random, greedy, (optionally) expert and frozen snapshots of the learner.

:class:`OpponentPool` is what each environment calls at every reset
(``SingleAgentEnv(opponents=pool)``): it samples an opponent kind with the configured
mixing weights and returns one agent spec per opponent seat. A ``self`` opponent is
a snapshot file, a policy exported with :func:`training.export.export_policy` and
played with NumPy alone, so the environment worker processes never import torch.

:class:`Snapshots` is the learner process's list of snapshot files (saved in
checkpoints); after each new snapshot the learner pushes the list to every
environment (``vec_env.env_method("set_snapshots", paths)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from training.config import POOL_KINDS


class OpponentPool:
    """Samples the opponents of one episode: ``pool(rng) -> [spec per opponent seat]``.

    ``weights`` maps kinds (``random``, ``greedy``, ``expert``, ``self``) to mixing weights;
    ``self`` is available once a snapshot exists (until then its weight goes to the
    other kinds, proportionally). With ``per_seat`` each opponent seat samples its own
    kind; otherwise one kind seats the whole table. A ``self`` seat plays a snapshot
    drawn uniformly from the pool. :attr:`last_kinds` holds the kinds of the last call.
    """

    def __init__(self, weights: Mapping[str, float], num_players: int, expert_spec: str = "expert",
                 per_seat: bool = False, snapshots: Sequence[str | Path] = ()) -> None:
        unknown = sorted(set(weights) - set(POOL_KINDS))
        if unknown:
            raise ValueError(f"unknown opponent kind(s) {unknown}; allowed: {', '.join(POOL_KINDS)}")
        if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ValueError(f"opponent weights {dict(weights)} must be >= 0 with a positive sum")
        self.weights = {kind: float(weights.get(kind, 0.0)) for kind in POOL_KINDS}
        self.num_players = num_players
        self.expert_spec = expert_spec
        self.per_seat = per_seat
        self.snapshots: list[str] = []
        self.last_kinds: list[str] = []
        self.set_snapshots(snapshots)

    def set_snapshots(self, paths: Sequence[str | Path]) -> None:
        """Replace the snapshot files the ``self`` kind draws from."""
        self.snapshots = [str(p) for p in paths]

    def probabilities(self) -> dict[str, float]:
        """The probability of each kind now (``self`` is 0 while there is no snapshot)."""
        weights = dict(self.weights)
        if not self.snapshots:
            weights["self"] = 0.0
        total = sum(weights.values())
        if total <= 0:
            raise ValueError("the opponent pool has only 'self' weight but no snapshot yet")
        return {kind: w / total for kind, w in weights.items()}

    def _spec(self, kind: str, rng: np.random.Generator) -> str:
        if kind == "self":
            return self.snapshots[int(rng.integers(len(self.snapshots)))]
        if kind == "expert":
            return self.expert_spec
        return kind

    def __call__(self, rng: np.random.Generator) -> list[str]:
        probs = self.probabilities()
        kinds, p = list(probs), np.array(list(probs.values()))
        seats = self.num_players - 1
        if self.per_seat:
            picked = [kinds[i] for i in rng.choice(len(kinds), size=seats, p=p)]
        else:
            picked = [kinds[int(rng.choice(len(kinds), p=p))]] * seats
        self.last_kinds = picked
        return [self._spec(kind, rng) for kind in picked]

    def label(self) -> str:
        """The kind of the last call's table (``mixed`` when seats differ)."""
        kinds = set(self.last_kinds)
        return kinds.pop() if len(kinds) == 1 else "mixed"


class Snapshots:
    """The learner process's snapshot files: ``(step, path)`` pairs, the most recent ``limit`` kept."""

    def __init__(self, folder: str | Path, limit: int, entries: Sequence[tuple[int, str]] = ()) -> None:
        self.folder = Path(folder)
        self.limit = limit
        self.entries: list[tuple[int, str]] = [(int(step), str(path)) for step, path in entries]

    def path_for(self, step: int) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / f"snapshot_{step:010d}.npz"

    def add(self, step: int, path: str | Path) -> None:
        """Record a written snapshot file; the oldest beyond ``limit`` are dropped and deleted."""
        self.entries = [(s, p) for s, p in self.entries if s != step] + [(step, str(path))]
        while len(self.entries) > self.limit:
            _, old = self.entries.pop(0)
            Path(old).unlink(missing_ok=True)

    @property
    def paths(self) -> list[str]:
        return [path for _, path in self.entries]

    def to_dict(self) -> dict[str, Any]:
        return {"limit": self.limit, "entries": [[s, p] for s, p in self.entries]}

    @classmethod
    def from_dict(cls, folder: str | Path, data: Mapping[str, Any]) -> Snapshots:
        entries = [(s, p) for s, p in data.get("entries", []) if Path(p).is_file()]
        return cls(folder, int(data.get("limit", 20)), entries)


__all__ = ["OpponentPool", "Snapshots"]
