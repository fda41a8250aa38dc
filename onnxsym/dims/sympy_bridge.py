"""The bridge to sympy: onnxsym dims to sympy expressions and back, exactly.

``to_sympy`` writes floor division as ``floor(a/b)``, modulo as ``Mod`` (both with
Python's signs, as sympy has them), ``max``/``min`` as ``Max``/``Min``; a symbol
becomes an integer ``Symbol`` whose range gives the sign assumptions sympy has
(``positive`` for a range from 1, ``nonnegative`` from 0). ``from_sympy`` reads
those forms back (and ``ceiling``, ``Pow`` by a non-negative integer) into the
canonical algebra; anything else (a non-integer ratio, a float, ``sqrt``) is a
``ValueError`` naming it. sympy is imported here only: annotating never loads it.

Only :func:`_read` looks at an ``Expr``'s structure; the rest works on what it returns.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import sympy

from .. import dims
from . import Dim, Sym, structure

if TYPE_CHECKING:
    import onnx

# The onnxsym symbol each sympy symbol was made from, so that from_sympy gives back
# the same range (sympy keeps only the sign).
_made: weakref.WeakValueDictionary[sympy.Symbol, Sym] = weakref.WeakValueDictionary()


# An atom as _read gives it: a symbol or (kind, args) (as_sym or structure.operation of an atom).
ReadAtom = Sym | tuple[str, tuple[Dim, ...]] | None


def _read(d: Dim) -> int | list[tuple[int, list[tuple[ReadAtom, int]]]]:
    """The structure of a dim (through ``dims.structure``): an ``int``, or a list of
    ``(coefficient, [(atom, exponent), ...])`` terms where an atom is a ``Sym`` or
    ``(kind, args)`` with kind floordiv, max or min (a remainder is ``a - b*(a//b)``)."""
    if isinstance(d, int):
        return d
    return [(c, [(dims.as_sym(f) or structure.operation(f), e) for f, e in factors])
            for c, factors in structure.terms(d)]


def sympy_symbol(s: Sym) -> sympy.Symbol:
    """The integer sympy symbol for ``s``, with the sign its range proves."""
    if s.lo >= 1:
        out = sympy.Symbol(s.name, integer=True, positive=True)
    elif s.lo >= 0:
        out = sympy.Symbol(s.name, integer=True, nonnegative=True)
    elif s.hi <= -1:
        out = sympy.Symbol(s.name, integer=True, negative=True)
    elif s.hi <= 0:
        out = sympy.Symbol(s.name, integer=True, nonpositive=True)
    else:
        out = sympy.Symbol(s.name, integer=True)
    _made[out] = s
    return out


# Unevaluated, so that the terms are the algebra's: sympy would drop a max(0, a**2) the
# algebra keeps, and from_sympy(to_sympy(e)) must be e itself (sympy simplifies on request).
_KINDS: dict[str, Callable[..., Any]] = {"floordiv": lambda a, b: sympy.floor(a / b, evaluate=False),
          "mod": lambda a, b: sympy.Mod(a, b, evaluate=False),
          "max": lambda *a: sympy.Max(*a, evaluate=False), "min": lambda *a: sympy.Min(*a, evaluate=False)}


def to_sympy(d: Dim) -> sympy.Expr:
    """``d`` as a sympy expression with the same value at every integer assignment."""
    form = _read(d)
    if isinstance(form, int):
        return sympy.Integer(form)
    total = sympy.Integer(0)
    for c, mono in form:
        term = sympy.Integer(c)
        for atom, e in mono:
            if isinstance(atom, Sym):
                base = sympy_symbol(atom)
            else:
                assert atom is not None  # an atom is a symbol or an operation
                kind, args = atom
                base = _KINDS[kind](*(to_sympy(x) for x in args))
            term = term * base ** e
        total = total + term
    return total


def from_sympy(e: Any, symbols: Mapping[str, Sym | Dim] | None = None) -> Dim:
    """The onnxsym dim of a sympy integer expression.

    ``symbols`` maps a symbol's name to the dim it stands for; otherwise a sympy
    symbol made by :func:`to_sympy` becomes its onnxsym symbol again, and any other
    one an onnxsym symbol of that name whose range its assumptions give
    (``positive``: from 1; ``nonnegative``: from 0; else all of int64).
    """
    return _from(sympy.sympify(e), symbols or {})


def _symbol(s: sympy.Symbol, symbols: Mapping[str, Sym | Dim]) -> Dim:
    got = symbols.get(s.name)
    if isinstance(got, Sym):
        return dims.expr_of(got)
    if got is not None:
        return got
    made = _made.get(s)
    if made is not None:
        return dims.expr_of(made)
    if s.is_integer is False:
        raise ValueError(f"sympy symbol {s} is not an integer")
    if s.name in dims.current().ranges:  # a symbol of the current environment: its range is known there
        return dims.expr_of(Sym(s.name))
    lo = 1 if s.is_positive else 0 if s.is_nonnegative else -dims.INT64_MAX
    hi = -1 if s.is_negative else 0 if s.is_nonpositive else dims.INT64_MAX
    return dims.sym(s.name, lo, hi)


def _ratio(arg: Any, symbols: Mapping[str, Sym | Dim]) -> tuple[Dim, Dim]:
    """``arg`` as a numerator and a denominator, both integer expressions."""
    num, den = sympy.fraction(sympy.together(arg))
    return _from(num, symbols), _from(den, symbols)


def _from(e: Any, symbols: Mapping[str, Sym | Dim]) -> Dim:
    if e.is_Integer:
        return int(e)
    if e.is_Symbol:
        return _symbol(e, symbols)
    if e.is_Add:
        return structure.total([_from(a, symbols) for a in e.args])  # one canonical form for the whole sum
    if e.is_Mul:
        out: Dim = 1
        for a in e.args:
            if a.is_Rational and not a.is_Integer:
                raise ValueError(f"{e}: not an integer expression (the factor {a}); write floor() around a ratio")
            out = dims.mul(out, _from(a, symbols))
        return out
    if e.is_Pow:
        base, ex = e.args
        if ex.is_Integer and int(ex) >= 0:
            return _from(base, symbols) ** int(ex)
        raise ValueError(f"{e}: only non-negative integer powers are dims")
    if isinstance(e, sympy.floor):
        return dims.floordiv(*_ratio(e.args[0], symbols))
    if isinstance(e, sympy.ceiling):
        n, d = _ratio(e.args[0], symbols)
        return dims.neg(dims.floordiv(dims.neg(n), d))
    if isinstance(e, sympy.Mod):
        return dims.mod(_from(e.args[0], symbols), _from(e.args[1], symbols))
    if isinstance(e, (sympy.Max, sympy.Min)):
        args = [_from(a, symbols) for a in e.args]
        if all(isinstance(a, int) for a in args):
            return max(args) if isinstance(e, sympy.Max) else min(args)
        return dims.dmax(*args) if isinstance(e, sympy.Max) else dims.dmin(*args)
    raise ValueError(f"{e}: not an onnxsym dim (integers, symbols, + - *, floor, ceiling, Mod, Max, Min)")


# --------------------------------------------------------------------------- what users give infer()


def relation_texts(rel: Any) -> tuple[str, str]:
    """A sympy ``Eq(lhs, rhs)`` as the two texts of an assumption."""
    if not isinstance(rel, sympy.Equality):
        raise ValueError(f"{rel}: an assumption must be an equality (sympy.Eq)")
    return str(from_sympy(rel.lhs)), str(from_sympy(rel.rhs))


def _bound(x: Any, infinite: int) -> int:
    """An interval end as an int; an infinite end (sympy ``oo``, torch's ``int_oo``) is ``infinite``."""
    if isinstance(x, int):
        return x
    try:
        v = sympy.sympify(x)
    except (sympy.SympifyError, TypeError):
        v = None
    if v is not None and v.is_Integer:
        return int(v)
    if v is not None and v.is_infinite or str(x) in ("oo", "int_oo", "-oo", "-int_oo", "inf", "-inf"):
        return infinite
    raise ValueError(f"{x!r}: not an integer bound")


def interval(v: Any) -> tuple[int, int]:
    """``(lo, hi)`` of a sympy ``Interval`` (open ends rounded inwards) or of an object
    with ``lower``/``upper`` (torch.export's ``range_constraints`` values)."""
    if isinstance(v, sympy.Interval):
        lo = _bound(sympy.floor(v.start) if v.start.is_finite else v.start, 0)
        hi = _bound(sympy.ceiling(v.end) if v.end.is_finite else v.end, dims.INT64_MAX)
        if v.left_open and v.start.is_finite and v.start == lo:
            lo += 1
        elif v.start.is_finite and v.start != lo:
            lo += 1  # a fractional start: the first integer above it
        if v.right_open and v.end.is_finite and v.end == hi:
            hi -= 1
        elif v.end.is_finite and v.end != hi:
            hi -= 1
        return lo, hi
    return _bound(v.lower, 0), _bound(v.upper, dims.INT64_MAX)


def sympy_ranges(ranges: Mapping[Any, Any]) -> dict[str, tuple[int, ...]]:
    """``ranges`` with sympy-symbol keys as names and intervals as ``(lo, hi)`` (a pair given as a
    tuple or list is passed on as it is: the caller checks it)."""
    out: dict[str, tuple[int, ...]] = {}
    for k, v in ranges.items():
        name = k.name if isinstance(k, sympy.Symbol) else str(k)
        out[name] = tuple(v) if isinstance(v, (tuple, list)) else interval(v)
    return out


def exported_program_ranges(ep: Any, model: onnx.ModelProto) -> dict[str, tuple[int, int]]:
    """The ranges of a torch ``ExportedProgram`` (duck-typed: ``range_constraints``,
    ``graph_signature.user_inputs``, placeholder nodes whose ``meta["val"].shape`` holds the
    symbols) by the names the ONNX model gives those dims: torch numbers its symbols
    (``s77``), the ONNX export names them (``batch``); the user inputs and the model's graph
    inputs correspond in order, dim by dim. Two symbols on one name give their intersection."""
    by_symbol = {str(k): interval(v) for k, v in ep.range_constraints.items()}
    user = list(ep.graph_signature.user_inputs)
    shapes = {n.name: n.meta["val"].shape for n in ep.graph.nodes
              if n.op == "placeholder" and n.name in user and "val" in n.meta}
    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    out: dict[str, tuple[int, int]] = {}
    for name, inp in zip(user, inputs):
        for d, proto in zip(shapes.get(name, ()), inp.type.tensor_type.shape.dim):
            r = by_symbol.get(str(d))
            if r is None or not proto.dim_param.isidentifier():
                continue
            lo, hi = out.get(proto.dim_param, (0, dims.INT64_MAX))
            out[proto.dim_param] = (max(lo, r[0]), min(hi, r[1]))
    return out
