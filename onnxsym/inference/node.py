"""The view of one node that a rule sees: inputs as values, attributes as Python
values, and the means to make fresh symbols. No protobuf leaks through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, overload

import onnx

from .. import dims
from ..dims import Dim
from ..errors import GraphError, ShapeContradiction
from ..facts import branching, edges
from ..facts.constraints import Constraints
from ..facts.fact import Constraint, Guard, Origin, Relation
from ..model import validate
from ..semantics.shapes import Shape
from .provenance import Kind
from .state import State
from .values import Tensor, Value, tensor_from_array, unranked

if TYPE_CHECKING:
    import numpy as np

_MISSING = object()
_A = onnx.AttributeProto


class Host(Protocol):
    """What a node asks of the engine that made it: the node records fresh symbols,
    constraints and decisions through it. Naming the engine by this protocol, not by its
    class, keeps this module below the engine (the engine imports nodes, never the reverse)."""

    base_dir: str | None  # where external data is: a rule may read a small external tensor
    state: State
    constraints: Constraints

    def fresh_symbol(self, node: Node, output: int, axis: int | None, reason: str,
                     lo: int, hi: int, kind: Kind = ..., bound: Dim | None = None) -> Dim: ...

    def record_unknown_rank(self, node: Node, output: int, reason: str, kind: Kind = ...) -> None: ...

    def bound_fresh(self, d: Dim, bound: Dim) -> None: ...

    def reads_data(self, name: str) -> bool: ...

    def is_resolved(self, d: Dim) -> bool: ...

    def record_equal(self, node: Node, a: Dim, b: Dim, reason: str, origin: Origin = ..., solve: bool = ...) -> None: ...

    def record_at_least(self, node: Node, d: Dim, lo: int, reason: str) -> None: ...

    def record_at_least_where(self, node: Node, d: Dim, lo: int, where: Sequence[tuple[Relation, str]],
                              reason: str) -> None: ...

    def record_equal_where(self, node: Node, a: Dim, b: Dim, where: Sequence[tuple[Relation, str]],
                           reason: str) -> None: ...

    def record_bound(self, name: str, op_type: str, d: Dim, hi: int, reason: str) -> None: ...

    def record_constraint(self, c: Constraint) -> None: ...

    def relied_on(self, compute: Callable[..., Any], args: Sequence[Any]) -> list[Dim]: ...

    def check_positive(self, node: Node, relied: list[Dim], what: Callable[[], str], output: int | None) -> None: ...

    def act_on_pending(self, node: Node, value: str, what: str) -> None: ...

    def infer_subgraph(self, node: Node, graph: onnx.GraphProto, inputs: Sequence[Value | None],
                       born: set[str] | None = None, sure: bool = False,
                       guard: Guard | None = None) -> list[Value | None]: ...

    def place_key(self) -> tuple[str, ...]: ...

    def infer_untaken(self, node: Node, graph: onnx.GraphProto) -> None: ...

    def branch_choice(self, node: Node) -> branching.Choice | None: ...

    def note_split(self, node: Node, relation: Relation) -> None: ...

    def record_branch(self, node: Node, holds: Relation, reason: str) -> None: ...

    def hypothetically(self) -> AbstractContextManager[list[Constraint]]: ...


class RankUnknown(Exception):
    """A rule cannot go on without the rank of an input whose rank is unknown (raised by
    :func:`shape_of`). The engine gives every output of the node an unknown rank (output
    ``k`` of type ``dtypes[k]``, 0 past them) and records ``reason`` for each: no rule result
    is wrong for want of a rank, and explain can tell the user why."""

    def __init__(self, reason: str, dtypes: Sequence[int] = ()):
        super().__init__(reason)
        self.reason = reason
        self.dtypes = tuple(dtypes)


def shape_of(t: Tensor, *dtypes: int, why: str = "input rank unknown", rank: int | tuple[int, ...] = ()) -> Shape:
    """The shape of input tensor ``t``. Where its rank is unknown, raises :class:`RankUnknown`:
    the node's outputs then have an unknown rank, of element types ``dtypes`` (one per
    output, in order), recorded with ``why``. With ``rank``, a known rank other than it (or
    than each of them) contradicts the op's spec."""
    shape = t.shape
    if shape is None:
        raise RankUnknown(why, dtypes)
    allowed = (rank,) if isinstance(rank, int) else rank
    if allowed and len(shape) not in allowed:
        raise ShapeContradiction(f"expected rank {' or '.join(map(str, allowed))}, got shape {[str(d) for d in shape]}")
    return shape


