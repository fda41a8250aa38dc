"""Rules of rules/elementwise.py, rules/nn.py and rules/reduce.py, checked against onnxruntime."""


import numpy as np
import pytest
from helpers import I64, F, init, model
from onnx import TensorProto, helper
from oracle import check, no_fresh, random_cases

import onnxsym
from onnxsym import dims
from onnxsym.facts.fact import Origin

ort = pytest.importorskip("onnxruntime")


A2 = [{"a": 2, "b": 3, "n": 4}, {"a": 5, "b": 1, "n": 7}]


def test_broadcast_different_symbols():
    inputs = [("x", F, ["a", 1, "n"]), ("y", F, ["b", 1]), ("z", F, [1, "n"])]
    nodes = [helper.make_node("Add", ["x", "y"], ["s"]),
             helper.make_node("Mul", ["x", "z"], ["p"]),
             helper.make_node("Less", ["x", "z"], ["l"]),
             helper.make_node("Relu", ["s"], ["r"]),
             helper.make_node("IsNaN", ["r"], ["nan"])]
    # valid assignments need b == 1 or b == n (b broadcasts against n)
    res = check(model(nodes, inputs, ["s", "p", "l", "r", "nan"]),
                random_cases(inputs, [{"a": 2, "b": 1, "n": 4}, {"a": 3, "b": 5, "n": 5}]))
    assert res.shape("p") == (dims.sym("a"), 1, dims.sym("n"))
    assert res.values["l"].dtype == TensorProto.BOOL


def test_integer_value_propagation():
    inputs = [("x", I64, [3])]
    inits = [init("c", np.array([4, 6, 8], np.int64)), init("d", np.array([2], np.int64)),
             init("e", np.array([-7, 7, 3], np.int64))]
    nodes = [helper.make_node("Div", ["c", "d"], ["q"]), helper.make_node("Mod", ["c", "e"], ["m"]),
             helper.make_node("Div", ["e", "d"], ["qn"]), helper.make_node("Equal", ["c", "d"], ["eq"])]
    m = model(nodes, inputs, ["q", "m", "qn", "eq"], inits)
    res = onnxsym.infer(m)
    assert res.values["q"].value == (2, 3, 4)
    assert res.values["m"].value == (4 % -7, 6 % 7, 8 % 3)
    assert res.values["qn"].value == (-3, 3, 1)  # truncation toward zero
    assert res.values["eq"].value == (False, False, False)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    q, mo, qn, eq = sess.run(["q", "m", "qn", "eq"], {"x": np.zeros(3, np.int64)})
    assert tuple(q) == res.values["q"].value and tuple(mo) == res.values["m"].value
    assert tuple(qn) == res.values["qn"].value and tuple(eq) == res.values["eq"].value


def test_matmul_batch_broadcast_and_gemm():
    inputs = [("x", F, ["a", 1, "n", 4]), ("y", F, ["b", 4, 5]), ("v", F, [4]), ("g", F, [4, "n"])]
    nodes = [helper.make_node("MatMul", ["x", "y"], ["o"]),
             helper.make_node("MatMul", ["x", "v"], ["o1"]),
             helper.make_node("MatMul", ["v", "y"], ["o2"]),
             helper.make_node("Gemm", ["g", "y2"], ["gm"], transA=1, transB=1)]
    inits = [init("y2", np.ones((6, 4), np.float32))]
    res = check(model(nodes, inputs, ["o", "o1", "o2", "gm"], inits), random_cases(inputs, A2))
    no_fresh(res)


@pytest.mark.parametrize("attrs", [
    dict(strides=[2, 1], pads=[1, 0, 2, 1], dilations=[1, 2]),
    dict(strides=[2, 3], auto_pad="SAME_UPPER"),
    dict(strides=[3, 2], auto_pad="SAME_LOWER"),
    dict(strides=[2, 2], auto_pad="VALID", dilations=[2, 1]),
])
def test_conv(attrs):
    inputs = [("x", F, ["a", 3, "h", "w"])]
    inits = [init("w", np.ones((8, 3, 3, 2), np.float32))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], **attrs)]
    res = check(model(nodes, inputs, ["y"], inits),
                random_cases(inputs, [{"a": 1, "h": 9, "w": 8}, {"a": 2, "h": 14, "w": 11}]))
    no_fresh(res)


def test_conv_transpose():
    inputs = [("x", F, ["a", 2, "h", "w"])]
    inits = [init("w", np.ones((2, 4, 3, 3), np.float32))]
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 3], pads=[1, 0, 1, 1],
                              output_padding=[1, 0])]
    no_fresh(check(model(nodes, inputs, ["y"], inits),
                   random_cases(inputs, [{"a": 1, "h": 5, "w": 4}, {"a": 2, "h": 6, "w": 7}])))


