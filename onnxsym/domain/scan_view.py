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

A Scan in a subgraph (a Scan's or a Loop's body, an If's branch) is read the same way: onnxruntime
runs onnx's inference on the subgraphs too, with the shapes around them, and the same kernel holds
the nested body to it; what it needs holds under the subgraph's guards.

onnx's Python inference stands in for onnxruntime's own at load, and the two differ in places:
onnxruntime knows its contrib ops (a com.microsoft Gelu on the state: onnx leaves its output
unshaped, onnxruntime gives it [4, 4], and the state runs at a length of 1), and it folds shape
values (a Reshape to a target Concat-ed from a Shape's static element: onnx gives it no static
dim without its data propagation, onnxruntime does). Where a body output depends on an op onnx's
inference does not know, or onnx's inference gives it another shape with its data propagation
than without, what onnxruntime holds it to is said not stated, not guessed.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterator, Mapping
from dataclasses import replace

import onnx

from .. import dims
from ..facts.fact import Guard, Rel, Relation
from ..inference.values import Tensor
from ..semantics.shapes import normalize_axis
from .needs import Raw, needed


def raws(result, order: dict[str, int]) -> Iterator[Raw]:
    """``d == v`` for each dim ``d`` of a Scan's body output that onnx's inference gives a static
    ``v`` onnxsym does not prove, and what a scan length of 1 needs of the states: for the Scans of
    the main graph, and of each subgraph inferred, under its guards."""
    graph = result.model.graph
    nested = [(g, when, own) for g, when, own in result.subgraph_runs if any(_is_scan(n) for n in g.node)]
    if not nested and not any(_is_scan(n) for n in graph.node):
        return
    if next((o.version for o in result.model.opset_import if o.domain in ("", "ai.onnx")), 0) < 9:
        return  # (Scan 8's inputs and outputs have a batch axis the body's lack: not read)
    inferred = _onnx_bodies(result.model)
    runs = [(graph, (), result.values, None)] + [(g, when, ChainMap(own, result.subgraph_values, result.values),
                                                 len(order)) for g, when, own in nested]
    for g, when, values, at in runs:
        for i, n in enumerate(g.node):
            if not _is_scan(n) or not n.output:
                continue
            body, unsure = inferred.get(n.output[0], (None, frozenset()))
            label = n.name or f"{n.op_type}_{i}"
            where = order.get(label, i) if at is None else at
            yield from _one_step(result, values, when, n, body, unsure, label, where)
            if body is not None:
                yield from _held(values, when, n, body, unsure, label, where)


def _is_scan(n: onnx.NodeProto) -> bool:
    return n.op_type == "Scan" and n.domain in ("", "ai.onnx")


def _under(raw: Raw, when: tuple[Guard, ...]) -> Raw:
    """``raw`` holding only where ``when`` does (a subgraph's guards, a length of 1)."""
    return raw if not when else replace(raw, fact=replace(raw.fact, place=replace(raw.fact.place, when=when)))


def _static(o: onnx.ValueInfoProto | None) -> bool:
    """Whether onnx's inference gives ``o`` a shape of static dims only."""
    t = o.type.tensor_type if o is not None else None
    return t is not None and t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim)


