"""Substituting dims for symbols, re-canonicalizing the result."""

from __future__ import annotations

from collections.abc import Mapping

from .division import floordiv, mod
from .expr import Atom, Dim, OpAtom, Sym, add, atom_expr, expr_of, free_symbols, mul
from .minmax import dmax, dmin


def substitute(d: Dim, mapping: Mapping[Sym, Dim]) -> Dim:
    """``d`` with each symbol in ``mapping`` replaced by a dim, re-canonicalized."""
    if isinstance(d, int) or not mapping:
        return d
    total: Dim = 0
    for m, c in d.terms:
        v: Dim = c
        for atom, e in m:
            x = _subst_atom(atom, mapping)
            for _ in range(e):
                v = mul(v, x)
        total = add(total, v)
    return total


def _subst_atom(atom: Atom, mapping: Mapping[Sym, Dim]) -> Dim:
    if isinstance(atom, Sym):
        return mapping.get(atom, atom_expr(atom))
    assert isinstance(atom, OpAtom)
    args = [substitute(x, mapping) for x in atom.args]
    if atom.kind == "floordiv":
        return floordiv(*args)
    if atom.kind == "mod":
        return mod(*args)
    return dmax(*args) if atom.kind == "max" else dmin(*args)




def rebuild(d: Dim) -> Dim:
    """``d`` built again from its structure, canonical in the current environment (after a range
    narrowed, or in a :meth:`~onnxsym.dims.env.RangeEnv.child`)."""
    return substitute(d, {s: expr_of(s) for s in free_symbols(d)})
