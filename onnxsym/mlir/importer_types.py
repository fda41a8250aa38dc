"""The types torch-mlir's ONNX importer gives values onnxsym did not infer.

onnxsym infers no value of an If branch it proved untaken (and none a rule failed on), but
the branch is still written. Typing those values ``none`` makes a text IREE crashes on; the
importer types them from onnx's shape inference (it runs ``infer_shapes`` first), scope by
scope. So do we: its element type and rank, each dim a number where onnx knows it, else
unknown (``?``). Where onnx knows no shape we write an unknown rank, where the importer
writes rank 0 (its reading of an absent shape, which is no fact).
"""

from __future__ import annotations

from typing import Any, cast

import onnx

from ..inference.values import Optional_, Sequence, Tensor, Value

# Where a subgraph is in the model: per level, (node index, attribute index, graph index or -1).
Locator = tuple[tuple[int, int, int], ...]


def _value(tp: onnx.TypeProto) -> Value | None:
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        tt = tp.tensor_type
        if not tt.elem_type:
            return None
        shape = None
        if tt.HasField("shape"):
            # None for a dim onnx does not know: printed '?', and never bound (see build's _TypeOnly)
            shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
        return Tensor(tt.elem_type, cast(Any, shape))
    if which == "sequence_type":
        elem = _value(tp.sequence_type.elem_type)
        return Sequence(elem if isinstance(elem, Tensor) else None)
    if which == "optional_type":
        return Optional_(_value(tp.optional_type.elem_type))
    return None


class ImporterTypes:
    """Per subgraph (by locator) and name, the value onnx's shape inference gives; computed once,
    when first asked (a model whose every value onnxsym inferred never pays for it)."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self._inferred: onnx.ModelProto | None = None
        self._failed = False
        self._by_graph: dict[Locator, dict[str, onnx.TypeProto]] = {}

    def _graph(self, where: Locator) -> onnx.GraphProto | None:
        if self._inferred is None and not self._failed:
            try:
                self._inferred = onnx.shape_inference.infer_shapes(self.model)
            except Exception:  # onnx's inference refuses the model (or it is over 2 GB): nothing known
                self._failed = True
        if self._inferred is None:
            return None
        g, mine = self._inferred.graph, self.model.graph
        for node, attr, k in where:
            if node >= len(g.node) or g.node[node].op_type != mine.node[node].op_type:
                return None  # not the same graph: know nothing rather than something wrong
            a, b = g.node[node].attribute[attr], mine.node[node].attribute[attr]
            g, mine = (a.g, b.g) if k < 0 else (a.graphs[k], b.graphs[k])
        return g

    def value(self, where: Locator, name: str) -> Value | None:
        types = self._by_graph.get(where)
        if types is None:
            g = self._graph(where)
            types = {}
            if g is not None:
                for vi in [*g.value_info, *g.output, *g.input]:  # the importer's order of lookup
                    types.setdefault(vi.name, vi.type)
                for t in g.initializer:
                    types.setdefault(t.name, onnx.helper.make_tensor_type_proto(t.data_type, t.dims))
            self._by_graph[where] = types
        tp = types.get(name)
        return _value(tp) if tp is not None else None


def unknown(v: Value | None) -> bool:
    """Whether onnxsym knows nothing of ``v`` that a type can say (no value, no element type)."""
    return v is None or (isinstance(v, Tensor) and v.dtype == 0)
