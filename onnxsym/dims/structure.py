"""The structure of a dim, for code outside the algebra (printers, solvers, exporters).

A dim is a sum of terms ``coefficient * f1**e1 * f2**e2 ...`` in canonical order;
each factor ``f`` is a dim that is one atom: a symbol (:func:`onnxsym.dims.as_sym`)
or an operation (:func:`operation`: ``floordiv``, ``max``, ``min`` over dims).
Nothing outside ``onnxsym.dims`` needs the representation behind this.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .division import exact_div, floordiv
from .expr import Dim, Expr, Mono, OpAtom, Sym, atom_expr, from_dict, mul
from .ranges import range_of

Factor = tuple[Dim, int]  # (a dim that is one atom, its exponent)
Term = tuple[int, tuple[Factor, ...]]  # (coefficient, factors); no factors: the constant


def terms(d: Dim) -> tuple[Term, ...]:
    """``d`` as a sum of terms, in canonical order (the constant, if any, first)."""
    if isinstance(d, int):
        return ((d, ()),) if d else ()
    return tuple((c, tuple((atom_expr(a), e) for a, e in m)) for m, c in d.terms)


def from_terms(ts: Sequence[Term]) -> Dim:
    """The sum of ``ts``, canonicalized as a whole (see :func:`total`)."""
    parts = []
    for c, factors in ts:
        term: Dim = c
        for f, e in factors:
            for _ in range(e):
                term = mul(term, f)
        parts.append(term)
    return total(parts)


def total(ds: Sequence[Dim]) -> Dim:
    """The sum of ``ds``, canonicalized once as a whole (``add`` step by step canonicalizes each
    partial sum, which may take a form the whole does not: rebuilding a dim from its terms
    with ``total`` gives that dim)."""
    out: dict[Mono, int] = {}
    for d in ds:
        for m, c in (d.terms if isinstance(d, Expr) else (((), d),)):
            out[m] = out.get(m, 0) + c
    return from_dict(out)


def _atom(d: Dim) -> Sym | OpAtom | None:
    if isinstance(d, Expr) and len(d.terms) == 1 and d.terms[0][1] == 1:
        m = d.terms[0][0]
        if len(m) == 1 and m[0][1] == 1:
            return m[0][0]
    return None


def operation(d: Dim) -> tuple[str, tuple[Dim, ...]] | None:
    """``(kind, args)`` when ``d`` is one operation: ``("floordiv", (n, d))``, ``("max", args)`` or
    ``("min", args)``; else ``None`` (a symbol, a sum, a product, a number)."""
    a = _atom(d)
    return (a.kind, a.args) if isinstance(a, OpAtom) else None


def is_atom(d: Dim) -> bool:
    """Whether ``d`` is one symbol or one operation (a factor of a term)."""
    return _atom(d) is not None


def coefficient(d: Dim, x: Dim) -> Dim:
    """The ``c`` in ``d == c*x + rest``, where ``x`` is an atom and ``rest`` holds no term with ``x``
    to the first power (``c`` is a dim: ``coefficient(3*a*b + b, b) == 3*a + 1``)."""
    atom = _atom(x)
    if atom is None:
        raise ValueError(f"not a symbol or an operation: {x}")
    if isinstance(d, int):
        return 0
    out = {}
    for m, c in d.terms:
        if (atom, 1) in m:
            rest: Mono = tuple(ae for ae in m if ae[0] is not atom)
            out[rest] = c
    return from_dict(out)


def common_factor(d: Dim) -> Dim:
    """The largest ``g * monomial`` (``g > 0``) that divides every term of ``d``: ``6*a*b + 4*a`` gives ``2*a``."""
    if isinstance(d, int):
        return abs(d) or 1
    shared = dict(d.terms[0][0])
    g = 0
    for m, c in d.terms:
        md = dict(m)
        shared = {a: min(e, md[a]) for a, e in shared.items() if a in md}
        g = math.gcd(g, c)
    mono: Mono = tuple(sorted(shared.items(), key=lambda ae: ae[0].key))
    return from_dict({mono: g})


def exact_quotient(a: Dim, b: Dim) -> Dim | None:
    """``a / b`` when it is an integer multiple of ``b`` or ``b`` is one term that divides every term
    of ``a``; else ``None``."""
    if isinstance(b, int):
        if b == 0:
            return None
        if isinstance(a, int):
            return a // b if a % b == 0 else None
        return from_dict({m: c // b for m, c in a.terms}) if all(c % b == 0 for _, c in a.terms) else None
    if isinstance(a, int):
        return 0 if a == 0 else None
    if a is b:
        return 1
    k = a.terms[0][1] // b.terms[0][1]
    if len(a.terms) == len(b.terms) and k and mul(b, k) is a:
        return k
    return exact_div(a, b)


def without_positive_factor(d: Dim) -> Dim:
    """``d`` divided by its common factor when that factor is provably positive (``d == 0`` holds
    exactly when the quotient is 0)."""
    if isinstance(d, int):
        return d
    factor = common_factor(d)
    if factor == 1 or range_of(factor)[0] < 1:
        return d
    return floordiv(d, factor)  # exact: the factor divides every term
