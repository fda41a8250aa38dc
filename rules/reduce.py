"""Reduce* rules: axes from the attribute (older opsets) or the second input."""

from __future__ import annotations

from typing import List

from onnxsym.dims import Dim
from onnxsym.node import Node
from onnxsym.registry import Outputs, register
from onnxsym.shapes import normalize_axis
from onnxsym.values import Tensor

from .common import arg, present

_OPS = "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum " \
       "ReduceLogSumExp ReduceSumSquare"

_UNKNOWN = object()


def _from_input(node):
    return node.opset >= (13 if node.op_type == "ReduceSum" else 18)


def _axes(node):
    """The axes list, None for "no axes given", or _UNKNOWN when given but not known."""
    if not _from_input(node):
        a = node.attr("axes")
        return None if a is None else list(a)
    if not present(node, 1):
        return None
    t = arg(node, 1)
    if t.value is None:
        if t.shape is not None and len(t.shape) == 1 and t.shape[0] == 0:
            return []
        return _UNKNOWN
    return [int(v) for v in t.value]


@register(_OPS)
def reduce(node: Node) -> Outputs:
    x = arg(node, 0)
    if x.shape is None:
        return [node.unknown_rank("input rank unknown", 0, x.dtype)]
    keepdims = node.attr("keepdims", 1)
    noop = node.attr("noop_with_empty_axes", 0)
    rank = len(x.shape)
    axes = _axes(node)
    if axes is _UNKNOWN:
        if keepdims:
            # each dim is kept or becomes 1, so a dim of 1 is 1 either way
            return [Tensor(x.dtype, tuple(d if d == 1 else node.fresh("reduce axes unknown", 0, a)
                                          for a, d in enumerate(x.shape)))]
        return [node.unknown_rank("axes input's value unknown", 0, x.dtype)]
    if not axes:
        if noop and _from_input(node):
            return [Tensor(x.dtype, x.shape, x.value)]
        axes = list(range(rank))
    red = {normalize_axis(a, rank) for a in axes}
    shape: List[Dim] = []
    for i, d in enumerate(x.shape):
        if i in red:
            if keepdims:
                shape.append(1)
        else:
            shape.append(d)
    return [Tensor(x.dtype, tuple(shape))]
