"""Ops that make or retype whole tensors: EyeLike, BitCast, Det, CenterCropPad,
OneHot, ImageDecoder."""

from __future__ import annotations

import math

from onnx import TensorProto

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import MAX_VALUE_ELEMENTS, Tensor
from onnxsym.registry import Outputs, register
from onnxsym.semantics.floatops import Quotient
from onnxsym.semantics.shapes import normalize_axis

from .common import arg, like_input, same_shape, scalar

register("EyeLike", conditions=(), cost=formulas.MOVEMENT)(like_input)


@register("BitCast", conditions=())
def bit_cast(node: Node) -> Outputs:
    # the target type has the input type's bit width, so the shape is kept
    return [same_shape(arg(node, 0), node.attr_int("to"))]


@register("Det", conditions=["X[-2] == X[-1]"])
def det(node: Node) -> Outputs:
    x = arg(node, 0)
    shape = shape_of(x, x.dtype)
    if len(shape) >= 2:
        node.require_equal(shape[-2], shape[-1], "Det of square matrices")
    return [Tensor(x.dtype, tuple(shape[:-2]))]


@register("CenterCropPad", conditions=())
def center_crop_pad(node: Node) -> Outputs:
    x, target = arg(node, 0), arg(node, 1)
    shape = shape_of(x, x.dtype)
    rank = len(shape)
    given = node.attr_ints("axes")
    axes = range(rank) if given is None else [normalize_axis(a, rank) for a in given]
    out = list(shape)
    sizes = target.value
    for j, a in enumerate(axes):
        out[a] = sizes[j] if sizes is not None else node.fresh("CenterCropPad target shape unknown", 0, a)
    return [Tensor(x.dtype, tuple(out))]


def _depth(v):
    """OneHot's depth as a dim: a float depth counts as its integer part."""
    if isinstance(v, float):
        return int(v)
    if isinstance(v, Quotient):  # a float depth computed from a size: its integer part, as onnxruntime casts it
        return v.trunc()
    return v if isinstance(v, (int, dims.Expr)) and not isinstance(v, bool) else None


@register("OneHot", conditions=["depth >= 1 (onnxruntime refuses depth 0, even for no indices)",
                                 "values is [off, on]: 1-D of 2 elements"], cost=formulas.MOVEMENT)
def one_hot(node: Node) -> Outputs:
    idx, values = arg(node, 0), arg(node, 2)
    if values.shape is not None:
        if len(values.shape) != 1:  # (onnxruntime refuses it at load, at every size)
            raise ShapeContradiction(f"OneHot values has rank {len(values.shape)}, not 1")
        node.require_equal(values.shape[0], 2, f"OneHot: values has 2 elements, not {values.shape[0]}")
    indices = shape_of(idx, values.dtype, why="indices rank unknown")
    rank = len(indices) + 1
    axis = normalize_axis(node.attr_int("axis", -1), rank)
    depth = _depth(scalar(node, 1))
    if depth is None:
        depth = node.fresh("OneHot depth unknown", 0, axis)
        node.require_at_least(depth, 1, "OneHot: depth >= 1 (onnxruntime refuses depth 0)")  # (not stated: data)
    else:
        node.require_at_least(depth, 1, f"OneHot: depth {depth} >= 1 (onnxruntime refuses depth 0)")
    shape = tuple(indices[:axis]) + (depth,) + tuple(indices[axis:])
    return [Tensor(values.dtype, shape, _one_hot_elements(idx, depth, values, axis))]


def _one_hot_elements(idx, depth, values, axis):
    """The elements, when the indices and depth are numbers (torch's ``repeat`` lowers to
    OneHot([1], rank, [1, n]) as Tile repeats): ``on`` where the index, wrapped once from
    ``-depth``, is the position along ``axis``, ``off`` elsewhere."""
    if idx.value is None or values.value is None or len(values.value) != 2 or not isinstance(depth, int) \
            or not all(isinstance(d, int) for d in idx.shape):
        return None
    if not all(isinstance(i, (int, float)) and not isinstance(i, bool) for i in idx.value):
        return None
    outer, inner = math.prod(idx.shape[:axis]), math.prod(idx.shape[axis:])
    if len(idx.value) * depth > MAX_VALUE_ELEMENTS:
        return None
    off, on = values.value
    out = []
    for o in range(outer):
        for k in range(depth):
            for i in range(inner):
                j = int(idx.value[o * inner + i])
                out.append(on if (j + depth if j < 0 else j) == k else off)
    return tuple(out)


@register("ImageDecoder", conditions=())
def image_decoder(node: Node) -> Outputs:
    channels = 1 if node.attr_str("pixel_format", "RGB") == "Grayscale" else 3
    return [Tensor(TensorProto.UINT8, (node.fresh("decoded image height", 0, 0),
                                       node.fresh("decoded image width", 0, 1), channels))]
