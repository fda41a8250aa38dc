"""An inference result as a small MLIR-shaped tree: one function, blocks, ops, values.

Every tensor value carries its binding (per dim, an int or a Symbol). Symbols are
made here, in the order the printed text first uses them, so that ``@S0, @S1, ...``
number them stably whatever style is printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import onnx

from ..dims import Dim
from ..inference.engine import node_inputs, node_label, topological_order
from ..inference.scope import graph_key
from ..inference.values import Tensor, Value
from .attrs import Resources, attribute, string_attr
from .importer_types import ImporterTypes, Locator, unknown
from .names import Namer
from .symbols import Entry, Symbols
from .types import value_type

if TYPE_CHECKING:
    from ..inference.result import Result

NO_VALUE = "none"  # the value of an omitted optional input, of MLIR type none


@dataclass(eq=False)
class Val:
    ref: str                         # how operands name it: %x or %x#1
    value: object                    # the onnxsym value (Tensor, Sequence, ...), None if unknown
    binding: list[Entry] | None = None


@dataclass(eq=False)
class Block:
    args: list[Val] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)


@dataclass(eq=False)
class Op:
    name: str                        # "onnx.Add", "onnx.Initializer", "func.return", ...
    operands: list[Val]
    results: list[Val]
    attrs: list[tuple[str, str]] = field(default_factory=list)
    regions: list[Block] = field(default_factory=list)
    result_name: str = ""            # %x for the results as a group
    source: onnx.NodeProto | onnx.TensorProto | None = None  # the node or initializer it stands for
    region_names: list[str] = field(default_factory=list)  # the graph attribute of each region


@dataclass
class Func:
    name: str
    body: Block
    outputs: list[Val]


@dataclass
class Program:
    func: Func
    symbols: Symbols
    resources: Resources
    namer: Namer


class _Builder:
    def __init__(self, result: Result, user_names: bool, resources: Resources) -> None:
        self.result = result
        self.namer = Namer()
        self.symbols = Symbols(self.namer, user_names)
        self.res = resources
        self.none: Val | None = None
        self.entry = Block()  # the function's body (a NoValue is placed at its start)
        self.importer = ImporterTypes(result.model)
        # the graph being built: its values (by name, its own scope's), its path and locator
        self.values: dict[str, Value] = result.values
        self.path: tuple[tuple[object, ...], ...] = ()
        self.where: Locator = ()

    def value(self, name: str) -> object:
        """The value ``name`` has in the graph being built; what onnx's inference says of it
        where onnxsym inferred nothing (an untaken branch): a type, no binding."""
        v = self.values.get(name)
        if unknown(v):
            known = self.importer.value(self.where, name)
            if known is not None:
                return _TypeOnly(known)
        return v

    def val(self, ref: str, value: object, concat_parts: tuple[int, list[Dim]] | None = None) -> Val:
        if isinstance(value, _TypeOnly):
            return Val(ref, value.value)
        v = Val(ref, value)
        if isinstance(value, Tensor) and value.shape is not None:
            if concat_parts is not None:
                axis, parts = concat_parts
                self.symbols.sum_of(value.shape[axis], parts)
            v.binding = self.symbols.binding(value.shape)
        return v

    def graph(self, g: onnx.GraphProto, scope: dict[str, Val], block: Block) -> None:
        """Fill ``block`` with the graph's initializers and nodes; ``scope`` maps names to values."""
        for t in g.initializer:
            if t.name in scope and t.name in {i.name for i in g.input}:
                continue  # an input with a default: the caller's value wins
            v = self.val(self.namer.fresh(t.name), self.value(t.name) or Tensor(t.data_type, tuple(t.dims)))
            block.ops.append(Op("onnx.Initializer", [], [v], [("onnx.name", string_attr(t.name)),
                                                               ("value", self.res.tensor(t, t.name))], source=t))
            scope[t.name] = v
        for i in _order(g, set(scope)):
            block.ops.append(self.node(g.node[i], i, scope))

    def operand(self, name: str, scope: dict[str, Val]) -> Val:
        if name:
            return scope[name]
        if self.none is None:  # one "no value" for every omitted optional input
            self.none = Val(self.namer.fresh("none"), NO_VALUE)
            self.entry.ops.insert(0, Op("onnx.NoValue", [], [self.none]))
        return self.none

    def node(self, n: onnx.NodeProto, index: int, scope: dict[str, Val]) -> Op:
        label = node_label(n, index)
        operands = [self.operand(x, scope) for x in n.input]
        attrs = [("onnx.name", string_attr(label))]
        if n.domain not in ("", "ai.onnx"):
            attrs.append(("onnx.domain", string_attr(n.domain)))
        regions, region_names = [], []
        for at in sorted(range(len(n.attribute)), key=lambda k: _region_order(n.attribute[k])):
            a = n.attribute[at]
            if a.type == onnx.AttributeProto.GRAPH:
                regions.append(self.subgraph(a.g, scope, n, (index, at, -1)))
                region_names.append(a.name)
            elif a.type == onnx.AttributeProto.GRAPHS:
                regions.extend(self.subgraph(sg, scope, n, (index, at, k)) for k, sg in enumerate(a.graphs))
                region_names.extend(a.name for _ in a.graphs)
            else:
                text = attribute(a, self.res, f"{label}_{a.name}")
                if text is not None:  # (None only for graph attributes, taken above)
                    attrs.append((a.name, text))
        if regions:  # which graph attribute each region is
            attrs.append(("onnx.regions", "[" + ", ".join(string_attr(r) for r in region_names) + "]"))
        outs = list(n.output)
        group = self.namer.fresh(next((o for o in outs if o), label))
        concat = self._concat_parts(n)
        results = []
        for k, o in enumerate(outs):
            ref = group if len(outs) == 1 else f"{group}#{k}"
            v = self.val(ref, self.value(o) if o else None, concat if k == 0 else None)
            results.append(v)
            if o:
                scope[o] = v
        return Op(f"onnx.{n.op_type}", operands, results, attrs, regions, group, n, region_names)

    def _concat_parts(self, n: onnx.NodeProto) -> tuple[int, list[Dim]] | None:
        """For a Concat, the axis and the inputs' dims along it (to define the output's dim as their sum)."""
        if n.op_type != "Concat" or n.domain not in ("", "ai.onnx") or not n.output or not n.output[0]:
            return None
        out = self.value(n.output[0])
        ins = [self.value(x) for x in n.input if x]
        axis = next((a.i for a in n.attribute if a.name == "axis"), None)
        if axis is None or not isinstance(out, Tensor) or out.shape is None or \
                not all(isinstance(t, Tensor) and t.shape is not None and len(t.shape) == len(out.shape) for t in ins):
            return None
        axis = axis + len(out.shape) if axis < 0 else axis
        if not 0 <= axis < len(out.shape):
            return None
        return axis, [t.shape[axis] for t in ins if isinstance(t, Tensor) and t.shape is not None]

    def subgraph(self, g: onnx.GraphProto, outer: dict[str, Val], owner: onnx.NodeProto,
                 step: tuple[int, int, int]) -> Block:
        """A subgraph's block; its names are looked up in its own scope (siblings may reuse them)."""
        saved = self.values, self.path, self.where
        self.path = self.path + (graph_key(owner.output, owner.attribute[step[1]].name, step[2]),)
        self.where = self.where + (step,)
        self.values = self.result.scoped_values.get(self.path, {})  # none: never inferred
        try:
            scope = dict(outer)
            block = Block()
            for inp in g.input:
                v = self.val(self.namer.fresh(inp.name), self.value(inp.name))
                block.args.append(v)
                scope[inp.name] = v
            self.graph(g, scope, block)
            block.ops.append(Op("onnx.Yield", [scope[o.name] for o in g.output], []))
            return block
        finally:
            self.values, self.path, self.where = saved


