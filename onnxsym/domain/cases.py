"""A disjunction of equalities over min and max, split on the cases of its mins and maxes
into linear pieces (issue 22's Whisper position table: the Add of ``min(64, past + seq) -
min(64, past)`` rows against ``seq`` runs where ``past + seq <= 64``, or ``seq == 1``, or
``past == 63``).

Each min (max) picks one of its arguments, the one at most (at least) the others; under
that choice every side is linear. The condition is the union, over the choices and the
alternatives, of (the choice's inequalities and the alternative's equality). Each piece is
simplified exactly: an equality solved for a symbol of coefficient +-1 is substituted into
the rest, a relation the ranges prove is dropped, one they refute drops the piece, a relation
another of the piece implies (their difference has a sign the ranges prove) is dropped; then a
piece another piece contains is dropped. Nothing is approximated: what is left is the same set.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from .. import dims
from ..dims import Dim, Sym
from . import structure as st

# a relation: (rel, lhs, rhs), rel "<=" or "=="; a piece: the relations that all hold
Relation = tuple[str, Dim, Dim]
Piece = tuple[Relation, ...]

MAX_ATOMS = 3


def _minmax_atoms(d: Dim, out: list) -> None:
    for factors, _ in st.monomials(d):
        for atom, _e in factors:
            if st.kind(atom) in ("min", "max") and atom not in out:
                out.append(atom)


def _linear(d: Dim) -> bool:
    return all(len(m) <= 1 and (not m or (m[0][1] == 1 and st.kind(m[0][0]) == "sym")) for m, _ in st.monomials(d))


def split(alts: Sequence[tuple[Dim, Dim]]) -> list[Piece] | None:
    """``any(a == b for a, b in alts)`` as linear pieces, or None where it has no min or max,
    too many, or a side that is not linear under the cases."""
    atoms: list = []
    for a, b in alts:
        _minmax_atoms(a, atoms)
        _minmax_atoms(b, atoms)
    if not atoms or len(atoms) > MAX_ATOMS or not all(_linear(x) for atom in atoms for x in st.args(atom)):
        return None
    pieces: list[Piece] = []
    for a, b in alts:
        own: list = []  # split on the atoms of this alternative only
        _minmax_atoms(a, own)
        _minmax_atoms(b, own)
        for choice in itertools.product(*(range(len(st.args(atom))) for atom in own)):
            region: list[Relation] = []
            mapping = {}
            for atom, j in zip(own, choice):
                picked = st.args(atom)[j]
                for k, other in enumerate(st.args(atom)):
                    if k != j:
                        region.append(("<=", picked, other) if st.kind(atom) == "min" else ("<=", other, picked))
                mapping[atom] = picked
            a2, b2 = _replaced(a, mapping), _replaced(b, mapping)
            if a2 is None or b2 is None or not _linear(a2) or not _linear(b2):
                return None
            piece = _simplified(region + [("==", a2, b2)])
            if piece is not None:
                pieces.append(piece)
    return _union(pieces)


def _replaced(d: Dim, mapping) -> Dim | None:
    """``d`` with each min/max atom replaced by its picked argument."""
    out: Dim = 0
    for factors, c in st.monomials(d):
        term: Dim = c
        for atom, e in factors:
            base = mapping.get(atom, st.as_dim(atom))
            if e != 1 and atom in mapping:
                return None
            for _ in range(e):
                term = dims.mul(term, base)
        out = dims.add(out, term)
    return out


def _diff(r: Relation) -> Dim:
    return dims.sub(r[1], r[2])  # <= 0 or == 0


def _simplified(rels: list[Relation]) -> Piece | None:
    """The piece with an equality substituted and what the ranges or its other relations
    decide dropped; None when it cannot hold."""
    eq = next((r for r in rels if r[0] == "==" and _solvable(_diff(r)) is not None), None)
    if eq is not None:
        solved = _solvable(_diff(eq))
        assert solved is not None
        s, value = solved
        lo, hi = dims.range_of(value)
        if hi < s.lo or lo > s.hi:
            return None  # the symbol cannot take that value
        rest = _decided([(r[0], dims.substitute(r[1], {s: value}), dims.substitute(r[2], {s: value}))
                         for r in rels if r is not eq])
        if rest is None:
            return None
        rels = rest + [("==", dims.expr_of(s), value)]
    kept = _decided(rels)
    if kept is None:
        return None
    kept = [r for i, r in enumerate(kept) if not any(_implies(q, r) for j, q in enumerate(kept) if j != i and
                                                       (not _implies(r, q) or j < i))]
    return tuple(_moved(r) for r in kept)


def _solvable(diff: Dim) -> tuple[Sym, Dim] | None:
    """``(s, value)`` with ``diff == 0`` exactly when ``s == value`` (``s`` of coefficient +-1), or None."""
    for factors, c in st.monomials(diff):
        if len(factors) == 1 and factors[0][1] == 1 and isinstance(factors[0][0], Sym) and abs(c) == 1:
            s = factors[0][0]
            rest = dims.sub(diff, dims.mul(c, dims.expr_of(s)))
            if s not in dims.free_symbols(rest):
                return s, (dims.neg(rest) if c == 1 else rest)
    return None


def _decided(rels: list[Relation]) -> list[Relation] | None:
    out = []
    for r in rels:
        answer = dims.try_eq(r[1], r[2]) if r[0] == "==" else dims.try_le(r[1], r[2])
        if answer is False:
            return None
        if answer is None:
            out.append(r)
    return out


def _implies(q: Relation, r: Relation) -> bool:
    """``q`` implies ``r`` at every size the ranges allow: ``diff(r) <= diff(q)`` (<=) or the same (==)."""
    dq, dr = _diff(q), _diff(r)
    if r[0] == "==":
        return q[0] == "==" and dims.try_eq(dq, dr) is True
    if dims.try_le(dr, dq) is True:
        return True
    return q[0] == "==" and dims.try_le(dr, dims.neg(dq)) is True


def _moved(r: Relation) -> Relation:
    """The constant on the right (``past + seq <= 64``), and a symbol alone on the left of an equality."""
    diff = _diff(r)
    const = diff if isinstance(diff, int) else st.constant(diff)
    lhs = dims.sub(diff, const)
    if _negated(lhs):  # -past <= -64 reads 64 <= past
        return ("==", dims.neg(lhs), const) if r[0] == "==" else ("<=", const, dims.neg(lhs))
    return (r[0], lhs, dims.neg(const))


def _negated(d: Dim) -> bool:
    terms = st.monomials(d)
    return bool(terms) and all(c < 0 for _, c in terms)


def _contains(big: Piece, small: Piece) -> bool:
    """Every size of ``small`` is one of ``big``: each relation of ``big`` implied by one of ``small``."""
    return all(any(_implies(q, r) for q in small) for r in big) if big else True


def _union(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for p in pieces:
        if not p:
            return [()]  # a piece with no relation: it always holds
        if any(_contains(q, p) for q in out):
            continue
        out = [q for q in out if not _contains(p, q)] + [p]
    # the main case first: the pieces with an inequality, then by length
    return sorted(out, key=lambda p: (not any(r[0] == "<=" for r in p), len(p)))


def holds(pieces: Sequence[Piece], bindings) -> bool:
    def one(r: Relation) -> bool:
        a, b = dims.evaluate(r[1], bindings), dims.evaluate(r[2], bindings)
        return a <= b if r[0] == "<=" else a == b
    return any(all(one(r) for r in p) for p in pieces)


def text(pieces: Sequence[Piece]) -> str:
    words = [" and ".join(f"{r[1]} {r[0]} {r[2]}" for r in p) for p in pieces]
    return words[0] + (f" (or {' or '.join(words[1:])})" if len(words) > 1 else "")
