"""A condition on dims, simplified to the form a person reads.

A raw condition is ``lhs == rhs``, ``lhs <= rhs`` or a disjunction of equalities
(a broadcast: ``a == b or a == 1 or b == 1``). :func:`simplify` turns it into
zero or more :class:`Form` s:

- ``range``: one symbol between two numbers (``seq <= 64``), found by bisection
  when the condition is monotone in its only symbol;
- ``divisible``: one symbol in some residue classes (``height % 4 == 0``), found
  by substituting ``s = L*q + r`` for each residue ``r``: where every floor and
  modulo of ``s`` has a divisor dividing ``L``, each side is a polynomial in
  ``q`` and the algebra decides it exactly;
- ``other``: what does not simplify (``past + seq <= 64``), kept as it is.

An empty list means the condition always holds. Every decision here is exact
(a proof by the algebra, or an evaluation at every residue); where none is
possible the condition stays ``other``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from .. import dims
from ..dims import Dim, Sym
from . import cases, products
from . import structure as st
from .periods import degree, period

# The largest period tried for a residue analysis (substitutions cost).
MAX_PERIOD = 256


@dataclass(frozen=True)
class Form:
    """One simplified condition. ``kind``: range, divisible or other.

    range: ``symbol`` in ``[lo, hi]``; divisible: ``symbol % modulus`` in
    ``residues``; other: ``lhs rel rhs`` (rel ``==``, ``!=``, ``<=`` or ``or`` with ``alts``,
    or ``cases`` with ``pieces``: any piece whose relations all hold, see :mod:`.cases`).
    """

    kind: str
    symbol: str = ""
    lo: int = 0
    hi: int = 0
    modulus: int = 0
    residues: tuple[int, ...] = ()
    rel: str = ""
    lhs: Dim = 0
    rhs: Dim = 0
    alts: tuple[tuple[Dim, Dim], ...] = ()
    pieces: tuple[tuple[tuple[str, Dim, Dim], ...], ...] = ()
    below: int | None = None  # divisible: it also holds where symbol <= below (small sizes)

    def residue_holds(self, v: int) -> bool:
        """divisible: whether ``v``'s residue is allowed (the small sizes aside)."""
        return v % self.modulus in self.residues

    def holds(self, bindings) -> bool:
        try:
            return self._holds(bindings)
        except ZeroDivisionError:
            return False  # a divisor 0 at these sizes: what needs the condition has no shape there

    def _holds(self, bindings) -> bool:
        if self.kind == "range":
            return self.lo <= bindings[self.symbol] <= self.hi
        if self.kind == "divisible":
            v = bindings[self.symbol]
            return (self.below is not None and v <= self.below) or self.residue_holds(v)
        if self.rel == "or":
            return any(dims.evaluate(a, bindings) == dims.evaluate(b, bindings) for a, b in self.alts)
        if self.rel == "cases":
            return cases.holds(self.pieces, bindings)
        lhs, rhs = dims.evaluate(self.lhs, bindings), dims.evaluate(self.rhs, bindings)
        if self.rel == "!=":
            return lhs != rhs
        return lhs <= rhs if self.rel == "<=" else lhs == rhs

    def text(self, default: tuple[int, int] = (1, dims.INT64_MAX)) -> str:
        """How a person reads it; ``default`` is the symbol's own range (bounds it already has are left out)."""
        if self.kind == "range":
            if self.lo == self.hi:
                return f"{self.symbol} == {self.lo}"
            low, high = self.lo > default[0], self.hi < default[1]
            if low and high:
                return f"{self.lo} <= {self.symbol} <= {self.hi}"
            if high:
                return f"{self.symbol} <= {self.hi}"
            if not low and self.hi < dims.INT64_MAX:
                # the symbol's own range, which inference narrowed by this condition: its upper bound
                # is what it says (``9 - s >= 0`` is ``s <= 9``, not ``s >= 1``)
                return f"{self.lo} <= {self.symbol} <= {self.hi}" if self.lo > 1 else f"{self.symbol} <= {self.hi}"
            return f"{self.symbol} >= {self.lo}"  # (also a bound the range already has: stated, assumed)
        if self.kind == "divisible":
            small = f"{self.symbol} <= {self.below} or " if self.below is not None and self.below >= default[0] else ""
            if len(self.residues) == 1:
                return f"{small}{self.symbol} % {self.modulus} == {self.residues[0]}"
            return f"{small}{self.symbol} % {self.modulus} in {{{', '.join(map(str, self.residues))}}}"
        if self.rel == "cases":
            return cases.text(self.pieces)
        if self.rel == "or":
            (a, b), rest = self.alts[0], self.alts[1:]
            return f"{a} == {b} (or {' or '.join(f'{x} == {y}' for x, y in rest)})"
        return f"{self.lhs} {self.rel} {self.rhs}"

    @property
    def linear(self) -> bool:
        """An ``other`` form whose sides are linear in the symbols (``past + seq <= 64``)."""
        sides = [d for ab in (self.alts or ((self.lhs, self.rhs),)) for d in ab] + \
            [d for p in self.pieces for r in p for d in r[1:]]
        return all(len(m) <= 1 and (not m or (m[0][1] == 1 and st.kind(m[0][0]) == "sym"))
                   for d in sides for m, _ in st.monomials(d))

    @property
    def symbols(self) -> tuple[str, ...]:
        if self.kind != "other":
            return (self.symbol,)
        found = set()
        for a, b in self.alts or ((self.lhs, self.rhs),):
            found |= {s.name for s in dims.free_symbols(a) | dims.free_symbols(b)}
        for p in self.pieces:
            for _, a, b in p:
                found |= {s.name for s in dims.free_symbols(a) | dims.free_symbols(b)}
        return tuple(sorted(found))


