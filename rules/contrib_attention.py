"""Attention ops of onnxruntime's contrib set (what the transformer optimizer fuses
to), with their KV-cache outputs.

Names follow onnxruntime's docs: B batch, S sequence (query) length, L kv length,
P past length, T total length, N heads, H head size. A cache that shares its buffer
with the past (past_present_share_buffer, max-length caches) keeps the past's shape;
otherwise the present cache holds P + L positions.
"""

from __future__ import annotations

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Condition, Outputs, register
from onnxsym.semantics.shapes import prod

from .common import I32, arg, present, rank, scalar
from .contrib_common import MS, exact_div


def heads_attr(node, name="num_heads"):
    n = node.attr_int(name)
    if not n or n <= 0:
        raise ShapeContradiction(f"attribute {name} must be a positive int, got {n!r}")
    return n


def _past_length(node, i, axis, past, output):
    """The past sequence length: 0 without a past input, else its dim (fresh when the
    past's shape is unknown)."""
    if not present(node, i):
        return 0
    if past.shape is not None:
        return past.shape[axis]
    return node.fresh("the past's shape is unknown", output, axis)  # the present's axis too


# --------------------------------------------------------------------------- Attention


def _qkv_sizes(node, weights, bias):
    """(q, k, v) hidden sizes: the attribute, else a third of the merged projection each."""
    sizes = node.attr_ints("qkv_hidden_sizes")
    if sizes:
        if len(sizes) != 3:
            raise ShapeContradiction(f"qkv_hidden_sizes must have 3 entries, got {sizes}")
        return tuple(sizes)
    if weights.shape is not None and len(weights.shape) == 2:
        total = weights.shape[1]
    elif bias.shape is not None and len(bias.shape) == 1:
        total = bias.shape[0]
    else:
        return None
    h = exact_div(total, 3, "merged QKV projection width")
    return h, h, h


@register("Attention", domain=MS, cost=formulas.ATTENTION)
@register("QAttention", domain=MS)
def attention(node):
    """input (B, S, D) -> output (B, S, v_hidden); present (2, B, N, P + S, H)."""
    quant = node.op_type == "QAttention"
    x, w, bias = arg(node, 0), arg(node, 1), arg(node, 2)
    past = arg(node, 8 if quant else 4)
    dtype = (bias.dtype if quant else x.dtype) or x.dtype
    b, s, _ = shape_of(x, dtype, dtype, rank=3)
    n = heads_attr(node)
    sizes = _qkv_sizes(node, w, bias)
    if sizes is None:
        v_hidden = node.fresh("Attention projection width unknown", 0, 2)
        v_head = node.fresh("Attention projection width unknown", 1, 4)
    else:
        v_hidden = sizes[2]
        v_head = exact_div(v_hidden, n, "value hidden size over num_heads")
    outs = [Tensor(dtype, (b, s, v_hidden))]
    if node.has_output(1):  # keys and values share the present tensor: onnxruntime sizes it by V's head
        rank(past, 5)
        if present(node, 8 if quant else 4) and node.attr_int("past_present_share_buffer", 0):
            outs.append(Tensor(dtype, past.shape))
        else:
            p = _past_length(node, 8 if quant else 4, 3, past, 1)
            h = past.shape[4] if past.shape is not None else v_head
            outs.append(Tensor(dtype, (2, b, n, p + s, h)))
    return outs


# --------------------------------------------------------------------------- MultiHeadAttention


def _mha_layout(node, q, k, v, n):
    """(B, S, output hidden, L, qk head size, v head size) of the MHA input layouts."""
    if rank(q, 3, 5) == 5:  # packed QKV (B, S, N, 3, H)
        b, s, heads, _, h = q.shape
        return b, s, heads * h, s, h, h
    b, s = q.shape[0], q.shape[1]
    if k.shape is not None and len(k.shape) == 5:  # packed KV (B, L, N, 2, H)
        h = k.shape[4]
        return b, s, q.shape[2], k.shape[1], h, h
    if k.shape is not None and len(k.shape) == 4:  # key, value already as (B, N, L, H)
        vh = v.shape[3] if v.shape is not None else node.fresh("value shape unknown", 0, 2)
        return b, s, n * vh, k.shape[2], k.shape[3], vh
    k_shape, v_shape = (shape_of(t, *[q.dtype] * 4, why="key or value rank unknown") for t in (k, v))
    rank(k, 3)
    rank(v, 3)
    v_hidden = v_shape[2]
    return (b, s, v_hidden, k_shape[1], exact_div(q.shape[2], n, "query hidden size over num_heads"),
            exact_div(v_hidden, n, "value hidden size over num_heads"))


