"""The inference engine: visits nodes in topological order and runs each node's rule.

The engine owns the bookkeeping rules must not see: the environment of values,
fresh symbols and their provenance, recorded assumptions, and errors. It never
stops on a node it cannot infer: such outputs get fresh symbols (or an unknown
rank) with the reason recorded.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import os
from collections.abc import Callable, Container, Iterable, Iterator
from collections.abc import Sequence as Seq
from dataclasses import replace
from typing import Any

import onnx
from onnx import helper, numpy_helper

from .. import dims, registry
from ..dims import Dim
from ..errors import GraphError, InvalidModel, OnnxsymError, RuleFailure, ShapeContradiction
from ..facts import branching, edges
from ..facts.constraints import ConstraintContradiction, Constraints
from ..facts.declared import Declarations, DeclaredMatcher, reused_names
from ..facts.fact import USER, Constraint, Guard, Origin, Place, Rel, Relation
from ..facts.narrowing import Unreachable, implied_ranges
from ..model import functions, given, validate
from ..model.loader import initializer_value, symbol_name, value_from_type
from .memo import RuleMemo
from .node import Node, RankUnknown
from .provenance import Kind, Provenance
from .scope import Scope, graph_key, may_hold_subgraphs
from .state import Frame, State, restore, snapshot
from .symbols import SymbolTable
from .values import Opaque, Optional_, Sequence, Tensor, Value, resolve_value

# Strict mode: a rule that fails raises RuleFailure instead of leaving unknown shapes. The
# default of every Engine; the tests set it (tests/conftest.py), as does ONNXSYM_STRICT=1.
STRICT = os.environ.get("ONNXSYM_STRICT", "") not in ("", "0")

# A node's op as the engine resolves it once per (domain, op type): (canonical domain, opset, its rule).
Op = tuple[str, int, registry.Rule | None]
MemoKey = tuple[Any, ...]  # see RuleMemo.key
GraphPath = tuple[tuple[Any, ...], ...]  # a subgraph's path: the graph_key of each enclosing one

def convert_attribute(a: onnx.AttributeProto) -> Any:
    """An attribute as a plain Python value."""
    T = onnx.AttributeProto
    t = a.type
    if t == T.INT:
        return a.i
    if t == T.FLOAT:
        return a.f
    if t == T.STRING:
        return a.s.decode("utf-8", "replace")
    if t == T.INTS:
        return list(a.ints)
    if t == T.FLOATS:
        return list(a.floats)
    if t == T.STRINGS:
        return [s.decode("utf-8", "replace") for s in a.strings]
    if t == T.TENSOR:
        return numpy_helper.to_array(a.t)
    if t == T.TENSORS:
        return [numpy_helper.to_array(x) for x in a.tensors]
    if t == T.GRAPH:
        return a.g
    if t == T.GRAPHS:
        return list(a.graphs)
    return helper.get_attribute_value(a)


def _subgraph_free_names(g: onnx.GraphProto) -> set[str]:
    """Names a subgraph reads from its enclosing scopes."""
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    used: set[str] = set()
    for n in g.node:
        used.update(x for x in n.input if x)
        for a in n.attribute:
            for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                used |= _subgraph_free_names(sg)
        defined.update(n.output)
    used.update(o.name for o in g.output)
    return used - defined


def node_inputs(n: onnx.NodeProto) -> list[str]:
    """Every name a node reads, including what its subgraphs read from outside."""
    names = [x for x in n.input if x]
    for a in n.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            names.extend(_subgraph_free_names(a.g))
        elif a.type == onnx.AttributeProto.GRAPHS:
            for g in a.graphs:
                names.extend(_subgraph_free_names(g))
    return names


def node_label(n: onnx.NodeProto, index: int) -> str:
    return n.name or f"{n.op_type}_{index}"


_GRAPH_ATTRS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
# What the engine reads of a node, in one call (each protobuf field read costs).
_NODE_FIELDS = operator.attrgetter("op_type", "domain", "input", "output", "attribute")
_NONE_ID = id(None)
_OMITTED = Tensor(0, None)  # what _run_rule gives for an omitted output (never stored)


def has_subgraph(n: onnx.NodeProto) -> bool:
    return any(a.type in _GRAPH_ATTRS for a in n.attribute)


def topological_order(graph: onnx.GraphProto, available: Container[str]) -> list[int]:
    """Node indices in an order where every input is produced before use."""
    producer: dict[str, int] = {}
    for i, n in enumerate(graph.node):
        for o in n.output:
            if not o:
                continue
            if o in producer:
                raise GraphError(f"value '{o}' is produced twice: by node '{node_label(graph.node[producer[o]], producer[o])}' "
                                 f"and by node '{node_label(n, i)}'")
            if o in available:
                raise GraphError(f"node '{node_label(n, i)}' produces '{o}', which is already a graph input or initializer")
            producer[o] = i
    waiting = [0] * len(graph.node)
    users: dict[int, list[int]] = {}
    for i, n in enumerate(graph.node):
        deps = set()
        for x in node_inputs(n):
            p = producer.get(x)
            if p is None:
                if x not in available:
                    raise GraphError(f"node '{node_label(n, i)}' reads '{x}', which no node, input or initializer produces")
            elif p != i:
                deps.add(p)
            else:
                raise GraphError(f"node '{node_label(n, i)}' reads its own output '{x}' (a cycle)")
        waiting[i] = len(deps)
        for p in deps:
            users.setdefault(p, []).append(i)
    order = [i for i in range(len(graph.node)) if waiting[i] == 0]
    k = 0
    while k < len(order):
        for u in users.get(order[k], ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                order.append(u)
        k += 1
    if len(order) != len(graph.node):
        stuck = [node_label(graph.node[i], i) for i in range(len(graph.node)) if waiting[i] > 0]
        raise GraphError(f"the graph has a cycle through nodes: {', '.join(stuck[:6])}"
                         + (" ..." if len(stuck) > 6 else ""))
    return order


def _integer_solvable(a: Dim, b: Dim) -> bool:
    """False when ``a == b`` is a polynomial equation in one symbol that no integer in its
    range solves (``2*seq == 3``, ``seq*seq == 2``); True otherwise (also when unknown)."""
    free = dims.free_symbols(a) | dims.free_symbols(b)
    if len(free) != 1:
        return True
    import sympy

    from ..dims.sympy_bridge import sympy_symbol, to_sympy
    (s,) = free
    x = sympy_symbol(s)
    try:
        e = sympy.expand(to_sympy(a) - to_sympy(b))
        if not e.is_polynomial(x) or sympy.degree(e, x) > 4:
            return True
        roots = sympy.solve(e, x)
    except Exception:  # sympy gave no answer: nothing is known against it
        return True
    return any(r.is_integer is not False and (not r.is_number or s.lo <= r <= s.hi) for r in roots)


# The ops whose outputs hold none of their inputs' elements (only their shapes, or nothing of
# them): a value computed past them is no data (reads_data).
_READS_NO_ELEMENT = frozenset({"Shape", "Size", "ConstantOfShape", "EyeLike"})
_DATA_WALK = 4096  # values reads_data visits at most




def _if_alternatives(name: str, depth: int, producer: dict[str, tuple[onnx.NodeProto, GraphPath]],
                     reused: Container[str], value: Callable[[str, GraphPath], Value | None]) -> list[Tensor | None] | None:
    """:meth:`Engine._branch_outputs`' answer for ``name``."""
    if name not in producer or name in reused or depth > 8:
        return None
    n, path = producer[name]
    if n.op_type != "If":
        return None
    i = list(n.output).index(name)
    out: list[Tensor | None] = []
    branches = {a.name: a.g for a in n.attribute}
    for b in ("then_branch", "else_branch"):
        if b in branches and i < len(branches[b].output):
            inner = branches[b].output[i].name
            v = value(inner, path + (graph_key(n.output, b, -1),))
            more = _if_alternatives(inner, depth + 1, producer, reused, value) \
                if isinstance(v, Tensor) and v.shape is None else None
            out.extend(more if more is not None else [v if isinstance(v, Tensor) else None])
    return out or None

