"""Quasi-affine dims: sums of symbols and of floor divisions by positive constants (nested).

Such a dim ``f`` is periodic up to a linear part: for each symbol ``s`` there is a
period ``P`` with ``f(s + P) - f(s)`` constant, and ``P`` divides the product of the
divisors on each path from ``s`` up to the top. So ``f`` is zero on the whole
domain of its symbols exactly when it is zero on one box of ``P + 1`` values per
symbol (all values where the range is shorter): :func:`identically_zero` decides
equality of quasi-affine dims completely.

A quasi-affine function of one symbol also gets one canonical form,
:func:`normalize`: the part of a sum made of that symbol and of floor divisions
over it alone is rewritten as ``k*s + sum(m*((u*s + j)//d))`` with the fewest
divisions (then the plainest ones), chosen from the function's values only. Two
dims that are sums of such parts are therefore ``==`` exactly when they are equal.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from .env import bounded, current
from .expr import Atom, Dim, Expr, Mono, OpAtom, Sym, Terms, eval_atom, evaluate, from_dict

# Largest period examined: beyond it a function keeps the form its construction gave.
MAX_PERIOD = 64
# Largest box of points evaluated to decide that a quasi-affine dim is zero.
MAX_POINTS = 4096
# Work bound of the search for canonical forms (_form), in candidate combinations of
# divisions, per inference. One function's search is bounded by the pool sizes in _form (at
# most ~10000 candidates); a model whose values make many new periodic functions (a wrap of a
# wrap in int8, each Slice bound a new one) would still search without end. Past the budget a
# function keeps the form its construction gave (as one of a period past MAX_PERIOD does):
# == may then miss an equality, which try_eq still decides. The real corpus spends at most
# about a tenth of it.
FORM_SEARCH = "quasi-affine forms"
CANDIDATES_BUDGET = 400_000

Periods = dict[Sym, int]


def atom_periods(atom: Atom) -> Periods | None:
    """Per symbol, a period of ``atom`` (``None`` unless it is quasi-affine)."""
    if isinstance(atom, Sym):
        return {atom: 1}
    assert isinstance(atom, OpAtom)
    p = atom.periods
    if p is False:
        p = None
        if atom.kind == "floordiv":
            n, d = atom.args
            if isinstance(d, int) and d > 0:
                inner = periods(n)
                if inner is not None:
                    p = {s: q * d for s, q in inner.items()}
        atom.periods = p
    return p


def periods(d: Dim) -> Periods | None:
    """Per symbol, a period of ``d`` when ``d`` is quasi-affine, else ``None``."""
    if isinstance(d, int):
        return {}
    out: Periods = {}
    for m, _ in d.terms:
        if not m:
            continue
        if len(m) != 1 or m[0][1] != 1:
            return None
        p = atom_periods(m[0][0])
        if p is None:
            return None
        for s, q in p.items():
            out[s] = q * out[s] // math.gcd(q, out[s]) if s in out else q
    return out


def _solo(atom: Atom) -> Sym | None:
    """The one symbol of a quasi-affine floor division over a single symbol."""
    if not isinstance(atom, OpAtom) or atom.kind != "floordiv":
        return None
    p = atom_periods(atom)
    if p is None or len(p) != 1:
        return None
    (s,) = p
    return s


def normalized_division(n: Dim, d: int) -> bool:
    """Whether :func:`normalize` gives ``n // d`` its form (it is over one symbol, within reach)."""
    p = periods(n)
    if not p or len(p) != 1:
        return False
    ((s, q),) = p.items()
    return q * d <= MAX_PERIOD and s.hi - s.lo >= q * d


# --------------------------------------------------------------------------- deciding zero


def identically_zero(d: Dim) -> bool | None:
    """Whether a quasi-affine ``d`` is 0 for every value of its symbols in their ranges;
    ``None`` when ``d`` is not quasi-affine or the box to check is too large."""
    p = periods(d)
    if p is None:
        return None
    axes = []
    size = 1
    for s, q in sorted(p.items(), key=lambda sq: sq[0].key):
        hi = s.hi if s.hi - s.lo <= q else s.lo + q
        axes.append((s, range(s.lo, hi + 1)))
        size *= hi - s.lo + 1
        if size > MAX_POINTS:
            return None
    syms = [s for s, _ in axes]
    for point in itertools.product(*(r for _, r in axes)):
        if evaluate(d, dict(zip(syms, point))):
            return False
    return True