def _presents(b, n, p_len, l_len, qk_head, v_head, past_k, past_v, shared, dtype):
    """present_key and present_value (outputs 1 and 2)."""
    if shared:
        return [Tensor(dtype, past_k.shape), Tensor(dtype, past_v.shape)]
    t = p_len + l_len
    return [Tensor(dtype, (b, n, t, qk_head)), Tensor(dtype, (b, n, t, v_head))]


@register("MultiHeadAttention", domain=MS, cost=formulas.ATTENTION)
def multi_head_attention(node):
    """output (B, S, v_hidden); present_key/value (B, N, P + L, H); qk (B, N, S, P + L)."""
    q, k, v = arg(node, 0), arg(node, 1), arg(node, 2)
    past_k, past_v = arg(node, 6), arg(node, 7)
    dtype = q.dtype
    shape_of(q, *[dtype] * 4, why="query rank unknown")
    n = heads_attr(node)
    b, s, hidden, l_len, qk_head, v_head = _mha_layout(node, q, k, v, n)
    outs = [Tensor(dtype, (b, s, hidden))]
    rank(past_k, 4)
    p_len = _past_length(node, 6, 2, past_k, 1)
    shared = present(node, 8) and present(node, 6)  # a past_sequence_length input means buffer sharing
    outs += _presents(b, n, p_len, l_len, qk_head, v_head, past_k, past_v, shared, dtype)
    if node.has_output(3):
        total = outs[1].shape[2] if not shared else node.fresh("qk length follows past_sequence_length", 3, 3)
        outs.append(Tensor(dtype, (b, n, s, total)))
    return outs[:max(node.num_outputs, 1)]


@register("DecoderMaskedMultiHeadAttention", domain=MS)
def decoder_masked_mha(node):
    """One decoding step: query (B, 1, hidden) or packed QKV (B, 1, 3*hidden); key/value
    as (B, 1, hidden) (self attention) or (B, N, L, H) (cross attention)."""
    q, k, v = arg(node, 0), arg(node, 1), arg(node, 2)
    past_k, past_v = arg(node, 5), arg(node, 6)
    dtype = q.dtype
    b, s, width = shape_of(q, *[dtype] * 4, why="query rank unknown", rank=3)
    n = heads_attr(node)
    if not present(node, 1):  # packed QKV with equal Q, K and V widths
        hidden = exact_div(width, 3, "packed QKV width")
        qk_head = v_head = exact_div(hidden, n, "hidden size over num_heads")
        l_len, cross = s, False
    elif rank(k, 3, 4) == 4:
        qk_head = k.shape[3]
        v_head = v.shape[3] if v.shape is not None else node.fresh("value shape unknown", 0, 2)
        hidden, l_len, cross = n * v_head, k.shape[2], True
    else:
        shape_of(k, *[dtype] * 4, why="key or value rank unknown")
        hidden = shape_of(v, *[dtype] * 4, why="key or value rank unknown")[2]
        qk_head = exact_div(width, n, "query hidden size over num_heads")
        v_head = exact_div(hidden, n, "value hidden size over num_heads")
        l_len, cross = s, False
    outs = [Tensor(dtype, (b, s, hidden))]
    shared = bool(node.attr_int("past_present_share_buffer", 0))
    if cross:
        total = l_len
        why = "the present caches of cross attention are not modelled"
        outs += [node.unknown_rank(why, 1, dtype), node.unknown_rank(why, 2, dtype)]
    else:
        rank(past_k, 4)
        p_len = _past_length(node, 5, 2, past_k, 1)
        shared = shared and present(node, 5)
        outs += _presents(b, n, p_len, l_len, qk_head, v_head, past_k, past_v, shared, dtype)
        if shared:
            past_len = scalar(node, 7)
            total = past_len + l_len if past_len is not None else node.fresh(
                "qk length is past_sequence_length (a tensor input) + 1", 3, 3)
        else:
            total = p_len + l_len
    if node.has_output(3):
        outs.append(Tensor(dtype, (b, n, 1, total)))
    return outs[:max(node.num_outputs, 1)]


