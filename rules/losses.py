"""Loss ops: a scalar when reduced, the target's shape with reduction "none"."""

from __future__ import annotations

from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register, unlearned

from .common import arg


def _loss(node, scores, target):
    if node.attr_str("reduction", "mean") != "none":
        return Tensor(scores.dtype, ())
    return Tensor(scores.dtype, target.shape)  # [N] or [N, d1, ..., dk]


@register("NegativeLogLikelihoodLoss", conditions=[unlearned("target is input without its class axis 1")])
def nll_loss(node: Node) -> Outputs:
    return [_loss(node, arg(node, 0), arg(node, 1))]


@register("SoftmaxCrossEntropyLoss", conditions=[unlearned("labels is scores without its class axis 1")])
def softmax_cross_entropy_loss(node: Node) -> Outputs:
    scores = arg(node, 0)
    return [_loss(node, scores, arg(node, 1)), Tensor(scores.dtype, scores.shape)]
