"""The smallest and largest element of an integer tensor, as dims.

Index inputs (of Gather, GatherElements, GatherND, ScatterND ...) are mostly
computed from shapes: ``Range(0, seq)``, ``Range(past, past + seq)``, a shape
element minus one. Their element bounds give the index bounds a node needs.
Bounds are found on demand, walking back through the ops that keep, combine or
shift elements; anything else has no bound (``None``), and no condition is made.
"""

from __future__ import annotations

import onnx
from onnx import numpy_helper

from .. import dims
from ..dims import Dim
from ..inference.values import Tensor
from ..semantics.intops import INT_TYPES

Bounds = tuple[Dim, Dim] | None

# Ops whose output elements are some of input 0's elements.
_KEEPS = {"Identity", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Expand", "Tile", "Transpose", "Slice",
          "Gather", "GatherElements", "GatherND", "Cast", "ReduceMax", "ReduceMin"}


class Elements:
    """Element bounds of the values of one inference result: of its main graph, or of a
    subgraph's run (``graph``, ``values``), where a name the subgraph does not make is the
    enclosing graph's (``outer``: an If branch indexing with a constant, AffineGrid's body)."""

    def __init__(self, result, graph: onnx.GraphProto | None = None, values=None,
                 outer: Elements | None = None):
        self.values = result.values if values is None else values
        self._graph = result.model.graph if graph is None else graph
        self._outer = outer
        self._producer: dict[str, onnx.NodeProto] | None = None
        self._initializers: dict[str, onnx.TensorProto] | None = None
        self._inputs: set[str] | None = None
        self._memo: dict[str, Bounds] = {}
        self._fed: set[str] | None = None  # the names whose elements the input data decide

    # Both maps are built on the first bound that needs them: reading every node of
    # a large graph costs more than most domains' whole work.
    @property
    def producer(self) -> dict[str, onnx.NodeProto]:
        if self._producer is None:
            self._producer = {o: n for n in self._graph.node for o in n.output if o}
        return self._producer

    @property
    def initializers(self) -> dict[str, onnx.TensorProto]:
        if self._initializers is None:
            self._initializers = {t.name: t for t in self._graph.initializer}
        return self._initializers

    @property
    def inputs(self) -> set[str]:
        """The graph's inputs: no node produces one (inference refuses such a graph)."""
        if self._inputs is None:
            self._inputs = {x.name for x in self._graph.input}
        return self._inputs

    def bounds(self, name: str) -> Bounds:
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = None  # (a cycle cannot happen in a valid graph; guard anyway)
        b = self._compute(name)
        self._memo[name] = b
        return b

    def _compute(self, name: str) -> Bounds:
        v = self.values.get(name)
        if not isinstance(v, Tensor) or v.dtype not in INT_TYPES:
            return None
        if v.value is not None:
            return _of_elements(v.value)
        t = self.initializers.get(name)
        if t is not None:
            return _of_initializer(t)
        if name in self.inputs:
            return None  # (a token id: the producer map, a read of every node, is not built for it)
        n = self.producer.get(name)
        if n is None:  # (a subgraph reads the enclosing graph's values by name)
            return None if self._outer is None else self._outer.bounds(name)
        op = n.op_type if n.domain in ("", "ai.onnx") else ""
        ins = list(n.input)
        if op in _KEEPS and ins:
            if op == "Cast" and _attr(n, "to") not in INT_TYPES:
                return None
            return self.bounds(ins[0])
        if op == "Range" and len(ins) == 3:
            return self._range(n, v)
        if op == "Concat":
            return _union([self.bounds(x) for x in ins if x])
        if op == "Where" and len(ins) == 3:
            return _union([self.bounds(ins[1]), self.bounds(ins[2])])
        if op in ("Add", "Sub", "Mul") and len(ins) == 2:
            return _arith(op, self.bounds(ins[0]), self.bounds(ins[1]))
        if op == "ConstantOfShape":
            return _fill(n)
        if op == "Clip" and ins:
            return self._clip(ins)
        if op == "Neg":
            b = self.bounds(ins[0])
            return None if b is None else (dims.neg(b[1]), dims.neg(b[0]))
        if op in ("Min", "Max"):
            known = [b for b in (self.bounds(x) for x in ins if x) if b is not None]
            if len(known) != len([x for x in ins if x]):
                return None
            f = dims.dmin if op == "Min" else dims.dmax
            return f(*[b[0] for b in known]), f(*[b[1] for b in known])
        return None

    def reads_data(self, name: str) -> bool:
        """Whether ``name``'s elements depend on a graph input's elements (not on its shape only:
        what a Shape or Size reads is a size), through this graph and those around it; a
        subgraph's own input (a Loop's iteration, its carried state) counts as data. One pass
        over the graph (its nodes are in order), on the first call."""
        if self._fed is None:
            own = set(self.producer) | set(self.initializers) | self.inputs
            fed = {x for x in self.inputs if x not in self.initializers}
            outer = self._outer

            def tainted(x: str) -> bool:
                return x in fed or (x not in own and outer is not None and outer.reads_data(x))

            for n in self._graph.node:
                if n.op_type in ("Shape", "Size") and n.domain in ("", "ai.onnx"):
                    continue
                if any(tainted(x) for x in n.input if x):
                    fed.update(o for o in n.output if o)
            self._fed = fed
        if name in self._fed:
            return True
        return name not in self.producer and name not in self.initializers and name not in self.inputs \
            and self._outer is not None and self._outer.reads_data(name)

    def columns(self, name: str, k: int) -> list[Bounds]:
        """The bounds of each of the ``k`` columns of ``name``'s last axis, where it is a Concat
        on that axis of one-column parts (None for a column of a wider part: its columns are
        not told apart), or whose elements are known (a constant's columns)."""
        known = self._known_columns(name, k)
        if known is not None:
            return known
        n = self.producer.get(name)
        v = self.values.get(name)
        if n is None or n.op_type != "Concat" or n.domain not in ("", "ai.onnx") or \
                not isinstance(v, Tensor) or not v.shape:
            return [None] * k
        axis = _attr(n, "axis")
        if axis is None or axis not in (-1, len(v.shape) - 1):
            return [None] * k
        out: list[Bounds] = []
        for x in n.input:
            part = self.values.get(x) if x else None
            width = part.shape[-1] if isinstance(part, Tensor) and part.shape else None
            if not isinstance(width, int):
                return [None] * k
            out += [self.bounds(x)] if width == 1 else [None] * width
        return out if len(out) == k else [None] * k

    def _known_columns(self, name: str, k: int) -> list[Bounds] | None:
        """Each column's bounds of a tensor whose elements are known (a value, an initializer)
        with ``k`` columns on its last axis, else None."""
        v = self.values.get(name)
        if not isinstance(v, Tensor) or v.dtype not in INT_TYPES or not v.shape or v.shape[-1] != k:
            return None
        if v.value is not None:
            if len(v.value) % k:
                return None
            return [_of_elements(v.value[j::k]) for j in range(k)]
        t = self.initializers.get(name)
        if t is None or t.data_location == onnx.TensorProto.EXTERNAL:
            return None
        arr = numpy_helper.to_array(t)
        if arr.ndim == 0 or arr.shape[-1] != k or arr.size == 0:
            return None
        cols = arr.reshape(-1, k)
        return [(int(cols[:, j].min()), int(cols[:, j].max())) for j in range(k)]

    def _range(self, n: onnx.NodeProto, out: Tensor) -> Bounds:
        start, limit, delta = (self._scalar(x) for x in n.input)
        if start is None or delta is None or not isinstance(delta, int) or delta == 0 or out.shape is None:
            return None
        count = out.shape[0]
        last = dims.add(start, dims.mul(delta, dims.sub(count, 1)))
        return (start, last) if delta > 0 else (last, start)

    def _clip(self, ins: list[str]) -> Bounds:
        """Clip(x, lo, hi) is min(max(x, lo), hi) (opset 11 on: the bounds are inputs; an integer
        tensor has no Clip before opset 12), monotone in x: x's least and largest elements clipped
        are the output's. Where x's are not known, neither are the output's: lo and hi bound the
        elements but need not be reached (LayoutLMv3 clips fed box sizes to [0, 1023] and gathers
        from 128 rows: the data keep them small), and a bound stated of them would refuse sizes
        that run."""
        lo = self._scalar(ins[1]) if len(ins) > 1 and ins[1] else None
        hi = self._scalar(ins[2]) if len(ins) > 2 and ins[2] else None

        def clip(v: Dim) -> Dim:
            v = v if lo is None else dims.dmax(v, lo)
            return v if hi is None else dims.dmin(v, hi)

        b = self.bounds(ins[0])
        return None if b is None else (clip(b[0]), clip(b[1]))

    def _scalar(self, name: str) -> Dim | None:
        v = self.values.get(name)
        if isinstance(v, Tensor) and v.value is not None and len(v.value) == 1 and not isinstance(v.value[0], float):
            return v.value[0]
        return None


