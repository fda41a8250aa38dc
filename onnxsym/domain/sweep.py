"""The sizes where a dim in one symbol is 0 over a bounded range, found by evaluating it at every
size at once (numpy, int64): where :mod:`.roots` cannot read the dim (a polynomial under a floor
and a max, ``max(0, (-5*(max(0, 4*a - a**2)//5) + ...)//15) - 7`` with ``a = (2*seq + 1)//3``)
and the range is short enough (a Round's float bound leaves ``seq <= 4194304``). The evaluation
is exact or declined: an intermediate value that could leave int64 is no answer (None), and a
size whose divisor is 0 is no root (``Form.holds`` is False there, as where the node has no shape).
"""

from __future__ import annotations

import numpy as np

from .. import dims
from ..dims import Dim
from ..dims.env import bounded
from . import structure as st

# The widest range swept (its sizes evaluated at once, in chunks of CHUNK).
SWEPT = 1 << 22
CHUNK = 1 << 16
# More roots than this in a range: not a few sizes, not listed.
MOST = 1 << 10
# A bound on every value below this: each is exact in int64.
_SAFE = float(1 << 62)


class _Unsafe(Exception):
    """A dim not read here (an atom of another kind), or a value that could leave int64."""


def swept_roots(pairs: tuple[tuple[Dim, Dim], ...], name: str, lo: int, hi: int) -> set[int] | None:
    """The sizes in ``[lo, hi]`` where ``a == b`` for some pair of ``pairs`` (dims in the symbol
    ``name`` alone), or None where the range is too wide, a dim is not read, a value could leave
    int64, or there are more than :data:`MOST`."""
    free = frozenset().union(*(dims.free_symbols(dims.sub(a, b)) for a, b in pairs)) if pairs else frozenset()
    if len(free) != 1 or next(iter(free)).name != name or lo > hi or hi - lo + 1 > SWEPT:
        return None
    key = (pairs, lo, hi)
    if key not in _found:
        bounded(_found)[key] = _swept(pairs, next(iter(free)), lo, hi)
    return _found[key]


_found: dict = {}


def _swept(pairs, s, lo: int, hi: int) -> set[int] | None:
    out: set[int] = set()
    top = max(abs(lo), abs(hi))
    try:
        if any(_magnitude(d, top) >= _SAFE for pair in pairs for d in pair):
            return None
        with np.errstate(all="ignore"):
            for a in range(lo, hi + 1, CHUNK):
                v = np.arange(a, min(hi, a + CHUNK - 1) + 1, dtype=np.int64)
                memo: dict = {}  # (an atom both sides share, evaluated once)
                hit = np.zeros(v.shape, dtype=bool)
                for x, y in pairs:
                    (vx, bx), (vy, by) = _value(x, s, v, memo), _value(y, s, v, memo)
                    hit |= (vx == vy) & ~bx & ~by
                if len(out) + int(hit.sum()) > MOST:
                    return None
                out.update(int(x) for x in v[hit])
    except (_Unsafe, TypeError):
        return None
    return out


def _magnitude(d: Dim, top: int) -> float:
    """A bound on ``|d|`` and on every value met evaluating it, the symbol at most ``top`` in size."""
    total = 0.0
    for m, k in st.monomials(d):
        term = float(abs(k))
        for atom, e in m:
            term *= _atom_magnitude(atom, top) ** e
        total += term
    return total


def _atom_magnitude(atom, top: int) -> float:
    if st.kind(atom) == "sym":
        return float(top)
    return max(_magnitude(x, top) for x in st.args(atom))


def _value(d: Dim, s, v: np.ndarray, memo: dict) -> tuple[np.ndarray, np.ndarray]:
    """(``d`` at each size of ``v``, where a divisor in it is 0 there); ``memo``: each atom's."""
    total = np.zeros_like(v)
    bad = np.zeros(v.shape, dtype=bool)
    for m, k in st.monomials(d):
        term = np.full_like(v, k)
        for atom, e in m:
            if atom not in memo:
                memo[atom] = _atom_value(atom, s, v, memo)
            x, b = memo[atom]
            bad |= b
            term = term * x**e
        total = total + term
    return total, bad


def _atom_value(atom, s, v: np.ndarray, memo: dict) -> tuple[np.ndarray, np.ndarray]:
    k = st.kind(atom)
    if k == "sym":
        if atom is not s:
            raise _Unsafe
        return v, np.zeros(v.shape, dtype=bool)
    parts = [_value(x, s, v, memo) for x in st.args(atom)]
    bad = np.logical_or.reduce([b for _, b in parts])
    xs = [x for x, _ in parts]
    if k == "floordiv":
        n, q = xs
        zero = q == 0
        return n // np.where(zero, 1, q), bad | zero  # (floor, as Python's //)
    if k == "max":
        return np.maximum.reduce(xs), bad
    if k == "min":
        return np.minimum.reduce(xs), bad
    raise _Unsafe
