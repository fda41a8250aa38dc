"""The few structural reads of a dim the domain needs, in one place, over
``onnxsym.dims.structure``. An atom here is a ``Sym``, or a dim that is one operation.
"""

from __future__ import annotations

from .. import dims
from ..dims import Dim, Sym, structure


def _atom(f: Dim):
    return dims.as_sym(f) or f


def monomials(d: Dim) -> list[tuple[tuple[tuple[object, int], ...], int]]:
    """``d`` as ``[(((atom, exponent), ...), coefficient), ...]``; the constant has no atoms."""
    return [(tuple((_atom(f), e) for f, e in factors), c) for c, factors in structure.terms(d)]


def _operation(atom: Dim) -> tuple[str, tuple[Dim, ...]]:
    op = structure.operation(atom)
    if op is None:  # an atom that is not a Sym is one operation
        raise TypeError(f"{atom!r} is not an atom")
    return op


def kind(atom) -> str:
    """``sym``, ``floordiv``, ``max`` or ``min`` (a remainder is ``x - c*(x//c)``)."""
    return "sym" if isinstance(atom, Sym) else _operation(atom)[0]


def args(atom) -> tuple:
    return () if isinstance(atom, Sym) else _operation(atom)[1]


def as_dim(atom) -> Dim:
    """The dim that is ``atom`` alone."""
    return dims.expr_of(atom) if isinstance(atom, Sym) else atom


def atom_range(atom) -> tuple[int, int]:
    return (atom.lo, atom.hi) if isinstance(atom, Sym) else dims.range_of(atom)


def symbols_of(atom) -> frozenset:
    return dims.free_symbols(as_dim(atom))


def lone_atom(d: Dim) -> object | None:
    """The atom ``d`` is, when ``d`` is one atom with coefficient and exponent 1."""
    return _atom(d) if structure.is_atom(d) else None


def constant(d: Dim) -> int:
    """The constant term of ``d``."""
    return sum(k for m, k in monomials(d) if not m)


_compiled: dict = {}


def compiled(d: Dim, syms: tuple[Sym, ...]):
    """``d`` as a Python function of the values of ``syms`` (in that order): the same
    value as ``dims.evaluate``, for the many evaluations a residue analysis makes."""
    key = (d, syms)
    f = _compiled.get(key)
    if f is None:
        names = {s: f"v{i}" for i, s in enumerate(syms)}
        f = _compiled[key] = eval(f"lambda {', '.join(names.values()) or '_'}: {_source(d, names)}")  # noqa: S307
    return f


def _source(d: Dim, names) -> str:
    parts = []
    for m, k in monomials(d):
        factors = [str(k)] + [f"{_atom_source(a, names)}**{e}" if e > 1 else _atom_source(a, names) for a, e in m]
        parts.append("*".join(factors))
    return "(" + (" + ".join(parts) or "0") + ")"


def _atom_source(atom, names) -> str:
    k = kind(atom)
    if k == "sym":
        return names[atom]
    xs = [_source(x, names) for x in args(atom)]
    if k == "floordiv":
        return f"({xs[0]}//{xs[1]})"
    return f"{k}({', '.join(xs)})"
