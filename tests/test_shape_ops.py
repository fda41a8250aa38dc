"""Rules of rules/shape_ops.py, checked against onnxruntime at concrete sizes."""


import numpy as np
import pytest
from helpers import I64, F, init, model
from onnx import TensorProto, helper
from oracle import check, no_fresh, random_cases

import onnxsym
from onnxsym import dims

ort = pytest.importorskip("onnxruntime")


def test_torchscript_reshape_chain():
    inputs = [("x", F, ["batch", "seq", 12])]
    inits = [init("i0", np.array(0, np.int64)), init("i1", np.array(1, np.int64)),
             init("h", np.array([3], np.int64)), init("m1", np.array([-1], np.int64))]
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
             helper.make_node("Gather", ["s", "i1"], ["t"], axis=0),
             helper.make_node("Unsqueeze", ["b", "ax"], ["bu"]),
             helper.make_node("Unsqueeze", ["t", "ax"], ["tu"]),
             helper.make_node("Concat", ["bu", "tu", "h", "m1"], ["shp"], axis=0),
             helper.make_node("Reshape", ["x", "shp"], ["y"]),
             helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1, 3])]
    inits.append(init("ax", np.array([0], np.int64)))
    res = check(model(nodes, inputs, ["s", "b", "bu", "shp", "y", "yt"], inits), random_cases(inputs),
                values=("s", "b", "shp"))
    no_fresh(res)
    assert res.shape("y") == (dims.sym("batch"), dims.sym("seq"), 3, 4)


def test_torchscript_chain_opset11_attr_axes():
    inputs = [("x", F, ["batch", "seq", 12])]
    inits = [init("i1", np.array(1, np.int64)), init("m1", np.array([-1], np.int64))]
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i1"], ["t"], axis=0),
             helper.make_node("Unsqueeze", ["t"], ["tu"], axes=[0]),
             helper.make_node("Concat", ["m1", "tu"], ["shp"], axis=0),
             helper.make_node("Reshape", ["x", "shp"], ["y"]),
             helper.make_node("Squeeze", ["tu"], ["ts"], axes=[0])]
    res = check(model(nodes, inputs, ["shp", "y", "ts"], inits, opset=11), random_cases(inputs), values=("shp", "ts"))
    no_fresh(res)


def test_reshape_minus_one_and_zero():
    inputs = [("x", F, ["batch", "seq", 4, 6])]
    inits = [init("a", np.array([0, -1, 8], np.int64)), init("c", np.array([-1], np.int64)),
             init("d", np.array([0, 0, 24], np.int64))]
    nodes = [helper.make_node("Reshape", ["x", "a"], ["y"]),
             helper.make_node("Reshape", ["x", "c"], ["z"]),
             helper.make_node("Reshape", ["x", "d"], ["w"]),
             helper.make_node("Flatten", ["x"], ["f"], axis=2)]
    res = check(model(nodes, inputs, ["y", "z", "w", "f"], inits), random_cases(inputs))
    no_fresh(res)


def test_slice_bounds():
    inputs = [("x", F, ["batch", "seq", 10])]
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    inits = [init("s1", np.array([1, -3], np.int64)), init("e1", np.array([big, 100], np.int64)),
             init("a1", np.array([1, 2], np.int64)),
             init("s2", np.array([-1], np.int64)), init("e2", np.array([small], np.int64)),
             init("st2", np.array([-2], np.int64)), init("a2", np.array([1], np.int64)),
             init("s3", np.array([-100], np.int64)), init("e3", np.array([-1], np.int64)),
             init("z", np.array([0], np.int64)), init("i1", np.array([1], np.int64)),
             init("a0", np.array([0], np.int64)), init("eb", np.array([big], np.int64))]
    nodes = [helper.make_node("Slice", ["x", "s1", "e1", "a1"], ["y1"]),
             helper.make_node("Slice", ["x", "s2", "e2", "a2", "st2"], ["y2"]),
             helper.make_node("Slice", ["x", "s3", "e3", "a2"], ["y3"]),
             # ends from Shape: x[:, :seq] and shape[1:] values
             helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Slice", ["sh", "i1", "eb", "a0"], ["tail"]),
             helper.make_node("Slice", ["sh", "i1", "s2"], ["mid"]),
             helper.make_node("Slice", ["x", "z", "mid", "a2"], ["y4"])]
    res = check(model(nodes, inputs, ["y1", "y2", "y3", "tail", "mid", "y4"], inits), random_cases(inputs),
                values=("tail", "mid"))
    no_fresh(res)


