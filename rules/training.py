"""ai.onnx.preview.training: optimizer steps and Gradient. Every output has the
shape of the input it updates (or differentiates against)."""

from __future__ import annotations

from onnxsym.inference.node import Node
from onnxsym.registry import Outputs, register

from .common import arg, same_shape

TRAINING = "ai.onnx.preview.training"


@register("Adagrad Momentum Adam", domain=TRAINING)
def optimizer(node: Node) -> Outputs:
    """Inputs R, T, then k groups of n tensors (X, G, state...); outputs the
    updated X and states: output i updates input 2 + i, skipping the G group."""
    n_in = len(node.inputs) - 2
    groups = {"Adagrad": 3, "Momentum": 3, "Adam": 4}[node.op_type]
    n = n_in // groups
    outs = []
    for i in range(node.num_outputs):
        group, j = divmod(i, n)
        src = 2 + (group if group == 0 else group + 1) * n + j
        outs.append(same_shape(arg(node, src)))
    return outs


@register("Gradient", domain=TRAINING)
def gradient(node: Node) -> Outputs:
    # output i is dy/d(xs[i]), and xs[i] is input i
    return [same_shape(arg(node, i)) for i in range(node.num_outputs)]