@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[2, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
    dict(kernel_shape=[3, 2], strides=[3, 2], pads=[1, 0, 1, 0], ceil_mode=0),
])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool(op, attrs):
    inputs = [("x", F, ["a", 2, "h", "w"])]
    nodes = [helper.make_node(op, ["x"], ["y"], **attrs), helper.make_node("GlobalAveragePool", ["x"], ["g"])]
    binds = [{"a": 1, "h": h, "w": w} for h, w in [(5, 6), (6, 7), (7, 8), (9, 4), (10, 5)]]
    # ceil_mode sizes go through float32 in onnxruntime: exact only for bounded dims
    no_fresh(check(model(nodes, inputs, ["y", "g"]), random_cases(inputs, binds), ranges=HW_RANGE))


def test_norms():
    inputs = [("x", F, ["a", 4, "n"])]
    inits = [init("s", np.ones(4, np.float32)), init("b", np.zeros(4, np.float32)),
             init("ls", np.ones(1, np.float32))]
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "b", "s"], ["bn"]),
             helper.make_node("InstanceNormalization", ["x", "s", "b"], ["inn"]),
             helper.make_node("LayerNormalization", ["x", "ls"], ["ln", "mean", "inv"], axis=-1)]
    # LayerNormalization scale of shape (1,) broadcasts over the last axis
    res = check(model(nodes, inputs, ["bn", "inn", "ln", "mean", "inv"], inits), random_cases(inputs, A2))
    assert res.shape("mean") == (dims.sym("a"), 4, 1)


def test_einsum():
    inputs = [("x", F, ["a", "n", 4]), ("y", F, ["a", 4, "b"]), ("z", F, ["n", 3, 4])]
    nodes = [helper.make_node("Einsum", ["x", "y"], ["o"], equation="bij,bjk->bik"),
             helper.make_node("Einsum", ["z"], ["t"], equation="...ij->...ji"),
             helper.make_node("Einsum", ["x", "y"], ["imp"], equation="bij,bjk"),
             helper.make_node("Einsum", ["x"], ["tr"], equation="b...->...")]
    no_fresh(check(model(nodes, inputs, ["o", "t", "imp", "tr"]), random_cases(inputs, A2)))


def test_topk_argmax_cumsum():
    inputs = [("x", F, ["a", "n"])]
    inits = [init("k", np.array([2], np.int64)), init("ax", np.array(1, np.int64))]
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
             helper.make_node("ArgMax", ["x"], ["am"], axis=1, keepdims=0),
             helper.make_node("ArgMin", ["x"], ["an"], axis=0),
             helper.make_node("CumSum", ["x", "ax"], ["cs"]),
             helper.make_node("Trilu", ["x"], ["tl"])]
    res = check(model(nodes, inputs, ["v", "i", "am", "an", "cs", "tl"], inits),
                random_cases(inputs, [{"a": 2, "n": 4}, {"a": 3, "n": 7}]))
    no_fresh(res)
    assert res.shape("v") == (dims.sym("a"), 2)


def test_topk_unknown_k_is_fresh():
    inputs = [("x", F, ["a", "n"]), ("k", I64, [1])]
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"])], inputs, ["v", "i"])
    res = onnxsym.infer(m)
    assert res.shape("v")[0] == dims.sym("a")
    assert res.unresolved()


HW_RANGE = {"h": (1, 4096), "w": (1, 4096)}


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_resize_scales(opset):
    inputs = [("x", F, ["a", 3, "h", 5])]
    inits = [init("roi", np.array([], np.float32)), init("sc", np.array([1, 1, 2, 1.5], np.float32))]
    nodes = [helper.make_node("Resize", ["x", "roi", "sc"], ["y"], mode="nearest")]
    res = check(model(nodes, inputs, ["y"], inits, opset=opset),
                random_cases(inputs, [{"a": 1, "h": 4}, {"a": 2, "h": 7}]), ranges={"h": (1, 4096)})
    no_fresh(res)
    assert res.shape("y")[3] == 7


def test_resize_sizes_and_symbolic_fractional_scale():
    inputs = [("x", F, ["a", 3, "h", "w"])]
    inits = [init("sz", np.array([2, 3, 6, 4], np.int64)), init("sc", np.array([1, 1, 0.5, 2], np.float32))]
    nodes = [helper.make_node("Resize", ["x", "", "", "sz"], ["y"]),
             helper.make_node("Resize", ["x", "", "sc"], ["z"])]
    m = model(nodes, inputs, ["y", "z"], inits, opset=13)
    res = onnxsym.infer(m, ranges=HW_RANGE)
    assert res.shape("y") == (2, 3, 6, 4)
    h, w = dims.sym("h", 1, 4096), dims.sym("w", 1, 4096)
    assert res.shape("z") == (dims.sym("a"), 3, h // 2, 2 * w)
    # unbounded dims: floor(d*scale) holds up to where float32 rounding bites; the bound is
    # recorded as an assumption, never silent
    res = onnxsym.infer(m)
    assert res.shape("y") == (2, 3, 6, 4)
    h, w = dims.sym("h"), dims.sym("w")
    assert res.shape("z") == (dims.sym("a"), 3, h // 2, 2 * w)
    assert sorted(str(c) for c in res.constraints if c.origin is Origin.EXACT_WITHIN) == ["h <= 16777215", "w <= 8388608"]


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce(opset, keepdims):
    inputs = [("x", F, ["a", "n", 4])]
    inits = [init("axes", np.array([-1, 0], np.int64))]
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=keepdims)]
    if opset >= 18:
        nodes += [helper.make_node("ReduceMean", ["x", "axes"], ["m"], keepdims=keepdims),
                  helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=keepdims)]
    else:
        nodes += [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1, 0], keepdims=keepdims),
                  helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=keepdims)]
    res = check(model(nodes, inputs, ["s", "m", "mx"], inits, opset=opset), random_cases(inputs, A2))
    no_fresh(res)
    n = dims.sym("n")
    assert res.shape("s") == ((1, n, 1) if keepdims else (n,))
    assert res.shape("mx") == ((1, 1, 1) if keepdims else ())


