"""What onnxruntime's load infers of a Scan's body, held to what onnxsym infers.

onnxruntime runs onnx's shape inference when it loads a model, and its Scan holds each body
output to the shape that inference gave it ("Mismatch between expected shape and shape from
first output"). Where onnx's inference gives a body output a static dim that onnxsym's rules do
not prove, the model runs only where the true dim is that value. onnx 1.23 gives a 3-D
Attention's output a last dim of 0 where V's last dim is not static: a Scan over it is refused
wherever that dim is not 0 (a contradiction unless a dim may be 0: ``allow_zero``). Only the
Scans of the main graph are read, and only where onnx's inference runs on the model.
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx

from .. import dims
from ..facts.fact import Rel
from ..inference.values import Tensor
from .needs import Raw, needed


def raws(result, order: dict[str, int]) -> Iterator[Raw]:
    """``d == v`` for each dim ``d`` of a main-graph Scan's body output that onnx's inference
    gives a static ``v`` onnxsym does not prove."""
    graph = result.model.graph
    scans = [n for n in graph.node if n.op_type == "Scan" and n.domain in ("", "ai.onnx")]
    if not scans:
        return
    inferred = _onnx_bodies(result.model)
    for i, n in enumerate(graph.node):
        body = inferred.get(n.output[0]) if n.op_type == "Scan" and n.output else None
        if body is None:
            continue
        label = n.name or f"{n.op_type}_{i}"
        yield from _held(result, n, body, label, order.get(label, i))


def _onnx_bodies(model: onnx.ModelProto) -> dict[str, onnx.GraphProto]:
    """Each main-graph Scan's body (by the Scan's first output) as onnx's inference leaves it."""
    from ..output.loadcheck import LightModel

    try:
        light = LightModel(model).model
        done = onnx.shape_inference.infer_shapes(light, check_type=False, strict_mode=False)
    except Exception:  # (onnx's inference fails: onnxruntime refuses to load, which is said elsewhere)
        return {}
    out = {}
    for n in done.graph.node:
        if n.op_type == "Scan" and n.output:
            body = next((a.g for a in n.attribute if a.name == "body"), None)
            if body is not None:
                out[n.output[0]] = body
    return out


def _held(result, n: onnx.NodeProto, body: onnx.GraphProto, label: str, at: int) -> Iterator[Raw]:
    states = len(n.input) - next((a.i for a in n.attribute if a.name == "num_scan_inputs"), 0)
    out_axes = next((list(a.ints) for a in n.attribute if a.name == "scan_output_axes"), [])
    for k, (o, name) in enumerate(zip(body.output, n.output)):
        v = result.values.get(name) if name else None
        if not isinstance(v, Tensor) or v.shape is None or not o.type.tensor_type.HasField("shape"):
            continue
        mine = list(v.shape)
        if k >= states:  # (a scan output: the body's output stacked on its axis)
            if not mine:
                continue
            j = k - states
            axis = out_axes[j] if j < len(out_axes) else 0
            del mine[axis + len(mine) if axis < 0 else axis]
        theirs = o.type.tensor_type.shape.dim
        if len(theirs) != len(mine):
            continue
        for axis, (d, t) in enumerate(zip(mine, theirs)):
            if not t.HasField("dim_value") or dims.try_eq(d, t.dim_value) is True:
                continue
            what = "state" if k < states else "scan"
            yield needed(Rel.EQ, d, t.dim_value, label, n.op_type,
                         f"Scan: onnxruntime holds the body's {what} output '{o.name}' to the shape onnx's inference "
                         f"gives it, {t.dim_value} on axis {axis}", at)
