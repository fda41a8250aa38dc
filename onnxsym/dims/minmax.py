"""``max`` and ``min`` of dims, with the arguments that are provably dominated dropped."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .env import current
from .expr import Atom, Dim, Expr, OpAtom, Sym, atom_expr, check_dim, dim_key, free_symbols
from .ranges import try_le


def _minmax(kind: str, args: Iterable[Dim]) -> Dim:
    flat: list[Dim] = []
    for x in args:
        check_dim(x)
        if isinstance(x, Expr) and len(x.terms) == 1 and x.terms[0][1] == 1 \
                and len(x.terms[0][0]) == 1 and x.terms[0][0][0][1] == 1:
            atom = x.terms[0][0][0][0]
            if isinstance(atom, OpAtom) and atom.kind == kind:
                flat.extend(atom.args)
                continue
        flat.append(x)
    if not flat:
        raise ValueError(f"{kind}() of no dims")
    prove: Callable[[Dim, Dim], bool | None] = try_le if kind == "min" else (lambda p, q: try_le(q, p))
    better = prove
    if len(flat) > SAMPLED_ARGS:
        values = _sampled(flat)

        def better(p: Dim, q: Dim) -> bool | None:  # a point where q wins refutes it: no proof is tried
            for a, b in zip(values[p], values[q]):
                if a is not None and b is not None and (a < b if kind == "max" else a > b):
                    return False
            return prove(p, q)
    kept: list[Dim] = []
    for x in flat:
        # the newest kept first: along a sequence (the live bytes at each node) a neighbour
        # differs least, so its proof is the cheapest; whether one dominates x is the same
        if any(x is y or better(y, x) is True for y in reversed(kept)):
            continue
        kept = [y for y in kept if better(x, y) is not True]
        kept.append(x)
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=dim_key)
    return atom_expr(OpAtom(kind, tuple(kept)))


# Past this many arguments, each is first evaluated at a few points of the symbols' ranges:
# where one argument beats another at a point, the other cannot provably dominate it, and
# that proof (the costly part: hundreds of sums in a model's peak memory) is not tried.
SAMPLED_ARGS = 8


def _sampled(args: list[Dim]) -> dict[Dim, tuple[int | None, ...]]:
    """Each argument's values at a few points of the current ranges (None where undefined)."""
    syms = sorted({s for a in args for s in free_symbols(a)}, key=lambda s: s.name)
    env = current()
    box = {s: env.range(s.name) for s in syms}

    def at(v: int, only: Sym | None = None) -> dict[Sym, int]:
        return {s: min(max(v if only is None or only is s else lo, lo), hi) for s, (lo, hi) in box.items()}
    points = [at(v) for v in (0, 2, 7, 64, 1000, 4096)] + [at(4096, s) for s in syms]
    return {a: tuple(_value(a, p) for p in points) for a in args}


def _value(d: Dim, point: dict[Sym, int]) -> int | None:
    if isinstance(d, int):
        return d
    total = 0
    for m, c in d.terms:
        v = c
        for atom, e in m:
            a = _atom_value(atom, point)
            if a is None:
                return None
            v *= a ** e
        total += v
    return total


def _atom_value(atom: Atom, point: dict[Sym, int]) -> int | None:
    if isinstance(atom, Sym):
        return point[atom]
    assert isinstance(atom, OpAtom)
    args = [_value(x, point) for x in atom.args]
    if any(a is None for a in args) or atom.kind not in ("floordiv", "max", "min"):
        return None
    vals = [a for a in args if a is not None]
    if atom.kind == "floordiv":
        return None if vals[1] == 0 else vals[0] // vals[1]
    return max(vals) if atom.kind == "max" else min(vals)


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

