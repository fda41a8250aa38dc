"""Floor division and modulo of dims: the rules that keep their results canonical."""

from __future__ import annotations

import math
from fractions import Fraction

from .env import bounded, current
from .expr import Dim, Expr, Mono, OpAtom, Terms, add, atom_expr, check_dim, from_dict, mul, neg, sub
from .quasi import normalized_division
from .ranges import range_of, try_lt


def _split_by(terms: Terms, b: int) -> tuple[dict[Mono, int], dict[Mono, int]]:
    """Split ``sum c*t`` into ``b*Q + R``: the constant's remainder in ``[0, b)``,
    symbolic coefficients truncated toward zero (their remainders keep their sign)."""
    q: dict[Mono, int] = {}
    r: dict[Mono, int] = {}
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


def floordiv(a: Dim, b: Dim) -> Dim:
    """Python floor division ``a // b`` (rounds toward negative infinity)."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    check_dim(a)
    check_dim(b)
    k = (a, b)
    cache: dict[tuple[Dim, Dim], Dim] = current().div
    r = cache.get(k)
    if r is None:
        r = _floordiv(a, b)
        bounded(cache)[k] = r
    return r


def _floordiv(a: Dim, b: Dim) -> Dim:
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError(f"{a} // 0")
        if b < 0:
            return _floordiv(neg(a), -b)
        if b == 1:
            return a
        assert isinstance(a, Expr)
        q, r = _split_by(a.terms, b)
        quotient = from_dict(q)
        rest = from_dict(r)
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
        exact = exact_div(a, b)
        if exact is not None:
            return exact
        ratio = _ratio(a, b)
        if ratio is not None:  # a == (p/q)*b, so a/b is p/q wherever b != 0
            return ratio.numerator // ratio.denominator
        multiple = _monomial_quotient(a, b)
        if multiple is not None:  # a == m*b for a monomial m: a // b is m wherever b != 0
            return multiple
        common = _common_factor(a, b)
        if common is not None:
            # (m*p) // (m*q) == p // q for a positive factor m
            num, den = exact_div(a, common), exact_div(b, common)
            assert num is not None and den is not None  # the common factor divides both
            return floordiv(num, den)
    return _floordiv_atom(a, b)


def _ratio(a: Expr, b: Expr) -> Fraction | None:
    """``p/q`` when ``a == (p/q)*b`` term by term (``32*n*(x + 1)`` over ``16*n*(x + 1)``)."""
    ta, tb = dict(a.terms), dict(b.terms)
    if ta.keys() != tb.keys():
        return None
    ratios = {Fraction(c, tb[m]) for m, c in ta.items()}
    return ratios.pop() if len(ratios) == 1 else None


def _monomial_quotient(a: Expr, b: Expr) -> Dim | None:
    """The monomial ``m`` with ``a == m*b`` (``32*n*(x - 1)`` over ``16*(x - 1)`` is ``2*n``)."""
    if len(a.terms) != len(b.terms) or len(b.terms) < 2:
        return None
    bm, bc = b.terms[0]
    for am, ac in a.terms:  # the term of a that b's first term times m gives
        if ac % bc or (am == () and bm != ()):
            continue
        term = from_dict({am: ac // bc})
        m = term if bm == () else exact_div(term, from_dict({bm: 1}))  # type: ignore[arg-type]
        if m is not None and mul(m, b) == a:
            return m
    return None


def _common_factor(a: Expr, b: Expr) -> Expr | None:
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


_negating: set[tuple[Dim, Dim]] = set()  # numerators being rewritten with a positive leading coefficient


def _floordiv_atom(n: Dim, d: Dim) -> Dim:
    lo, hi = range_of(n)
    dlo, dhi = range_of(d)
    if dlo > 0:
        if lo >= 0 and (hi < dlo or try_lt(n, d) is True):
            return 0
        if isinstance(d, int) and lo // d == hi // d:
            return lo // d
        if isinstance(n, Expr):
            # (x // c + r) // d == (x + c*r) // (c*d) for positive integers c, d and any integer r:
            # x // c + r == (x + c*r) // c, and floor(floor(y) / d) == floor(y / d).
            for m, k in n.terms:
                if k == 1 and len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], OpAtom) \
                        and m[0][0].kind == "floordiv" and range_of(m[0][0].args[1])[0] > 0:
                    inner_n, inner_d = m[0][0].args
                    r = sub(n, atom_expr(m[0][0]))
                    return floordiv(add(inner_n, mul(inner_d, r)), mul(inner_d, d))
            # floor(-x/d) == -floor((x + d - 1)/d): keep the leading coefficient positive, unless
            # quasi.normalize gives the result its form (it may prefer the other sign: no ping-pong)
            if isinstance(d, int) and n.terms[-1][1] < 0 and n.terms[-1][0] != () \
                    and not normalized_division(n, d) and (n, d) not in _negating:
                _negating.add((n, d))
                try:
                    return neg(floordiv(add(neg(n), d - 1), d))
                finally:
                    _negating.discard((n, d))
    return atom_expr(OpAtom("floordiv", (n, d)))


def exact_div(a: Expr, b: Expr) -> Dim | None:
    """``a / b`` when ``b`` is one monomial that divides every term of ``a``."""
    if len(b.terms) != 1:
        return None
    bm, bc = b.terms[0]
    if bm == ():
        return None
    bd = dict(bm)
    out: dict[Mono, int] = {}
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
    return from_dict(out)


def mod(a: Dim, b: Dim) -> Dim:
    """Python modulo ``a % b`` (the result has the sign of ``b``).

    One form for it: ``a - b*(a // b)``, so that ``(a//b)*b + a % b`` is ``a`` and every
    identity of floor division holds of it too (the printer writes it ``a % b`` again)."""
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    check_dim(a)
    check_dim(b)
    if isinstance(b, int) and b == 0:
        raise ZeroDivisionError(f"{a} % 0")
    return sub(a, mul(b, floordiv(a, b)))


def ceil_div(a: Dim, b: Dim) -> Dim:
    """``ceil(a / b)`` for a positive divisor ``b``."""
    if isinstance(b, int) and b < 0:
        return ceil_div(neg(a), -b)
    return floordiv(add(a, sub(b, 1)), b)

