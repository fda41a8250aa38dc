"""Loss ops: a scalar when reduced, the target's shape with reduction "none".

onnxruntime 1.32 runs both ops' function bodies (SoftmaxCrossEntropyLoss: a LogSoftmax over
axis 1, then NegativeLogLikelihoodLoss's body). That body gathers ``GatherElements(input,
Unsqueeze(target', 1), axis=1)`` and ``Gather(weight, target')``, where ``target'`` is the
target with each ``ignore_index`` element replaced by 0. So what it needs is what those two
gathers check: the index block fits inside the input (target's dims at most the input's, not
equal as the spec says), and each class index is in range of C and of the weight's length
(negative ones count from the end)."""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from onnx import numpy_helper

from onnxsym import dims
from onnxsym.dims import Dim
from onnxsym.domain.needs import Raw, Site, index_range
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Condition, Outputs, register
from onnxsym.semantics.shapes import prod

from .common import arg, present


def _class_bounds(site: Site) -> tuple[Dim, Dim] | None:
    """The least and largest class index the body gathers: the target's elements with each
    ``ignore_index`` one read as 0. None where the target's elements are not known well enough
    (a fed target: data, not stated)."""
    ignore = next((a.i for a in site.node.attribute if a.name == "ignore_index"), None)
    name = site.node.input[1]
    v = site.value(1)
    if v is None and site.elements is not None:
        t = site.elements.initializers.get(name)
        if t is not None and t.data_location != onnx.TensorProto.EXTERNAL:
            v = tuple(int(x) for x in numpy_helper.to_array(t).ravel())
    if v is not None:
        if not v or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            return None
        xs = [0 if x == ignore else x for x in v]
        return min(xs), max(xs)
    b = site.elements.bounds(name) if site.elements is not None else None
    if b is None or ignore is None:
        return b
    lo, hi = b  # (an ignored element inside the bounds is read as 0: the bounds are not the gathered ones)
    return b if dims.try_le(ignore, dims.sub(lo, 1)) is True or dims.try_le(dims.add(hi, 1), ignore) is True else None


def _loss_needs(site: Site) -> Iterator[Raw]:
    op = site.node.op_type
    x, t = site.shape(0), site.shape(1)
    if x is None or t is None or len(x) < 2 or len(t) != len(x) - 1:
        return
    for axis, (b, a) in enumerate(zip(t, (x[0],) + tuple(x[2:]))):
        if dims.try_le(b, a) is not True and not (isinstance(a, int) and isinstance(b, int)):
            yield site.raw("<=", b, a, f"{op}: target dim {axis} {b} <= the input's {a} "
                                       "(onnxruntime gathers the target's block of the input)")
    bounds = _class_bounds(site)
    if bounds is None:
        return
    count = prod(t)
    yield from index_range(site, x[1], bounds, count, f"{op}: a class of the input's {x[1]}")
    w = site.shape(2)
    if w is not None and len(w) == 1:
        yield from index_range(site, w[0], bounds, count, f"{op}: a class of the weight's {w[0]}")


LOSS_NEEDS = Condition("target's dims are at most the input's without its class axis 1 (onnxruntime, not equal "
                       "as the spec says); -C <= a class < C and -len(weight) <= a class < len(weight), "
                       "ignore_index read as 0 (where the target's elements are known)", _loss_needs)


def _static_agree(node, scores, target):
    """What onnxruntime's load-time inference refuses, at every size: a target rank other than
    the input's less one, and a static target dim other than the input's static one (from opset
    22 also a static weight length other than a static C). The run-time body would take a
    smaller block, but the load check comes first."""
    x, t = scores.shape, target.shape
    if x is None or t is None:
        return
    if len(t) != len(x) - 1:
        raise ShapeContradiction(f"{node.op_type}: target has rank {len(t)}, not the input's {len(x)} - 1")
    pairs = list(zip(t, (x[0],) + tuple(x[2:])))
    w = arg(node, 2).shape if present(node, 2) else None
    if w is not None and len(w) == 1 and len(x) > 1 and node.opset >= 22:  # (from NegativeLogLikelihoodLoss-22)
        pairs.append((w[0], x[1]))
    for b, a in pairs:
        if isinstance(a, int) and isinstance(b, int) and a != b:
            raise ShapeContradiction(f"{node.op_type}: static {b} against the input's static {a} "
                                     "(onnxruntime's load check unifies them)")


def _loss(node, scores, target):
    _static_agree(node, scores, target)
    if node.attr_str("reduction", "mean") != "none":
        return Tensor(scores.dtype, ())
    return Tensor(scores.dtype, target.shape)  # [N] or [N, d1, ..., dk]


@register("NegativeLogLikelihoodLoss", conditions=[LOSS_NEEDS])
def nll_loss(node: Node) -> Outputs:
    return [_loss(node, arg(node, 0), arg(node, 1))]


@register("SoftmaxCrossEntropyLoss", conditions=[LOSS_NEEDS])
def softmax_cross_entropy_loss(node: Node) -> Outputs:
    scores = arg(node, 0)
    return [_loss(node, scores, arg(node, 1)), Tensor(scores.dtype, scores.shape)]
