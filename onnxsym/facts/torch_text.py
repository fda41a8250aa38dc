"""torch's sympy text of a dim, read as a claim: the dynamo exporter declares dims such as
``TruncToInt(32.0*ToFloat(CeilToInt(FloatTrueDiv(ToFloat(TruncToInt(...)), 32.0))))``,
in the vocabulary of ``torch.utils._sympy.functions`` (and sympy's ``Min``, ``Max``, ``Mod``,
``floor``, ``ceiling``). What it reads is only ever checked against the computed dim
(``facts/declared``): never a fact.

Integer functions are read exactly: ``FloorDiv`` ``(a//b)``, ``CleanDiv`` (a division torch
proved exact: ``a//b``), ``CeilDiv``, ``PythonMod`` and ``Mod`` (Python's sign), ``ModularIndexing``
``(a//b) % c``, ``PowByNatural``, ``LShift``, ``RShift``, ``Min``, ``Max``, ``Identity``.

Float functions follow the arithmetic of Python's floats (float64) at run time, read only where
it is exact: ``ToFloat`` of an integer is that integer; ``FloatTrueDiv`` and ``IntTrueDiv`` of
integers ``a`` (of either sign) and ``b >= 1`` a correctly rounded quotient, whose floor, ceil,
truncation and round half to even are Quotient's (``semantics.floatops.Quotient``; round keeps
to ``|a| <= 2**52``, else ``bounded``); a product by a
float constant ``c = m / 2**k`` rounds as the quotient ``(m*x) / 2**k``; sums, differences and
products of integral floats are integers; ``TruncToInt``, ``FloorToInt``, ``CeilToInt``,
``RoundToInt`` of an integer are itself. All of this holds while every integer a float holds is
at most 2**53: a reading that needs it where the ranges do not prove it is ``bounded`` (it may
show a claim wrong, which it is then at every size below the bound, never prove one right).
An integer conversion of a float the reading cannot follow (a ``Min`` of two quotients, a
product of a quotient) is one name, the text of that call: a placeholder, like any other name
a declaration uses.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass

from .. import dims
from ..dims import Dim, structure
from ..dims.text import binary, syntax_tree
from ..semantics.floatops import Quotient

# Python's float: every integer of magnitude at most 2**53 is exact.
EXACT = 2**53

# The names that make a text torch's, not the grammar's.
INT_FUNCS = frozenset({"FloorDiv", "CleanDiv", "CeilDiv", "PythonMod", "Mod", "ModularIndexing", "PowByNatural",
                       "Pow", "LShift", "RShift", "Min", "Max", "Identity"})
TO_INT = frozenset({"TruncToInt", "FloorToInt", "CeilToInt", "RoundToInt", "floor", "ceiling"})
FLOAT_FUNCS = frozenset({"ToFloat", "FloatTrueDiv", "IntTrueDiv", "TruncToFloat", "FloatPow", "RoundDecimal"})
VOCABULARY = INT_FUNCS | TO_INT | FLOAT_FUNCS


class Unread(Exception):
    """A part of the text this reading cannot follow exactly."""


@dataclass(frozen=True)
class _Float:
    """A float of the text's run-time arithmetic: the integer ``num`` when ``den`` is 1, else
    the correctly rounded quotient ``num / den`` (``0 <= num``, ``1 <= den``)."""

    num: Dim
    den: Dim = 1


@dataclass
class Reading:
    dim: Dim
    bounded: bool  # relies on a bound of 2**53 the ranges do not prove


def mentions_torch(text: str) -> bool:
    return any(f + "(" in text for f in VOCABULARY)


# What a reading found of each part, by (integer or float, the part's text): see _Reader.
Memo = dict[tuple[bool, str], tuple[object, bool]]


def read(text: str, symbol: Callable[[str], Dim], memo: Memo | None = None) -> Reading | None:
    """``text`` read as a dim over ``symbol``'s names; None where it is no Python expression of
    this vocabulary. ``memo``: the parts read before, by texts read with this same ``symbol``
    (torch repeats a layer's whole text inside the next layer's: SAME padding names ``x`` in
    ``x + Max(0, ... - x ...)``, so a network's last dims repeat its first ones thousands of times)."""
    try:
        tree = syntax_tree(text.strip())
    except ValueError:
        return None
    if tree is None:
        return None
    r = _Reader(text.strip(), symbol, memo)
    try:
        v = r.int_(tree.body)
    except (Unread, ZeroDivisionError, dims.SymbolicDimError, RecursionError, dims.TooLarge):
        return None
    return Reading(v, r.bounded)


class _Reader:
    def __init__(self, text: str, symbol: Callable[[str], Dim], memo: Memo | None = None) -> None:
        self.text, self.symbol, self.bounded = text, symbol, False
        # a part is named by its text where offsets are characters (one ASCII line); the same text
        # is the same syntax tree, read alike (over the same symbols: the memo is the caller's)
        self.memo = memo if memo is not None and text.isascii() and "\n" not in text else None

    def _remembered(self, integer: bool, node: ast.expr, read: Callable[[ast.expr], object]) -> object:
        """``read(node)``, or what it gave for the same text before (a value, or Unread), with
        the ``bounded`` it set."""
        if self.memo is None or isinstance(node, (ast.Constant, ast.Name)):
            return read(node)
        key = (integer, self.text[node.col_offset:node.end_col_offset])  # type: ignore[misc]
        known = self.memo.get(key)
        if known is None:
            outer, self.bounded = self.bounded, False
            try:
                got: object = read(node)
            except Unread as exc:
                got = exc
            known = self.memo[key] = (got, self.bounded)
            self.bounded = outer
        got, bounded = known
        self.bounded = self.bounded or bounded
        if isinstance(got, Unread):
            raise Unread(*got.args)
        return got

    def int_(self, node: ast.expr) -> Dim:
        """An integer-valued part."""
        return self._remembered(True, node, self._int)  # type: ignore[return-value]

    def float_(self, node: ast.expr) -> _Float:
        """A float-valued part, where exactly known."""
        return self._remembered(False, node, self._float)  # type: ignore[return-value]

    def _exact(self, d: Dim) -> Dim:
        """``d`` as a float holds it: exact while ``0 <= d <= 2**53`` (else ``bounded``)."""
        if isinstance(d, int):
            if abs(d) > EXACT:
                raise Unread(d)
            return d
        lo, hi = dims.range_of(d)
        if lo < -EXACT or hi > EXACT:
            self.bounded = True
        return d

    def _int(self, node: ast.expr) -> Dim:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            return self.symbol(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.int_(node.operand)
            return dims.neg(v) if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            made = binary(node.op, self.int_(node.left), self.int_(node.right))
            if made is None:
                raise Unread(node)
            return made
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            name, args = node.func.id, node.args
            if name in TO_INT and len(args) == 1:
                try:
                    return self._to_int(name, self.float_(args[0]))
                except Unread:
                    return self._placeholder(node)
            if name in INT_FUNCS:
                return self._int_call(name, [self.int_(a) for a in args])
        raise Unread(node)

    def _placeholder(self, node: ast.expr) -> Dim:
        text = ast.get_source_segment(self.text, node) or ast.unparse(node)
        return self.symbol(text)

    def _int_call(self, name: str, a: list[Dim]) -> Dim:
        n = len(a)
        if name in ("Min", "Max") and n >= 1:
            return a[0] if n == 1 else (dims.dmin if name == "Min" else dims.dmax)(*a)
        if name == "Identity" and n == 1:
            return a[0]
        if name in ("FloorDiv", "CleanDiv") and n == 2:
            return dims.floordiv(a[0], a[1])
        if name == "CeilDiv" and n == 2:
            return dims.ceil_div(a[0], a[1])
        if name in ("PythonMod", "Mod") and n == 2:
            return dims.mod(a[0], a[1])
        if name == "ModularIndexing" and n == 3:
            return dims.mod(dims.floordiv(a[0], a[1]), a[2])
        if name in ("PowByNatural", "Pow") and n == 2 and isinstance(a[1], int) and a[1] >= 0:
            return a[0] ** a[1] if isinstance(a[0], int) else a[0].__pow__(a[1])
        if name in ("LShift", "RShift") and n == 2 and isinstance(a[1], int) and 0 <= a[1] < 63:
            return dims.mul(a[0], 2 ** a[1]) if name == "LShift" else dims.floordiv(a[0], 2 ** a[1])
        raise Unread(name)

    def _to_int(self, name: str, f: _Float) -> Dim:
        if f.den == 1:
            return f.num  # an integral float converts to itself
        q = Quotient(f.num, f.den)
        if name in ("FloorToInt", "floor"):
            return q.floor()
        if name == "TruncToInt":
            return q.trunc()
        if name in ("CeilToInt", "ceiling"):
            return q.ceil()
        if name == "RoundToInt":  # Python's round: half to even; float64 keeps the side of the half within 2**52
            if not isinstance(f.num, int) and max(-dims.range_of(f.num)[0], dims.range_of(f.num)[1]) > EXACT // 2:
                self.bounded = True
            elif isinstance(f.num, int) and abs(f.num) > EXACT // 2:
                raise Unread(name)
            return q.round()
        raise Unread(name)

    def _float(self, node: ast.expr) -> _Float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            c = node.value
            if isinstance(c, float) and not (math.isfinite(c) and c.is_integer()):
                raise Unread(c)  # a fractional constant alone (only as a factor, below)
            return _Float(self._exact(int(c)))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for k, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(k, ast.Constant) and isinstance(k.value, float) and math.isfinite(k.value) \
                        and not k.value.is_integer() and k.value > 0:
                    x = self.float_(other)
                    if x.den != 1:
                        raise Unread(node)
                    m, e = k.value.as_integer_ratio()
                    return self._quotient(dims.mul(m, x.num), e)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = self.float_(node.left), self.float_(node.right)
            if a.den != 1 or b.den != 1:
                raise Unread(node)
            op = {ast.Add: dims.add, ast.Sub: dims.sub, ast.Mult: dims.mul}[type(node.op)]
            return _Float(self._exact(op(a.num, b.num)))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self._divide(self.float_(node.left), self.float_(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            a = self.float_(node.operand)
            if a.den != 1:
                raise Unread(node)
            return _Float(dims.neg(a.num))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            name, args = node.func.id, node.args
            if name == "ToFloat" and len(args) == 1:
                return _Float(self._exact(self.int_(args[0])))
            if name in ("FloatTrueDiv", "IntTrueDiv") and len(args) == 2:
                a, b = (_Float(self._exact(self.int_(x))) for x in args) if name == "IntTrueDiv" \
                    else (self.float_(x) for x in args)
                return self._divide(a, b)
            if name == "TruncToFloat" and len(args) == 1:
                return _Float(self._to_int("TruncToInt", self.float_(args[0])))
            if name in ("Min", "Max") and args:
                fs = [self.float_(a) for a in args]
                if any(f.den != 1 for f in fs):
                    raise Unread(node)  # two quotients compare only as reals
                return _Float(self._int_call(name, [f.num for f in fs]))
        # an integer where a float is expected (sympy's mixed arithmetic)
        try:
            return _Float(self._exact(self.int_(node)))
        except Unread:
            raise Unread(node) from None

    def _divide(self, a: _Float, b: _Float) -> _Float:
        if a.den != 1 or b.den != 1:
            raise Unread("a quotient of a quotient rounds twice")
        return self._quotient(a.num, b.num)

    def _quotient(self, num: Dim, den: Dim) -> _Float:
        if dims.try_le(den, -1) is True:
            num, den = dims.neg(num), dims.neg(den)  # a / -b == -a / b
        if dims.try_le(1, den) is not True:
            raise Unread("a quotient of a divisor that may be 0")
        self._exact(num)
        q = structure.exact_quotient(num, den)
        return _Float(q) if q is not None else _Float(num, den)