def simplify(rel: str, lhs: Dim, rhs: Dim, alts: Sequence[tuple[Dim, Dim]] = ()) -> list[Form]:
    """``lhs rel rhs`` (or, for rel ``or``, any of ``alts``) as forms; [] when it always holds.
    A side whose divisor is 0 at some size (``0 // (2*batch)`` at ``batch = 0``) has no value
    there: the condition fails at that size (the rule that divides records the divisor ``>= 1``)."""
    try:
        return _simplify(rel, lhs, rhs, alts)
    except ZeroDivisionError:  # (an evaluation this module has no guard for: kept as it is)
        return _other(rel, lhs, rhs, alts)


def _simplify(rel: str, lhs: Dim, rhs: Dim, alts: Sequence[tuple[Dim, Dim]]) -> list[Form]:
    if rel == "or":
        return _disjunction(list(alts))
    if rel == "<=":
        return _at_most(lhs, rhs)
    if rel == "!=":
        return [] if dims.try_eq(lhs, rhs) is False else _other("!=", lhs, rhs)
    if rel == "atleast":  # lhs (a symbol) >= rhs, stated even where its range says so: an assumption
        s = dims.as_sym(lhs)
        return [Form("range", s.name, rhs, s.hi)] if s is not None and isinstance(rhs, int) else _at_most(rhs, lhs)
    return _equal(lhs, rhs)


def _other(rel, lhs, rhs, alts=()) -> list[Form]:
    if rel == "<=":
        lhs, rhs = _moved(lhs, rhs)
    return [Form("other", rel=rel, lhs=lhs, rhs=rhs, alts=tuple(alts))]


def _moved(lhs: Dim, rhs: Dim) -> tuple[Dim, Dim]:
    """``lhs <= rhs`` with the constant on the right: ``past + seq <= 64``."""
    diff = dims.sub(lhs, rhs)
    const = _constant(diff)
    if isinstance(diff, int):
        return diff, 0
    return dims.sub(diff, const), -const


