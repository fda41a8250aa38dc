"""Ranges of dims: an interval for every dim, and the comparisons they decide."""

from __future__ import annotations

from .env import INT64_MAX, bounded, current
from .expr import Atom, Dim, Expr, Mono, OpAtom, Sym, Terms, add, atom_expr, from_dict, mul, neg, sub
from .quasi import identically_zero


def _imul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(p), max(p)


def _poly_range(terms: Terms, token: object) -> tuple[int, int]:
    lo = hi = 0
    for m, c in terms:
        r = (1, 1)
        for atom, e in m:
            ar = atom.range_cache if atom.range_token is token else _atom_range(atom)
            for _ in range(e):
                r = _imul(r, ar)
        r = _imul(r, (c, c))
        lo += r[0]
        hi += r[1]
    return lo, hi


def _op_range(kind: str, args: tuple[Dim, ...]) -> tuple[int, int]:
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


def _atom_range(atom: Atom) -> tuple[int, int]:
    """The atom's range in the current environment (cached on it with the environment's token)."""
    env = current()
    token = env.token  # the ranges the answer is derived under
    if atom.range_token is token:
        return atom.range_cache
    if isinstance(atom, Sym):
        r = env.range(atom.name)
    else:
        assert isinstance(atom, OpAtom)
        r = _op_range(atom.kind, atom.args)
    atom.range_cache = r
    atom.range_token = token
    return r


def range_of(d: Dim) -> tuple[int, int]:
    """An inclusive interval ``[lo, hi]`` that contains every value of ``d`` (in the current
    environment's ranges)."""
    if isinstance(d, int):
        return d, d
    token = current().token
    if d.range_token is token:
        return d.range_cache
    r = _poly_range(d.terms, token)
    if len(d.terms) > 1 and any(_divides_by_constant(m) for m, _ in d.terms):
        # a remainder x - c*(x//c) is in [0, c): intervals alone miss that x cancels
        outer = not _work
        if outer:  # one budget for both bounds, so that a spent one is seen here
            _work.append(LOWER_BOUND_WORK)
        try:
            r = max(r[0], lower_bound(d)), min(r[1], -lower_bound(neg(d)))
            spent = _spent()
        finally:
            if outer:
                _work.pop()
        if spent:
            return r  # a weaker range than the full search gives: not kept
    d.range_cache = r
    d.range_token = token
    return r


def _divides_by_constant(m: Mono) -> bool:
    return len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], OpAtom) and m[0][0].kind == "floordiv" \
        and isinstance(m[0][0].args[1], int)


def try_le(a: Dim, b: Dim) -> bool | None:
    """``a <= b`` if the ranges prove or refute it, else ``None``."""
    d = sub(b, a)
    lo, hi = range_of(d)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    if not _work and _linear(d):  # its lower bounds are its range's: they decide nothing more
        return None
    if lower_bound(d) >= 0:
        return True
    if lower_bound(neg(d)) > 0:
        return False
    return None


# The most terms of a sum :func:`_linear` looks at (a longer one takes the search).
LINEAR_TERMS = 32


def _linear(d: Dim) -> bool:
    """Whether ``d`` is a constant plus multiples of symbols, each to the power 1 (``seq - n + 1``):
    then :func:`lower_bound` of ``d`` and of ``-d`` are the ends of its interval range (no term to
    rewrite, no product to split), and so is the search's work within its budget."""
    if isinstance(d, int):
        return True
    terms = d.terms
    if len(terms) > LINEAR_TERMS:
        return False
    for m, _ in terms:
        if m and (len(m) != 1 or m[0][1] != 1 or type(m[0][0]) is not Sym):
            return False
    return True


# Work bound of lower_bound: the sums one call builds, with every call it makes (through
# range_of too). Each level splits a sum at each of its terms, so a long sum of divisions
# (a wrap of a wrap in int8) would build terms**depth sums. Past the bound the interval
# range stands in (sound, only weaker) and the answer is not cached. The most one call of
# the real corpus (models/) builds is 67.
LOWER_BOUND_WORK = 1000
# the work left to the outermost call in progress (empty: none); inference runs on one thread
_work: list[int] = []


def lower_bound(d: Dim, depth: int = 3) -> int:
    """A lower bound of ``d``, tighter than its interval range where the terms are related.

    Interval arithmetic treats ``(x + 7)//8`` and ``x`` as independent; here a term
    ``k*(x//c)`` is rewritten exactly as ``k*(x - r)/c`` (``r`` the remainder, in ``[0, c)``) so that ``x`` can cancel,
    a ``-min(p, q)`` is at least ``-p`` and a ``max(p, q)`` at least ``p``.
    """
    if isinstance(d, int):
        return d
    if _work:
        return _lower_bound(d, depth)
    _work.append(LOWER_BOUND_WORK)
    try:
        return _lower_bound(d, depth)
    finally:
        _work.pop()


def _spent() -> bool:
    """Whether the lower_bound call in progress has used up its work (see LOWER_BOUND_WORK)."""
    return bool(_work) and _work[0] <= 0


