"""Recurrent ops of onnxruntime's contrib set: the attention-wrapped and dynamically
quantized LSTMs, linear attention and gated delta networks (explicit recurrent state),
and the stateful causal convolutions that feed them."""

from __future__ import annotations

from onnxsym.cost import formulas
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register

from .common import arg, present, required_int
from .contrib_common import MS, WithInputs, exact_div
from .recurrent import recurrent


@register("AttnLSTM", domain=MS)
def attn_lstm(node: Node) -> Outputs:
    """The LSTM's outputs: Y (seq, dirs, batch, hidden), Y_h and Y_c (dirs, batch, hidden)."""
    return recurrent(node)


@register("DynamicQuantizeLSTM", domain=MS, cost=formulas.RECURRENT)
def dynamic_quantize_lstm(node: Node) -> Outputs:
    """The LSTM's outputs; its R is stored transposed, (dirs, hidden, 4*hidden)."""
    r = arg(node, 2)
    if r.shape is not None and len(r.shape) == 3:
        r = Tensor(r.dtype, (r.shape[0], r.shape[2], r.shape[1]))
    return recurrent(WithInputs(node, [arg(node, 0), arg(node, 1), r]))


@register("LinearAttention", domain=MS)
def linear_attention(node):
    """query (B, T, Hq*Dk), value (B, T, Hkv*Dv) -> output (B, T, max(Hq, Hkv)*Dv);
    present_state (B, Hkv, Dk, Dv)."""
    q, v = arg(node, 0), arg(node, 2)
    why = "query or value rank unknown"
    b, t, q_width = shape_of(q, q.dtype, q.dtype, why=why, rank=3)
    v_width = shape_of(v, q.dtype, q.dtype, why=why, rank=3)[2]
    hq, hkv = required_int(node, "q_num_heads"), required_int(node, "kv_num_heads")
    dk = exact_div(q_width, hq, "query width over q_num_heads")
    dv = exact_div(v_width, hkv, "value width over kv_num_heads")
    state = arg(node, 3)
    st_dtype = state.dtype or q.dtype
    st = state.shape if present(node, 3) and state.shape is not None else (b, hkv, dk, dv)
    return [Tensor(q.dtype, (b, t, max(hq, hkv) * dv)), Tensor(st_dtype, st)][:max(node.num_outputs, 1)]


@register("LinearAttentionGate", domain=MS)
def linear_attention_gate(node: Node) -> Outputs:
    """decay has the shape of a, beta that of b."""
    return [Tensor(arg(node, 0).dtype, arg(node, 0).shape), Tensor(arg(node, 3).dtype, arg(node, 3).shape)][
        :max(node.num_outputs, 1)]


@register("GatedDeltaNet", domain=MS)
def gated_delta_net(node):
    """output is value-shaped: (tokens, Hv, Dv) or (B, S, Hv, Dv) (packed QKV: Hv and Dv
    from initial_state); final_state (B, Hv, Dv, Dk), B from initial_state or cu_seqlens."""
    q, v, init = arg(node, 0), arg(node, 2), arg(node, 6)
    shape_of(q, q.dtype, init.dtype, why="query rank unknown")
    if present(node, 2):
        out = v.shape
    elif init.shape is not None and len(init.shape) == 4 and len(q.shape) == 2:
        out = (q.shape[0], init.shape[1], init.shape[2])
    else:
        out = None
    if init.shape is not None:
        state = init.shape
    elif out is not None and present(node, 3) and arg(node, 3).shape is not None and len(q.shape) == 3:
        state = (arg(node, 3).shape[0] - 1, out[-2], out[-1], q.shape[-1])
    else:
        state = None
    outs = [Tensor(q.dtype, out), Tensor(init.dtype or 1, state)]
    if node.num_outputs > 2:
        outs.append(node.unknown_rank("compact state updates are sized by data-layout attributes not modelled", 2, 1))
    return outs[:max(node.num_outputs, 1)]


def _state_length(node, w):
    """(k - 1) * dilation positions of history along the causal axis."""
    if w.shape is None or not w.shape:
        return node.fresh("the convolution weight's shape is unknown", 1, 2)
    return (w.shape[-1] - 1) * node.attr_int("dilation", 1)


@register("CausalConvWithState", domain=MS)
def causal_conv_with_state(node: Node) -> Outputs:
    """output has the input's shape; present_state holds the last (k-1)*dilation
    positions: (B, C, state) or, channels_last, (B, state, C) (1-D; ndim 1)."""
    x, w, past = arg(node, 0), arg(node, 1), arg(node, 3)
    outs = [Tensor(x.dtype, x.shape)]
    if present(node, 3):
        outs.append(Tensor(past.dtype or x.dtype, past.shape))
    elif x.shape is None or len(x.shape) != 3 or node.attr_int("ndim", 1) != 1 or node.attr_int("state_window", 0):
        outs.append(node.unknown_rank("input rank unknown or not 3, or a state layout not modelled", len(outs), x.dtype))
    else:
        k = _state_length(node, w)
        b = x.shape[0]
        last = node.attr_int("channels_last", 0)
        c = x.shape[2] if last else x.shape[1]
        state_last = node.attr_int("state_channels_last", -1)
        state_last = last if state_last == -1 else state_last
        outs.append(Tensor(x.dtype, (b, k, c) if state_last else (b, c, k)))
    outs.append(node.unknown_rank("this output is not modelled", len(outs), x.dtype))
    return outs[:max(node.num_outputs, 1)]


@register("VarlenCausalConvWithState", domain=MS)
def varlen_causal_conv_with_state(node: Node) -> Outputs:
    """output (tokens, C) like the input; final_state like initial_state (B, C, state);
    state_update (B, state_update_capacity, C)."""
    x, init = arg(node, 0), arg(node, 4)
    cap = node.attr_int("state_update_capacity", 0)
    update = None
    if init.shape is not None and x.shape is not None and len(x.shape) == 2 and cap > 0:
        update = (init.shape[0], cap, x.shape[1])
    return [Tensor(x.dtype, x.shape), Tensor(init.dtype or x.dtype, init.shape),
            Tensor(x.dtype, update)][:max(node.num_outputs, 1)]
