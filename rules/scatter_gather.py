"""Indexed reads and writes: GatherND and the Scatter family, plus the ops that
rearrange elements in place (ReverseSequence, CumProd, TensorScatter)."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.domain.needs import GATHER_INDICES, GATHER_ND_INDICES
from onnxsym.errors import InvalidModel, ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register, unlearned
from onnxsym.semantics.shapes import prod

from . import shape_ops
from .common import arg, present, same_shape, spec_shape


@register("GatherND", conditions=[GATHER_ND_INDICES, "with batch_dims b: prod(data.shape[:b]) divides "
                                   "prod(indices.shape[:b]) (onnxruntime; the spec: they are equal)"],
          cost=formulas.MOVEMENT)
def gather_nd(node: Node) -> Outputs:
    data, idx = arg(node, 0), arg(node, 1)
    batch = node.attr_int("batch_dims", 0) if node.opset >= 12 else 0
    why = "data or indices rank unknown, or the index depth symbolic"
    shape, indices = (shape_of(t, data.dtype, why=why) for t in (data, idx))
    if not indices or not isinstance(indices[-1], int):
        return [node.unknown_rank(why, 0, data.dtype)]
    if batch and len(shape) >= batch and len(indices) > batch:
        # onnxruntime counts the batches of each and needs only the data's to divide the indices'
        rows, picks = prod(shape[:batch]), prod(indices[:batch])
        if dims.try_le(1, rows) is True:
            node.require_equal(dims.mul(rows, dims.floordiv(picks, rows)), picks,
                               f"GatherND: the data's {rows} batches divide the indices' {picks}")
    # each index tuple of length k addresses data.shape[batch:batch + k]
    k = indices[-1]
    return [Tensor(data.dtype, tuple(indices[:-1]) + tuple(shape[batch + k:]))]


UPDATES_LIKE_INDICES = "updates has indices' shape"


@register("ScatterElements", conditions=[GATHER_INDICES, shape_ops.ELEMENTS_FIT, UPDATES_LIKE_INDICES],
          cost=formulas.MOVEMENT)
@register("Scatter", conditions=[GATHER_INDICES, shape_ops.ELEMENTS_FIT, UPDATES_LIKE_INDICES])
def scatter_elements(node: Node) -> Outputs:
    """The data with the elements the indices address replaced: one update per index
    (onnxruntime checks the rank and every dim, axis included, at every run)."""
    idx, upd = arg(node, 1), arg(node, 2)
    shape_ops.elements_fit(node, arg(node, 0), idx)
    if idx.shape is not None and upd.shape is not None:
        if len(idx.shape) != len(upd.shape):
            raise ShapeContradiction(f"{node.op_type}: updates has rank {len(upd.shape)}, indices {len(idx.shape)}")
        for i, (k, u) in enumerate(zip(idx.shape, upd.shape)):
            node.require_equal(u, k, f"{node.op_type}: updates' axis {i} is indices' ({k})")
    return [same_shape(arg(node, 0))]


@register("ReverseSequence", conditions=["sequence_lens has X[batch_axis] elements",
                                          "0 <= sequence_lens <= X[time_axis] (sequence_lens a constant)",
                                          unlearned("sequence_lens <= X[time_axis] (sequence_lens computed)")],
          cost=formulas.MOVEMENT)
def reverse_sequence(node: Node) -> Outputs:
    """The input's shape; one length per batch row, each in [0, X[time_axis]] (onnxruntime
    checks both at every run: a constant's lengths bound the time axis from below)."""
    x, lens = arg(node, 0), arg(node, 1)
    batch_axis = node.attr_int("batch_axis", 1)
    if x.shape is not None and lens.shape is not None and len(lens.shape) == 1 and batch_axis in (0, 1) \
            and len(x.shape) >= 2:
        node.require_equal(lens.shape[0], x.shape[batch_axis], "ReverseSequence: sequence_lens has one length per batch row")
    known = lens.value
    if x.shape is not None and len(x.shape) >= 2 and batch_axis in (0, 1) and known \
            and all(isinstance(n, int) for n in known):
        if min(known) < 0:
            raise ShapeContradiction(f"ReverseSequence: a sequence length is {min(known)}, below 0")
        time = x.shape[1 - batch_axis]
        node.require_at_least(dims.sub(time, max(known)), 0,
                              f"ReverseSequence: the longest sequence, {max(known)}, fits the time axis {time}")
    return [same_shape(x)]


