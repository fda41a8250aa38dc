"""Floor division and modulo of dims: the rules that keep their results canonical."""

from __future__ import annotations

import math
from typing import Dict, Optional

from .expr import Dim, Expr, Mono, Terms, _atom_expr, _check, _from_dict, _OpAtom, add, atoms, mul, neg, sub
from .ranges import range_of, try_lt


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
    return factor if range_of(factor)[0] >= 1 else None


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

