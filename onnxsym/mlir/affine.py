"""A dim as an MLIR affine expression over symbols ``s0, s1, ...``.

Affine here means what an ``affine_map`` may hold: sums of symbols times
constants, plus ``floordiv`` and ``mod`` by a positive constant. Anything else
(``max``, ``min``, a product of symbols, division by a symbol) is an opaque
unit: the caller gives it a symbol of its own, and it enters the expression as
that symbol.
"""

from __future__ import annotations

from typing import Callable

from .. import dims
from ..dims import Dim, Expr, Sym

# operand(dim) -> position of the symbol standing for ``dim`` (a root symbol or an opaque unit)
Operand = Callable[[Dim], int]


def is_opaque_unit(d: Dim) -> bool:
    """Whether ``d`` is one term that no affine map can express (its own symbol)."""
    if not isinstance(d, Expr) or len(d.terms) != 1:
        return False
    mono, coeff = d.terms[0]
    return coeff == 1 and not _affine_mono(mono)


def _affine_mono(mono) -> bool:
    if len(mono) != 1 or mono[0][1] != 1:
        return False
    atom = mono[0][0]
    if isinstance(atom, Sym):
        return True
    return atom.kind in ("floordiv", "mod") and isinstance(atom.args[1], int) and atom.args[1] > 0


def affine_text(d: Dim, operand: Operand) -> str:
    """The MLIR affine expression of ``d``; ``operand`` numbers its symbols."""
    if isinstance(d, int):
        return str(d)
    parts = []
    const = 0
    for mono, c in d.terms:
        if mono == ():
            const = c
            continue
        parts.append((_mono_text(mono, operand), c))
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


def _mono_text(mono, operand: Operand) -> str:
    if not _affine_mono(mono):
        unit = dims.Expr(((mono, 1),))
        return f"s{operand(unit)}"
    atom = mono[0][0]
    if isinstance(atom, Sym):
        return f"s{operand(dims.expr_of(atom))}"
    num, den = atom.args
    op = "floordiv" if atom.kind == "floordiv" else "mod"
    return f"{_wrap(affine_text(num, operand))} {op} {den}"


def _wrap(text: str) -> str:
    simple = all(ch.isalnum() for ch in text)
    return text if simple else f"({text})"


def affine_map(symbol_count: int, results) -> str:
    """``affine_map<()[s0, s1] -> (r0, r1)>``."""
    syms = ", ".join(f"s{i}" for i in range(symbol_count))
    return f"affine_map<()[{syms}] -> ({', '.join(results)})>"
