"""Reductions and splits of shape values keep their elements: tf2onnx lowers Einsum to a
Reshape whose target is ReduceProd of gathered dims (a Keras MultiHeadAttention export lost
30 dims there), and computes SAME padding's pads as a shape value it Splits (a Keras
Conv2DTranspose UNet lost 31). Checked against onnxruntime at two sizes."""

import numpy as np
import pytest
from helpers import model
from onnx import TensorProto, helper, numpy_helper
from oracle import check

from onnxsym import dims

I64 = TensorProto.INT64


def _const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def _cases(make_feeds):
    return [({"batch": b, "seq": s}, make_feeds(b, s)) for b, s in ((2, 3), (5, 1))]


@pytest.mark.parametrize("opset", [13, 18])
def test_reduce_prod_of_gathered_dims_is_a_reshape_target(opset):
    axes = {"axes": [0]} if opset < 18 else {}
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "first_two"], ["g"]),
        helper.make_node("ReduceProd", ["g"], ["p"], keepdims=1, **axes),
        helper.make_node("Concat", ["p", "four"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    m = model(nodes, [("x", TensorProto.FLOAT, ["batch", "seq", 4])], ["y"], opset=opset,
              inits=[_const("first_two", [0, 1]), _const("four", [4])], ir=10)
    res = check(m, _cases(lambda b, s: {"x": np.zeros((b, s, 4), np.float32)}))
    assert str(res.shape("y")[0]) == "batch*seq"


def test_reduce_sum_max_min_over_one_axis_of_a_matrix_in_int32():
    """[[batch, seq], [seq, 3]] in int32: summed over axis 0 is [batch + seq, seq + 3], its
    largest and smallest over axis 1 are max/min of each row; each feeds a ConstantOfShape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "pick"], ["g"]),
        helper.make_node("Cast", ["g"], ["g32"], to=TensorProto.INT32),
        helper.make_node("Reshape", ["g32", "two_by_two"], ["mat"]),
        helper.make_node("ReduceSum", ["mat", "axis0"], ["sum"], keepdims=0),
        helper.make_node("ReduceMax", ["mat", "axis1"], ["max"], keepdims=0),
        helper.make_node("ReduceMin", ["mat", "axis1"], ["min"], keepdims=0),
    ]
    for name in ("sum", "max", "min"):
        nodes += [helper.make_node("Cast", [name], [name + "64"], to=I64),
                  helper.make_node("ConstantOfShape", [name + "64"], ["y_" + name])]
    m = model(nodes, [("x", TensorProto.FLOAT, ["batch", "seq", 3])], ["y_sum", "y_max", "y_min"], opset=18,
              inits=[_const("pick", [0, 1, 1, 2]), _const("two_by_two", [2, 2]), _const("axis0", [0]),
                     _const("axis1", [1])], ir=10)
    res = check(m, _cases(lambda b, s: {"x": np.zeros((b, s, 3), np.float32)}))
    assert [str(d) for d in res.shape("y_sum")] == ["batch + seq", "seq + 3"]
    assert all(s.name in ("batch", "seq") for d in res.shape("y_max") + res.shape("y_min")
               for s in dims.free_symbols(d))


def test_reduce_prod_over_an_empty_axis_is_one_and_float_elements_are_not_folded():
    nodes = [
        helper.make_node("ReduceProd", ["empty"], ["p"], keepdims=1),
        helper.make_node("ConstantOfShape", ["p"], ["ones"]),
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
        helper.make_node("ReduceProd", ["sf"], ["pf"], keepdims=1),
    ]
    m = model(nodes, [("x", TensorProto.FLOAT, ["batch", "seq"])], ["ones", "pf"], opset=18,
              inits=[_const("empty", np.zeros((0,), np.int64))], ir=10)
    res = check(m, _cases(lambda b, s: {"x": np.zeros((b, s), np.float32)}))
    assert res.shape("ones") == (1,) and res.values["pf"].value is None



@pytest.mark.parametrize("opset", [11, 13, 18])
def test_split_of_a_shape_value_keeps_its_elements(opset):
    """Shape [batch, seq, 5, 2] split into [1, 3] (into two halves by num_outputs at opset 18)
    feeds a ConstantOfShape; as the matrix [[batch, seq], [5, 2]] split into its columns it
    gives Pad's pads [batch, 5, seq, 2, 0, 0, 0, 0]."""
    if opset < 13:
        first = helper.make_node("Split", ["s"], ["head", "tail"], axis=0, split=[1, 3])
    elif opset < 18:
        first = helper.make_node("Split", ["s", "one_three"], ["head", "tail"], axis=0)
    else:
        first = helper.make_node("Split", ["s"], ["head", "tail"], axis=0, num_outputs=2)
    columns = {"split": [1, 1]} if opset < 13 else {"num_outputs": 2} if opset >= 18 else {}
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        first,
        helper.make_node("ConstantOfShape", ["tail"], ["y_tail"]),
        helper.make_node("Reshape", ["s", "two_by_two"], ["mat"]),
        helper.make_node("Split", ["mat"], ["c0", "c1"], axis=1, **columns),
        helper.make_node("Concat", ["c0", "c1", "zeros"], ["pads_col"], axis=0),
        helper.make_node("Reshape", ["pads_col", "eight"], ["pads"]),
        helper.make_node("Pad", ["x", "pads"], ["y_pad"]),
    ]
    m = model(nodes, [("x", TensorProto.FLOAT, ["batch", "seq", 5, 2])], ["y_tail", "y_pad"], opset=opset,
              inits=[_const("one_three", [1, 3]), _const("two_by_two", [2, 2]), _const("eight", [8]),
                     _const("zeros", [[0]] * 4)], ir=10)
    res = check(m, _cases(lambda b, s: {"x": np.zeros((b, s, 5, 2), np.float32)}))
    assert [str(d) for d in res.shape("y_tail")] == (["seq", "5", "2"] if opset < 18 else ["5", "2"])
    assert [str(d) for d in res.shape("y_pad")] == ["2*batch", "seq + 5", "seq + 5", "4"]