def _attr(n: onnx.NodeProto, name: str):
    for a in n.attribute:
        if a.name == name:
            return a.i
    return None


def _fill(n: onnx.NodeProto) -> Bounds:
    """ConstantOfShape: every element is its ``value`` (an integer output has one: without it
    the fill is a float 0). With no element at all, no index needs anything: the fill stands."""
    for a in n.attribute:
        if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
            arr = numpy_helper.to_array(a.t).reshape(-1)
            if arr.size == 1 and arr.dtype.kind in "iu":
                return int(arr[0]), int(arr[0])
    return None


def _of_elements(value: tuple) -> Bounds:
    if not value:
        return None
    if any(isinstance(x, (bool, float)) or not isinstance(x, (int, dims.Expr)) for x in value):
        return None  # not indices
    ints = [x for x in value if isinstance(x, int)]
    exprs = list(dict.fromkeys(x for x in value if isinstance(x, dims.Expr)))
    parts = ([min(ints), max(ints)] if ints else []) + exprs
    return dims.dmin(*parts), dims.dmax(*parts)


def _of_initializer(t: onnx.TensorProto) -> Bounds:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        return None  # a weight file is not read for this
    arr = numpy_helper.to_array(t)
    if arr.size == 0:
        return None
    return int(arr.min()), int(arr.max())


def _union(bs) -> Bounds:
    if not bs or any(b is None for b in bs):
        return None
    return dims.dmin(*[b[0] for b in bs]), dims.dmax(*[b[1] for b in bs])


def _arith(op: str, a: Bounds, b: Bounds) -> Bounds:
    if a is None or b is None:
        return None
    if op == "Add":
        return dims.add(a[0], b[0]), dims.add(a[1], b[1])
    if op == "Sub":
        return dims.sub(a[0], b[1]), dims.sub(a[1], b[0])
    # Mul: exact only by one non-negative value (a constant, or a size: the row offsets
    # Range(batch) * total of a flattened [batch, total] mask)
    for x, c in ((a, b), (b, a)):
        if c[0] is c[1] or c[0] == c[1]:
            k = c[0]
            if (k >= 0) if isinstance(k, int) else dims.range_of(k)[0] >= 0:
                return dims.mul(k, x[0]), dims.mul(k, x[1])
    return None
