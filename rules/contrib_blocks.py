"""Fused building blocks of recent decoders in onnxruntime's contrib set: gated and
branch-wise RMS norms, hyper-connection mixes, Engram gates and n-gram hashes, MoE
routers and the shared-expert projection."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register

from .common import F32, I32, arg, present, required_int, same_shape, unknown_ranks
from .contrib_common import MS, exact_div, same_as


@register("GatedRMSNorm BranchwiseRMSNorm GatedAdd HyperConnectionPostMix MoEPacked", domain=MS)
def keeps_shape(node: Node) -> Outputs:
    """Output 0 has the shape of input 0 (scales, gates, mixes and experts only read)."""
    return [same_as(node, 0)]


@register("HyperConnectionPreMix", domain=MS)
def hyper_connection_pre_mix(node: Node) -> Outputs:
    """C streams of width H reduced to one: (..., C, H) -> (..., H), or flattened
    (..., C*H) -> (..., H) when num_branches gives C."""
    x = arg(node, 0)
    shape = shape_of(x, x.dtype)
    c = node.attr_int("num_branches", 0)
    if c:
        return [Tensor(x.dtype, tuple(shape[:-1]) + (exact_div(shape[-1], c, "stream width over num_branches"),))]
    return [Tensor(x.dtype, tuple(shape[:-2]) + (shape[-1],))]


@register("HyperConnectionLowRankMix", domain=MS)
def hyper_connection_low_rank_mix(node: Node) -> Outputs:
    """streams (..., C*H): pre_output (..., H), post_gate (..., C), streams_out like streams."""
    x = arg(node, 0)
    c = node.attr_int("num_branches", 0)
    why = "input rank or num_branches unknown"
    shape = shape_of(x, x.dtype, x.dtype, x.dtype, why=why)
    if not c:
        return [node.unknown_rank(why, 0, x.dtype), node.unknown_rank(why, 1, x.dtype),
                Tensor(x.dtype, shape)][:max(node.num_outputs, 1)]
    lead = tuple(shape[:-1])
    h = exact_div(shape[-1], c, "stream width over num_branches")
    return [Tensor(x.dtype, lead + (h,)), Tensor(x.dtype, lead + (c,)), Tensor(x.dtype, shape)][
        :max(node.num_outputs, 1)]


@register("EngramGate", domain=MS)
def engram_gate(node: Node) -> Outputs:
    """output and gated_value_normed are key-shaped: (B, S, hc_mult, H)."""
    return [same_as(node, 0)] * max(node.num_outputs, 1)


@register("NGramHashMapping VarlenNGramHashMapping", domain=MS)
def ngram_hash_mapping(node: Node) -> Outputs:
    """hash_ids: input_ids' shape + ((max_ngram_size - 1) * n_head_per_ngram,); present_ids and
    present_segment_ids (batch, max_ngram_size - 1), batch from input_ids or, packed,
    cumulative_sequence_length; state_update (batch, state_update_capacity, max_ngram_size - 1)."""
    ids = arg(node, 0)
    m, n = required_int(node, "max_ngram_size"), required_int(node, "n_head_per_ngram")
    hashes = None if ids.shape is None else tuple(ids.shape) + ((m - 1) * n,)
    if node.op_type == "NGramHashMapping":
        batch = None if ids.shape is None else ids.shape[0]
    else:
        cum = arg(node, 3)
        batch = None if cum.shape is None or len(cum.shape) != 1 else cum.shape[0] - 1
    hist = None if batch is None else (batch, m - 1)
    cap = node.attr_int("state_update_capacity", 0)
    update = None if batch is None or cap <= 0 else (batch, cap, m - 1)
    outs = [Tensor(ids.dtype, hashes), Tensor(ids.dtype, hist), Tensor(I32, hist), Tensor(ids.dtype, update)]
    return outs[:max(node.num_outputs, 1)]


@register("MoEGroupRouter", domain=MS)
def moe_group_router(node: Node) -> Outputs:
    """(tokens, num_experts): the logits' shape, or with projection_weight (experts, width)
    the projected rows; the full-score outputs are float32 of that shape."""
    logits, proj = arg(node, 0), arg(node, 2)
    shape = logits.shape
    if present(node, 2):
        shape = None if shape is None or proj.shape is None else tuple(shape[:-1]) + (proj.shape[0],)
    return [Tensor(logits.dtype, shape), Tensor(F32, shape), Tensor(F32, shape)][:max(node.num_outputs, 1)]


@register("RouterGateUpProj", domain=MS)
def router_gate_up_proj(node: Node) -> Outputs:
    """Y = X @ W (..., router_size + 2*inter) split into router (..., router_size) and
    activated (..., inter)."""
    x, w = arg(node, 0), arg(node, 1)
    r = node.attr_int("router_size")
    why = "input or weight rank, or router_size, unknown"
    lead = tuple(shape_of(x, x.dtype, x.dtype, why=why)[:-1])
    width = shape_of(w, x.dtype, x.dtype, why=why)[-1]
    if r is None:
        return unknown_ranks(node, why, x.dtype, x.dtype)
    inter = exact_div(width - r, 2, "shared expert gate/up width")
    return [Tensor(x.dtype, lead + (r,)), Tensor(x.dtype, lead + (inter,))][:max(node.num_outputs, 1)]


@register("RMSNormRotary", domain=MS)
def rms_norm_rotary(node: Node) -> Outputs:
    """X (B, S, heads, stride): Y (B, S, heads*width) or, flatten_batch, (1, B*S, heads*width),
    float16 with output_fp16 else bfloat16; normalized_fp32 (B, S, heads, width). width is
    input_width, or the whole last axis when that is 0."""
    x = arg(node, 0)
    y_dtype = TensorProto.FLOAT16 if node.attr_int("output_fp16", 0) else TensorProto.BFLOAT16
    if x.shape is None or len(x.shape) != 4:
        return unknown_ranks(node, "input rank unknown, or not 4", y_dtype, F32)
    b, s, heads, stride = x.shape
    width = node.attr_int("input_width", 0) or stride
    if not node.attr_int("input_width", 0) and node.attr_int("input_start", 0):
        width = node.fresh("RMSNormRotary with an input_start and no input_width", 1, 3)
    y = (1, b * s, heads * width) if node.attr_int("flatten_batch", 0) else (b, s, heads * width)
    return [Tensor(y_dtype, y), Tensor(F32, (b, s, heads, width))][:max(node.num_outputs, 1)]


@register("Mamba2Verify", domain=MS)
def mamba2_verify(node: Node) -> Outputs:
    """projection (R, width), di = heads*head_dim: Y and readout (R, di); the snapshots have
    the states' shapes; xbc (R, channels) with channels = di + 2*n_groups*d_state."""
    proj, conv, ssm = arg(node, 0), arg(node, 1), arg(node, 2)
    di = required_int(node, "heads") * node.attr_int("head_dim", 64)
    channels = di + 2 * required_int(node, "n_groups") * node.attr_int("d_state", 128)
    r = proj.shape[0] if proj.shape else None
    rows = (lambda _: None) if r is None else (lambda n: (r, n))
    outs = [Tensor(proj.dtype, rows(di)), same_shape(conv), same_shape(ssm), Tensor(proj.dtype, rows(channels)),
            Tensor(F32, rows(di))]
    return outs[:max(node.num_outputs, 1)]


@register("SpeculativePrefixCommit", domain=MS)
def speculative_prefix_commit(node: Node) -> Outputs:
    """head_c (batch,), batch from next_tokens (batch, rows) (1 for (rows,)); the updated
    states keep ctl's and ctx_commit's shapes."""
    nxt = arg(node, 0)
    batch = None
    if nxt.shape is not None:
        batch = (nxt.shape[0] if len(nxt.shape) == 2 else 1,) if len(nxt.shape) in (1, 2) else None
    return [Tensor(I32, batch), same_shape(arg(node, 3)), same_shape(arg(node, 4))][
        :max(node.num_outputs, 1)]
