"""Rules for attention and the ops around it: Attention, FlexAttention,
LinearAttention, RMSNormalization, Swish and SwiGLU."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.domain.needs import NORM_ELEMENTS, to_target
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Condition, Outputs, register
from onnxsym.semantics.shapes import broadcast_dim, normalize_axis

from .common import arg, present, required_int
from .nn import keeps_input_shape


def _heads(node, t, attr, rank4_axis, output, axis):
    """A head count: dim ``rank4_axis`` of a 4-D input, else the attribute."""
    if len(t.shape) == 4:
        return t.shape[rank4_axis]
    n = node.attr_int(attr)
    return n if n is not None else node.fresh(f"{node.op_type} {attr} is not given", output, axis)


def _head_size(node, t, heads, output, axis):
    """The per-head size: dim 3 of a 4-D input, else hidden // heads of a 3-D one."""
    if len(t.shape) == 4:
        return t.shape[3]
    return dims.floordiv(t.shape[2], heads) if isinstance(heads, int) else \
        node.fresh(f"{node.op_type} head size needs the head count", output, axis)


def _eq(site, a, b, reason):
    if dims.try_eq(a, b) is not True:
        yield site.raw("==", a, b, f"{site.node.op_type}: {reason}")


def _one_of(site, a, b, reason):
    """``a`` is 1 or ``b``."""
    if dims.try_eq(a, 1) is not True and dims.try_eq(a, b) is not True:
        yield site.raw("or", a, b, f"{site.node.op_type}: {reason}", alts=((a, b), (a, 1)))


def _broadcasts(site, a, b, reason):
    """``a`` and ``b`` broadcast: equal, or either is 1."""
    if dims.try_eq(a, b) is not True and dims.try_eq(a, 1) is not True and dims.try_eq(b, 1) is not True:
        yield site.raw("or", a, b, f"{site.node.op_type}: {reason}", alts=((a, b), (a, 1), (b, 1)))


def _multiple(site, n, k, reason):
    """``k`` divides ``n``."""
    whole = dims.mul(k, dims.floordiv(n, k))
    if dims.try_eq(whole, n) is not True:
        yield site.raw("==", whole, n, f"{site.node.op_type}: {reason}")


def _elements_in(site, x, sizes, name):
    """``x``'s element count is one of ``sizes`` (the body reshapes it, so only the count
    matters)."""
    n = dims.mul(dims.mul(x[0], x[1]), x[2])
    if any(dims.try_eq(n, s) is True for s in sizes):
        return
    text = " or ".join(map(str, sizes))
    yield site.raw("or", n, sizes[0], f"{site.node.op_type}: {name} has {text} elements",
                   alts=tuple((n, s) for s in sizes))