def _constant(d: Dim) -> int:
    if isinstance(d, int):
        return d
    return st.constant(d)


# ------------------------------------------------------------------ <=

def _at_most(lhs: Dim, rhs: Dim) -> list[Form]:
    answer = dims.try_le(lhs, rhs)
    if answer is True:
        return []
    g = dims.sub(rhs, lhs)  # the condition is g >= 0
    syms = dims.free_symbols(g)
    if answer is None and len(syms) == 1:
        (s,) = syms
        form = _monotone_range(g, s)
        if form is None:
            form = _settled_range(g, s)
        if form is not None:
            return [form]
    return _other("<=", lhs, rhs)


def _settled_range(g: Dim, s: Sym) -> Form | None:
    """``g >= 0`` as a range of ``s`` where the min/max in ``g`` settle from some size ``T`` on
    into a form monotone in ``s`` (silero's ``(samples + 64)//128 - min(0, (samples + 64)//128 - 1)``
    is ``1`` from 64 on): by bisection above ``T``, size by size below it; None when the sizes
    where it holds are no interval."""
    t = s.lo + 1
    direction = None
    while t <= MAX_THRESHOLD and t <= s.hi:
        with dims.current().child({s.name: (t, s.hi)}):  # where s starts at t: a direction leaves, no dim
            settled = dims.rebuild(g)
            syms = dims.free_symbols(settled)
            direction = _monotone(settled, next(iter(syms))) if len(syms) == 1 else (0 if not syms else None)
        if direction is not None:
            break
        t *= 2
    if direction is None or t > s.hi:
        return None
    value = st.compiled(g, (s,))

    def ok(v: int) -> bool:
        try:
            return value(v) >= 0
        except ZeroDivisionError:
            return False
    if direction >= 0:  # false then true above t
        first = _first_where(ok, t, s.hi)
        above = None if first is None else (first, s.hi)
    else:  # true then false above t
        if not ok(t):
            above = None
        else:
            a, b = t, s.hi
            while a < b:
                m = (a + b + 1) // 2
                a, b = (m, b) if ok(m) else (a, m - 1)
            above = (t, a)
    points = [v for v in range(s.lo, t) if ok(v)]
    if above is not None:
        if points and points[-1] != t - 1 or (points and above[0] != t):
            return None
        lo = points[0] if points else above[0]
        hi = above[1]
    else:
        if not points:
            return Form("range", s.name, s.lo, s.lo - 1)  # never
        lo, hi = points[0], points[-1]
    if any(not ok(v) for v in range(lo, min(hi, t - 1) + 1)):
        return None  # not one interval below t
    return Form("range", s.name, lo, hi)


def _monotone_range(g: Dim, s: Sym) -> Form | None:
    """``g >= 0`` as a range of ``s``, when ``g`` is monotone in ``s``."""
    direction = _monotone(g, s)
    if direction is None or direction == 0:
        return None
    lo, hi = s.lo, s.hi
    value = st.compiled(g, (s,))
    ok = lambda v: value(v) >= 0  # noqa: E731
    if direction < 0:  # holds for small s: find the largest s where it holds
        if not ok(lo):
            return Form("range", s.name, lo, lo - 1)  # never
        a, b = lo, hi  # ok(a), find last ok
        while a < b:
            m = (a + b + 1) // 2
            if ok(m):
                a = m
            else:
                b = m - 1
        return Form("range", s.name, lo, a)
    first = _first_where(ok, lo, hi)
    return Form("range", s.name, hi + 1, hi) if first is None else Form("range", s.name, first, hi)


