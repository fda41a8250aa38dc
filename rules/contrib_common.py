"""Small helpers shared by the com.microsoft (onnxruntime contrib) rule modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxsym import dims
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.values import Tensor

if TYPE_CHECKING:  # a node seen with other inputs is, to a rule, a node
    from onnxsym.inference.node import Node as _NodeLike
else:
    _NodeLike = object

from .common import arg, same_shape

MS = "com.microsoft"


def exact_div(a, b, why):
    """``a / b`` where the op requires ``b`` to divide ``a``."""
    if isinstance(a, int) and isinstance(b, int) and b and a % b:
        raise ShapeContradiction(f"{why}: {a} is not a multiple of {b}")
    return dims.floordiv(a, b)


def same_as(node, i=0):
    """Input ``i``'s dtype and shape."""
    return same_shape(arg(node, i))


class WithInputs(_NodeLike):
    """``node`` seen with other input values, to reuse a standard rule on them."""

    def __init__(self, node, inputs, op_type=None):
        self._node = node
        self.inputs = list(inputs)
        self.op_type = op_type or node.op_type

    def input(self, i):
        return self.inputs[i] if i < len(self.inputs) else None

    def tensor(self, i):
        v = self.input(i)
        return v if isinstance(v, Tensor) else None

    def value(self, i):
        t = self.tensor(i)
        return None if t is None else t.value

    def __getattr__(self, name):
        return getattr(self._node, name)


def to_channels_first(shape):
    """(N, spatial..., C) as (N, C, spatial...)."""
    return (shape[0], shape[-1]) + tuple(shape[1:-1])


def to_channels_last(shape):
    """(N, C, spatial...) as (N, spatial..., C)."""
    return (shape[0],) + tuple(shape[2:]) + (shape[1],)


def channels_last_rule(node, rule, op_type, inputs, outputs=1):
    """Apply the ONNX ``rule`` of ``op_type`` to channels-last data: ``inputs`` are given
    channels-first; the outputs are turned back to channels-last."""
    outs = rule(WithInputs(node, inputs, op_type))[:outputs]
    return [Tensor(t.dtype, None if t.shape is None else to_channels_last(t.shape)) for t in outs]
