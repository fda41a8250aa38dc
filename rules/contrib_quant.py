"""Quantized ops of onnxruntime's contrib set (what onnxruntime.quantization and the
weight-only quantizers emit): QLinear* ops, integer MatMuls, block-quantized MatMul and
Gather, and the contrib QuantizeLinear/DequantizeLinear."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.dims import Dim
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register
from onnxsym.semantics.shapes import broadcast_shapes, normalize_axis, total

from .common import F32, I32, I64, arg, present, required_int
from .contrib_common import MS, WithInputs, channels_last_rule, to_channels_first
from .nn import conv, gemm_shape, global_pool, matmul_shape, operand_shapes, pool


def _broadcast(node, ts, dtype):
    shapes = [shape_of(t, dtype, why="an input's rank unknown") for t in ts]
    shape = broadcast_shapes(shapes, lambda axis, why: node.fresh(why, 0, axis), node.require_equal)
    return [Tensor(dtype, shape)]


@register("QLinearAdd QLinearMul", domain=MS)
def qlinear_binary(node: Node) -> Outputs:
    """A (input 0) and B (input 3) broadcast; the result is quantized like A."""
    a = arg(node, 0)
    return _broadcast(node, [a, arg(node, 3)], a.dtype)


@register("QLinearWhere", domain=MS)
def qlinear_where(node: Node) -> Outputs:
    """condition (0), X (1) and Y (4) broadcast."""
    x = arg(node, 1)
    return _broadcast(node, [arg(node, 0), x, arg(node, 4)], x.dtype)


@register("QLinearSigmoid QLinearLeakyRelu QLinearSoftmax", domain=MS)
def qlinear_unary(node: Node) -> Outputs:
    x = arg(node, 0)
    return [Tensor(x.dtype, x.shape)]


@register("QuantizeLinear", domain=MS, cost=formulas.ELEMENTWISE)
def quantize_linear(node: Node) -> Outputs:
    """Same shape; the element type of the zero point (uint8 without one)."""
    x = arg(node, 0)
    return [Tensor(arg(node, 2).dtype if present(node, 2) else TensorProto.UINT8, x.shape)]


@register("DequantizeLinear", domain=MS, cost=formulas.ELEMENTWISE)
def dequantize_linear(node: Node) -> Outputs:
    """Same shape; the element type of the scale."""
    x, scale = arg(node, 0), arg(node, 1)
    return [Tensor(scale.dtype or F32, x.shape)]


@register("QLinearConcat", domain=MS)
def qlinear_concat(node):
    """Y_scale, Y_zero_point, then (X, scale, zero_point) per input; concatenated along axis."""
    y_zp = arg(node, 1)
    ts = [arg(node, i) for i in range(2, len(node.inputs), 3)]
    dtype = y_zp.dtype or (ts[0].dtype if ts else 0)
    if not ts:
        return [node.unknown_rank("an input's rank unknown", 0, dtype)]
    shapes = [shape_of(t, dtype, why="an input's rank unknown") for t in ts]
    axis = normalize_axis(node.attr_int("axis"), len(shapes[0]))
    out = list(shapes[0])
    out[axis] = dims.add(0, total(shape[axis] for shape in shapes))
    return [Tensor(dtype, tuple(out))]


def _channels_first(x):
    return Tensor(x.dtype, to_channels_first(x.shape))


@register("QLinearAveragePool", domain=MS, cost=formulas.POOL)
@register("QLinearGlobalAveragePool", domain=MS, cost=formulas.REDUCTION)
def qlinear_average_pool(node: Node) -> Outputs:
    """AveragePool or GlobalAveragePool, in NCHW or (channels_last) NHWC layout."""
    op, rule = ("GlobalAveragePool", global_pool) if "Global" in node.op_type else ("AveragePool", pool)
    x = arg(node, 0)
    shape_of(x, x.dtype)
    if node.attr_int("channels_last", 0):
        return channels_last_rule(node, rule, op, [_channels_first(x)])
    return rule(WithInputs(node, [x], op))[:1]


@register("QLinearConv", domain=MS, cost=formulas.CONV)
def qlinear_conv(node: Node) -> Outputs:
    """The ONNX QLinearConv, or with channels_last its NHWC form (weights stay OIHW)."""
    if not node.attr_int("channels_last", 0):
        return conv(node)
    x = arg(node, 0)
    shape_of(x, arg(node, 7).dtype or x.dtype)
    inputs = [_channels_first(x)] + [node.input(i) for i in range(1, len(node.inputs))]
    return channels_last_rule(node, conv, "QLinearConv", inputs)


@register("QLinearReduceMean ReduceSumInteger", domain=MS)
def qlinear_reduce_mean(node: Node) -> Outputs:
    """Reduce over the ``axes`` attribute (all axes when empty)."""
    x = arg(node, 0)
    dtype = I32 if node.op_type == "ReduceSumInteger" else x.dtype
    in_shape = shape_of(x, dtype)
    r = len(in_shape)
    axes = node.attr_ints("axes")
    red = {normalize_axis(a, r) for a in axes} if axes else set(range(r))
    keep = node.attr_int("keepdims", 1)
    shape = tuple(1 if i in red else d for i, d in enumerate(in_shape) if keep or i not in red)
    return [Tensor(dtype, shape)]


def _matmul_as(node, dtype):
    """The ONNX MatMul of inputs 0 and 1, in ``dtype``."""
    return [Tensor(dtype, matmul_shape(node, *operand_shapes(dtype, arg(node, 0), arg(node, 1))))]


@register("MatMulInteger16", domain=MS)
def matmul_integer16(node: Node) -> Outputs:
    return _matmul_as(node, I32)


@register("MatMulIntegerToFloat", domain=MS, cost=formulas.MATMUL)
def matmul_integer_to_float(node: Node) -> Outputs:
    """MatMul of the integer A and B, in the element type of a_scale."""
    return _matmul_as(node, arg(node, 2).dtype or F32)


@register("DynamicQuantizeMatMul", domain=MS)
def dynamic_quantize_matmul(node: Node) -> Outputs:
    return _matmul_as(node, arg(node, 0).dtype or F32)


@register("QGemm", domain=MS, cost=formulas.GEMM)
def qgemm(node: Node) -> Outputs:
    """Gemm of A (0) and B (3); quantized like y_zero_point when y_scale is given, else float."""
    a, b = arg(node, 0), arg(node, 3)
    dtype: int
    if not present(node, 7):
        dtype = F32
    else:
        dtype = arg(node, 8).dtype if present(node, 8) else TensorProto.UINT8
    return [Tensor(dtype, gemm_shape(node, *operand_shapes(dtype, a, b)))]


@register("MatMulNBits", domain=MS, cost=formulas.MATMUL)
@register("MatMulBnb4", domain=MS)
def matmul_nbits(node: Node) -> Outputs:
    """A (..., K) times the packed (K, N) weight: (..., N), N from the attribute."""
    return [_last_replaced(node, arg(node, 0), required_int(node, "N"))]


_PACKED = {TensorProto.UINT8}


@register("GatherBlockQuantized", domain=MS, cost=formulas.ELEMENTWISE)
def gather_block_quantized(node: Node) -> Outputs:
    """Gather along gather_axis, dequantized to the scales' type. A uint8 ``data`` with
    bits < 8 packs 8/bits values per byte along the last axis."""
    data, idx, scales = arg(node, 0), arg(node, 1), arg(node, 2)
    dtype = scales.dtype
    shape, indices = (list(shape_of(t, dtype, why="data or indices rank unknown")) for t in (data, idx))
    g = normalize_axis(node.attr_int("gather_axis", 0), len(shape))
    bits = node.attr_int("bits", 4)
    if data.dtype in _PACKED and bits < 8:
        shape[-1] = dims.mul(shape[-1], 8 // bits)
    return [Tensor(dtype, tuple(shape[:g]) + tuple(indices) + tuple(shape[g + 1:]))]



# --------------------------------------------------------------------------- fused and other weight-only MatMuls


def _last_replaced(node, a, n):
    """A (..., K) times a weight with ``n`` columns: (..., n). (Every output of these ops is of A's type.)"""
    shape = shape_of(a, *[a.dtype] * node.num_outputs)
    if not shape:
        raise ShapeContradiction(f"{node.op_type} of a scalar")
    return Tensor(a.dtype, tuple(shape[:-1]) + (n,))


@register("MatMulNBitsQLoRA MatMulPacked", domain=MS)
def matmul_n_attr(node: Node) -> Outputs:
    """(..., N) with N the attribute."""
    return [_last_replaced(node, arg(node, 0), required_int(node, "N"))]


@register("MatMulNBitsMlp", domain=MS)
def matmul_nbits_mlp(node: Node) -> Outputs:
    """Y (..., N) = activation(gate) * up; input_skip_bias_sum has A's shape."""
    a = arg(node, 0)
    return [_last_replaced(node, a, required_int(node, "N")), Tensor(a.dtype, a.shape)][:max(node.num_outputs, 1)]


@register("MatMulNBitsQkv", domain=MS)
def matmul_nbits_qkv(node: Node) -> Outputs:
    """Q (..., Nq), K and V (..., Nkv); input_skip_bias_sum has A's shape."""
    a = arg(node, 0)
    nq, nkv = required_int(node, "Nq"), required_int(node, "Nkv")
    q, kv = _last_replaced(node, a, nq), _last_replaced(node, a, nkv)
    return [q, kv, kv, Tensor(a.dtype, a.shape)][:max(node.num_outputs, 1)]


@register("MatMulBlockQuantizedFp4Weight MatMulBlockQuantizedFp8Weight", domain=MS)
def matmul_block_quantized_weight(node: Node) -> Outputs:
    """B is stored (N, ...): A (..., K) -> (..., N)."""
    a, b = arg(node, 0), arg(node, 1)
    if b.shape:
        n = b.shape[0]
    else:
        n = node.fresh("the weight's shape is unknown", 0, None if a.shape is None else len(a.shape) - 1)
    return [_last_replaced(node, a, n)]


@register("MatMulFpQ4", domain=MS)
def matmul_fp_q4(node: Node) -> Outputs:
    """B_shape (a tensor input) holds (K, N) of the packed weight: A (..., K) -> (..., N)."""
    shape = node.value(2)
    a = arg(node, 0)
    if shape is None or len(shape) != 2:
        n = node.fresh("MatMulFpQ4's B_shape is a tensor input whose value is unknown", 0,
                       None if a.shape is None else len(a.shape) - 1)
    else:
        n = shape[1]
    return [_last_replaced(node, a, n)]


@register("GemmFloat8 SparseToDenseMatMul", domain=MS)
def gemm_float8(node: Node) -> Outputs:
    """(M, N) after transA/transB; GemmFloat8 in the element type ``dtype`` names (0: A's)."""
    a, b = arg(node, 0), arg(node, 1)
    dtype = node.attr_int("dtype", 0) or a.dtype
    if a.shape is not None and len(a.shape) != 2 or b.shape is not None and len(b.shape) != 2:
        return [node.unknown_rank("an input's rank is not 2", 0, dtype)]
    return [Tensor(dtype, gemm_shape(node, *operand_shapes(dtype, a, b)))]


@register("GatherPacked", domain=MS)
def gather_packed(node: Node) -> Outputs:
    """Rows of a packed (rows, ...) table dequantized to K values: indices.shape + (K,)."""
    idx = arg(node, 1)
    dtype = node.attr_int("output_dtype", TensorProto.BFLOAT16)
    return [Tensor(dtype, tuple(shape_of(idx, dtype)) + (required_int(node, "K"),))]


# --------------------------------------------------------------------------- cuBLASLt-ordered int8 (CUDA)


@register("QuantizeWithOrder", domain=MS)
def quantize_with_order(node: Node) -> Outputs:
    return [Tensor(TensorProto.INT8, arg(node, 0).shape)]


@register("DequantizeWithOrder", domain=MS)
def dequantize_with_order(node: Node) -> Outputs:
    return [Tensor(node.attr_int("to", F32), arg(node, 0).shape)]


@register("QOrderedMatMul", domain=MS)
def qordered_matmul(node: Node) -> Outputs:
    """MatMul of A (0) and B (2) as given, in int8."""
    int8 = TensorProto.INT8
    return [Tensor(int8, matmul_shape(node, *operand_shapes(int8, arg(node, 0), arg(node, 2))))]


@register("QOrderedAttention", domain=MS)
def qordered_attention(node: Node) -> Outputs:
    """input (B, S, D) -> (B, S, v_hidden), v_hidden the V weight's columns."""
    x, wv = arg(node, 0), arg(node, 7)
    if x.shape is None or len(x.shape) != 3:
        return [node.unknown_rank("input rank unknown, or not 3", 0, TensorProto.INT8)]
    sizes = node.attr_ints("qkv_hidden_sizes")
    v: Dim
    if sizes:
        v = sizes[2]
    elif wv.shape is not None and len(wv.shape) == 2:
        v = wv.shape[1]
    else:
        v = node.fresh("the V weight's shape is unknown", 0, 2)
    return [Tensor(TensorProto.INT8, (x.shape[0], x.shape[1], v))]


@register("QOrderedLongformerAttention", domain=MS)
def qordered_longformer_attention(node: Node) -> Outputs:
    return [Tensor(TensorProto.INT8, arg(node, 0).shape)]


@register("QuantizeBFP", domain=MS)
def quantize_bfp(node: Node) -> Outputs:
    """y: 1-D packed BFP bytes (their count depends on the BFP type's block layout, not
    modelled: fresh); shape and strides: one int64 per axis of x."""
    x = arg(node, 0)
    per_axis = None if x.shape is None else (len(x.shape),)
    y = node.fresh("the packed size depends on the BFP type's block layout", 0, 0)
    return [Tensor(TensorProto.UINT8, (y,)), Tensor(I64, per_axis),
            Tensor(I64, per_axis)][:max(node.num_outputs, 1)]
