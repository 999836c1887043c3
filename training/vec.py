"""``MaskedSubprocVecEnv``: SB3's SubprocVecEnv, with several envs per worker process and torch-free workers.

Each of ``n_workers`` processes (``forkserver`` start) steps a contiguous share of the
``n_envs`` environments, so one pipe round trip moves several transitions (c8env's
envs are cheap: a step costs far less than a pipe round trip). Each ``step``/``reset``
reply carries the next action masks, so MaskablePPO's ``env_method("action_masks")``
is answered locally. The workers run :func:`training.envs.worker` (NumPy and c8env
only: no torch, no Stable-Baselines3).
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from training.envs import Pickled, make_env, worker


class MaskedSubprocVecEnv(VecEnv):
    """``n_envs`` envs from ``env_fns`` in ``n_workers`` subprocesses."""

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]], n_workers: int = 2,
                 start_method: str | None = None) -> None:
        n_envs = len(env_fns)
        n_workers = max(1, min(n_workers, n_envs))
        if start_method is None:
            start_method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
        ctx = mp.get_context(start_method)
        bounds = np.linspace(0, n_envs, n_workers + 1).round().astype(int)
        self.shares = [range(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        self.home = [(w, i - share.start) for w, share in enumerate(self.shares) for i in share]
        self.remotes, self.processes = [], []
        for share in self.shares:
            remote, work_remote = ctx.Pipe()
            thunks = Pickled([env_fns[i] for i in share])
            process = ctx.Process(target=worker, args=(work_remote, remote, thunks), daemon=True)
            process.start()
            work_remote.close()
            self.remotes.append(remote)
            self.processes.append(process)
        self.waiting = False
        self.closed = False
        self._pending = [0] * len(self.remotes)  # replies owed by each worker (drained by close())
        self._masks: list[np.ndarray] | None = None
        self._send(0, ("get_spaces", None))
        observation_space, action_space = self._recv(0)
        super().__init__(n_envs, observation_space, action_space)

    def _send(self, w: int, message: tuple) -> None:
        self.remotes[w].send(message)
        self._pending[w] += 1

    def _recv(self, w: int) -> Any:
        reply = self.remotes[w].recv()
        self._pending[w] -= 1
        return reply

    # ----- stepping ------------------------------------------------------------------------------
    def step_async(self, actions: np.ndarray) -> None:
        for w, share in enumerate(self.shares):
            self._send(w, ("step", actions[share.start:share.stop]))
        self.waiting = True

    def step_wait(self) -> Any:
        replies = [reply for w in range(len(self.remotes)) for reply in self._recv(w)]
        self.waiting = False
        obs, rewards, dones, infos, reset_infos, masks = zip(*replies, strict=True)
        self.reset_infos = list(reset_infos)
        self._masks = list(masks)
        return np.stack(obs), np.stack(rewards), np.stack(dones), infos

    def reset(self) -> np.ndarray:
        for w, share in enumerate(self.shares):
            self._send(w, ("reset", [(self._seeds[i], self._options[i]) for i in share]))
        replies = [reply for w in range(len(self.remotes)) for reply in self._recv(w)]
        obs, reset_infos, masks = zip(*replies, strict=True)
        self.reset_infos = list(reset_infos)
        self._masks = list(masks)
        self._reset_seeds()
        self._reset_options()
        return np.stack(obs)

    def close(self) -> None:
        """Stop the workers, even after an interrupted call (the replies still owed are drained first)."""
        if self.closed:
            return
        self.closed = True
        for w, remote in enumerate(self.remotes):
            try:
                while self._pending[w] > 0 and remote.poll(10):
                    self._recv(w)
                remote.send(("close", None))
            except (OSError, EOFError):
                pass
        for process in self.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
        for remote in self.remotes:
            remote.close()

    # ----- per-env calls, routed to the owning worker --------------------------------------------
    def _call(self, cmd: str, make: Callable[[list[int]], Any], indices: Any) -> list[Any]:
        by_worker: dict[int, list[tuple[int, int]]] = {}
        for position, index in enumerate(self._get_indices(indices)):
            w, local = self.home[index]
            by_worker.setdefault(w, []).append((position, local))
        for w, items in by_worker.items():
            self._send(w, (cmd, make([local for _, local in items])))
        out: list[Any] = [None] * sum(len(items) for items in by_worker.values())
        for w, items in by_worker.items():
            for (position, _), value in zip(items, self._recv(w), strict=True):
                out[position] = value
        return out

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks" and not method_args and not method_kwargs and self._masks is not None:
            return [self._masks[i] for i in self._get_indices(indices)]
        return self._call("env_method", lambda local: (method_name, method_args, method_kwargs, local), indices)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return self._call("get_attr", lambda local: (attr_name, local), indices)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        by_worker: dict[int, list[int]] = {}
        for index in self._get_indices(indices):
            w, local = self.home[index]
            by_worker.setdefault(w, []).append(local)
        for w, local in by_worker.items():
            self._send(w, ("set_attr", (attr_name, value, local)))
        for w in by_worker:
            self._recv(w)

    def has_attr(self, attr_name: str) -> bool:
        for w in range(len(self.remotes)):
            self._send(w, ("has_attr", attr_name))
        return all([self._recv(w) for w in range(len(self.remotes))])

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: Any = None) -> list[bool]:
        name = f"{wrapper_class.__module__}.{wrapper_class.__qualname__}"  # the class itself would import SB3 there
        return self._call("is_wrapped", lambda local: (name, local), indices)

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs


def make_vec_env(config: Any, snapshots: list[str]) -> VecEnv:
    """``config.n_envs`` training envs, not yet seeded: one batch of the batched engine (``vec_env: batched``),
    in ``config.n_workers`` subprocesses (``subproc``) or a DummyVecEnv (``dummy``)."""
    if config.vec_env == "batched":
        from training.batched import BatchedVecEnv  # numba's kernels load only for this backend

        return BatchedVecEnv(config, snapshots)
    thunks = [make_env(config, list(snapshots)) for _ in range(config.n_envs)]
    if config.vec_env == "subproc":
        return MaskedSubprocVecEnv(thunks, config.n_workers)
    return DummyVecEnv(thunks)


__all__ = ["MaskedSubprocVecEnv", "make_vec_env"]
