"""The Dim algebra: a dimension is a plain ``int`` or an :class:`Expr`.

An ``Expr`` is kept in one canonical form, a polynomial with integer coefficients
whose variables ("atoms") are symbols or non-polynomial terms (floor division,
modulo, max, min) over canonical expressions. Every ``Expr`` is interned: two
expressions with the same canonical form are the same object, so equality and
hashing are identity operations, as cheap as for ints.

``==`` between dims means "provably the same value" (structural equality of
canonical forms). It never means "possibly equal". Ordering comparisons
(``<``, ``<=``, ...) answer from interval ranges and raise
:class:`UndecidableError` when the ranges cannot decide; ``try_*`` variants
return ``None`` instead. Converting a symbolic Expr to ``int`` raises
:class:`SymbolicDimError`: a rule that needs a concrete number does not support
dynamic shapes, and must say so.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, Mapping, Optional, Tuple, Union

INT64_MAX = 2**63 - 1
# Default range of a dim given by the model (graph input or declared name).
DEFAULT_LO = 1
# Default range of a dim nobody can name (data-dependent counts, unknown ops).
FRESH_LO = 0


class SymbolicDimError(TypeError):
    """A symbolic dim was used where a concrete integer is required."""


class UndecidableError(ValueError):
    """A comparison between dims cannot be decided from what is known."""


Dim = Union[int, "Expr"]


# --------------------------------------------------------------------------- atoms


class Atom:
    """A variable of the polynomial form: a symbol or a non-polynomial term."""

    __slots__ = ("key", "_range", "__weakref__")

    def range(self) -> Tuple[int, int]:
        raise NotImplementedError


class Sym(Atom):
    """A named integer symbol with an inclusive range ``[lo, hi]``."""

    __slots__ = ("name", "lo", "hi")
    _table: Dict[tuple, "Sym"] = {}

    def __new__(cls, name: str, lo: int = DEFAULT_LO, hi: int = INT64_MAX) -> "Sym":
        k = (name, lo, hi)
        s = cls._table.get(k)
        if s is None:
            s = object.__new__(cls)
            s.name, s.lo, s.hi = name, lo, hi
            s.key = (0, name, lo, hi)
            s._range = (lo, hi)
            cls._table[k] = s
        return s

    def range(self) -> Tuple[int, int]:
        return self._range

    def __reduce__(self):
        return (Sym, (self.name, self.lo, self.hi))

    def __repr__(self) -> str:
        return f"Sym({self.name!r}, {self.lo}, {self.hi})"


class _OpAtom(Atom):
    """An interned term ``kind(args...)`` whose args are canonical dims."""

    __slots__ = ("kind", "args")
    _table: Dict[tuple, "_OpAtom"] = {}
    _ORDER = {"floordiv": 1, "mod": 2, "max": 3, "min": 4}

    def __new__(cls, kind: str, args: tuple) -> "_OpAtom":
        k = (kind, args)
        a = cls._table.get(k)
        if a is None:
            a = object.__new__(cls)
            a.kind, a.args = kind, args
            a.key = (cls._ORDER[kind],) + tuple(_dim_key(x) for x in args)
            a._range = None
            cls._table[k] = a
        return a

    def range(self) -> Tuple[int, int]:
        if self._range is None:
            self._range = _op_range(self.kind, self.args)
        return self._range

    def __reduce__(self):
        return (_OpAtom, (self.kind, self.args))


def _dim_key(d: Dim) -> tuple:
    return (0, d) if isinstance(d, int) else (1, d.key)


# --------------------------------------------------------------------------- Expr

Mono = Tuple[Tuple[Atom, int], ...]  # sorted (atom, exponent) pairs; () is the constant
Terms = Tuple[Tuple[Mono, int], ...]  # sorted (monomial, coefficient) pairs


def _mono_key(m: Mono) -> tuple:
    return tuple((a.key, e) for a, e in m)


class Expr:
    """A symbolic dim in canonical form. Build with :func:`sym` and arithmetic."""

    __slots__ = ("terms", "key", "_range", "_text", "__weakref__")
    _table: Dict[Terms, "Expr"] = {}

    def __new__(cls, terms: Terms) -> "Expr":
        e = cls._table.get(terms)
        if e is None:
            e = object.__new__(cls)
            e.terms = terms
            e.key = tuple((_mono_key(m), c) for m, c in terms)
            e._range = None
            e._text = None
            cls._table[terms] = e
        return e

    def __reduce__(self):
        return (Expr, (self.terms,))

    def to_sympy(self):
        """This dim as a sympy expression (see :mod:`onnxsym.sympy_bridge`)."""
        from .sympy_bridge import to_sympy
        return to_sympy(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # -- arithmetic ---------------------------------------------------------
    def __add__(self, other):
        return add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return add(self, neg(other))

    def __rsub__(self, other):
        return add(other, neg(self))

    def __mul__(self, other):
        return mul(self, other)

    __rmul__ = __mul__

    def __neg__(self):
        return neg(self)

    def __pos__(self):
        return self

    def __floordiv__(self, other):
        return floordiv(self, other)

    def __rfloordiv__(self, other):
        return floordiv(other, self)

    def __mod__(self, other):
        return mod(self, other)

    def __rmod__(self, other):
        return mod(other, self)

    def __pow__(self, other):
        if not isinstance(other, int) or other < 0:
            raise SymbolicDimError(f"power {other!r} of a dim must be a non-negative int")
        out: Dim = 1
        for _ in range(other):
            out = mul(out, self)
        return out

    # -- comparisons: only what the ranges prove ------------------------------
    def __lt__(self, other):
        return _decided(try_lt(self, other), self, "<", other)

    def __le__(self, other):
        return _decided(try_le(self, other), self, "<=", other)

    def __gt__(self, other):
        return _decided(try_lt(other, self), self, ">", other)

    def __ge__(self, other):
        return _decided(try_le(other, self), self, ">=", other)

    # Identity equality and hashing are inherited from object (interning).

    # -- conversions ----------------------------------------------------------
    def __int__(self):
        raise SymbolicDimError(f"dim '{self}' is symbolic; a concrete int is required here")

    __index__ = __int__

    def __bool__(self):
        raise SymbolicDimError(f"dim '{self}' is symbolic; its truth value is unknown")

    def __str__(self) -> str:
        if self._text is None:
            from .exprtext import format_expr

            self._text = format_expr(self)
        return self._text

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"

    def range(self) -> Tuple[int, int]:
        if self._range is None:
            self._range = _poly_range(self.terms)
        return self._range


def _decided(answer: Optional[bool], a, op: str, b) -> bool:
    if answer is None:
        raise UndecidableError(f"cannot decide {a} {op} {b}")
    return answer


# --------------------------------------------------------------------------- construction


def sym(name: str, lo: int = DEFAULT_LO, hi: int = INT64_MAX) -> Expr:
    """The dim that is the symbol ``name`` with range ``[lo, hi]``."""
    return _atom_expr(Sym(name, lo, hi))


def expr_of(s: Sym) -> Expr:
    """The dim that is the symbol ``s``."""
    return _atom_expr(s)


def _atom_expr(atom: Atom) -> Expr:
    return Expr(((((atom, 1),), 1),))


def _from_dict(d: Dict[Mono, int]) -> Dim:
    items = [(m, c) for m, c in d.items() if c != 0]
    if not items:
        return 0
    if len(items) == 1 and items[0][0] == ():
        return items[0][1]
    items.sort(key=lambda mc: _mono_key(mc[0]))
    return Expr(tuple(items))


def _terms(d: Dim) -> Terms:
    if isinstance(d, int):
        return (((), d),) if d else ()
    if isinstance(d, Expr):
        return d.terms
    raise TypeError(f"not a dim: {d!r}")


def _check(d) -> None:
    if not isinstance(d, (int, Expr)) or isinstance(d, bool):
        raise TypeError(f"not a dim: {d!r}")


# --------------------------------------------------------------------------- operations

_add_cache: Dict[tuple, Dim] = {}
_mul_cache: Dict[tuple, Dim] = {}


def add(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    _check(a)
    _check(b)
    if b == 0:
        return a
    if a == 0:
        return b
    k = (a, b)
    r = _add_cache.get(k)
    if r is None:
        d = dict(_terms(a))
        for m, c in _terms(b):
            d[m] = d.get(m, 0) + c
        r = _from_dict(d)
        _add_cache[k] = r
    return r


def neg(a: Dim) -> Dim:
    return mul(a, -1)


def sub(a: Dim, b: Dim) -> Dim:
    return add(a, neg(b))


def _mono_mul(m1: Mono, m2: Mono) -> Mono:
    if not m1:
        return m2
    if not m2:
        return m1
    d = dict(m1)
    for a, e in m2:
        d[a] = d.get(a, 0) + e
    return tuple(sorted(d.items(), key=lambda ae: ae[0].key))


def mul(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    _check(a)
    _check(b)
    if isinstance(a, int):
        a, b = b, a
    if b == 1:
        return a
    if b == 0:
        return 0
    k = (a, b)
    r = _mul_cache.get(k)
    if r is None:
        if isinstance(b, int):
            r = Expr(tuple((m, c * b) for m, c in a.terms))
        else:
            d: Dict[Mono, int] = {}
            for m1, c1 in a.terms:
                for m2, c2 in b.terms:
                    m = _mono_mul(m1, m2)
                    d[m] = d.get(m, 0) + c1 * c2
            r = _from_dict(d)
        _mul_cache[k] = r
    return r


def _split_by(terms: Terms, b: int):
    """Split ``sum c*t`` into ``b*Q + R``: the constant's remainder in ``[0, b)``,
    symbolic coefficients truncated toward zero (their remainders keep their sign)."""
    q: Dict[Mono, int] = {}
    r: Dict[Mono, int] = {}
    for m, c in terms:
        if m == ():
            qc = c // b
        else:
            qc = c // b if c >= 0 else -((-c) // b)
        if qc:
            q[m] = qc
        if c - qc * b:
            r[m] = c - qc * b
    return q, r


def _content(terms: Terms) -> int:
    g = 0
    for _, c in terms:
        g = math.gcd(g, c)
    return g


_div_cache: Dict[tuple, Dim] = {}


def floordiv(a: Dim, b: Dim) -> Dim:
    """Python floor division ``a // b`` (rounds toward negative infinity)."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    _check(a)
    _check(b)
    k = (a, b)
    r = _div_cache.get(k)
    if r is None:
        r = _floordiv(a, b)
        _div_cache[k] = r
    return r