# --------------------------------------------------------------------------- one form per function

# (divisor, multiplier u, offset j, coefficient m): m*((u*s + j)//d), 0 < u < d, gcd(u, d) == 1, 0 <= j < d
Division = tuple[int, int, int, int]
Form = tuple[int, tuple[Division, ...]]  # (k, divisions): k*s + sum of the divisions


def _steps(d: int, u: int, j: int, period: int) -> int:
    """The set of ``t`` in ``[0, period)`` where ``(u*t + j)//d`` steps up (by 1), as a bit mask."""
    return sum(1 << t for t in range(period) if (u * (t + 1) + j) // d - (u * t + j) // d)


def _cost(form: Form) -> tuple[Any, ...]:
    k, divs = form
    return (len(divs), k != 0, sum(u != 1 for _, u, _, _ in divs), sum(abs(m) for *_, m in divs), abs(k), k < 0,
            tuple(sorted(divs)))


Candidate = tuple[tuple[int, int, int], int]  # ((d, u, j), step mask)
Basis = list[Candidate]


def _fit(levels: dict[int, int], full: int, basis: Basis) -> Form | None:
    """``k`` and the coefficients ``m`` with ``steps == k + sum(m * basis steps)``, when they exist and
    are unique; ``levels`` maps each step value to the mask of the ``t`` where it occurs."""
    n = len(basis)
    values: dict[tuple[int, ...], int] = {}
    for pattern in itertools.product((0, 1), repeat=n):
        cell = full
        for bit, (_, mask) in zip(pattern, basis):
            cell &= mask if bit else ~mask
        if cell:
            v = next((v for v, at in levels.items() if not cell & ~at), None)
            if v is None:
                return None  # the steps differ where the divisions do not
            values[pattern] = v
    solution = _solve([(1,) + p for p in values], list(values.values()))
    if solution is None or any(m == 0 for m in solution[1:]):
        return None
    k, *ms = solution
    return k, tuple((d, u, j, m) for ((d, u, j), _), m in zip(basis, ms))


def _solve(rows: list[tuple[int, ...]], rhs: list[int]) -> list[int] | None:
    """The one integer solution of ``rows @ x == rhs``, if there is exactly one."""
    n = len(rows[0])
    a = [[Fraction(x) for x in row] + [Fraction(v)] for row, v in zip(rows, rhs)]
    r = 0
    for c in range(n):
        pivot = next((i for i in range(r, len(a)) if a[i][c]), None)
        if pivot is None:
            return None  # not unique
        a[r], a[pivot] = a[pivot], a[r]
        for i in range(len(a)):
            if i != r and a[i][c]:
                f = a[i][c] / a[r][c]
                a[i] = [x - f * y for x, y in zip(a[i], a[r])]
        r += 1
    if any(row[-1] for row in a[n:]):
        return None  # inconsistent
    out = [a[i][-1] / a[i][i] for i in range(n)]
    return [int(x) for x in out] if all(x.denominator == 1 for x in out) else None


# steps -> (the units each search level charged, the form found): the searches of one process share
# their answers (a pipeline infers the same graph again and again), each hit charging the budget of
# this inference what the search charged, so a hit answers exactly as the search would.
_FORMS: dict[tuple[int, ...], tuple[tuple[int, ...], Form | None]] = {}


def _form(steps: tuple[int, ...]) -> Form | None:
    """The form of least cost whose steps (differences) are ``steps``, one period of them, among
    those with up to three divisions, else their counting form; None when the search would pass
    its budget (CANDIDATES_BUDGET)."""
    env = current()
    known = _FORMS.get(steps)
    if known is not None:
        charges, form = known
        return form if all(env.spend(FORM_SEARCH, units, CANDIDATES_BUDGET) for units in charges) else None
    charged: list[int] = []
    form = _search_form(steps, charged)
    if FORM_SEARCH not in env.over:
        bounded(_FORMS)[steps] = tuple(charged), form
    return form


def _search_form(steps: tuple[int, ...], charged: list[int]) -> Form | None:
    """:func:`_form`'s search, each charge to the budget also put in ``charged``."""
    period = len(steps)
    levels: dict[int, int] = {}
    for t, v in enumerate(steps):
        levels[v] = levels.get(v, 0) | 1 << t
    if len(levels) == 1:
        return steps[0], ()
    full = (1 << period) - 1
    plain, general, by_mask = _pools(period)
    # one division steps by m exactly where the function steps to one of its two levels
    whole = tuple(c for mask in levels.values() for c in by_mask.get(mask, ())) if len(levels) == 2 else ()
    # n divisions take at most 2**n step values, and the lcm of their divisors is the period;
    # the searches stay small (each function pays for its search once). One division (its
    # divisor the period) is searched among all (a wrap of 100*s in int8 is
    # 100*s - 256*((25*s + 32)//64)), more only among plain ones past a period of 32.
    env = current()
    if period > 32:
        general = ()
    for size, pool in ((1, whole), (2, plain + general if len(plain + general) <= 120 else plain if len(plain) <= 200 else ()),
                       (3, plain + general if len(plain + general) <= 30 else plain if len(plain) <= 40 else ())):
        if len(levels) > 2 ** size:
            continue
        candidates = math.comb(len(pool), size)
        charged.append(candidates)
        if not env.spend(FORM_SEARCH, candidates, CANDIDATES_BUDGET):
            return None
        found = [f for combo in itertools.combinations(pool, size) if _lcm(d for (d, _, _), _ in combo) == period
                 for f in [_fit(levels, full, list(combo))] if f]
        if found:
            return min(found, key=_cost)
    return _counting_form(steps)


@functools.cache
def _pools(period: int) -> tuple[tuple[Candidate, ...], tuple[Candidate, ...], dict[int, tuple[Candidate, ...]]]:
    """The divisions ``(u*s + j)//d`` a search over ``period`` draws from, each with its step
    mask: the plain ones (u == 1), the general ones (u > 1), and by step mask all those whose
    divisor is the period (one division alone must have it). A function of the period only
    (MAX_PERIOD at most)."""
    divisors = [d for d in range(2, period + 1) if period % d == 0]
    plain = tuple(((d, 1, j), _steps(d, 1, j, period)) for d in divisors for j in range(d))
    general = tuple(((d, u, j), _steps(d, u, j, period)) for d in divisors for u in range(2, d)
                    if math.gcd(u, d) == 1 for j in range(d))
    by_mask: dict[int, tuple[Candidate, ...]] = {}
    for c in plain + general:
        if c[0][0] == period:
            by_mask[c[1]] = by_mask.get(c[1], ()) + (c,)
    return plain, general, by_mask


def _counting_form(steps: tuple[int, ...]) -> Form:
    """The form made of the steps themselves, for a function no small search fits: with
    ``P = len(steps)``, ``(s + P-1-t)//P`` counts the ``i`` in ``[0, s)`` with ``i % P == t``, so
    ``f(s) - f(0) == sum(steps[t] * (s + P-1-t)//P)``; those counts add up to ``s``, so the most
    common step (the least of equally common ones) is taken out as ``k*s``. A function of the
    steps alone, hence one form per function, which keeps ``==`` complete."""
    period = len(steps)
    k = min(set(steps), key=lambda v: (-steps.count(v), v))
    return k, tuple((period, 1, period - 1 - t, v - k) for t, v in enumerate(steps) if v != k)


def _lcm(ns: Iterable[int]) -> int:
    out = 1
    for n in ns:
        out = out * n // math.gcd(out, n)
    return out


def _solo_form(s: Sym, k: int, items: tuple[tuple[OpAtom, int], ...]) -> tuple[Form, int] | None:
    """The canonical form of ``k*s + sum(c*atom)`` and its value at ``s = 0``."""
    key = (s, k, items)
    cache: dict[tuple[object, ...], tuple[Form, int] | None] = current().forms
    if key in cache:
        return cache[key]
    out = None
    if FORM_SEARCH in current().over:
        return None  # the budget of this inference is spent
    solo = _solo_steps(s, k, items)
    if solo is not None:
        first, steps = solo
        # A range shorter than the period would let a division be constant on it, which
        # floordiv would have folded: such a symbol keeps the form its construction gave.
        form = _form(steps) if s.hi - s.lo >= len(steps) else None
        if form is not None:
            out = form, first
    bounded(cache)[key] = out
    return out


# (s, k, items) -> the value of ``k*s + sum(c*atom)`` at s = 0 and one period of its steps (None: a
# period past MAX_PERIOD): a function of the atoms alone, whatever the ranges, so one process's
# inferences share it (a pipeline infers the same graph again and again), as they share _FORMS.
_STEPS: dict[tuple[object, ...], tuple[int, tuple[int, ...]] | None] = {}
_MOST_STEPS = 1 << 14  # (each holds a period of steps: fewer than the algebra's other caches)


def _solo_steps(s: Sym, k: int, items: tuple[tuple[OpAtom, int], ...]) -> tuple[int, tuple[int, ...]] | None:
    key = (s, k, items)
    if key in _STEPS:
        return _STEPS[key]
    out = None
    bound = 1
    for atom, _ in items:
        ps = atom_periods(atom)
        assert ps is not None
        p = ps[s]
        bound = bound * p // math.gcd(bound, p)
    if bound <= MAX_PERIOD:
        values = [k * t + sum(c * eval_atom(atom, {s: t}) for atom, c in items) for t in range(bound + 1)]
        steps = tuple(b - a for a, b in zip(values, values[1:]))
        period = next(p for p in range(1, bound + 1) if bound % p == 0 and steps[p:] == steps[:-p])
        out = values[0], steps[:period]
    bounded(_STEPS, _MOST_STEPS)[key] = out
    return out


def _division(s: Sym, d: int, u: int, j: int) -> OpAtom:
    num: dict[Mono, int] = {((s, 1),): u}
    if j:
        num[()] = j
    return OpAtom("floordiv", (from_dict(num), d))


def _pair_max_min(terms: Terms, out: dict[Mono, int]) -> bool:
    """``max(p, q) + min(p, q) == p + q``: the common part of their coefficients becomes ``p + q``."""
    found: dict[tuple[Dim, ...], dict[str, tuple[Mono, int]]] = {}
    for m, c in terms:
        if len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], OpAtom) and m[0][0].kind in ("max", "min") \
                and len(m[0][0].args) == 2:
            found.setdefault(m[0][0].args, {})[m[0][0].kind] = (m, c)
    changed = False
    for args, pair in found.items():
        if len(pair) != 2:
            continue
        (mx, cx), (mn, cn) = pair["max"], pair["min"]
        if (cx > 0) != (cn > 0):
            continue
        common = cx if abs(cx) <= abs(cn) else cn
        out[mx] -= common
        out[mn] -= common
        for a in args:
            for arg_mono, arg_c in (a.terms if isinstance(a, Expr) else (((), a),)):
                out[arg_mono] = out.get(arg_mono, 0) + common * arg_c
        changed = True
    return changed


