"""A product equality over several symbols split into one equality per symbol, where that
is provably the same condition.

``k1 * P_a(a) * P_b(b) ... == k2 * Q_a(a) * Q_b(b) ...`` (each factor over one symbol;
MaxViT's window count ``32*batch*((h + 3)//8)*((w + 3)//8) == 8*batch*((h + 3)//4)*((w + 3)//4)``)
splits when there are positive rationals ``c_s`` with ``k1 * prod(c_s) == k2`` such that,
over every symbol's range, ``X_s = P_s`` and ``Y_s = c_s*Q_s`` (scaled to integers) are ordered
the same way for every symbol (``X_s <= Y_s`` everywhere, or ``>=`` everywhere), the smaller of
the two is ``>= 0`` and the larger ``>= 1``. Then ``prod(X_s) == prod(Y_s)`` holds exactly when
``X_s == Y_s`` for every symbol: where one is strictly smaller, its product is smaller (the
other factors are at least 1 on the larger side, at least 0 on the smaller). ``c_s`` is the
ratio the two sides of a symbol tend to (their leading coefficients in ``q``, with
``s = L*q + r``); every order and sign is proven per residue class ``r``, where each side is a
polynomial of degree at most 1 in ``q``, by its values at the two ends of the symbol's range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction

from .. import dims
from ..dims import Dim, Sym
from . import structure as st
from .periods import degree, period

# The largest period a side may have (the evaluations cost ``period`` each).
MAX_PERIOD = 256


def split(lhs: Dim, rhs: Dim) -> list[tuple[Dim, Dim]] | None:
    """``lhs == rhs`` as equalities over one symbol each, all of which hold exactly where it
    does ([] when it always holds), or None where that is not proven."""
    terms = st.monomials(dims.sub(lhs, rhs))
    if len(terms) != 2 or any(not m for m, _ in terms) or terms[0][1] * terms[1][1] >= 0:
        return None
    (m1, k1), (m2, k2) = sorted(terms, key=lambda t: -t[1])  # k1*M1 == -k2*M2
    k2 = -k2
    sides: dict[Sym, list[list[tuple[object, int]]]] = {}
    for i, m in enumerate((m1, m2)):
        for atom, e in m:
            syms = st.symbols_of(atom)
            if len(syms) != 1:
                return None
            sides.setdefault(next(iter(syms)), [[], []])[i].append((atom, e))
    pieces = []
    ratio = Fraction(1)
    order = 0  # +1: every X_s >= Y_s; -1: every X_s <= Y_s
    for s, (ps, qs) in sorted(sides.items(), key=lambda kv: kv[0].name):
        p, q = _product(ps), _product(qs)
        c = _limit_ratio(p, q, s)
        if c is None:
            return None
        x, y = dims.mul(p, c.denominator), dims.mul(q, c.numerator)  # X_s == Y_s: P_s == c*Q_s
        ratio *= c
        sign = _sign(dims.sub(x, y), s)
        if sign is None or (sign and order and sign != order):
            return None
        order = order or sign
        small, large = (y, x) if sign > 0 else (x, y)
        if not (_at_least(small, 0, s) and _at_least(large, 1, s)):
            return None
        if sign:
            pieces.append((x, y))
    if k1 * ratio != k2:
        return None
    return pieces


def _product(factors: Sequence[tuple[object, int]]) -> Dim:
    out: Dim = 1
    for atom, e in factors:
        for _ in range(e):
            out = dims.mul(out, st.as_dim(atom))
    return out


def _residue_ends(s: Sym, L: int) -> Iterator[tuple[int, int, int]]:
    """Each residue ``r`` of ``s`` mod ``L`` with the least and the largest ``q`` such that
    ``L*q + r`` is in the symbol's range (residues the range misses are left out)."""
    for r in range(L):
        lo, hi = -((r - s.lo) // L), (s.hi - r) // L
        if lo <= hi:
            yield r, lo, hi


def _linear(d: Dim, s: Sym) -> int | None:
    """A period ``L`` of ``d`` in ``s`` where ``d`` is of degree at most 1 in ``q``; else None."""
    L = period(d, s)
    if L is None or L > MAX_PERIOD or degree(d, s) > 1:
        return None
    return L


def _sign(d: Dim, s: Sym) -> int | None:
    """0 when ``d`` is 0 over the range of ``s``, +1 when it is ``>= 0`` there (and not always 0),
    -1 when ``<= 0``, None when it takes both signs or that is not proven."""
    if isinstance(d, int):
        return (d > 0) - (d < 0)
    L = _linear(d, s)
    if L is None:
        return None
    f = st.compiled(d, (s,))
    values = set()
    for r, lo, hi in _residue_ends(s, L):  # linear in q: its extremes are at the ends
        try:
            values |= {f(L * lo + r), f(L * hi + r)}
        except ZeroDivisionError:
            return None
    pos, neg = any(v > 0 for v in values), any(v < 0 for v in values)
    return None if pos and neg else (1 if pos else -1 if neg else 0)


def _at_least(d: Dim, k: int, s: Sym) -> bool:
    """Whether ``d >= k`` over the range of ``s``: by the ranges of its atoms, else per residue."""
    if isinstance(d, int):
        return d >= k
    lows = [(c, [st.atom_range(a)[0] for a, _ in m]) for m, c in st.monomials(d)]
    if len(lows) == 1 and lows[0][0] > 0 and all(lo >= 0 for lo in lows[0][1]):
        c, ls = lows[0]
        if c * math.prod(ls) >= k:  # (each exponent at least 1: the product of lows bounds it)
            return True
    sign = _sign(dims.sub(d, k), s)
    return sign is not None and sign >= 0


def _limit_ratio(p: Dim, q: Dim, s: Sym) -> Fraction | None:
    """The positive ratio ``p/q`` tends to as ``s`` grows (their leading coefficients in ``q``,
    the same for every residue), or None."""
    if isinstance(p, int) or isinstance(q, int):
        return None  # a symbol on one side only
    L = math.lcm(*(period(d, s) or 0 for d in (p, q)))
    if L == 0 or L > MAX_PERIOD:
        return None
    D = max(degree(p, s), degree(q, s))
    fp, fq = st.compiled(p, (s,)), st.compiled(q, (s,))
    found = None
    for r, lo, hi in _residue_ends(s, L):
        if hi - lo < D:
            return None  # too few sizes in this class to read its polynomial
        lead = [_leading(f, L, r, lo, D) for f in (fp, fq)]
        if lead[0] is None or lead[1] is None or lead[0][0] != lead[1][0] or lead[1][1] == 0:
            return None
        c = Fraction(lead[0][1], lead[1][1])
        if c <= 0 or (found is not None and c != found):
            return None
        found = c
    return found


def _leading(f: Callable[[int], int], L: int, r: int, lo: int, D: int) -> tuple[int, Fraction] | None:
    """The degree and leading coefficient of ``q -> f(L*q + r)`` (a polynomial of degree at
    most ``D``), from its finite differences at ``lo .. lo + D``; None where it is 0."""
    try:
        values = [f(L * (lo + i) + r) for i in range(D + 1)]
    except ZeroDivisionError:
        return None
    diffs = [values]
    for _ in range(D):
        prev = diffs[-1]
        diffs.append([b - a for a, b in zip(prev, prev[1:])])
    for d in range(D, -1, -1):
        if diffs[d][0]:
            return d, Fraction(diffs[d][0], math.factorial(d))
    return None