def _one_step(result, values: Mapping, when: tuple[Guard, ...], n: onnx.NodeProto, body: onnx.GraphProto | None,
              unsure: frozenset[int], label: str, at: int) -> Iterator[Raw]:
    """At a scan length of 1, a state output onnx's inference leaves not all static keeps the
    initial state's shape (the final buffer has it), where the rule stated that only at other lengths;
    not stated for an output of ``unsure`` (onnxruntime's inference may differ from onnx's there)."""
    m = next((a.i for a in n.attribute if a.name == "num_scan_inputs"), 0)
    states = len(n.input) - m
    axes = next((list(a.ints) for a in n.attribute if a.name == "scan_input_axes"), []) or [0] * m
    length = None
    for x, a in zip(n.input[states:], axes):
        v = values.get(x)
        if isinstance(v, Tensor) and v.shape is not None and v.shape:
            length = v.shape[normalize_axis(a, len(v.shape))]
            break
    if length is None or dims.try_eq(length, 1) is False or any(s.name in result.fresh for s in dims.free_symbols(length)):
        return  # (a length onnxsym could not resolve: the rule states the states' shapes as it infers them)
    # (the opposite of the rule's guard, ``length != 1``: a condition stated under both folds into one)
    guard = Guard(_rule_key(result, label, f"{length} != 1"), False, f"{length} == 1", label, n.op_type,
                  Relation(Rel.EQ, length, 1))
    for k in range(states):
        before, after = values.get(n.input[k]), values.get(n.output[k]) if k < len(n.output) else None
        if not (isinstance(before, Tensor) and isinstance(after, Tensor)) or before.shape is None \
                or after.shape is None or len(before.shape) != len(after.shape):
            continue
        if k not in unsure and body is not None and k < len(body.output) and _static(body.output[k]):
            continue  # (the final buffer has onnx's static shape: held to it in _held)
        for axis, (a, b) in enumerate(zip(before.shape, after.shape)):
            if dims.try_eq(a, b) is True:
                continue
            if k in unsure:  # (the final buffer has onnxruntime's shape, which onnx's cannot stand in for)
                yield _under(_unstated(f"at a length of 1, what the final buffer of the body's state output {k} "
                                       "needs of it", label, n.op_type, at), when + (guard,))
                break
            raw = needed(Rel.EQ, b, a, label, n.op_type, f"Scan: at a length of 1 the body's state output {k} keeps "
                         f"the state's shape on axis {axis} (onnxruntime's final buffer has it: onnx's inference "
                         "leaves the body's output not static)", at)
            yield _under(raw, when + (guard,))


def _rule_key(result, label: str, text: str) -> tuple[str, ...]:
    """The key of the Scan rule's own guard ``text`` (``length != 1``), as the engine named it in
    its scope (a subgraph's key starts with the scopes around it): a condition the rule states
    under it and this module under its opposite folds into one."""
    for c in result.constraints:
        for g in c.when:
            if g.key[-3:] == (label, "where", text):
                return g.key
    return (label, "where", text)


def _unstated(what: str, label: str, op_type: str, at: int) -> Raw:
    reason = ("Scan: onnxruntime's own inference of the body may differ from onnx's there (an op onnx's "
              "inference does not know, or a shape value it folds only with its data propagation)")
    return replace(needed(Rel.EQ, 0, 0, label, op_type, reason, at), unstated=what)


def _onnx_bodies(model: onnx.ModelProto) -> dict[str, tuple[onnx.GraphProto, frozenset[int]]]:
    """Each Scan's body (by the Scan's first output), nested ones too, as onnx's inference leaves
    it, and the outputs onnxruntime's inference may give other shapes (:func:`_unsure`)."""
    from ..output.loadcheck import LightModel

    try:
        light = LightModel(model).model
        done = onnx.shape_inference.infer_shapes(light, check_type=False, strict_mode=False)
    except Exception:  # (onnx's inference fails: onnxruntime refuses to load, which is said elsewhere)
        return {}
    plain: dict[str, onnx.GraphProto] = {}
    _bodies_in(done.graph, plain)
    with_data: dict[str, onnx.GraphProto] = {}
    try:
        _bodies_in(onnx.shape_inference.infer_shapes(light, check_type=False, strict_mode=False, data_prop=True).graph,
                   with_data)
    except Exception:  # (its data propagation fails: every output is one onnxruntime's inference may differ on)
        pass
    local = {(f.domain, f.name) for f in model.functions}
    return {name: (body, _unsure(body, with_data.get(name), local)) for name, body in plain.items()}