def _lower_bound(d: Expr, depth: int) -> int:
    env = current()
    if depth == 0:
        return _poly_range(d.terms, env.token)[0]
    key = (d, depth)
    cache: dict[tuple[Expr, int], int] = env.lower
    r = cache.get(key)
    if r is not None:
        return r
    _work[0] -= len(d.terms)  # the sums this call builds
    if _work[0] < 0:
        env.over.add("lower bounds")
        return _poly_range(d.terms, env.token)[0]
    best = _poly_range(d.terms, env.token)[0]
    for m, k in d.terms:
        if len(m) != 1 or m[0][1] != 1 or not isinstance(m[0][0], OpAtom):
            continue
        atom = m[0][0]
        rest = sub(d, mul(k, atom_expr(atom)))
        if atom.kind == "floordiv" and isinstance(c := atom.args[1], int) and c > 0:
            # c*d == c*rest + k*x - k*r for the remainder r of x by c, 0 <= r < c
            x = atom.args[0]
            xlo, xhi = range_of(x)
            r_hi = min(xhi, c - 1) if xlo >= 0 else c - 1
            scaled = lower_bound(add(mul(c, rest), mul(k, x)), depth - 1) - max(k, 0) * r_hi
            best = max(best, -((-scaled) // c))  # ceil: d is an integer
        elif (atom.kind == "min" and k < 0) or (atom.kind == "max" and k > 0):
            # rest + k*max(p, q) >= rest + k*p, and likewise for each argument
            for arg in atom.args:
                best = max(best, lower_bound(add(rest, mul(k, arg)), depth - 1))
        elif atom.kind in ("min", "max"):
            # rest + k*min(p, q) == min(rest + k*p, rest + k*q) for k > 0 (max for k < 0)
            best = max(best, min(lower_bound(add(rest, mul(k, arg)), depth - 1) for arg in atom.args))
    # Few terms only: each atom splits the sum and recurses, which a long sum cannot afford.
    if best < 0 and len(d.terms) <= MONOTONE_TERMS and any(len(m) > 1 for m, _ in d.terms):
        best = max(best, _monotone_lower_bound(d, depth))
    if not _spent():
        bounded(cache)[key] = best
    return best


# The longest sum the monotone bound splits (a product of two differences has four terms).
MONOTONE_TERMS = 8


def _monotone_lower_bound(d: Dim, depth: int) -> int:
    """``d == x*p + q`` with ``p >= 0`` (``x`` in no term of ``p`` or ``q``) is at least
    ``lo(x)*p + q``: ``(2a - 1)*(2b - 1)``, expanded, is at least ``2b - 1`` for ``a >= 1``."""
    assert not isinstance(d, int)
    best = _poly_range(d.terms, current().token)[0]
    for x in {a for m, _ in d.terms for a, _ in m}:
        p: dict[Mono, int] = {}
        q: dict[Mono, int] = {}
        for m, c in d.terms:
            exps = [e for a, e in m if a == x]
            if exps and exps[0] > 1:
                break
            (p if exps else q)[tuple(ae for ae in m if ae[0] != x) if exps else m] = c
        else:
            lo = _atom_range(x)[0]
            if lower_bound(from_dict(p), depth - 1) >= 0:
                best = max(best, lower_bound(add(mul(lo, from_dict(p)), from_dict(q)), depth - 1))
    return best


def try_lt(a: Dim, b: Dim) -> bool | None:
    """``a < b`` if the ranges prove or refute it, else ``None``."""
    return try_le(add(a, 1), b)


def try_eq(a: Dim, b: Dim) -> bool | None:
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
    if _unit_shift(d):  # (s + c: its range holds 0 and another value, and s takes each value of its range)
        return None
    up, down = lower_bound(d), lower_bound(neg(d))
    if up > 0 or down > 0:
        return False
    if up == down == 0:
        return True
    return True if identically_zero(d) else None  # complete where d is quasi-affine


def _unit_shift(d: Expr) -> bool:
    """Whether ``d`` is ``c + s`` or ``c - s`` for one symbol ``s`` (a batch size asked against 1): its
    bounds and searches then say what its range says."""
    terms = d.terms
    if len(terms) > 2:
        return False
    units = 0
    for m, c in terms:
        if not m:
            continue
        if len(m) != 1 or m[0][1] != 1 or (c != 1 and c != -1) or not isinstance(m[0][0], Sym):
            return False
        units += 1
    return units == 1


def same(a: Dim, b: Dim) -> bool:
    """Whether ``a`` and ``b`` are provably the same value: ``==``, or ``try_eq`` proves it (complete
    for quasi-affine dims). Where two values merge, this decides whether a dim is kept."""
    if a is b or (isinstance(a, int) and isinstance(b, int)):
        return a == b
    return eq_verdict(a, b) is True


_UNASKED = object()


def eq_verdict(a: Dim, b: Dim) -> bool | None:
    """``try_eq(a, b)``, remembered in the current environment (what :func:`same` asks: a caller
    that wants "provably different" too asks the search once)."""
    if a is b or (isinstance(a, int) and isinstance(b, int)):
        return a == b
    k = (a, b)
    cache: dict[tuple[Dim, Dim], bool | None] = current().same
    r = cache.get(k, _UNASKED)
    if r is _UNASKED:
        r = bounded(cache)[k] = try_eq(a, b)
    return r  # type: ignore[return-value]


def known_ne(a: Dim, b: Dim) -> bool:
    """Whether ``a`` and ``b`` provably differ."""
    return try_eq(a, b) is False