def test_slice_opset9_attrs():
    inputs = [("x", F, ["batch", "seq"])]
    nodes = [helper.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[1000, -1], axes=[0, 1])]
    res = check(model(nodes, inputs, ["y"], opset=9), random_cases(inputs))
    no_fresh(res)


def test_range_from_shape():
    inputs = [("x", F, ["batch", "seq"])]
    inits = [init("i1", np.array(1, np.int64)), init("zero", np.array(0, np.int64)),
             init("one", np.array(1, np.int64)), init("two", np.array(2, np.int64))]
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Gather", ["sh", "i1"], ["n"]),
             helper.make_node("Range", ["zero", "n", "one"], ["r"]),
             helper.make_node("Range", ["one", "n", "two"], ["r2"]),
             helper.make_node("Size", ["x"], ["sz"])]
    res = check(model(nodes, inputs, ["r", "r2", "sz"], inits), random_cases(inputs), values=("sz",))
    no_fresh(res)


def test_expand_to_computed_shape_and_where():
    inputs = [("x", F, ["batch", 1, "seq"]), ("y", F, [1, "seq"])]
    inits = [init("four", np.array([4], np.int64)), init("a", np.array([0], np.int64)),
             init("cz", np.array([2], np.int64))]
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Slice", ["sh", "a", "a"], ["empty"]),
             helper.make_node("Gather", ["sh", "a"], ["b"]),
             helper.make_node("Gather", ["sh", "cz"], ["s"]),
             helper.make_node("Concat", ["b", "four", "s"], ["tgt"], axis=0),
             helper.make_node("Expand", ["x", "tgt"], ["e"]),
             helper.make_node("Expand", ["y", "tgt"], ["e2"]),
             helper.make_node("ConstantOfShape", ["tgt"], ["cs"]),
             helper.make_node("Tile", ["y", "tgt2"], ["tl"]),
             helper.make_node("Equal", ["x", "x"], ["cond"]),
             helper.make_node("Where", ["cond", "x", "y"], ["w"])]
    inits.append(init("tgt2", np.array([3, 2], np.int64)))
    res = check(model(nodes, inputs, ["tgt", "e", "e2", "cs", "tl", "w"], inits), random_cases(inputs), values=("tgt",))
    no_fresh(res)


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_split_equal_and_explicit(opset):
    inputs = [("x", F, ["batch", 6, "seq"])]
    inits, nodes = [], []
    if opset >= 13:
        inits.append(init("sp", np.array([1, 2, 3], np.int64)))
        nodes.append(helper.make_node("Split", ["x", "sp"], ["p0", "p1", "p2"], axis=1))
    else:
        nodes.append(helper.make_node("Split", ["x"], ["p0", "p1", "p2"], axis=1, split=[1, 2, 3]))
    kw = {"num_outputs": 3} if opset >= 18 else {}
    nodes.append(helper.make_node("Split", ["x"], ["q0", "q1", "q2"], axis=1, **kw))
    outs = ["p0", "p1", "p2", "q0", "q1", "q2"]
    if opset >= 18:
        nodes.append(helper.make_node("Split", ["x"], ["u0", "u1", "u2", "u3"], axis=1, num_outputs=4))
        outs += ["u0", "u1", "u2", "u3"]
    res = check(model(nodes, inputs, outs, inits, opset=opset), random_cases(inputs))
    no_fresh(res)


@pytest.mark.parametrize("opset", [2, 11, 18])
def test_pad(opset):
    inputs = [("x", F, ["batch", "seq", 3])]
    inits = []
    if opset < 11:
        nodes = [helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 2, 1, 0, 3])]
    elif opset < 18:
        inits.append(init("p", np.array([0, 1, 2, 1, 0, 3], np.int64)))
        nodes = [helper.make_node("Pad", ["x", "p"], ["y"])]
    else:
        inits += [init("p", np.array([1, 2, 3, 4], np.int64)), init("ax", np.array([1, -1], np.int64))]
        nodes = [helper.make_node("Pad", ["x", "p", "", "ax"], ["y"])]
    res = check(model(nodes, inputs, ["y"], inits, opset=opset), random_cases(inputs))
    no_fresh(res)


