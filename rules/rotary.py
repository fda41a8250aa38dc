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
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Condition, Outputs, register

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



def _head_size(x, num_heads):
    """X's head size: dim 3 of a 4-D X (num_heads is then not read), hidden // num_heads of a 3-D one."""
    return x[3] if len(x) == 4 else dims.floordiv(x[2], num_heads)


def _standard_dims(site):
    """The standard op's head and rotary dims, as onnxruntime checks them: a 3-D X's hidden size
    is a multiple of num_heads; rotary_embedding_dim (0: the head size) is at most the head size;
    the caches' last dim is half of it (rounded down: 5 takes caches of 2)."""
    x, cos = site.shape(0), site.shape(1)
    nh = site.attr_int("num_heads", 0)
    if x is None or len(x) not in (3, 4) or (len(x) == 3 and nh <= 0):
        return
    if len(x) == 3:
        whole = dims.mul(nh, dims.floordiv(x[2], nh))
        if dims.try_eq(whole, x[2]) is not True:
            yield site.raw("==", whole, x[2], f"RotaryEmbedding: num_heads {nh} divides the hidden size")
    head = _head_size(x, nh)
    rd = site.attr_int("rotary_embedding_dim", 0)
    if rd > 0 and dims.try_le(rd, head) is not True:
        yield site.raw("<=", rd, head, "RotaryEmbedding: rotary_embedding_dim is at most the head size")
    if cos is not None and len(cos) >= 2:
        half = rd // 2 if rd > 0 else dims.floordiv(head, 2)
        yield from _equal(site, cos[-1], half, "RotaryEmbedding: the caches' last dim is half the rotary dim")


STANDARD_DIMS = Condition("3-D: num_heads divides X[2]; rotary_embedding_dim (0: the head size) <= the head size; "
                          "the caches' last dim is half of it", _standard_dims, replayable=True)


@register("RotaryEmbedding", since=23, conditions=CONDITIONS + (STANDARD_DIMS,))
def rotary_embedding(node: Node) -> Outputs:
    """Y has X's shape. The ranks onnxruntime refuses at every size: X is 3-D or 4-D (3-D needs
    num_heads); the caches are (max_position, rotary_dim/2) with position_ids of (batch, seq), else
    (batch, seq, rotary_dim/2)."""
    x, cos = node.inputs[0], node.inputs[1]
    xs = x.shape if isinstance(x, Tensor) else None
    cs = cos.shape if isinstance(cos, Tensor) else None
    if xs is not None and len(xs) not in (3, 4):
        raise ShapeContradiction(f"RotaryEmbedding X has rank {len(xs)}, not 3 or 4")
    if xs is not None and len(xs) == 3 and node.attr_int("num_heads", 0) <= 0:
        raise ShapeContradiction("RotaryEmbedding: a 3-D X needs num_heads > 0")
    if node.attr_int("rotary_embedding_dim", 0) < 0:
        raise ShapeContradiction("RotaryEmbedding: rotary_embedding_dim is negative")
    with_positions = len(node.input_names) > 3 and node.input_names[3] != ""
    want = 2 if with_positions else 3
    if cs is not None and len(cs) != want:
        raise ShapeContradiction(f"RotaryEmbedding cos_cache has rank {len(cs)}, not {want}")
    pos = node.inputs[3] if with_positions else None
    if isinstance(pos, Tensor) and pos.shape is not None and len(pos.shape) != 2:
        raise ShapeContradiction(f"RotaryEmbedding position_ids has rank {len(pos.shape)}, not 2")
    return keeps_input_shape(node)
register("RotaryEmbedding", domain=MS, conditions=CONDITIONS)(keeps_input_shape)
