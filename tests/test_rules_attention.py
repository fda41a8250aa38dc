"""Rules of rules/attention.py, checked against onnxruntime (or onnx's reference
evaluator where onnxruntime has no kernel, as each test says)."""


import numpy as np
import pytest
from helpers import I64, F, init, model
from onnx import TensorProto, helper
from oracle import check, no_fresh, random_cases, run_reference

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

SIZES = [{"b": 1, "l": 3, "s": 5, "p": 2}, {"b": 2, "l": 1, "s": 4, "p": 6}]


def _m(nodes, inputs, outs, inits=(), opset=23):
    m = model(nodes, inputs, outs, inits, opset=opset)
    m.ir_version = 10
    return m


@pytest.mark.parametrize("opset", [23, 24, 25])
def test_attention_4d_with_past(opset):
    # GQA: 4 query heads over 2 kv heads, head size 8, value head size 6
    inputs = [("q", F, ["b", 4, "l", 8]), ("k", F, ["b", 2, "s", 8]), ("v", F, ["b", 2, "s", 6]),
              ("pk", F, ["b", 2, "p", 8]), ("pv", F, ["b", 2, "p", 6])]
    nodes = [helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "k2", "v2", "qk"]),
             helper.make_node("Attention", ["q", "k", "v"], ["y0", "k0", "v0", "qk0"], is_causal=1)]
    outs = ["y", "k2", "v2", "qk", "y0", "k0", "v0", "qk0"]
    res = check(_m(nodes, inputs, outs, opset=opset), random_cases(inputs, SIZES))
    no_fresh(res)
    b, l, s, p = (dims.sym(n) for n in "blsp")
    assert res.shape("y") == (b, 4, l, 6)
    assert res.shape("k2") == (b, 2, p + s, 8) and res.shape("v2") == (b, 2, p + s, 6)
    assert res.shape("qk") == (b, 4, l, p + s) and res.shape("qk0") == (b, 4, l, s)


@pytest.mark.parametrize("opset", [23, 24])
def test_attention_3d(opset):
    inputs = [("q", F, ["b", "l", 32]), ("k", F, ["b", "s", 16]), ("v", F, ["b", "s", 12]),
              ("m", TensorProto.BOOL, ["l", "s"])]
    nodes = [helper.make_node("Attention", ["q", "k", "v", "m"], ["y", "k2", "v2"], q_num_heads=4,
                              kv_num_heads=2)]
    res = check(_m(nodes, inputs, ["y", "k2", "v2"], opset=opset), random_cases(inputs, SIZES))
    no_fresh(res)
    b, l, s = dims.sym("b"), dims.sym("l"), dims.sym("s")
    assert res.shape("y") == (b, l, 24)  # q_num_heads * (12 / kv_num_heads)
    assert res.shape("k2") == (b, 2, s, 8)


def test_attention_24_nonpad_kv_seqlen():
    inputs = [("q", F, ["b", 2, "l", 4]), ("k", F, ["b", 2, "s", 4]), ("v", F, ["b", 2, "s", 4])]
    inits = [init("np_len", np.array([1], np.int64))]
    nodes = [helper.make_node("Attention", ["q", "k", "v", "", "", "", "np_len"], ["y"])]
    no_fresh(check(_m(nodes, inputs, ["y"], inits, opset=24),
                   random_cases(inputs, [{"b": 1, "l": 2, "s": 3}, {"b": 1, "l": 4, "s": 5}])))


def test_rms_normalization_rotary_swish():
    inputs = [("x", F, ["b", "s", 8]), ("pos", I64, ["b", "s"])]
    inits = [init("sc", np.ones(8, np.float32)), init("cos", np.ones((16, 4), np.float32)),
             init("sin", np.zeros((16, 4), np.float32))]
    nodes = [helper.make_node("RMSNormalization", ["x", "sc"], ["n"], axis=-1),
             helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["r"], num_heads=1),
             helper.make_node("Swish", ["x"], ["sw"], alpha=1.5)]
    # opset 24 for Swish; RMSNormalization and RotaryEmbedding (23) stay in force
    res = check(_m(nodes, inputs, ["n", "r", "sw"], inits, opset=24),
                random_cases(inputs, [{"b": 1, "s": 3}, {"b": 2, "s": 5}]))
    no_fresh(res)


def test_swiglu():
    inputs = [("a", F, ["b", "s", 8]), ("g", F, ["b", "s", 8])]
    nodes = [helper.make_node("SwiGLU", ["a", "g"], ["y"])]
    # opset 28: no onnxruntime kernel; onnx's reference evaluator runs it
    res = check(_m(nodes, inputs, ["y"], opset=28), random_cases(inputs, [{"b": 1, "s": 3}, {"b": 2, "s": 5}]),
                run=run_reference)
    no_fresh(res)
    inputs = [("a", F, ["b", "s", 8]), ("g", F, ["b", "t", 8])]
    res = onnxsym.infer(_m(nodes, inputs, ["y"], opset=28))
    assert len(res.assumptions) == 1


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
def test_linear_attention(rule):
    # 4 query heads over 2 kv heads, dk = 3, dv = 5
    inputs = [("q", F, ["b", "t", 12]), ("k", F, ["b", "t", 6]), ("v", F, ["b", "t", 10]),
              ("st", F, ["b", 2, 3, 5]), ("g", F, ["b", "t", 2]), ("be", F, ["b", "t", 2])]
    ins = ["q", "k", "v", "st", "g" if "gated" in rule else "", "be" if "delta" in rule else ""]
    nodes = [helper.make_node("LinearAttention", ins, ["y", "st2"], q_num_heads=4, kv_num_heads=2,
                              update_rule=rule),
             helper.make_node("LinearAttention", ins[:3] + [""] + ins[4:], ["y0", "st0"], q_num_heads=4,
                              kv_num_heads=2, update_rule=rule)]
    # opset 27: no onnxruntime kernel; onnx's reference evaluator runs it
    res = check(_m(nodes, inputs, ["y", "st2", "y0", "st0"], opset=27),
                random_cases(inputs, [{"b": 1, "t": 1}, {"b": 2, "t": 4}]), run=run_reference)
    no_fresh(res)
    assert res.shape("y") == (dims.sym("b"), dims.sym("t"), 20)
    assert res.shape("st0") == (dims.sym("b"), 2, 3, 5)


def test_flex_attention():
    from onnx.reference import ReferenceEvaluator
    inputs = [("q", F, ["b", 4, "l", 8]), ("k", F, ["b", 2, "s", 8]), ("v", F, ["b", 2, "s", 6])]
    g = helper.make_graph([helper.make_node("FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview")],
                          "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_empty_tensor_value_info("y")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23), helper.make_opsetid("ai.onnx.preview", 1)])
    m.ir_version = 10
    res = onnxsym.infer(m)
    no_fresh(res)
    # no onnxruntime kernel: onnx's reference evaluator runs it
    ref = ReferenceEvaluator(m)
    rng = np.random.default_rng(0)
    for env in SIZES:
        feeds = {n: rng.standard_normal([env[d] if isinstance(d, str) else d for d in shape]).astype(np.float32)
                 for n, _, shape in inputs}
        (y,) = ref.run(None, feeds)
        assert tuple(dims.evaluate(d, env) for d in res.shape("y")) == y.shape
