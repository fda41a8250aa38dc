"""A dim as an MLIR affine expression over symbols ``s0, s1, ...``.

Affine here means what an ``affine_map`` may hold: sums of symbols times
constants, plus ``floordiv`` by a positive constant (a remainder is
``n - c*(n floordiv c)``, the algebra's one form of it). Anything else
(``max``, ``min``, a product of symbols, division by a symbol) is an opaque
unit: the caller gives it a symbol of its own, and it enters the expression as
that symbol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import dims
from ..dims import Dim, structure

# operand(dim) -> position of the symbol standing for ``dim`` (a root symbol or an opaque unit)
Operand = Callable[[Dim], int]


def is_opaque_unit(d: Dim) -> bool:
    """Whether ``d`` is one term that no affine map can express (its own symbol)."""
    ts = structure.terms(d)
    return len(ts) == 1 and ts[0][0] == 1 and bool(ts[0][1]) and not _affine_factors(ts[0][1])


def _affine_factors(factors: tuple[structure.Factor, ...]) -> bool:
    if len(factors) != 1 or factors[0][1] != 1:
        return False
    f = factors[0][0]
    return dims.as_sym(f) is not None or _floordiv_by_constant(f) is not None


def _floordiv_by_constant(f: Dim) -> tuple[Dim, int] | None:
    """``(n, c)`` when ``f`` is ``n // c`` for a constant ``c > 0``."""
    op = structure.operation(f)
    if op is None or op[0] != "floordiv":
        return None
    num, den = op[1]
    return (num, den) if isinstance(den, int) and den > 0 else None


def affine_text(d: Dim, operand: Operand) -> str:
    """The MLIR affine expression of ``d``; ``operand`` numbers its symbols."""
    if isinstance(d, int):
        return str(d)
    parts: list[tuple[str | None, int]] = []
    const = 0
    for c, factors in structure.terms(d):
        if not factors:
            const = c
            continue
        parts.append((_factors_text(factors, operand), c))
    if const:
        parts.append((None, const))
    out = ""
    for base, c in parts:
        if base is None:
            term, neg = str(abs(c)), c < 0
        else:
            term = base if abs(c) == 1 else f"{_wrap(base)} * {abs(c)}"
            neg = c < 0
        if not out:
            out = f"-{_wrap(term)}" if neg else term
        else:
            out += f" - {term}" if neg else f" + {term}"
    return out


def _factors_text(factors: tuple[structure.Factor, ...], operand: Operand) -> str:
    if not _affine_factors(factors):
        return f"s{operand(structure.from_terms([(1, factors)]))}"
    f = factors[0][0]
    division = _floordiv_by_constant(f)
    if division is None:  # a symbol
        return f"s{operand(f)}"
    num, den = division
    return f"{_wrap(affine_text(num, operand))} floordiv {den}"


def _wrap(text: str) -> str:
    simple = all(ch.isalnum() for ch in text)
    return text if simple else f"({text})"


def affine_map(symbol_count: int, results: Sequence[str]) -> str:
    """``affine_map<()[s0, s1] -> (r0, r1)>``."""
    syms = ", ".join(f"s{i}" for i in range(symbol_count))
    return f"affine_map<()[{syms}] -> ({', '.join(results)})>"
