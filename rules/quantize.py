"""Rules for linear quantization: QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear, QLinearMatMul and QLinearConv. Shapes never change (QLinearConv's
are Conv's); what these rules work out is the element type (zero point, ``output_dtype``,
scale) and the shapes onnxruntime accepts of the scales and zero points."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.errors import InvalidModel, ShapeContradiction
from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Condition, Outputs, register
from onnxsym.semantics.shapes import normalize_axis

from .common import F32, arg
from .nn import CONV_CONDITIONS, conv, matmul_shape, operand_shapes

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


# What onnxruntime checks of QLinearMatMul's and QLinearConv's scales and zero points at every run:
# per-tensor ones hold one element (a scalar, or 1-D of 1: IsScalarOr1ElementVector); B's may be
# per column and W's per output channel.
QLINEAR_MATMUL = (((1, "a_scale"), (2, "a_zero_point"), (6, "y_scale"), (7, "y_zero_point")),
                  ((4, "b_scale"), (5, "b_zero_point")))
QLINEAR_CONV = (((1, "x_scale"), (2, "x_zero_point"), (6, "y_scale"), (7, "y_zero_point")),
                ((4, "w_scale"), (5, "w_zero_point")))


def _per_tensor(site, params):
    for i, what in params:
        s = site.shape(i)
        if s is not None and len(s) == 1:
            yield site.raw("==", s[0], 1, f"{site.node.op_type}: {what} has one element")


def _one_or(site, n, m, why):
    """``n`` is 1 or ``m``."""
    if dims.try_eq(n, 1) is not True and dims.try_eq(n, m) is not True:
        yield site.raw("or", n, m, why, alts=((n, m), (n, 1)))


def _qlinear_matmul_params(site):
    """b_scale and b_zero_point: a scalar, 1-D of 1, 1-D of B[1] for a 2-D B, or B's shape
    with 1 at dim -2 (per column of each matrix): onnxruntime's IsBQuantParamSupported."""
    yield from _per_tensor(site, QLINEAR_MATMUL[0])
    b = site.shape(3)
    for i, what in QLINEAR_MATMUL[1]:
        s = site.shape(i)
        if s is None or b is None or not s:
            continue
        why = f"QLinearMatMul: {what} is per tensor or per column of B"
        if len(s) == 1 and len(b) == 2:
            yield from _one_or(site, s[0], b[1], why)
        elif len(s) == 1:
            yield site.raw("==", s[0], 1, why)
        else:  # (another rank is refused by the rule)
            for a, (p, d) in enumerate(zip(s, b)):
                yield site.raw("==", p, 1 if a == len(b) - 2 else d, why)


def _qlinear_conv_params(site):
    """w_scale and w_zero_point: a scalar or 1-D of 1 or M (W[0]) elements; B 1-D of M."""
    yield from _per_tensor(site, QLINEAR_CONV[0])
    w = site.shape(3)
    if not w:
        return
    for i, what in QLINEAR_CONV[1]:
        s = site.shape(i)
        if s is not None and len(s) == 1:
            yield from _one_or(site, s[0], w[0], f"QLinearConv: {what} is per tensor or per output channel")
    bias = site.shape(8)
    if bias is not None and len(bias) == 1:
        yield site.raw("==", bias[0], w[0], "QLinearConv: B has M (W[0]) elements")


def _param_ranks(node: Node, params, b: int | None = None, bias: int | None = None) -> None:
    """The ranks onnxruntime refuses at every size: a per-tensor scale or zero point of rank > 1;
    a per-column one (``b``: B's input) of rank > 1 other than B's, a per-channel one of rank > 1;
    a bias (input ``bias``) other than 1-D."""
    per_tensor, per_axis = params
    for i, what in per_tensor + per_axis:
        s = arg(node, i).shape
        if s is None or len(s) <= 1:
            continue
        other = arg(node, b).shape if b is not None and (i, what) in per_axis else None
        if other is None or len(other) != len(s):
            raise ShapeContradiction(f"{node.op_type} {what} has rank {len(s)}; onnxruntime takes a scalar or 1-D"
                                     + (", or B's rank" if b is not None and (i, what) in per_axis else ""))
    if bias is not None and arg(node, bias).shape is not None and len(arg(node, bias).shape or ()) != 1:
        raise ShapeContradiction(f"{node.op_type} B has rank {len(arg(node, bias).shape or ())}, not 1")


@register("QLinearMatMul", conditions=[
    "a[-1] == b[-2] (the inner dims)",
    Condition("a_scale, a_zero_point, y_scale and y_zero_point hold one element; b_scale and b_zero_point "
              "one, or one per column of B (1-D of B[1] for a 2-D B, else B's shape with 1 at dim -2)",
              _qlinear_matmul_params, replayable=True)], cost=formulas.MATMUL)
def qlinear_matmul(node: Node) -> Outputs:
    """MatMul of inputs 0 and 3; the type is the output zero point's (input 7)."""
    _param_ranks(node, QLINEAR_MATMUL, b=3)
    dtype = arg(node, 7).dtype or arg(node, 0).dtype
    return [Tensor(dtype, matmul_shape(node, *operand_shapes(dtype, arg(node, 0), arg(node, 3))))]


@register("QLinearConv", conditions=CONV_CONDITIONS + [
    Condition("x_scale, x_zero_point, y_scale and y_zero_point hold one element; w_scale and w_zero_point "
              "one or M (W[0]); B has M elements", _qlinear_conv_params, replayable=True)], cost=formulas.CONV)
def qlinear_conv(node: Node) -> Outputs:
    """Conv of inputs 0 and 3; the type is the output zero point's (input 7)."""
    _param_ranks(node, QLINEAR_CONV, bias=8 if len(node.inputs) > 8 and node.inputs[8] is not None else None)
    return conv(node)