def _floordiv(a: Dim, b: Dim) -> Dim:
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError(f"{a} // 0")
        if b < 0:
            return _floordiv(neg(a), -b)
        if b == 1:
            return a
        q, r = _split_by(a.terms, b)
        quotient = _from_dict(q)
        rest = _from_dict(r)
        if isinstance(rest, int):
            return add(quotient, rest // b)
        g = math.gcd(_content(rest.terms), b)
        if g > 1:
            rest, b = floordiv(rest, g), b // g  # exact: every coefficient is a multiple of g
            if b == 1:
                return add(quotient, rest)
        return add(quotient, _floordiv_atom(rest, b))
    # symbolic divisor
    if isinstance(a, Expr):
        exact = _exact_div(a, b)
        if exact is not None:
            return exact
        common = _common_factor(a, b)
        if common is not None:
            # (m*p) // (m*q) == p // q for a positive factor m
            return floordiv(_exact_div(a, common), _exact_div(b, common))
    return _floordiv_atom(a, b)


def _common_factor(a: Expr, b: Expr) -> Optional[Expr]:
    """The monomial that divides every term of ``a`` and ``b`` when it is provably positive."""
    if len(b.terms) != 1:
        return None
    shared = dict(b.terms[0][0])
    for m, _ in a.terms:
        md = dict(m)
        shared = {atom: min(e, md[atom]) for atom, e in shared.items() if atom in md}
        if not shared:
            return None
    mono = tuple(sorted(shared.items(), key=lambda ae: ae[0].key))
    factor = Expr(((mono, 1),))
    return factor if factor.range()[0] >= 1 else None


def _without_mod(n: Expr) -> Optional[Dim]:
    """``n`` with each top-level ``x % c`` written ``x - c*(x//c)``, or None if it has none."""
    mods = {atom for atom in atoms(n) if isinstance(atom, _OpAtom) and atom.kind == "mod"}
    if not mods:
        return None
    out: Dim = 0
    for m, c in n.terms:
        term: Dim = c
        for atom, e in m:
            x = _atom_expr(atom)
            if atom in mods:
                x = sub(atom.args[0], mul(atom.args[1], floordiv(*atom.args)))
            for _ in range(e):
                term = mul(term, x)
        out = add(out, term)
    return out


def _floordiv_atom(n: Dim, d: Dim) -> Dim:
    if isinstance(n, Expr) and isinstance(d, int):
        # (x + (-x) % 8) // 8 is ceil(x/8): the mod cancels once written as a floor division
        alt = _without_mod(n)
        if alt is not None and not _has_atom(alt, "mod"):
            simpler = floordiv(alt, d)
            if len(str(simpler)) < len(str(n)) + len(str(d)) + 2:
                return simpler
    lo, hi = range_of(n)
    dlo, dhi = range_of(d)
    if dlo > 0:
        if lo >= 0 and hi < dlo:
            return 0
        if isinstance(d, int):
            if lo // d == hi // d:
                return lo // d
            # (x // c + r) // d == (x + c*r) // (c*d) for positive ints c, d and any integer r:
            # x // c + r == (x + c*r) // c, and floor(floor(y) / d) == floor(y / d).
            for m, k in n.terms:
                if k == 1 and len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], _OpAtom) \
                        and m[0][0].kind == "floordiv" and isinstance(m[0][0].args[1], int) \
                        and m[0][0].args[1] > 0:
                    inner_n, inner_d = m[0][0].args
                    r = sub(n, _atom_expr(m[0][0]))
                    return floordiv(add(inner_n, mul(inner_d, r)), inner_d * d)
            # floor(-x/d) == -floor((x + d - 1)/d): keep the leading coefficient positive
            if n.terms[-1][1] < 0 and n.terms[-1][0] != ():
                return neg(floordiv(add(neg(n), d - 1), d))
    return _atom_expr(_OpAtom("floordiv", (n, d)))