@register("TensorScatter", conditions=[
    "update has past_cache's rank and dims off axis (axis in [1, rank - 1]), and at most its length on axis",
    "write_indices has past_cache[0] elements, each >= 0 (a constant's)",
    "linear mode: write_indices + update[axis] <= past_cache[axis] (write_indices absent or a constant)",
    unlearned("linear mode: write_indices + update[axis] <= past_cache[axis] (write_indices computed)")])
def tensor_scatter(node: Node) -> Outputs:
    """past_cache with update written at each batch row's write index along axis (in
    circular mode, wrapping): the checks onnxruntime makes at every run."""
    cache, upd = arg(node, 0), arg(node, 1)
    c, u = cache.shape, upd.shape
    if c is None or u is None:
        return [same_shape(cache)]
    if len(c) != len(u):
        raise ShapeContradiction(f"TensorScatter: update has rank {len(u)}, past_cache {len(c)}")
    axis = node.attr_int("axis", -2)
    axis = axis + len(c) if axis < 0 else axis
    if not 1 <= axis < len(c):
        raise ShapeContradiction(f"TensorScatter: axis {node.attr_int('axis', -2)} is not in [1, {len(c) - 1}]")
    for d, (a, b) in enumerate(zip(c, u)):
        if d != axis:
            node.require_equal(b, a, f"TensorScatter: update's axis {d} is past_cache's ({a})")
    last = 0  # the largest write index a linear write starts at (0 without write_indices)
    if present(node, 2):
        wi = arg(node, 2)
        if wi.shape is not None and len(wi.shape) != 1:  # (onnxruntime refuses it at load)
            raise ShapeContradiction(f"TensorScatter: write_indices has rank {len(wi.shape)}, not 1")
        if wi.shape is not None:
            node.require_equal(wi.shape[0], c[0], "TensorScatter: write_indices has one index per batch row")
        known = wi.value
        if known and all(isinstance(i, int) for i in known):
            if min(known) < 0:
                raise ShapeContradiction(f"TensorScatter: a write index is {min(known)}, below 0")
            last = max(known)
    if node.attr_str("mode", "linear") != "linear":
        last = 0  # (circular: the writes wrap, any index >= 0 runs)
    # (the update is never longer than the cache; a linear write from index k needs k more)
    node.require_at_least(dims.sub(c[axis], dims.add(u[axis], last)), 0,
                          f"TensorScatter: write index {last} + update's length {u[axis]} fits the cache's {c[axis]}")
    return [same_shape(cache)]


@register("CumProd", conditions=())
def like_first_input(node: Node) -> Outputs:
    """The output is the first input with some elements replaced or moved."""
    return [same_shape(arg(node, 0))]


@register("ScatterND", conditions=[GATHER_ND_INDICES], cost=formulas.MOVEMENT)
def scatter_nd(node: Node) -> Outputs:
    """The data with the slices the index tuples address replaced: a tuple of k indices
    addresses data's first k axes (k at most its rank), and the updates are shaped
    indices.shape[:-1] + data.shape[k:]."""
    data, idx, upd = arg(node, 0), arg(node, 1), arg(node, 2)
    if data.shape is not None and idx.shape is not None and idx.shape and isinstance(idx.shape[-1], int):
        k = idx.shape[-1]
        if k > len(data.shape):
            raise InvalidModel(f"the index tuples have {k} entries and data rank {len(data.shape)}; the ONNX spec "
                               f"of ScatterND addresses at most data's rank of axes with one tuple")
        spec_shape(node, "updates", upd, tuple(idx.shape[:-1]) + tuple(data.shape[k:]),
                   "indices.shape[:-1] + data.shape[indices.shape[-1]:]")
    return [same_shape(data)]
