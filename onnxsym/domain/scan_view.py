"""What onnxruntime's load infers of a Scan's body, held to what onnxsym infers.

onnxruntime runs onnx's shape inference when it loads a model, and its Scan holds each body
output to the shape that inference gave it ("Mismatch between expected shape and shape from
first output"). Where onnx's inference gives a body output a static dim that onnxsym's rules do
not prove, the model runs only where the true dim is that value. onnx 1.23 gives a 3-D
Attention's output a last dim of 0 where V's last dim is not static: a Scan over it is refused
wherever that dim is not 0 (a contradiction unless a dim may be 0: ``allow_zero``). Only the
Scans of the main graph are read, and only where onnx's inference runs on the model.

A state output at a scan length of 1 goes to that final buffer with no feedback: where onnx's
inference gives the body's state output a static shape, the buffer has it, and a state the body
broadcasts ([4, 1] against [S, 4]: [4, 4]) runs; else the buffer has the initial state's shape,
which the output must keep. The Scan rule states the state's shape at other lengths only where
the length may be 1 (rules/control_flow.py); what a length of 1 needs is said here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import onnx

from .. import dims
from ..facts.fact import Guard, Rel, Relation
from ..inference.values import Tensor
from ..semantics.shapes import normalize_axis
from .needs import Raw, needed


def raws(result, order: dict[str, int]) -> Iterator[Raw]:
    """``d == v`` for each dim ``d`` of a main-graph Scan's body output that onnx's inference
    gives a static ``v`` onnxsym does not prove, and what a scan length of 1 needs of the states."""
    graph = result.model.graph
    scans = [n for n in graph.node if n.op_type == "Scan" and n.domain in ("", "ai.onnx")]
    if not scans:
        return
    if next((o.version for o in result.model.opset_import if o.domain in ("", "ai.onnx")), 0) < 9:
        return  # (Scan 8's inputs and outputs have a batch axis the body's lack: not read)
    inferred = _onnx_bodies(result.model)
    for i, n in enumerate(graph.node):
        if n.op_type != "Scan" or n.domain not in ("", "ai.onnx") or not n.output:
            continue
        body = inferred.get(n.output[0])
        label = n.name or f"{n.op_type}_{i}"
        yield from _one_step(result, n, body, label, order.get(label, i))
        if body is not None:
            yield from _held(result, n, body, label, order.get(label, i))


def _static(o: onnx.ValueInfoProto | None) -> bool:
    """Whether onnx's inference gives ``o`` a shape of static dims only."""
    t = o.type.tensor_type if o is not None else None
    return t is not None and t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim)


def _one_step(result, n: onnx.NodeProto, body: onnx.GraphProto | None, label: str, at: int) -> Iterator[Raw]:
    """At a scan length of 1, a state output onnx's inference leaves not all static keeps the
    initial state's shape (the final buffer has it), where the rule stated that only at other lengths."""
    m = next((a.i for a in n.attribute if a.name == "num_scan_inputs"), 0)
    states = len(n.input) - m
    axes = next((list(a.ints) for a in n.attribute if a.name == "scan_input_axes"), []) or [0] * m
    length = None
    for x, a in zip(n.input[states:], axes):
        v = result.values.get(x)
        if isinstance(v, Tensor) and v.shape is not None and v.shape:
            length = v.shape[normalize_axis(a, len(v.shape))]
            break
    if length is None or dims.try_eq(length, 1) is False or any(s.name in result.fresh for s in dims.free_symbols(length)):
        return  # (a length onnxsym could not resolve: the rule states the states' shapes as it infers them)
    # (the opposite of the rule's guard, ``length != 1``: a condition stated under both folds into one)
    guard = Guard((label, "where", f"{length} != 1"), False, f"{length} == 1", label, n.op_type,
                  Relation(Rel.EQ, length, 1))
    for k in range(states):
        before, after = result.values.get(n.input[k]), result.values.get(n.output[k]) if k < len(n.output) else None
        if not (isinstance(before, Tensor) and isinstance(after, Tensor)) or before.shape is None \
                or after.shape is None or len(before.shape) != len(after.shape):
            continue
        if body is not None and k < len(body.output) and _static(body.output[k]):
            continue  # (the final buffer has onnx's static shape: held to it in _held)
        for axis, (a, b) in enumerate(zip(before.shape, after.shape)):
            if dims.try_eq(a, b) is True:
                continue
            raw = needed(Rel.EQ, b, a, label, n.op_type, f"Scan: at a length of 1 the body's state output {k} keeps "
                         f"the state's shape on axis {axis} (onnxruntime's final buffer has it: onnx's inference "
                         "leaves the body's output not static)", at)
            yield replace(raw, fact=replace(raw.fact, place=replace(raw.fact.place, when=(guard,))))


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