@register("DecoderMaskedSelfAttention", domain=MS)
def decoder_masked_self_attention(node: Node) -> Outputs:
    """Attention for one decoding step, with the past/present as one (2, B, N, P, H) tensor."""
    return attention(node)


# --------------------------------------------------------------------------- grouped-query attention


def gqa_head_size(node, width, n, kv):
    """The head size from the query's width: N heads, or N + 2*kv_num_heads when Q, K
    and V come packed in the query (no key input)."""
    if present(node, 1):
        return exact_div(width, n, "query hidden size over num_heads")
    return exact_div(width, n + 2 * kv, "packed QKV width over num_heads + 2*kv_num_heads")


def _gqa_lengths(site):
    """(B, S, P, T) of a GroupQueryAttention node as its domain check sees it (P 0 without a
    past), or None where the query's shape or total_sequence_length's value is unknown."""
    q, total = site.shape(0), site.value(6)
    if q is None or len(q) != 3 or total is None or len(total) != 1:
        return None
    past = site.shape(3) if len(site.node.input) > 3 and site.node.input[3] else ()
    if past is None or past and len(past) != 4:
        return None
    return q[0], q[1], past[2] if past else 0, total[0]


def _gqa_total(site):
    """onnxruntime (1.32, CPU) runs a GroupQueryAttention only where total_sequence_length
    T is the past P plus the new tokens S (a growing cache), or S <= T <= P (a cache no shorter
    than the total); with a window-sized cache, where the window fits in P (and S <= T, which
    the rule records for both). Several new tokens with another total (a later prompt) need
    batch 1."""
    lengths = _gqa_lengths(site)
    if lengths is None:
        return
    b, s, p, t = lengths
    if site.attr_int("sliding_window_cache", 0):  # (S <= T: the rule records it)
        window = site.attr_int("local_window_size", -1)
        if window > 0 and dims.try_le(window, p) is not True:
            yield site.raw("<=", window, p, "GroupQueryAttention: the window cache holds the window")
    elif dims.try_eq(t, dims.add(p, s)) is not True:
        # (min(0, T - S, P - T) == 0 is S <= T <= P, as an equality the domain's cases split)
        inside = dims.dmin(dims.dmin(dims.sub(t, s), dims.sub(p, t)), 0)
        yield site.raw("or", t, dims.add(p, s),
                       "GroupQueryAttention: total_sequence_length is the past plus the new tokens, or between "
                       "the new tokens' count and the past", alts=((t, dims.add(p, s)), (inside, 0)))
    if not any(dims.try_eq(x, y) is True for x, y in ((s, 1), (s, t), (b, 1))):
        yield site.raw("or", s, 1, "GroupQueryAttention: new tokens with another total need batch 1, unless "
                       "there is one token or the whole prompt", alts=((s, 1), (s, t), (b, 1)))


def _gqa_rotary(site):
    """The rotary caches have a row for every position of the total."""
    lengths = _gqa_lengths(site)
    if lengths is None:
        return
    t = lengths[3]
    for i, name in ((7, "cos_cache"), (8, "sin_cache")):
        cache = site.shape(i) if len(site.node.input) > i and site.node.input[i] else None
        if cache and dims.try_le(t, cache[0]) is not True:
            yield site.raw("<=", t, cache[0], f"GroupQueryAttention: {name} has a row for each position of the total")


def _gqa_seqlens(site):
    """seqlens_k has one element per batch row (onnxruntime counts its elements, of any shape
    of rank 1 or more): a fusion that reduces a (1, T) position row writes one, for batch 1."""
    q, sk = site.shape(0), site.shape(5)
    if q is None or len(q) != 3 or not sk:  # (a scalar one fails at every size: not a size condition)
        return
    count = prod(sk)
    if dims.try_eq(count, q[0]) is not True:
        yield site.raw("==", count, q[0], "GroupQueryAttention: seqlens_k has one element per batch row")


