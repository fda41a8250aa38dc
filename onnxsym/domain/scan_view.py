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

Scan 8 is read the same way past its batch axis. Without sequence_lens its body runs only at a
length of at least 1 (what it holds the body to holds there); at a length of 0 no step runs: the
initial state comes out, held to the static dims onnx's inference gives the Scan's output, and a scan
output is no tensor where onnx's inference leaves the body's output not all static (a node reading
it is refused). With sequence_lens a row of one step goes to the final buffer as at a length of 1.
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
from .needs import Raw, needed, on_data


def raws(result, order: dict[str, int]) -> Iterator[Raw]:
    """``d == v`` for each dim ``d`` of a Scan's body output that onnx's inference gives a static
    ``v`` onnxsym does not prove, and what a scan length of 1 needs of the states: for the Scans of
    the main graph, and of each subgraph inferred, under its guards."""
    graph = result.model.graph
    nested = [(g, when, own) for g, when, own in result.subgraph_runs if any(_is_scan(n) for n in g.node)]
    if not nested and not any(_is_scan(n) for n in graph.node):
        return
    v8 = next((o.version for o in result.model.opset_import if o.domain in ("", "ai.onnx")), 0) < 9
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
            lay = _Layout(n, v8, values)
            if lay.lens:
                yield from _lens_states(result, values, when, n, body, unsure, label, where, lay)
            else:
                yield from _one_step(result, values, when, n, body, unsure, label, where, lay)
            if body is None:
                continue
            steps = _runs(result, label, lay)
            yield from _held(result, values, when + steps, n, body, unsure, label, where, lay)
            if steps:
                yield from _no_step(result, values, when, n, body, unsure, label, where, lay)
                yield from _absent(g, when, n, body, unsure, label, where, lay)


class _Layout:
    """Where a Scan's states and scan inputs are: at opset 8 input 0 is sequence_lens and every
    input and output has a batch axis first (``batch`` 1), the scan axis after it; from 9 on the
    states come first and each scan input has its own axis. ``length``: the scan length, where a
    scan input's shape gives it."""

    def __init__(self, n: onnx.NodeProto, v8: bool, values: Mapping) -> None:
        m = next((a.i for a in n.attribute if a.name == "num_scan_inputs"), 0)
        self.v8, self.batch = v8, int(v8)
        self.lens = v8 and bool(n.input) and bool(n.input[0])
        self.inputs = list(n.input[1:] if v8 else n.input)
        self.states = len(self.inputs) - m
        axes = [] if v8 else next((list(a.ints) for a in n.attribute if a.name == "scan_input_axes"), [])
        self.axes = axes or [0] * m
        self.length = None
        for x, a in zip(self.inputs[self.states:], self.axes):
            v = values.get(x)
            if isinstance(v, Tensor) and v.shape is not None and len(v.shape) > self.batch:
                self.length = v.shape[self.batch + normalize_axis(a, len(v.shape) - self.batch)]
                break

    def inner(self, shape: tuple) -> tuple:
        """A state's shape as the body sees it (no batch axis)."""
        return tuple(shape[self.batch:])


