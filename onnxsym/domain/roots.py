"""The sizes where a dim in one symbol is 0 (``2*seq - 8`` at 4, ``seq//2 - 4`` at 8 and 9,
``max(0, seq - 2)//2 - 3`` at 8 and 9), when they are finitely many and found cheaply: what a
pin through an expression leaves (see onnxsym.domain.pins)."""

from __future__ import annotations

import math
from fractions import Fraction

from .. import dims
from ..dims import Dim, Sym
from . import structure as st

# The most evaluations one search makes (beyond: not found).
WORK = 1 << 14


def roots(g: Dim, name: str, lo: int, hi: int) -> set[int] | None:
    """The sizes in ``[lo, hi]`` where ``g`` (a dim in the symbol ``name`` alone) is 0, or None
    where they are without end or not found cheaply.

    With ``s = L*q + r`` (``L`` a period of every floor in ``g``), ``g`` is a polynomial in ``q``
    of degree at most ``D`` on each residue ``r``, between two sizes where a min or max of it
    changes which argument it picks (each argument a line on each residue of its period, between
    where its own mins and maxes change: two cross at most once): read from ``D + 1`` values
    there, it is 0 everywhere (sizes without end, unless the stretch ends: then each of its
    sizes) or has its integer roots within Cauchy's bound of the stretch's start. A short
    stretch is evaluated at each size."""
    free = dims.free_symbols(g)
    if not free:
        return set() if g != 0 else None
    if len(free) != 1 or next(iter(free)).name != name:
        return None
    s = next(iter(free))
    shape = _period_degree(g, s)
    cuts = _breaks(g, s, lo, hi)
    if shape is None or cuts is None:
        return None
    L, D = shape
    if L * (D + 1) > WORK:
        return None
    f = st.compiled(g, (s,))
    edges = [lo] + sorted(c for c in cuts if lo < c <= hi) + [hi + 1]
    out: set[int] = set()
    work = 0
    try:
        for a, b in zip(edges, edges[1:]):  # a stretch [a, b - 1] where no min or max changes
            for r in range(L):
                q_lo, q_hi = -((r - a) // L), (b - 1 - r) // L  # the q with a <= L*q + r <= b - 1
                if q_lo > q_hi:
                    continue
                last = q_hi
                if q_hi - q_lo > D + 1:  # (a few sizes only: each tried)
                    bound = _root_bound([f(L * (q_lo + t) + r) for t in range(D + 1)])
                    if bound is None and b > hi:
                        return None  # 0 at every size of this residue from a on: sizes without end
                    # (0 at every size of this residue in a stretch that ends: each is a root)
                    last = q_hi if bound is None else min(q_hi, q_lo + bound)
                work += last - q_lo + 1 + D
                if work > WORK:
                    return None
                out |= {L * q + r for q in range(q_lo, last + 1) if f(L * q + r) == 0}
    except ZeroDivisionError:
        return None
    return out


def _period_degree(d: Dim, s: Sym) -> tuple[int, int] | None:
    """(a period, a degree) of ``d`` in ``s`` as :mod:`.periods` reads them, a min or max as
    its arguments (past the size where it settles on one); None for a symbolic divisor."""
    if isinstance(d, int):
        return 1, 0
    L, D = 1, 0
    for m, _ in st.monomials(d):
        total = 0
        for atom, e in m:
            if atom is s:
                total += e
                continue
            if st.kind(atom) == "sym" or s not in st.symbols_of(atom):
                continue
            if st.kind(atom) in ("min", "max"):
                parts = [_period_degree(a, s) for a in st.args(atom)]
                if any(p is None for p in parts):
                    return None
                L = math.lcm(L, *(p[0] for p in parts if p is not None))
                total += e * max(p[1] for p in parts if p is not None)
                continue
            x, c = st.args(atom)
            inner = _period_degree(x, s)
            if not isinstance(c, int) or c <= 0 or inner is None:
                return None
            L = math.lcm(L, c * inner[0])
            total += e * inner[1]
        D = max(D, total)
    return L, D


def _breaks(d: Dim, s: Sym, lo: int, hi: int) -> set[int] | None:
    """Sizes in ``(lo, hi]`` between which no min or max in ``d`` changes the argument it picks
    (each such size starts a new stretch), or None where they are not found: each argument must
    be of degree at most 1 in ``s`` (``s``, numbers, floors by numbers and mins and maxes of
    such), so that on each residue of a period ``L`` of it, between its own breaks, it is a line
    in ``s``; two lines cross at most once."""
    out: set[int] = set()
    for m, _ in st.monomials(d):
        for atom, _e in m:
            if st.kind(atom) == "sym" or s not in st.symbols_of(atom):
                continue
            inner: set[int] = set()
            for x in st.args(atom):
                got = _breaks(x, s, lo, hi)
                if got is None:
                    return None
                inner |= got
            out |= inner
            if st.kind(atom) in ("min", "max"):
                crossed = _crossed(st.args(atom), s, sorted(inner), lo, hi)
                if crossed is None:
                    return None
                out |= crossed
            if len(out) > WORK:
                return None
    return out


def _crossed(args, s: Sym, inner: list[int], lo: int, hi: int) -> set[int] | None:
    """The sizes where ``args`` (each a line on each residue between the ``inner`` breaks) may
    change their order, or None where one is of degree above 1 or its period is too long."""
    L, D = 1, 0
    for x in args:
        shape = _period_degree(x, s)
        if shape is None:
            return None
        L, D = math.lcm(L, shape[0]), max(D, shape[1])
    if L * len(args) * (len(inner) + 1) > WORK:
        return None
    if D > 1:
        return _crossed_curves(args, s, inner, lo, hi, L, D)
    fs = [st.compiled(x, (s,)) for x in args]
    out: set[int] = set()
    edges = [lo] + [c for c in inner if lo < c <= hi] + [hi + 1]
    for a, b in zip(edges, edges[1:]):
        for r in range(L):
            q0, q_hi = -((r - a) // L), (b - 1 - r) // L  # the q with a <= L*q + r <= b - 1
            if q0 > q_hi:
                continue
            if q0 == q_hi:
                continue  # (one size on this residue: no order to change)
            # each argument on this residue, in this stretch: a line a*q + b
            lines = [(f(L * (q0 + 1) + r) - f(L * q0 + r), f(L * q0 + r)) for f in fs]
            lines = [(u, v - u * q0) for u, v in lines]
            for (a1, b1), (a2, b2) in ((p, q) for i, p in enumerate(lines) for q in lines[i + 1:]):
                if a1 != a2:
                    past = L * (math.floor(Fraction(b2 - b1, a1 - a2)) + 1) + r  # the first size past the crossing
                    if a < past <= b - 1:
                        out.add(past)
    return out


def _crossed_curves(args, s: Sym, inner: list[int], lo: int, hi: int, L: int, D: int) -> set[int] | None:
    """:func:`_crossed` for arguments of degree ``D`` above 1 (``max(0, seq - seq**2)``): on each
    residue, between the ``inner`` breaks, two arguments differ by a polynomial in ``q`` of degree
    at most ``D``, whose sign is the same past its roots' bound; before it, each size where the
    sign changes is a break (a superset of where their order changes)."""
    fs = [st.compiled(x, (s,)) for x in args]
    out: set[int] = set()
    edges = [lo] + [c for c in inner if lo < c <= hi] + [hi + 1]
    work = 0
    for a, b in zip(edges, edges[1:]):
        for r in range(L):
            q0, q_hi = -((r - a) // L), (b - 1 - r) // L
            if q0 >= q_hi:
                continue  # (one size on this residue at most: no order to change)
            for i, f in enumerate(fs):
                for g in fs[i + 1:]:
                    n = min(q_hi - q0, D + 1)
                    diff = [f(L * (q0 + t) + r) - g(L * (q0 + t) + r) for t in range(n + 1)]
                    bound = _root_bound(diff[:D + 1]) if n >= D + 1 else None
                    # (0 throughout when bound is None on a long stretch: no order to change)
                    last = q_hi - q0 if n < D + 1 else min(q_hi - q0, bound if bound is not None else 0)
                    work += last + D + 2
                    if work > WORK:
                        return None
                    diff += [f(L * (q0 + t) + r) - g(L * (q0 + t) + r) for t in range(len(diff), last + 2)]
                    for t in range(1, min(last + 2, len(diff))):
                        if (diff[t] > 0) != (diff[t - 1] > 0) or (diff[t] < 0) != (diff[t - 1] < 0):
                            past = L * (q0 + t) + r
                            if a < past <= b - 1:
                                out.add(past)
    return out


def _root_bound(values: list[int]) -> int | None:
    """A ``B`` such that the polynomial ``p`` of degree at most ``len(values) - 1`` with
    ``p(t) == values[t]`` has no root ``t > B`` (None: ``p`` is 0)."""
    n = len(values)
    # Newton's forward differences, then the coefficients in powers of t
    diffs, row = [], list(values)
    for _ in range(n):
        diffs.append(row[0])
        row = [b - a for a, b in zip(row, row[1:])]
    coeffs = [Fraction(0)] * n
    for k, dk in enumerate(diffs):  # dk * t(t-1)...(t-k+1) / k!
        falling = [Fraction(1)]
        for j in range(k):
            falling = [Fraction(0)] + falling  # times t, minus j times
            for i in range(len(falling) - 1):
                falling[i] -= j * falling[i + 1]
        for i, c in enumerate(falling):
            coeffs[i] += dk * c / math.factorial(k)
    while coeffs and coeffs[-1] == 0:
        coeffs.pop()
    if not coeffs:
        return None
    lead = abs(coeffs[-1])
    return 1 + int(max((abs(c) / lead for c in coeffs[:-1]), default=Fraction(0)))
