"""Rules for optional values: Optional, OptionalHasElement, OptionalGetElement."""

from __future__ import annotations

from onnxsym.inference.node import Node
from onnxsym.inference.values import Optional_, Sequence, Tensor, unranked
from onnxsym.registry import Outputs, register

from .common import BOOL


def _from_type(node, tp):
    """The value an Optional node's ``type`` attribute declares (a tensor or a sequence of tensors)."""
    which = tp.WhichOneof("value") if tp is not None else None
    if which == "sequence_type":
        return Sequence(_from_type(node, tp.sequence_type.elem_type))
    if which != "tensor_type":
        return None
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return unranked(tt.elem_type)
    return Tensor(tt.elem_type, tuple(d.dim_value if d.HasField("dim_value") else
                                      node.fresh("declared by the Optional's type", 0, axis)
                                      for axis, d in enumerate(tt.shape.dim)))


@register("Optional", conditions=())
def optional_rule(node: Node) -> Outputs:
    x = node.input(0)
    return [Optional_(x if x is not None else _from_type(node, node.attr("type")))]


@register("OptionalHasElement", conditions=())
def optional_has_element_rule(node: Node) -> Outputs:
    x = node.input(0)
    if x is None:  # opset 18: an omitted input is an empty optional
        known = (False,)
    elif isinstance(x, (Tensor, Sequence)):  # opset 18: a tensor or sequence is there
        known = (True,)
    else:
        known = None
    return [Tensor(BOOL, (), known)]


@register("OptionalGetElement", conditions=())
def optional_get_element_rule(node: Node) -> Outputs:
    x = node.input(0)
    if isinstance(x, Optional_):
        return [x.elem if x.elem is not None else node.unknown_rank("the optional's element unknown")]
    return [x if x is not None else node.unknown_rank("input unknown")]  # opset 18: a tensor or sequence passes through