def _elimination_rank(state: State, table: SymbolTable) -> Callable[[dims.Sym], tuple[int, int]]:
    """Which symbol a solved constraint eliminates first: the highest rank. (A function of the
    engine's state and table, not a method: the constraints holding one of the engine would make
    the engine a reference cycle, which only the garbage collector frees, traversing all it holds.)"""
    def rank(s: dims.Sym) -> tuple[int, int]:
        kind = 1 if s.name in state.fresh else 0
        order = list(table.symbols)
        return kind, order.index(s.name) if s.name in order else len(order)
    return rank


class _StoppedAtSplit(Exception):  # noqa: N818  (not an error: a run told to stop at a split does)
    """Raised out of the main graph's walk where a run told to stop at a split met one (see Engine.run)."""


class Engine:
    """Infers one model. Use :func:`onnxsym.infer` rather than this class directly."""

    def __init__(self, model: onnx.ModelProto, table: SymbolTable | None = None,
                 base_dir: str | None = None, constant_initializers: bool = False):
        # -- what to infer, and how (set before run)
        self.model = model
        # An initializer also listed as a graph input is a constant below IR version 4 (onnxruntime
        # lets a caller override it only from IR 4 on), or when the caller says so.
        self.constant_initializers = constant_initializers or model.ir_version < 4
        self.base_dir = base_dir  # where external data is; small external values are read from it
        self.table = table or SymbolTable()
        self.strict = STRICT
        # > 0 while an untaken If branch is inferred (infer_untaken): what it needs is undone, so not asked
        self._untaken = 0
        self.given_values: dict[str, list[Any]] = {}  # data the caller gives for graph inputs (onnxsym.model.given)
        # Ifs whose branches differ in rank on a size condition (see branching): the branch each one takes
        self.choices: dict[str, branching.Choice] = {}
        self._chosen_in: list[tuple[Any, ...]] = []  # where an If took the branch given in choices (its scope's keys)
        # Called as progress(done, total) after each node of the main graph.
        self.progress: Callable[[int, int], None] | None = None
        self.functions = {(registry.canonical_domain(f.domain), f.name, f.overload): f for f in model.functions}
        # -- what inference records (a trial undoes what its fields say: see onnxsym.inference.state)
        self.state = State()
        self.constraints = Constraints(_elimination_rank(self.state, self.table))
        opsets = {registry.canonical_domain(op.domain): op.version for op in model.opset_import}
        # The main graph's values, producers, unknown ranks and opsets; a subgraph or a
        # function body being inferred has a scope of its own (see onnxsym.inference.scope).
        self.main = self.scope = Scope({}, opsets)
        # -- made at the end of run
        self.produced: list[str] = []  # what the main graph's nodes produce, in node order
        # whether the main graph's nodes are stored in an order that computes each value before
        # a node reads it (they ran so): the load check then need not sort a copy
        self.in_order = False
        # The main graph's nodes by index: (its kind (see _run) or None, input names, output names,
        # its standard op or None, its domain as written); the load check judges one node of each
        # kind (onnxsym.output.repeats)
        self.node_keys: dict[int, tuple[Any, ...]] = {}
        self.holds_subgraphs = False  # whether a node of the main graph has a graph attribute
        self._until_split = False  # (see run)
        self.partial = False  # whether the run stopped at a split (see run)
        # What the model declares on produced values, against what they compute: aliases, stale shapes.
        self.declarations = Declarations()
        # False: a declared dim is related to the computed one only where it may name a fresh symbol
        # (what is written of declarations); nothing at all without fresh symbols or subgraphs: for a
        # caller that writes neither aliases nor proven nor stale declarations (ort_compat)
        self.declared_verdicts = True
        # -- where inference is: the subgraphs being inferred, outermost first; the function calls
        self._frames: list[Frame] = []
        self._calls: list[tuple[str, str, str]] = []  # the function calls being expanded, innermost last
        # -- caches: pure answers, which a trial leaves
        self.memo = RuleMemo()
        self._relied: dict[tuple[Any, ...], list[Dim]] = {}  # relied_on's answers, by (compute, args)
        # values that resolve to themselves, by id (kept alive: no other object takes the id), with
        # the constraints' version they were resolved at: asked again only once derived changes
        self._settled: dict[int, tuple[Value | None, int]] = {}
        # the nodes found valid against their schema, by (id, domain, opset) (kept alive: no other
        # object takes the id): a loop body's rules run in each pass, its nodes are checked once
        self._valid: dict[tuple[int, str, int], onnx.NodeProto] = {}
        # -- the node being inferred
        # Symbols eliminated from its inputs (to explain a contradiction).
        self._rewritten: set[dims.Sym] = set()

    # -- symbols --------------------------------------------------------------
    def fresh_symbol(self, node: Node, output: int, axis: int | None, reason: str,
                     lo: int, hi: int, kind: Kind = Kind.UNSUPPORTED, bound: Dim | None = None) -> Dim:
        base = symbol_name(node.name or f"{node.op_type}_{node.index}")
        base += f"_o{output}" if node.num_outputs > 1 else ""
        base += f"_d{axis}" if axis is not None else "_n"
        s = self.table.fresh(base, lo, hi, f"fresh: {node.op_type} '{node.name}'", taken=self.state.fresh)
        out_name = node.output_names[output] if output < node.num_outputs else ""
        if self.table.env.over:
            reason += f" (the algebra's work bound ran out: {', '.join(sorted(self.table.env.over))})"
        self.state.fresh[s.name] = Provenance(s.name, node.name, node.op_type, out_name, axis, reason, kind, bound)
        return dims.expr_of(s)

    def reads_data(self, name: str) -> bool:
        """Whether value ``name`` of the main graph is computed from a graph input's elements:
        some path of producers leads back to a graph input that is not past a node that reads
        no element of its input (Shape, Size, ConstantOfShape, EyeLike). False where that is not
        shown within a few thousand values, and in a subgraph (whose outer values are not
        followed)."""
        if self._frames or self._untaken:
            return False
        producer = self.scope.producer
        todo, seen = [name], {name}
        while todo and len(seen) < _DATA_WALK:
            p = producer.get(todo.pop())
            if isinstance(p, str):
                if p.startswith("graph input"):
                    return True
                continue
            if p is None:  # an initializer, or a value of no node here
                continue
            n = p[0][p[1]]
            if n.op_type in _READS_NO_ELEMENT and n.domain in ("", "ai.onnx"):
                continue
            for x in n.input:
                if x and x not in seen:
                    seen.add(x)
                    todo.append(x)
        return False

    def bound_fresh(self, d: Dim, bound: Dim) -> None:
        """Fresh symbol ``d``, made with no bound (a Cast of float math the algebra cannot
        follow), gets ``bound``: a node needs ``d <= bound`` to run (TopK's k <= its axis). Only
        in the main graph, whose every node runs wherever the model does."""
        if self._frames or self._untaken or isinstance(d, int):
            return
        symbols = dims.free_symbols(d)
        if len(symbols) != 1:
            return
        (s,) = symbols
        p = self.state.fresh.get(s.name)
        if p is not None and p.bound is None and dims.expr_of(s) is d:
            self.state.fresh[s.name] = replace(p, bound=bound)

    def when(self) -> tuple[Guard, ...]:
        """What must hold for the subgraph being inferred to run (empty: wherever the model runs)."""
        return tuple(f.guard for f in self._frames if f.guard is not None)

    def here(self, node: str, op_type: str) -> Place:
        """The place of node ``node`` in the graph being inferred."""
        return Place(node, op_type, self.place_key(), self.when())

    def record_equal(self, node: Node, a: Dim, b: Dim, reason: str, origin: Origin = Origin.NEEDED,
                     solve: bool = True) -> None:
        place = self.here(node.name, node.op_type)
        if not self._frames:
            self.constraints.require(a, b, place, reason, origin, solve=solve)
            return
        # A subgraph is inferred before (or without) knowing that it runs: what it needs is
        # recorded with its guards, never solved nor an error.
        try:
            self.constraints.require(a, b, place, reason, origin, solve=False)
        except ConstraintContradiction as exc:
            self.state.warnings.append(f"{exc} (that subgraph can never run)")
            self._never_runs(Constraint(Rel.EQ, a, b, origin, place, reason))

    def record_at_least(self, node: Node, d: Dim, lo: int, reason: str, origin: Origin = Origin.NEEDED) -> None:
        """``node`` runs only when ``d >= lo``: narrow the symbols' ranges. In a subgraph, whose
        inference does not know that it runs, it is recorded with the subgraph's guards and
        narrows nothing; a need that can never hold is a warning."""
        if self._untaken:  # (a trial for shapes alone: every need it records is undone)
            return
        place = self.here(node.name, node.op_type)
        if not self._frames:
            self.constraints.at_least(d, lo, place, reason, origin)
            return
        rd = self.constraints.resolve(d)
        try:
            implied_ranges(rd, lo)
        except Unreachable as exc:
            self.state.warnings.append(f"{node.op_type} node '{node.name}' needs {d} >= {lo} ({reason}), "
                                 f"in a subgraph of {self._frames[-1].label}: {exc} (that subgraph can never run)")
            self._never_runs(Constraint(Rel.GE, d, lo, origin, place, reason))
            return
        if dims.try_le(lo, rd) is not True:
            self.constraints.add(Constraint(Rel.GE, d, lo, origin, place, reason))

    def _guarded_place(self, node: Node, where: Seq[tuple[Relation, str]]) -> Place | bool:
        """Where a condition under ``where``'s relations (each with its text) is recorded: False
        where the ranges refute one (it is dropped), True where they prove them all (it holds
        unguarded), else the node's place with the open relations as guards."""
        open_: list[tuple[Relation, str]] = []
        for rel, text in where:
            known = _decided(rel)
            if known is False:
                return False
            if known is None:
                open_.append((rel, text))
        if not open_:
            return True
        place = self.here(node.name, node.op_type)
        key = self.place_key() + (node.name, "where")
        guards = tuple(Guard(key + (text,), True, text, node.name, node.op_type, rel) for rel, text in open_)
        return replace(place, when=place.when + guards)

    def record_at_least_where(self, node: Node, d: Dim, lo: int, where: Seq[tuple[Relation, str]],
                              reason: str) -> None:
        """``node`` runs only when ``d >= lo`` wherever every relation of ``where`` holds (each
        with its text): a condition under guards the sizes decide, narrowing no range. A
        relation the ranges refute drops it; where the ranges prove them all, it is
        :meth:`record_at_least`."""
        if self._untaken or (at := self._guarded_place(node, where)) is False:
            return
        if at is True:
            self.record_at_least(node, d, lo, reason)
        elif dims.try_le(lo, self.constraints.resolve(d)) is not True:
            self.constraints.add(Constraint(Rel.GE, d, lo, Origin.NEEDED, at, reason))

    def record_equal_where(self, node: Node, a: Dim, b: Dim, where: Seq[tuple[Relation, str]], reason: str) -> None:
        """``node`` runs only when ``a == b`` wherever every relation of ``where`` holds (each with
        its text): a condition under guards the sizes decide, solving nothing. A relation the
        ranges refute drops it; where the ranges prove them all, it is :meth:`record_equal`."""
        if self._untaken or (at := self._guarded_place(node, where)) is False:
            return
        if at is True:
            self.record_equal(node, a, b, reason)
            return
        try:
            self.constraints.require(a, b, at, reason, solve=False)
        except ConstraintContradiction:  # (never equal: the node runs only where a guard fails)
            self.constraints.add(Constraint(Rel.EQ, a, b, Origin.NEEDED, at, reason))

    def _never_runs(self, c: Constraint) -> None:
        """A need of a node in a subgraph that holds at no size: recorded under the subgraph's
        guards, so the domain says that subgraph must not run (its If's other branch, no
        iteration) instead of dropping it."""
        if c.when and not self._untaken:
            self.constraints.add(c)

    def record_bound(self, name: str, op_type: str, d: Dim, hi: int, reason: str) -> None:
        """Record that node ``name``'s result is exact only while ``d <= hi`` (unless the ranges prove it)."""
        if dims.try_le(d, hi) is True:
            return
        self.constraints.add(Constraint(Rel.LE, d, hi, Origin.EXACT_WITHIN, self.here(name, op_type), reason))

    def record_constraint(self, c: Constraint) -> None:
        """Record a bound or a ``>= 1`` decision as it stands (one a trial made: see hypothetically),
        under the guards of the graph being inferred."""
        if c.origin is Origin.DEFAULT_RANGE:
            self.record_positive(c)
        elif c.origin is not Origin.EXACT_WITHIN:
            raise ValueError(f"record_constraint records bounds and >= 1 decisions, not {c.origin.value} ones")
        elif dims.try_le(c.lhs, c.rhs) is not True:
            self.constraints.add(c)

    def relied_on(self, compute: Callable[..., Any], args: Seq[Any]) -> list[Dim]:
        """The symbols (or sum of them) ``compute(*args)`` relies on being >= 1 by default
        (see :mod:`onnxsym.facts.edges`); pure. A many-layer model asks the same question once a
        layer: it is answered once."""
        key = (compute, tuple(args))
        try:
            relied, reusable = self._relied.get(key), True
        except TypeError:  # an unhashable argument: no reuse
            relied, reusable = None, False
        if relied is None:
            relied = edges.relied_on(compute, args, edges.candidates(args, self.table.defaulted))
            if reusable:
                self._relied[key] = relied
        return relied

    def check_positive(self, node: Node, relied: list[Dim], what: Callable[[], str], output: int | None) -> None:
        """Record (or, with ``output``, attach to that output) the ``relied`` symbols of a
        decision ``node`` took (``what()`` says which). Recorded at once, the records are
        kept with the rule's memoized result, so a node that reuses it records them too."""
        text = what()
        place = Place(node.name, node.op_type, self.place_key())
        decisions = [Constraint(Rel.GE, d, 1, Origin.DEFAULT_RANGE, place, text) for d in relied]
        if output is None or not node.has_output(output):
            for c in decisions:
                self.record_positive(c)
                node.decisions.append(c)
            return
        name = node.output_names[output]
        self.state.pending[name] = self.state.pending.get(name, frozenset()) | frozenset(decisions)

    def act_on_pending(self, node: Node, value: str, what: str) -> None:
        place = self.here(node.name, node.op_type)
        for c in _in_order(self.state.pending.get(value, ())):
            self.state.acted.add(c)
            self.record_positive(replace(c, place=place, reason=f"{what} {c.reason}"))

    def _replay(self, memo_key: MemoKey, name: str, op_type: str) -> None:
        """What the rule of a memoized result recorded, recorded again for node ``name``."""
        for c in self.memo.decisions.get(memo_key, ()):
            self.record_positive(c.at(Place(name, op_type, self.place_key())))
        for d, hi, reason in self.memo.bounds.get(memo_key, ()):
            self.record_bound(name, op_type, d, hi, reason)

    def record_positive(self, c: Constraint) -> None:
        """Record the decision ``c`` (``lhs >= 1``, a symbol or a sum of symbols: its node decided
        something only the default ranges allow) under the guards of the graph being inferred.
        One record per (lhs, node)."""
        if (c.lhs, c.node) in self.state.positive:
            return
        self.state.positive.add((c.lhs, c.node))
        self.constraints.items.append(c.at(replace(c.place, when=self.when())))

    def _flush_pending(self) -> None:
        """Decisions no node acted on are recorded with the node that took them."""
        for decisions in list(self.state.pending.values()):
            for c in _in_order(decisions - self.state.acted):
                self.state.acted.add(c)
                self.record_positive(c)

    def _pass_pending(self, input_names: Seq[str], output_names: Seq[str]) -> None:
        """A value computed from one that rests on a decision rests on it too (only values
        whose elements are known carry a decision on)."""
        pending = self.state.pending
        if pending.keys().isdisjoint(input_names):  # (most nodes: no input rests on a decision)
            return
        decisions = frozenset().union(*(pending.get(x, frozenset()) for x in input_names if x))
        if decisions:
            for o in output_names:
                v = self.scope.values.get(o) if o else None
                if isinstance(v, Tensor) and v.value is not None:
                    self.state.pending[o] = self.state.pending.get(o, frozenset()) | decisions

    def _resolved(self, name: str) -> Value | None:
        """The value of ``name`` rewritten through the constraints solved so far."""
        v = self.scope.values.get(name)
        if not self.constraints.derived:
            return v
        version = self.constraints.version
        settled = self._settled.get(id(v))
        if settled is not None and settled[0] is v and settled[1] == version:
            return v
        r = resolve_value(v, self.constraints.resolve)
        if r is v:
            self._settled[id(v)] = (v, version)
        elif r is not None:  # (r is None only when v is)
            self.scope.values[name] = r
            if isinstance(v, Tensor) and v.shape is not None:
                for d in v.shape:
                    self._rewritten |= dims.free_symbols(d) & self.constraints.derived.keys()
        return r

    # -- graphs ---------------------------------------------------------------
    def reuse(self, first: Engine) -> None:
        """Before :meth:`run`: this engine infers the model ``first`` inferred, with choices
        (onnxsym.facts.branching); its run is ``first``'s until a rule reads one, so it reads
        ``first``'s rule results made before the point it has reached (onnxsym.inference.memo).
        Not where a bounded search of ``first`` gave up (that is recorded by the run, not with
        a result)."""
        if not self.table.env.over and not first.table.env.over:
            self.memo = RuleMemo(first.memo)

    def run(self, until_split: bool = False) -> None:
        """Infer the model. ``until_split``: stop after the first main-graph node that notes a
        split (an If or a Squeeze the sizes decide): what follows it is inferred again with a
        branch chosen (onnxsym.facts.branching), and this run, ``partial`` then, only lends its
        rule results to those runs."""
        self._until_split = until_split
        with self.table.env:  # the run's ranges, and every cache derived from them
            try:
                self._run()
            except _StoppedAtSplit:
                self.partial = True
                return
        if self.table.env.over:  # a bounded search gave up somewhere (its answers stay sound)
            self.state.warnings.append(f"the algebra's work bound ran out ({', '.join(sorted(self.table.env.over))}): "
                                 f"some dims may be fresh symbols that a longer search would have resolved")

    def _run(self) -> None:
        g, main = self.model.graph, self.main
        values = main.values
        init_names = {t.name for t in g.initializer}
        for t in g.initializer:
            values[t.name] = self.memo.intern(initializer_value(t, self.base_dir, self.state.warnings))
        for t in g.sparse_initializer:
            values[t.values.name] = Tensor(t.values.data_type, tuple(t.dims))
        for inp in g.input:
            if inp.name in init_names and self.constant_initializers:
                continue
            # An initializer that is also an input is only a default: the caller may feed it.
            v = given.apply(value_from_type(inp.type, self.table, inp.name), inp.name, self.given_values.get(inp.name))
            values[inp.name] = self.memo.intern(self._per_item(v, inp.name))
            main.producer[inp.name] = f"graph input '{inp.name}'"
        self.table.check_user_names()
        for lhs, rhs in self.table.assume:
            whole = f"{lhs} == {rhs}"
            a, b = self.table.parse_known(lhs, whole), self.table.parse_known(rhs, whole)
            try:
                self.constraints.require(a, b, USER, "given by the user", Origin.USER)
            except ConstraintContradiction as exc:
                raise self.table.assumption_contradiction(whole, a, b, exc.why) from exc
            if not _integer_solvable(a, b):
                raise self.table.assumption_contradiction(whole, a, b, "no integer size in the range solves it")
        self.produced = self._run_nodes(g, set(values) | init_names)
        lookup = self.memo.lookup
        for i, (key, ins, outs, subgraphs, domain) in self.node_keys.items():
            # a node's kind: the memo's result for its key (one object per key), None where the
            # rule touched the engine (the node's own); and its op, if a standard one
            kind = lookup(key) if key is not None and not subgraphs else None
            self.node_keys[i] = (kind, ins, outs, key[0] if kind is not None and key[1] == "" else None, domain)
        self._flush_pending()
        self._match_declared(g)
        done: dict[int, tuple[Any, ...]] = {}  # by object (equal values are mostly one: interned), kept alive
        stores = [values, main.subgraph_values, *main.scoped_values.values()]
        version = self.constraints.version
        for store in stores if self.constraints.derived else ():
            for k, v in store.items():
                known = done.get(id(v))
                if known is None:
                    settled = self._settled.get(id(v))
                    same = settled is not None and settled[0] is v and settled[1] == version
                    known = done[id(v)] = (v, v if same else resolve_value(v, self.constraints.resolve))
                store[k] = known[1]

    def _match_declared(self, g: onnx.GraphProto) -> None:
        """Check the dims the model declares on produced values (graph outputs, value_info,
        subgraphs' value_info) against the computed ones: aliases, and stale declarations.
        Nothing is learned from them but names (see onnxsym.facts.declared)."""
        if not self.declared_verdicts and not self.state.fresh and not (self.holds_subgraphs and _holds_if(g)):
            return  # (only names are asked for, and there is no fresh symbol to name nor If output to drop)
        matcher = DeclaredMatcher(self.table, self.state.fresh, self.constraints.resolve, self.declarations,
                                  self.state.warnings, self._branch_outputs(g), self.declared_verdicts)
        produced = set(self.produced)
        for vi in list(g.output) + list(g.value_info):
            t = self._resolved(vi.name) if vi.name in produced else None
            if isinstance(t, Tensor):
                matcher.match(vi, t)
        if self.main.subgraph_values:
            reused = reused_names(g)  # (places are by value name: a reused one is never kept)
            for path, vi in _subgraph_value_info(g):  # each by its own scope's value (siblings reuse names)
                t = resolve_value(self.main.scoped_values.get(path, {}).get(vi.name), self.constraints.resolve)
                if isinstance(t, Tensor):
                    matcher.match(vi, t, keepable=vi.name not in reused)
        matcher.finish()

    def _branch_outputs(self, g: onnx.GraphProto) -> Callable[[str], list[Tensor | None] | None]:
        """value -> the values it may be, one per branch, when an If makes it (nested Ifs
        expanded); None for a value no If makes, or one whose name several scopes define."""
        ops = registry.subgraph_ops()
        if (g is self.model.graph and not self.holds_subgraphs) or \
                not any(n.domain or n.op_type == "If" or n.op_type in ops for n in g.node):
            # one graph and no If (a pass over two fields: the walk below reads every output)
            return lambda name: None
        producer: dict[str, tuple[onnx.NodeProto, GraphPath]] = {}
        reused = reused_names(g)
        stack: list[tuple[onnx.GraphProto, GraphPath]] = [(g, ())]
        while stack:
            graph, path = stack.pop()
            for n in graph.node:
                for o in n.output:
                    producer.setdefault(o, (n, path))
                if not may_hold_subgraphs(n):
                    continue
                for a in n.attribute:
                    graphs = [(-1, a.g)] if a.type == onnx.AttributeProto.GRAPH else list(enumerate(a.graphs))
                    stack.extend((sg, path + (graph_key(n.output, a.name, k),)) for k, sg in graphs)

        def value(name: str, path: GraphPath) -> Value | None:
            v = self.main.scoped_values.get(path, {}).get(name)
            if v is None:  # (a branch may give an outer value as it is)
                v = self.main.subgraph_values.get(name) if name not in self.main.values else self.main.values[name]
            return resolve_value(v, self.constraints.resolve)

        # (a function of the module, not a closure calling itself: that would be a reference cycle
        # holding the engine, which only the garbage collector frees)
        return functools.partial(_if_alternatives, depth=0, producer=producer, reused=reused, value=value)

    def _per_item(self, v: Value, name: str) -> Value:
        """A sequence input's declared item shape holds for each item, not for all
        alike (ONNX's own tests feed items of different lengths to ``seq(float[N])``):
        its symbolic dims become fresh symbols."""
        if not isinstance(v, Sequence) or v.elem is None or v.elem.shape is None:
            return v
        shape = []
        for axis, d in enumerate(v.elem.shape):
            if not isinstance(d, int):
                s = self.table.fresh(symbol_name(name) + f"_item_d{axis}", dims.FRESH_LO, dims.INT64_MAX,
                                     f"fresh: an item of input '{name}'")
                self.state.fresh[s.name] = Provenance(s.name, "", "", name, axis,
                                                f"declared as {d}, which may differ between items", Kind.POLICY)
                d = dims.expr_of(s)
            shape.append(d)
        return Sequence(Tensor(v.elem.dtype, tuple(shape)), v.items)

    def _run_nodes(self, graph: onnx.GraphProto, available: Container[str]) -> list[str]:
        """Infer every node of ``graph`` (``available``: the names known before its first
        node); returns the names its nodes produce, in node order. Exporters store nodes in
        a valid order: they run so, checked as they go; from where the stored order breaks,
        the rest follow a topological order (which names what is wrong with a bad graph)."""
        nodes = graph.node
        progress = self.progress if graph is self.model.graph else None
        produced: list[str] = []
        keys = self.node_keys if graph is self.model.graph else None
        done = self._infer_nodes(nodes, enumerate(nodes), 0, produced, progress, stored_order=True, keys=keys)
        if graph is self.model.graph:
            self.in_order = done == len(nodes)
        if done == len(nodes):
            return produced
        rest = [i for i in topological_order(graph, available) if i >= done]
        self._infer_nodes(nodes, ((i, nodes[i]) for i in rest), done, produced, progress, stored_order=False,
                          keys=keys)
        return [o for n in nodes for o in n.output if o]

    def _infer_nodes(self, nodes: Seq[onnx.NodeProto], order: Iterable[tuple[int, onnx.NodeProto]], start: int,
                     produced: list[str], progress: Callable[[int, int], None] | None, stored_order: bool,
                     keys: dict[int, tuple[Any, ...]] | None = None) -> int:
        """Infer each ``(i, nodes[i])`` of ``order`` (``start`` nodes are done already);
        ``produced`` receives their outputs' names. In ``stored_order``, a node whose inputs
        are not all known yet or whose outputs already are stops the walk: returns how many
        nodes are done. ``keys`` (the main graph's) receives each node's memo key and names.

        The hot loop of a large model: a node that repeats an earlier one (same op,
        attributes and input values: most nodes of a many-layer model) takes the rule's
        memoized result; only the others run their rule (:meth:`_run_rule`)."""
        scope, constraints, key, lookup = self.scope, self.constraints, self.memo.key, self.memo.lookup
        # the standard ops registered with subgraphs; other domains' ops are checked one by one
        subgraph_ops = registry.subgraph_ops()
        replays, bounds = self.memo.decisions, self.memo.bounds
        env, producer, ops = scope.values, scope.producer, scope.ops
        stop_at_split = keys is not None and self._until_split  # (the main graph's walk of a first run)
        done = start
        for index, n in order:
            op_type, domain, input_names, output_names, attributes = _NODE_FIELDS(n)
            # read once: a protobuf field read makes new objects, and iterating one is slow (a
            # slice of it, a list made at C speed, is 2-3x faster to make a tuple of)
            output_names = (output_names[0],) if len(output_names) == 1 else tuple(output_names[:])
            input_names = tuple(input_names[:])
            op = ops.get((domain, op_type) if domain else op_type)
            if op is None:
                op = ops[(domain, op_type) if domain else op_type] = self._resolve_op(domain, op_type, n, index)
            inputs: list[Value | None] | None = None  # (read again where a rule runs)
            if constraints.derived:
                self._rewritten = set()
                inputs = [self._resolved(x) if x else None for x in input_names]
                ids = tuple(map(id, inputs))
            else:  # nothing to rewrite; "" (an omitted input) is never a key: None
                ids = tuple(map(id, map(env.get, input_names)))
            subgraphs = (domain or op_type in subgraph_ops) and has_subgraph(n)
            if stored_order:
                if _NONE_ID in ids and not all(x in env for x in input_names if x):
                    return done
                if len(output_names) == 1:
                    if output_names[0] in env:
                        return done
                else:
                    made = [o for o in output_names if o]
                    if len(set(made)) != len(made) or any(o in env for o in made):
                        return done
                if subgraphs and not all(x in env for x in node_inputs(n)):
                    return done
            memo_key: MemoKey | None = None
            outs: Seq[Value] | None = None
            if op[2] is not None and not subgraphs:  # a node's subgraphs are its own: no reuse
                memo_key = key(op_type, op[0], op[1], attributes, ids, output_names)
                outs = lookup(memo_key)
            if outs is None:
                outs = self._run_rule(index, n, op, inputs, memo_key)
            elif memo_key in replays or memo_key in bounds:
                self._replay(memo_key, n.name or f"{op_type}_{index}", op_type)
            if keys is not None:
                keys[index] = (memo_key, input_names, output_names, subgraphs, domain)
                if subgraphs:
                    self.holds_subgraphs = True
            made_by = (nodes, index)
            if len(output_names) == 1:  # most nodes: stored without a loop (the loop costs here)
                name = output_names[0]
                if name:
                    env[name], producer[name] = outs[0], made_by
                    produced.append(name)
            else:
                for name, v in zip(output_names, outs):
                    if name:
                        env[name], producer[name] = v, made_by
                        produced.append(name)
            if constraints.derived:
                for name in output_names:
                    if name:
                        self._resolved(name)
            if self.state.pending:  # decisions flow on through the values computed from them
                self._pass_pending(node_inputs(n) if subgraphs else input_names, output_names)
            done += 1
            if progress is not None:
                progress(done, len(nodes))
            if stop_at_split and self.state.splits:
                raise _StoppedAtSplit
        return done

    def _run_rule(self, index: int, n: onnx.NodeProto, op: Op, inputs: list[Value | None] | None,
                  memo_key: MemoKey | None) -> list[Value]:
        """Run the rule of node ``n`` (the graph's ``index``-th), ``op`` its ``(domain, opset, rule)``,
        on ``inputs`` (None: the values of its inputs' names); a node without a rule infers its
        function body or gets unknown outputs. Returns a value for each output (an omitted one's
        is never stored), kept by the memo under ``memo_key`` when the rule did not reach the engine."""
        domain, opset, rule = op
        started = self.memo.started()
        op_type = n.op_type
        output_names = n.output[:]  # (a list: a slice of a protobuf field is made at C speed)
        if inputs is None:
            inputs = list(map(self.scope.values.get, n.input[:]))
        checked = (id(n), domain, opset)
        if self._valid.get(checked) is not n:
            validate.check_node(n, domain, opset, node_label(n, index))
            self._valid[checked] = n
        attributes = n.attribute
        attrs = {a.name: a for a in attributes} if attributes else {}
        node = Node(op_type, domain, n.name or f"{op_type}_{index}", opset, inputs, n.input[:],
                    output_names, attrs, convert_attribute, self, index)
        outs: Seq[Value | None]
        if rule is None:
            outs = self._no_rule(node, n)
        else:
            try:
                outs = rule(node)
            except RankUnknown as exc:  # an input's rank the rule needs is unknown (shape_of)
                outs = self._unknown_outputs(node, exc.reason, dtypes=exc.dtypes)
            except (ShapeContradiction, InvalidModel) as exc:
                if self._may_not_run():
                    # in a subgraph that may not run (a branch the data pick, a loop body): it can
                    # never run at these sizes, which the model does not need (what onnx's load-time
                    # inference refuses in it is still an error: api._infer asks it)
                    self.state.warnings.append(f"{n.op_type} node '{node.name}' in a subgraph of "
                                               f"{self._frames[-1].label}: {exc} (that subgraph can never run)")
                    self._never_runs(Constraint(Rel.EQ, 0, 1, Origin.NEEDED, self.here(node.name, op_type),
                                                f"that subgraph can never run: {exc}"))
                    outs = self._unknown_outputs(node, f"that subgraph can never run: {exc}", Kind.POLICY)
                elif isinstance(exc, InvalidModel):  # the node breaks the spec: named here
                    raise InvalidModel(f"{n.op_type} node '{node.name}': {exc}") from exc
                else:  # (a ConstraintContradiction among them: it names its nodes)
                    self._failed(f"{n.op_type} node '{node.name}': {exc}")
                    if isinstance(exc, ConstraintContradiction):
                        exc = self.constraints.explain(exc, self._rewritten)
                    raise exc.at(node.name, op_type, domain, self._input_sources(n)) from exc
            except OnnxsymError:
                raise
            except (dims.SymbolicDimError, dims.UndecidableError) as exc:
                outs = self._unknown_outputs(node, f"the rule needs a static value: {exc}")
            except dims.TooLarge as exc:
                outs = self._unknown_outputs(node, f"an expression too large to follow: {exc}")
            except Exception as exc:  # a rule's own failure: a bug, loud in strict mode
                failure = f"{n.op_type} node '{node.name}': rule failed: {type(exc).__name__}: {exc}"
                if self.strict:
                    raise RuleFailure(failure) from exc
                self.state.rule_failures.append(failure)
                self.state.warnings.append(failure)
                outs = self._unknown_outputs(node, f"rule failed: {type(exc).__name__}: {exc}", Kind.RULE_FAILED)
            if isinstance(outs, (Tensor, Sequence, Optional_, Opaque)):
                outs = [outs]
            outs = _capped(node, outs)
            if not node.touched and not (node.decisions and node.bounds):  # (a replay keeps no order between them)
                self.memo.put(memo_key, inputs, outs, len(output_names), node.decisions, node.bounds,
                              started)
        values: list[Value] = []
        for i, name in enumerate(output_names):
            v = outs[i] if i < len(outs) else None
            if not name:
                values.append(_OMITTED)
                continue
            if v is None or (isinstance(v, Tensor) and v.shape is None):
                if name not in self.scope.unknown_rank:
                    self.scope.unknown_rank[name] = Provenance("", node.name, op_type, name, None,
                                                               "the rule could not tell the rank")
            values.append(self.memo.intern(v) if v is not None else Tensor(0, None))
        return values

    def _made_by(self, name: str) -> str:
        """What produced value ``name``, in words."""
        p = self.scope.producer.get(name, name)
        if isinstance(p, tuple):  # a node, as (the nodes of its graph, its index): no wrapper kept
            n = p[0][p[1]]
            return f"{n.op_type} node '{node_label(n, p[1])}'"
        return p

    def _input_sources(self, n: onnx.NodeProto) -> str:
        """Where a node's inputs come from, with their shapes: the other side of a contradiction."""
        parts = []
        for x in n.input:
            v = self.scope.values.get(x) if x else None
            if isinstance(v, Tensor) and v.shape is not None and x in self.scope.producer:
                parts.append(f"'{x}' [{', '.join(map(str, v.shape))}] from {self._made_by(x)}")
        return "inputs: " + ", ".join(parts) if parts else "inputs unknown"

    def _resolve_op(self, domain: str, op_type: str, n: onnx.NodeProto, index: int) -> Op:
        """``(canonical domain, opset, rule or None)`` of an op."""
        domain = registry.canonical_domain(domain)
        opset = self.scope.opsets.get(domain)
        if opset is None:
            if domain == "":
                raise GraphError(f"node '{node_label(n, index)}': the model imports no opset for the default domain")
            opset = 1
        return domain, opset, registry.find_rule(domain, op_type, opset)

    def _no_rule(self, node: Node, proto: onnx.NodeProto) -> list[Value | None]:
        fn = self.functions.get((node.domain, node.op_type, proto.overload))
        if fn is None:
            fn = functions.schema_function(proto, node)
        if fn is not None:
            return self.infer_function(node, proto, fn)
        key = (node.domain or "ai.onnx", node.op_type)
        self.state.no_rule[key] = self.state.no_rule.get(key, 0) + 1
        reason = f"no rule for {node.domain or 'ai.onnx'}::{node.op_type} at opset {node.opset}"
        if node.domain not in ("", "ai.onnx.ml", "com.microsoft"):
            self.state.warnings.append(f"{node.op_type} node '{node.name}': unknown operator "
                                 f"'{node.domain}::{node.op_type}'; its outputs get unknown shapes")
        return self._unknown_outputs(node, reason, Kind.NO_RULE)

    def _unknown_outputs(self, node: Node, reason: str, kind: Kind = Kind.UNSUPPORTED,
                         dtypes: Seq[int] = ()) -> list[Value | None]:
        """Every output of unknown rank (output ``k`` of type ``dtypes[k]``, 0 past them), with why."""
        outs: list[Value | None] = []
        for k, name in enumerate(node.output_names):
            if name:
                self.scope.unknown_rank[name] = Provenance("", node.name, node.op_type, name, None, reason, kind)
            outs.append(Tensor(dtypes[k] if k < len(dtypes) else 0, None))
        return outs

    def record_unknown_rank(self, node: Node, output: int, reason: str,
                            kind: Kind = Kind.UNSUPPORTED) -> None:
        if node.has_output(output):
            name = node.output_names[output]
            self.scope.unknown_rank[name] = Provenance("", node.name, node.op_type, name, None, reason, kind)

    # -- Ifs the sizes decide (see branching) -----------------------------------
    def nesting(self) -> branching.Nesting:
        return tuple((f.label, f.sure) for f in self._frames)

    def place_key(self) -> tuple[str, ...]:
        """What names the scope being inferred (a guard's choice is named within it)."""
        return tuple(f.label for f in self._frames)

    def _may_not_run(self) -> bool:
        """Whether the subgraph being inferred may not run where its node does (a branch the
        data pick, a loop body), unless the inference tries a branch inside it: a contradiction
        in the tried branch is what refuses that branch (facts.branching)."""
        unsure = [i for i, f in enumerate(self._frames) if not f.sure]
        if not unsure:
            return False
        keys = tuple(f.key for f in self._frames)
        return not any(len(scope) > unsure[-1] and keys[:len(scope)] == scope for scope in self._chosen_in)

    def _failed(self, why: str) -> None:
        """A contradiction stops inference: the innermost place, and what it says there, are kept."""
        if self.state.failed_in is None:
            self.state.failed_in, self.state.failure = self.nesting(), why

    def branch_choice(self, node: Node) -> branching.Choice | None:
        """The branch the If ``node`` takes, when given."""
        choice = self.choices.get(branching.key(node))
        if choice is not None:  # (where an If takes a tried branch: see _may_not_run)
            self._chosen_in.append(tuple(f.key for f in self._frames))
            self.memo.diverge()  # (the first run, which had no choice, goes its own way from here)
        return choice

    def note_split(self, node: Node, relation: Relation) -> None:
        key = branching.key(node)
        if all(s.key != key for s in self.state.splits):
            self.state.splits.append(branching.Split(key, f"{node.op_type} node '{node.name}'", relation, self.nesting()))

    def record_branch(self, node: Node, holds: Relation, reason: str) -> None:
        """``node`` runs only where ``holds``: an equality is required as a MatMul's is; the others are
        recorded (kind ``at_least`` for an order, ``differ`` for ``!=``), in the main graph narrowing the ranges."""
        a, b, op = holds.lhs, holds.rhs, holds.op
        if op is Rel.EQ:
            self.record_equal(node, a, b, reason, Origin.BRANCH)
            return
        place = self.here(node.name, node.op_type)
        if op is Rel.NE:
            self.constraints.items.append(Constraint(Rel.NE, a, b, Origin.BRANCH, place, reason))
            return
        small, large = (a, b) if op in (Rel.LT, Rel.LE) else (b, a)
        gap, lo = dims.sub(large, small), 1 if op in (Rel.LT, Rel.GT) else 0
        if self._frames:
            self.constraints.items.append(Constraint(Rel.GE, gap, lo, Origin.BRANCH, place, reason))
        else:
            self.constraints.at_least(gap, lo, place, reason, Origin.BRANCH)

    def is_resolved(self, d: Dim) -> bool:
        return all(s.name not in self.state.fresh for s in dims.free_symbols(d))

    @contextlib.contextmanager
    def _entered(self, scope: Scope) -> Iterator[Scope]:
        """Infer in ``scope`` until the block ends; then in the scope around it again."""
        outer, self.scope = self.scope, scope
        try:
            yield scope
        finally:
            self.scope = outer

    def infer_subgraph(self, node: Node, graph: onnx.GraphProto, inputs: Seq[Value | None],
                       born: set[str] | None = None, sure: bool = False,
                       guard: Guard | None = None) -> list[Value | None]:
        """Infer ``graph`` in a scope that sees the current values; inputs bound positionally.
        ``born``, when given, receives the names of the fresh symbols made inside; ``sure``:
        the graph runs whenever ``node`` does; else ``guard`` says when it runs (by default:
        a choice of its own, that it runs at all)."""
        before = len(self.state.fresh)
        if not sure and guard is None:
            guard = Guard(self.place_key() + (node.name, "runs"), True,
                          f"the subgraph of {node.op_type} node '{node.name}' runs", node.name, node.op_type)
        self._frames.append(Frame(f"{node.op_type} node '{node.name}'", sure, None if sure else guard,
                                  graph_key(node.output_names, *node.graph_attribute(graph))))
        path = tuple(f.key for f in self._frames)
        self.state.sure_runs[path] = self.state.sure_runs.get(path, True) and not self.when()
        try:
            with self._entered(self.scope.inner()) as scope:
                values = scope.values
                for t in graph.initializer:
                    values[t.name] = initializer_value(t, self.base_dir, self.state.warnings)
                for i, inp in enumerate(graph.input):
                    scope.producer[inp.name] = f"subgraph input '{inp.name}'"
                    v = inputs[i] if i < len(inputs) else None
                    values[inp.name] = v if v is not None else value_from_type(inp.type, self.table, inp.name)
                self._run_nodes(graph, scope.names())
                outs = [values.get(o.name) for o in graph.output]
                own = dict(scope.changed())
                scope.subgraph_values.update(own)
                scope.scoped_values[path] = own
                self.state.subgraph_runs.append((graph, self.when(), own))
        finally:
            self._frames.pop()
        if born is not None:
            born.update(list(self.state.fresh)[before:])
        return outs

    def infer_untaken(self, node: Node, graph: onnx.GraphProto) -> None:
        """Infer ``graph``, an If branch a known condition never takes, for the shapes of its values
        alone: onnxruntime's fusions and TensorRT's execution provider read a shape on every value,
        and onnxruntime loads (and folds) a branch whether it runs or not. In a trial, so nothing it
        records reaches the model's values, constraints or domain; only its values are kept, per
        subgraph path (``Scope.scoped_values``, what is written). A branch where a rule fails or the
        inference stops is left as it is (unshaped); a rule's failure is reported all the same (a
        bug wherever it happens: raised in strict mode), as a trial's is."""
        scoped = self.scope.scoped_values
        before, failures = set(scoped), len(self.state.rule_failures)
        kept: dict[GraphPath, dict[str, Value]] = {}
        guard = Guard(self.place_key() + (node.name, "untaken"), True,
                      f"the branch of If node '{node.name}' that its condition never takes runs", node.name, node.op_type)
        self._untaken += 1
        try:
            with self.hypothetically():
                try:
                    self.infer_subgraph(node, graph, [], guard=guard)
                except (OnnxsymError, ConstraintContradiction, Unreachable):  # (a RuleFailure is none of them)
                    pass  # (it never runs: what stops it there is no error of the model)
                else:
                    if len(self.state.rule_failures) == failures:
                        kept = {p: dict(v) for p, v in scoped.items() if p not in before}
        finally:
            self._untaken -= 1
        scoped.update(kept)

    @contextlib.contextmanager
    def hypothetically(self) -> Iterator[list[Constraint]]:
        """Inference whose effects are undone: a rule trying a case (a loop body at a chosen
        iteration) to prove something. Yields a list that receives, on leaving, the constraints
        the trial recorded (a ">= 1" decision waiting on a value among them); then everything
        it recorded is dropped: each field of the state and of the scope that says ``undone``
        (onnxsym.inference.state) gets its value from before the trial. What stays: its fresh
        symbols (a memoized result may hold one) and the failures of rules (with their warnings)."""
        mark = self.constraints.mark()
        saved, saved_scope = snapshot(self.state), snapshot(self.scope)
        failures = len(self.state.rule_failures)
        made: list[Constraint] = []
        try:
            yield made
        finally:
            made.extend(self.constraints.undo(mark))
            before: dict[str, frozenset[Constraint]] = saved["pending"]
            for name, decisions in self.state.pending.items():
                made.extend(_in_order(decisions - before.get(name, frozenset())))
            restore(self.state, saved)
            restore(self.scope, saved_scope)
            # a rule's failure stays reported (State.rule_failures is kept): so does its warning
            self.state.warnings.extend(self.state.rule_failures[failures:])

    def infer_function(self, node: Node, proto: onnx.NodeProto, fn: onnx.FunctionProto) -> list[Value | None]:
        """Infer a call by inferring the function's body in a scope of its own: it sees
        only the call's inputs and attributes, and its values stay inside."""
        key = (fn.domain, fn.name, fn.overload)
        if key in self._calls:
            return self._unknown_outputs(node, f"function '{fn.name}' calls itself")
        body, bound = functions.instantiate(fn, proto, node.inputs)
        opsets = {registry.canonical_domain(o.domain): o.version for o in fn.opset_import}
        self._calls.append(key)
        try:
            with self._entered(self.scope.function(bound, opsets)) as scope:
                self._run_nodes(body, scope.names())
                # (named by the call, its inputs listed: the domain's element bounds read no outer
                # value by their names)
                run = onnx.GraphProto(name=node.name or node.op_type, node=body.node,
                                      input=[onnx.ValueInfoProto(name=x) for x in fn.input])
                self.state.function_runs.append((run, self.when(), dict(scope.values)))
                return [scope.values.get(o) for o in fn.output]
        except GraphError as exc:
            raise GraphError(f"function '{fn.name}' called by node '{node.name}': {exc}") from None
        finally:
            self._calls.pop()


