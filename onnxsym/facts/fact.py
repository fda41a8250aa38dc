"""A fact inference records about the sizes: ``lhs rel rhs``, why it is there (its origin),
where it was recorded (its place, with the branch conditions it holds under) and a reason.

These are types, not text: the domain, the writer and the commands read the relation,
the origin and the place, never a message.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum

from .. import dims
from ..dims import Dim


class Rel(Enum):
    """A comparison of two dims. A constraint is ``==``, ``<=``, ``>=`` or ``!=``; a branch
    condition (an If's comparison of shape values) may also be ``<`` or ``>``."""

    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="

    def holds(self, a: int, b: int) -> bool:
        return _TEST[self](a, b)

    @property
    def negated(self) -> Rel:
        return _NEGATED[self]

    @property
    def swapped(self) -> Rel:
        """The relation with its sides exchanged: ``a < b`` is ``b > a``."""
        return _SWAPPED[self]

    def __str__(self) -> str:
        return self.value


_TEST: dict[Rel, Callable[[int, int], bool]] = {
    Rel.EQ: operator.eq, Rel.NE: operator.ne, Rel.LT: operator.lt, Rel.LE: operator.le, Rel.GT: operator.gt, Rel.GE: operator.ge}
_NEGATED = {Rel.EQ: Rel.NE, Rel.NE: Rel.EQ, Rel.LT: Rel.GE, Rel.GE: Rel.LT, Rel.LE: Rel.GT, Rel.GT: Rel.LE}
_SWAPPED = {Rel.EQ: Rel.EQ, Rel.NE: Rel.NE, Rel.LT: Rel.GT, Rel.GT: Rel.LT, Rel.LE: Rel.GE, Rel.GE: Rel.LE}


class Origin(Enum):
    """Why a constraint was recorded."""

    NEEDED = "needed"  # a node needs it to run (MatMul's inner dims agree; a Conv's input at least its kernel)
    EXACT_WITHIN = "exact_within"  # a bound within which a node's result is exact (float32 sizes)
    DEFAULT_RANGE = "default_range"  # a decision taken only because a symbol's default range starts at 1
    USER = "user"  # given with --assume
    BRANCH = "branch"  # an If runs only the branch that needs it (see onnxsym.facts.branching)

    @property
    def assumed(self) -> bool:
        """onnxsym relies on it without knowing that a node fails outside it."""
        return self in (Origin.EXACT_WITHIN, Origin.DEFAULT_RANGE)


@dataclass(frozen=True)
class Relation:
    """``lhs op rhs`` over dims: an If's condition on the sizes, or what a branch needs."""

    op: Rel
    lhs: Dim
    rhs: Dim

    def negated(self) -> Relation:
        return Relation(self.op.negated, self.lhs, self.rhs)

    def holds(self, bindings: Mapping[str, int]) -> bool:
        return self.op.holds(dims.evaluate(self.lhs, bindings), dims.evaluate(self.rhs, bindings))

    def map(self, f: Callable[[Dim], Dim]) -> Relation:
        """The relation with ``f`` applied to both sides."""
        return Relation(self.op, f(self.lhs), f(self.rhs))

    def __str__(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"


@dataclass(frozen=True)
class Guard:
    """What must hold for a subgraph to run: the choice ``key`` has the value ``value``
    (an If's branch: its condition is ``value``; a body: it runs at all). ``key`` names the
    choice, so two Ifs on one condition value choose alike and an If's branches exclude
    each other. ``relation``: when the choice is a condition on the sizes, the relation
    that holds exactly when ``key`` is ``value``; ``feed``: graph-input values that make it
    hold (name, value), when the choice is a comparison of a data input with a constant, and
    ``feed_not`` those that make it fail."""

    key: tuple[str, ...]
    value: bool
    text: str  # "sr == 16000", "the body of Loop node 'loop' runs"
    node: str
    op_type: str
    relation: Relation | None = None
    feed: tuple[tuple[str, object], ...] = ()
    feed_not: tuple[tuple[str, object], ...] = ()

    def holds(self, bindings: Mapping[str, int]) -> bool | None:
        """Whether it holds at ``bindings`` (sizes), or None when the sizes do not decide it."""
        return None if self.relation is None else self.relation.holds(bindings)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Place:
    """Where a fact was recorded: the subgraphs being inferred (outermost first, each as
    "If node 'x'"; empty: the main graph), the node and its op type, and ``when``: the
    guards that must hold for that subgraph to run (empty: it holds wherever the model runs)."""

    node: str
    op_type: str
    graph: tuple[str, ...] = ()
    when: tuple[Guard, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.op_type} node '{self.node}'" if self.op_type else self.node

    def __str__(self) -> str:
        return self.where


def _decide(rel: Rel, a: Dim, b: Dim) -> bool | None:
    if rel is Rel.EQ or rel is Rel.NE:
        eq = dims.try_eq(a, b)
        return eq if eq is None or rel is Rel.EQ else not eq
    if rel is Rel.GE or rel is Rel.GT:
        rel, a, b = rel.swapped, b, a
    if rel is Rel.LT:
        a = dims.add(a, 1)
    return dims.try_le(a, b)


# The place of what the user gives (--assume).
USER = Place("--assume", "")


@dataclass(frozen=True)
class Constraint:
    """``lhs rel rhs``, recorded for ``origin`` at ``place`` because of ``reason``."""

    rel: Rel
    lhs: Dim
    rhs: Dim
    origin: Origin
    place: Place
    reason: str
    # For what a node needs that narrowed the ranges: the ranges of lhs's symbols before it did,
    # (name, lo, hi) each. The condition is stated over those (under the narrowed ones it holds trivially).
    before: tuple[tuple[str, int, int], ...] = field(default=(), compare=False)

    @property
    def node(self) -> str:
        return self.place.node

    @property
    def op_type(self) -> str:
        return self.place.op_type

    @property
    def when(self) -> tuple[Guard, ...]:
        return self.place.when

    @property
    def where(self) -> str:
        return self.place.where

    @property
    def lhs_name(self) -> str:
        """The text of ``lhs``: for a default-range decision, the symbol (or the sum of symbols) assumed >= 1."""
        return str(self.lhs)

    def holds(self, bindings: Mapping[str, int]) -> bool:
        return self.rel.holds(dims.evaluate(self.lhs, bindings), dims.evaluate(self.rhs, bindings))

    def proven(self) -> bool | None:
        """Whether the current ranges prove it (True), refute it (False), or neither (None)."""
        return _decide(self.rel, self.lhs, self.rhs)

    def at(self, place: Place) -> Constraint:
        """The same fact recorded at ``place``."""
        return replace(self, place=place)

    def __str__(self) -> str:
        return f"{self.lhs} {self.rel} {self.rhs}"
