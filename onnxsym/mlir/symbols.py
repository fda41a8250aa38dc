"""The ``symbol.symbolic_int`` of each dim, numbered in order of first use.

Three kinds, as in the symbol dialect's propagate-symbol pass:

- root: a symbol of the model (a graph input's dim_param, or a fresh symbol);
- derived: a dim affine in other symbols, defined by an affine map over them
  (``%S1 = symbol.symbolic_int @S1 [%S0, %S0], affine_map<()[s0, s1] -> (s0 + s1)>``);
- opaque: a dim no affine map expresses (``max``, a product of symbols); it has
  no operands and records its expression, over root symbol names, as an attribute.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import dims
from ..dims import Dim, Expr
from .affine import affine_map, affine_text, is_opaque_unit
from .names import Namer

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@dataclass(eq=False)
class Symbol:
    name: str                      # the symbol name, without '@'
    ssa: str                       # its SSA value, with '%'
    dim: Dim
    lo: int
    hi: int
    operands: list[Symbol] = field(default_factory=list)
    map: str | None = None      # derived: affine_map over the operands
    expression: str | None = None  # opaque: the expression over root symbol names
    names: list[Symbol] = field(default_factory=list)  # opaque: the root symbols it names


Entry = int | Symbol


class Symbols:
    """Gives each symbolic dim one Symbol; equal dims share it (dims are canonical)."""

    def __init__(self, namer: Namer, user_names: bool = False):
        self.namer = namer
        self.user_names = user_names
        self.by_dim: dict[Dim, Symbol] = {}
        self.order: list[Symbol] = []
        self._taken: set[str] = set()
        self._count = 0

    def _new(self, d: Dim, user: str | None = None) -> Symbol:
        if user is not None and self.user_names:
            base = user
        else:
            base = f"S{self._count}"
            self._count += 1
        name = base
        k = 1
        while name in self._taken:
            k += 1
            name = f"{base}_{k}"
        self._taken.add(name)
        lo, hi = dims.range_of(d)
        s = Symbol(name, self.namer.fresh(name), d, max(lo, I64_MIN), min(hi, I64_MAX))
        return s

    def _add(self, s: Symbol) -> Symbol:
        self.by_dim[s.dim] = s
        self.order.append(s)
        return s

    def of(self, d: Expr) -> Symbol:
        s = self.by_dim.get(d)
        if s is not None:
            return s
        root = dims.as_sym(d)
        if root is not None:
            return self._add(self._new(d, root.name))
        if is_opaque_unit(d):
            roots = [self.of(dims.expr_of(r)) for r in sorted(dims.free_symbols(d), key=lambda x: x.name)]
            s = self._new(d)
            s.expression = self._expression_text(d)
            s.names = roots
            return self._add(s)
        operands: list[Symbol] = []

        def operand(x: Dim) -> int:
            if isinstance(x, int):  # affine_text asks only of symbols and opaque units
                raise TypeError(f"the number {x} has no symbol")
            sx = self.of(x)
            if sx not in operands:
                operands.append(sx)
            return operands.index(sx)

        text = affine_text(d, operand)
        return self.derived(d, operands, text)

    def derived(self, d: Dim, operands: Sequence[Symbol], text: str) -> Symbol:
        """A symbol for ``d`` defined by ``text``, an affine expression over ``operands``."""
        s = self._new(d)
        s.operands = list(operands)
        s.map = affine_map(len(operands), [text])
        return self._add(s)

    def sum_of(self, d: Dim, parts: Sequence[Dim]) -> None:
        """Define ``d`` as the sum of ``parts``, one operand per symbolic part, as
        MLIR reifies a concat (``[%S0, %S0] -> (s0 + s1)``). Only if ``d`` is new."""
        if d in self.by_dim or not isinstance(d, Expr):
            return
        total: Dim = 0
        for p in parts:
            total = dims.add(total, p)
        if total is not d:
            return
        operands = [self.of(p) for p in parts if not isinstance(p, int)]
        terms = [f"s{i}" for i in range(len(operands))]
        const = sum(p for p in parts if isinstance(p, int))
        text = " + ".join(terms) + (f" + {const}" if const else "")
        self.derived(d, operands, text)

    def binding(self, shape: Sequence[Dim] | None) -> list[Entry] | None:
        """Per dim, the int or the Symbol; None when every dim is static."""
        if shape is None or all(isinstance(d, int) for d in shape):
            return None
        out = [d if isinstance(d, int) else self.of(d) for d in shape]
        for s in out:
            if isinstance(s, Symbol) and s.lo < 0:
                s.lo = 0  # it is the size of a dim, whatever the interval arithmetic allowed
        return out

    def _expression_text(self, d: Dim) -> str:
        names = {}
        for r in dims.free_symbols(d):
            s = self.by_dim[dims.expr_of(r)]
            if s.name != r.name:
                names[r] = s.name
        if not names:
            return str(d)
        # the text only: the renamed symbols get the ranges of those they stand for, there alone
        with dims.current().child({n: r.range for r, n in names.items()}):
            return str(dims.substitute(d, {r: dims.expr_of(dims.Sym(n)) for r, n in names.items()}))


def bind_map(binding: Sequence[Entry]) -> tuple[list[Symbol], str]:
    """The distinct symbols of a binding, in order, and its affine map over them."""
    operands: list[Symbol] = []
    results: list[str] = []
    for e in binding:
        if isinstance(e, int):
            results.append(str(e))
            continue
        if e not in operands:
            operands.append(e)
        results.append(f"s{operands.index(e)}")
    return operands, affine_map(len(operands), results)