def test_squeeze_unsqueeze_cast_constant():
    inputs = [("x", F, ["batch", 1, "seq"])]
    inits = [init("ax", np.array([1], np.int64)), init("ax2", np.array([0, -1], np.int64))]
    c = helper.make_tensor("cv", TensorProto.INT64, [2], [5, 7])
    nodes = [helper.make_node("Squeeze", ["x", "ax"], ["sq"]),
             helper.make_node("Unsqueeze", ["sq", "ax2"], ["us"]),
             helper.make_node("Shape", ["us"], ["sh"], start=1, end=-1),
             helper.make_node("Cast", ["sh"], ["shf"], to=TensorProto.FLOAT),
             helper.make_node("CastLike", ["shf", "sh"], ["shi"]),
             helper.make_node("Constant", [], ["k"], value=c),
             helper.make_node("Constant", [], ["k2"], value_ints=[1, 2, 3]),
             helper.make_node("Identity", ["k"], ["ki"]),
             helper.make_node("GatherElements", ["x", "gi"], ["ge"], axis=0)]
    inits.append(init("gi", np.zeros((1, 1, 1), np.int64)))
    res = check(model(nodes, inputs, ["sq", "us", "sh", "shf", "shi", "k", "k2", "ki", "ge"], inits),
                random_cases(inputs), values=("sh", "shi", "k", "ki"))
    no_fresh(res)
    assert res.values["shf"].dtype == TensorProto.FLOAT


def test_gather_negative_indices_and_concat_general():
    inputs = [("x", F, ["batch", "seq", 4]), ("y", F, ["batch", 2, 4])]
    inits = [init("ni", np.array([-1, 0], np.int64)), init("gi", np.array([[0, -1], [1, 2]], np.int64))]
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Gather", ["sh", "ni"], ["g"]),
             helper.make_node("Gather", ["x", "gi"], ["gx"], axis=-1),
             helper.make_node("Concat", ["x", "y"], ["c"], axis=1),
             helper.make_node("Shape", ["c"], ["csh"], start=-2),
             helper.make_node("Squeeze", ["u", "ua"], ["sq"]),
             helper.make_node("Unsqueeze", ["x", "ua"], ["u"])]
    inits.append(init("ua", np.array([0], np.int64)))
    res = check(model(nodes, inputs, ["g", "gx", "c", "csh", "u", "sq"], inits), random_cases(inputs),
                values=("g", "csh"))
    no_fresh(res)


def test_squeeze_without_axes_symbolic_is_not_guessed():
    inputs = [("x", F, ["batch", 1, "seq"])]
    nodes = [helper.make_node("Squeeze", ["x"], ["sq"])]
    res = onnxsym.infer(model(nodes, inputs, ["sq"]))
    # batch and seq may be 1, so the output rank is not known
    assert res.shape("sq") is None


def test_slice_with_runtime_bounds_keeps_other_axes():
    inputs = [("x", F, ["batch", "seq", 4]), ("st", I64, [1])]
    inits = [init("e", np.array([2], np.int64)), init("a", np.array([1], np.int64))]
    nodes = [helper.make_node("Slice", ["x", "st", "e", "a"], ["y"])]
    m = model(nodes, inputs, ["y"], inits)
    res = onnxsym.infer(m)
    shape = res.shape("y")
    assert shape[0] == dims.sym("batch") and shape[2] == 4
    assert len(res.unresolved()) == 1


@pytest.mark.parametrize("start,end,step", [(-100, 2**63 - 1, -2), (-(2**63), 2**63 - 1, -1), (5, 2**31 - 1, -1),
                                            (-(2**63), -(2**63), -2), (0, 2**31 - 1, 2), (-1, -(2**31), -3)])
def test_slice_int_max_ends_as_onnxruntime_reads_them(start, end, step):
    """An end of INT_MAX with a negative step runs to the first element in onnxruntime
    (the spec's clamping would stop at the last): found by the fuzzer."""
    inputs = [("x", F, ["batch", "seq"])]
    inits = [init("s", [start]), init("e", [end]), init("a", [1]), init("st", [step])]
    m = model([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])], inputs, ["y"], inits)
    no_fresh(check(m, random_cases(inputs, [{"batch": 2, "seq": 1}, {"batch": 3, "seq": 2}, {"batch": 1, "seq": 7}])))


