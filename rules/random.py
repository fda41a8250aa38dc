"""Random generators: the shape comes from an attribute or from the input,
the element type from the ``dtype`` attribute."""

from __future__ import annotations

from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register

from .common import F32, I32, arg, like_input


@register("RandomNormal RandomUniform", conditions=())
def random_of_shape(node: Node) -> Outputs:
    shape = node.attr_ints("shape")
    dtype = node.attr_int("dtype", F32)
    if shape is None:
        return [node.unknown_rank("no shape attribute", 0, dtype)]
    return [Tensor(dtype, tuple(int(d) for d in shape))]


register("RandomNormalLike RandomUniformLike Bernoulli", conditions=())(like_input)


@register("Multinomial", conditions=())
def multinomial(node: Node) -> Outputs:
    x = arg(node, 0)  # [batch_size, class_size]
    batch = x.shape[0] if x.shape is not None and len(x.shape) == 2 else node.fresh("Multinomial batch unknown", 0, 0)
    return [Tensor(node.attr_int("dtype", I32), (batch, node.attr_int("sample_size", 1)))]