def normalize(terms: Terms) -> Dim | None:
    """The canonical dim of ``terms`` when it differs from them, else ``None``."""
    groups: dict[Sym, list[tuple[OpAtom, int]]] = {}
    minmax = False
    for m, c in terms:
        if len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], OpAtom):
            atom = m[0][0]
            s = _solo(atom)
            if s is not None:
                groups.setdefault(s, []).append((atom, c))
            elif atom.kind in ("max", "min"):
                minmax = True
    if not groups and not minmax:
        return None
    out: dict[Mono, int] = dict(terms)
    changed = minmax and _pair_max_min(terms, out)
    for s, items in groups.items():
        lin: Mono = ((s, 1),)
        k = out.get(lin, 0)
        items.sort(key=lambda ac: ac[0].key)
        found = _solo_form(s, k, tuple(items))
        if found is None:
            continue
        (k2, divs), at0 = found
        new: dict[Mono, int] = {lin: k2} if k2 else {}
        for d, u, j, coeff in divs:
            new[((_division(s, d, u, j), 1),)] = coeff
        old = {lin: k} if k else {}
        old.update({((a, 1),): c for a, c in items})
        if new == old and at0 == 0:
            continue
        changed = True
        for mono in old:
            del out[mono]
        for mono, c in new.items():
            out[mono] = out.get(mono, 0) + c
        out[()] = out.get((), 0) + at0
    if not changed:
        return None
    return from_dict(out)

