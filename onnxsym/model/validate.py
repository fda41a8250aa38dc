"""Checks that turn a malformed model into one clear error before inference runs:
an opset newer than the installed onnx knows, a node its operator's schema rules out
(an operator the opset does not define, a required attribute missing, an attribute of
the wrong type, the wrong number of inputs), an external-data file that is missing."""

from __future__ import annotations

import os
import re

import numpy as np
import onnx
from onnx import defs

from ..errors import GraphError, InvalidModel, ModelLoadError
from .external import external_references

_ATTR_NAMES = {v: k for k, v in onnx.AttributeProto.AttributeType.items()}


def _known_opsets() -> dict[str, int]:
    try:
        from onnx.onnx_cpp2py_export import defs as cdefs
        return {d: hi for d, (_, hi) in cdefs.schema_version_map().items()}
    except (ImportError, AttributeError):  # an onnx without the private map
        return {"": defs.onnx_opset_version(), "ai.onnx.ml": defs.onnx_ml_opset_version()}


def check_opsets(model: onnx.ModelProto) -> None:
    """A standard domain imported at a version the installed onnx does not know is an error:
    its operators may have changed in ways no rule here knows of."""
    known = _known_opsets()
    for op in model.opset_import:
        domain = "" if op.domain in ("", "ai.onnx") else op.domain
        hi = known.get(domain)
        if hi is not None and op.version > hi:
            raise ModelLoadError(f"the model imports opset {op.version} of '{op.domain or 'ai.onnx'}', "
                                 f"newer than the installed onnx {onnx.__version__} knows (up to {hi}); "
                                 f"upgrade onnx")


class _Schema:
    """What a node must satisfy of its operator's schema, gathered once per (domain, op, opset)."""

    __slots__ = ("name", "attr_types", "required", "inputs", "outputs", "single_inputs", "refusal")

    def __init__(self, schema: defs.OpSchema | None, refusal: str = ""):
        self.refusal = refusal  # why no node of this op is valid at this opset ("": they may be)
        if schema is None:
            self.name, self.attr_types = "", {}
            self.required: tuple[str, ...] = ()
            self.inputs = self.outputs = (0, 2**31 - 1)
            self.single_inputs: tuple[int, ...] = ()
            return
        self.name = f"{schema.name}-{schema.since_version}"
        # onnx's stub gives OpSchema.AttrType (a pybind11 enum) no __int__; it has one at runtime.
        self.attr_types = {name: int(a.type) for name, a in schema.attributes.items()}  # type: ignore[call-overload]
        self.required = tuple(sorted(name for name, a in schema.attributes.items() if a.required))
        self.inputs = (schema.min_input, schema.max_input)
        self.outputs = (schema.min_output, schema.max_output)
        single = defs.OpSchema.FormalParameterOption.Single
        self.single_inputs = tuple(i for i, f in enumerate(schema.inputs) if f.option == single)


# Deprecated schemas that onnxruntime still runs (GroupNormalization-18 was deprecated when
# opset 21 changed its scale's shape): no refusal for those. onnx.checker and onnxruntime
# both refuse every other deprecated operator (Upsample from opset 10, Scatter from 11,
# ai.onnx.ml's TreeEnsembleRegressor/Classifier from 5).
_STILL_RUN = frozenset({("", "GroupNormalization")})

_schemas: dict[tuple[str, str, int], _Schema | None] = {}


def _schema(domain: str, op_type: str, opset: int) -> _Schema | None:
    """The schema facts of an op; None for an op onnx does not know (a custom one)."""
    key = (domain, op_type, opset)
    if key in _schemas:
        return _schemas[key]
    where = domain or "ai.onnx"
    try:
        schema = defs.get_schema(op_type, opset, domain)
        facts = _Schema(schema)
        if schema.deprecated and (domain, op_type) not in _STILL_RUN:
            facts.refusal = (f"{op_type} is deprecated from opset {schema.since_version} of {where} (removed from "
                             f"the ONNX spec; onnxruntime refuses it too), and the model imports opset {opset}")
    except defs.SchemaError:
        # (an op onnx defines only from a later opset may be onnxruntime's own before that:
        # its LayerNormalization in the ONNX domain; the rules decide)
        facts = None
    _schemas[key] = facts
    return facts


