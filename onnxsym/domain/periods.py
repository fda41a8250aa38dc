"""The period and the degree of a dim in one symbol ``s``: with ``s = L*q + r`` (``L`` a period),
every floor and modulo of ``s`` becomes a polynomial in ``q``, of the degree given."""

from __future__ import annotations

import math

from ..dims import Dim, Sym
from . import structure as st


def period(d: Dim, s: Sym) -> int | None:
    """An ``L`` such that, with ``s = L*q + r``, every floor and modulo in ``d`` becomes a
    polynomial in ``q`` (the lcm, over nested divisions, of the products of divisors);
    None when a min/max or a symbolic divisor depends on ``s``."""
    if isinstance(d, int):
        return 1
    out = 1
    for m, _ in st.monomials(d):
        for atom, _e in m:
            if st.kind(atom) == "sym" or s not in st.symbols_of(atom):
                continue
            if st.kind(atom) in ("min", "max"):
                return None
            x, c = st.args(atom)
            if not isinstance(c, int) or c <= 0:
                return None
            inner = period(x, s)
            if inner is None:
                return None
            out = math.lcm(out, c * inner)
    return out


def degree(d: Dim, s: Sym) -> int:
    """The degree in ``q`` of ``d`` with ``s = L*q + r`` (``L`` a :func:`period`): a floor
    is as high as its argument, a modulo is constant."""
    if isinstance(d, int):
        return 0
    best = 0
    for m, _ in st.monomials(d):
        total = 0
        for atom, e in m:
            if atom is s:
                total += e
            elif st.kind(atom) == "floordiv":
                total += e * degree(st.args(atom)[0], s)
        best = max(best, total)
    return best
