"""Ranges learned from what a node needs to run: ``d >= lo`` narrows the symbols of ``d``.

A Conv runs only when each spatial input dim is at least its dilated kernel minus
its pads; onnxruntime refuses anything shorter. So every input size at which the
model runs satisfies ``d >= lo``, and the ranges of ``d``'s symbols may be narrowed
to the values that allow it: ``(width - 1)//4 + 1 >= 8`` gives ``width >= 29``.

:func:`implied_ranges` is the algebra: for each symbol ``s`` of ``d`` in which ``d``
is monotone (provably, from its structure), the narrowest range of ``s`` that still
lets ``d`` reach ``lo`` with every other symbol free in its range. It never narrows
more than the fact allows: a value is cut off only when the interval range of ``d``
with ``s`` fixed there proves ``d < lo``.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from . import dims
from .dims import Dim, Sym


class Unreachable(ValueError):
    """``d >= lo`` can never hold: the node can never run."""


def implied_ranges(d: Dim, lo: int) -> Dict[Sym, Tuple[int, int]]:
    """The symbols of ``d`` whose range ``d >= lo`` narrows, each with its new range.
    Raises :class:`Unreachable` when the ranges prove ``d < lo``."""
    if dims.range_of(d)[1] < lo:
        raise Unreachable(f"{d} <= {dims.range_of(d)[1]} < {lo}")
    if dims.try_le(lo, d) is True:
        return {}
    out: Dict[Sym, Tuple[int, int]] = {}
    for s in sorted(dims.free_symbols(d), key=lambda s: s.name):
        way = direction(d, s)
        if not way:
            continue
        new = _narrowed(d, lo, s, way)
        if new != (s.lo, s.hi):
            out[s] = new
    return out


def _reaches(d: Dim, lo: int, s: Sym, v: int) -> bool:
    """Whether ``d`` may still be ``>= lo`` with ``s == v`` (False only when proven not)."""
    return dims.range_of(dims.substitute(d, {s: v}))[1] >= lo


def _narrowed(d: Dim, lo: int, s: Sym, way: int) -> Tuple[int, int]:
    """``s``'s range without the values at which ``d < lo`` is proven; ``way`` is +1 when
    ``d`` grows with ``s`` (a lower end to raise), -1 when it shrinks (an upper end to lower)."""
    first, last = (s.lo, s.hi) if way > 0 else (s.hi, s.lo)  # d grows from first to last
    if _reaches(d, lo, s, first):
        return s.lo, s.hi
    if not _reaches(d, lo, s, last):
        raise Unreachable(f"{d} < {lo} for every {s.name} in [{s.lo}, {s.hi}]")
    bad, good = first, last  # d < lo is proven at bad, and at every value before it
    while abs(good - bad) > 1:
        mid = (bad + good) // 2
        if _reaches(d, lo, s, mid):
            good = mid
        else:
            bad = mid
    return (good, s.hi) if way > 0 else (s.lo, good)


# --------------------------------------------------------------------------- monotonicity


def direction(d: Dim, s: Sym) -> Optional[int]:
    """+1 if ``d`` provably never decreases as ``s`` grows, -1 if it never increases,
    0 if it does not depend on ``s``, None when its structure does not tell."""
    if isinstance(d, int):
        return 0
    total = 0
    for mono, coef in d.terms:
        way = _mono_direction(mono, s)
        if way is None:
            return None
        total = _join(total, way if coef > 0 else -way)
        if total is None:
            return None
    return total


def _join(a: Optional[int], b: Optional[int]) -> Optional[int]:
    """The direction of a sum (or of a product of nonnegative factors) of two parts."""
    if a is None or b is None:
        return None
    if a == 0 or b == 0 or a == b:
        return a or b
    return None


def _mono_direction(mono, s: Sym) -> Optional[int]:
    """A product of atoms: monotone when it is one atom, or when every factor is nonnegative."""
    if len(mono) == 1 and mono[0][1] == 1:
        return _atom_direction(mono[0][0], s)
    ways = [_atom_direction(atom, s) for atom, _ in mono]
    if None in ways:
        return None
    if not any(ways):
        return 0
    if any(atom.range()[0] < 0 for atom, _ in mono):
        return None
    total: Optional[int] = 0
    for way in ways:
        total = _join(total, way)
    return total


def _atom_direction(atom, s: Sym) -> Optional[int]:
    if isinstance(atom, Sym):
        return 1 if atom is s else 0
    kind, args = atom.kind, atom.args
    if kind == "floordiv":
        n, q = args
        if direction(q, s) == 0 and dims.range_of(q)[0] > 0:
            return direction(n, s)
        return None if direction(n, s) != 0 or direction(q, s) != 0 else 0
    if kind in ("max", "min"):
        total: Optional[int] = 0
        for x in args:
            total = _join(total, direction(x, s))
        return total
    # mod, or any other kind: monotone only when constant in s
    return 0 if all(direction(x, s) == 0 for x in args) else None
