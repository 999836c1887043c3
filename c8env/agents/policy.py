"""Trained policies exported for play with NumPy alone (no torch at play time).

File format (``.npz``, written by ``training/export.py``, :func:`save_policy` or :func:`average_policies`):

- ``meta``: a 0-d string array holding JSON: ``{"format": "c8env-policy", "version": 1,
  "activation": "tanh" | "relu", "obs_size": 401 or 245, "num_actions": 60, "num_players": int,
  "rules": {RuleSet fields}, "description": str}``;
- ``w0, b0, w1, b1, ...``: the layers of the policy network, ``w`` of shape
  ``(out, in)`` (torch's ``nn.Linear`` layout), the last layer giving 60 action logits.

A version 2 file also holds an endgame network (:func:`with_endgame`): ``meta`` gains ``"endgame": {"max_cards":
K}`` and the arrays ``endgame_w0, endgame_b0, ...`` its layers. Where some player holds at most K cards
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
#: The version of a file that holds an endgame network beside the first (:func:`with_endgame`).
ENDGAME_VERSION = 2
_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}
_ENDGAME = "endgame_"  # the prefix of the endgame network's arrays
Layers = list[tuple[np.ndarray, np.ndarray]]


def save_policy(path: str | Path, layers: Layers, activation: str, num_players: int, rules: dict[str, Any],
                description: str = "", compress: bool = False, endgame: tuple[Layers, int] | None = None) -> Path:
    """Write a policy file from ``(weight, bias)`` pairs (weights ``(out, in)``; the first layer's ``in`` is
    an env version's observation size, :data:`c8env.versions.OBS_SIZES`),
    zip-compressed if ``compress``; with ``endgame`` (its layers, and the most cards a player may hold for it to
    play: :func:`with_endgame`) a version 2 file."""
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


def _agreeing(paths: list[str | Path], caller: str, same_depth: bool) -> list[PolicyAgent]:
    """The single-network policy files of ``paths``, which must share the activation, the inputs, the player count,
    the rules and (if ``same_depth``) the depth (``ValueError`` naming the first that differs)."""
    members = [PolicyAgent(path) for path in paths]
    first = members[0]
    for path, member in zip(paths, members, strict=True):
        member.single_network(f"{caller}: {str(path)!r}")
    for path, member in zip(paths[1:], members[1:], strict=True):
        depth = [("depth", len(member.layers), len(first.layers))] if same_depth else []
        for key, value, expected in [("activation", member.meta["activation"], first.meta["activation"]), *depth,
                                     ("obs_size", member.inputs, first.inputs),
                                     ("num_players", member.meta.get("num_players"), first.meta.get("num_players")),
                                     ("rules", member.meta.get("rules"), first.meta.get("rules"))]:
            if value != expected:
                raise ValueError(f"{caller}: {str(path)!r} has {key} {value!r} where {str(paths[0])!r} has "
                                 f"{expected!r}; the files must agree")
    return members


def _side_by_side(paths: list[str | Path], shares: np.ndarray, caller: str) -> tuple[list[Any], dict[str, Any]]:
    """The layers of one MLP running the networks of ``paths`` side by side: the first layers stacked, the hidden
    layers block-diagonal, the last layers' weights concatenated, each member's logit ``a`` taken with the weight
    ``shares[member, a]`` (biases likewise); and the first member's meta. The files must share the activation,
    the depth, the inputs, the player count and the rules (``ValueError`` naming the first that differs)."""
    members = _agreeing(paths, caller, same_depth=True)
    first = members[0]
    depth = len(first.layers)
    layers = []
    for i in range(depth):
        weights = [member.layers[i][0] for member in members]
        biases = [member.layers[i][1] for member in members]
        if i == depth - 1:
            weights = [share[:, None] * weight for share, weight in zip(shares, weights, strict=True)]
            bias = sum(share * bias for share, bias in zip(shares, biases, strict=True))
            layers.append((sum(weights) if depth == 1 else np.concatenate(weights, axis=1), bias))
        elif i == 0:
            layers.append((np.concatenate(weights, axis=0), np.concatenate(biases)))
        else:
            block = np.zeros((sum(w.shape[0] for w in weights), sum(w.shape[1] for w in weights)), dtype=np.float32)
            row = col = 0
            for weight in weights:
                block[row:row + weight.shape[0], col:col + weight.shape[1]] = weight
                row, col = row + weight.shape[0], col + weight.shape[1]
            layers.append((block, np.concatenate(biases)))
    return [(np.asarray(w, dtype=np.float32), np.asarray(b, dtype=np.float32)) for w, b in layers], first.meta


def average_policies(paths: list[str | Path], out: str | Path, description: str = "") -> Path:
    """Write one policy file whose logits are the mean of the given files' logits (an average of clones).

    Their networks run side by side in one MLP: the first layers stacked, the hidden layers block-diagonal,
    the last layers' weights concatenated and divided by their count, its bias the mean of theirs (the file
    zip-compressed: the blocks' zeros take no room). The files must share the activation, the depth, the
    inputs, the player count and the rules (``ValueError`` naming the first that differs)."""
    if len(paths) < 2:
        raise ValueError(f"average_policies: give at least 2 policy files, got {len(paths)}")
    shares = np.full((len(paths), NUM_ACTIONS), 1.0 / len(paths), dtype=np.float32)
    layers, meta = _side_by_side(paths, shares, "average_policies")
    names = ", ".join(str(path) for path in paths)
    return save_policy(out, layers, meta["activation"], meta.get("num_players"), meta.get("rules"),
                       description or f"the mean of the logits of {len(paths)} policies: {names}", compress=True)


def specialise_policies(base: str | Path, specialist: str | Path, actions: list[int], out: str | Path,
                        description: str = "") -> Path:
    """Write one policy file whose logits of ``actions`` are ``specialist``'s and the others ``base``'s, the two
    networks side by side in one MLP (as :func:`average_policies`). With the suit declarations as ``actions``
    (a specialist fitted to declarations alone) it plays exactly as ``base`` does, except that ``specialist``
    chooses each suit declared: a declaration's legal moves are all declarations, a play's none."""
    chosen = sorted(set(actions))
    if not chosen or chosen[0] < 0 or chosen[-1] >= NUM_ACTIONS:
        raise ValueError(f"specialise_policies: actions should be action ids from 0 to {NUM_ACTIONS - 1}, got "
                         f"{actions!r}")
    shares = np.zeros((2, NUM_ACTIONS), dtype=np.float32)
    shares[0] = 1.0
    shares[:, chosen] = [[0.0], [1.0]]
    layers, meta = _side_by_side([base, specialist], shares, "specialise_policies")
    return save_policy(out, layers, meta["activation"], meta.get("num_players"), meta.get("rules"),
                       description or f"{base}, with the logits of actions {chosen} from {specialist}",
                       compress=True)


def with_endgame(policy: str | Path, endgame: str | Path | list[str | Path], max_cards: int, out: str | Path,
                 description: str = "") -> Path:
    """Write one policy file (version 2) that plays as ``policy`` until some player holds at most ``max_cards``
    cards, and from then on by the sum of its logits and the endgame networks', except the suit declarations
    (``policy``'s alone).

    ``endgame``: one network fitted to such positions alone (``pretrain_decisions: endgame``), or several (of one
    depth, run side by side); adding their logits to the first network's plays the move they favour together, as
    a sum of their log-probabilities does. All must be single-network files with the same activation, inputs, player
    count and rules (the endgame networks' widths and depths may differ from the first's)."""
    endgames = [endgame] if isinstance(endgame, (str, Path)) else list(endgame)
    if not endgames:
        raise ValueError("with_endgame: give at least one endgame network")
    if isinstance(max_cards, bool) or not isinstance(max_cards, int) or max_cards < 1:
        raise ValueError(f"with_endgame: max_cards={max_cards!r} is invalid; allowed: an int >= 1")
    first, *late = _agreeing([policy, *endgames], "with_endgame", same_depth=False)
    layers = list(late[0].layers) if len(late) == 1 else \
        _side_by_side(endgames, np.ones((len(late), NUM_ACTIONS), dtype=np.float32), "with_endgame")[0]
    names = ", ".join(str(path) for path in endgames)
    return save_policy(out, list(first.layers), first.meta["activation"], first.meta.get("num_players"),
                       first.meta.get("rules"), description or f"{policy}, with the endgame network(s) {names} once "
                       f"some player holds at most {max_cards} card(s)", compress=True, endgame=(layers, max_cards))


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
            """The endgame network's layers (:func:`with_endgame`; none in a version 1 file)."""
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
