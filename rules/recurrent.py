"""Rules for the recurrent ops RNN, GRU and LSTM."""

from __future__ import annotations

from onnxsym.cost import formulas
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register, unlearned
from onnxsym.semantics.shapes import Shape

from .common import arg


@register("RNN GRU LSTM", conditions=[unlearned("W, R and B agree with X[2] and hidden_size")], cost=formulas.RECURRENT)
def recurrent(node: Node) -> Outputs:
    """Y is (seq, dirs, batch, hidden) and Y_h, Y_c are (dirs, batch, hidden);
    with ``layout=1`` (opset 14+) the batch axis comes first in X and in every output:
    (batch, seq, dirs, hidden) and (batch, dirs, hidden)."""
    x = arg(node, 0)
    dtype = x.dtype
    n_out = node.num_outputs
    if x.shape is None:
        return [node.unknown_rank("input rank unknown", k, dtype) for k in range(n_out)]
    if len(x.shape) != 3:  # onnxruntime: "Input X must have 3 dimensions only"
        raise ShapeContradiction(f"{node.op_type} input X must have rank 3, not {len(x.shape)}")
    layout = node.attr("layout", 0) if node.opset >= 14 else 0
    seq, batch = (x.shape[1], x.shape[0]) if layout else (x.shape[0], x.shape[1])
    dirs = 2 if node.attr("direction", "forward") == "bidirectional" else 1
    hidden = node.attr("hidden_size")
    if hidden is None:
        r = arg(node, 2)  # R is (dirs, gates*hidden, hidden)
        hidden = r.shape[2] if r.shape is not None and len(r.shape) == 3 \
            else node.fresh(f"{node.op_type} hidden_size is not known", 0, 3)
    y: Shape
    state: Shape
    if layout:
        y, state = (batch, seq, dirs, hidden), (batch, dirs, hidden)
    else:
        y, state = (seq, dirs, batch, hidden), (dirs, batch, hidden)
    return [Tensor(dtype, y)] + [Tensor(dtype, state)] * (n_out - 1)
