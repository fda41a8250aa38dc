"""The constraints of one inference: recorded, equalities solved where linear, checked for contradictions.

A constraint is a typed fact (:class:`onnxsym.facts.fact.Constraint`: a relation, an
origin, a place). A node that is only valid when two dims are equal has ``require(a, b, ...)``
recorded; one that needs ``d >= lo``, ``at_least``, which also narrows the ranges.
When one side of an equality minus the other is linear in some symbol (coefficient +-1), that symbol is eliminated:
it becomes *derived*, defined over the remaining symbols, and every later dim is
rewritten through :meth:`resolve` (a union-find whose classes are kept flat).
Which symbol is eliminated: a fresh one before a graph input, and among graph
inputs the one declared last; so the representative of
a class is a graph-input symbol where there is one. A constraint that provably
cannot hold raises :class:`ConstraintContradiction`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Set

from .. import dims
from ..dims import Dim, Sym, structure
from ..errors import ShapeContradiction
from .fact import Constraint, Guard, Origin, Place, Rel
from .narrowing import Unreachable, implied_ranges


class ConstraintContradiction(ShapeContradiction):
    """Two dims must be equal (or ordered) and provably are not. ``message`` names the nodes
    and the values; ``lhs``, ``rhs``: the sides; ``nodes``: every node involved, the one that
    required it first; ``why``: why it can never hold."""

    def __init__(self, message: str, lhs: Dim, rhs: Dim, nodes: tuple[str, ...], why: str, *,
                 node: str = "", op_type: str = "", domain: str = "", context: str = ""):
        self.lhs, self.rhs, self.nodes, self.why = lhs, rhs, nodes, why
        super().__init__(message, node=node, op_type=op_type, domain=domain, context=context)

    def text(self) -> str:
        return self.message + (f"; {self.context}" if self.context else "")  # (the message names the node)

    def at(self, node: str, op_type: str, domain: str, context: str) -> ConstraintContradiction:
        return ConstraintContradiction(str(self), self.lhs, self.rhs, self.nodes, self.why,
                                       node=node, op_type=op_type, domain=domain, context=context)


_Pair = tuple[frozenset[Dim], tuple[Guard, ...]]  # an equality's sides, under the guards it holds in


class Constraints:
    """The recorded constraints of one inference and the substitution they imply.

    ``rank(sym)`` orders symbols for elimination: the symbol with the highest rank
    is eliminated first (fresh > graph inputs declared later).
    """

    def __init__(self, rank: Callable[[Sym], tuple[int, ...]]) -> None:
        self.items: list[Constraint] = []
        self.derived: dict[Sym, Dim] = {}
        self.because: dict[Sym, Constraint] = {}
        self._rank = rank
        self._cache: dict[Dim, Dim] = {}
        self.version = 0  # counts the changes of derived (what resolve gives holds until the next)
        self._unsolved: set[_Pair] = set()

    def resolve(self, d: Dim) -> Dim:
        """``d`` rewritten over the representatives."""
        if isinstance(d, int) or not self.derived:
            return d
        r = self._cache.get(d)
        if r is None:
            r = dims.substitute(d, self.derived)
            self._cache[d] = r
        return r

    def require(self, a: Dim, b: Dim, place: Place, reason: str, origin: Origin = Origin.NEEDED,
                solve: bool = True, only: Set[Sym] | None = None) -> None:
        """Record ``a == b``; raise if it provably cannot hold. ``solve=False`` records
        it without rewriting any symbol; ``only`` restricts which symbols it may eliminate.
        It holds only where the place's guards do (a subgraph that may not run)."""
        ra, rb = self.resolve(a), self.resolve(b)
        if ra is rb or (isinstance(ra, int) and isinstance(rb, int) and ra == rb):
            return
        c = Constraint(Rel.EQ, a, b, origin, place, reason)
        eq = dims.try_eq(ra, rb)
        if eq is True:
            return  # the ranges prove it: nothing to assume
        if eq is False:
            self._contradiction(c, ra, rb)
        pair = (frozenset((ra, rb)), place.when)
        if pair in self._unsolved:
            return  # the same relation, already recorded
        self.items.append(c)
        self._unsolved.add(pair)
        if solve:
            self._solve(c, ra, rb, only)

    def at_least(self, d: Dim, lo: int, place: Place, reason: str, origin: Origin = Origin.NEEDED,
                 narrow: bool = True) -> None:
        """Record that the node at ``place`` runs only when ``d >= lo`` (unless the ranges prove
        it) and, with ``narrow``, narrow the ranges of ``d``'s symbols to the values that allow it
        (``(width - 1)//4 + 1 >= 8``: ``width`` in ``[29, ...]``). Raise if it cannot hold."""
        rd = self.resolve(d)
        if dims.try_le(lo, rd) is True:
            return
        c = Constraint(Rel.GE, d, lo, origin, place, reason,
                       before=tuple((s.name, s.lo, s.hi) for s in sorted(dims.free_symbols(rd), key=lambda s: s.name)))
        try:
            ranges = implied_ranges(rd, lo)
        except Unreachable as exc:
            self._contradiction(c, rd, lo, f"it can never hold: {exc}")
        if c not in self.items:
            self.items.append(c)
        if narrow and ranges:
            for s, (a, b) in ranges.items():
                dims.current().narrow(s.name, a, b)
            self._rewrite({s: dims.expr_of(s) for s in ranges}, c, narrowed=ranges)

    def add(self, c: Constraint) -> None:
        """Record ``c`` as it stands (nothing solved, no range narrowed), once."""
        if c not in self.items:
            self.items.append(c)

    def mark(self) -> tuple[int, set[_Pair]]:
        """A point to go back to with :meth:`undo` (a trial inference's records are dropped)."""
        return len(self.items), set(self._unsolved)

    def undo(self, mark: tuple[int, set[_Pair]]) -> list[Constraint]:
        """Forget what was recorded since ``mark`` (nothing solved: a trial runs in a subgraph);
        returns it."""
        n, unsolved = mark
        made = self.items[n:]
        del self.items[n:]
        self._unsolved = unsolved
        return made

    # -- solving ----------------------------------------------------------------
    def _solve(self, c: Constraint, ra: Dim, rb: Dim, only: Set[Sym] | None = None) -> None:
        diff = structure.without_positive_factor(dims.sub(ra, rb))  # 32*b*seq == 32*b*n is seq == n
        best = None
        for s, k, rest in linear_symbols(diff):
            if only is not None and s not in only:
                continue
            if best is None or self._rank(s) > self._rank(best[0]):
                best = (s, k, rest)
        if best is None:
            return  # not linear in any symbol: recorded, not solved
        s, k, rest = best
        value = dims.neg(rest) if k == 1 else rest  # k*s + rest == 0
        lo, hi = dims.range_of(value)
        if hi < s.lo or lo > s.hi:
            self._contradiction(c, ra, rb, f"{s.name} in [{s.lo}, {s.hi}] cannot be {value}")
        update = {s: value}
        other = dims.as_sym(value)
        if other is not None and (other.lo < s.lo or other.hi > s.hi):
            # Two symbols unified: the representative takes the intersection of the ranges.
            dims.current().narrow(other.name, s.lo, s.hi)
            self._rewrite({other: value, s: value}, c, narrowed=(other,))
            return
        self._rewrite(update, c)

    def _rewrite(self, update: dict[Sym, Dim], c: Constraint, narrowed: Collection[Sym] = ()) -> None:
        """Make each symbol of ``update`` derived, because of ``c``. A symbol of ``narrowed`` (its
        range narrowed) maps to itself: every dim over it is built again, under the new range."""
        self.derived = {k2: dims.substitute(v, update) for k2, v in self.derived.items()}
        for k2, v in update.items():
            if v is not dims.expr_of(k2) or k2 in narrowed:
                self.derived[k2] = v
                self.because.setdefault(k2, c)
        self._cache.clear()
        self.version += 1

    def given(self, eliminated: Iterable[Sym], lhs: Dim, rhs: Dim) -> list[Constraint]:
        """The constraints that eliminated any of ``eliminated`` in favour of a symbol of ``lhs == rhs``."""
        about = dims.free_symbols(lhs) | dims.free_symbols(rhs)
        out: list[Constraint] = []
        for s in sorted(eliminated, key=lambda s: s.name):
            prior = self.because.get(s)
            if prior is not None and prior not in out and (s in about or dims.free_symbols(self.derived[s]) & about):
                out.append(prior)
        return out

    def _contradiction(self, c: Constraint, ra: Dim, rb: Dim, why: str = "") -> None:
        earlier = self.given(dims.free_symbols(c.lhs) | dims.free_symbols(c.rhs), c.lhs, c.rhs)
        msg = f"{c.where} requires {c} ({c.reason})"
        if ra is not c.lhs or rb is not c.rhs:
            msg += f", that is {Constraint(c.rel, ra, rb, c.origin, c.place, c.reason)}"
        if earlier:
            msg += ", given " + "; ".join(f"{p} from {p.where}" for p in earlier)
        why = why or "these can never be equal"
        msg += ": " + why
        nodes = tuple(dict.fromkeys([c.node] + [p.node for p in earlier]))
        raise ConstraintContradiction(msg, c.lhs, c.rhs, nodes, why)

    def explain(self, exc: ConstraintContradiction, eliminated: Iterable[Sym]) -> ConstraintContradiction:
        """``exc`` naming also the constraints that rewrote a node's inputs (``eliminated`` symbols)."""
        earlier = [p for p in self.given(eliminated, exc.lhs, exc.rhs) if p.node not in exc.nodes]
        if not earlier:
            return exc
        msg = str(exc) + "; its inputs were rewritten by " + "; ".join(f"{p} from {p.where}" for p in earlier)
        return ConstraintContradiction(msg, exc.lhs, exc.rhs, exc.nodes + tuple(p.node for p in earlier), exc.why)

    # -- reporting --------------------------------------------------------------
    def table(self) -> dict[str, str]:
        """Derived symbol name -> its definition text."""
        return {s.name: str(v) for s, v in sorted(self.derived.items(), key=lambda kv: kv[0].name)}


def linear_symbols(diff: Dim) -> Iterator[tuple[Sym, int, Dim]]:
    """Each symbol ``s`` with ``diff == k*s + rest`` (``k`` is +-1, ``s`` not in ``rest``)."""
    for k, factors in structure.terms(diff):
        s = dims.as_sym(factors[0][0]) if len(factors) == 1 and factors[0][1] == 1 else None
        if s is None or abs(k) != 1:
            continue
        rest = dims.sub(diff, dims.mul(k, factors[0][0]))
        if s not in dims.free_symbols(rest):
            yield s, k, rest