def _monotone(d: Dim, s: Sym) -> int | None:
    """+1 when ``d`` never decreases as ``s`` grows, -1 when it never increases, 0 when
    it does not depend on ``s``, None when the structure does not tell."""
    if isinstance(d, int) or s not in dims.free_symbols(d):
        return 0
    total = 0
    for m, k in st.monomials(d):
        sign = 1 if k > 0 else -1
        inner = 0
        for atom, _e in m:
            a = _atom_monotone(atom, s)
            if a is None:
                return None
            if a == 0:
                if st.atom_range(atom)[0] < 0:
                    return None  # a factor that may be negative flips the direction
                continue
            if st.atom_range(atom)[0] < 0 and len(m) > 1:
                return None
            if inner not in (0, a):
                return None
            inner = a
        d_term = sign * inner
        if d_term == 0:
            continue
        if total not in (0, d_term):
            return None
        total = d_term
    return total


def _atom_monotone(atom, s: Sym) -> int | None:
    kind, args = st.kind(atom), st.args(atom)
    if kind == "sym":
        return 1 if atom is s else 0
    if kind == "floordiv":
        x, c = args
        if isinstance(c, int) and c > 0:
            return _monotone(x, s)
        return None
    if kind in ("min", "max"):
        ds = {_monotone(x, s) for x in args} - {0}
        if None in ds or len(ds) > 1:
            return None
        return ds.pop() if ds else 0
    return 0 if s not in st.symbols_of(atom) else None


# ------------------------------------------------------------------ ==

def _equal(lhs: Dim, rhs: Dim) -> list[Form]:
    answer = dims.try_eq(lhs, rhs)
    if answer is True:
        return []
    if answer is False:
        return _other("==", lhs, rhs)
    for a, b in ((lhs, rhs), (rhs, lhs)):
        q = st.lone_atom(a)
        if q is not None and st.kind(q) == "floordiv":
            n, d = st.args(q)
            if dims.range_of(d)[0] >= 1 and dims.sub(n, dims.mul(b, d)) == 0:
                return []  # n == b*d exactly: n // d is b (what the algebra leaves for a symbolic divisor)
    for a, b in ((lhs, rhs), (rhs, lhs)):
        atom = _lone_minmax(a)
        if atom is not None and any(x is b for x in st.args(atom)):
            # min(p, b) == b  <=>  b <= p for every other argument (max: b >= p)
            out: list[Form] = []
            for x in st.args(atom):
                if x is not b:
                    out += _at_most(b, x) if st.kind(atom) == "min" else _at_most(x, b)
            return out
    diff = dims.sub(lhs, rhs)
    syms = dims.free_symbols(diff)
    if len(syms) == 1:
        (s,) = syms
        both = _at_most(lhs, rhs) + _at_most(rhs, lhs) if _monotone(diff, s) else []  # (bounds cost: monotone first)
        if both and all(f.kind == "range" for f in both):
            # monotone: equal exactly between the two bounds (one size, or none)
            return [Form("range", s.name, max(f.lo for f in both), min(f.hi for f in both))]
        forms = _residues(diff, s)
        if forms is None:
            forms = _residues_above_clamps(diff, s)
        if forms is None:
            forms = _range_above_clamps(diff, s)
        if forms is not None:
            return forms
    elif identically_zero(diff):
        return []
    else:
        # A factor over other symbols that is >= 1 (``b*h == 8*b*(h//8)``: ``b``) is no part of the
        # condition: what is left over one symbol is its residues or its range.
        q = dims.structure.without_positive_factor(diff)
        if q is not diff and len(dims.free_symbols(q)) < len(syms):
            forms = _equal(q, 0)
            if all(f.kind != "other" for f in forms):
                return forms
        # A product of factors over one symbol each (MaxViT's window count, ``4*((h + 3)//8)*((w + 3)//8)
        # == ((h + 3)//4)*((w + 3)//4)``) is, where that is proven, one equality per symbol.
        pieces = products.split(lhs, rhs)
        if pieces is not None:
            forms = [f for a, b in pieces for f in _equal(a, b)]
            if all(f.kind != "other" for f in forms):
                return forms
    return _other("==", lhs, rhs)