def _exact_div(a: Expr, b: Expr) -> Optional[Dim]:
    """``a / b`` when ``b`` is one monomial that divides every term of ``a``."""
    if len(b.terms) != 1:
        return None
    bm, bc = b.terms[0]
    if bm == ():
        return None
    bd = dict(bm)
    out: Dict[Mono, int] = {}
    for m, c in a.terms:
        if c % bc:
            return None
        md = dict(m)
        for atom, e in bd.items():
            have = md.get(atom, 0)
            if have < e:
                return None
            if have == e:
                del md[atom]
            else:
                md[atom] = have - e
        out[tuple(sorted(md.items(), key=lambda ae: ae[0].key))] = c // bc
    return _from_dict(out)


def mod(a: Dim, b: Dim) -> Dim:
    """Python modulo ``a % b`` (the result has the sign of ``b``)."""
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    _check(a)
    _check(b)
    k = ("%", a, b)
    r = _div_cache.get(k)
    if r is None:
        r = _mod(a, b)
        _div_cache[k] = r
    return r


def _strip_inner_mod(d: Dim, b: int) -> Dim:
    """Inside ``(...) % b``, ``x % c`` may be replaced by ``x`` when ``b`` divides ``c``."""
    if isinstance(d, int):
        return d
    out: Dim = 0
    changed = False
    for m, c in d.terms:
        term: Dim = c
        for atom, e in m:
            if isinstance(atom, _OpAtom) and atom.kind == "mod" and isinstance(atom.args[1], int) \
                    and atom.args[1] % b == 0:
                base = atom.args[0]
                changed = True
            else:
                base = _atom_expr(atom)
            for _ in range(e):
                term = mul(term, base)
        out = add(out, term)
    return out if changed else d


