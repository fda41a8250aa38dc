"""Rules for linear quantization: QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear and QLinearMatMul. Shapes never change; what these rules
work out is the element type (zero point, ``output_dtype``, scale)."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym.cost import formulas
from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register

from .common import F32, arg
from .nn import matmul_shape, operand_shapes


@register("QuantizeLinear", conditions=(), cost=formulas.ELEMENTWISE)
def quantize_linear(node: Node) -> Outputs:
    """y has x's shape; its type is ``output_dtype`` (opset 21+), else the zero
    point's, else uint8."""
    x = arg(node, 0)
    dtype = node.attr_int("output_dtype", 0) if node.opset >= 21 else 0
    if not dtype:
        dtype = arg(node, 2).dtype or TensorProto.UINT8
    return [Tensor(dtype, x.shape)]


@register("DequantizeLinear", conditions=(), cost=formulas.ELEMENTWISE)
def dequantize_linear_v1(node: Node) -> Outputs:
    """y has x's shape and is float."""
    return [Tensor(F32, arg(node, 0).shape)]


@register("DequantizeLinear", since=19, conditions=(), cost=formulas.ELEMENTWISE)
def dequantize_linear(node: Node) -> Outputs:
    """y has x's shape; its type is ``output_dtype`` (an attribute from opset 23 on), else the scale's."""
    x = arg(node, 0)
    dtype = node.attr_int("output_dtype", 0) if node.opset >= 23 else 0
    return [Tensor(dtype or arg(node, 1).dtype or F32, x.shape)]


@register("DynamicQuantizeLinear", conditions=(), cost=formulas.ELEMENTWISE)
def dynamic_quantize_linear(node: Node) -> Outputs:
    x = arg(node, 0)
    return [Tensor(TensorProto.UINT8, x.shape), Tensor(F32, ()), Tensor(TensorProto.UINT8, ())]


@register("QLinearMatMul", conditions=["a[-1] == b[-2] (the inner dims)"], cost=formulas.MATMUL)
def qlinear_matmul(node: Node) -> Outputs:
    """MatMul of inputs 0 and 3; the type is the output zero point's (input 7)."""
    dtype = arg(node, 7).dtype or arg(node, 0).dtype
    return [Tensor(dtype, matmul_shape(node, *operand_shapes(dtype, arg(node, 0), arg(node, 3))))]