def _runs(result, label: str, lay: _Layout) -> tuple[Guard, ...]:
    """The guard under which a Scan 8 without sequence_lens runs its body (a length of at least 1;
    it runs no step at 0), as the rule named it; none where the body runs wherever the Scan does."""
    if not lay.v8 or lay.lens or lay.length is None or dims.try_le(1, lay.length) is True \
            or any(s.name in result.fresh for s in dims.free_symbols(lay.length)):
        return ()
    text = f"{lay.length} >= 1"
    key = next((g.key for c in result.constraints for g in c.when if g.key[-2:] == (label, "runs")), (label, "runs"))
    return (Guard(key, True, text, label, "Scan", Relation(Rel.GE, lay.length, 1)),)


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
              unsure: frozenset[int], label: str, at: int, lay: _Layout) -> Iterator[Raw]:
    """At a scan length of 1, a state output onnx's inference leaves not all static keeps the
    initial state's shape (the final buffer has it), where the rule stated that only at other lengths;
    not stated for an output of ``unsure`` (onnxruntime's inference may differ from onnx's there).
    (Scan 8 with sequence_lens too: at a length of 1 each entry is 1.)"""
    states, length = lay.states, lay.length
    if length is None or dims.try_eq(length, 1) is False or any(s.name in result.fresh for s in dims.free_symbols(length)):
        return  # (a length onnxsym could not resolve: the rule states the states' shapes as it infers them)
    # (the opposite of the rule's guard, ``length != 1``: a condition stated under both folds into one)
    guard = Guard(_rule_key(result, label, f"{length} != 1"), False, f"{length} == 1", label, n.op_type,
                  Relation(Rel.EQ, length, 1))
    for k in range(states):
        before, after = values.get(lay.inputs[k]), values.get(n.output[k]) if k < len(n.output) else None
        if not (isinstance(before, Tensor) and isinstance(after, Tensor)) or before.shape is None \
                or after.shape is None or len(before.shape) != len(after.shape):
            continue
        if lay.v8:  # (the body's own output: the state after a Scan 8 that may run no step is not it)
            own = _body_shape(result, body, k)
            if own is None or len(own) != len(before.shape) - 1:
                continue
            initial, out = lay.inner(before.shape), own
        else:
            initial, out = before.shape, after.shape
        if k not in unsure and body is not None and k < len(body.output) and _static(body.output[k]):
            continue  # (the final buffer has onnx's static shape: held to it in _held)
        for axis, (a, b) in enumerate(zip(initial, out)):
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


def _held(result, values: Mapping, when: tuple[Guard, ...], n: onnx.NodeProto, body: onnx.GraphProto, unsure: frozenset[int],
          label: str, at: int, lay: _Layout) -> Iterator[Raw]:
    """Each body output's dims held to the static ones onnx's inference gives it; for an output of
    ``unsure`` with a dim that is no number, what onnxruntime holds it to is said not stated."""
    states = lay.states
    out_axes = [] if lay.v8 else next((list(a.ints) for a in n.attribute if a.name == "scan_output_axes"), [])
    for k, (o, name) in enumerate(zip(body.output, n.output)):
        v = values.get(name) if name else None
        if not isinstance(v, Tensor) or v.shape is None or len(v.shape) < lay.batch:
            continue
        mine = list(lay.inner(v.shape))
        if lay.v8 and k < states:  # (the body's own output: the state after a Scan 8 may not be it)
            own = _body_shape(result, body, k)
            if own is None:
                continue
            mine = list(own)
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


def _no_step(result, values: Mapping, when: tuple[Guard, ...], n: onnx.NodeProto, body: onnx.GraphProto,
             unsure: frozenset[int], label: str, at: int, lay: _Layout) -> Iterator[Raw]:
    """Scan 8 without sequence_lens at a length of 0 runs no step: a state whose body output onnx's
    inference leaves not all static comes out as the initial state, which onnxruntime holds to the
    shape its inference gives the Scan's output there (the initial state's dims merged with the
    body output's static ones): each of those static dims the initial state must have. Not stated
    for an output of ``unsure``."""
    length = lay.length
    if length is None:
        return
    guard = Guard((label, "no step"), True, f"{length} == 0", label, n.op_type, Relation(Rel.EQ, length, 0))
    for k in range(min(lay.states, len(body.output))):
        before = values.get(lay.inputs[k])
        t = body.output[k].type.tensor_type
        if not isinstance(before, Tensor) or before.shape is None or _static(body.output[k]) or not t.HasField("shape"):
            continue
        initial = lay.inner(before.shape)
        if len(initial) != len(t.shape.dim):
            continue
        for axis, (a, d) in enumerate(zip(initial, t.shape.dim)):
            if not d.HasField("dim_value") or dims.try_eq(a, d.dim_value) is True:
                continue
            if k in unsure:
                yield _under(_unstated(f"at a length of 0, what onnxruntime holds the initial state {k} to",
                                       label, n.op_type, at), when + (guard,))
                break
            yield _under(needed(Rel.EQ, a, d.dim_value, label, n.op_type,
                                f"Scan 8: at a length of 0 no step runs and the state {k} comes out as it went in, "
                                f"which onnxruntime holds to the static dims its inference gives the output "
                                f"({d.dim_value} on axis {axis})", at), when + (guard,))


