"""Optional compilation: numba's ``njit`` when numba is installed and enabled, else the plain Python function.

The kernels of :mod:`c8env.vector` are written once, as loops over NumPy arrays. With
numba they are compiled (``pip install c8env[fast]``); without it, or with
``NUMBA_DISABLE_JIT=1``, the same code runs as ordinary Python on the same arrays:
identical results, much slower.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable)

try:
    import numba
except ImportError:  # the package works without it
    numba = None

#: True when the kernels are compiled.
COMPILED = numba is not None and os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")


def jit(function: F) -> F:
    """Compile ``function`` with numba (no Python objects, no GIL, cached on disk) when available."""
    if not COMPILED:
        return function
    # _nrt=False: no reference counting. The kernels take tuples of many arrays and allocate nothing; with
    # counting on, every call that branches pays an increment and a decrement per array (measured: 5x slower).
    return numba.njit(cache=True, nogil=True, _nrt=False)(function)


def inline(function: F) -> F:
    """Like :func:`jit`, and inlined into its callers (the batch state is a tuple of many arrays: a call
    that passes it costs more than the work of a small helper)."""
    if not COMPILED:
        return function
    return numba.njit(cache=True, nogil=True, inline="always")(function)


def bound(kernel: F, *args: Any) -> F:
    """``kernel`` compiled (or loaded from the cache) for the types of ``args``, to be called without numba's
    dispatch: the types of tuples of arrays (:class:`c8env.vector.kernels.Games`) are found in Python at each
    call, about 15 us, more than a thread's share of a step. Every later call must pass arguments of exactly
    those types (dtype, dimensions, C-contiguous arrays): they are not checked. Without numba: ``kernel``."""
    if not COMPILED:
        return kernel
    return kernel.compile(tuple(kernel.typeof_pyval(arg) for arg in args))


__all__ = ["COMPILED", "bound", "inline", "jit"]
