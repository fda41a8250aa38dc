"""Decisions that hold only because a graph-input symbol is at least 1.

A graph-input dim's range starts at 1 by default (at 0 with ``--allow-zero``). A
rule that decides something from the ranges (a comparison of shape values that an
If branches on, a ``max`` that drops an argument, a broadcast) may decide it only
because of that default: at ``past_seq = 0`` the other answer holds. Such a
decision is recorded as an assumption ``past_seq >= 1`` with the node that took it.

Detecting it: compute the decision again with those symbols widened to start at 0;
where the answer changes, the symbols whose widening alone changes it are the ones
assumed (all of them when no single one does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence

from .. import dims
from ..dims import Dim, Sym, structure
from .fact import Constraint


def candidates(args: Iterable[object], defaulted: Collection[str]) -> list[Sym]:
    """The symbols in ``args`` (dims, or sequences of them) whose lower bound 1 is the default."""
    out: dict[str, Sym] = {}
    for d in _dims_in(args):
        for s in dims.free_symbols(d):
            if s.lo == 1 and s.name in defaulted:
                out[s.name] = s
    return [out[k] for k in sorted(out)]


def may_rely(args: Iterable[object]) -> bool:
    """A cheap first test: some symbol of ``args`` has lower bound 1."""
    return any(s.lo == 1 for d in _dims_in(args) for s in dims.free_symbols(d))


def widen(x, syms: Sequence[Sym]):
    """``x`` (a dim, bool, None, or a tuple/list of them) with each of ``syms`` starting at 0."""
    if not syms:
        return x
    return _map(x, {s: _widened(s) for s in syms})


def _widened(s: Sym) -> Dim:
    """A symbol standing for ``s`` starting at 0: a name of its own (``seq@0``), since a name has one
    range (what is derived over it is never mistaken for what holds of ``s``)."""
    name = f"{s.name}@0"
    dims.current().declare(name, 0, s.hi)  # s.hi only narrows, and so does this range
    return dims.expr_of(Sym(name))


def relied_on(compute: Callable, args: Sequence[object], syms: Sequence[Sym]) -> list[Dim]:
    """What ``compute(*args)`` relies on being >= 1, of the symbols ``syms``: each symbol
    whose widening alone changes the answer; else, when only widening them all does,
    their sum (``past + seq >= 1``: not both 0). Empty when nothing. ``compute`` must have
    no side effects (it runs on widened arguments too)."""
    if not syms:
        return []
    answer = _answer(compute, args)

    def differs(subset):
        return _answer(compute, [widen(a, subset) for a in args]) != widen(answer, subset)

    if not differs(syms):
        return []
    alone = [s for s in syms if differs([s])] if len(syms) > 1 else list(syms)
    if alone:
        return [dims.expr_of(s) for s in alone]
    total: Dim = 0
    for s in syms:
        total = dims.add(total, dims.expr_of(s))
    return [total]


def _answer(compute, args):
    try:
        return ("ok", compute(*args))
    except Exception as exc:  # noqa: BLE001 - a failure is an answer too (a contradiction)
        return ("error", type(exc).__name__)


def _map(x, mapping):
    if isinstance(x, bool) or x is None or isinstance(x, int):
        return x
    if isinstance(x, dims.Expr):
        return dims.substitute(x, mapping)
    if isinstance(x, (tuple, list)):
        return type(x)(_map(e, mapping) for e in x)
    return x


def _dims_in(args) -> Iterable[Dim]:
    for a in args:
        if isinstance(a, dims.Expr):
            yield a
        elif isinstance(a, (tuple, list)):
            yield from _dims_in(a)


def comparison_text(op: str, a: Dim, b: Dim) -> str:
    """``a > b`` for Greater and the like: the condition a decision was taken on."""
    sign = {"Equal": "==", "Less": "<", "Greater": ">", "LessOrEqual": "<=", "GreaterOrEqual": ">="}.get(op, op)
    return f"{a} {sign} {b}"


# ------------------------------------------------------------------ residues

MAX_CASES = 256  # residue combinations tried by :func:`never_equals`
FEW_VALUES = 8  # a symbol of at most this many values may be taken value by value


def never_equals(d: Dim, v: int) -> bool:
    """Whether ``d`` provably never takes the value ``v``. Beyond the ranges, a dim of at
    most two symbols under floor divisions and modulos by constants is split by each
    symbol's residue modulo those constants (``h = P*q + r``): the identity is exact, and
    in each case the divisions become linear in ``q``, which the ranges then bound."""
    eq = dims.try_eq(d, v)
    if eq is not None or isinstance(d, int):
        return eq is False
    key = (d, v)
    cache = dims.current().cache("never_equals")  # the answers depend on the ranges
    known = cache.get(key)
    if known is None:
        factors = _factors(d)
        if len(factors) > 1 and v == 0:  # a product is 0 only where a factor is
            known = all(never_equals(f, 0) for f in factors)
        elif len(factors) > 1 and v < 0:  # nor negative where every factor is >= 0
            known = all(_never_negative(f) for f in factors)
        else:
            known = _by_residues(d, lambda e: dims.try_eq(e, v) is False or _indivisible(e, v))
        cache[key] = known
    return known


def _indivisible(d: Dim, v: int) -> bool:
    """Whether ``d - v`` is never 0 because the coefficients of its terms over symbols share a
    factor that its constant lacks (``12*q - 1``: every atom is an integer)."""
    g, rest = 0, 0
    for c, factors in structure.terms(dims.sub(d, v)):
        if factors:
            g = math.gcd(g, c)
        else:
            rest = c
    return g > 1 and rest % g != 0


def never_equals_generalized(d: Dim, v: int) -> bool:
    """Whether ``d`` never takes the value ``v`` even with atoms :func:`never_equals` cannot split
    by residues taken as any value of their ranges: each max and min, then also each atom whose
    symbols no other atom has. ``16*(max(a, b)//4) - max(a, b)`` is never 0 for
    ``max(a, b) >= 1``; ``512*((h + 7)//32) - ((h + 7)//8)*((w + 7)//8)`` is not where
    ``(w + 7)//8`` is in ``[1, 3]``."""
    if never_equals(d, v):
        return True
    for isolated in (False, True):
        with dims.current().child({}):
            loose = _generalized(d, {}, _isolated_atoms(d) if isolated else set())
            if loose != d and never_equals(loose, v):
                return True
    return False


def _isolated_atoms(d: Dim) -> set:
    """The atoms of ``d``'s terms whose symbols appear in no other of its atoms."""
    atoms = {f for _, factors in structure.terms(d) for f, _ in factors}
    return {f for f in atoms if not any(dims.free_symbols(f) & dims.free_symbols(g) for g in atoms if g != f)}


def _generalized(d: Dim, atoms: dict, also: set) -> Dim:
    """``d`` with each max and min (and each atom of ``also``) a symbol of its own over that
    atom's range, declared in the current environment; floor divisions by constants kept, their
    numerators generalized."""
    parts: list[Dim] = []
    for c, factors in structure.terms(d):
        term: Dim = c
        for f, e in factors:
            op = structure.operation(f)
            kind, args = op if op is not None else ("symbol", ())
            if f not in also and kind == "symbol":
                g = f
            elif f not in also and kind == "floordiv" and isinstance(args[1], int) and args[1] > 0:
                g = dims.floordiv(_generalized(args[0], atoms, set()), args[1])
            else:
                if f not in atoms:
                    name = f"__generalized_{len(atoms)}"
                    dims.current().declare(name, *dims.range_of(f))
                    atoms[f] = dims.expr_of(Sym(name))
                g = atoms[f]
            for _ in range(e):
                term = dims.mul(term, g)
        parts.append(term)
    return structure.total(parts)


def _never_negative(d: Dim) -> bool:
    return dims.try_le(0, d) is True or _by_residues(d, lambda e: dims.try_le(0, e) is True)


def _factors(d: Dim) -> list[Dim]:
    """The factors of a dim that is one product term (its constant factor included)."""
    ts = structure.terms(d)
    if isinstance(d, int) or len(ts) != 1:
        return [d]
    c, factors = ts[0]
    out: list[Dim] = [c] if c != 1 else []
    for f, e in factors:
        out += [f] * e
    return out


def _by_residues(d: Dim, holds: Callable[[Dim], bool]) -> bool:
    """Whether ``holds`` for ``d`` in every case of its symbols' residues (a symbol under no
    division but of a few values taken value by value, which makes a product with it linear:
    ``q*(512 - 4*g) - g`` for each ``g`` in ``[1, 3]``)."""
    syms = sorted(dims.free_symbols(d), key=lambda s: s.name)
    periods = {s: _period(d, s) for s in syms}
    if not syms or len(syms) > 2 or max(periods.values(), default=1) == 1:
        return False
    few = {s for s in syms if periods[s] == 1 and s.hi - s.lo < FEW_VALUES}
    if math.prod(s.hi - s.lo + 1 if s in few else periods[s] for s in syms) > MAX_CASES:
        return False
    cases: list[dict] = [{}]
    for s in syms:
        period = periods[s]
        if s in few:
            split: list[Dim] = list(range(s.lo, s.hi + 1))
        elif period == 1:
            continue  # under no division: kept whole
        else:
            split = []
            for r in range(period):
                q_lo, q_hi = -((r - s.lo) // period), (s.hi - r) // period
                if q_lo > q_hi:
                    continue
                # h == period*q + r: q a symbol of its own per (h, period, r); its range only narrows with h's
                q_name = f"{s.name}__q{period}_{r}"
                dims.current().declare(q_name, q_lo, q_hi)
                q = dims.expr_of(Sym(q_name))
                split.append(dims.add(dims.mul(period, q), r))
        cases = [{**c, s: e} for c in cases for e in split]
    return all(holds(dims.substitute(d, c)) for c in cases)


def _period(d: Dim, s: Sym) -> int:
    """The least common multiple of the constant divisors of ``d``'s divisions over ``s`` (a
    remainder is ``n - c*(n//c)``), at any depth: ``s``'s residue modulo it makes them linear."""
    p = 1
    for _, factors in structure.terms(d):
        for f, _ in factors:
            op = structure.operation(f)
            if op is None or s not in dims.free_symbols(f):
                continue
            kind, args = op
            if kind == "floordiv" and isinstance(args[1], int) and args[1] > 0:
                p = p * args[1] // math.gcd(p, args[1])
            for a in args:
                q = _period(a, s)
                p = p * q // math.gcd(p, q)
    return p


def grouped(assumptions: Sequence[Constraint]) -> list[str]:
    """One line per assumed ``lhs >= 1``: the first node that relied on it, and how many more did."""
    first: dict[str, Constraint] = {}
    count: dict[str, int] = {}
    for c in assumptions:
        key = str(c)
        first.setdefault(key, c)
        count[key] = count.get(key, 0) + 1
    lines = []
    for key, c in first.items():
        more = count[key] - 1
        lines.append(f"{key} ({c.where}: {c.reason}" + (f"; and {more} more node{'s' * (more > 1)})" if more else ")"))
    return lines
