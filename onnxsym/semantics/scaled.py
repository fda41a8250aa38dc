"""A float32 scale's size arithmetic as a simple fraction: onnxruntime's Resize computes
``(int64_t)(scale * dim)`` in float32; for a scale such as 0.3 (float32 0.30000001192...) that
is ``floor(3*dim/10)`` for every dim up to some bound, found here by trying every dim."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np

# Dims past this are not exact in float32: no formula is claimed beyond.
FLOAT32_EXACT = 2 ** 24
# The largest denominator tried (a period the pins' root search still reads cheaply).
DENOMINATOR = 1 << 10
_CHUNK = 1 << 20


@lru_cache(maxsize=256)
def as_fraction(scale: float) -> tuple[int, int, int] | None:
    """``(a, b, last)``: ``int(float32(scale) * float32(d)) == a*d // b`` for every ``d`` in
    ``[0, last]`` (``b`` at most DENOMINATOR, ``last`` at most 2**24), from the simplest
    fraction near the scale, checked at each ``d``; None when it fails already at some small
    dim (below 2**20)."""
    s = np.float32(scale)
    if not np.isfinite(s) or s <= 0:
        return None
    f = Fraction(float(s)).limit_denominator(DENOMINATOR)
    a, b = f.numerator, f.denominator
    for start in range(0, FLOAT32_EXACT + 1, _CHUNK):
        d = np.arange(start, min(start + _CHUNK, FLOAT32_EXACT + 1), dtype=np.int64)
        with np.errstate(over="ignore", invalid="ignore"):
            got = (s * d.astype(np.float32)).astype(np.int64)
        bad = np.flatnonzero(got != a * d // b)
        if bad.size:
            last = start + int(bad[0]) - 1
            return (a, b, last) if last >= 1 << 20 else None
    return a, b, FLOAT32_EXACT
