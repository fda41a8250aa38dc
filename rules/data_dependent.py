"""Ops whose output size depends on the input's elements: NonZero, Compress,
Unique, NonMaxSuppression. Each count is a fresh symbol with the range the op
implies, unless the elements are known and the count can be read off them."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.dims import Dim
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.provenance import Kind
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register, unlearned
from onnxsym.semantics.shapes import Shape, normalize_axis, prod

from .common import I64, arg, count, present, scalar, size_bound, static_bound

DD = Kind.DATA_DEPENDENT


def _concrete(value):
    """The elements as plain numbers, or None when any is symbolic or unknown."""
    if value is None or not all(isinstance(v, (bool, int, float)) for v in value):
        return None
    return value


@register("NonZero", conditions=(), cost=formulas.MOVEMENT)
def nonzero(node: Node) -> Outputs:
    x = arg(node, 0)
    if x.shape is None:
        return [Tensor(I64, (node.fresh("rank of NonZero input unknown", 0, 0, kind=DD),
                             node.fresh("NonZero count", 0, 1, kind=DD)))]
    rank: Dim = len(x.shape)
    if rank == 0:
        # runtimes disagree on a scalar: onnxruntime answers rank 1, onnx's
        # reference evaluator and shape inference rank 0
        rank = node.fresh("rank NonZero reports for a scalar (0 or 1)", 0, 0, 0, 1, DD)
    vals = _concrete(x.value)
    n: Dim
    if vals is not None:
        n = sum(1 for v in vals if v)
    else:
        n = count(node, "number of non-zero elements", 0, 1, size_bound(x.shape), bound=prod(x.shape))
    return [Tensor(I64, (rank, n))]


@register("Compress", conditions=[unlearned("condition has at most X[axis] elements (numel(X) without axis)")],
          cost=formulas.MOVEMENT)
def compress(node: Node) -> Outputs:
    x, cond = arg(node, 0), arg(node, 1)
    axis = node.attr_int("axis")
    in_shape = shape_of(x, x.dtype)
    shape: Shape
    if axis is None:
        shape, a = (prod(in_shape),), 0
    else:
        shape, a = tuple(in_shape), normalize_axis(axis, len(in_shape))
    d = shape[a]
    cond_len = cond.shape[0] if cond.shape is not None and len(cond.shape) == 1 else None
    n: Dim | None = None
    vals = _concrete(cond.value)
    if vals is not None and dims.try_le(len(vals), d) is True:
        n = sum(1 for v in vals if v)  # every selected index lies inside the axis
    if n is None:
        hi = static_bound(d) if cond_len is None else min(static_bound(d), static_bound(cond_len))
        most = d if cond_len is None else dims.dmin(d, cond_len)  # (a selected index lies inside both)
        n = count(node, "number of true conditions of Compress", 0, a, hi, bound=most)
    return [Tensor(x.dtype, shape[:a] + (n,) + shape[a + 1:])]


@register("Unique", conditions=())
def unique(node: Node) -> Outputs:
    x = arg(node, 0)
    axis = node.attr_int("axis")
    if x.shape is None:
        u = node.fresh("number of unique elements", 0, 0, kind=DD)
        return [node.unknown_rank("input rank unknown", 0, x.dtype), Tensor(I64, (u,)),
                node.unknown_rank("input rank unknown", 2, I64), Tensor(I64, (u,))]
    if axis is None:
        total = prod(x.shape)
        lo = 1 if dims.try_le(1, total) is True else 0
        vals = _concrete(x.value)
        if vals is not None and all(v == v for v in vals):  # (NaN: runtimes differ)
            u = len(set(vals))
        else:
            u = count(node, "number of unique elements", 0, 0, static_bound(total), lo, bound=total)
        y_shape: Shape = (u,)
        inverse: Shape = (total,)
    else:
        a = normalize_axis(axis, len(x.shape))
        d = x.shape[a]
        lo = 1 if dims.try_le(1, prod(x.shape)) is True else 0
        u = count(node, "number of unique slices", 0, a, static_bound(d), min(lo, static_bound(d)), bound=d)
        y_shape, inverse = tuple(x.shape[:a]) + (u,) + tuple(x.shape[a + 1:]), (d,)
    return [Tensor(x.dtype, y_shape), Tensor(I64, (u,)), Tensor(I64, inverse), Tensor(I64, (u,))]


@register("NonMaxSuppression", conditions=["boxes and scores agree on the batch and the box count",
                                            "boxes' last dim is 4"])
def non_max_suppression(node: Node) -> Outputs:
    """boxes (batch, spatial, 4) and scores (batch, classes, spatial), as onnxruntime checks them
    at every run (it reads the thresholds' first element, whatever their shape)."""
    boxes, scores = arg(node, 0), arg(node, 1)
    for what, t in (("boxes", boxes), ("scores", scores)):
        if t.shape is not None and len(t.shape) != 3:
            raise ShapeContradiction(f"NonMaxSuppression: {what} has rank {len(t.shape)}, not 3")
    if boxes.shape is not None:
        node.require_equal(boxes.shape[2], 4, "NonMaxSuppression: a box has 4 coordinates")
    if boxes.shape is not None and scores.shape is not None:
        node.require_equal(boxes.shape[0], scores.shape[0], "NonMaxSuppression: boxes and scores have one batch")
        node.require_equal(boxes.shape[1], scores.shape[2], "NonMaxSuppression: boxes and scores count the same boxes")
    per_class = scalar(node, 2) if present(node, 2) else 0
    if isinstance(per_class, int) and per_class <= 0:
        return [Tensor(I64, (0, 3))]  # no box may be selected
    hi, total = dims.INT64_MAX, None
    if scores.shape is not None and len(scores.shape) == 3:
        batches, classes, spatial = scores.shape
        most = spatial if per_class is None else dims.dmin(spatial, dims.dmax(0, per_class))
        total = prod((batches, classes, most))
        hi = static_bound(total)
    n = count(node, "number of boxes NonMaxSuppression selects", 0, 0, hi, bound=total)
    return [Tensor(I64, (n, 3))]
