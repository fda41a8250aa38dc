"""The worst case of a cost over the data-dependent sizes: each fresh symbol (NonZero's count,
NonMaxSuppression's boxes, an unknown TopK k) at the upper bound its op proves (``Result.bounds``;
else the top of its range where that is finite). Stated only where the cost provably does not
decrease as the symbol grows (sums and products of sizes that are never negative, with max, min
and floor divisions by a positive divisor free of it), so that the bound's cost is at least the
cost of every run; else None."""

from __future__ import annotations

from collections.abc import Mapping

from .. import dims
from ..dims import Dim, structure

# A range's top this large is no bound a person reads: no worst case from it.
_NO_BOUND = 2**62


def worst(d: Dim | None, fresh: frozenset[str], bounds: Mapping[str, Dim]) -> Dim | None:
    """``d`` with every fresh symbol at its bound (bounds may name other fresh symbols: each is
    replaced in turn); None where one has no bound or ``d`` may decrease as it grows."""
    if d is None:
        return None
    for _ in range(16):  # (bounds over bounds: a Slice to NonZero's count)
        syms = [s for s in dims.free_symbols(d) if s.name in fresh]
        if not syms:
            return d
        mapping: dict[dims.Sym, Dim] = {}
        for s in syms:
            b = bounds.get(s.name)
            if b is None:
                hi = dims.range_of(dims.expr_of(s))[1]
                if hi >= _NO_BOUND:
                    return None
                b = hi
            if not nondecreasing(d, s):
                return None
            mapping[s] = b
        d = dims.substitute(d, mapping)
    return None


def nondecreasing(d: Dim, s: dims.Sym) -> bool:
    """Whether ``d`` provably does not decrease as ``s`` grows (conservative)."""
    if isinstance(d, int) or s not in dims.free_symbols(d):
        return True
    for c, factors in structure.terms(d):
        if not any(s in dims.free_symbols(f) for f, _ in factors):
            continue
        if c < 0:
            return False
        for f, _ in factors:  # a product of factors never negative, each nondecreasing in s
            if dims.try_le(0, f) is not True:
                return False
            if s in dims.free_symbols(f) and not _atom_nondecreasing(f, s):
                return False
    return True


def _atom_nondecreasing(f: Dim, s: dims.Sym) -> bool:
    if dims.as_sym(f) is not None:
        return True
    op = structure.operation(f)
    if op is None:
        return False
    kind, args = op
    if kind in ("max", "min"):
        return all(nondecreasing(a, s) for a in args)
    if kind == "floordiv":
        n, k = args
        return nondecreasing(n, s) and s not in dims.free_symbols(k) and dims.try_le(1, k) is True
    return False
