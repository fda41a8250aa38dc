"""Ranges learned from what a node needs to run: ``d >= lo`` narrows the symbols of ``d``.

A Conv runs only when each spatial input dim is at least its dilated kernel minus
its pads; onnxruntime refuses anything shorter. So every input size at which the
model runs satisfies ``d >= lo``, and the ranges of ``d``'s symbols may be narrowed
to the values that allow it: ``(width - 1)//4 + 1 >= 8`` gives ``width >= 29``.

:func:`implied_ranges` is the algebra: for each symbol ``s`` of ``d`` in which ``d``
is provably monotone, the narrowest range of ``s`` that still
lets ``d`` reach ``lo`` with every other symbol free in its range. It never narrows
more than the fact allows: a value is cut off only when the interval range of ``d``
with ``s`` fixed there proves ``d < lo``.
"""

from __future__ import annotations

from .. import dims
from ..dims import Dim, Sym


class Unreachable(ValueError):
    """``d >= lo`` can never hold: the node can never run."""


def implied_ranges(d: Dim, lo: int) -> dict[Sym, tuple[int, int]]:
    """The symbols of ``d`` whose range ``d >= lo`` narrows, each with its new range.
    Raises :class:`Unreachable` when the ranges prove ``d < lo``."""
    if dims.range_of(d)[1] < lo:
        raise Unreachable(f"{d} <= {dims.range_of(d)[1]} < {lo}")
    if dims.try_le(lo, d) is True:
        return {}
    out: dict[Sym, tuple[int, int]] = {}
    linear = _linear(d)
    for s in sorted(dims.free_symbols(d), key=lambda s: s.name):
        if linear is not None:  # (d grows with s by its coefficient: the bisection's answer in closed form)
            new = _narrowed_linear(d, lo, s, linear[s])
            if new != (s.lo, s.hi):
                out[s] = new
            continue
        way = direction(d, s)
        if not way:
            continue
        new = _narrowed(d, lo, s, way)
        if new != (s.lo, s.hi):
            out[s] = new
    return out


def _linear(d: Dim) -> dict[Sym, int] | None:
    """Each symbol's coefficient where ``d`` is a constant plus symbols times integers (its
    interval range is then exact arithmetic on the symbols' ranges), else None."""
    out: dict[Sym, int] = {}
    for c, factors in dims.structure.terms(d):
        if not factors:
            continue
        if len(factors) != 1 or factors[0][1] != 1 or (s := dims.as_sym(factors[0][0])) is None:
            return None
        out[s] = c
    return out


def _narrowed_linear(d: Dim, lo: int, s: Sym, k: int) -> tuple[int, int]:
    """:func:`_narrowed` of a linear ``d == k*s + rest`` (``k != 0``): with ``s == v`` its range
    reaches up to ``k*v + h`` (``h`` the top of ``rest``'s range), which is ``>= lo`` exactly
    where ``v >= (lo - h)/k`` (``k > 0``) or ``v <= (h - lo)/-k`` (``k < 0``)."""
    h = dims.range_of(dims.sub(d, dims.mul(k, dims.expr_of(s))))[1]
    first, last = (s.lo, s.hi) if k > 0 else (s.hi, s.lo)
    if k * first + h >= lo:
        return s.lo, s.hi
    if k * last + h < lo:
        raise Unreachable(f"{d} < {lo} for every {s.name} in [{s.lo}, {s.hi}]")
    if k > 0:
        return -((h - lo) // k), s.hi  # the least v with k*v >= lo - h
    return s.lo, (h - lo) // -k  # the greatest v with -k*v <= h - lo


def _reaches(d: Dim, lo: int, s: Sym, v: int) -> bool:
    """Whether ``d`` may still be ``>= lo`` with ``s == v`` (False only when proven not)."""
    return dims.range_of(dims.substitute(d, {s: v}))[1] >= lo


def _narrowed(d: Dim, lo: int, s: Sym, way: int) -> tuple[int, int]:
    """``s``'s range without the values at which ``d < lo`` is proven; ``way`` is +1 when
    ``d`` grows with ``s`` (a lower end to raise), -1 when it shrinks (an upper end to lower)."""
    first, last = (s.lo, s.hi) if way > 0 else (s.hi, s.lo)  # d grows from first to last
    if _reaches(d, lo, s, first):
        return s.lo, s.hi
    if not _reaches(d, lo, s, last):
        raise Unreachable(f"{d} < {lo} for every {s.name} in [{s.lo}, {s.hi}]")
    bad, good = first, last  # d < lo is proven at bad, and at every value before it
    # a bisection: its work is bounded by the range's width, at most 64 halvings of int64
    while abs(good - bad) > 1:
        mid = (bad + good) // 2
        if _reaches(d, lo, s, mid):
            good = mid
        else:
            bad = mid
    return (good, s.hi) if way > 0 else (s.lo, good)


# --------------------------------------------------------------------------- monotonicity


def direction(d: Dim, s: Sym) -> int | None:
    """+1 if ``d`` provably never decreases as ``s`` grows, -1 if it never increases,
    0 if it does not depend on ``s``, None when the ranges cannot tell. The proof is
    ``d(s) <= d(s + 1)`` (or ``>=``) for every value of every symbol."""
    if s not in dims.free_symbols(d):
        return 0
    step = dims.sub(dims.substitute(d, {s: dims.add(dims.expr_of(s), 1)}), d)
    if dims.try_le(0, step) is True:
        return 1
    if dims.try_le(step, 0) is True:
        return -1
    return _structural_direction(d, s)


def _agree(ways: list[int | None]) -> int | None:
    """The direction of a sum, max or min of parts going these ways (0: constant)."""
    moving = {w for w in ways if w != 0}
    if None in moving or len(moving) > 1:
        return None
    return moving.pop() if moving else 0


def _structural_direction(d: Dim, s: Sym) -> int | None:
    """The direction read off ``d``'s structure, where the difference ``d(s + 1) - d(s)`` is not
    decided (it loses track through max and floor division: ``max(0, (h + 1)//2 - 2)//2 + 1``
    grows with ``h``): a sum, max or min of parts going one way goes that way; a floor
    division by a positive divisor constant in ``s`` goes the way of its numerator; a product
    of non-negative factors going one way, times a coefficient, goes that way or the other."""
    if s not in dims.free_symbols(d):
        return 0
    parts = []
    for c, factors in dims.structure.terms(d):
        way = _agree([_atom_direction(f, s) for f, _ in factors])
        if way and any(dims.range_of(f)[0] < 0 for f, _ in factors):
            return None  # a negative factor may turn the product around
        parts.append(None if way is None else way * (1 if c > 0 else -1))
    return _agree(parts)


def _atom_direction(f: Dim, s: Sym) -> int | None:
    if s not in dims.free_symbols(f):
        return 0
    op = dims.structure.operation(f)
    if op is None:
        return 1  # the symbol s itself
    kind, args = op
    if kind == "floordiv":
        n, q = args
        if s in dims.free_symbols(q) or dims.range_of(q)[0] < 1:
            return None
        return _structural_direction(n, s)
    return _agree([_structural_direction(a, s) for a in args])
