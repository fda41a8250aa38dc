"""The largest value of one symbol under a memory budget, solved exactly with sympy.

``memory = params + max(live_1, ..., live_k)`` fits ``budget`` exactly when every
``params + live_i`` does; each is one inequality in the symbol once the others are
bound, which sympy solves over the reals. The answer is the largest integer in the
intersection, within the symbol's range, checked with onnxsym's own exact
arithmetic: the answer fits, and the answer plus one does not (unless it is the
top of the range). Floor divisions of the symbol by constants are split by residue
first, which makes them polynomials (see ``_largest_fitting``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .. import dims
from ..dims import Dim
from ..errors import UserInputError


def parse_budget(text: str) -> int:
    """``24GiB``, ``24 GB``, ``1.5GiB`` or a number of bytes, as bytes (rounded down)."""
    from ..output.numbers import SIZE_HELP, parse_size

    got = parse_size(text)
    if got is None:
        raise UserInputError(f"budget {text!r}: {SIZE_HELP}", f"--budget {text!r}: {SIZE_HELP}")
    return got


@dataclass(frozen=True)
class Solution:
    symbol: str
    value: int  # the largest value that fits
    memory: Dim  # memory as an expression in the symbol (the others bound)
    at_value: int  # bytes at the answer
    at_next: int | None  # bytes at the answer plus one (None at the top of the range)
    budget: int
    range_top: bool  # the whole range fits: the answer is its upper end
    # where the largest size that fits breaks the domain: the condition it breaks (the answer is
    # then the largest size below that fits and the model runs at); else empty
    skipped: str = ""


# The most sizes below the budget's answer tried for one the domain allows.
_DOWN = 4096


def within_domain(s: Solution, domain, bind: Mapping[str, int]) -> Solution:
    """``s`` moved down to the largest size that fits and that the ``domain`` (an
    onnxsym.domain.Domain, over the symbols ``bind`` leaves) allows: a divisibility or a
    condition that is no range (the ranges were solved within already). Each size tried is
    checked against the budget again (memory need not fall with the size)."""
    first = None
    for v in range(s.value, max(s.value - _DOWN, 0) - 1, -1):
        broken = domain.broken_by({**bind, s.symbol: v})
        if broken is None:
            at = dims.evaluate(s.memory, {s.symbol: v})
            if at <= s.budget:
                if first is None:
                    return s
                return Solution(s.symbol, v, s.memory, at, None, s.budget, False, first)
        elif first is None:
            first = broken
    raise _unsolvable(s.symbol, f"no size within {_DOWN} below {s.value} (the largest that fits) is in the "
                                f"domain: {first}")


def _substituted(memory: Dim, bind: Mapping[str, int]) -> Dim:
    mapping = {s: b for s in dims.free_symbols(memory) if s.name in bind for b in (bind[s.name],)}
    return dims.substitute(memory, mapping)


def _arguments(d: Dim) -> tuple[Dim, list[Dim]]:
    """``d`` as ``rest + max(args)``, or ``(d, [])`` when it has no top-level max."""
    import sympy

    from ..dims.sympy_bridge import from_sympy, to_sympy
    s = to_sympy(d)
    maxes = [a for a in sympy.Add.make_args(s) if isinstance(a, sympy.Max)]
    if len(maxes) != 1:
        return d, []
    rest = s - maxes[0]
    return from_sympy(rest), [from_sympy(a) for a in maxes[0].args]


def _unsolvable(symbol: str, why: str) -> UserInputError:
    """The error for ``symbol`` (``Cost.solve``'s argument, the command line's ``--solve``)."""
    return UserInputError(f"symbol {symbol!r}: {why}", f"--solve {symbol}: {why}")


def solve_budget(memory: Dim, symbol: str, budget: int, ranges: Mapping[str, tuple[int, int]],
                 bind: Mapping[str, int]) -> Solution:
    if symbol not in ranges:
        raise _unsolvable(symbol, f"not an unbound symbol of the model (those: {', '.join(sorted(ranges))})")
    memory = _substituted(memory, bind)
    if symbol not in {s.name for s in dims.free_symbols(memory)}:
        raise _unsolvable(symbol, f"the memory does not depend on {symbol} (it is {memory} bytes)")
    others = sorted(s.name for s in dims.free_symbols(memory) if s.name != symbol)
    if others:
        why = f"the memory depends on {', '.join(others)} too; give "
        raise UserInputError(f"symbol {symbol!r}: {why}bind={{{', '.join(f'{o!r}: INT' for o in others)}}} (allow_zero for 0)",
                             f"--solve {symbol}: {why}{' '.join(f'--bind {o}=INT' for o in others)} (--allow-zero for 0)")
    lo, hi = ranges[symbol]
    value = _largest_fitting(memory, symbol, budget, lo, hi, depth=3)
    if value is None:
        raise _unsolvable(symbol, f"nothing fits in {budget} bytes (at {symbol}={lo}: "
                                  f"{dims.evaluate(memory, {symbol: lo})} bytes)")
    at_value = dims.evaluate(memory, {symbol: value})
    at_next = dims.evaluate(memory, {symbol: value + 1}) if value < hi else None
    # Checked with the exact integer arithmetic, not taken from sympy's word.
    if at_value > budget or (at_next is not None and at_next <= budget):
        raise AssertionError(f"solving {symbol}: {value} gives {at_value}, {value + 1} gives {at_next} "
                             f"against {budget}")
    return Solution(symbol, value, memory, at_value, at_next, budget, value == hi)


def _largest_fitting(memory: Dim, symbol: str, budget: int, lo: int, hi: int, depth: int) -> int | None:
    """The largest integer ``symbol`` in ``[lo, hi]`` with ``memory <= budget``, or ``None``.

    Floor divisions and modulos of the symbol by constants are taken apart exactly: with
    ``L`` their least common multiple, ``symbol = L*t + r`` for each residue ``r`` makes
    every ``(a*symbol + b)//c`` with ``c | a*L`` a polynomial in ``t`` (nested ones after
    another round), and each residue is solved on its own.
    """
    import math

    import sympy

    from ..dims.sympy_bridge import to_sympy

    s = to_sympy(memory)
    divisors = set()
    for f in s.atoms(sympy.floor, sympy.Mod):
        den = sympy.fraction(sympy.together(f.args[0]))[1] if isinstance(f, sympy.floor) else f.args[1]
        if f.free_symbols and den.is_Integer:
            divisors.add(abs(int(den)))
        elif f.free_symbols:
            raise _unsolvable(symbol, f"sympy cannot solve {memory} <= {budget}")
    if not divisors or divisors == {1}:
        return _largest_solved(memory, symbol, budget, lo, hi)
    period = math.lcm(*divisors)
    if depth == 0 or period > 4096:
        raise _unsolvable(symbol, f"sympy cannot solve {memory} <= {budget}")
    best = None
    base = next(x for x in dims.free_symbols(memory) if x.name == symbol)
    for r in range(period):
        t_lo, t_hi = -(-(lo - r) // period), (hi - r) // period
        if t_lo > t_hi:
            continue
        name = f"{symbol}_div{period}"  # the only other symbol: every other one is bound
        with dims.current().child({name: (t_lo, t_hi)}):  # its range for this residue only; an int leaves
            per_residue = dims.substitute(memory, {base: dims.add(dims.mul(period, dims.expr_of(dims.Sym(name))), r)})
            got = _largest_fitting(per_residue, name, budget, t_lo, t_hi, depth - 1) \
                if not isinstance(per_residue, int) else (t_hi if per_residue <= budget else None)
        if got is not None:
            value = period * got + r
            best = value if best is None else max(best, value)
    return best


def _largest_solved(memory: Dim, symbol: str, budget: int, lo: int, hi: int) -> int | None:
    """The largest integer in ``[lo, hi]`` where ``memory <= budget``, a polynomial (or a
    sum with one top-level max) in ``symbol``, solved by sympy over the reals."""
    import sympy

    from ..dims.sympy_bridge import to_sympy

    rest, args = _arguments(memory)
    parts = [dims.add(rest, a) for a in args] or [memory]
    x = sympy.Symbol(symbol, real=True)
    feasible = sympy.Interval(lo, hi)
    for part in parts:
        expr = to_sympy(part)
        expr = expr.subs({s: x for s in expr.free_symbols})
        try:
            got = sympy.solveset(expr - budget <= 0, x, sympy.S.Reals)
        except NotImplementedError:
            got = None
        if got is None or isinstance(got, sympy.ConditionSet):
            raise _unsolvable(symbol, f"sympy cannot solve {part} <= {budget}")
        feasible = feasible.intersect(got)
    return _largest_integer(feasible)


def _largest_integer(s) -> int | None:
    import sympy
    if s.is_empty:
        return None
    if isinstance(s, sympy.Union):
        for part in sorted(s.args, key=lambda p: p.sup, reverse=True):
            v = _largest_integer(part)
            if v is not None:
                return v
        return None
    if isinstance(s, sympy.FiniteSet):
        ints = [int(sympy.floor(v)) for v in s if v.is_integer]
        return max(ints) if ints else None
    top = sympy.floor(s.sup)
    v = int(top)
    while v >= s.inf and not s.contains(v):
        v -= 1
    return v if s.contains(v) else None
