"""Normalization ops of onnxruntime's contrib set: the fused skip/embed layer norms,
SimplifiedLayerNormalization (RMS norm, registered by onnxruntime in the ONNX domain)
and the NHWC group norms of the diffusion fusions."""

from __future__ import annotations

from onnxsym.cost import formulas
from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register
from onnxsym.semantics.shapes import normalize_axis

from .common import F32, I32, arg, rank
from .contrib_common import MS


def _stat_shape(x, axis):
    """Per-row statistics of a norm over axes ``axis..``: those axes become 1."""
    if x.shape is None:
        return None
    axis = normalize_axis(axis, len(x.shape))
    return tuple(x.shape[:axis]) + (1,) * (len(x.shape) - axis)


@register("SkipLayerNormalization SkipSimplifiedLayerNormalization", domain=MS, cost=formulas.NORMALIZATION)
def skip_layer_norm(node: Node) -> Outputs:
    """output and input_skip_bias_sum have the input's shape; mean and inv_std_var
    (training outputs) one value per row."""
    x = arg(node, 0)
    stats = Tensor(F32, _stat_shape(x, -1))
    return [Tensor(x.dtype, x.shape), stats, stats, Tensor(x.dtype, x.shape)][:max(node.num_outputs, 1)]


@register("SimplifiedLayerNormalization", conditions=(), cost=formulas.NORMALIZATION)
def simplified_layer_norm(node: Node) -> Outputs:
    """RMS norm over axes ``axis..``; inv_std_var keeps the leading axes."""
    x = arg(node, 0)
    outs = [Tensor(x.dtype, x.shape)]
    if node.num_outputs > 1:
        outs.append(Tensor(node.attr_int("stash_type", 1), _stat_shape(x, node.attr_int("axis", -1))))
    return outs


@register("EmbedLayerNormalization", domain=MS, cost=formulas.EMBED_NORMALIZATION)
@register("QEmbedLayerNormalization", domain=MS)
def embed_layer_norm(node: Node) -> Outputs:
    """input_ids (batch, seq) and word_embedding (vocab, hidden) give (batch, seq, hidden);
    mask_index is one int32 per batch row; embedding_sum is the pre-norm sum."""
    ids, words = arg(node, 0), arg(node, 2)
    rank(ids, 2)
    dtype = F32 if node.op_type == "QEmbedLayerNormalization" else words.dtype
    if ids.shape is None or words.shape is None:
        shape = None
    else:
        shape = (ids.shape[0], ids.shape[1], words.shape[-1])
    mask = Tensor(I32, None if ids.shape is None else (ids.shape[0],))
    return [Tensor(dtype, shape), mask, Tensor(dtype, shape)][:max(node.num_outputs, 1)]


@register("GroupNorm SkipGroupNorm", domain=MS)
def group_norm(node: Node) -> Outputs:
    """Y (and SkipGroupNorm's sum S) keep the input's shape in either layout."""
    x = arg(node, 0)
    return [Tensor(x.dtype, x.shape)] * max(node.num_outputs, 1)
