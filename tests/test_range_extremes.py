"""The largest and smallest element of a Range of symbolic length: onnxscript's ort_fusions
take ReduceMax of the position Range(past, past + seq) as seqlens_k, and one more as the total
length and the rotary caches' row count (Range(0, max + 1)): 10 dims of each fused decoder were
fresh. Checked against onnxruntime at several sizes, elements too."""

import numpy as np
import pytest
from helpers import I64, F, init, model
from onnx import helper
from oracle import check, random_cases

import onnxsym

INPUTS = [("past_key", F, ["batch", 2, "past", 4]), ("ids", I64, ["batch", "seq"])]
SIZES = [{"batch": 1, "past": 5, "seq": 3}, {"batch": 2, "past": 1, "seq": 1}, {"batch": 1, "past": 9, "seq": 6}]


def _positions(delta, reduce_op, keepdims):
    """Range(past, past + seq, delta) (or its reverse, for a negative delta), unsqueezed to
    (1, n) and reduced to its one element; then Range(0, that + 1) as the caches' rows."""
    n = helper.make_node
    ends = ["p", "e"] if delta > 0 else ["e1", "p1"]
    nodes = [n("Shape", ["past_key"], ["pv"], start=2, end=3), n("Squeeze", ["pv"], ["p"]),
             n("Shape", ["ids"], ["sv"], start=1, end=2), n("Squeeze", ["sv"], ["s"]), n("Add", ["p", "s"], ["e"]),
             n("Sub", ["e", "one"], ["e1"]), n("Sub", ["p", "one"], ["p1"]),
             n("Range", ends + ["d"], ["pos"]), n("Unsqueeze", ["pos", "zero"], ["row"]),
             n(reduce_op, ["row", "one_axis"], ["m"], keepdims=keepdims),
             n("Add", ["m", "one"], ["rows"]), n("Reshape", ["rows", "scalar"], ["rows0"]),
             n("Range", ["z", "rows0", "one"], ["cache_rows"])]
    inits = [init("one", np.array(1)), init("zero", np.array([0])), init("one_axis", np.array([1])),
             init("d", np.array(delta)), init("z", np.array(0)), init("scalar", np.zeros((0,), np.int64))]
    return model(nodes, INPUTS, ["m", "cache_rows"], inits, opset=18)


@pytest.mark.parametrize("delta", [1, 2, -1, -3])
@pytest.mark.parametrize("reduce_op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_the_reduced_position_range_is_its_last_or_first_element(delta, reduce_op, keepdims):
    m = _positions(delta, reduce_op, keepdims)
    res = check(m, random_cases(INPUTS, SIZES), values=("m",))
    assert not res.unresolved(), res.unresolved()


def test_the_max_of_a_range_that_may_be_empty_is_unknown():
    """Range(0, seq - 1) is empty at seq == 1, where ReduceMax has no element to give, so the
    reduction's value stays unknown."""
    n = helper.make_node
    nodes = [n("Shape", ["ids"], ["sv"], start=1, end=2), n("Squeeze", ["sv"], ["s"]), n("Sub", ["s", "one"], ["s1"]),
             n("Range", ["z", "s1", "one"], ["pos"]), n("ReduceMax", ["pos"], ["m"], keepdims=0)]
    m = model(nodes, [("ids", I64, ["batch", "seq"])], ["m"], [init("one", np.array(1)), init("z", np.array(0))],
              opset=18)
    res = onnxsym.infer(m)
    assert res.values["m"].value is None


def test_a_reduction_over_part_of_a_range_keeps_no_value():
    """(2, n) rows of one Range each: ReduceMax over axis 1 gives two elements, not one value."""
    n = helper.make_node
    nodes = [n("Shape", ["ids"], ["sv"], start=1, end=2), n("Squeeze", ["sv"], ["s"]),
             n("Range", ["z", "s", "one"], ["pos"]), n("Unsqueeze", ["pos", "zero"], ["row"]),
             n("Concat", ["row", "row"], ["rows"], axis=0), n("ReduceMax", ["rows", "one_axis"], ["m"], keepdims=0)]
    inits = [init("one", np.array(1)), init("z", np.array(0)), init("zero", np.array([0])),
             init("one_axis", np.array([1]))]
    m = model(nodes, [("ids", I64, ["batch", "seq"])], ["m"], inits, opset=18)
    res = check(m, random_cases([("ids", I64, ["batch", "seq"])], SIZES[:2]))
    assert res.values["m"].value is None
