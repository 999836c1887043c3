"""Policies from any library as ONNX files: :class:`OnnxAgent` plays one with onnxruntime (CPU).

The file maps an observation batch ``float32[batch, 401]`` (its one input, with a dynamic
batch axis; ``float32[batch, 245]`` for a model trained on env version 0 or 1, :mod:`c8env.versions`: it is fed
the observation's first 245 entries) to action scores ``float32[batch, 60]`` (its first output: logits, or anything
ordered like them, such as log-probabilities or Q-values). The agent plays the masked argmax:
the legal action of highest score, the lowest id on a tie. :func:`c8env.tools.onnx_export.export_onnx`
writes such a file from a torch module or a Stable-Baselines3 model (input ``observation``, output
``logits``, optional c8env metadata under the model property ``c8env``). onnxruntime (and, to
export, torch, onnx and onnxscript) are the ``onnx`` extra: ``pip install 'c8env[onnx]'``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from c8env.actions import NUM_ACTIONS
from c8env.agents.policy import TIE_MARGIN
from c8env.observation import OBS_SIZE, check_observation
from c8env.versions import OBS_SIZES, check_obs_size

ONNX_INSTALL = "pip install 'c8env[onnx]'"
#: The model property holding c8env's metadata (JSON: num_players, rules, description, ...).
META_KEY = "c8env"
_EXPECTED = (f"one input float32[batch, {' or '.join(map(str, OBS_SIZES))}] (dynamic batch axis) and a first output "
             f"float32[batch, {NUM_ACTIONS}]")


class MissingExtraError(ImportError, ValueError):
    """An optional dependency is missing; also a ValueError, so command lines report it like a bad argument."""


def _first_line(err: BaseException, limit: int = 200) -> str:
    text = (str(err).strip().splitlines() or [""])[0]
    return f"{type(err).__name__}: {text[:limit]}"


def _onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError as err:
        raise MissingExtraError(f"playing .onnx policies needs onnxruntime ({err}); install it: {ONNX_INSTALL}") from None
    return onnxruntime


def consistent_argmax(scores: Callable[[np.ndarray, np.ndarray], np.ndarray], observations: np.ndarray,
                      masks: np.ndarray, inputs: int = OBS_SIZE) -> np.ndarray:
    """The masked argmax of ``scores(observations, masks)`` per row (int64[k]), equal to what one row alone gives;
    ``scores`` is given the observations' first ``inputs`` entries (the model's input width).

    A batch's scores may differ from one row's in the last bits (another summation order), so a row whose two
    best legal scores lie closer than :data:`~c8env.agents.policy.TIE_MARGIN` (relative) is scored again alone,
    as ``act`` scores it."""
    observations = np.asarray(observations, dtype=np.float32)
    legal = np.asarray(masks).astype(bool)
    if observations.ndim != 2 or observations.shape[1] < inputs or legal.shape != (len(observations), NUM_ACTIONS):
        raise ValueError(f"act_batch takes observations float32[k, {inputs} or more] and masks int8[k, {NUM_ACTIONS}], "
                         f"got {observations.shape} and {legal.shape}")
    observations = observations[:, :inputs]
    if not legal.any(axis=1).all():
        raise ValueError("act_batch: a row's action mask has no legal action")
    if not len(observations):
        return np.zeros(0, dtype=np.int64)
    masks = np.asarray(masks)
    masked = np.where(legal, scores(observations, masks), -np.inf)
    actions = np.argmax(masked, axis=1).astype(np.int64)
    top_two = -np.partition(-masked, 1, axis=1)[:, :2]
    close = np.abs(top_two[:, 0] - top_two[:, 1]) < TIE_MARGIN * np.maximum(1.0, np.abs(top_two[:, 0]))
    for row in np.flatnonzero(close):
        alone = scores(np.ascontiguousarray(observations[row:row + 1]), masks[row:row + 1])[0]
        actions[row] = np.argmax(np.where(legal[row], alone, -np.inf))
    return actions


@functools.lru_cache(maxsize=16)
def _open(path: str, mtime_ns: int, size: int) -> tuple[Any, str, str, int, dict[str, Any]]:
    """A checked onnxruntime session of ``path`` (cached per file version: the scalar engine loads an agent per
    hand), its input and first output names, its input width (an env version's observation size; a dynamic
    width takes the newest) and its c8env metadata."""
    ort = _onnxruntime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # small MLPs: one thread is fastest, and the scores are deterministic
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as err:  # not ONNX, truncated, unsupported operators
        raise ValueError(f"{path!r} is not a readable ONNX model ({_first_line(err)})") from None
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if len(inputs) != 1 or not outputs:
        raise ValueError(f"{path!r} has inputs {[i.name for i in inputs]} and outputs {[o.name for o in outputs]}; "
                         f"expected {_EXPECTED}")
    given = inputs[0]
    shape = list(given.shape or [])
    if given.type != "tensor(float)" or len(shape) != 2 or isinstance(shape[0], int):
        raise ValueError(f"{path!r}: its input {given.name!r} is {given.type} {shape}; expected {_EXPECTED}")
    width = check_obs_size(shape[1], f"{path!r}") if isinstance(shape[1], int) else OBS_SIZE
    try:
        probe = session.run([outputs[0].name], {given.name: np.zeros((2, width), dtype=np.float32)})[0]
    except Exception as err:
        raise ValueError(f"{path!r} fails on a float32[2, {width}] batch ({_first_line(err)}); "
                         f"expected {_EXPECTED}") from None
    probe = np.asarray(probe)
    if probe.shape != (2, NUM_ACTIONS) or not np.issubdtype(probe.dtype, np.floating):
        raise ValueError(f"{path!r}: its first output {outputs[0].name!r} gives {probe.dtype} {list(probe.shape)} for a "
                         f"batch of 2; expected float32[batch, {NUM_ACTIONS}] action scores")
    try:
        meta = json.loads(session.get_modelmeta().custom_metadata_map.get(META_KEY, "{}"))
    except ValueError:
        meta = {}
    return session, given.name, outputs[0].name, width, meta if isinstance(meta, dict) else {}


class OnnxAgent:
    """Plays an ONNX policy file (see the module docstring): the masked argmax of its scores, onnxruntime on CPU."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"ONNX policy file {str(path)!r} does not exist")
        stat = path.stat()
        self.session, self.input_name, self.output_name, self.inputs, self.meta = _open(
            str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        self.path = path
        self.name = path.stem

    def scores(self, observations: np.ndarray) -> np.ndarray:
        """The model's scores float32[k, 60] for observations float32[k, 401] (or 245: its first ``inputs``
        entries are fed)."""
        feed = {self.input_name: np.ascontiguousarray(np.asarray(observations)[:, :self.inputs], dtype=np.float32)}
        return np.asarray(self.session.run([self.output_name], feed)[0], dtype=np.float32)

    def act(self, observation: Mapping[str, Any]) -> int:
        check_observation(observation, "OnnxAgent", self.inputs)
        legal = np.asarray(observation["action_mask"]).astype(bool)
        if not legal.any():
            raise ValueError("OnnxAgent.act: the action mask has no legal action (not this agent's turn?)")
        scores = self.scores(np.asarray(observation["observation"], dtype=np.float32)[None])[0]
        return int(np.argmax(np.where(legal, scores, -np.inf)))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for a batch: observations float32[k, 401] and masks int8[k, 60] in, actions int64[k] out
        (row ``i`` is exactly ``act`` of row ``i``: :func:`consistent_argmax`)."""
        return consistent_argmax(lambda batch, _: self.scores(batch), observations, masks, self.inputs)


__all__ = ["META_KEY", "MissingExtraError", "OnnxAgent", "consistent_argmax"]