def test_reduce_noop_with_empty_axes():
    inputs = [("x", F, ["a", "n"])]
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], noop_with_empty_axes=1)]
    no_fresh(check(model(nodes, inputs, ["s"], opset=13), random_cases(inputs, A2)))


def test_unary_family():
    inputs = [("x", F, ["a", "n"])]
    inits = [init("lo", np.array(0, np.float32)), init("hi", np.array(1, np.float32))]
    nodes = [helper.make_node("Clip", ["x", "lo", "hi"], ["c"]),
             helper.make_node("Softmax", ["x"], ["sm"], axis=-1),
             helper.make_node("Dropout", ["x"], ["d", "mask"]),
             helper.make_node("Sum", ["x", "c", "sm"], ["s3"]),
             helper.make_node("Max", ["x", "c"], ["mx"])]
    res = check(model(nodes, inputs, ["c", "sm", "d", "mask", "s3", "mx"], inits), random_cases(inputs, A2))
    no_fresh(res)
    assert res.values["mask"].dtype == TensorProto.BOOL


def test_upsample_opset9():
    inputs = [("x", F, ["a", 2, "h", 3])]
    inits = [init("sc", np.array([1, 1, 2, 3], np.float32))]
    nodes = [helper.make_node("Upsample", ["x", "sc"], ["y"])]
    res = onnxsym.infer(model(nodes, inputs, ["y"], inits, opset=9), ranges={"h": (1, 4096)})
    assert res.shape("y") == (dims.sym("a"), 2, 2 * dims.sym("h", 1, 4096), 9)


def _rule_node(op, inputs, **attrs):
    from onnxsym.inference.node import Node
    protos = {k: helper.make_attribute(k, v) for k, v in attrs.items()}
    return Node(op, "", op, 18, list(inputs), [f"i{i}" for i in range(len(inputs))], ["o"], protos,
                lambda a: helper.get_attribute_value(a), None, 0)


def test_symbolic_value_propagation():
    from onnxsym.registry import find_rule
    a, b = dims.sym("a"), dims.sym("b")
    x = onnxsym.Tensor(I64, (3,), (a, b, 4))
    y = onnxsym.Tensor(I64, (1,), (2,))
    z = onnxsym.Tensor(I64, (3,), (a, 1, -4))

    def run(op, *ins, **attrs):
        return find_rule("", op, 18)(_rule_node(op, ins, **attrs))[0]

    assert run("Add", x, y).value == (a + 2, b + 2, 6)
    assert run("Sub", x, y).value == (a - 2, b - 2, 2)
    assert run("Mul", x, y).value == (2 * a, 2 * b, 8)
    assert run("Div", x, y).value == (a // 2, b // 2, 2)
    assert run("Div", z, y).value == (a // 2, 0, -2)  # static ints truncate toward zero
    # a - b may be negative: the exact form with both sign cases, truncating as onnxruntime does
    q, c = run("Div", onnxsym.Tensor(I64, (2,), (a - b, -7)), y).value
    assert c == -3 and [dims.evaluate(q, {"a": 2, "b": b_}) for b_ in (1, 5, 2)] == [0, -1, 0]
    assert run("Div", onnxsym.Tensor(I64, (1,), (-7,)), y).value == (-3,)
    assert run("Mod", x, y).value == (a % 2, b % 2, 0)
    assert run("Max", x, z).value == (a, dims.dmax(b, 1), 4)
    assert run("Min", x, z).value == (a, 1, -4)
    assert run("Neg", x).value == (-a, -b, -4)
    assert run("Abs", z).value == (a, 1, 4)
    assert run("Abs", onnxsym.Tensor(I64, (1,), (a - b,))).value == (dims.dmax(a - b, b - a),)
    eq = run("Equal", x, z)
    assert eq.dtype == TensorProto.BOOL and eq.value is None  # b == 1 is not decidable
    assert run("Equal", x, x).value == (True, True, True)
    t = onnxsym.Tensor(TensorProto.BOOL, (2,), (True, False))
    assert run("Not", t).value == (False, True)
    assert run("And", t, onnxsym.Tensor(TensorProto.BOOL, (1,), (True,))).value == (True, False)
    assert run("Or", t, t).value == (True, False)