def _body_shape(result, body: onnx.GraphProto | None, k: int) -> tuple | None:
    """The shape onnxsym inferred for the body's output ``k`` (names are unique across a model's graphs)."""
    v = result.subgraph_values.get(body.output[k].name) if body is not None and k < len(body.output) else None
    return v.shape if isinstance(v, Tensor) else None


def _lens_states(result, values: Mapping, when: tuple[Guard, ...], n: onnx.NodeProto, body: onnx.GraphProto | None,
                 unsure: frozenset[int], label: str, at: int, lay: _Layout) -> Iterator[Raw]:
    """Scan 8 with sequence_lens: a row whose entry is 1 runs one step, into the final buffer (shaped
    as onnx's inference gives the body's state output where that is static, else as the initial
    state), and a row of more steps is fed back in the initial state's. Where the body's output is
    not all static both buffers are the initial state's: the output keeps its shape at every
    length; where it is static and differs, only rows of one step run, which the data decide."""
    for k in range(lay.states):
        before, after = values.get(lay.inputs[k]), _body_shape(result, body, k)
        if not isinstance(before, Tensor) or before.shape is None:
            continue
        initial = lay.inner(before.shape)
        if body is None or after is None:
            if body is None and any(dims.try_eq(a, b) is not True for a, b in zip(initial, after or ())):
                yield _under(_unstated(f"what the body's state output {k} needs of its shape", label, n.op_type, at),
                             when)
            continue
        if len(after) != len(initial):
            continue
        for axis, (a, b) in enumerate(zip(initial, after)):
            if dims.try_eq(a, b) is True or any(s.name in result.fresh for s in dims.free_symbols(b)):
                continue
            if k in unsure:
                yield _under(_unstated(f"what the body's state output {k} needs of its shape", label, n.op_type, at),
                             when)
                break
            if _static(body.output[k]):
                yield _under(on_data(label, n.op_type, at, f"every entry of '{n.input[0]}' is 1 where the body's "
                                     f"state output {k} is not the state's shape ({b} against {a} on axis {axis})",
                                     "Scan 8: a row of more than one step feeds the state back in a buffer of "
                                     "the initial state's shape", fed=True), when)
                break
            yield _under(needed(Rel.EQ, b, a, label, n.op_type, f"Scan 8: the body's state output {k} keeps the "
                                f"state's shape on axis {axis} (with sequence_lens, a row of one step too: the "
                                "final buffer has it, onnx's inference leaving the body's output not static)", at), when)


def _absent(g: onnx.GraphProto, when: tuple[Guard, ...], n: onnx.NodeProto, body: onnx.GraphProto,
            unsure: frozenset[int], label: str, at: int, lay: _Layout) -> Iterator[Raw]:
    """Scan 8 without sequence_lens at a length of 0: onnxruntime gives a scan output no tensor at
    all where onnx's inference leaves the body's output not all static (it allocates the stacked
    output from that shape), and a node that reads it is refused ("Missing Input"): the length is at
    least 1 where one does. A graph output is absent there, which runs. Not stated for an output of
    ``unsure``."""
    if lay.length is None:
        return
    read = {x for m in g.node if m is not n for x in _reads(m)}
    for k in range(lay.states, min(len(body.output), len(n.output))):
        if not n.output[k] or n.output[k] not in read or (k not in unsure and _static(body.output[k])):
            continue
        if k in unsure:
            yield _under(_unstated(f"whether onnxruntime gives the scan output '{n.output[k]}' a tensor at a "
                                   "length of 0, which a node reads", label, n.op_type, at), when)
            continue
        yield _under(needed(Rel.GE, lay.length, 1, label, n.op_type,
                            f"Scan 8: at a length of 0 onnxruntime gives the scan output '{n.output[k]}' no tensor "
                            "(onnx's inference leaves the body's output not static), and a node reads it", at), when)