def attribute_type(domain: str, op_type: str, opset: int, name: str) -> int | None:
    """The ``AttributeProto`` type the ONNX spec gives attribute ``name`` of ``op_type``
    (None for an attribute or operator onnx does not define: a custom one)."""
    facts = _schema(domain, op_type, opset)
    return None if facts is None else facts.attr_types.get(name)


def attribute_type_name(kind: int) -> str:
    """``INT``, ``FLOATS``, ... for an ``AttributeProto`` type."""
    return _ATTR_NAMES.get(kind, str(kind))


def check_node(node: onnx.NodeProto, domain: str, opset: int, label: str) -> None:
    """Raise :class:`InvalidModel` where ``node`` breaks its operator's ONNX schema: an operator
    its opset does not define, a required attribute missing, an attribute the operator does
    not have or of the wrong type, too few or too many inputs or outputs, a required input left
    empty (what onnx.checker and onnxruntime refuse). Custom operators are not checked."""
    facts = _schema(domain, node.op_type, opset)
    if facts is None:
        return
    where = f"{node.op_type} node '{label}'"
    if facts.refusal:
        raise InvalidModel(f"{where}: {facts.refusal}")
    spec = f"(the ONNX spec of {facts.name})"
    if facts.required:
        given = {a.name for a in node.attribute}
        for name in facts.required:
            if name not in given:
                raise InvalidModel(f"{where}: the required attribute '{name}' is missing {spec}")
    for a in node.attribute:
        want = facts.attr_types.get(a.name)
        if want is None:
            raise InvalidModel(f"{where}: {facts.name} has no attribute '{a.name}' {spec}")
        if a.type != want and not a.ref_attr_name:
            raise GraphError(f"{where}: attribute '{a.name}' must be "
                             f"{_ATTR_NAMES.get(want, want)}, the model gives {_ATTR_NAMES.get(a.type, a.type)}")
    for what, n, (lo, hi) in (("input", len(node.input), facts.inputs), ("output", len(node.output), facts.outputs)):
        if not lo <= n <= hi:
            allowed = f"{lo}" if lo == hi else f"at least {lo}" if hi >= 2**31 - 1 else f"{lo} to {hi}"
            plural = "" if lo == hi == 1 else "s"
            raise InvalidModel(f"{where}: takes {allowed} {what}{plural} {spec}, the node gives {n}")
    for i in facts.single_inputs:
        if i < len(node.input) and not node.input[i]:
            raise InvalidModel(f"{where}: input {i} is required {spec}, the node leaves it empty")


# Initializers larger than this go to onnx's inference as typed graph inputs, without their
# data: no shape is computed from that many elements, and the copy stays small. (So do
# external ones: onnx's inference cannot read them, and refuses a node that needs one.)
_SMALL_INITIALIZER = 4096
_NODE_ERROR = re.compile(r"\(op_type:([^,)]*)(?:, node name: ([^)]*))?\): (?:\[(\w+)\] )?(.*)")


def _without_shape(vi: onnx.ValueInfoProto) -> onnx.ValueInfoProto:
    out = onnx.ValueInfoProto()
    out.CopyFrom(vi)
    tp = out.type
    while True:
        which = tp.WhichOneof("value")
        if which in ("tensor_type", "sparse_tensor_type"):
            getattr(tp, which).ClearField("shape")
            return out
        if which == "sequence_type":
            tp = tp.sequence_type.elem_type
        elif which == "optional_type":
            tp = tp.optional_type.elem_type
        else:
            return out