def _gqa_extra_inputs(site):
    """position_ids (input 9) are (B, at least S); attention_bias (input 10) is (B or 1,
    num_heads or 1, S, T), as onnxruntime's CheckCustomAttentionInputs has them."""
    q = site.shape(0)
    if q is None or len(q) != 3:
        return
    b, s = q[0], q[1]
    pos = site.shape(9) if len(site.node.input) > 9 and site.node.input[9] else None
    if pos is not None and len(pos) == 2:
        if dims.try_eq(pos[0], b) is not True:
            yield site.raw("==", pos[0], b, "GroupQueryAttention: position_ids dim 0 is the batch size")
        if dims.try_le(s, pos[1]) is not True:
            yield site.raw("<=", s, pos[1], "GroupQueryAttention: position_ids has a column for each new token")
    bias = site.shape(10) if len(site.node.input) > 10 and site.node.input[10] else None
    if bias is None or len(bias) != 4:
        return
    for d, full, what in ((bias[0], b, "the batch size"), (bias[1], site.attr_int("num_heads", 0), "num_heads")):
        if not any(dims.try_eq(d, x) is True for x in (full, 1)):
            yield site.raw("or", d, full, f"GroupQueryAttention: attention_bias is {what} or 1 there",
                           alts=((d, full), (d, 1)))
    if dims.try_eq(bias[2], s) is not True:
        yield site.raw("==", bias[2], s, "GroupQueryAttention: attention_bias dim 2 is the new tokens' count")
    total = site.value(6)
    if total is not None and len(total) == 1 and dims.try_eq(bias[3], total[0]) is not True:
        yield site.raw("==", bias[3], total[0], "GroupQueryAttention: attention_bias dim 3 is total_sequence_length")


GQA_CONDITIONS = (
    Condition("T (total_sequence_length) == P + S, or S <= T <= P; with sliding_window_cache, "
              "local_window_size <= P; S == 1, S == T or B == 1", _gqa_total, replayable=True),
    Condition("S <= T", None),
    Condition("cos_cache and sin_cache have at least T rows", _gqa_rotary, replayable=True),
    Condition("past_key and past_value have the query's head size", None),
    Condition("seqlens_k has B elements", _gqa_seqlens, replayable=True),
    Condition("position_ids are (B, at least S); attention_bias is (B or 1, num_heads or 1, S, T)",
              _gqa_extra_inputs, replayable=True),
)


