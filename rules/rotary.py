"""RotaryEmbedding, the standard op (opset 23) and onnxruntime's com.microsoft one: Y has X's
shape; what each needs to run, as onnxruntime's CheckInputs states it.

X is (batch, seq, hidden) or (batch, heads, seq, head_size). With position_ids, they are
(batch, seq) (com.microsoft also takes one position, the first of a run of seq), and the
caches have a row for each of the seq positions; the standard op without position_ids takes
caches of (batch, seq, rotary_dim/2). Fusions write position_ids of (1, seq) that run at
batch 1 only: the domain must say so.
"""

from __future__ import annotations

from onnxsym import dims
from onnxsym.registry import Condition, register

from .contrib_common import MS
from .nn import keeps_input_shape


def _batch_seq(x):
    """(batch, seq) of X, or None for a rank onnxruntime refuses anyway."""
    if x is None or len(x) not in (3, 4):
        return None
    return x[0], x[2] if len(x) == 4 else x[1]


def _equal(site, a, b, reason):
    if dims.try_eq(a, b) is not True:
        yield site.raw("==", a, b, reason)


def _positions(site):
    """position_ids is (batch, seq) of X; com.microsoft also takes a single position."""
    op = site.node.op_type
    x, pos = site.shape(0), site.shape(1 if site.node.domain == MS else 3)
    bs = _batch_seq(x)
    if bs is None or pos is None:
        return
    if len(pos) == 2:
        yield from _equal(site, pos[0], bs[0], f"{op}: position_ids dim 0 is the batch size")
        yield from _equal(site, pos[1], bs[1], f"{op}: position_ids dim 1 is the sequence length")
    elif len(pos) == 1 and site.node.domain == MS:  # one position: a scalar or a 1-element vector
        yield from _equal(site, pos[0], 1, f"{op}: position_ids is one position or (batch, sequence length)")


def _caches(site):
    """The caches have one shape; with position_ids, at least seq rows (onnxruntime does not
    grow them), else the standard op's caches are (batch, seq, ...)."""
    op, ms = site.node.op_type, site.node.domain == MS
    x = site.shape(0)
    cos, sin = site.shape(2 if ms else 1), site.shape(3 if ms else 2)
    if cos is not None and sin is not None and len(cos) == len(sin):
        for a, b in zip(cos, sin):
            yield from _equal(site, a, b, f"{op}: cos_cache and sin_cache have one shape")
    bs = _batch_seq(x)
    if bs is None or cos is None:
        return
    with_positions = ms or (len(site.node.input) > 3 and site.node.input[3] != "")
    if with_positions and len(cos) == 2:
        if dims.try_le(bs[1], cos[0]) is not True:
            yield site.raw("<=", bs[1], cos[0], f"{op}: the caches have a row for each of the sequence's positions")
    elif not with_positions and len(cos) == 3:
        yield from _equal(site, cos[0], bs[0], f"{op}: without position_ids, cos_cache dim 0 is the batch size")
        yield from _equal(site, cos[1], bs[1], f"{op}: without position_ids, cos_cache dim 1 is the sequence length")


CONDITIONS = (
    Condition("position_ids is (batch, seq) of X (com.microsoft: or a single position)", _positions, replayable=True),
    Condition("cos_cache and sin_cache have one shape: with position_ids at least seq rows, "
              "else (batch, seq, rotary_dim/2)", _caches, replayable=True),
)

register("RotaryEmbedding", since=23, conditions=CONDITIONS)(keeps_input_shape)
register("RotaryEmbedding", domain=MS, conditions=CONDITIONS)(keeps_input_shape)
