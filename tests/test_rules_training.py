"""ai.onnx.preview.training ops. onnxruntime's inference build has no kernels
for them: the optimizers are checked against onnx's reference evaluator, and
Gradient (which no runtime here implements) against its spec: output i has
the shape of xs[i], which is input i."""


import numpy as np
import pytest
from helpers import model
from onnx import TensorProto as T
from onnx import helper
from oracle import check, run_reference

import onnxsym
from onnxsym import dims

TRAINING = ("ai.onnx.preview.training", 1)


def opt(op, ins, outs, **kw):
    return helper.make_node(op, ins, outs, domain="ai.onnx.preview.training", **kw)


@pytest.mark.parametrize("op,states", [("Adagrad", ["h"]), ("Momentum", ["v"]), ("Adam", ["v", "h"])])
def test_optimizers_two_tensors(op, states):
    kw = dict(alpha=0.9, beta=0.1, mode="standard", norm_coefficient=0.0) if op == "Momentum" else {}
    groups = ["x", "g"] + states
    ins = ["r", "t"] + [f"{g}{i}" for g in groups for i in (1, 2)]
    outs = [f"{g}{i}_new" for g in ["x"] + states for i in (1, 2)]
    shapes = {1: ["n", 3], 2: ["m"]}
    inputs = [("r", T.FLOAT, []), ("t", T.INT64, [])]
    inputs += [(f"{g}{i}", T.FLOAT, shapes[i]) for g in groups for i in (1, 2)]
    m = model([opt(op, ins, outs, **kw)], inputs, outs, opsets=[TRAINING], ir=10)
    cases = []
    for n, k in ((1, 2), (4, 5)):
        feeds = {"r": np.array(0.1, np.float32), "t": np.array(1, np.int64)}
        for g in groups:
            feeds[f"{g}1"] = np.ones((n, 3), np.float32)
            feeds[f"{g}2"] = np.ones(k, np.float32)
        cases.append(({"n": n, "m": k}, feeds))
    res = check(m, cases, run=run_reference)
    assert res.shape(outs[-1]) == (dims.sym("m"),) and not res.unresolved()


def test_gradient_outputs_follow_xs():
    nodes = [helper.make_node("MatMul", ["w", "z"], ["y"]),
             opt("Gradient", ["w", "z"], ["dw", "dz"], xs=["w", "z"], y="y")]
    m = model(nodes, [("w", T.FLOAT, ["a", "b"]), ("z", T.FLOAT, ["b", 4])], ["y", "dw", "dz"], opsets=[TRAINING],
              ir=10)
    res = onnxsym.infer(m)
    assert res.shape("dw") == (dims.sym("a"), dims.sym("b")) and res.shape("dz") == (dims.sym("b"), 4)
    assert res.values["dw"].dtype == T.FLOAT