def test_a_computed_reshape_target_with_two_minus_ones_is_refused_as_onnxruntime_refuses_it():
    # [x.shape[1] - 2, -1] with x.shape[1] == 1: two -1s (a fuzzer crash, seed 618)
    import numpy as np
    import pytest
    from helpers import F, model
    from onnx import helper, numpy_helper
    from oracle import run_ort

    from onnxsym import ShapeContradiction

    c = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)  # noqa: E731
    m = model([helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "one"], ["d"]),
               helper.make_node("Sub", ["d", "two"], ["e"]), helper.make_node("Concat", ["e", "m1"], ["t"], axis=0),
               helper.make_node("Reshape", ["x", "t"], ["y"], name="r")],
              [("x", F, ["batch", 1, "h"])], ["y"], [c("one", [1]), c("two", [2]), c("m1", [-1])])
    with pytest.raises(ShapeContradiction, match="more than one -1"):
        onnxsym.infer(m)
    with pytest.raises(Exception, match="-1"):
        run_ort(m, {"x": np.ones((2, 1, 3), np.float32)})


def test_reshape_zero_past_the_input_rank_is_refused_so_the_element_is_a_size():
    """A channel shuffle exported by TorchScript reshapes a rank-4 tensor to rank 5 with a last
    element ``(w + 3)//4 - 1`` that is 0 for small w; a 0 there would copy dim 4 of the input,
    which it has not, and onnxruntime refuses it ("The dimension with value zero exceeds the
    dimension size of the input tensor"). Here: z [w] sliced to its first ``(w + 1)//2 - 1``
    elements, reshaped to [1, (w + 1)//2 - 1]: the element is a size, w >= 3 joins the domain, no
    fresh dim."""
    inputs = [("z", F, ["w"])]
    i64 = lambda name, v: init(name, np.array(v, np.int64))  # noqa: E731
    nodes = [helper.make_node("Shape", ["z"], ["s0"]), helper.make_node("Add", ["s0", "one"], ["s"]),
             helper.make_node("Div", ["s", "two"], ["half"]),
             helper.make_node("Sub", ["half", "one"], ["k"]),
             helper.make_node("Slice", ["z", "zero", "k"], ["head"]),
             helper.make_node("Concat", ["one", "k"], ["target"], axis=0),
             helper.make_node("Reshape", ["head", "target"], ["y"])]
    m = model(nodes, inputs, ["y"], [i64("two", [2]), i64("one", [1]), i64("zero", [0])])
    res = check(m, random_cases(inputs, [{"w": w} for w in (3, 4, 9, 30)]))
    no_fresh(res)
    w = dims.sym("w")
    assert res.shape("y") == (1, (w + 1) // 2 - 1)
    assert res.domain().ranges["w"][0] == 3
    from oracle import session_of

    sess = session_of(m, optimize=False)  # (as verify runs it: the optimizer drops this Reshape's check)
    for n in (1, 2):  # just outside: onnxruntime refuses the 0
        with pytest.raises(Exception, match="exceeds the dimension size"):
            sess.run(None, {"z": np.ones(n, np.float32)})


@pytest.mark.parametrize("step", [1, -1, 2, -3])
@pytest.mark.parametrize("start", [None, 5, 1])
@pytest.mark.parametrize("end", [3, 7])
def test_slice_bounds_of_either_sign_are_exact(end, start, step):
    """x[1, N] sliced on axis 1 from ``L - start`` (0 for None) to ``L - end``, L the length of y: an
    index whose sign the algebra cannot tell is each sign's clamp, picked by min(1, max(0, v + 1)) (1
    where v >= 0). Held to onnxruntime at every N, L in 1..13 (both signs of each bound), and the
    written model runs with its dims."""
    inputs = [("x", F, [1, "N"]), ("y", F, ["L"])]
    inits = [init("ce", np.array([end], np.int64)), init("st", np.array([step], np.int64)),
             init("ax", np.array([1], np.int64)), init("cs", np.array([start or 0], np.int64))]
    nodes = [helper.make_node("Shape", ["y"], ["sy"]), helper.make_node("Sub", ["sy", "ce"], ["e"]),
             helper.make_node("Sub", ["sy", "cs"] if start else ["cs", "cs"], ["s"]),
             helper.make_node("Slice", ["x", "s", "e", "ax", "st"], ["z"])]
    sizes = [{"N": n, "L": L} for n in range(1, 14) for L in range(1, 14)]
    res = check(model(nodes, inputs, ["z"], inits), random_cases(inputs, sizes), annotated=True)
    no_fresh(res)