def _gqa_rotary_widths(node, head):
    """With rotary caches, onnxruntime runs only a head size that is a multiple of 16, and caches
    whose width is a multiple of 8 and at most half the head: a constant that breaks it fails at
    every size, so inference stops there."""
    if not (present(node, 7) and present(node, 8)):
        return
    if isinstance(head, int) and head % 16:
        raise ShapeContradiction(f"GroupQueryAttention with rotary caches needs a head size that is a multiple of 16, "
                                 f"not {head}: onnxruntime refuses it at every size")
    for i in (7, 8):
        cache = arg(node, i).shape
        if isinstance(head, int) and cache is not None and len(cache) == 2 and isinstance(cache[1], int) and \
                (cache[1] > head // 16 * 8 or cache[1] % 8):
            raise ShapeContradiction(f"GroupQueryAttention: a rotary cache {cache[1]} wide, not a multiple of 8 at "
                                     f"most half the head size {head}: onnxruntime refuses it at every size")


@register("GroupQueryAttention", domain=MS, cost=formulas.ATTENTION, conditions=GQA_CONDITIONS)
def group_query_attention(node):
    """output (B, S, N*H); present (B, kv_num_heads, max(P, total_sequence_length), H);
    output_qk (B, N, S, total_sequence_length)."""
    q, past_k, past_v = arg(node, 0), arg(node, 3), arg(node, 4)
    dtype = q.dtype
    b, s, width = shape_of(q, *[dtype] * 4, why="query rank unknown", rank=3)
    n, kv = heads_attr(node), heads_attr(node, "kv_num_heads")
    head = gqa_head_size(node, width, n, kv)
    _gqa_rotary_widths(node, head)
    outs = [Tensor(dtype, (b, s, n * head))]
    total = scalar(node, 6)
    if total is not None:
        # (onnxruntime: total_sequence_length must be at least the new tokens' length, with any cache)
        node.require_at_least(dims.sub(total, s), 0, "GroupQueryAttention: total_sequence_length is at least "
                                                      "the query's sequence length")
    if present(node, 3) and past_k.shape is None:  # a past we know nothing of
        why = "past key rank unknown"
        return outs + [node.unknown_rank(why, 1, past_k.dtype or dtype), node.unknown_rank(why, 2, past_v.dtype or dtype),
                       node.unknown_rank(why, 3, dtype)][:max(node.num_outputs, 1) - 1]
    if past_k.shape is not None and rank(past_k, 4) and node.attr_int("sliding_window_cache", 0):
        # window-sized caches keep their capacity
        length = past_k.shape[2]
        kd, vd = past_k.dtype or dtype, past_v.dtype or dtype
        k_shape, v_shape = past_k.shape, past_v.shape
    elif past_k.shape is not None and rank(past_k, 4):
        p_len = past_k.shape[2]
        # (onnxruntime checks the caches' head size against the query's)
        node.require_equal(past_k.shape[3], head, "GroupQueryAttention: past_key's head size is the query's")
        if past_v.shape is not None and len(past_v.shape) == 4:
            node.require_equal(past_v.shape[3], head, "GroupQueryAttention: past_value's head size is the query's")
        # The cache is max(P, total_sequence_length) long; a shared buffer is never shorter.
        length = dims.dmax(p_len, total) if total is not None else node.fresh(
            "present length is max(past length, total_sequence_length), a tensor input",
            1, 2, lo=dims.range_of(p_len)[0])
        kd, vd = past_k.dtype or dtype, past_v.dtype or dtype
        k_shape = (past_k.shape[0], past_k.shape[1], length, past_k.shape[3])
        v_last = past_v.shape[3] if past_v.shape is not None else past_k.shape[3]
        v_shape = (past_k.shape[0], past_k.shape[1], length, v_last)
    else:
        length = total if total is not None else node.fresh(
            "present length is total_sequence_length, a tensor input", 1, 2)
        kd = vd = dtype
        k_shape = v_shape = (b, kv, length, head)
    outs += [Tensor(kd, k_shape), Tensor(vd, v_shape)]
    if node.has_output(3):  # scores over the total length, even when the cache is longer
        if total is None:
            total = length if not present(node, 3) else node.fresh(
                "output_qk length is total_sequence_length, a tensor input", 3, 3)
        outs.append(Tensor(dtype, (b, n, s, total)))
    return outs[:max(node.num_outputs, 1)]


@register("SparseAttention", domain=MS)
def sparse_attention(node):
    """output (B, S, N*H); the present caches are the past caches (max length)."""
    q, past_k, past_v = arg(node, 0), arg(node, 3), arg(node, 4)
    dtype = q.dtype
    b, s, width = shape_of(q, *[dtype] * 3, why="query rank unknown", rank=3)
    n, kv = heads_attr(node), heads_attr(node, "kv_num_heads")
    head = gqa_head_size(node, width, n, kv)
    return [Tensor(dtype, (b, s, n * head)),
            Tensor(dtype, past_k.shape), Tensor(dtype, past_v.shape)][:max(node.num_outputs, 1)]


@register("PagedAttention", domain=MS)
def paged_attention(node):
    """query (tokens, hidden) -> output (tokens, N * v_head_size); the caches are
    updated in place, so the outputs alias them."""
    q, kc, vc = arg(node, 0), arg(node, 3), arg(node, 4)
    dtype = q.dtype
    tokens, width = shape_of(q, dtype, kc.dtype, vc.dtype, why="query rank unknown", rank=2)
    n, kv = heads_attr(node), heads_attr(node, "kv_num_heads")
    v_head = node.attr_int("v_head_size", 0) or gqa_head_size(node, width, n, kv)
    return [Tensor(dtype, (tokens, n * v_head)), Tensor(kc.dtype, kc.shape),
            Tensor(vc.dtype, vc.shape)][:max(node.num_outputs, 1)]


# --------------------------------------------------------------------------- packed (padding-free) attention


@register("PackedAttention", domain=MS)
def packed_attention(node):
    """input (tokens, D) -> output (tokens, v_hidden)."""
    x, w, bias = arg(node, 0), arg(node, 1), arg(node, 2)
    tokens, _ = shape_of(x, x.dtype, rank=2)
    heads_attr(node)
    sizes = _qkv_sizes(node, w, bias)
    v_hidden = sizes[2] if sizes else node.fresh("PackedAttention projection width unknown", 0, 1)
    return [Tensor(x.dtype, (tokens, v_hidden))]


@register("PackedMultiHeadAttention", domain=MS)
def packed_multi_head_attention(node):
    """query (tokens, hidden) or packed QKV (tokens, N, 3, H) -> (tokens, v_hidden)."""
    q, v = arg(node, 0), arg(node, 2)
    shape_of(q, q.dtype, why="query rank unknown", rank=(2, 4))
    n = heads_attr(node)
    if len(q.shape) == 4:
        hidden = n * q.shape[3]
    elif present(node, 2) and rank(v, 2):
        hidden = v.shape[1]
    else:
        hidden = q.shape[1]
    return [Tensor(q.dtype, (q.shape[0], hidden))]


@register("RemovePadding", domain=MS)
def remove_padding(node):
    """(B, S, H) -> (tokens, H), token_offset (B, S), cumulated_seq_len (B + 1), max_seq_len (1).
    The token count is the sum of the sequence_token_count input: data."""
    x = arg(node, 0)
    b, s, h = shape_of(x, x.dtype, I32, I32, I32, rank=3)
    bound = b * s
    hi = bound if isinstance(bound, int) else dims.INT64_MAX
    tokens = node.fresh(f"RemovePadding keeps the tokens that sequence_token_count counts (at most {bound})",
                        0, 0, lo=0, hi=hi)
    return [Tensor(x.dtype, (tokens, h)), Tensor(I32, (b, s)), Tensor(I32, (b + 1,)),
            Tensor(I32, (1,))][:max(node.num_outputs, 1)]


@register("RestorePadding", domain=MS)
def restore_padding(node):
    """(tokens, H) with token_offset (B, S) -> (B, S, H)."""
    x, offset = arg(node, 0), arg(node, 1)
    why = "input or token_offset rank unknown"
    _, h = shape_of(x, x.dtype, why=why, rank=2)
    b, s = shape_of(offset, x.dtype, why=why, rank=2)
    return [Tensor(x.dtype, (b, s, h))]


# --------------------------------------------------------------------------- position biases


@register("RelativePositionBias", domain=MS)
def relative_position_bias(node):
    """bias_table (buckets, N) with query_length, key_length -> (1, N, query_length, key_length)."""
    table = arg(node, 0)
    _, heads = shape_of(table, table.dtype, why="bias_table rank unknown", rank=2)
    lengths = []
    for i, what in ((1, "query_length"), (2, "key_length")):
        v = scalar(node, i)
        lengths.append(v if v is not None else node.fresh(f"{what} is a tensor input whose value is unknown",
                                                          0, 1 + i))
    return [Tensor(table.dtype, (1, heads, lengths[0], lengths[1]))]


@register("GatedRelativePositionBias", domain=MS)
def gated_relative_position_bias(node):
    """query_layer (B, S, N*H), or (tokens, N*H) with token_offset (B, S) -> (B, N, S, S)."""
    q, offset = arg(node, 0), arg(node, 6)
    n = heads_attr(node)
    if present(node, 6):
        b, s = shape_of(offset, q.dtype, why="offset rank unknown", rank=2)
    else:
        b, s, _ = shape_of(q, q.dtype, why="query rank unknown", rank=3)
    return [Tensor(q.dtype, (b, n, s, s))]
