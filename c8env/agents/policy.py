"""Trained policies exported for play with NumPy alone (no torch at play time).

File format (``.npz``, written by ``training/export.py`` or :func:`save_policy`; ``training/research/surgery.py``
writes files of several networks side by side in this format):

- ``meta``: a 0-d string array holding JSON: ``{"format": "c8env-policy", "version": 1,
  "activation": "tanh" | "relu", "obs_size": 401 or 245, "num_actions": 60, "num_players": int,
  "rules": {RuleSet fields}, "description": str}``;
- ``w0, b0, w1, b1, ...``: the layers of the policy network, ``w`` of shape
  ``(out, in)`` (torch's ``nn.Linear`` layout), the last layer giving 60 action logits.

A version 2 file also holds an endgame network (:func:`save_policy`'s ``endgame``): ``meta`` gains ``"endgame":
{"max_cards": K}`` and the arrays ``endgame_w0, endgame_b0, ...`` its layers. Where some player holds at most K cards
(:func:`~c8env.observation.fewest_cards`), its logits are added to the first network's, except those of the suit
declarations.

``obs_size`` is the observation size of the env version the network was trained on (:mod:`c8env.versions`: 245
for v0 and v1, 401 for v2); a network of 245 inputs reads the newest vector's first entries, which are v1's.

The agent plays the masked argmax of the logits: the deterministic action of the
exported SB3 ``MaskablePPO`` policy.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from c8env.actions import DECLARE_ACTIONS, NUM_ACTIONS
from c8env.observation import OBS_SIZE, check_observation, fewest_cards
from c8env.versions import check_obs_size

FORMAT = "c8env-policy"
#: A batch's logits may differ from one observation's in the last bits (another summation order); a row whose two
#: best legal logits lie closer than this (relative) is recomputed alone, so :meth:`PolicyAgent.act_batch` always
#: equals :meth:`PolicyAgent.act`.
TIE_MARGIN = 1e-3
VERSION = 1
#: The version of a file that holds an endgame network beside the first (``save_policy(endgame=...)``).
ENDGAME_VERSION = 2
_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}
_ENDGAME = "endgame_"  # the prefix of the endgame network's arrays
Layers = list[tuple[np.ndarray, np.ndarray]]


#: Where the shipped policy files live (``NAME.npz``).
POLICY_DIR = Path(__file__).parent / "policies"


def save_policy(path: str | Path, layers: Layers, activation: str, num_players: int, rules: dict[str, Any],
                description: str = "", compress: bool = False, endgame: tuple[Layers, int] | None = None) -> Path:
    """Write a policy file from ``(weight, bias)`` pairs (weights ``(out, in)``; the first layer's ``in`` is
    an env version's observation size, :data:`c8env.versions.OBS_SIZES`),
    zip-compressed if ``compress``; with ``endgame`` (its layers, and the most cards some player holds for it to
    play) a version 2 file."""
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation={activation!r} is invalid; allowed: {', '.join(_ACTIVATIONS)}")
    inputs = check_obs_size(np.shape(layers[0][0])[1] if layers else OBS_SIZE, "the first layer")
    meta = {"format": FORMAT, "version": VERSION, "activation": activation, "obs_size": inputs,
            "num_actions": NUM_ACTIONS, "num_players": num_players, "rules": rules, "description": description}
    networks = [("", layers)]
    if endgame is not None:
        meta["version"], meta["endgame"] = ENDGAME_VERSION, {"max_cards": endgame[1]}
        networks.append((_ENDGAME, endgame[0]))
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta))}
    for prefix, network in networks:
        for i, (weight, bias) in enumerate(network):
            arrays[f"{prefix}w{i}"] = np.asarray(weight, dtype=np.float32)
            arrays[f"{prefix}b{i}"] = np.asarray(bias, dtype=np.float32)
    path = Path(path)
    with path.open("wb") as fh:
        (np.savez_compressed if compress else np.savez)(fh, **arrays)
    return path


def _forward(layers: Sequence[tuple[np.ndarray, np.ndarray]], x: np.ndarray, activation: Any) -> np.ndarray:
    """An MLP's output: ``activation`` after every layer but the last."""
    last = len(layers) - 1
    for i, (weight, bias) in enumerate(layers):
        x = x @ weight.T + bias
        if i < last:
            x = activation(x)
    return x


def _check_layers(path: Path, layers: list[tuple[np.ndarray, np.ndarray]], inputs: int, prefix: str = "") -> None:
    """Layer shapes must chain from the ``inputs`` first entries of the observation vector to the 60 action logits
    (``prefix``: that of the arrays' names)."""
    if not layers:
        raise ValueError(f"{str(path)!r} holds no layers (arrays {prefix}w0, {prefix}b0, ...)")
    width = inputs
    for i, (weight, bias) in enumerate(layers):
        if weight.ndim != 2 or weight.shape[1] != width or bias.shape != (weight.shape[0],):
            raise ValueError(
                f"{str(path)!r}: layer {i} has {prefix}w{i} {weight.shape} and {prefix}b{i} {bias.shape}; "
                f"expected {prefix}w{i} (out, {width}) and {prefix}b{i} (out,)"
            )
        width = weight.shape[0]
    if width != NUM_ACTIONS:
        network = " of the endgame network" if prefix else ""
        raise ValueError(f"{str(path)!r}: the last layer{network} gives {width} outputs; expected {NUM_ACTIONS} action "
                         "logits")


_READ: dict[Path, tuple[bytes, str, tuple[Any, ...], tuple[Any, ...]]] = {}  # path: bytes, meta, layers, endgame layers
_READ_KEPT = 8


def _read_policy(path: Path) -> tuple[str, tuple[Any, ...], tuple[Any, ...]]:
    """A policy file's meta text, layers and endgame layers (none in a version 1 file; read-only float32 arrays).
    The last files read are kept with their bytes: a file read again with the same bytes (one agent per hand when
    recording demonstrations) is not parsed again, and its agents share the arrays."""
    raw = path.read_bytes()
    kept = _READ.get(path)
    if kept is None or kept[0] != raw:
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            meta = str(data["meta"])
            networks = []
            for prefix in ("", _ENDGAME):
                count = sum(1 for key in data.files if key.startswith(f"{prefix}w"))
                networks.append(tuple((data[f"{prefix}w{i}"].astype(np.float32),
                                       data[f"{prefix}b{i}"].astype(np.float32)) for i in range(count)))
        for array in (a for network in networks for layer in network for a in layer):
            array.flags.writeable = False
        _READ.pop(path, None)
        if len(_READ) >= _READ_KEPT:
            del _READ[next(iter(_READ))]
        kept = _READ[path] = (raw, meta, *networks)
    return kept[1], kept[2], kept[3]


class PolicyAgent:
    """Plays an exported policy file: masked argmax of an MLP's logits, NumPy only."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"policy file {str(path)!r} does not exist")
        try:
            meta_text, layers, endgame_layers = _read_policy(path.resolve())
            meta = json.loads(meta_text)
            self.layers = list(layers)
            self.endgame_layers = list(endgame_layers)
            """The endgame network's layers (none in a version 1 file)."""
        except Exception as err:  # any unreadable file (not a zip, truncated, missing arrays, bad JSON)
            raise ValueError(f"{str(path)!r} is not a c8env policy file ({type(err).__name__}: {err})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") not in (VERSION,
                                                                                                      ENDGAME_VERSION):
            raise ValueError(f"{str(path)!r} is not a {FORMAT} v{VERSION} or v{ENDGAME_VERSION} file (meta: {meta})")
        missing = [key for key in ("activation", "obs_size", "num_actions") if key not in meta]
        if missing:
            raise ValueError(f"{str(path)!r}: meta lacks the key(s) {missing}")
        if meta["activation"] not in _ACTIVATIONS:
            raise ValueError(
                f"{str(path)!r}: activation {meta['activation']!r} is invalid; allowed: {', '.join(_ACTIVATIONS)}"
            )
        check_obs_size(meta["obs_size"], repr(str(path)))
        if meta["num_actions"] != NUM_ACTIONS:
            raise ValueError(f"{str(path)!r} expects {meta['num_actions']} actions; c8env has {NUM_ACTIONS}")
        _check_layers(path, self.layers, meta["obs_size"])
        self.endgame_cards: int | None = None
        """The most cards a player may hold for the endgame network to play (None: no endgame network)."""
        if meta["version"] == ENDGAME_VERSION:
            endgame = meta.get("endgame")
            cards = endgame.get("max_cards") if isinstance(endgame, dict) else None
            if isinstance(cards, bool) or not isinstance(cards, int) or cards < 1:
                raise ValueError(f"{str(path)!r}: a v{ENDGAME_VERSION} file's meta needs endgame: {{max_cards: an int "
                                 f">= 1}}, got {meta.get('endgame')!r}")
            _check_layers(path, self.endgame_layers, meta["obs_size"], _ENDGAME)
            self.endgame_cards = cards
        elif self.endgame_layers:
            raise ValueError(f"{str(path)!r}: a v{VERSION} file holds no endgame network, but it has endgame_w0...")
        self.inputs: int = meta["obs_size"]
        """How many of the observation vector's first entries the network reads."""
        self.meta = meta
        self.name = path.stem
        self.activation = _ACTIVATIONS[meta["activation"]]

    def single_network(self, who: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """The layers, for a user that runs one MLP (the compiled search's kernels, side-by-side files);
        ``ValueError`` naming ``who`` for a file with an endgame network."""
        if self.endgame_layers:
            raise ValueError(f"{who}: {self.name!r} has an endgame network (a v{ENDGAME_VERSION} policy file), which "
                             "this plays not; give a single-network policy file")
        return self.layers

    def logits(self, vector: np.ndarray) -> np.ndarray:
        """Action logits for one observation vector (or a batch, shape ``(batch, obs_size)``)."""
        full = np.asarray(vector, dtype=np.float32)
        inputs = full[..., :self.inputs]
        logits = _forward(self.layers, inputs, self.activation)
        if self.endgame_cards is not None:
            late = fewest_cards(full) <= self.endgame_cards  # the endgame network runs on these rows only
            if np.any(late):
                extra = _forward(self.endgame_layers, inputs[late], self.activation)
                extra[..., list(DECLARE_ACTIONS)] = 0.0
                logits[late] += extra
        return logits

    def act(self, observation: dict) -> int:
        check_observation(observation, "PolicyAgent", self.inputs)
        mask = np.asarray(observation["action_mask"])
        if not mask.any():
            raise ValueError("PolicyAgent.act: the action mask has no legal action (not this agent's turn?)")
        logits = self.logits(observation["observation"])
        return int(np.argmax(np.where(mask.astype(bool), logits, -np.inf)))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for a batch: observations float32[k, 401] and masks int8[k, 60] in, actions int64[k] out.

        The masked argmax of the batch's logits, each near tie (:data:`TIE_MARGIN`) recomputed from its
        observation alone, so every row is exactly the move :meth:`act` makes."""
        legal = np.asarray(masks).astype(bool)
        logits = np.where(legal, self.logits(observations), -np.inf)
        actions = np.argmax(logits, axis=1)
        top_two = -np.partition(-logits, 1, axis=1)[:, :2]
        close = np.abs(top_two[:, 0] - top_two[:, 1]) < TIE_MARGIN * np.maximum(1.0, np.abs(top_two[:, 0]))
        for row in np.flatnonzero(close):
            actions[row] = np.argmax(np.where(legal[row], self.logits(observations[row]), -np.inf))
        return actions