def _mod(a: Dim, b: Dim) -> Dim:
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError(f"{a} % 0")
        if b < 0:
            return neg(_mod(neg(a), -b))
        if b == 1:
            return 0
        a = _strip_inner_mod(a, b)
        if isinstance(a, int):
            return a % b
        _, r = _split_by(a.terms, b)
        rest = _from_dict(r)
        if isinstance(rest, int):
            return rest % b
        g = math.gcd(_content(rest.terms), b)
        if g > 1:
            return mul(mod(floordiv(rest, g), b // g), g)
        lo, hi = range_of(rest)
        if lo >= 0 and hi < b:
            return rest
        if lo // b == hi // b:
            return sub(rest, (lo // b) * b)
        if rest.terms[-1][1] < 0 and rest.terms[-1][0] != ():
            # (-y) % b == b*ceil(y/b) - y: one form for "pad y up to a multiple of b",
            # whether a graph computes it with % (Pad) or with // (Reshape)
            return add(mul(b, floordiv(add(neg(rest), b - 1), b)), rest)
        return _atom_expr(_OpAtom("mod", (rest, b)))
    q = floordiv(a, b)
    if not _has_atom(q, "floordiv"):
        return sub(a, mul(b, q))
    lo, hi = range_of(a)
    if lo >= 0 and try_lt(a, b):
        return a
    return _atom_expr(_OpAtom("mod", (a, b)))


def _has_atom(d: Dim, kind: str) -> bool:
    if isinstance(d, int):
        return False
    return any(isinstance(atom, _OpAtom) and atom.kind == kind for m, _ in d.terms for atom, _ in m)


def ceil_div(a: Dim, b: Dim) -> Dim:
    """``ceil(a / b)`` for a positive divisor ``b``."""
    if isinstance(b, int) and b < 0:
        return ceil_div(neg(a), -b)
    return floordiv(add(a, sub(b, 1)), b)


def _minmax(kind: str, args: Iterable[Dim]) -> Dim:
    flat = []
    for x in args:
        _check(x)
        if isinstance(x, Expr) and len(x.terms) == 1 and x.terms[0][1] == 1 \
                and len(x.terms[0][0]) == 1 and x.terms[0][0][0][1] == 1:
            atom = x.terms[0][0][0][0]
            if isinstance(atom, _OpAtom) and atom.kind == kind:
                flat.extend(atom.args)
                continue
        flat.append(x)
    if not flat:
        raise ValueError(f"{kind}() of no dims")
    better = try_le if kind == "min" else (lambda p, q: try_le(q, p))
    kept: list = []
    for x in flat:
        if any(x is y or better(y, x) is True for y in kept):
            continue
        kept = [y for y in kept if better(x, y) is not True]
        kept.append(x)
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=_dim_key)
    return _atom_expr(_OpAtom(kind, tuple(kept)))


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


# --------------------------------------------------------------------------- ranges


def _imul(a: Tuple[int, int], b: Tuple[int, int]) -> Tuple[int, int]:
    p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(p), max(p)


def _poly_range(terms: Terms) -> Tuple[int, int]:
    lo = hi = 0
    for m, c in terms:
        r = (1, 1)
        for atom, e in m:
            ar = atom.range()
            for _ in range(e):
                r = _imul(r, ar)
        r = _imul(r, (c, c))
        lo += r[0]
        hi += r[1]
    return lo, hi


def _op_range(kind: str, args: tuple) -> Tuple[int, int]:
    rs = [range_of(x) for x in args]
    if kind == "max":
        return max(r[0] for r in rs), max(r[1] for r in rs)
    if kind == "min":
        return min(r[0] for r in rs), min(r[1] for r in rs)
    (nlo, nhi), (dlo, dhi) = rs
    if kind == "floordiv":
        if dlo > 0:
            c = (nlo // dlo, nlo // dhi, nhi // dlo, nhi // dhi)
            return min(c), max(c)
        return -INT64_MAX * INT64_MAX, INT64_MAX * INT64_MAX
    # mod
    if dlo > 0:
        if nlo >= 0:
            return 0, min(nhi, dhi - 1)
        return 0, dhi - 1
    return -max(abs(dlo), abs(dhi)), max(abs(dlo), abs(dhi))


def range_of(d: Dim) -> Tuple[int, int]:
    """An inclusive interval ``[lo, hi]`` that contains every value of ``d``."""
    if isinstance(d, int):
        return d, d
    return d.range()


def try_le(a: Dim, b: Dim) -> Optional[bool]:
    """``a <= b`` if the ranges prove or refute it, else ``None``."""
    d = sub(b, a)
    lo, hi = range_of(d)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    if lower_bound(d) >= 0:
        return True
    if lower_bound(neg(d)) > 0:
        return False
    return None


_lower_cache: Dict[Expr, int] = {}


def lower_bound(d: Dim, depth: int = 3) -> int:
    """A lower bound of ``d``, tighter than its interval range where the terms are related.

    Interval arithmetic treats ``(x + 7)//8`` and ``x`` as independent; here a term
    ``k*(x//c)`` is rewritten exactly as ``k*(x - x%c)/c`` so that ``x`` can cancel,
    a ``-min(p, q)`` is at least ``-p`` and a ``max(p, q)`` at least ``p``.
    """
    if isinstance(d, int):
        return d
    if depth == 0:
        return d.range()[0]
    key = (d, depth)
    r = _lower_cache.get(key)
    if r is not None:
        return r
    best = d.range()[0]
    for m, k in d.terms:
        if len(m) != 1 or m[0][1] != 1 or not isinstance(m[0][0], _OpAtom):
            continue
        atom = m[0][0]
        rest = sub(d, mul(k, _atom_expr(atom)))
        if atom.kind == "floordiv" and isinstance(atom.args[1], int) and atom.args[1] > 0:
            x, c = atom.args
            scaled = add(mul(c, rest), mul(k, sub(x, _atom_expr(_OpAtom("mod", (x, c))))))
            best = max(best, -((-lower_bound(scaled, depth - 1)) // c))  # ceil: d is an integer
        elif (atom.kind == "min" and k < 0) or (atom.kind == "max" and k > 0):
            # rest + k*max(p, q) >= rest + k*p, and likewise for each argument
            for arg in atom.args:
                best = max(best, lower_bound(add(rest, mul(k, arg)), depth - 1))
        elif atom.kind in ("min", "max"):
            # rest + k*min(p, q) == min(rest + k*p, rest + k*q) for k > 0 (max for k < 0)
            best = max(best, min(lower_bound(add(rest, mul(k, arg)), depth - 1) for arg in atom.args))
    _lower_cache[key] = best
    return best


def try_lt(a: Dim, b: Dim) -> Optional[bool]:
    """``a < b`` if the ranges prove or refute it, else ``None``."""
    return try_le(add(a, 1), b)


def try_eq(a: Dim, b: Dim) -> Optional[bool]:
    """``True`` if provably equal, ``False`` if provably different, else ``None``."""
    if a is b or (isinstance(a, int) and isinstance(b, int) and a == b):
        return True
    d = sub(a, b)
    lo, hi = range_of(d)
    if lo > 0 or hi < 0:
        return False
    if lo == hi == 0:
        return True
    if isinstance(d, int):
        return d == 0
    up, down = lower_bound(d), lower_bound(neg(d))
    if up > 0 or down > 0:
        return False
    if up == down == 0:
        return True
    return None


def known_ne(a: Dim, b: Dim) -> bool:
    """Whether ``a`` and ``b`` provably differ."""
    return try_eq(a, b) is False


# --------------------------------------------------------------------------- inspection


def is_static(d: Dim) -> bool:
    return isinstance(d, int)


def atoms(d: Dim):
    """The atoms of ``d``'s top level polynomial."""
    if isinstance(d, int):
        return
    for m, _ in d.terms:
        for atom, _ in m:
            yield atom


def free_symbols(d: Dim) -> frozenset:
    """The symbols ``d`` depends on, at any depth."""
    out = set()
    _collect(d, out)
    return frozenset(out)


def _collect(d: Dim, out: set) -> None:
    for atom in atoms(d):
        if isinstance(atom, Sym):
            out.add(atom)
        else:
            for x in atom.args:
                _collect(x, out)


def evaluate(d: Dim, bindings: Mapping[Union[str, Sym], int]) -> int:
    """The value of ``d`` when every symbol is replaced by its bound int.

    ``bindings`` is keyed by symbol name or by :class:`Sym`; a missing symbol
    raises ``KeyError``.
    """
    if isinstance(d, int):
        return d
    total = 0
    for m, c in d.terms:
        v = c
        for atom, e in m:
            v *= _eval_atom(atom, bindings) ** e
        total += v
    return total


def _eval_atom(atom: Atom, bindings) -> int:
    if isinstance(atom, Sym):
        if atom in bindings:
            return bindings[atom]
        return bindings[atom.name]
    vals = [evaluate(x, bindings) for x in atom.args]
    if atom.kind == "floordiv":
        return vals[0] // vals[1]
    if atom.kind == "mod":
        return vals[0] % vals[1]
    if atom.kind == "max":
        return max(vals)
    return min(vals)


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


def _subst_atom(atom: Atom, mapping) -> Dim:
    if isinstance(atom, Sym):
        return mapping.get(atom, _atom_expr(atom))
    args = [substitute(x, mapping) for x in atom.args]
    if atom.kind == "floordiv":
        return floordiv(*args)
    if atom.kind == "mod":
        return mod(*args)
    return dmax(*args) if atom.kind == "max" else dmin(*args)


def as_sym(d: Dim) -> Optional[Sym]:
    """The symbol ``d`` is, if ``d`` is a bare symbol."""
    if isinstance(d, Expr) and len(d.terms) == 1 and d.terms[0][1] == 1:
        m = d.terms[0][0]
        if len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], Sym):
            return m[0][0]
    return None
