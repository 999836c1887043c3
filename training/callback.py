"""The SB3 side of a run: the recording callback, the shaping network's refresh and the log writers (imports
Stable-Baselines3 and torch)."""

from __future__ import annotations

import csv
import sys
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import CSVOutputFormat, Logger, TensorBoardOutputFormat, filter_excluded_keys
from tqdm import tqdm

from c8env.tools.maskable_ppo import policy_layers
from training.model import LinearDecay
from training.pool import OpponentPool

_STEP_KEY = "time/total_timesteps"


class ResumableCSVOutputFormat(CSVOutputFormat):
    """SB3's CSV writer, continuing an existing file: rows logged after ``resume_step`` (work lost when a run
    was killed after its last checkpoint) are dropped, the others kept."""

    def __init__(self, filename: str | Path, resume_step: int | None = None) -> None:
        path = Path(filename)
        rows: list[list[str]] = []
        header: list[str] = []
        if resume_step is not None and path.is_file():
            with path.open(newline="") as fh:
                reader = csv.reader(fh)
                header = next(reader, [])
                rows = list(reader)
            if _STEP_KEY in header:
                column = header.index(_STEP_KEY)
                rows = [r for r in rows if column >= len(r) or not r[column] or float(r[column]) <= resume_step]
        self.file = path.open("w+", newline="")
        self.keys = list(header)
        self.separator = ","
        self.quotechar = '"'
        if header:
            writer = csv.writer(self.file, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
            self.file.flush()

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        values = filter_excluded_keys(key_values, key_excluded, "csv")
        extra = sorted(set(values) - set(self.keys))
        if extra:  # rewrite the file with the new columns (sorted, so related keys sit together)
            self.keys.extend(extra)
            self.file.seek(0)
            rows = list(csv.reader(self.file))[1:]
            self.file.seek(0)
            self.file.truncate()
            writer = csv.writer(self.file, lineterminator="\n")
            writer.writerow(self.keys)
            writer.writerows(row + [""] * (len(self.keys) - len(row)) for row in rows)
        row = ["" if values.get(key) is None else values[key] for key in self.keys]
        csv.writer(self.file, lineterminator="\n").writerow(row)
        self.file.flush()


class ShapingRefresh(BaseCallback):
    """``shaping: self``: at each rollout's start the envs' play-outs take the actor's current weights
    (:meth:`training.batched.BatchedVecEnv.set_shaping_policy`)."""

    def _on_rollout_start(self) -> None:
        self.training_env.env_method("set_shaping_policy", *policy_layers(self.model.policy))

    def _on_step(self) -> bool:
        return True


def make_logger(folder: Path, resume_step: int | None) -> Logger:
    """CSV (``progress.csv``) and TensorBoard (``tb/``) logs in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    formats = [ResumableCSVOutputFormat(folder / "progress.csv", resume_step), TensorBoardOutputFormat(str(folder / "tb"))]
    return Logger(folder=str(folder), output_formats=formats)


class Recorder(BaseCallback):
    """What :func:`training.train.train` passes to each ``model.learn()`` call: it only records and raises flags.

    It records the training win rates per opponent kind and the pool's probabilities
    (``train/``, ``pool/`` at each rollout's end), shows a progress bar, keeps a
    ``linear`` learning rate on the run's global step (:class:`training.model.LinearDecay`),
    and raises :attr:`stop_requested` on SIGINT/SIGTERM (:meth:`request_stop` is the signal
    handler): ``learn()`` then returns at the next env step, and :attr:`in_rollout` says the
    rollout begun at :attr:`rollout_step` was cut short (never trained on).
    """

    def __init__(self, total_steps: int, run_name: str, pool: OpponentPool, progress: bool = True,
                 window: int = 500) -> None:
        super().__init__()
        self.total_steps = total_steps
        self.run_name = run_name
        self.pool = pool  # the learner's copy of the envs' pool (the run updates its snapshots)
        self.progress = progress
        self.results: dict[str, deque] = defaultdict(lambda: deque(maxlen=window))
        self.stop_requested = False
        self.rollout_step = -1  # the step at the start of the last rollout (-1: none yet)
        self.in_rollout = False
        self.status = ""  # shown beside the progress bar (the last evaluation)
        self.bar: tqdm | None = None

    def request_stop(self, signum: int, frame: Any) -> None:
        """SIGINT/SIGTERM: stop at the next env step; a second signal stops at once (KeyboardInterrupt)."""
        if self.stop_requested:
            raise KeyboardInterrupt
        self.stop_requested = True  # (no printing here: the main thread may be inside a write)

    def _on_training_start(self) -> None:
        if self.progress and self.bar is None:
            tty = sys.stderr.isatty()
            self.bar = tqdm(total=self.total_steps, initial=self.num_timesteps, unit="step", unit_scale=True,
                            file=sys.stderr, dynamic_ncols=True, mininterval=0.5 if tty else 30, desc=self.run_name)

    def _on_rollout_start(self) -> None:
        self.rollout_step = self.num_timesteps
        self.in_rollout = True
        if self.bar is not None and self.status:
            self.bar.set_postfix_str(self.status, refresh=False)

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if done and "opponent_kind" in info:
                self.results[info["opponent_kind"]].append(bool(info["learner_won"]))
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return not self.stop_requested  # False ends model.learn() before the rollout is trained on

    def _on_rollout_end(self) -> None:
        self.in_rollout = False
        if isinstance(self.model.learning_rate, LinearDecay):  # read by the PPO update that follows
            self.model.learning_rate.set_step(self.num_timesteps, self.total_steps)
        for kind, results in sorted(self.results.items()):
            if results:
                self.logger.record(f"train/win_rate_vs_{kind}", sum(results) / len(results))
        for kind, p in self.pool.probabilities().items():
            self.logger.record(f"pool/p_{kind}", p)
        self.logger.record("pool/size", len(self.pool.snapshots))

    def close(self) -> None:
        """Close the progress bar (the run ends; each ``learn()`` call leaves it open for the next)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def write(self, text: str) -> None:
        """Print a line to stderr without breaking the progress bar."""
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)


__all__ = ["Recorder", "ResumableCSVOutputFormat", "ShapingRefresh", "make_logger"]