class Node:
    """One node being inferred.

    ``inputs[i]`` is the value of input ``i`` (``None`` for an omitted optional
    input), ``num_outputs`` how many outputs the node declares, ``opset`` the
    model's version of the node's domain.
    """

    __slots__ = ("op_type", "domain", "name", "opset", "inputs", "input_names",
                 "output_names", "_attrs", "_convert", "_engine", "index", "_cache", "touched", "decisions",
                 "bounds")

    def __init__(self, op_type: str, domain: str, name: str, opset: int, inputs: list[Value | None],
                 input_names: Sequence[str], output_names: Sequence[str], attrs: dict[str, onnx.AttributeProto],
                 convert: Callable[[onnx.AttributeProto], Any], engine: Host, index: int):
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
        self._cache: dict[str, Any] = {}
        # The engine's bookkeeping of this node: whether the rule recorded anything through it
        # (then its result is this node's own, never reused for an identical node: see
        # onnxsym.inference.memo), and the ">= 1" decisions and the bounds it recorded (replayed
        # where it is reused).
        self.touched = False
        self.decisions: list[Constraint] = []
        self.bounds: list[tuple[Dim, int, str]] = []

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

    # Typed attributes (onnx-ir's ``Attr.as_int()``): each checks the attribute's type, and gives
    # ``default`` (None unless given) when the node does not set it.
    @overload
    def attr_int(self, name: str) -> int | None: ...
    @overload
    def attr_int(self, name: str, default: int) -> int: ...
    def attr_int(self, name: str, default: int | None = None) -> int | None:
        value: int | None = self._typed(name, _A.INT, default)
        return value

    @overload
    def attr_ints(self, name: str) -> list[int] | None: ...
    @overload
    def attr_ints(self, name: str, default: list[int]) -> list[int]: ...
    def attr_ints(self, name: str, default: list[int] | None = None) -> list[int] | None:
        value: list[int] | None = self._typed(name, _A.INTS, default)
        return value

    @overload
    def attr_float(self, name: str) -> float | None: ...
    @overload
    def attr_float(self, name: str, default: float) -> float: ...
    def attr_float(self, name: str, default: float | None = None) -> float | None:
        value: float | None = self._typed(name, _A.FLOAT, default)
        return value

    @overload
    def attr_floats(self, name: str) -> list[float] | None: ...
    @overload
    def attr_floats(self, name: str, default: list[float]) -> list[float]: ...
    def attr_floats(self, name: str, default: list[float] | None = None) -> list[float] | None:
        value: list[float] | None = self._typed(name, _A.FLOATS, default)
        return value

    @overload
    def attr_str(self, name: str) -> str | None: ...
    @overload
    def attr_str(self, name: str, default: str) -> str: ...
    def attr_str(self, name: str, default: str | None = None) -> str | None:
        value: str | None = self._typed(name, _A.STRING, default)
        return value

    @overload
    def attr_strs(self, name: str) -> list[str] | None: ...
    @overload
    def attr_strs(self, name: str, default: list[str]) -> list[str]: ...
    def attr_strs(self, name: str, default: list[str] | None = None) -> list[str] | None:
        value: list[str] | None = self._typed(name, _A.STRINGS, default)
        return value

    def attr_tensor(self, name: str) -> np.ndarray | None:
        """A TENSOR attribute, as a numpy array."""
        out: np.ndarray | None = self._typed(name, _A.TENSOR, None)
        return out

    def attr_tensor_value(self, name: str) -> Tensor | None:
        """A TENSOR attribute as a value: its type and shape, and its elements when small. One
        stored as external data (``convert_attribute``) is read from the model's folder, as an
        initializer is; where it cannot be, its elements are unknown (and a warning says why)."""
        proto = self._attrs.get(name)
        if proto is not None and proto.type == _A.TENSOR and proto.t.data_location == onnx.TensorProto.EXTERNAL:
            from ..model.loader import initializer_value

            return initializer_value(proto.t, self._engine.base_dir, self._engine.state.warnings)
        if proto is not None and proto.type == _A.TENSOR:  # (its value is one of its bytes alone)
            from ..model.loader import decoded

            out: Tensor = decoded(proto.t, lambda: tensor_from_array(self.attr_tensor(name)))
            return out
        arr = self.attr_tensor(name)
        return None if arr is None else tensor_from_array(arr)

    def attr_graph(self, name: str) -> onnx.GraphProto | None:
        """A GRAPH attribute (a subgraph, for :meth:`infer_graph`)."""
        out: onnx.GraphProto | None = self._typed(name, _A.GRAPH, None)
        return out

    def _typed(self, name: str, kind: int, default: Any) -> Any:
        proto = self._attrs.get(name)
        if proto is None:
            return default
        if proto.type != kind:
            spec = validate.attribute_type(self.domain, self.op_type, self.opset, name)
            given, asked = validate.attribute_type_name(proto.type), validate.attribute_type_name(kind)
            if spec == proto.type:  # the model is right (the schema was checked): the rule misreads it
                raise TypeError(f"the rule reads attribute '{name}' as {asked}; the ONNX spec makes it {given}")
            raise GraphError(f"{self.op_type} node '{self.name}': attribute '{name}' must be {asked}, "
                             f"the model gives {given}")
        return self.attr(name)

    def graph_attribute(self, graph: object) -> tuple[str, int]:
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

    def value(self, i: int) -> tuple[Any, ...] | None:
        """The known elements of input ``i`` (row-major), or ``None``."""
        t = self.tensor(i)
        return None if t is None else t.value

    def _recording(self) -> Host:
        """The engine, for a call that records something of this node (a fresh symbol, a
        constraint, a subgraph's inference): the rule's result is then this node's own. A
        question with no effect asks ``self._engine`` directly."""
        self.touched = True
        return self._engine

    # -- unknowns ---------------------------------------------------------------
    def fresh(self, reason: str, output: int = 0, axis: int | None = None,
              lo: int = dims.FRESH_LO, hi: int = dims.INT64_MAX, kind: Kind = Kind.UNSUPPORTED,
              bound: Dim | None = None) -> Dim:
        """A new symbol for a dim this rule cannot determine, recorded with why (and its
        kind: ``Kind.DATA_DEPENDENT`` where the size depends on tensor elements); ``bound``:
        an upper bound the op proves over other symbols (NonZero's count <= numel)."""
        return self._recording().fresh_symbol(self, output, axis, reason, lo, hi, kind, bound)

    def bound_fresh(self, d: Dim, bound: Dim) -> None:
        """Give fresh symbol ``d`` (made elsewhere, with no bound) the upper bound ``bound``
        that this node needs to run, for show, check and cost's worst case."""
        self._recording().bound_fresh(d, bound)

    def reads_data(self, i: int) -> bool:
        """Whether input ``i``'s elements are computed from a graph input's elements (a path of
        the main graph leads back to one, past no Shape or Size): a size read from it is data."""
        return i < len(self.input_names) and bool(self.input_names[i]) and self._engine.reads_data(self.input_names[i])

    def fresh_shape(self, rank: int, reason: str, output: int = 0) -> tuple[Dim, ...]:
        return tuple(self.fresh(reason, output, axis) for axis in range(rank))

    def unknown_rank(self, reason: str, output: int = 0, dtype: int = 0,
                     kind: Kind = Kind.UNSUPPORTED) -> Tensor:
        """A tensor whose rank this rule cannot tell, recorded with why."""
        self._recording().record_unknown_rank(self, output, reason, kind)
        return unranked(dtype)

    def is_resolved(self, d: Dim) -> bool:
        """Whether ``d`` is an expression over the model's own symbols (no fresh symbol)."""
        return self._recording().is_resolved(d)

    def kinds_of(self, d: Dim) -> set[Kind]:
        """The kinds of the fresh symbols in ``d`` (empty when it has none): a merge of a
        data-dependent count is data-dependent too."""
        if isinstance(d, int):
            return set()
        fresh = self._engine.state.fresh
        return {fresh[s.name].kind for s in dims.free_symbols(d) if s.name in fresh}

    def equalities(self) -> list[tuple[Dim, Dim]]:
        """The equalities ``a == b`` that nodes of the main graph need to run, so that hold in
        every run of the model (none under a guard, none a user's or a declaration's claim)."""
        from ..facts.fact import Rel

        cs = self._recording().constraints
        return [(cs.resolve(c.lhs), cs.resolve(c.rhs)) for c in cs.items
                if c.rel is Rel.EQ and c.origin is Origin.NEEDED and not c.when]

    def require_equal(self, a: Dim, b: Dim, reason: str) -> None:
        """Record that this node runs only when ``a == b`` (MatMul's inner dims); where that is
        linear in a symbol, the symbol is solved."""
        if a is b or (type(a) is int and a == b):
            return  # holds by itself (and leaves the rule's result reusable for identical nodes)
        self._recording().record_equal(self, a, b, reason)

    def require_of_data(self, a: Dim, b: Dim, reason: str) -> None:
        """Record that this node runs only when ``a == b``, where a side is a count the data give
        (NonZero's): a condition on the data, which the domain says (data-dependent) and cannot
        promise; never solved (the count stays its own symbol)."""
        if a is b or (type(a) is int and a == b):
            return
        self._recording().record_equal(self, a, b, reason, solve=False)

    def require_at_least(self, d: Dim, lo: int, reason: str) -> None:
        """Record that this node runs only when ``d >= lo`` (onnxruntime refuses it otherwise):
        the ranges of ``d``'s symbols narrow to the values that allow it."""
        if dims.try_le(lo, d) is True:
            return  # holds by itself (and leaves the rule's result reusable for identical nodes)
        self._recording().record_at_least(self, d, lo, reason)

    def require_at_least_where(self, d: Dim, lo: int, where: Sequence[tuple[Relation, str]], reason: str) -> None:
        """Record that this node runs only when ``d >= lo`` where each relation of ``where`` (over
        the sizes, with its text) holds: a condition under guards the sizes decide."""
        if dims.try_le(lo, d) is True:
            return
        self._recording().record_at_least_where(self, d, lo, where, reason)

    def require_equal_where(self, a: Dim, b: Dim, where: Sequence[tuple[Relation, str]], reason: str) -> None:
        """Record that this node runs only when ``a == b`` where each relation of ``where`` (over
        the sizes, with its text) holds: a condition under guards the sizes decide, never solved."""
        if a is b or (type(a) is int and a == b) or dims.try_eq(a, b) is True:
            return
        self._recording().record_equal_where(self, a, b, where, reason)

    def assume_at_most(self, d: Dim, hi: int, reason: str) -> None:
        """Record that this node's result is exact only while ``d <= hi``: an assumption
        the report shows, for bounds no real model reaches (float32 size arithmetic). The rule's
        result stays reusable by identical nodes: the memo records the bound again for each."""
        self._engine.record_bound(self.name, self.op_type, d, hi, reason)
        self.bounds.append((d, hi, reason))

    def record(self, c: Constraint) -> None:
        """Record a bound or a ``>= 1`` decision that a trial made (see :meth:`try_graph`),
        rewritten to hold where its result is used; it keeps the node that made it."""
        self._recording().record_constraint(c)

    def decide(self, compute: Callable[..., Any], args: Sequence[Any], what: Callable[[Any], str],
               output: int | None = None) -> Any:
        """``compute(*args)`` (free of side effects), recording where its answer holds only
        because a graph-input symbol is >= 1 by default: ``what(answer)`` says what was
        decided. With ``output``, the record goes with that output's value and the node
        that acts on it (an If taking a branch) records it; see :mod:`onnxsym.facts.edges`."""
        answer = compute(*args)
        if self._engine is not None and edges.may_rely(args):
            # a decision that relies on nothing leaves the rule's result reusable by identical nodes
            relied = self._engine.relied_on(compute, args)
            if relied:
                # a record now is replayed for the nodes that reuse this result; one that goes
                # with an output waits for the node acting on it, so that rule is not reused
                engine = self._engine if output is None else self._recording()
                engine.check_positive(self, relied, lambda: what(answer), output)
        return answer

    def act_on(self, i: int, what: str) -> None:
        """This node takes a decision from input ``i``'s value (an If's branch, a Where's
        pick): the ``>= 1`` assumptions behind that value are recorded with this node."""
        if self._engine is not None and i < len(self.input_names) and self.input_names[i]:
            self._recording().act_on_pending(self, self.input_names[i], what)

    def infer_graph(self, graph: onnx.GraphProto, inputs: Sequence[Value | None], born: set[str] | None = None,
                    sure: bool = False, guard: Guard | None = None) -> list[Value | None]:
        """Infer a subgraph attribute with the given input values; returns its outputs.
        ``born``, when given, receives the names of the fresh symbols made inside; ``sure``:
        the graph runs whenever this node does (an If's branch taken by a known condition);
        else ``guard`` (an :class:`onnxsym.facts.fact.Guard`) says when it runs, and what the
        graph needs is recorded under it (by default: under "this subgraph runs")."""
        return self._recording().infer_subgraph(self, graph, inputs, born, sure, guard)

    def infer_untaken(self, graph: onnx.GraphProto) -> None:
        """Infer a subgraph that never runs (an If branch its known condition rules out) for
        the shapes written into it alone: see :meth:`Engine.infer_untaken`."""
        self._recording().infer_untaken(self, graph)

    def in_main_graph(self) -> bool:
        """Whether this node is a node of the model's main graph (no subgraph's)."""
        return not self._engine.place_key()

    def runs_guard(self, relation: Relation, text: str) -> Guard:
        """The guard of a subgraph of this node that runs exactly where ``relation`` (over the
        sizes) holds."""
        engine = self._engine
        return Guard(engine.place_key() + (self.name, "runs"), True, text, self.name, self.op_type, relation)

    def branch_guards(self) -> tuple[Guard, Guard]:
        """The guards of this If's then and else branches (see :func:`onnxsym.facts.branching.guards`)."""
        return branching.guards(self._engine, self)

    # -- an If the sizes decide (see onnxsym.facts.branching) ----------------------------
    def relation(self, i: int) -> Relation | None:
        """The comparison of shape values that computed the boolean input ``i``, or None."""
        name = self.input_names[i] if i < len(self.input_names) else ""
        return branching.relation_of(self._engine, name) if name else None

    def indicator(self, i: int) -> Dim | None:
        """The boolean input ``i`` as a dim (1 true, 0 false), where it is a comparison of shape
        values or Not, And, Or of such; else None."""
        name = self.input_names[i] if i < len(self.input_names) else ""
        return branching.indicator_of(self._engine, name) if name and self._engine is not None else None

    def branch_choice(self) -> branching.Choice | None:
        """The branch this If takes, where an earlier inference found that the nodes after it
        run with one branch only (a :class:`onnxsym.facts.branching.Choice`), else None."""
        return self._recording().branch_choice(self)

    def note_split(self, relation: Relation) -> None:
        """This If's branches differ in rank and ``relation`` decides which runs: inference
        is tried again with each branch taken."""
        self._recording().note_split(self, relation)

    def require_relation(self, holds: Relation, reason: str) -> None:
        """Record that this node runs only where the relation ``holds``."""
        self._recording().record_branch(self, holds, reason)

    def try_graph(self, graph: onnx.GraphProto, inputs: Sequence[Value | None],
                  born: set[str] | None = None) -> tuple[list[Value | None], list[Constraint]]:
        """Infer a subgraph attribute as a trial, to prove something of a case: its outputs and
        the constraints it would have recorded; nothing of the trial
        stays recorded, so a rule that uses the outputs must see that those constraints hold.
        ``born`` as for :meth:`infer_graph`."""
        with self._recording().hypothetically() as made:
            outs = self._recording().infer_subgraph(self, graph, inputs, born)
        return outs, made

    def __repr__(self) -> str:
        return f"{self.op_type} node {self.name!r}"
