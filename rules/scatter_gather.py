"""Indexed reads and writes: GatherND and the Scatter family, plus the ops that
rearrange elements in place (ReverseSequence, CumProd, TensorScatter)."""

from __future__ import annotations

from onnxsym.cost import formulas
from onnxsym.domain.needs import GATHER_INDICES, GATHER_ND_INDICES
from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register, unlearned

from .common import arg, same_shape


@register("GatherND", conditions=[GATHER_ND_INDICES], cost=formulas.MOVEMENT)
def gather_nd(node: Node) -> Outputs:
    data, idx = arg(node, 0), arg(node, 1)
    batch = node.attr("batch_dims", 0) if node.opset >= 12 else 0
    if data.shape is None or idx.shape is None or not idx.shape or not isinstance(idx.shape[-1], int):
        return [node.unknown_rank("data or indices rank unknown, or the index depth symbolic", 0, data.dtype)]
    # each index tuple of length k addresses data.shape[batch:batch + k]
    k = idx.shape[-1]
    return [Tensor(data.dtype, tuple(idx.shape[:-1]) + tuple(data.shape[batch + k:]))]


@register("ScatterElements", conditions=[GATHER_INDICES], cost=formulas.MOVEMENT)
@register("Scatter", conditions=[GATHER_INDICES])
@register("ScatterND", conditions=[GATHER_ND_INDICES], cost=formulas.MOVEMENT)
@register("ReverseSequence", conditions=[unlearned("sequence_lens <= X[time_axis]")], cost=formulas.MOVEMENT)
@register("TensorScatter", conditions=[unlearned("write_indices + update length <= the cache length")])
@register("CumProd", conditions=())
def like_first_input(node: Node) -> Outputs:
    """The output is the first input with some elements replaced or moved."""
    return [same_shape(arg(node, 0))]
