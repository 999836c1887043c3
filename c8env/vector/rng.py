"""NumPy's default generator, reproduced inside compiled kernels.

The scalar engine draws each deal and reshuffle from ``np.random.default_rng([entropy,
hand, stream])``: a ``SeedSequence`` seeding a ``PCG64``. The batched engine needs the
very same permutations for thousands of games per step, inside its kernels, so this
module implements ``SeedSequence.generate_state``, ``PCG64``'s seeding and output,
``Generator.permutation(n)`` (Fisher-Yates with masked rejection) and
``Generator.integers(n)`` (Lemire's bounded method) on plain unsigned integers.
``tests/vector/test_games.py`` checks each against NumPy.

A generator is a ``uint64[6]`` array: PCG64 state (high, low), increment (high, low),
and the buffered 32-bit half (``has``, value), as NumPy keeps them.
"""

from __future__ import annotations

import numpy as np

from c8env.vector.jit import jit

_U32 = np.uint64(0xFFFFFFFF)
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_L = np.uint64(0xCA01F9DD)
_MIX_R = np.uint64(0x4973F715)
_SHIFT16 = np.uint64(16)
_SHIFT32 = np.uint64(32)
_POOL = 4
_MUL_HI = np.uint64(2549297995355413924)
_MUL_LO = np.uint64(4865540595714422341)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@jit
def _hashmix(value: np.uint64, const: np.ndarray) -> np.uint64:
    value = (value ^ const[0]) & _U32
    const[0] = (const[0] * _MULT_A) & _U32
    value = (value * const[0]) & _U32
    return value ^ (value >> _SHIFT16)


@jit
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:
    result = ((_MIX_L * x) - (_MIX_R * y)) & _U32
    return result ^ (result >> _SHIFT16)


@jit
def entropy_words(words: np.ndarray, value: np.uint64) -> int:
    """Write an int's little-endian 32-bit words to ``words`` (at least one); returns how many."""
    count = 0
    while True:
        words[count] = value & _U32
        count += 1
        value = value >> _SHIFT32
        if value == _ZERO:
            return count


@jit
def seed_state(words: np.ndarray, count: int, out: np.ndarray, work: np.ndarray) -> None:
    """``SeedSequence(words[:count]).generate_state(4, np.uint64)`` into ``out`` (4 uint64); ``work``: 5 uint64
    of scratch space (the kernels allocate nothing)."""
    pool = work[:_POOL]
    const = work[_POOL:_POOL + 1]
    const[0] = _INIT_A
    for i in range(_POOL):
        pool[i] = _hashmix(words[i] if i < count else _ZERO, const)
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], const))
    for src in range(_POOL, count):
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], _hashmix(words[src], const))
    hash_const = _INIT_B
    for i in range(4):
        pair = _ZERO
        for half in range(2):
            value = (pool[(2 * i + half) % _POOL] ^ hash_const) & _U32
            hash_const = (hash_const * _MULT_B) & _U32
            value = (value * hash_const) & _U32
            value ^= value >> _SHIFT16
            pair |= value << np.uint64(32 * half)
        out[i] = pair


@jit
def _mul128(a_hi: np.uint64, a_lo: np.uint64, b_hi: np.uint64, b_lo: np.uint64) -> tuple:
    """(a * b) mod 2**128 as (high, low)."""
    a0, a1 = a_lo & _U32, a_lo >> _SHIFT32
    b0, b1 = b_lo & _U32, b_lo >> _SHIFT32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> _SHIFT32) + (p01 & _U32) + (p10 & _U32)
    low = (p00 & _U32) | (middle << _SHIFT32)
    high = p11 + (p01 >> _SHIFT32) + (p10 >> _SHIFT32) + (middle >> _SHIFT32)
    high += a_hi * b_lo + a_lo * b_hi
    return high, low


@jit
def _step(gen: np.ndarray) -> None:
    high, low = _mul128(gen[0], gen[1], _MUL_HI, _MUL_LO)
    low2 = low + gen[3]
    carry = _ONE if low2 < low else _ZERO
    gen[0] = high + gen[2] + carry
    gen[1] = low2


@jit
def seed_generator(words: np.ndarray, count: int, gen: np.ndarray, work: np.ndarray) -> None:
    """``gen`` = the state of ``np.random.default_rng(list of ints whose words are words[:count])``; ``work``:
    9 uint64 of scratch space."""
    seeds = work[5:9]
    seed_state(words, count, seeds, work)
    # pcg64_srandom_r: state = 0; inc = (initseq << 1) | 1; step; state += initstate; step
    gen[2] = (seeds[2] << _ONE) | (seeds[3] >> np.uint64(63))
    gen[3] = (seeds[3] << _ONE) | _ONE
    gen[0] = _ZERO
    gen[1] = _ZERO
    _step(gen)
    low = gen[1] + seeds[1]
    carry = _ONE if low < gen[1] else _ZERO
    gen[0] = gen[0] + seeds[0] + carry
    gen[1] = low
    _step(gen)
    gen[4] = _ZERO
    gen[5] = _ZERO


@jit
def next64(gen: np.ndarray) -> np.uint64:
    """PCG64's next raw output (XSL-RR)."""
    _step(gen)
    value = gen[0] ^ gen[1]
    rot = gen[0] >> np.uint64(58)
    return (value >> rot) | (value << ((np.uint64(64) - rot) & np.uint64(63)))


@jit
def next32(gen: np.ndarray) -> np.uint64:
    """NumPy's ``next_uint32``: the low half of a 64-bit output, its high half kept for the next call."""
    if gen[4] != _ZERO:
        gen[4] = _ZERO
        return gen[5]
    value = next64(gen)
    gen[4] = _ONE
    gen[5] = value >> _SHIFT32
    return value & _U32


@jit
def interval(gen: np.ndarray, top: int) -> int:
    """A uniform int in ``[0, top]`` as NumPy's ``random_interval`` draws it (masked rejection)."""
    if top == 0:
        return np.int64(0)
    limit = np.uint64(top)
    mask = limit
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    value = next32(gen) & mask
    while value > limit:
        value = next32(gen) & mask
    return np.int64(value)


@jit
def permute(gen: np.ndarray, out: np.ndarray, n: int) -> None:
    """``out[:n]`` = ``Generator.permutation(n)``."""
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = interval(gen, i)
        out[i], out[j] = out[j], out[i]


@jit
def below(gen: np.ndarray, n: int) -> int:
    """``Generator.integers(n)`` for a small ``n`` (Lemire's method on 32-bit draws)."""
    top = np.uint64(n - 1)
    if top == _ZERO:
        return np.int64(0)
    excl = top + _ONE
    product = next32(gen) * excl
    leftover = product & _U32
    if leftover < excl:
        threshold = (_U32 - top) % excl
        while leftover < threshold:
            product = next32(gen) * excl
            leftover = product & _U32
    return np.int64(product >> _SHIFT32)


__all__ = ["below", "entropy_words", "interval", "next32", "next64", "permute", "seed_generator", "seed_state"]