def _lone_minmax(d: Dim):
    """The min/max atom ``d`` is, if it is one alone."""
    atom = st.lone_atom(d)
    return atom if atom is not None and st.kind(atom) in ("min", "max") else None


def _residues(diff: Dim, s: Sym) -> list[Form] | None:
    """``diff == 0`` as residue classes of ``s``, or None when that cannot be decided.

    With ``s = L*q + r``, ``diff`` is a polynomial in ``q`` of degree at most ``D``
    for each ``r``: it is zero for every ``q`` when it is zero at ``D + 1`` of them,
    and never zero when it is the same non-zero number at all of them."""
    L = period(diff, s)
    if L is None or L > MAX_PERIOD or L == 1:
        return None
    points = range(1, degree(diff, s) + 2)
    good = []
    f = st.compiled(diff, (s,))
    for r in range(L):
        seen = {f(L * q + r) for q in points}
        if seen == {0}:
            good.append(r)
        elif len(seen) > 1:
            return None  # zero at some q only: not a residue class
    if len(good) == L:
        return []
    m = _smallest_modulus(good, L)
    return [Form("divisible", s.name, modulus=m, residues=tuple(r for r in good if r < m))]


# The most evaluations tried to prove a condition over several symbols.
MAX_EVALUATIONS = 4096


