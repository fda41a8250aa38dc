"""The Dim algebra: a dimension is a plain ``int`` or an :class:`Expr`.

An ``Expr`` is kept in one canonical form, a polynomial with integer coefficients
whose variables ("atoms") are symbols or non-polynomial terms (floor division,
max, min) over canonical expressions. Every ``Expr`` is interned: two
expressions with the same canonical form are the same object, so equality and
hashing are identity operations, as cheap as for ints.

``==`` between dims means "provably the same value" (structural equality of
canonical forms). It never means "possibly equal". Ordering comparisons
(``<``, ``<=``, ...) answer from interval ranges and raise
:class:`UndecidableError` when the ranges cannot decide; ``try_*`` variants
return ``None`` instead. Converting a symbolic Expr to ``int`` raises
:class:`SymbolicDimError`: a rule that needs a concrete number does not support
dynamic shapes, and must say so.

A symbol is its name; its range is the current :class:`RangeEnv`'s (``env``: ranges by name
and every cache that depends on them; ``with env:`` makes one current).

The modules, each built on the ones before it: ``env``, ``expr`` (the representation and
polynomial arithmetic), ``ranges`` (intervals and the comparisons they decide),
``quasi`` (quasi-affine dims: equality decided, one form per function of one symbol),
``division`` (floor division and modulo), ``minmax``, ``rewrite`` (substitution), and
``structure``: the API for code outside the algebra (terms, operations, coefficients).
"""

from . import division as _division
from . import quasi as _quasi
from . import ranges as _ranges
from . import structure
from .division import ceil_div, floordiv, mod
from .env import DEFAULT as DEFAULT_ENV
from .env import INT64_MAX, MixedEnvironments, RangeEnv, current
from .expr import (
    DEFAULT_LO,
    FRESH_LO,
    Atom,
    Dim,
    Expr,
    Sym,
    SymbolicDimError,
    TooLarge,
    UndecidableError,
    add,
    as_sym,
    atoms,
    evaluate,
    expr_of,
    free_symbols,
    is_static,
    later,
    mul,
    neg,
    sub,
    sym,
    symbol,
)
from .minmax import dmax, dmin
from .ranges import eq_verdict, known_ne, lower_bound, range_of, same, try_eq, try_le, try_lt
from .rewrite import rebuild, substitute

# Expr's operators that the layers above the representation define.
later.floordiv = _division.floordiv
later.mod = _division.mod
later.try_lt = _ranges.try_lt
later.try_le = _ranges.try_le
later.normalize = _quasi.normalize



# and the printer's and the sympy bridge's, which load on first use (sympy is slow to import)
def _format_expr(e: Expr) -> str:
    from .text import format_expr
    return format_expr(e)


def _to_sympy(d: Dim) -> object:
    from .sympy_bridge import to_sympy
    return to_sympy(d)


later.format = _format_expr
later.to_sympy = _to_sympy

__all__ = [
    "DEFAULT_ENV", "DEFAULT_LO", "FRESH_LO", "RangeEnv", "MixedEnvironments", "current", "INT64_MAX", "Atom", "Dim",
    "Expr", "Sym",
    "SymbolicDimError", "TooLarge", "UndecidableError",
    "add", "as_sym", "atoms", "ceil_div", "dmax", "dmin", "evaluate", "expr_of", "floordiv", "free_symbols",
    "eq_verdict", "is_static", "known_ne", "later", "lower_bound", "mod", "mul", "neg", "range_of", "rebuild", "same", "sub",
    "substitute", "sym",
    "symbol", "try_eq",
    "try_le", "try_lt", "structure",
]
