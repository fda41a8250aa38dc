"""Sparse-attention ops of onnxruntime 1.32's contrib set: the indexers that pick the
entries each query may read (fixed capacities set by attributes, so no output size is
data) and the attention ops that read them."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym import dims
from onnxsym.inference.node import shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import register

from .common import I32, arg, present, rank, required_int, same_shape
from .contrib_attention import gqa_head_size, heads_attr, paged_attention
from .contrib_common import MS

# Paged main caches updated in place: PagedAttention's shapes, inputs 0-4 in the same places.
register("SparsePagedAttention", domain=MS)(paged_attention)


def _capacity(node):
    """Selected entries per query: token_budget + compress_ratio - 1 ("qsa") or index_topk ("csa")."""
    if node.attr_str("policy_mode") == "csa":
        return required_int(node, "index_topk")
    return required_int(node, "token_budget") + required_int(node, "compress_ratio") - 1


@register("SparseAttentionIndexer", domain=MS)
def sparse_attention_indexer(node):
    """selected_indices (B, S, capacity); present_key is past_key when it is a max-capacity
    buffer (past_sequence_length given), else (B, P + S, H) for "qsa" (one raw key per
    token), and the compressed entries this call emits for "csa" (fresh)."""
    q, past = arg(node, 0), arg(node, 7)
    csa = node.attr_str("policy_mode") == "csa"
    sel = None if rank(q, 3) is None else (q.shape[0], q.shape[1], _capacity(node))
    if present(node, 12):
        key = past.shape
    elif past.shape is not None and rank(past, 3) and sel is not None:
        p = past.shape[1]
        length = node.fresh("the compressed entries this call emits depend on the buffered projections",
                            1, 1, lo=dims.range_of(p)[0]) if csa else p + q.shape[1]
        key = (past.shape[0], length, past.shape[2])
    else:
        key = None
    outs = [Tensor(I32, sel), Tensor(past.dtype or q.dtype, key)]
    if node.num_outputs > 2:
        buf = arg(node, 13)
        shape = None
        if csa and buf.shape is not None and rank(buf, 4):
            fresh = node.fresh("the buffered projections left after compression", 2, 2, lo=0,
                               hi=2 * required_int(node, "compress_ratio") - 1)
            shape = (buf.shape[0], buf.shape[1], fresh, buf.shape[3])
        outs.append(Tensor(buf.dtype or q.dtype, shape))
    return outs[:max(node.num_outputs, 1)]


@register("PackedSparseAttentionIndexer", domain=MS)
def packed_sparse_attention_indexer(node):
    """selected_indices (tokens, capacity), selected_counts (tokens,); the state outputs keep
    their fixed past shapes; state_update (B, state_update_capacity, H); statuses per request."""
    q, key_state, kv_buf, gate_buf, lengths = (arg(node, i) for i in (0, 12, 13, 14, 15))
    tokens = q.shape[0] if rank(q, 2) is not None else None
    batch = lengths.shape[0] if lengths.shape else None
    cap = node.attr_int("state_update_capacity", 0)
    update = None
    if batch is not None and key_state.shape is not None and cap > 0:
        update = (batch, cap, key_state.shape[-1])
    outs = [Tensor(I32, None if tokens is None else (tokens, _capacity(node))),
            Tensor(I32, None if tokens is None else (tokens,)),
            same_shape(key_state), same_shape(kv_buf), same_shape(gate_buf), same_shape(lengths),
            Tensor(kv_buf.dtype, update),
            node.unknown_rank("indexshare_status is sized by the IndexShare inputs, not modelled", 7, I32),
            Tensor(I32, None if batch is None else (batch,))]
    return outs[:max(node.num_outputs, 1)]


@register("PackedSparseAttentionIndexerMerge", domain=MS)
def packed_sparse_attention_indexer_merge(node):
    """N = len(base_row_indices) queries: indices (N, max_output_entries), counts and status (N,)."""
    rows = arg(node, 2)
    n, = shape_of(rows, *[I32] * node.num_outputs, why="base_row_indices rank unknown", rank=1)
    return [Tensor(I32, (n, required_int(node, "max_output_entries"))), Tensor(I32, (n,)),
            Tensor(I32, (n,))][:max(node.num_outputs, 1)]


@register("DynamicSparseAttention", domain=MS)
def dynamic_sparse_attention(node):
    """output (B, S, num_heads * head_size) (bfloat16 with output_bf16); the main caches are
    BNSH (B, kv_num_heads, length, H) with appended positions (fresh length); status a scalar."""
    q, past_k, past_v = arg(node, 0), arg(node, 3), arg(node, 4)
    dtype = TensorProto.BFLOAT16 if node.attr_int("output_bf16", 0) else q.dtype
    out = None
    if rank(q, 3) is not None:
        n, kv = heads_attr(node), heads_attr(node, "kv_num_heads")
        out = (q.shape[0], q.shape[1], n * gqa_head_size(node, q.shape[2], n, kv))
    outs = [Tensor(dtype, out)]
    length = None
    for past in (past_k, past_v):
        shape = None
        if past.shape is not None and rank(past, 4):
            if length is None:  # keys and values share the cache length
                length = node.fresh("the cache length follows total_sequence_length and the cache's capacity",
                                    1, 2, lo=dims.range_of(past.shape[2])[0])
            shape = (past.shape[0], past.shape[1], length, past.shape[3])
        outs.append(Tensor(past.dtype or q.dtype, shape))
    outs.append(node.unknown_rank("the status output is not modelled", len(outs), I32))
    return outs[:max(node.num_outputs, 1)]
