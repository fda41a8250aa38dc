"""``max`` and ``min`` of dims, with the arguments that are provably dominated dropped."""

from __future__ import annotations

from collections.abc import Iterable

from .expr import Dim, Expr, OpAtom, atom_expr, check_dim, dim_key
from .ranges import try_le


def _minmax(kind: str, args: Iterable[Dim]) -> Dim:
    flat: list[Dim] = []
    for x in args:
        check_dim(x)
        if isinstance(x, Expr) and len(x.terms) == 1 and x.terms[0][1] == 1 \
                and len(x.terms[0][0]) == 1 and x.terms[0][0][0][1] == 1:
            atom = x.terms[0][0][0][0]
            if isinstance(atom, OpAtom) and atom.kind == kind:
                flat.extend(atom.args)
                continue
        flat.append(x)
    if not flat:
        raise ValueError(f"{kind}() of no dims")
    better = try_le if kind == "min" else (lambda p, q: try_le(q, p))
    kept: list[Dim] = []
    for x in flat:
        if any(x is y or better(y, x) is True for y in kept):
            continue
        kept = [y for y in kept if better(x, y) is not True]
        kept.append(x)
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=dim_key)
    return atom_expr(OpAtom(kind, tuple(kept)))


def dmax(*args: Dim) -> Dim:
    """``max`` of dims; arguments that are provably dominated are dropped."""
    if len(args) == 1 and not isinstance(args[0], (int, Expr)):
        args = tuple(args[0])
    if all(isinstance(x, int) for x in args):
        return max(args)
    return _minmax("max", args)


def dmin(*args: Dim) -> Dim:
    """``min`` of dims; arguments that are provably dominated are dropped."""
    if len(args) == 1 and not isinstance(args[0], (int, Expr)):
        args = tuple(args[0])
    if all(isinstance(x, int) for x in args):
        return min(args)
    return _minmax("min", args)