@dataclass(frozen=True)
class _TypeOnly:
    """A value known only by its type (from onnx's inference): no dims to bind."""
    value: object


def _region_order(a: onnx.AttributeProto) -> tuple[bool, bool, str]:
    """If's branches as then, else (as onnx-mlir has them); other graphs by name."""
    return (a.name != "then_branch", a.name != "else_branch", a.name)


def _order(g: onnx.GraphProto, available: set[str]) -> list[int]:
    """The nodes in the file's order when it is topological (ONNX requires it), else sorted."""
    have = set(available)
    for n in g.node:
        if not all(x in have for x in node_inputs(n)):
            return topological_order(g, available)
        have.update(n.output)
    return list(range(len(g.node)))


def build(result: Result, user_names: bool = False, weights: bool = False, base_dir: str | None = None) -> Program:
    """The program of an inference result (the main graph as one function)."""
    b = _Builder(result, user_names, Resources(weights, base_dir))
    g = result.model.graph
    body = b.entry
    scope: dict[str, Val] = {}
    for i, inp in enumerate(g.input):
        v = b.val(b.namer.fresh(f"arg{i}"), b.value(inp.name))
        body.args.append(v)
        scope[inp.name] = v
    b.graph(g, scope, body)
    outputs = [scope[o.name] for o in g.output]
    body.ops.append(Op("func.return", outputs, []))
    return Program(Func(g.name or "main", body, outputs), b.symbols, b.res, b.namer)


def type_of(v: Val, encoding: str | None = None) -> str:
    if v.value is NO_VALUE:
        return "none"
    return value_type(v.value, encoding)