def _attention_shapes(site):
    """What onnxruntime's kernel (opsets 23 and 24) checks before it runs: one batch, the K/V
    sequence and head counts agree, Q's head size is K's, past_key and past_value are
    (B, Hkv, P, E) and (B, Hkv, P, Ev), attn_mask ends in (L, P+S) exactly (no broadcast there)
    with its dim -3 1 or Hq and its dim -4 1 or B, and nonpad_kv_seqlen is (B,). Opset 25 runs
    as the function body in onnxruntime 1.32 (no kernel): the same, but the body pads or crops
    attn_mask's last dim to P+S (any size runs) and adds the mask broadcasting (its dim -2 1 or
    L, or L 1: the mask's dim -2 then sets Y's length; its dims -3 and -4 broadcast against Hq and B
    alike); without past and present outputs it expands K and V, so their batch, V's heads and
    sequence length and K's head size may be 1 too, and 3-D K and V need only element counts
    (reshaped to (B, S, Hkv, -1) with Q's batch and K's length: Y's last dim follows V's
    count); nonpad_kv_seqlen may be (1,). The body runs more sizes the spec rules out (a K or V
    dim of 1 with past or present_key/value), with other output shapes: left outside."""
    q, k, v = site.shape(0), site.shape(1), site.shape(2)
    if q is None or k is None or v is None or not len(q) == len(k) == len(v) or len(q) not in (3, 4):
        return
    b = q[0]
    out = list(site.node.output) + ["", ""]
    # opset 25's body expands K and V, unpadded and unconcatenated, to (B, Hkv, ., S, E or Ev): a
    # dim of 1 there broadcasts, and the output shapes stay, but for present_key/value (K and V)
    loose = site.opset >= 25 and site.shape(4) is None and not out[1] and not out[2]
    same = _one_of if loose else _eq
    if not (loose and len(q) == 3):
        yield from same(site, k[0], b, "K's batch is Q's")
        yield from same(site, v[0], b, "V's batch is Q's")
    if len(q) == 4:
        hq, hkv, length, s_len, e, ev = q[1], k[1], q[2], k[2], q[3], v[3]
        yield from same(site, k[3], e, "K's head size is Q's")
        yield from same(site, v[2], s_len, "V's sequence length is K's")
        yield from same(site, v[1], hkv, "V's head count is K's")
        yield from _multiple(site, hq, hkv, "kv_num_heads divides q_num_heads")
    else:
        hq, hkv = site.attr_int("q_num_heads", 0), site.attr_int("kv_num_heads", 0)
        if hq <= 0 or hkv <= 0:
            return
        length, s_len = q[1], k[1]
        yield from _multiple(site, q[2], hq, f"q_num_heads {hq} divides Q's hidden size")
        e = dims.floordiv(q[2], hq)
        ev = dims.floordiv(v[2], hkv)
        if loose:  # (the body reshapes K and V to (B, S, Hkv, -1) with Q's B and K's S, then expands K)
            heads = dims.mul(dims.mul(b, s_len), hkv)
            yield from _elements_in(site, k, (dims.mul(heads, e), heads), "K")
            yield from _multiple(site, dims.mul(dims.mul(v[0], v[1]), v[2]), heads, "B*S*kv_num_heads divides V's size")
        else:
            yield from _eq(site, k[2], dims.mul(hkv, e), "K's hidden size is kv_num_heads times Q's head size")
            yield from _multiple(site, v[2], hkv, f"kv_num_heads {hkv} divides V's hidden size")
            yield from _eq(site, v[1], s_len, "V's sequence length is K's")
    total = s_len
    pk, pv = site.shape(4), site.shape(5)
    if pk is not None and len(pk) == 4:
        for past, size, name in ((pk, e, "past_key"), (pv, ev, "past_value")):
            if past is None or len(past) != 4:
                continue
            yield from _eq(site, past[0], b, f"{name}'s batch is Q's")
            yield from _eq(site, past[1], hkv, f"{name}'s head count is kv_num_heads")
            yield from _eq(site, past[3], size, f"{name}'s head size is {'K' if name == 'past_key' else 'V'}'s")
        if pv is not None and len(pv) == 4:
            yield from _eq(site, pv[2], pk[2], "past_value's sequence length is past_key's")
        total = dims.add(pk[2], s_len)
    mask = site.shape(3)
    if mask is not None and len(mask) >= 2:
        if site.opset >= 25:  # (the function body pads or crops the mask to P+S, then adds it, broadcasting)
            yield from _broadcasts(site, mask[-2], length, "attn_mask's dim -2 broadcasts against Q's sequence length")
        else:
            yield from _eq(site, mask[-1], total, "attn_mask's last dim is the total sequence length")
            yield from _eq(site, mask[-2], length, "attn_mask's dim -2 is Q's sequence length")
        grows = _broadcasts if site.opset >= 25 else _one_of
        if len(mask) >= 3:
            yield from grows(site, mask[-3], hq, "attn_mask's dim -3 broadcasts against q_num_heads")
        if len(mask) == 4:
            yield from grows(site, mask[0], b, "attn_mask's dim 0 broadcasts against the batch")
    nonpad = site.shape(6)
    if nonpad is not None and len(nonpad) == 1:
        if site.opset >= 25:  # (the function body broadcasts it over the batch)
            yield from _one_of(site, nonpad[0], b, "nonpad_kv_seqlen is (batch,) or (1,)")
        else:
            yield from _eq(site, nonpad[0], b, "nonpad_kv_seqlen is (batch,)")


