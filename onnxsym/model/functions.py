"""Function bodies for nodes that have no rule: a model-local function the node
calls, or the function body by which the ONNX standard defines the op.

The engine infers such a node by inferring the body (see Engine.infer_function);
this module finds the body and instantiates it for one call: attribute
references resolved, inputs the call omits removed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import onnx
from onnx import helper

from ..inference.values import Tensor, Value


def _pick(versions: Sequence[int], opset: int) -> int:
    """The newest body version not newer than the model's opset (else the oldest:
    every version of a body defines the same op, only with other ops)."""
    usable = [v for v in versions if v <= opset]
    return max(usable) if usable else min(versions)


def _parse(data: bytes) -> onnx.FunctionProto | None:
    if not data:
        return None
    fn = onnx.FunctionProto()
    fn.ParseFromString(data)
    return fn if len(fn.node) else None


@functools.cache
def _plain_function(op_type: str, domain: str, opset: int) -> onnx.FunctionProto | None:
    schema = _schema(op_type, domain, opset)
    if schema is None or not schema.function_opset_versions:
        return None
    fn = _parse(schema.get_function_with_opset_version(_pick(schema.function_opset_versions, opset)))
    return _with_defaults(fn, schema)


def _with_defaults(fn: onnx.FunctionProto | None, schema) -> onnx.FunctionProto | None:
    """``fn`` with the schema's attribute defaults, for calls that leave them out."""
    if fn is None:
        return None
    have = {a.name for a in fn.attribute_proto}
    for name, attr in schema.attributes.items():
        if name not in have and attr.default_value.type != onnx.AttributeProto.UNDEFINED:
            a = fn.attribute_proto.add()
            a.CopyFrom(attr.default_value)
            a.name = name
    return fn


def _schema(op_type: str, domain: str, opset: int):
    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return None


def _type_bytes(v: Value | None) -> bytes:
    if not isinstance(v, Tensor) or not v.dtype:
        return onnx.TypeProto().SerializeToString()
    shape = None if v.shape is None else [d if isinstance(d, int) else str(d) for d in v.shape]
    return helper.make_tensor_type_proto(v.dtype, shape).SerializeToString()


def schema_function(call: onnx.NodeProto, node) -> onnx.FunctionProto | None:
    """The body that the standard defines ``call``'s op by, or ``None``."""
    fn = _plain_function(node.op_type, node.domain, node.opset)
    if fn is not None:
        return fn
    schema = _schema(node.op_type, node.domain, node.opset)
    if schema is None or not schema.context_dependent_function_opset_versions:
        return None
    version = _pick(schema.context_dependent_function_opset_versions, node.opset)
    try:  # the body depends on the call's attributes and input types
        data = schema.get_context_dependent_function_with_opset_version(
            version, call.SerializeToString(), [_type_bytes(v) for v in node.inputs])
    except Exception:  # the builder rejects what it is given: no body
        return None
    return _with_defaults(_parse(data), schema)


def _resolve(n: onnx.NodeProto, attrs: dict[str, onnx.AttributeProto], absent: set) -> onnx.NodeProto:
    """``n`` with attribute references replaced by the call's attributes and
    omitted inputs by ''. Subgraphs are resolved too."""
    out = onnx.NodeProto()
    out.CopyFrom(n)
    del out.attribute[:]
    for a in n.attribute:
        if a.ref_attr_name:
            given = attrs.get(a.ref_attr_name)
            if given is None:
                continue  # neither given nor defaulted: the attribute is absent
            a2 = onnx.AttributeProto()
            a2.CopyFrom(given)
            a2.name = a.name
            out.attribute.append(a2)
            continue
        a2 = out.attribute.add()
        a2.CopyFrom(a)
        for g in ([a2.g] if a2.type == onnx.AttributeProto.GRAPH else list(a2.graphs)):
            nodes = [_resolve(m, attrs, absent) for m in g.node]
            del g.node[:]
            g.node.extend(nodes)
    out.input[:] = ["" if x in absent else x for x in n.input]
    return out


def instantiate(fn: onnx.FunctionProto, call: onnx.NodeProto,
                inputs: list[Value | None]) -> tuple[onnx.GraphProto, dict[str, Value]]:
    """The body of ``fn`` for this call as a graph, and the values of its inputs."""
    bound: dict[str, Value] = {}
    for i, formal in enumerate(fn.input):
        v = inputs[i] if i < len(inputs) else None
        if v is not None:
            bound[formal] = v
    absent = set(fn.input) - set(bound)
    attrs = {a.name: a for a in fn.attribute_proto}  # defaults
    attrs.update({a.name: a for a in call.attribute})
    nodes = [_resolve(n, attrs, absent) for n in fn.node]
    return helper.make_graph(nodes, fn.name or "function", [], []), bound
