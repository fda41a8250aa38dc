"""Loss ops: a scalar when reduced, the target's shape with reduction "none".

onnxruntime 1.32 runs both ops' function bodies (SoftmaxCrossEntropyLoss: a LogSoftmax over
axis 1, then NegativeLogLikelihoodLoss's body). That body gathers ``GatherElements(input,
Unsqueeze(target', 1), axis=1)`` and ``Gather(weight, target')``, where ``target'`` is the
target with each ``ignore_index`` element replaced by 0. So what it needs is what those two
gathers check: the index block fits inside the input (target's dims at most the input's, not
equal as the spec says), and each class index is in range of C and of the weight's length
(negative ones count from the end). Those are stated where the target's elements are known
(a constant, or bounds from the sizes); a fed target's classes are data. One gap: a computed
target whose largest (or least) element may be the ignore_index says nothing of the next one
at the size where it is (what holds for every target within the bounds)."""

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


def _class_bounds(site: Site) -> tuple[Dim, Dim, int | None] | None:
    """The least and largest class index the body gathers, and the ignore_index that may be
    either bound (None where it provably is not): the target's elements with each ignored
    one read as 0. None where the target's elements are not known (a fed target: data)."""
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
        return min(xs), max(xs), None
    b = site.elements.bounds(name) if site.elements is not None else None
    if b is None:
        return None
    lo, hi = b
    outside = ignore is None or dims.try_le(ignore, dims.sub(lo, 1)) is True or dims.try_le(dims.add(hi, 1), ignore) is True
    return lo, hi, None if outside else ignore


def _classes_in(site: Site, d: Dim, bounds, count: Dim, what: str) -> Iterator[Raw]:
    """-d <= each class < d. Where the ignore_index may be a bound, that bound is no class
    where it is the ignored value: what holds for every target within the bounds is then
    "the bound is in range, or it is the ignored value" (and an ignored one, read as 0, needs d >= 1)."""
    lo, hi, ignore = bounds
    if ignore is None:
        yield from index_range(site, d, (lo, hi), count, what)
        return
    yield from index_range(site, d, (0, 0), count, what)
    empty = () if dims.try_le(1, count) is True else ((count, 0),)
    for bound, inside, why in ((hi, dims.dmin(hi, dims.sub(d, 1)), f"index {hi} < {d} {what}"),
                               (lo, dims.dmax(lo, dims.neg(d)), f"index {lo} >= -{d} {what}")):
        if dims.try_eq(bound, inside) is not True:
            yield site.raw("or", inside, bound, f"{why}, or {bound} is ignore_index {ignore}",
                           alts=((inside, bound), (bound, ignore)) + empty)


def _loss_needs(site: Site) -> Iterator[Raw]:
    op = site.node.op_type
    x, t = site.shape(0), site.shape(1)
    if x is None or t is None or len(x) < 2 or len(t) != len(x) - 1:
        return
    for axis, (b, a) in enumerate(zip(t, (x[0],) + tuple(x[2:]))):
        if dims.try_le(b, a) is not True and not (isinstance(a, int) and isinstance(b, int)):
            yield site.raw("<=", b, a, f"{op}: target dim {axis} {b} <= the input's {a} "
                                       "(onnxruntime gathers the target's block of the input)")
    if op == "SoftmaxCrossEntropyLoss":  # (the body's Reshape(scores, [0, 0, -1]): -1 beside a 0 fails)
        for axis in (0, 1):
            if dims.try_le(1, x[axis]) is not True:
                yield site.raw("<=", 1, x[axis], f"{op}: scores dim {axis} {x[axis]} >= 1 (onnxruntime reshapes "
                                                 "the scores to (N, C, -1))")
    # (a class not known: whatever it is, C and the weight's length are at least 1, unless no class is read)
    bounds = _class_bounds(site) or (0, 0, None)
    count = prod(t)
    yield from _classes_in(site, x[1], bounds, count, f"{op}: a class of the input's {x[1]}")
    w = site.shape(2)
    if w is not None and len(w) == 1:
        yield from _classes_in(site, w[0], bounds, count, f"{op}: a class of the weight's {w[0]}")


LOSS_NEEDS = Condition("target's dims are at most the input's without its class axis 1 (onnxruntime, not equal "
                       "as the spec says); -C <= a class < C and -len(weight) <= a class < len(weight), "
                       "ignore_index read as 0 (where the target's elements are known; else C and the weight's "
                       "length >= 1 unless the target is empty); SoftmaxCrossEntropyLoss: N and C >= 1", _loss_needs)


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