ATTENTION_SHAPES = Condition(
    "Q, K, V, past and attn_mask agree on the batch, heads, head sizes and sequence lengths "
    "(attn_mask ends in (L, P+S), its dim -3 is 1 or Hq, dim -4 1 or B; at opset 25 its last dim is any "
    "and its dims -2, -3, -4 broadcast against L, Hq and B; "
    "nonpad_kv_seqlen is (B,), at opset 25 (1,) too)",
    _attention_shapes, replayable=True)


@register("Attention", since=23, cost=formulas.ATTENTION,
          conditions=[ATTENTION_SHAPES, "at opsets 23-24 Q, K and V have no dim of 0 (onnxruntime's kernel)"])
def attention(node):
    """Y is (B, Hq, L, Ev), or (B, L, Hq*Ev) for 3-D inputs; present_key/value are
    (B, Hkv, P+S, E) and (B, Hkv, P+S, Ev); qk_matmul_output is (B, Hq, L, P+S),
    where P is past_key's sequence length (0 without a past). At opset 25 attn_mask's dims -4..-2
    broadcast into Y's B, Hq and L (and qk_matmul_output's, but for mode 0: Q K^T before the mask)."""
    q, k, v = arg(node, 0), arg(node, 1), arg(node, 2)
    n = node.num_outputs
    for t in (q, k, v):
        rank = len(shape_of(t, q.dtype, k.dtype, v.dtype, q.dtype, why="query, key or value rank unknown"))
        if rank not in (3, 4):
            raise ShapeContradiction(f"Attention inputs must have rank 3 or 4, not {rank}")
    for i, out, what in ((4, 1, "past_key"), (5, 2, "past_value")):
        if node.opset < 25 and present(node, i) and not node.has_output(out):  # (refused at every size)
            raise ShapeContradiction(f"Attention: {what} without its present output; onnxruntime's kernel "
                                     "needs both (opsets 23-24)")
    # onnxruntime's kernel (opsets 23-24) refuses a query, key or value dim of 0; at opset 25 its
    # function body refuses most and runs others with shapes of its own (an empty V's last dim comes
    # out as K's length): left outside, as the conditions leave its other off-spec sizes
    why = "onnxruntime's kernel refuses an empty one" if node.opset < 25 else \
        "onnxruntime's function body refuses most empty ones, and runs the rest with other shapes"
    for what, t in (("Q", q), ("K", k), ("V", v)):
        for i, d in enumerate(t.shape):
            node.require_at_least(d, 1, f"Attention: {what}[{i}] >= 1 ({why})")
    batch = q.shape[0]
    q_len = q.shape[2] if len(q.shape) == 4 else q.shape[1]
    kv_len = k.shape[2] if len(k.shape) == 4 else k.shape[1]
    hq = _heads(node, q, "q_num_heads", 1, 3, 1)
    hkv = _heads(node, k, "kv_num_heads", 1, 1, 1)
    if isinstance(hq, int) and isinstance(hkv, int) and (hkv <= 0 or hq % hkv):  # (refused at every size)
        raise ShapeContradiction(f"Attention: kv_num_heads {hkv} does not divide q_num_heads {hq}")
    e = _head_size(node, k, hkv, 1, 3)
    ev = _head_size(node, v, hkv, 0, len(q.shape) - 1)
    if node.opset >= 25 and len(q.shape) == 3 and isinstance(hkv, int) and not present(node, 4) \
            and not node.has_output(1) and not node.has_output(2):
        # opset 25's body reshapes V to (B, S, Hkv, -1) with Q's batch and K's length (see the conditions)
        ev = dims.floordiv(dims.mul(dims.mul(v.shape[0], v.shape[1]), v.shape[2]), dims.mul(dims.mul(batch, kv_len), hkv))
    past = arg(node, 4)
    total = kv_len
    if present(node, 4):
        total = past.shape[2] + kv_len if past.shape is not None and len(past.shape) == 4 else \
            node.fresh("Attention past_key shape is not known", 1, 2)
    yb, yh, yl = batch, hq, q_len
    mask = arg(node, 3) if present(node, 3) else None
    if node.opset >= 25 and mask is not None and mask.shape is not None and len(mask.shape) >= 2:
        # (the body adds the mask to Q K^T broadcasting: its dims grow a batch, heads or L of 1)
        m = (1,) * (4 - len(mask.shape)) + tuple(mask.shape)
        yb, yh, yl = (broadcast_dim([d, md], lambda why, a=a: node.fresh(why, 0, a))
                      for d, md, a in ((batch, m[0], 0), (hq, m[1], 1), (q_len, m[2], len(q.shape) - 2)))
    qk = (yb, yh, yl, total) if node.attr_int("qk_matmul_output_mode", 0) else (batch, hq, q_len, total)
    y = (yb, yh, yl, ev) if len(q.shape) == 4 else (yb, yl, dims.mul(yh, ev))
    outs = [Tensor(q.dtype, y), Tensor(k.dtype, (batch, hkv, total, e)), Tensor(v.dtype, (batch, hkv, total, ev)),
            Tensor(q.dtype, qk)]
    return outs[:n]


