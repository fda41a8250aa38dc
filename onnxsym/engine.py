"""The inference engine: visits nodes in topological order and runs each node's rule.

The engine owns the bookkeeping rules must not see: the environment of values,
fresh symbols and their provenance, recorded assumptions, and errors. It never
stops on a node it cannot infer: such outputs get fresh symbols (or an unknown
rank) with the reason recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence as Seq, Set, Tuple

import onnx
from onnx import helper, numpy_helper

from . import dims, registry
from .dims import Dim
from .errors import GraphError, OnnxsymError, ShapeContradiction
from .loader import SymbolTable, initializer_value, symbol_name, value_from_type
from .node import Node
from .values import Opaque, Optional_, Sequence, Tensor, Value


@dataclass(frozen=True)
class Provenance:
    """Where a fresh symbol was made and why."""

    symbol: str
    node: str
    op_type: str
    output: str
    axis: Optional[int]
    reason: str


@dataclass(frozen=True)
class Assumption:
    """A relation ``lhs == rhs`` that a node is only valid under."""

    lhs: Dim
    rhs: Dim
    node: str
    op_type: str
    reason: str


def convert_attribute(a: onnx.AttributeProto):
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


def _subgraph_free_names(g: onnx.GraphProto) -> Set[str]:
    """Names a subgraph reads from its enclosing scopes."""
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    used: Set[str] = set()
    for n in g.node:
        used.update(x for x in n.input if x)
        for a in n.attribute:
            for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                used |= _subgraph_free_names(sg)
        defined.update(n.output)
    used.update(o.name for o in g.output)
    return used - defined


def node_inputs(n: onnx.NodeProto) -> List[str]:
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


def topological_order(graph: onnx.GraphProto, available: Set[str]) -> List[int]:
    """Node indices in an order where every input is produced before use."""
    producer: Dict[str, int] = {}
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
    users: Dict[int, List[int]] = {}
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


class Engine:
    """Infers one model. Use :func:`onnxsym.infer` rather than this class directly."""

    def __init__(self, model: onnx.ModelProto, table: Optional[SymbolTable] = None):
        self.model = model
        self.table = table or SymbolTable()
        self.opsets: Dict[str, int] = {}
        for op in model.opset_import:
            self.opsets[registry.canonical_domain(op.domain)] = op.version
        self.env: Dict[str, Value] = {}
        self.fresh: Dict[str, Provenance] = {}
        # Values whose rank is unknown, so that no dim can carry the reason.
        self.unknown_rank: Dict[str, Provenance] = {}
        # Values computed inside subgraphs (If/Loop bodies), by name.
        self.subgraph_values: Dict[str, Value] = {}
        self.assumptions: List[Assumption] = []
        self.warnings: List[str] = []
        self.no_rule: Dict[Tuple[str, str], int] = {}
        self.functions = {(f.domain, f.name): f for f in model.functions}
        # Called as progress(done, total) after each node of the main graph.
        self.progress: Optional[Callable[[int, int], None]] = None

    # -- symbols --------------------------------------------------------------
    def fresh_symbol(self, node: Node, output: int, axis: Optional[int], reason: str,
                     lo: int, hi: int) -> Dim:
        base = symbol_name(node.name or f"{node.op_type}_{node.index}")
        base += f"_o{output}" if node.num_outputs > 1 else ""
        base += f"_d{axis}" if axis is not None else "_n"
        name = self.table.unique(base)
        while name in self.fresh:
            name = self.table.unique(name + "_")
        self.table.symbols[name] = dims.Sym(name, lo, hi)
        self.table.origin[name] = f"fresh: {node.op_type} '{node.name}'"
        out_name = node.output_names[output] if output < node.num_outputs else ""
        self.fresh[name] = Provenance(name, node.name, node.op_type, out_name, axis, reason)
        return dims.expr_of(self.table.symbols[name])

    def record_assumption(self, node: Node, a: Dim, b: Dim, reason: str) -> None:
        self.assumptions.append(Assumption(a, b, node.name, node.op_type, reason))

    # -- graphs ---------------------------------------------------------------
    def run(self) -> None:
        g = self.model.graph
        init_names = {t.name for t in g.initializer}
        for t in g.initializer:
            self.env[t.name] = initializer_value(t)
        for t in g.sparse_initializer:
            self.env[t.values.name] = Tensor(t.values.data_type, tuple(t.dims))
        for inp in g.input:
            # An initializer that is also an input is only a default: the caller may feed it.
            self.env[inp.name] = value_from_type(inp.type, self.table, inp.name)
        self._run_nodes(g, set(self.env) | init_names)

    def _run_nodes(self, graph: onnx.GraphProto, available: Set[str]) -> None:
        order = topological_order(graph, available)
        progress = self.progress if graph is self.model.graph else None
        for k, i in enumerate(order):
            self._infer_node(graph.node[i], i)
            if progress is not None:
                progress(k + 1, len(order))

    def _infer_node(self, n: onnx.NodeProto, index: int) -> None:
        domain = registry.canonical_domain(n.domain)
        opset = self.opsets.get(domain)
        if opset is None:
            if domain == "":
                raise GraphError(f"node '{node_label(n, index)}': the model imports no opset for the default domain")
            opset = 1
        inputs = [self.env.get(x) if x else None for x in n.input]
        attrs = {a.name: a for a in n.attribute}
        node = Node(n.op_type, domain, n.name or f"{n.op_type}_{index}", opset, inputs, list(n.input),
                    list(n.output), attrs, convert_attribute, self, index)
        rule = registry.find_rule(domain, n.op_type, opset)
        outs: Seq[Optional[Value]]
        if rule is None:
            key = (domain or "ai.onnx", n.op_type)
            self.no_rule[key] = self.no_rule.get(key, 0) + 1
            outs = self._no_rule(node)
        else:
            try:
                outs = rule(node)
            except ShapeContradiction as exc:
                raise ShapeContradiction(f"{n.op_type} node '{node.name}': {exc}") from None
            except OnnxsymError:
                raise
            except (dims.SymbolicDimError, dims.UndecidableError) as exc:
                outs = self._unknown_outputs(node, f"the rule needs a static value: {exc}")
            except Exception as exc:  # a rule's own failure must not stop inference
                self.warnings.append(f"{n.op_type} node '{node.name}': rule failed: {type(exc).__name__}: {exc}")
                outs = self._unknown_outputs(node, f"rule failed: {type(exc).__name__}: {exc}")
            if isinstance(outs, (Tensor, Sequence, Optional_, Opaque)):
                outs = [outs]
        for i, name in enumerate(n.output):
            if name:
                v = outs[i] if i < len(outs) else None
                if v is None or (isinstance(v, Tensor) and v.shape is None):
                    if name not in self.unknown_rank:
                        self.unknown_rank[name] = Provenance("", node.name, n.op_type, name, None,
                                                             "the rule could not tell the rank")
                self.env[name] = v if v is not None else Tensor(0, None)

    def _no_rule(self, node: Node) -> List[Value]:
        fn = self.functions.get((node.domain, node.op_type))
        reason = f"no rule for {node.domain or 'ai.onnx'}::{node.op_type} at opset {node.opset}"
        if fn is None and node.domain not in ("", "ai.onnx.ml", "com.microsoft"):
            self.warnings.append(f"{node.op_type} node '{node.name}': unknown operator "
                                 f"'{node.domain}::{node.op_type}'; its outputs get unknown shapes")
        return self._unknown_outputs(node, reason)

    def _unknown_outputs(self, node: Node, reason: str) -> List[Value]:
        outs = []
        for name in node.output_names:
            if name:
                self.unknown_rank[name] = Provenance("", node.name, node.op_type, name, None, reason)
            outs.append(Tensor(0, None))
        return outs

    def infer_subgraph(self, node: Node, graph: onnx.GraphProto, inputs: Seq[Optional[Value]]) -> List[Optional[Value]]:
        """Infer ``graph`` in a scope that sees the current values; inputs bound positionally."""
        saved = dict(self.env)
        try:
            for t in graph.initializer:
                self.env[t.name] = initializer_value(t)
            for i, inp in enumerate(graph.input):
                v = inputs[i] if i < len(inputs) else None
                self.env[inp.name] = v if v is not None else value_from_type(inp.type, self.table, inp.name)
            self._run_nodes(graph, set(self.env))
            outs = [self.env.get(o.name) for o in graph.output]
            for k, v in self.env.items():
                if k not in saved or saved[k] is not v:
                    self.subgraph_values[k] = v
            return outs
        finally:
            self.env = saved
