"""Fused building blocks of recent decoders in onnxruntime's contrib set: gated and
branch-wise RMS norms, hyper-connection mixes, Engram gates and n-gram hashes, MoE
routers and the shared-expert projection."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym.registry import register
from onnxsym.values import Tensor

from .contrib_common import MS, arg, exact_div, present, same_as

F32 = TensorProto.FLOAT


@register("GatedRMSNorm BranchwiseRMSNorm GatedAdd HyperConnectionPostMix MoEPacked", domain=MS)
def same_shape(node):
    """Output 0 has the shape of input 0 (scales, gates, mixes and experts only read)."""
    return [same_as(node, 0)]


@register("HyperConnectionPreMix", domain=MS)
def hyper_connection_pre_mix(node):
    """C streams of width H reduced to one: (..., C, H) -> (..., H), or flattened
    (..., C*H) -> (..., H) when num_branches gives C."""
    x = arg(node, 0)
    if x.shape is None:
        return [Tensor(x.dtype, None)]
    c = node.attr("num_branches", 0)
    if c:
        return [Tensor(x.dtype, tuple(x.shape[:-1]) + (exact_div(x.shape[-1], c, "stream width over num_branches"),))]
    return [Tensor(x.dtype, tuple(x.shape[:-2]) + (x.shape[-1],))]


@register("HyperConnectionLowRankMix", domain=MS)
def hyper_connection_low_rank_mix(node):
    """streams (..., C*H): pre_output (..., H), post_gate (..., C), streams_out like streams."""
    x = arg(node, 0)
    c = node.attr("num_branches", 0)
    if x.shape is None or not c:
        return [Tensor(x.dtype, None), Tensor(x.dtype, None), Tensor(x.dtype, x.shape)][:max(node.num_outputs, 1)]
    lead = tuple(x.shape[:-1])
    h = exact_div(x.shape[-1], c, "stream width over num_branches")
    return [Tensor(x.dtype, lead + (h,)), Tensor(x.dtype, lead + (c,)), Tensor(x.dtype, x.shape)][
        :max(node.num_outputs, 1)]


@register("EngramGate", domain=MS)
def engram_gate(node):
    """output and gated_value_normed are key-shaped: (B, S, hc_mult, H)."""
    return [same_as(node, 0)] * max(node.num_outputs, 1)


@register("NGramHashMapping VarlenNGramHashMapping", domain=MS)
def ngram_hash_mapping(node):
    """hash_ids: input_ids' shape + ((max_ngram_size - 1) * n_head_per_ngram,); present_ids
    (batch, max_ngram_size - 1), batch from input_ids or, packed, cumulative_sequence_length."""
    ids = arg(node, 0)
    m, n = node.attr("max_ngram_size"), node.attr("n_head_per_ngram")
    hashes = None if ids.shape is None else tuple(ids.shape) + ((m - 1) * n,)
    if node.op_type == "NGramHashMapping":
        batch = None if ids.shape is None else ids.shape[0]
    else:
        cum = arg(node, 3)
        batch = None if cum.shape is None or len(cum.shape) != 1 else cum.shape[0] - 1
    hist = None if batch is None else (batch, m - 1)
    outs = [Tensor(ids.dtype, hashes), Tensor(ids.dtype, hist), Tensor(ids.dtype, hist),
            Tensor(ids.dtype, None)]
    return outs[:max(node.num_outputs, 1)]


@register("MoEGroupRouter", domain=MS)
def moe_group_router(node):
    """(tokens, num_experts): the logits' shape, or with projection_weight (experts, width)
    the projected rows; the full-score outputs are float32 of that shape."""
    logits, proj = arg(node, 0), arg(node, 2)
    shape = logits.shape
    if present(node, 2):
        shape = None if shape is None or proj.shape is None else tuple(shape[:-1]) + (proj.shape[0],)
    return [Tensor(logits.dtype, shape), Tensor(F32, shape), Tensor(F32, shape)][:max(node.num_outputs, 1)]


@register("RouterGateUpProj", domain=MS)
def router_gate_up_proj(node):
    """Y = X @ W (..., router_size + 2*inter) split into router (..., router_size) and
    activated (..., inter)."""
    x, w = arg(node, 0), arg(node, 1)
    r = node.attr("router_size")
    if x.shape is None or w.shape is None or r is None:
        return [Tensor(x.dtype, None), Tensor(x.dtype, None)][:max(node.num_outputs, 1)]
    lead = tuple(x.shape[:-1])
    inter = exact_div(w.shape[-1] - r, 2, "shared expert gate/up width")
    return [Tensor(x.dtype, lead + (r,)), Tensor(x.dtype, lead + (inter,))][:max(node.num_outputs, 1)]