@register("FlexAttention", domain="ai.onnx.preview", conditions=())
def flex_attention(node: Node) -> Outputs:
    """(B, Hq, L, Ev) from Q (B, Hq, L, E) and V (B, Hkv, S, Ev)."""
    q, v = arg(node, 0), arg(node, 2)
    qs, vs = (shape_of(t, q.dtype, why="query or value rank unknown") for t in (q, v))
    return [Tensor(q.dtype, tuple(qs[:3]) + (vs[3],))]


def _linear_attention_shapes(site):
    """What the function body onnxruntime 1.32 runs (it has no kernel) needs. It reshapes
    key, value and decay to (B, T, Hkv, -1) and beta to (B, T, -1, 1) with query's batch B and
    length T, so only their element counts matter; the state is (B, Hkv, dk, dv) with dk
    query's width / Hq and dv value's width / Hkv, and a per-step head size of 1 broadcasts
    against it: key's (not for a delta rule, which reads the state with the key), value's,
    decay's (per head). Beta is per head or one. past_state is the state: the body also runs
    where it broadcasts against a step's update (the state then takes the broadcast shape, and
    with it output), sizes left outside the domain, where onnxsym's dims would not hold."""
    hq, hkv = site.attr_int("q_num_heads", 0), site.attr_int("kv_num_heads", 0)
    q, k, v = site.shape(0), site.shape(1), site.shape(2)
    if hq <= 0 or hkv <= 0 or q is None or k is None or v is None or not len(q) == len(k) == len(v) == 3:
        return
    rule = next((a.s.decode() for a in site.node.attribute if a.name == "update_rule"), "gated_delta")
    b, t = q[0], q[1]
    yield from _multiple(site, q[2], hq, f"q_num_heads {hq} divides query's width")
    dk, dv = dims.floordiv(q[2], hq), dims.floordiv(v[2], hkv)
    heads = dims.mul(dims.mul(b, t), hkv)  # (B*T*Hkv)
    full_k, full_v = dims.mul(heads, dk), dims.mul(heads, dv)
    yield from _elements_in(site, k, (full_k,) if "delta" in rule else (full_k, heads), "key")
    yield from _elements_in(site, v, (full_v, heads), "value")
    past = site.shape(3) if len(site.node.input) > 3 and site.node.input[3] else None
    if past is not None and len(past) == 4:
        for got, want, what in zip(past, (b, hkv, dk, dv), ("batch", "heads", "key head size", "value head size")):
            yield from _eq(site, got, want, f"past_state's {what} is the state's")
    for i, name, sizes in ((4, "decay", (full_k, heads)), (5, "beta", (heads, dims.mul(b, t)))):
        x = site.shape(i) if len(site.node.input) > i and site.node.input[i] else None
        if x is not None and len(x) == 3:
            yield from _elements_in(site, x, sizes, name)


LINEAR_ATTENTION_SHAPES = Condition(
    "key, value, decay, beta and past_state fit query's batch and length and the state "
    "(B, kv_num_heads, query's width / q_num_heads, value's width / kv_num_heads)",
    _linear_attention_shapes, replayable=True)


