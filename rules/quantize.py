"""Rules for linear quantization: QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear and QLinearMatMul. Shapes never change; what these rules
work out is the element type (zero point, ``output_dtype``, scale)."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.errors import InvalidModel
from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register
from onnxsym.semantics.shapes import normalize_axis

from .common import F32, arg
from .nn import matmul_shape, operand_shapes

SCALE = ["y_scale of one element (per tensor); 1-D of X[axis] elements (per axis); with block_size, "
         "X's shape with ceil(X[axis] / block_size) on axis"]


def _scale_fits(node: Node, x: Tensor, scale: Tensor) -> None:
    """What onnxruntime checks of the scale against x at every run (PrepareForQDQ)."""
    if x.shape is None or scale.shape is None or node.opset < 13:
        return
    block = node.attr_int("block_size", 0) if node.opset >= 21 else 0
    if block <= 0 and len(scale.shape) == 1 and not isinstance(scale.shape[0], int):
        return  # (a scale of a length only the run knows: per tensor where it is 1, else per axis)
    per_tensor = block <= 0 and (not scale.shape or (len(scale.shape) == 1 and scale.shape[0] == 1))
    if per_tensor or not x.shape:
        return  # (the axis is read only per axis or per block: a bias of rank 1 keeps the default 1)
    axis = normalize_axis(node.attr_int("axis", 1), len(x.shape))
    what = f"{node.op_type}: the scale's shape {list(scale.shape)} fits x's {list(x.shape)}"
    if block > 0:
        if len(scale.shape) != len(x.shape):
            raise InvalidModel(f"scale has rank {len(scale.shape)}; blocked quantization needs x's rank {len(x.shape)}")
        for i, (s, d) in enumerate(zip(scale.shape, x.shape)):
            node.require_equal(s, dims.ceil_div(d, block) if i == axis else d, what)
    elif len(scale.shape) > 1:
        raise InvalidModel(f"scale has rank {len(scale.shape)}; without block_size it is a scalar or 1-D")
    else:
        node.require_equal(scale.shape[0], x.shape[axis], what)


@register("QuantizeLinear", conditions=SCALE, cost=formulas.ELEMENTWISE)
def quantize_linear(node: Node) -> Outputs:
    """y has x's shape; its type is ``output_dtype`` (opset 21+), else the zero
    point's, else uint8."""
    x = arg(node, 0)
    _scale_fits(node, x, arg(node, 1))
    dtype = node.attr_int("output_dtype", 0) if node.opset >= 21 else 0
    if not dtype:
        dtype = arg(node, 2).dtype or TensorProto.UINT8
    return [Tensor(dtype, x.shape)]


@register("DequantizeLinear", conditions=SCALE, cost=formulas.ELEMENTWISE)
def dequantize_linear_v1(node: Node) -> Outputs:
    """y has x's shape and is float."""
    _scale_fits(node, arg(node, 0), arg(node, 1))
    return [Tensor(F32, arg(node, 0).shape)]


@register("DequantizeLinear", since=19, conditions=SCALE, cost=formulas.ELEMENTWISE)
def dequantize_linear(node: Node) -> Outputs:
    """y has x's shape; its type is ``output_dtype`` (an attribute from opset 23 on), else the scale's."""
    x = arg(node, 0)
    _scale_fits(node, x, arg(node, 1))
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
