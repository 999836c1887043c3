"""Seeds derived from seeds: one rule for every place that needs a sub-seed (deals, workers, runs).

``derive_seed(seed, k)`` is a pure function of its parts (NumPy's ``SeedSequence``),
so a deal, a worker's share or a training stage gets the same seed wherever and in
whatever order it is computed.
"""

from __future__ import annotations

import numpy as np

_LOW_WORD = (1 << 32) - 1


def derive_seed(*parts: int, bits: int = 64) -> int:
    """A seed in ``[0, 2**bits)`` derived from the integer ``parts``.

    ``bits=64`` gives NumPy's first 64-bit ``SeedSequence`` word; ``bits`` of 32 or fewer
    take the top bits of its low 32-bit word (for libraries that want seeds below 2**32,
    such as Stable-Baselines3's ``set_random_seed``).
    """
    if not 1 <= bits <= 64 or (32 < bits < 64):
        raise ValueError(f"bits={bits!r} is invalid; allowed: 64, or an int from 1 to 32")
    value = int(np.random.SeedSequence(list(parts)).generate_state(1, np.uint64)[0])
    if bits == 64:
        return value
    return (value & _LOW_WORD) >> (32 - bits)


__all__ = ["derive_seed"]