@register("LinearAttention", since=27, conditions=[LINEAR_ATTENTION_SHAPES, "query's batch and length are >= 1"])
def linear_attention(node: Node) -> Outputs:
    """output (B, T, Hq*dv); present_state (B, Hkv, dk, dv), with B and T query's, dk query's
    width / Hq and dv value's width / Hkv, as the function body onnxruntime runs computes
    them (the spec's dk, key's width / Hkv, is the same within the conditions)."""
    q, k, v = arg(node, 0), arg(node, 1), arg(node, 2)
    past = arg(node, 3)
    hq, hkv = required_int(node, "q_num_heads"), required_int(node, "kv_num_heads")
    if hkv <= 0 or hq % hkv:  # (refused at every size)
        raise ShapeContradiction(f"LinearAttention: kv_num_heads {hkv} does not divide q_num_heads {hq}")
    state_dtype = past.dtype or q.dtype
    qs, ks, vs = (shape_of(t, q.dtype, state_dtype, why="query, key or value rank unknown") for t in (q, k, v))
    if len(qs) == 3:  # the body reshapes to (B, T, heads, -1) with query's B and T: -1 needs B*T >= 1
        for i, what in ((0, "B"), (1, "T")):
            node.require_at_least(qs[i], 1, f"LinearAttention: query's {what} >= 1 (onnxruntime's Reshape to -1 "
                                            "refuses an empty batch or length)")
    dk = dims.floordiv(qs[2], hq)
    dv = dims.floordiv(vs[2], hkv)
    outs = [Tensor(q.dtype, (qs[0], qs[1], dims.mul(hq, dv))),
            Tensor(state_dtype, (qs[0], hkv, dk, dv))]
    return outs[:node.num_outputs]


# Y has X's shape and type.
register("Swish", since=24, conditions=(), cost=formulas.ELEMENTWISE)(keeps_input_shape)


def _rms_scale(site):
    """onnxruntime broadcasts the scale to all of X one way (aligned at the end), whatever the
    axis: (2, 1, 5) scales X (2, 3, 5) at axis 2, though the spec says X[axis:]."""
    x, s = site.shape(0), site.shape(1)
    if x is None or s is None or len(s) > len(x):
        return
    yield from to_target(site, tuple(x), s, "scale")


RMS_SCALE = Condition("scale broadcasts to X (onnxruntime: to all of X, not X[axis:] only)", _rms_scale,
                      replayable=True)


@register("RMSNormalization", since=23, conditions=[RMS_SCALE, NORM_ELEMENTS], cost=formulas.NORMALIZATION)
def rms_normalization(node: Node) -> Outputs:
    """Y has X's shape and the scale's type."""
    x, scale = arg(node, 0), arg(node, 1)
    if x.shape is not None:
        normalize_axis(node.attr_int("axis", -1), len(x.shape))  # (onnxruntime refuses one out of range)
        if scale.shape is not None and len(scale.shape) > len(x.shape):  # (refused at every size)
            raise ShapeContradiction(f"RMSNormalization scale has rank {len(scale.shape)} > X's {len(x.shape)}")
    return [Tensor(scale.dtype or x.dtype, x.shape)]



@register("SwiGLU", since=28, conditions=["A and B have one shape"])
def swiglu(node: Node) -> Outputs:
    """A and B must have the same shape (no broadcasting); Y has it."""
    a, b = arg(node, 0), arg(node, 1)
    if a.shape is None:
        return [Tensor(a.dtype, b.shape)]
    if b.shape is not None:
        if len(a.shape) != len(b.shape):
            raise ShapeContradiction(f"SwiGLU inputs have ranks {len(a.shape)} and {len(b.shape)}")
        for da, db in zip(a.shape, b.shape):
            if dims.try_eq(da, db) is False:
                raise ShapeContradiction(f"SwiGLU input dims {da} and {db} differ")
            if da != db:
                node.require_equal(da, db, "SwiGLU inputs have one shape")
    return [Tensor(a.dtype, a.shape)]
