"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against onnxruntime."""


import numpy as np
import pytest
from helpers import model
from onnx import TensorProto as T
from onnx import helper
from oracle import check

pytest.importorskip("onnxruntime")
node = helper.make_node


@pytest.mark.parametrize("opset", [12, 13, 22])
@pytest.mark.parametrize("spatial", [False, True])
def test_losses_reduced_and_not(opset, spatial):
    nodes = []
    for red in ("mean", "sum", "none"):
        nodes.append(node("NegativeLogLikelihoodLoss", ["x", "t"], [f"nll_{red}"], reduction=red))
        if opset < 22:
            nodes.append(node("SoftmaxCrossEntropyLoss", ["x", "t"], [f"sce_{red}", f"lp_{red}"], reduction=red))
    nodes.append(node("NegativeLogLikelihoodLoss", ["x", "t"], ["nll_default"]))
    sp = ["d"] if spatial else []
    outs = [o for n in nodes for o in n.output]
    m = model(nodes, [("x", T.FLOAT, ["n", 3] + sp), ("t", T.INT64, ["n"] + sp)], outs, opset=opset, ir=10)
    rng = np.random.default_rng(4)
    cases = []
    for n, d in ((2, 4), (5, 1)):
        tail = [d] if spatial else []
        cases.append(({"n": n, "d": d}, {"x": rng.random([n, 3] + tail).astype(np.float32),
                                          "t": rng.integers(0, 3, [n] + tail)}))
    res = check(m, cases)
    assert res.shape("nll_mean") == () and not res.unresolved()
