"""Rules of rules/recurrent.py (RNN, GRU, LSTM), checked against onnxruntime."""


import numpy as np
import pytest
from helpers import F, init, model
from onnx import helper
from oracle import check, no_fresh, random_cases, run_ort, run_reference

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
SIZES = [{"s": 3, "b": 2}, {"s": 5, "b": 1}]


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("opset,layout", [(7, 0), (14, 0), (14, 1), (22, 1)])
def test_recurrent(op, direction, opset, layout):
    dirs, hidden, inp = (2 if direction == "bidirectional" else 1), 5, 3
    g = GATES[op]
    x_shape = ["b", "s", inp] if layout else ["s", "b", inp]
    inputs = [("x", F, x_shape)]
    inits = [init("w", np.ones((dirs, g * hidden, inp), np.float32) * 0.1),
             init("r", np.ones((dirs, g * hidden, hidden), np.float32) * 0.1)]
    outs = ["y", "yh", "yc"][:3 if op == "LSTM" else 2]
    attrs = dict(hidden_size=hidden, direction=direction)
    if opset >= 14:
        attrs["layout"] = layout
    nodes = [helper.make_node(op, ["x", "w", "r"], outs, **attrs)]
    # onnxruntime's CPU kernels reject layout=1 ("Batchwise recurrent operations"
    # unsupported): those run in onnx's reference evaluator
    res = check(model(nodes, inputs, outs, inits, opset=opset), random_cases(inputs, SIZES),
                run=run_reference if bool(layout) else run_ort)
    no_fresh(res)
    s, b = dims.sym("s"), dims.sym("b")
    assert res.shape("y") == ((b, s, dirs, hidden) if layout else (s, dirs, b, hidden))
    assert res.shape("yh") == ((b, dirs, hidden) if layout else (dirs, b, hidden))


def test_state_only_output_and_hidden_size_from_r():
    inputs = [("x", F, ["s", "b", 3])]
    inits = [init("w", np.ones((1, 12, 3), np.float32)), init("r", np.ones((1, 12, 3), np.float32))]
    nodes = [helper.make_node("LSTM", ["x", "w", "r"], ["", "yh"], hidden_size=3)]
    no_fresh(check(model(nodes, inputs, ["yh"], inits, opset=14), random_cases(inputs, SIZES)))
    # without hidden_size (onnxruntime requires it; the spec does not), R (dirs, 4*hidden, hidden) gives it
    nodes = [helper.make_node("LSTM", ["x", "w", "r"], ["y", "yh"])]
    res = onnxsym.infer(model(nodes, inputs, ["y", "yh"], inits, opset=14))
    no_fresh(res)
    assert res.shape("y") == (dims.sym("s"), 1, dims.sym("b"), 3)
