"""The com.microsoft.nchwc domain: the blocked-channel layout onnxruntime's NchwcTransformer
rewrites CNNs into at ORT_ENABLE_ALL. A blocked tensor is (N, C', spatial...) with C'
the channel count rounded up to the machine's block size (8 or 16 with MLAS). The rules
never guess the block size: padded channel counts come from the reordered weights the
transformer writes (Conv) and ReorderOutput's ``channels`` attribute names the real count."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.dims import Dim
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register

from .common import arg
from .contrib_common import to_channels_first, to_channels_last
from .nn import conv, global_pool, pool

NCHWC = "com.microsoft.nchwc"

# The largest block size MLAS uses (AVX-512 and NEON); every block size divides it.
MAX_BLOCK = 16

# The ONNX formulas hold as written: the blocked Conv's output channels are its
# (padded) weight's rows, pools and global pools keep the blocked channel axis.
register("Conv", domain=NCHWC)(conv)
register("MaxPool AveragePool", domain=NCHWC)(pool)
register("GlobalMaxPool GlobalAveragePool", domain=NCHWC)(global_pool)


@register("ReorderInput", domain=NCHWC)
def reorder_input(node: Node) -> Outputs:
    """NCHW (or, with channels_last, NHWC) to blocked: channels rounded up to the block
    size. A multiple of 16 stays as it is under every block size; otherwise the padded
    count is the machine's (a fresh symbol between C and C + 15)."""
    x = arg(node, 0)
    if x.shape is None or len(x.shape) < 3:
        return [node.unknown_rank("input rank unknown, or below 3", 0, x.dtype)]
    shape = to_channels_first(x.shape) if node.attr_int("channels_last", 0) else tuple(x.shape)
    c = shape[1]
    if not (isinstance(c, int) and c % MAX_BLOCK == 0):
        lo, hi = dims.range_of(c)
        c = node.fresh("the blocked channel count rounds up to the machine's NCHWc block size",
                       0, 1, lo=lo, hi=min(hi + MAX_BLOCK - 1, dims.INT64_MAX))
    return [Tensor(x.dtype, (shape[0], c) + tuple(shape[2:]))]


@register("ReorderOutput", domain=NCHWC)
def reorder_output(node: Node) -> Outputs:
    """Blocked to NCHW (or NHWC with channels_last) with the ``channels`` real channels."""
    x = arg(node, 0)
    in_shape = shape_of(x, x.dtype)
    last = node.attr_int("channels_last", 0)
    c: Dim = node.attr_int("channels", 0)
    if c <= 0:
        c = node.fresh("ReorderOutput without a channels attribute", 0, len(in_shape) - 1 if last else 1)
    shape = (in_shape[0], c) + tuple(in_shape[2:])
    return [Tensor(x.dtype, to_channels_last(shape) if last else shape)]


@register("Upsample", domain=NCHWC)
def upsample(node: Node) -> Outputs:
    """Integer ``scales`` per axis (N, C, spatial...): each dim times its scale."""
    x = arg(node, 0)
    scales = node.attr_ints("scales")
    why = "input rank or scales unknown"
    shape = shape_of(x, x.dtype, why=why)
    if not scales:
        return [node.unknown_rank(why, 0, x.dtype)]
    return [Tensor(x.dtype, tuple(dims.mul(d, s) for d, s in zip(shape, scales)))]