def identically_zero(diff: Dim) -> bool:
    """Whether ``diff`` is 0 for every value of its symbols: for each combination of
    residues, a polynomial in the ``q`` s, zero on a grid of ``degree + 1`` points per symbol."""
    syms = sorted(dims.free_symbols(diff), key=lambda s: s.name)
    maybe = [period(diff, s) for s in syms]
    periods = [p for p in maybe if p is not None]
    if len(periods) != len(maybe):
        return False
    grids = [range(1, degree(diff, s) + 2) for s in syms]
    count = 1
    for p, g in zip(periods, grids):
        count *= p * len(g)
    if count > MAX_EVALUATIONS:
        return False
    f = st.compiled(diff, tuple(syms))
    for point in itertools.product(*[range(p * len(g)) for p, g in zip(periods, grids)]):
        if f(*[p * (1 + k // p) + k % p for p, k in zip(periods, point)]) != 0:
            return False
    return True


# The largest size below which clamps are checked size by size.
MAX_THRESHOLD = 256


def _residues_above_clamps(diff: Dim, s: Sym) -> list[Form] | None:
    """Residue classes of ``s`` for a ``diff`` whose min/max settle from some size ``T``
    on (``max(0, height - 2)`` is ``height - 2`` from 2): the classes of the settled form,
    when every size below ``T`` agrees with them (checked one by one)."""
    t = s.lo + 1
    forms: list[Form] | None = None
    while t <= MAX_THRESHOLD:
        # what holds from t on: decided where s starts at t (forms, no dims, leave that environment)
        with dims.current().child({s.name: (t, s.hi)}):
            settled = dims.rebuild(diff)
            if period(settled, dims.as_sym(_only_symbol(settled)) or s) is not None:
                above = dims.free_symbols(settled)
                forms = ([] if settled == 0 else None) if not above else _residues(settled, next(iter(above)))
                break
        t *= 2
    else:
        return None
    if forms is None:
        return None
    forms = [Form(f.kind, s.name, modulus=f.modulus, residues=f.residues) for f in forms]
    value = st.compiled(diff, (s,))
    below = [_zero_at(value, v) for v in range(s.lo, t)]
    if not any(below):  # no size below T: at least T, and the classes
        return [Form("range", s.name, t, s.hi)] + forms
    if all(ok == all(f.holds({s.name: v}) for f in forms) for v, ok in zip(range(s.lo, t), below)):
        return forms
    return None


def _range_above_clamps(diff: Dim, s: Sym) -> list[Form] | None:
    """``diff == 0`` as a range of ``s`` when its min/max settle from some size ``T`` on into a
    form monotone in ``s`` (in ``-((-samples + 128*min(0, (samples + 64)//128 - 1) + 191)//512) == 1``
    the min is 0 from 64 on): by bisection above ``T``, and size by size below it."""
    t = s.lo + 1
    direction = None
    while t <= MAX_THRESHOLD and t <= s.hi:
        with dims.current().child({s.name: (t, s.hi)}):  # where s starts at t: a direction leaves, no dim
            settled = dims.rebuild(diff)
            syms = dims.free_symbols(settled)
            direction = _monotone(settled, next(iter(syms))) if len(syms) == 1 else None
        if direction:
            break
        t *= 2
    if not direction:
        return None
    value = st.compiled(diff, (s,))
    up = (lambda v: value(v)) if direction > 0 else (lambda v: -value(v))  # never decreasing  # noqa: E731
    first = _first_where(lambda v: up(v) >= 0, t, s.hi)  # equal exactly from the first >= 0 ...
    last = _first_where(lambda v: up(v) > 0, t, s.hi)  # ... to before the first > 0
    above = None if first is None else (first, s.hi if last is None else last - 1)
    if above is not None and above[0] > above[1]:
        above = None
    points = [v for v in range(s.lo, t) if _zero_at(value, v)]  # below T, then the span above
    if above is not None:
        points += [above[0], above[1]]
    if not points:
        return [Form("range", s.name, s.lo, s.lo - 1)]  # never
    below = len(points) - (2 if above is not None else 0)
    if points[:below] != list(range(points[0], points[0] + below)) or \
            (below and above is not None and (points[below - 1] != t - 1 or above[0] != t)):
        return None  # not one interval
    return [Form("range", s.name, points[0], points[-1])]


def _zero_at(value, v: int) -> bool:
    """Whether ``value(v) == 0``; not where a divisor is 0 at ``v`` (no value there)."""
    try:
        return value(v) == 0
    except ZeroDivisionError:
        return False


def _first_where(ok, lo: int, hi: int) -> int | None:
    """The least ``v`` in ``[lo, hi]`` with ``ok(v)``, for ``ok`` false then true; None when never."""
    if not ok(hi):
        return None
    while lo < hi:
        m = (lo + hi) // 2
        if ok(m):
            hi = m
        else:
            lo = m + 1
    return lo


def _only_symbol(d: Dim) -> Dim:
    syms = dims.free_symbols(d)
    return dims.expr_of(next(iter(syms))) if len(syms) == 1 else 0


def _smallest_modulus(good: list[int], L: int) -> int:
    """The smallest divisor ``m`` of ``L`` such that ``good`` is a union of classes mod ``m``."""
    gs = set(good)
    for m in sorted(k for k in range(1, L + 1) if L % k == 0):
        if all(((r % m) in {g % m for g in gs}) == (r in gs) for r in range(L)):
            return m
    return L


# ------------------------------------------------------------------ or

def _disjunction(alts: list[tuple[Dim, Dim]]) -> list[Form]:
    """``any(a == b for a, b in alts)``: the first alternative's forms when the others
    cannot hold where it fails; else kept as it is."""
    kept = []
    for a, b in alts:
        eq = dims.try_eq(a, b)
        if eq is True:
            return []
        if eq is None:
            kept.append((a, b))
    if not kept:
        return _other("or", alts[0][0], alts[0][1], alts)
    if len(kept) == 1:
        return _equal(*kept[0])
    periodic = _periodic(kept)
    if periodic is not None:
        return periodic
    pieces = cases.split(kept)
    if pieces is not None:
        if not pieces or pieces == [()]:
            return [] if pieces else _other("or", kept[0][0], kept[0][1], kept)
        if len(pieces) == 1 and len(pieces[0]) == 1:
            rel, a, b = pieces[0][0]
            return _at_most(a, b) if rel == "<=" else _equal(a, b)
        return [Form("other", rel="cases", pieces=tuple(pieces))]
    main = _equal(*kept[0])
    if len(main) == 1 and main[0].kind == "range":
        f = main[0]
        s = next(x for x in dims.free_symbols(kept[0][0]) | dims.free_symbols(kept[0][1]) if x.name == f.symbol)
        outside = [(s.lo, f.lo - 1), (f.hi + 1, s.hi)]
        if all(_never(kept[1:], s, lo, hi) for lo, hi in outside if lo <= hi):
            return main
    return _other("or", kept[0][0], kept[0][1], kept)


def _periodic(alts: list[tuple[Dim, Dim]]) -> list[Form] | None:
    """``any(a == b)`` over one symbol ``s`` as residue classes, with the small sizes where it
    holds otherwise: ``height <= 16 or height % 32 in {0, 17, ..., 31}``, or None.

    With ``s = L*q + r`` every alternative is a polynomial in ``q`` per residue ``r``; of
    degree at most 1 (else None), it is zero for every ``q`` (the class holds), at one ``q``
    (one size), or never. The form is taken only when the sizes so found below the classes are
    every size from the symbol's lowest up to one, and it is then checked size by size there
    and over a period above (a proof: above the last root, only the classes decide)."""
    syms = set().union(*(dims.free_symbols(a) | dims.free_symbols(b) for a, b in alts))
    if len(syms) != 1:
        return None
    (s,) = syms
    diffs = [dims.sub(a, b) for a, b in alts]
    periods = [period(d, s) for d in diffs]
    if any(p is None for p in periods) or any(degree(d, s) > 1 for d in diffs):
        return None
    L = math.lcm(*[p for p in periods if p is not None])
    if L > MAX_PERIOD:
        return None
    fs = [st.compiled(d, (s,)) for d in diffs]
    always, roots = set(), set()
    for r in range(L):
        for f in fs:
            c0, c1 = f(r + L) - (f(r + 2 * L) - f(r + L)), f(r + 2 * L) - f(r + L)  # p(q) = c0 + c1*q
            if f(r + 3 * L) != c0 + 3 * c1:
                return None  # not linear in q after all
            if c1 == 0:
                if c0 == 0:
                    always.add(r)
            elif c0 % c1 == 0 and L * (-c0 // c1) + r >= s.lo:
                roots.add(L * (-c0 // c1) + r)
    lo = max(s.lo, 0)
    extra = sorted(v for v in roots if v % L not in always)
    if not extra:
        below = None
    else:
        below = extra[-1]
        if any(not (v in roots or v % L in always) for v in range(lo, below + 1)):
            return None  # the small sizes are no interval from the lowest
    m = _smallest_modulus(sorted(always), L) if always else L
    form = Form("divisible", s.name, modulus=m, residues=tuple(r for r in sorted(always) if r < m), below=below)
    if not always and below is None:
        return [Form("range", s.name, lo, lo - 1)]  # never
    if not always and below is not None:  # only the small sizes: a range (it read "n <= 1 or n % 1 in {}")
        form = Form("range", s.name, s.lo, below)
    if len(always) == L and below is None:
        return []
    check = range(lo, min(s.hi, (below if below is not None else lo) + 2 * L) + 1)
    if any(form.holds({s.name: v}) != any(_zero_at(f, v) for f in fs) for v in check):
        return None
    return [form]


def _never(alts, s: Sym, lo: int, hi: int) -> bool:
    """No alternative can hold while ``s`` is in ``[lo, hi]``."""
    with dims.current().child({s.name: (lo, hi)}):  # a decision only leaves it
        return all(dims.try_eq(dims.rebuild(a), dims.rebuild(b)) is False for a, b in alts)


def ranges_of(forms: Sequence[Form], base: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """``base`` narrowed by every range form."""
    out = dict(base)
    for f in forms:
        if f.kind == "range" and f.symbol in out:
            lo, hi = out[f.symbol]
            out[f.symbol] = (max(lo, f.lo), min(hi, f.hi))
    return out