# The most terms a dim or a shape value's element may have. A graph that squares a size again
# and again (Tile by its own shape, 13 nodes) doubles an expression's terms each step and the
# cost of the next step with them: past this the dim is a fresh symbol, the element unknown.
# (Real models' dims have at most a few terms: 4 over the 162 models of models/.)
MAX_TERMS = 32


def _too_large(d: object) -> bool:
    return isinstance(d, dims.Expr) and len(d.terms) > MAX_TERMS


def _holds_too_large(value: tuple[Any, ...]) -> bool:
    """Whether an element of ``value`` is too large (its element types gathered at C speed
    first: most values hold numbers only, a Constant's up to 1024 of them)."""
    return dims.Expr in set(map(type, value)) and any(map(_too_large, value))


def _holds_if(g: onnx.GraphProto) -> bool:
    """Whether an If node is in ``g`` or in a subgraph of it."""
    for n in g.node:
        if not may_hold_subgraphs(n):
            continue
        if n.op_type == "If":
            return True
        for a in n.attribute:
            if any(map(_holds_if, [a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs)):
                return True
    return False


def _capped(node: Node, outs: Seq[Value | None]) -> Seq[Value | None]:
    """``outs`` with each dim of more than MAX_TERMS terms a fresh symbol, each value holding
    such an element unknown."""
    if not any(isinstance(v, Tensor) and (v.shape and any(map(_too_large, v.shape)) or
                                          v.value is not None and _holds_too_large(v.value)) for v in outs):
        return outs
    capped: list[Value | None] = []
    for i, v in enumerate(outs):
        if isinstance(v, Tensor) and v.shape is not None:
            shape = tuple(node.fresh(f"an expression of {len(d.terms)} terms, more than onnxsym follows", i, a)
                          if isinstance(d, dims.Expr) and _too_large(d) else d for a, d in enumerate(v.shape))
            value = None if v.value is None or _holds_too_large(v.value) else v.value
            v = Tensor(v.dtype, shape, value)
        capped.append(v)
    return capped


def _in_order(decisions: Iterable[Constraint]) -> list[Constraint]:
    """Pending decisions in a stable order."""
    return sorted(decisions, key=lambda c: str((c.lhs, c.node, c.op_type, c.reason)))


def _subgraph_value_info(g: onnx.GraphProto, path: GraphPath = ()) -> Iterator[tuple[GraphPath, onnx.ValueInfoProto]]:
    """The value_info entries of every subgraph of ``g``, nested ones too, each with the
    subgraph's path (see Scope.scoped_values)."""
    for n in g.node:
        for a in n.attribute:
            graphs = [(-1, a.g)] if a.type == onnx.AttributeProto.GRAPH else list(enumerate(a.graphs))
            for k, sg in graphs:
                here = path + (graph_key(n.output, a.name, k),)
                for vi in sg.value_info:
                    yield here, vi
                yield from _subgraph_value_info(sg, here)


def _decided(rel: Relation) -> bool | None:
    """Whether the ranges prove (True) or refute (False) ``rel``, else None."""
    if rel.op is Rel.NE:
        eq = dims.try_eq(rel.lhs, rel.rhs)
        return None if eq is None else not eq
    if rel.op is Rel.EQ:
        return dims.try_eq(rel.lhs, rel.rhs)
    if rel.op is Rel.GE:
        return dims.try_le(rel.rhs, rel.lhs)
    if rel.op is Rel.LE:
        return dims.try_le(rel.lhs, rel.rhs)
    return None
