"""What the batched property tests share: Hypothesis settings, the inputs they feed the batched engine and envs
(good and bad actions, seeds, slots), a full snapshot of an object's state, and the cards of one game."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st

import c8env
from c8env.actions import NUM_ACTIONS
from c8env.cards import NUM_CARDS
from c8env.engine import check_deal_fits
from c8env.vector import kernels
from tests.vector.custom_rules import random_rules

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PRESETS = c8env.preset_names()
#: A small batch whose episodes end within 4 moves (the explicit examples).
TWO = {"num_envs": 2, "num_players": 2, "rules": "standard", "episode": "hand", "reward": "win", "max_steps": 4}
#: Plain junk, passed where ids, seeds or selections are expected.
JUNK = [None, 3, "3", 3.0, True, {}, {"a": 1}, "actions", object(), b"\x01"]
BAD_INTS = [-1, NUM_ACTIONS, NUM_ACTIONS + 1, 2**31, -(2**63), 2**63 - 1]


@st.composite
def batch_config(draw: Any, max_envs: int = 4, custom: bool = False) -> dict[str, Any]:
    """Constructor arguments: a preset (with ``custom``, or a rule set of :func:`custom_rules.random_rules`), a
    player count whose deal fits, a batch size, an episode, a short ``max_steps`` now and then (so that episodes end
    within a few dozen steps)."""
    presets = st.sampled_from(PRESETS)
    rules = draw(st.one_of(presets, st.integers(0, 2**32).map(lambda seed: random_rules(np.random.default_rng(seed))))
                 if custom else presets)
    players = draw(st.integers(2, 7))
    try:
        check_deal_fits(c8env.load_rules(rules), players)
    except ValueError:
        players = 2
    return {"num_envs": draw(st.integers(1, max_envs)), "num_players": players, "rules": rules,
            "episode": draw(st.sampled_from(["hand", "match"])), "reward": draw(st.sampled_from(["win", "points"])),
            "max_steps": draw(st.sampled_from([None, 4, 12, 40]))}


def legal_choice(mask: np.ndarray, picks: list[int]) -> np.ndarray:
    """One legal action per game (``picks[b]``-th of game ``b``'s, cyclically; 0 where none is legal)."""
    out = np.zeros(mask.shape[0], dtype=np.int64)
    for b, pick in enumerate(picks):
        legal = np.flatnonzero(mask[b])
        out[b] = legal[pick % len(legal)] if len(legal) else 0
    return out


@st.composite
def action_inputs(draw: Any, mask: np.ndarray) -> Any:
    """What a caller may pass as one action per game, good or bad: legal ids in every int form, an illegal or
    out-of-range id in one game, the ids in a wrong dtype or shape, a list holding junk, or plain junk."""
    size = mask.shape[0]
    valid = legal_choice(mask, draw(st.lists(st.integers(0, 10**6), min_size=size, max_size=size)))
    b = draw(st.integers(0, size - 1))
    kind = draw(st.sampled_from(["valid", "valid", "valid", "list", "int dtype", "strided", "readonly", "illegal",
                                 "unsigned", "float", "bool", "object", "str", "shape", "list junk", "junk"]))
    if kind == "valid":
        return valid
    if kind == "list":
        return valid.tolist()
    if kind == "int dtype":
        return valid.astype(draw(st.sampled_from([np.int8, np.uint8, np.int32, np.uint64, ">i8"])))
    if kind == "strided":
        return np.repeat(valid, 2)[::2]
    if kind == "readonly":
        valid.flags.writeable = False
        return valid
    if kind == "illegal":  # (what is drawn does not depend on the mask: Hypothesis replays draw for draw)
        illegal = np.flatnonzero(mask[b] == 0).tolist()
        pick = draw(st.integers(0, 10**6))
        valid[b] = illegal[pick % len(illegal)] if pick % 2 and illegal else BAD_INTS[pick % len(BAD_INTS)]
        return valid
    if kind == "unsigned":
        unsigned = valid.astype(np.uint64)
        unsigned[b] = draw(st.sampled_from([NUM_ACTIONS, 2**63, 2**63 + 5, 2**64 - 1]))
        return unsigned
    if kind in ("float", "bool", "object", "str"):
        return valid.astype({"float": np.float64, "bool": bool, "object": object, "str": str}[kind])
    if kind == "shape":
        return draw(st.sampled_from([valid[:, None], valid[None], np.append(valid, valid[0]), valid[:-1],
                                     np.int64(valid[0]), np.array(valid[0]), np.zeros((size, 0), dtype=np.int64)]))
    if kind == "list junk":
        entries: list[Any] = valid.tolist()
        entries[b] = draw(st.sampled_from([None, 1.5, "x", [1], True, np.True_, 2**64, -1, 2**64 - 1]))
        return entries
    return draw(st.sampled_from([*JUNK, [[1]] * size, [[1], [1, 2]] + [[1]] * size]))


SEED_JUNK = [-1, 2**64, 1.0, "1", True, np.True_, [1], np.array(3), np.float32(2), object(), b"\x01"]


def seed_inputs(none: bool = False, limit: int = 2**64) -> st.SearchStrategy[Any]:
    """One seed, good (ints, NumPy ints; None where ``none``: fresh entropy, so only as a call's last input) or
    bad."""
    good = st.one_of(st.integers(0, limit - 1), st.integers(0, 1000).map(np.int64),
                     st.sampled_from([np.uint64(2**64 - 1), 2**63]).filter(lambda s: int(s) < limit))
    return st.one_of(good, st.just(None) if none else st.nothing(), st.sampled_from(SEED_JUNK))


def seeds_inputs(size: int) -> st.SearchStrategy[Any]:
    """``size`` seeds (an int array or a list), good or bad (negative, float, bool, wrong shape, junk)."""
    ints = st.lists(st.integers(0, 2**64 - 1), min_size=size, max_size=size)
    bad_entry = st.sampled_from([-1, 2**64, 1.5, None, "1", True])
    return st.one_of(
        ints, ints.map(lambda s: np.array(s, dtype=np.uint64)), st.lists(st.integers(0, 99), min_size=size,
                                                                         max_size=size).map(np.array),
        st.tuples(ints, st.integers(0, size - 1), bad_entry).map(lambda t: t[0][:t[1]] + [t[2]] + t[0][t[1] + 1:]),
        st.lists(st.integers(0, 99), min_size=size, max_size=size).map(lambda s: np.array(s, dtype=np.float64)),
        st.sampled_from([None, 3, np.zeros(size + 1, dtype=np.int64), np.zeros((size, 1), dtype=np.int64),
                         np.ones(size, dtype=bool), [[1]] * size]),
    )


def slots_inputs(size: int) -> st.SearchStrategy[Any]:
    """A selection of ``size`` games: None, bool arrays or lists, or bad (ints, wrong shape, junk)."""
    bools = st.lists(st.booleans(), min_size=size, max_size=size)
    return st.one_of(st.none(), bools.map(np.array), bools,
                     bools.map(lambda s: np.array(s, dtype=np.int64)),
                     st.sampled_from([np.ones(size + 1, dtype=bool), np.ones((size, 1), dtype=bool), True, "all", 1,
                                      [None] * size, [[True], [True, False]]]))


# ----- what the properties compare ------------------------------------------------------------------------------
def snapshot(value: Any, depth: int = 0) -> Any:
    """Everything an object holds, as comparable data: arrays (dtype, shape, bytes), generators' states, the
    attributes of the project's objects, containers; other objects (spaces, callables) by type."""
    if depth > 6:
        return type(value).__name__
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, np.random.Generator):
        return repr(value.bit_generator.state)
    if isinstance(value, (bool, int, float, str, bytes, type(None), np.generic)):
        return value
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [snapshot(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: snapshot(v, depth + 1) for k, v in value.items()}
    if dataclasses.is_dataclass(value):  # a value (rules): its fields, not the caches beside them
        return type(value).__name__, {f.name: snapshot(getattr(value, f.name), depth + 1)
                                      for f in dataclasses.fields(value)}
    if type(value).__module__.startswith("c8env") and hasattr(value, "__dict__"):
        return type(value).__name__, snapshot(vars(value), depth + 1)
    return type(value).__name__


def games_state(games: kernels.Games) -> Any:
    """A batch's games as comparable data, the stock and discard piles up to their lengths (beyond lies stale data)."""
    fields = games._asdict()
    for name in ("stock", "discard"):
        fields[name] = [row[:length].tolist() for row, length in zip(fields[name], fields[f"{name}_len"], strict=True)]
    return snapshot(fields)


def card_counts(games: kernels.Games, b: int) -> np.ndarray:
    """How many copies of each card game ``b`` holds in hands, stock and discard pile (int[52])."""
    counts = np.zeros(NUM_CARDS, dtype=np.int64)
    for held in (games.held[b], games.twice[b]):
        for bits in held.tolist():
            counts += [(bits >> c) & 1 for c in range(NUM_CARDS)]
    np.add.at(counts, games.stock[b, :games.stock_len[b]], 1)
    np.add.at(counts, games.discard[b, :games.discard_len[b]], 1)
    return counts


def check_refusal(err: BaseException | None, expected: dict[type[Exception], str | tuple[str, ...]]) -> None:
    """The call raised one of the ``expected`` errors (none expected: it was accepted), in one line holding what
    ``expected`` gives for that error (each of the words)."""
    event(f"{type(err).__name__ if err else 'accepted'}")  # (--hypothesis-show-statistics)
    if (type(err) not in expected) if expected else err is not None:
        raise AssertionError(f"expected {list(expected) or 'no error'}, got {err!r}")
    if err is not None:
        message, named = str(err), expected[type(err)]
        if not message or "\n" in message:
            raise AssertionError(f"not one line: {message!r}")
        for words in (named,) if isinstance(named, str) else named:
            if words not in message:
                raise AssertionError(f"{message!r} does not name {words!r}")


def refused_unless(accepted: bool, named: str, error: type[Exception] = ValueError) -> dict[type[Exception], str]:
    """What :func:`check_refusal` expects of a call that is refused (``error`` naming ``named``) unless ``accepted``."""
    return {} if accepted else {error: named}


def outcome(call: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """``call()``'s result, or the exception it raised."""
    try:
        return call(), None
    except Exception as err:  # noqa: BLE001 - the properties judge every exception
        return None, err


def as_int_ids(value: Any, size: int) -> list[int] | None:
    """``value``'s ids as Python ints where it is a well-formed batch of ``size`` ids (a 1-D int array, or a list of
    ints that holds no bool), else None: the shape the batched calls accept."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        return None
    if array.shape != (size,) or array.dtype.kind not in "iu":
        return None
    if not isinstance(value, np.ndarray) and any(isinstance(v, (bool, np.bool_)) for v in value):
        return None
    return [int(v) for v in array.tolist()]


def first_illegal(ids: list[int], mask: np.ndarray, selected: np.ndarray | None = None) -> tuple[str, ...]:
    """What the refusal of ``ids`` must name (the first selected game whose id is not legal: the id as given and the
    game), or () when every selected id is legal."""
    for b, action in enumerate(ids):
        if (selected is None or selected[b]) and not (0 <= action < NUM_ACTIONS and mask[b, action]):
            return f"action {action} (", f"in game {b} "
    return ()


def as_slots(value: Any, size: int) -> np.ndarray | None:
    """``value`` as a bool[size] selection where it is one (None: all games), else None."""
    if value is None:
        return np.ones(size, dtype=bool)
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        return None
    return array if array.shape == (size,) and array.dtype == bool else None


def is_seed(value: Any, limit: int | None = 2**64) -> bool:
    """A seed the batched calls accept: an int (not a bool) from 0 (below ``limit``)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and 0 <= value and (
        limit is None or value < limit)
