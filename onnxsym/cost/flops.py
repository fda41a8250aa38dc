"""FLOPs of one node: the cost formula its op registered (:mod:`onnxsym.cost.formulas`),
over the node's inferred shapes. Ops without one (control flow, unknown domains) are not
counted: ``None``."""

from __future__ import annotations

from onnx import NodeProto, helper

from .. import registry
from ..dims import Dim
from ..inference.values import Tensor


def _shape(values, name) -> tuple[Dim, ...] | None:
    v = values.get(name) if name else None
    return v.shape if isinstance(v, Tensor) else None


def node_flops(node: NodeProto, values: dict[str, object]) -> tuple[str | None, Dim | None]:
    """``(family, flops)`` of a node; ``(None, None)`` when it is not counted."""
    e = registry.entry(node.domain, node.op_type)
    formula = None if e is None else e.cost
    if formula is None:
        return None, None
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute
             if a.type in (a.INT, a.INTS, a.FLOAT)}
    ins = [_shape(values, n) for n in node.input]
    outs = [_shape(values, n) for n in node.output] or [None]
    return formula.family, formula.count(node, ins, outs, attrs)
