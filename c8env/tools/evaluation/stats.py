"""Statistics of evaluations: Wilson intervals, per-agent totals, the table of a lineup and a league's results."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from c8env.episode import MAX_HAND_STEPS
from c8env.rules import RuleSet
from c8env.tools.evaluation.deals import HandRecord


def wilson_interval(wins: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class AgentStats:
    """Totals for one lineup entry."""

    name: str
    hands: int = 0
    wins: int = 0
    points: int = 0
    illegal: int = 0  # hands this agent lost by an illegal move

    @property
    def win_rate(self) -> float:
        return self.wins / self.hands if self.hands else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.hands)


@dataclass
class Table:
    """The result of :func:`evaluate`."""

    specs: list[str]
    num_players: int
    rules: RuleSet
    deals: int
    seed: int
    records: list[HandRecord]
    seconds: float
    stats: list[AgentStats] = field(init=False)

    def __post_init__(self) -> None:
        self.stats = [AgentStats(spec) for spec in self.specs]
        for record in self.records:
            for index in set(record.seats):
                copies = record.seats.count(index)
                self.stats[index].hands += copies
                self.stats[index].points += record.transfers[index]
            if record.winner is not None:
                self.stats[record.winner].wins += 1
            if record.forfeit is not None:
                self.stats[record.forfeit].illegal += 1

    @property
    def hands(self) -> int:
        return len(self.records)

    @property
    def mean_length(self) -> float:
        return sum(r.steps for r in self.records) / max(1, self.hands)

    @property
    def ties(self) -> int:
        return sum(1 for r in self.records if r.winner is None and not r.truncated)

    @property
    def truncated(self) -> int:
        return sum(1 for r in self.records if r.truncated)

    def illegal_moves(self) -> dict[str, tuple[int, str]]:
        """Per agent that answered illegal moves: how many hands they ended, and the first one, in words."""
        first: dict[int, str] = {}
        for record in self.records:
            if record.forfeit is not None:
                first.setdefault(record.forfeit, record.message)
        return {self.specs[i]: (self.stats[i].illegal, message) for i, message in sorted(first.items())}

    @property
    def games_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds else float("inf")

    def rows(self) -> list[dict[str, Any]]:
        """One dict per lineup entry (for CSV/JSON)."""
        out = []
        for stats in self.stats:
            low, high = stats.interval
            out.append({
                "agent": stats.name, "hands": stats.hands, "wins": stats.wins, "win_rate": round(stats.win_rate, 4),
                "ci_low": round(low, 4), "ci_high": round(high, 4),
                "points_per_hand": round(stats.points / max(1, stats.hands), 3), "illegal": stats.illegal,
            })
        return out

    def markdown(self) -> str:
        """A markdown table of the results."""
        lines = [
            f"{self.num_players} players, {self.deals} deals x {self.num_players} rotations = {self.hands} hands, "
            f"seed {self.seed}; mean hand length {self.mean_length:.1f} steps; ties {self.ties}; "
            + (f"cut off at {MAX_HAND_STEPS:,} moves (no winner) {self.truncated}; " if self.truncated else "")
            + f"{self.games_per_second:,.0f} hands/s",
            *(f"{name}: {count} illegal move(s), each ending its hand as {name}'s loss; first: {message}"
              for name, (count, message) in self.illegal_moves().items()),
            "",
            "| agent | seats/hand | hands | win rate | 95% CI | points/hand |",
            "|---|---|---|---|---|---|",
        ]
        per_hand = {i: self.records[0].seats.count(i) if self.records else 0 for i in range(len(self.specs))}
        for i, row in enumerate(self.rows()):
            lines.append(
                f"| {row['agent']} | {per_hand[i]} | {row['hands']} | {row['win_rate']:.1%} | "
                f"[{row['ci_low']:.1%}, {row['ci_high']:.1%}] | {row['points_per_hand']:+.2f} |"
            )
        return "\n".join(lines)


@dataclass
class League:
    """A round robin: every pair of agents head to head, a win-rate matrix and OpenSkill ratings."""

    specs: list[str]
    tables: dict[tuple[int, int], Table]
    ratings: list[tuple[float, float]]  # (mu, sigma) per agent

    def win_matrix(self) -> np.ndarray:
        """``m[i, j]``: agent i's win rate against agent j (NaN on the diagonal)."""
        k = len(self.specs)
        m = np.full((k, k), np.nan)
        for (i, j), table in self.tables.items():
            m[i, j] = table.stats[0].win_rate
            m[j, i] = table.stats[1].win_rate
        return m

    def rows(self) -> list[dict[str, Any]]:
        matrix = self.win_matrix()
        out = []
        for i, spec in enumerate(self.specs):
            mu, sigma = self.ratings[i]
            row: dict[str, Any] = {"agent": spec, "mu": round(mu, 3), "sigma": round(sigma, 3),
                                   "ordinal": round(mu - 3 * sigma, 3)}
            for j, other in enumerate(self.specs):
                row[f"vs {other}"] = None if i == j else round(float(matrix[i, j]), 4)
            out.append(row)
        return out

    def markdown(self) -> str:
        matrix = self.win_matrix()
        order = sorted(range(len(self.specs)), key=lambda i: -(self.ratings[i][0] - 3 * self.ratings[i][1]))
        head = "| agent | OpenSkill mu | sigma | ordinal | " + " | ".join(f"vs {self.specs[j]}" for j in order) + " |"
        lines = [head, "|" + "---|" * (4 + len(order))]
        for i in order:
            mu, sigma = self.ratings[i]
            cells = ["—" if i == j else f"{matrix[i, j]:.1%}" for j in order]
            lines.append(f"| {self.specs[i]} | {mu:.2f} | {sigma:.2f} | {mu - 3 * sigma:.2f} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


__all__ = ["AgentStats", "League", "Table", "wilson_interval"]
