"""Policy-file surgery: one policy file made of others' networks, run side by side in one MLP of the same file format
(:mod:`c8env.agents.policy`), so every agent, tool and the compiled search play it as any policy file.

- :func:`average_policies`: the mean of several networks' logits (an average of clones, ``python -m
  training.research.average``);
- :func:`specialise_policies`: a specialist's logits for some actions, another network's for the rest (``python -m
  training.research.specialise``);
- :func:`with_endgame`: an endgame network's logits added once some player holds at most K cards (a version 2 file,
  ``python -m training.research.specialise --endgame``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from c8env.actions import NUM_ACTIONS
from c8env.agents.policy import PolicyAgent, save_policy


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


__all__ = ["average_policies", "specialise_policies", "with_endgame"]
