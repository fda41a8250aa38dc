"""com.microsoft contrib ops that onnxruntime's fusions emit outside attention,
normalization and quantization: fused activations, fused MatMul/Gemm/Conv, NHWC conv,
mixture-of-experts."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym.errors import ShapeContradiction
from onnxsym.registry import register
from onnxsym.shapes import normalize_axis
from onnxsym.values import Tensor

from . import shape_ops
from .contrib_common import MS, WithInputs, arg, exact_div, present, same_as, scalar_value
from .nn import _conv_out, conv, gemm, matmul


@register("BiasGelu FastGelu Gelu QuickGelu BiasAdd BiasSoftmax FusedGelu Inverse Trilu "
          "MoE QMoE RotaryEmbedding", domain=MS)
def same_shape(node):
    """Output 0 has the shape of input 0 (biases, caches, routers and experts only read)."""
    return [same_as(node, 0)]


@register("BiasDropout BitmaskBiasDropout", domain=MS)
def bias_dropout(node):
    x = arg(node, 0)
    outs = [Tensor(x.dtype, x.shape)]
    if node.num_outputs > 1:
        mask = TensorProto.BOOL if node.op_type == "BiasDropout" else TensorProto.UINT32
        outs.append(Tensor(mask, x.shape if node.op_type == "BiasDropout" else None))
    return outs


@register("BiasSplitGelu", domain=MS)
def bias_split_gelu(node):
    """(N, S, D) -> (N, S, D/2): the two halves of the last axis gate each other."""
    x = arg(node, 0)
    if x.shape is None:
        return [Tensor(x.dtype, None)]
    d = exact_div(node, x.shape[-1], 2, "BiasSplitGelu hidden size")
    return [Tensor(x.dtype, tuple(x.shape[:-1]) + (d,))]


@register("GemmFastGelu", domain=MS)
def gemm_fast_gelu(node):
    return matmul(node)


def _fused_operand(shape, trans_batch, trans):
    """The operand's shape after FusedMatMul's transBatch and trans flags."""
    s = list(shape)
    if trans_batch and len(s) >= 3:  # dim 0 moves in front of the last dim
        s = s[1:-1] + [s[0], s[-1]]
    if trans and len(s) >= 2:
        s[-1], s[-2] = s[-2], s[-1]
    return tuple(s)


@register("FusedMatMul TransposeMatMul", domain=MS)
def fused_matmul(node):
    """MatMul after transposing the operands as the attributes say."""
    a, b = arg(node, 0), arg(node, 1)
    if a.shape is None or b.shape is None:
        return [Tensor(a.dtype, None)]
    sa = _fused_operand(a.shape, node.attr("transBatchA", 0), node.attr("transA", 0))
    sb = _fused_operand(b.shape, node.attr("transBatchB", 0), node.attr("transB", 0))
    return _matmul_of(node, Tensor(a.dtype, sa), Tensor(b.dtype, sb))


def _matmul_of(node, a, b):
    """The ONNX MatMul rule applied to two given operands."""
    return matmul(WithInputs(node, [a, b], "MatMul"))


@register("FusedGemm", domain=MS)
def fused_gemm(node):
    return gemm(node)


@register("FusedConv", domain=MS)
def fused_conv(node):
    return conv(node)


@register("NhwcConv", domain=MS)
def nhwc_conv(node):
    """Conv in channels-last layout: X (N, spatial..., C), W (M, kernel..., C/group)."""
    x, w = arg(node, 0), arg(node, 1)
    if x.shape is None:
        return [Tensor(x.dtype, None)]
    nsp = len(x.shape) - 2
    kernel = node.attr("kernel_shape")
    if kernel is None:
        if w.shape is None:
            raise ShapeContradiction("NhwcConv needs kernel_shape or a weight of known shape")
        kernel = list(w.shape[1:-1])
    m = w.shape[0] if w.shape is not None else node.fresh("NhwcConv weight shape unknown", 0, nsp + 1)
    sp = _conv_out(node, list(x.shape[1:-1]), list(kernel))
    return [Tensor(x.dtype, (x.shape[0],) + tuple(sp) + (m,))]


@register("CDist", domain=MS)
def cdist(node):
    a, b = arg(node, 0), arg(node, 1)
    if a.shape is None or b.shape is None:
        return [Tensor(a.dtype, None)]
    return [Tensor(a.dtype, (a.shape[0], b.shape[0]))]



# onnxruntime's contrib Range and Pad read their inputs like the ONNX ops do.


@register("Range", domain=MS)
def ms_range(node):
    """The ONNX Range, whose delta (input 2) defaults to 1 here."""
    if present(node, 2):
        return shape_ops.range_rule(node)
    start = arg(node, 0)
    delta = Tensor(start.dtype, (), (1,))
    return shape_ops.range_rule(WithInputs(node, [start, arg(node, 1), delta]))


register("Pad", domain=MS)(shape_ops.pad_v11)


@register("ExpandDims", domain=MS)
def expand_dims(node):
    """Insert a 1 at the axis given by the scalar input 1."""
    x = arg(node, 0)
    axis = scalar_value(node, 1)
    if x.shape is None or axis is None:
        return [Tensor(x.dtype, None)]
    r = len(x.shape) + 1
    axis = normalize_axis(axis, r)
    return [Tensor(x.dtype, tuple(x.shape[:axis]) + (1,) + tuple(x.shape[axis:]))]