def _unsure(body: onnx.GraphProto, folded: onnx.GraphProto | None, local: set[tuple[str, str]]) -> frozenset[int]:
    """The outputs of ``body`` whose shape onnx's inference gives otherwise with its data propagation
    (``folded``) than without, or that depend on a node onnx's inference does not know (a contrib op,
    a model-local function; a node whose subgraph holds one counts too)."""
    tainted: set[str] = set()
    for n in body.node:
        if not _known(n, local) or any(x in tainted for x in _reads(n)):
            tainted.update(o for o in n.output if o)
    out = set()
    for k, o in enumerate(body.output):
        if o.name in tainted or folded is None or k >= len(folded.output) \
                or o.type.tensor_type.shape != folded.output[k].type.tensor_type.shape:
            out.add(k)
    return frozenset(out)


def _known(n: onnx.NodeProto, local: set[tuple[str, str]]) -> bool:
    """Whether onnx's inference knows ``n`` (and every node of its subgraphs)."""
    domain = "" if n.domain == "ai.onnx" else n.domain
    if (n.domain, n.op_type) in local or not onnx.defs.has(n.op_type, domain):
        return False
    return all(_known(m, local) for g in _subgraphs(n) for m in g.node)


def _reads(n: onnx.NodeProto) -> Iterator[str]:
    """The names ``n`` reads: its inputs, and what the nodes of its subgraphs read (of the scope around)."""
    yield from n.input
    for g in _subgraphs(n):
        for m in g.node:
            yield from _reads(m)


def _subgraphs(n: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for a in n.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _bodies_in(graph: onnx.GraphProto, out: dict[str, onnx.GraphProto]) -> None:
    """Each Scan's body in ``graph`` and in the subgraphs of its nodes, by the Scan's first output
    (names are unique across a model's graphs)."""
    for n in graph.node:
        if _is_scan(n) and n.output:
            body = next((a.g for a in n.attribute if a.name == "body"), None)
            if body is not None:
                out[n.output[0]] = body
        for sub in _subgraphs(n):
            _bodies_in(sub, out)


def _held(values: Mapping, when: tuple[Guard, ...], n: onnx.NodeProto, body: onnx.GraphProto, unsure: frozenset[int],
          label: str, at: int) -> Iterator[Raw]:
    """Each body output's dims held to the static ones onnx's inference gives it; for an output of
    ``unsure`` with a dim that is no number, what onnxruntime holds it to is said not stated."""
    states = len(n.input) - next((a.i for a in n.attribute if a.name == "num_scan_inputs"), 0)
    out_axes = next((list(a.ints) for a in n.attribute if a.name == "scan_output_axes"), [])
    for k, (o, name) in enumerate(zip(body.output, n.output)):
        v = values.get(name) if name else None
        if not isinstance(v, Tensor) or v.shape is None:
            continue
        mine = list(v.shape)
        if k >= states:  # (a scan output: the body's output stacked on its axis)
            if not mine:
                continue
            j = k - states
            axis = out_axes[j] if j < len(out_axes) else 0
            del mine[axis + len(mine) if axis < 0 else axis]
        what = "state" if k < states else "scan"
        if k in unsure:
            if not all(isinstance(d, int) for d in mine):
                yield _under(_unstated(f"the shape onnxruntime's inference gives the body's {what} output '{o.name}', "
                                       "which its Scan holds it to", label, n.op_type, at), when)
            continue
        if not o.type.tensor_type.HasField("shape"):
            continue
        theirs = o.type.tensor_type.shape.dim
        if len(theirs) != len(mine):
            continue
        for axis, (d, t) in enumerate(zip(mine, theirs)):
            if not t.HasField("dim_value") or dims.try_eq(d, t.dim_value) is True:
                continue
            yield _under(needed(Rel.EQ, d, t.dim_value, label, n.op_type,
                                f"Scan: onnxruntime holds the body's {what} output '{o.name}' to the shape onnx's "
                                f"inference gives it, {t.dim_value} on axis {axis}", at), when)
