"""Rules for the recurrent ops RNN, GRU and LSTM."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.dims import Dim
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register, unlearned
from onnxsym.semantics.shapes import Shape

from .common import arg, present, spec_shape


@register("RNN GRU LSTM", conditions=[unlearned("W, R and B agree with X[2] and hidden_size")], cost=formulas.RECURRENT)
def recurrent(node: Node) -> Outputs:
    """Y is (seq, dirs, batch, hidden) and Y_h, Y_c are (dirs, batch, hidden);
    with ``layout=1`` (opset 14+) the batch axis comes first in X and in every output:
    (batch, seq, dirs, hidden) and (batch, dirs, hidden)."""
    x = arg(node, 0)
    dtype = x.dtype
    n_out = node.num_outputs
    shape = shape_of(x, *[dtype] * n_out)
    if len(shape) != 3:  # onnxruntime: "Input X must have 3 dimensions only"
        raise ShapeContradiction(f"{node.op_type} input X must have rank 3, not {len(shape)}")
    layout = node.attr_int("layout", 0) if node.opset >= 14 else 0
    seq, batch = (shape[1], shape[0]) if layout else (shape[0], shape[1])
    dirs = 2 if node.attr_str("direction", "forward") == "bidirectional" else 1
    hidden: Dim | None = node.attr_int("hidden_size")
    if hidden is None:
        r = arg(node, 2)  # R is (dirs, gates*hidden, hidden)
        hidden = r.shape[2] if r.shape is not None and len(r.shape) == 3 \
            else node.fresh(f"{node.op_type} hidden_size is not known", 0, 3)
    if node.domain in ("", "ai.onnx"):  # (the contrib LSTMs lay their weights out otherwise)
        _weights_and_states(node, shape[2], batch, dirs, hidden, layout)
    y: Shape
    state: Shape
    if layout:
        y, state = (batch, seq, dirs, hidden), (batch, dirs, hidden)
    else:
        y, state = (seq, dirs, batch, hidden), (dirs, batch, hidden)
    return [Tensor(dtype, y)] + [Tensor(dtype, state)] * (n_out - 1)


_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _weights_and_states(node: Node, input_size, batch, dirs: int, hidden, layout: int) -> None:
    """The shapes the spec gives the other inputs (onnxruntime checks each): W (dirs,
    gates*hidden, input_size), R (dirs, gates*hidden, hidden), B (dirs, 2*gates*hidden),
    sequence_lens (batch), initial_h and initial_c (dirs, batch, hidden; batch first with
    layout 1), LSTM's P (dirs, 3*hidden)."""
    g = _GATES[node.op_type]
    gh = dims.mul(g, hidden)
    state = ((batch, dirs, hidden), "[batch_size, num_directions, hidden_size]") if layout else \
        ((dirs, batch, hidden), "[num_directions, batch_size, hidden_size]")
    wants = {1: ("W", (dirs, gh, input_size), f"[num_directions, {g}*hidden_size, input_size]"),
             2: ("R", (dirs, gh, hidden), f"[num_directions, {g}*hidden_size, hidden_size]"),
             3: ("B", (dirs, dims.mul(2 * g, hidden)), f"[num_directions, {2 * g}*hidden_size]"),
             4: ("sequence_lens", (batch,), "[batch_size]"),
             5: ("initial_h", *state)}
    if node.op_type == "LSTM":
        wants[6] = ("initial_c", *state)
        wants[7] = ("P", (dirs, dims.mul(3, hidden)), "[num_directions, 3*hidden_size]")
    for i, (what, want, how) in wants.items():
        if present(node, i):
            spec_shape(node, what, arg(node, i), want, how)
