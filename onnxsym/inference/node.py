"""The view of one node that a rule sees: inputs as values, attributes as Python
values, and the means to make fresh symbols. No protobuf leaks through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import dims
from ..dims import Dim
from ..facts import branching, edges
from .provenance import Kind
from .values import Tensor, Value, unranked

_MISSING = object()


class Node:
    """One node being inferred.

    ``inputs[i]`` is the value of input ``i`` (``None`` for an omitted optional
    input), ``num_outputs`` how many outputs the node declares, ``opset`` the
    model's version of the node's domain.
    """

    __slots__ = ("op_type", "domain", "name", "opset", "inputs", "input_names",
                 "output_names", "_attrs", "_convert", "_engine", "index", "_cache")

    def __init__(self, op_type: str, domain: str, name: str, opset: int, inputs: list[Value | None],
                 input_names: Sequence[str], output_names: Sequence[str], attrs: dict,
                 convert: Callable[[Any], Any], engine, index: int):
        self.op_type = op_type
        self.domain = domain
        self.name = name
        self.opset = opset
        self.inputs = inputs
        self.input_names = input_names
        self.output_names = output_names
        self._attrs = attrs
        self._convert = convert
        self._engine = engine
        self.index = index
        self._cache: dict = {}

    @property
    def num_outputs(self) -> int:
        return len(self.output_names)

    def has_output(self, i: int) -> bool:
        return i < len(self.output_names) and self.output_names[i] != ""

    # -- attributes -----------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        """The attribute ``name`` as a Python value (int, float, str, list,
        numpy array for a tensor, a graph handle for a subgraph), or ``default``."""
        v = self._cache.get(name, _MISSING)
        if v is _MISSING:
            proto = self._attrs.get(name)
            v = default if proto is None else self._convert(proto)
            self._cache[name] = v
        return v

    def has_attr(self, name: str) -> bool:
        return name in self._attrs

    def graph_attribute(self, graph) -> tuple[str, int]:
        """Which of this node's graph attributes ``graph`` is (a rule passes the very object
        :meth:`attr` gave it): its name, and its index in a list of graphs (else -1)."""
        for name, v in self._cache.items():
            if v is graph:
                return name, -1
            if isinstance(v, list):
                for k, g in enumerate(v):
                    if g is graph:
                        return name, k
        return getattr(graph, "name", ""), -2  # not one of them: known by the graph's name

    # -- inputs ---------------------------------------------------------------
    def input(self, i: int) -> Value | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def tensor(self, i: int) -> Tensor | None:
        v = self.input(i)
        return v if isinstance(v, Tensor) else None

    def value(self, i: int) -> tuple | None:
        """The known elements of input ``i`` (row-major), or ``None``."""
        t = self.tensor(i)
        return None if t is None else t.value

    # -- unknowns ---------------------------------------------------------------
    def fresh(self, reason: str, output: int = 0, axis: int | None = None,
              lo: int = dims.FRESH_LO, hi: int = dims.INT64_MAX, kind: Kind = Kind.UNSUPPORTED) -> Dim:
        """A new symbol for a dim this rule cannot determine, recorded with why (and its
        kind: ``Kind.DATA_DEPENDENT`` where the size depends on tensor elements)."""
        return self._engine.fresh_symbol(self, output, axis, reason, lo, hi, kind)

    def fresh_shape(self, rank: int, reason: str, output: int = 0) -> tuple:
        return tuple(self.fresh(reason, output, axis) for axis in range(rank))

    def unknown_rank(self, reason: str, output: int = 0, dtype: int = 0,
                     kind: Kind = Kind.UNSUPPORTED) -> Tensor:
        """A tensor whose rank this rule cannot tell, recorded with why."""
        self._engine.record_unknown_rank(self, output, reason, kind)
        return unranked(dtype)

    def is_resolved(self, d: Dim) -> bool:
        """Whether ``d`` is an expression over the model's own symbols (no fresh symbol)."""
        return self._engine.is_resolved(d)

    def equalities(self) -> list[tuple[Dim, Dim]]:
        """The equalities ``a == b`` that nodes of the main graph need to run, so that hold in
        every run of the model (none under a guard, none a user's or a declaration's claim)."""
        cs = self._engine.constraints
        return [(cs.resolve(c.lhs), cs.resolve(c.rhs)) for c in cs.items
                if c.kind == "node" and not c.when]

    def assume(self, a: Dim, b: Dim, reason: str) -> None:
        """Record that this node is only valid when ``a == b``."""
        if a is b or (type(a) is int and a == b):
            return  # holds by itself (and leaves the rule's result reusable for identical nodes)
        self._engine.record_assumption(self, a, b, reason)

    def require_at_least(self, d: Dim, lo: int, reason: str) -> None:
        """Record that this node runs only when ``d >= lo`` (onnxruntime refuses it otherwise):
        the ranges of ``d``'s symbols narrow to the values that allow it."""
        if dims.try_le(lo, d) is True:
            return  # holds by itself (and leaves the rule's result reusable for identical nodes)
        self._engine.record_at_least(self, d, lo, reason)

    def assume_at_most(self, d: Dim, hi: int, reason: str) -> None:
        """Record that this node's result is exact only while ``d <= hi``: an assumption
        the report shows, for bounds no real model reaches (float32 size arithmetic)."""
        self._engine.record_bound(self, d, hi, reason)

    def record(self, c) -> None:
        """Record a bound or a ``>= 1`` decision (a ``Constraint``) that a trial made (see
        :meth:`try_graph`), rewritten to hold where its result is used; it keeps the node
        that made it."""
        self._engine.record_constraint(c)

    def decide(self, compute: Callable, args: Sequence[Any], what: Callable[[Any], str],
               output: int | None = None) -> Any:
        """``compute(*args)`` (free of side effects), recording where its answer holds only
        because a graph-input symbol is >= 1 by default: ``what(answer)`` says what was
        decided. With ``output``, the record goes with that output's value and the node
        that acts on it (an If taking a branch) records it; see :mod:`onnxsym.facts.edges`."""
        answer = compute(*args)
        if self._engine is not None and edges.may_rely(args):
            # asked without touching the watched engine: a decision that relies on nothing
            # leaves the rule's result reusable by identical nodes
            engine = self._engine.peek()
            relied = engine.relied_on(compute, args)
            if relied:
                # a record now is replayed for the nodes that reuse this result; one that goes
                # with an output waits for the node acting on it, so that rule is not reused
                (engine if output is None else self._engine).check_positive(self, relied, lambda: what(answer), output)
        return answer

    def act_on(self, i: int, what: str) -> None:
        """This node takes a decision from input ``i``'s value (an If's branch, a Where's
        pick): the ``>= 1`` assumptions behind that value are recorded with this node."""
        if self._engine is not None and i < len(self.input_names) and self.input_names[i]:
            self._engine.act_on_pending(self, self.input_names[i], what)

    def infer_graph(self, graph, inputs: Sequence[Value | None], born: set | None = None,
                    sure: bool = False, guard=None) -> list[Value | None]:
        """Infer a subgraph attribute with the given input values; returns its outputs.
        ``born``, when given, receives the names of the fresh symbols made inside; ``sure``:
        the graph runs whenever this node does (an If's branch taken by a known condition);
        else ``guard`` (an :class:`onnxsym.facts.constraints.Guard`) says when it runs, and what the
        graph needs is recorded under it (by default: under "this subgraph runs")."""
        return self._engine.infer_subgraph(self, graph, inputs, born, sure, guard)

    def runs_guard(self, relation, text: str):
        """The guard of a subgraph of this node that runs exactly where ``relation``
        (``(op, lhs, rhs)`` over the sizes) holds."""
        from ..facts.constraints import Guard

        engine = self._engine.peek()
        return Guard(engine.place_key() + (self.name, "runs"), True, text, self.name, self.op_type, relation)

    def branch_guards(self):
        """The guards of this If's then and else branches (see :func:`onnxsym.facts.branching.guards`)."""
        return branching.guards(self._engine.peek(), self)

    # -- an If the sizes decide (see onnxsym.facts.branching) ----------------------------
    def relation(self, i: int):
        """The comparison of shape values (a :class:`onnxsym.facts.branching.Relation`) that computed
        the boolean input ``i``, or None."""
        name = self.input_names[i] if i < len(self.input_names) else ""
        return branching.relation_of(self._engine.peek(), name) if name else None

    def branch_choice(self):
        """The branch this If takes, where an earlier inference found that the nodes after it
        run with one branch only (a :class:`onnxsym.facts.branching.Choice`), else None."""
        return self._engine.branch_choice(self)

    def note_split(self, relation) -> None:
        """This If's branches differ in rank and ``relation`` decides which runs: inference
        is tried again with each branch taken."""
        self._engine.note_split(self, relation)

    def require_relation(self, holds, reason: str) -> None:
        """Record that this node runs only where the relation ``holds``."""
        self._engine.record_branch(self, holds, reason)

    def try_graph(self, graph, inputs: Sequence[Value | None],
                  born: set | None = None) -> tuple[list[Value | None], list[Any]]:
        """Infer a subgraph attribute as a trial, to prove something of a case: its outputs and
        the constraints it would have recorded (``Constraint`` objects); nothing of the trial
        stays recorded, so a rule that uses the outputs must see that those constraints hold.
        ``born`` as for :meth:`infer_graph`."""
        with self._engine.hypothetically() as made:
            outs = self._engine.infer_subgraph(self, graph, inputs, born)
        return outs, made

    def __repr__(self) -> str:
        return f"{self.op_type} node {self.name!r}"
