"""Every condition an op registers that the domain learns (docs/conditions.md), tested at its
boundary against onnxruntime, one generated test per op: sizes just inside run and give the
inferred shapes, sizes just outside fail at that node (tests/domain_boundary.py). The ops come
from the registry: an op that states a learned condition and has no case here fails."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym.rules  # noqa: F401  (the built-in rules)
from onnxsym import registry
from tests.domain_boundary import check_all
from tests.helpers import model

F, I64, U8, I32, B = T.FLOAT, T.INT64, T.UINT8, T.INT32, T.BOOL


def _ints(name, vals, shape=None):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, I64, [len(vals)] if shape is None else shape,
                                                                    vals))


def _const(name, dtype, shape, vals):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, dtype, shape, vals))


def _shape_minus(x, k, out):
    """``out`` = [x.shape[0] - k], computed from the shape."""
    return [h.make_node("Shape", [x], [out + "_s"]), _ints(out + "_k", [k]),
            h.make_node("Sub", [out + "_s", out + "_k"], [out])]


def _broadcast(op, dtype=F, opset=17, **attrs):
    """``x [n]`` against ``y [3]``: n is 3 or 1."""
    return (lambda: model([h.make_node(op, ["x", "y"], ["z"], **attrs)], [("x", dtype, ["n"]), ("y", dtype, [3])],
                          ["z"], opset=opset), ["n == 3 (or n == 1)"], {"n": 3})


def _variadic(op):
    return (lambda: model([h.make_node(op, ["x", "y", "w"], ["z"])],
                          [("x", F, ["n"]), ("y", F, [3]), ("w", F, [1])], ["z"]), ["n == 3 (or n == 1)"], {"n": 3})


def _matmul(op, dtype=F):
    return (lambda: model([h.make_node(op, ["x", "y"], ["z"])], [("x", dtype, [2, "n"]), ("y", dtype, [3, 4])], ["z"]),
            ["n == 3"])


def _qlinear_matmul():
    q = [_const("s", F, [], [0.5]), _const("zp", U8, [], [0])]
    return model(q + [h.make_node("QLinearMatMul", ["x", "s", "zp", "y", "s", "zp", "s", "zp"], ["z"])],
                 [("x", U8, [2, "n"]), ("y", U8, [3, 4])], ["z"])


def _qlinear_conv():
    q = [_const("s", F, [], [0.5]), _const("zp", U8, [], [0])]
    return model(q + [h.make_node("QLinearConv", ["x", "s", "zp", "w", "s", "zp", "s", "zp"], ["z"])],
                 [("x", U8, [1, 1, "n"]), ("w", U8, [1, 1, 3])], ["z"])


def _conv(op, dtype=F):
    return (lambda: model([h.make_node(op, ["x", "w"], ["z"])], [("x", dtype, [1, 1, "n"]), ("w", dtype, [1, 1, 3])],
                          ["z"]), ["n >= 3"])


def _pool(op):
    return (lambda: model([h.make_node(op, ["x"], ["z"], kernel_shape=[3])], [("x", F, [1, 1, "n"])], ["z"]),
            ["n >= 2"])


def _deform_conv():
    return model([h.make_node("DeformConv", ["x", "w", "off"], ["z"])],
                 [("x", F, [1, 1, "n", 3]), ("w", F, [1, 1, 3, 3]), ("off", F, [1, 18, 1, 1])], ["z"], opset=19)


def _unary(op, inputs, outputs, extra=(), opset=17, **attrs):
    return lambda: model(list(extra) + [h.make_node(op, [i[0] for i in inputs if i[0]] if False else
                                                    [i if isinstance(i, str) else i[0] for i in inputs],
                                                    outputs, **attrs)],
                         [i for i in inputs if not isinstance(i, str)], outputs, opset=opset)


def _if(then_nodes, outputs, inputs):
    then = h.make_graph(then_nodes, "then", [], [h.make_tensor_value_info(o, F, None) for o in outputs])
    other = h.make_graph([h.make_node("ReduceSum", ["x"], [o], keepdims=0) for o in outputs], "else", [],
                         [h.make_tensor_value_info(o, F, None) for o in outputs])
    return model([h.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other)],
                 [("c", B, [])] + inputs, ["z"])


def _loop():
    body = h.make_graph([h.make_node("Identity", ["cond_in"], ["cond_out"]), _ints("t", [2, -1]),
                         h.make_node("Reshape", ["x", "t"], ["r"]), h.make_node("ReduceSum", ["r"], ["s"], keepdims=0)],
                        "body", [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, [])],
                        [h.make_tensor_value_info("cond_out", B, []), h.make_tensor_value_info("s", F, None)])
    return model([_ints("trip", [1], []), h.make_node("Loop", ["trip", ""], ["z"], body=body)],
                 [("x", F, ["n"])], ["z"])


def _scan():
    body = h.make_graph([h.make_node("Add", ["a", "b"], ["o"])], "body",
                        [h.make_tensor_value_info("a", F, [2]), h.make_tensor_value_info("b", F, [2])],
                        [h.make_tensor_value_info("o", F, [2])])
    return model([h.make_node("Scan", ["x", "y"], ["z"], body=body, num_scan_inputs=2)],
                 [("x", F, ["n", 2]), ("y", F, [3, 2])], ["z"])


def _sequence_map():
    body = h.make_graph([_ints("t", [2, -1]), h.make_node("Reshape", ["e", "t"], ["r"])], "body",
                        [h.make_tensor_value_info("e", F, ["n"])], [h.make_tensor_value_info("r", F, None)])
    return model([h.make_node("SequenceConstruct", ["x"], ["s"]), h.make_node("SequenceMap", ["s"], ["m"], body=body),
                  _ints("p", [0], []), h.make_node("SequenceAt", ["m", "p"], ["z"])], [("x", F, ["n"])], ["z"])


# op -> (model builder, the conditions the domain states); base size n = 4 unless told
CASES = {}
for _op in ("Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
    CASES[_op] = _broadcast(_op)
for _op in ("And", "Or", "Xor"):
    CASES[_op] = _broadcast(_op, B)
for _op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
    CASES[_op] = _broadcast(_op, I32, opset=18)
CASES["Mod"] = _broadcast("Mod", I64)
CASES["BitShift"] = _broadcast("BitShift", T.UINT32, direction="LEFT")
CASES["PRelu"] = (lambda: model([h.make_node("PRelu", ["x", "y"], ["z"])], [("x", F, ["n"]), ("y", F, [3])], ["z"]),
                  ["n == 3 (or n == 1)"], {"n": 3})  # onnxruntime broadcasts x into the slope too
for _op in ("Max", "Min", "Sum", "Mean"):
    CASES[_op] = _variadic(_op)
CASES["Where"] = (lambda: model([h.make_node("Where", ["c", "x", "y"], ["z"])],
                                [("c", B, ["n"]), ("x", F, [3]), ("y", F, [1])], ["z"]), ["n == 3 (or n == 1)"], {"n": 3})
CASES["MatMul"] = _matmul("MatMul")
CASES["MatMulInteger"] = _matmul("MatMulInteger", U8)
CASES["QLinearMatMul"] = (_qlinear_matmul, ["n == 3"])
CASES["Gemm"] = _matmul("Gemm")
CASES["Einsum"] = (lambda: model([h.make_node("Einsum", ["x", "y"], ["z"], equation="ij,jk->ik")],
                                 [("x", F, [2, "n"]), ("y", F, [3, 4])], ["z"]), ["n == 3 (or n == 1)"], {"n": 3})
CASES["Conv"] = _conv("Conv")
CASES["ConvInteger"] = _conv("ConvInteger", U8)
CASES["QLinearConv"] = (_qlinear_conv, ["n >= 3"])
CASES["DeformConv"] = (_deform_conv, ["n == 3"], {"n": 3})  # (the offset's 1x1 is the output's size)
CASES["Det"] = (lambda: model([h.make_node("Det", ["x"], ["z"])], [("x", F, ["n", 3])], ["z"]), ["n == 3"], {"n": 8})
CASES["GridSample"] = (lambda: model([h.make_node("GridSample", ["x", "g"], ["z"])],
                                     [("x", F, ["n", 1, 4, 4]), ("g", F, [2, 2, 2, 2])], ["z"], opset=16),
                       ["n == 2"], {"n": 8})
CASES["NonMaxSuppression"] = (lambda: model([h.make_node("NonMaxSuppression", ["b", "s"], ["z"])],
                                            [("b", F, [1, "n", 4]), ("s", F, [1, 1, 3])], ["z"]), ["n == 3"], {"n": 8})
CASES["STFT"] = (lambda: model([_ints("st", [2], []), _ints("fl", [4], []),
                                h.make_node("STFT", ["x", "st", "", "fl"], ["z"])], [("x", F, [1, "n", 1])], ["z"]),
                 ["n >= 4"])
CASES["DFT"] = (lambda: model([h.make_node("DFT", ["x"], ["z"], axis=1)], [("x", F, [1, 8, "n"])], ["z"], opset=17),
                ["n <= 2"], {"n": 2})
CASES["BatchNormalization"] = (lambda: model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["z"])],
                                             [("x", F, [1, "n", 2]), ("s", F, [3]), ("b", F, [3]), ("m", F, [3]),
                                              ("v", F, [3])], ["z"]), ["n == 3"], {"n": 8})
CASES["MaxUnpool"] = (lambda: model([h.make_node("MaxUnpool", ["x", "i"], ["z"], kernel_shape=[2], strides=[2])],
                                    [("x", F, [1, 1, "n"]), ("i", I64, [1, 1, 4])], ["z"], opset=11),
                      ["n == 4"], {"n": 4})
CASES["AffineGrid"] = (lambda: model([_ints("sz", [2, 1, 3, 4]), h.make_node("AffineGrid", ["t", "sz"], ["z"])],
                                     [("t", F, ["n", 2, 3])], ["z"], opset=20), ["n == 2"], {"n": 8})
CASES["LayerNormalization"] = (lambda: model([h.make_node("LayerNormalization", ["x", "s"], ["z"])],
                                             [("x", F, [2, "n"]), ("s", F, [3])], ["z"]), ["n == 3"], {"n": 8})
CASES["RMSNormalization"] = (lambda: model([h.make_node("RMSNormalization", ["x", "s"], ["z"], axis=1)],
                                           [("x", F, [2, "n", 3]), ("s", F, [4, 1])], ["z"], opset=23, ir=10),
                              ["n == 4"], {"n": 8})
CASES["Attention"] = (lambda: model([h.make_node("Attention", ["q", "k", "v"], ["z"])],
                                    [("q", F, [1, 2, 3, 4]), ("k", F, [1, 2, 5, 4]), ("v", F, [1, 2, "n", 4])],
                                    ["z"], opset=23, ir=10), ["n == 5"], {"n": 8})
CASES["ConvTranspose"] = (lambda: model([h.make_node("ConvTranspose", ["x", "w"], ["z"], pads=[1, 1])],
                                        [("x", F, [1, 1, "n"]), ("w", F, [1, 1, 1])], ["z"]), ["n >= 3"])
for _op in ("MaxPool", "AveragePool", "LpPool"):
    CASES[_op] = _pool(_op)
# (a 4th item: the inference's arguments; a size 0 is outside these)
ZERO = {"allow_zero": True}
for _op in ("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"):  # an input with no elements: only at batch 0
    CASES[_op] = (lambda op=_op: model([h.make_node(op, ["x"], ["z"])], [("x", F, [1, "n", 2, 2])], ["z"]),
                  ["n >= 1"], {"n": 1}, ZERO)
for _op in ("ArgMax", "ArgMin"):  # an empty axis, where the output has elements
    CASES[_op] = (lambda op=_op: model([h.make_node(op, ["x"], ["z"], axis=0)], [("x", F, ["n", 3])], ["z"]),
                  ["n >= 1"], {"n": 1}, ZERO)
CASES["OneHot"] = (lambda: model([h.make_node("Shape", ["d"], ["ds"]), _const("vals", F, [2], [0, 1]),
                                  h.make_node("OneHot", ["i", "ds", "vals"], ["z"])],
                                 [("i", I64, [2]), ("d", F, ["n"])], ["z"]), ["n >= 1"], {"n": 1}, ZERO)
CASES["ConcatFromSequence"] = (lambda: model([h.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                                              h.make_node("ConcatFromSequence", ["s"], ["z"], axis=0)],
                                             [("a", F, [2, "n"]), ("b", F, [2, 3])], ["z"]), ["n == 3"], {"n": 3})
CASES["SequenceAt"] = (lambda: model([h.make_node("SplitToSequence", ["x"], ["s"], axis=0), _ints("p", [2], []),
                                      h.make_node("SequenceAt", ["s", "p"], ["z"])], [("x", F, ["n", 2])], ["z"]),
                       ["n >= 3"], {"n": 3})
CASES["SequenceErase"] = (lambda: model([h.make_node("SplitToSequence", ["x"], ["s"], axis=0), _ints("p", [2], []),
                                         h.make_node("SequenceErase", ["s", "p"], ["r"]),
                                         h.make_node("SequenceLength", ["r"], ["z"])], [("x", F, ["n", 2])], ["z"]),
                          ["n >= 3"], {"n": 3})
CASES["SequenceInsert"] = (lambda: model([h.make_node("SplitToSequence", ["x"], ["s"], axis=0), _ints("p", [3], []),
                                          h.make_node("SequenceInsert", ["s", "x", "p"], ["r"]),
                                          h.make_node("SequenceLength", ["r"], ["z"])], [("x", F, ["n", 2])], ["z"]),
                           ["n >= 3"], {"n": 3})
CASES["SplitToSequence"] = (lambda: model([_ints("sp", [2, 3]), h.make_node("SplitToSequence", ["x", "sp"], ["s"]),
                                           h.make_node("ConcatFromSequence", ["s"], ["z"], axis=0)],
                                          [("x", F, ["n", 2])], ["z"]), ["n == 5"], {"n": 5})
CASES["TopK"] = (lambda: model([_ints("k", [5]), h.make_node("TopK", ["x", "k"], ["v", "i"])], [("x", F, ["n"])],
                               ["v", "i"]), ["n >= 5"])
CASES["ConstantOfShape"] = (lambda: model(_shape_minus("x", 5, "d") + [h.make_node("ConstantOfShape", ["d"], ["y"])],
                                          [("x", F, ["n"])], ["y"]), ["n >= 5"])
CASES["Reshape"] = (lambda: model([_ints("t", [2, -1]), h.make_node("Reshape", ["x", "t"], ["y"])], [("x", F, ["n"])],
                                  ["y"]), ["n % 2 == 0"])
CASES["Squeeze"] = (lambda: model([_ints("a", [0]), h.make_node("Squeeze", ["x", "a"], ["y"])], [("x", F, ["n", 2])],
                                  ["y"]), ["n == 1"], {"n": 8})
CASES["Concat"] = (lambda: model([h.make_node("Concat", ["x", "y"], ["z"], axis=1)],
                                 [("x", F, ["n", 2]), ("y", F, [3, 2])], ["z"]), ["n == 3"])
CASES["Split"] = (lambda: model([_ints("s", [2, 3]), h.make_node("Split", ["x", "s"], ["a", "b"])], [("x", F, ["n"])],
                                ["a", "b"]), ["n == 5"])
CASES["Gather"] = (lambda: model([_ints("i", [4], []), h.make_node("Gather", ["x", "i"], ["z"])], [("x", F, ["n"])],
                                 ["z"]), ["n >= 5"])
CASES["GatherElements"] = (lambda: model([_ints("i", [4, 0], [1, 2]), h.make_node("GatherElements", ["x", "i"], ["z"])],
                                         [("x", F, ["n", 2])], ["z"]), ["n >= 5"])
CASES["GatherND"] = (lambda: model([_ints("i", [4], [1, 1]), h.make_node("GatherND", ["x", "i"], ["z"])],
                                   [("x", F, ["n", 2])], ["z"]), ["n >= 5"])
CASES["ScatterElements"] = (lambda: model([_ints("i", [4], [1]), h.make_node("ScatterElements", ["x", "i", "u"], ["z"])],
                                          [("x", F, ["n"]), ("u", F, [1])], ["z"]), ["n >= 5"])
CASES["Scatter"] = (lambda: model([_ints("i", [4], [1]), h.make_node("Scatter", ["x", "i", "u"], ["z"])],
                                  [("x", F, ["n"]), ("u", F, [1])], ["z"], opset=10), ["n >= 5"])
CASES["ScatterND"] = (lambda: model([_ints("i", [4], [1, 1]), h.make_node("ScatterND", ["x", "i", "u"], ["z"])],
                                    [("x", F, ["n"]), ("u", F, [1])], ["z"]), ["n >= 5"])
CASES["Expand"] = (lambda: model([_ints("s", [3]), h.make_node("Expand", ["x", "s"], ["z"])], [("x", F, ["n"])], ["z"]),
                   ["n == 3 (or n == 1)"], {"n": 3})
CASES["Tile"] = (lambda: model(_shape_minus("x", 5, "r") + [h.make_node("Tile", ["w", "r"], ["z"])],
                               [("x", F, ["n"]), ("w", F, [2])], ["z"]), ["n >= 5"])
CASES["Pad"] = (lambda: model([_ints("p", [-3, 0]), h.make_node("Pad", ["x", "p"], ["y"])], [("x", F, ["n"])], ["y"]),
                ["n >= 3"])
CASES["QuantizeLinear"] = (lambda: model([_const("s", F, [3], [0.5] * 3), h.make_node("QuantizeLinear", ["x", "s"], ["y"],
                                                                                      axis=0)],
                                          [("x", F, ["n", 2])], ["y"]), ["n == 3"], {"n": 3})
CASES["DequantizeLinear"] = (lambda: model([_const("s", F, [2, 2], [0.5] * 4),
                                            h.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2)],
                                           [("x", U8, [2, "n"])], ["y"], opset=21), ["3 <= n <= 4"], {"n": 3})
CASES["Col2Im"] = (lambda: model([_ints("img", [5, 1]), _ints("blk", [2, 1]),
                                  h.make_node("Col2Im", ["x", "img", "blk"], ["y"])], [("x", F, [1, 2, "n"])], ["y"],
                                 opset=18), ["n == 4"], {"n": 4})
CASES["ReverseSequence"] = (lambda: model([h.make_node("ReverseSequence", ["x", "l"], ["y"])],
                                          [("x", F, [2, 3]), ("l", I64, ["n"])], ["y"]), ["n == 3"], {"n": 3})
CASES["TensorScatter"] = (lambda: model([_ints("w", [1, 2]), h.make_node("TensorScatter", ["c", "u", "w"], ["z"])],
                                        [("c", F, [2, "n", 4]), ("u", F, [2, 2, 4])], ["z"], opset=24, ir=10),
                           ["n >= 4"], {"n": 6})
CASES["DepthToSpace"] = (lambda: model([h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)],
                                       [("x", F, [1, "n", 2, 2])], ["y"]), ["n % 4 == 0"])
CASES["SpaceToDepth"] = (lambda: model([h.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
                                       [("x", F, [1, 3, "n", 4])], ["y"]), ["n % 2 == 0"])
CASES["If"] = (lambda: _if([_ints("t", [2, -1]), h.make_node("Reshape", ["x", "t"], ["r"]),
                            h.make_node("ReduceSum", ["r"], ["z"], keepdims=0)], ["z"], [("x", F, ["n"])]),
               ["n % 2 == 0"])
CASES["Loop"] = (_loop, ["n % 2 == 0"])
CASES["Scan"] = (_scan, ["n == 3"])
CASES["SequenceMap"] = (_sequence_map, ["n % 2 == 0"])
CASES["RotaryEmbedding"] = (lambda: model([_const("c", F, [16, 4], [0.0] * 64),
                                            h.make_node("RotaryEmbedding", ["x", "c", "c", "p"], ["y"])],
                                           [("x", F, [1, 2, "n", 8]), ("p", I64, [1, "n"])], ["y"], opset=23, ir=10),
                             ["n <= 16"])
CASES["StringConcat"] = (lambda: model([h.make_node("StringConcat", ["x", "y"], ["z"])],
                                       [("x", T.STRING, ["n"]), ("y", T.STRING, [3])], ["z"], opset=20),
                         ["n == 3 (or n == 1)"], {"n": 3})

# Learned conditions that are not a place where onnxruntime fails: bounds within which a float32
# size computation is exact (onnxruntime runs past them, with a rounded size).
NOT_A_FAILURE = {"Resize", "Upsample"}
# onnxruntime 1.32 has no kernel to run at the sizes in question.
NO_KERNEL = {"SwiGLU": "opset 28: onnxruntime 1.32 implements it only as a contrib op",
             "GroupNormalization": "onnxruntime runs its function body, failing at a Reshape inside: "
                                   "tests/test_domain_grids.py",
             "LinearAttention": "onnxruntime runs its function body, failing at nodes inside: "
                                "tests/test_linear_attention_ort.py",
             "NegativeLogLikelihoodLoss": "onnxruntime runs its function body, failing at unnamed nodes inside: "
                                          "tests/test_loss_verdicts.py",
             "SoftmaxCrossEntropyLoss": "onnxruntime runs its function body, failing at unnamed nodes inside: "
                                        "tests/test_loss_verdicts.py"}


def _learned_ops():
    return sorted(e.op_type for e in registry.entries()
                  if e.domain == "" and any(c.learned for c in e.conditions or ()))


def _named(m):
    """Every node named, in subgraphs too (onnxruntime's error names the node that fails)."""
    def name(g, prefix):
        for i, n in enumerate(g.node):
            n.name = n.name or f"{prefix}{n.op_type}_{i}"
            for a in n.attribute:
                if a.type == a.GRAPH:
                    name(a.g, n.name + "/")
    name(m.graph, "")
    return m


@pytest.mark.parametrize("op", _learned_ops())
def test_each_learned_condition_holds_at_its_boundary_in_onnxruntime(op):
    if op in NOT_A_FAILURE:
        pytest.skip("a float32 exactness bound, not a failure: tests/test_float_shape_values.py")
    if op in NO_KERNEL:
        pytest.skip(NO_KERNEL[op])
    assert op in CASES, f"{op} states a learned condition and has no boundary case here"
    case = CASES[op]
    make, texts = case[0], case[1]
    base = case[2] if len(case) > 2 else {"n": 4}
    _, domain, outcomes = check_all(_named(make()), base, expect=texts, **(case[3] if len(case) > 3 else {}))
    assert outcomes and all(o[2].startswith("fails at") or o[2] == "shapes differ" for o in outcomes), outcomes


def test_a_condition_in_a_branch_holds_under_the_branch_condition():
    """The If's then branch reshapes to [2, -1]: n % 2 == 0 holds where c is true; with c false
    an odd n runs in onnxruntime."""
    import onnxsym
    from tests.domain_boundary import run

    m = _named(CASES["If"][0]())
    result = onnxsym.infer(m)
    (cond,) = result.domain().conditions
    assert cond.text == "n % 2 == 0" and [g.text for g in cond.when] == ["c"]
    import onnxruntime as ort
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"c": np.array(False), "x": np.ones(5, np.float32)})[0].shape == ()
    assert run(m, result, {"n": 5})[0] is not None  # (the harness feeds c true)


def test_the_cases_are_of_registered_ops():
    assert set(CASES) <= set(_learned_ops()), set(CASES) - set(_learned_ops())
    np.testing.assert_equal(len(CASES) > 50, True)