def node_order(g: onnx.GraphProto) -> list[int]:
    """The node indices with each node after the producers of its inputs (file order where
    that fails: inference reports the cycle)."""
    producer = {o: i for i, n in enumerate(g.node) for o in n.output if o}
    users: dict[int, list[int]] = {}
    waiting = []
    for i, n in enumerate(g.node):
        deps = {producer[x] for x in n.input if x in producer and producer[x] != i}
        waiting.append(len(deps))
        for p in deps:
            users.setdefault(p, []).append(i)
    order = [i for i, w in enumerate(waiting) if w == 0]
    for i in order:  # (grows while it is read)
        for u in users.get(i, ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                order.append(u)
    return order if len(order) == len(g.node) else list(range(len(g.node)))


def _light_graph(g: onnx.GraphProto, outer: frozenset = frozenset()) -> onnx.GraphProto:
    """``g`` as onnx's inference is given it: produced values' declared shapes removed (a stale
    declaration is reported by onnxsym, not refused), nodes named as onnxsym names them and in
    an order that computes each value before its use (onnx reads them in file order; onnxsym
    and onnxruntime sort them), large and external initializers as typed inputs. ``outer``:
    the names an enclosing graph makes visible."""
    out = onnx.GraphProto(name=g.name)
    out.input.extend(g.input)
    for o in g.output:  # the type stays (a Loop body's outputs must have one), the shape goes
        out.output.append(_without_shape(o))
    names = {i.name for i in g.input}
    for t in g.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL or \
                (len(t.dims) and int(np.prod(t.dims, dtype=np.int64)) > _SMALL_INITIALIZER):
            if t.name not in names:
                out.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        else:
            out.initializer.append(t)
    out.sparse_initializer.extend(g.sparse_initializer)
    available = outer | names | {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    order = node_order(g)
    visible = frozenset(available | {o for n in g.node for o in n.output if o})
    for index in order:
        n = g.node[index]
        m = out.node.add()
        m.CopyFrom(n)
        if not m.name:
            m.name = f"{n.op_type}_{index}"
        for a in m.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                a.g.CopyFrom(_light_graph(a.g, visible))
            for k, sg in enumerate(a.graphs):
                a.graphs[k].CopyFrom(_light_graph(sg, visible))
    return out


def check_with_onnx(model: onnx.ModelProto) -> None:
    """Raise :class:`InvalidModel` where onnx's own shape inference, the spec's rules that
    onnxruntime runs when it loads a model, refuses a node of a standard domain (Slice
    ``starts`` and ``ends`` of different lengths, a Tile's ``repeats`` of the wrong length,
    an axis out of range). Operators onnx
    does not know (custom domains, com.microsoft) are left to onnxsym's rules."""
    from onnx import shape_inference

    light = onnx.ModelProto(ir_version=model.ir_version)
    light.opset_import.extend(model.opset_import)
    light.functions.extend(model.functions)
    light.graph.CopyFrom(_light_graph(model.graph))
    try:
        # (element types are not checked: onnxsym maps types, float6 say, that no standard op
        # takes yet; the shapes and attributes are what the rules would take on trust)
        shape_inference.infer_shapes(light, check_type=False, strict_mode=True)
    except shape_inference.InferenceError as exc:
        text = " ".join(str(exc).split())
        m = _NODE_ERROR.search(text)
        if m is None:
            raise InvalidModel(f"onnx's shape inference refuses the model: {text}") from None
        op, name, _kind, why = m.groups()
        if "instead is null" in why:
            return  # (an input whose type onnx could not infer upstream: a limit of its own)
        why = re.split(r" \(op_type:|\[\w+Error\] Inference error", why)[0].strip()
        if _runtime_loads(model):
            return  # onnx's inference is not the kernels' (an STFT of a (batch, length) signal read as complex)
        raise InvalidModel(f"{op} node '{name or '?'}' breaks the ONNX spec of {op}: {why} "
                           f"(onnx's shape inference, which onnxruntime runs on loading)") from None
    except Exception:
        return  # (onnx could not judge the model: a limit of its own, not a verdict)


def _runtime_loads(model: onnx.ModelProto) -> bool:
    """Whether onnxruntime (when installed) loads ``model``: the judge where onnx's inference
    refuses a node that onnxruntime's kernel runs. (Asked only after such a refusal.)"""
    from .runtime import load_error

    try:
        return load_error(model.SerializeToString(), optimize=False) is None
    except ImportError:
        return False


def check_external_data(model: onnx.ModelProto, base_dir: str | None) -> None:
    """Every external-data file an initializer points to must exist (its bytes are not read)."""
    if base_dir is None:
        return
    seen = set()
    for t, location in external_references(model.graph.initializer):
        if location in seen:
            continue
        seen.add(location)
        where = os.path.join(base_dir, location)
        if not os.path.exists(where) or os.path.isdir(where):  # any file: a pipe, a device
            raise ModelLoadError(f"initializer '{t.name}': its external data file '{location}' "
                                 f"is missing (looked in {base_dir})")
