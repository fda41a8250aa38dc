"""Rules for linear quantization: QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear and QLinearMatMul. Shapes never change; what these rules
work out is the element type (zero point, ``output_dtype``, scale)."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym.registry import register
from onnxsym.values import Tensor

from .nn import matmul_shape


def _x(node, i=0):
    t = node.tensor(i)
    return t if t is not None else Tensor(0, None)


@register("QuantizeLinear")
def quantize_linear(node):
    """y has x's shape; its type is ``output_dtype`` (opset 21+), else the zero
    point's, else uint8."""
    x = _x(node)
    dtype = node.attr("output_dtype", 0) if node.opset >= 21 else 0
    if not dtype:
        zp = node.tensor(2)
        dtype = zp.dtype if zp is not None and zp.dtype else TensorProto.UINT8
    return [Tensor(dtype, x.shape)]


@register("DequantizeLinear")
def dequantize_linear(node):
    """y has x's shape; its type is ``output_dtype`` (opset 23+), else the scale's
    (opset 19+; float before that)."""
    x = _x(node)
    dtype = node.attr("output_dtype", 0) if node.opset >= 23 else 0
    if not dtype:
        dtype = (_x(node, 1).dtype or TensorProto.FLOAT) if node.opset >= 19 else TensorProto.FLOAT
    return [Tensor(dtype, x.shape)]


@register("DynamicQuantizeLinear")
def dynamic_quantize_linear(node):
    x = _x(node)
    return [Tensor(TensorProto.UINT8, x.shape), Tensor(TensorProto.FLOAT, ()), Tensor(TensorProto.UINT8, ())]


@register("QLinearMatMul")
def qlinear_matmul(node):
    """MatMul of inputs 0 and 3; the type is the output zero point's (input 7)."""
    shape = matmul_shape(node, _x(node, 0).shape, _x(node, 3).shape)
    return [Tensor(_x(node, 7).dtype or _x(node, 0).dtype, shape)]
