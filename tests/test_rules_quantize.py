"""Rules of rules/quantize.py, checked against onnxruntime at several sizes."""


import numpy as np
import pytest
from helpers import F, init, model
from onnx import TensorProto, helper
from oracle import check, no_fresh, random_cases, run_ort, run_reference

from onnxsym import dims

pytest.importorskip("onnxruntime")

U8, I8 = TensorProto.UINT8, TensorProto.INT8
SIZES = [{"a": 2, "n": 4}, {"a": 3, "n": 8}]


def _ir(m, opset):
    m.ir_version = 10 if opset >= 21 else 8
    return m


@pytest.mark.parametrize("opset", [10, 13, 19, 21, 23, 24, 25, 28])
def test_quantize_dequantize_per_tensor_and_per_axis(opset):
    inputs = [("x", F, ["a", 4, "n"])]
    inits = [init("s", np.float32(0.1)), init("zp", np.int8(3)), init("sa", np.full(4, 0.2, np.float32)),
             init("za", np.zeros(4, np.uint8))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
             helper.make_node("QuantizeLinear", ["x", "s"], ["q8"]),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["dq"])]
    outs = ["q", "q8", "dq"]
    if opset >= 13:
        nodes += [helper.make_node("QuantizeLinear", ["x", "sa", "za"], ["qa"], axis=1),
                  helper.make_node("DequantizeLinear", ["qa", "sa", "za"], ["dqa"], axis=1)]
        outs += ["qa", "dqa"]
    # opset 28 has no onnxruntime kernel: onnx's reference evaluator runs it
    res = check(_ir(model(nodes, inputs, outs, inits, opset=opset), opset), random_cases(inputs, SIZES),
                run=run_reference if opset >= 28 else run_ort)
    no_fresh(res)
    assert res.values["q"].dtype == I8 and res.values["q8"].dtype == U8
    assert res.values["dq"].dtype == F
    assert res.shape("dq") == (dims.sym("a"), 4, dims.sym("n"))


@pytest.mark.parametrize("opset", [21, 23, 25, 28])
def test_blocked_quantization_and_output_dtype(opset):
    # blocked along axis 2 with block_size 2: the scale has ceil(6/2) = 3 there
    inputs = [("x", F, ["a", 4, 6]), ("sb", F, ["a", 4, 3]), ("zb", I8, ["a", 4, 3])]
    inits = []
    nodes = [helper.make_node("QuantizeLinear", ["x", "sb", "zb"], ["q"], axis=2, block_size=2),
             helper.make_node("QuantizeLinear", ["x", "sb"], ["qo"], axis=2, block_size=2, output_dtype=I8),
             helper.make_node("DequantizeLinear", ["q", "sb", "zb"], ["dq"], axis=2, block_size=2)]
    outs = ["q", "qo", "dq"]
    if opset >= 23:
        nodes.append(helper.make_node("DequantizeLinear", ["q", "sb", "zb"], ["dqo"], axis=2, block_size=2,
                                      output_dtype=F))
        outs.append("dqo")
    res = check(_ir(model(nodes, inputs, outs, inits, opset=opset), opset), random_cases(inputs, [{"a": 1}, {"a": 3}]),
                run=run_reference if opset >= 28 else run_ort)
    no_fresh(res)
    assert res.values["qo"].dtype == I8 and res.values["q"].dtype == I8


def test_dynamic_quantize_linear():
    inputs = [("x", F, ["a", "n"])]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"])]
    res = check(model(nodes, inputs, ["y", "ys", "yz"], opset=11), random_cases(inputs, SIZES))
    no_fresh(res)
    assert [res.values[n].dtype for n in ("y", "ys", "yz")] == [U8, F, U8]
    assert res.shape("ys") == ()


@pytest.mark.parametrize("opset", [10, 21])
def test_qlinear_matmul(opset):
    inputs = [("a8", U8, ["a", "n", 4])]
    inits = [init("s", np.float32(0.1)), init("z", np.uint8(0)), init("b8", np.ones((4, 5), np.uint8)),
             init("zo", np.uint8(0))]
    nodes = [helper.make_node("QLinearMatMul", ["a8", "s", "z", "b8", "s", "z", "s", "zo"], ["y"])]
    res = check(_ir(model(nodes, inputs, ["y"], inits, opset=opset), opset), random_cases(inputs, SIZES))
    no_fresh(res)
    assert res.shape("y") == (dims.sym("a"), dims.sym("n"), 5)
    assert res.values["y"].dtype == U8
