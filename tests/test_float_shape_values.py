"""Sizes computed in float, as exporters write them (found in the real-model corpus), each
checked against onnxruntime: TorchScript's ``math.ceil(h / 2) * 2`` (MobileViT's patch
unfolding) and ``torch.arange(w, dtype=float)`` (YOLOv8's anchor grid)."""


import numpy as np
import pytest
from helpers import F, init, model
from onnx import TensorProto, helper
from oracle import check, no_fresh, random_cases

import onnxsym
from onnxsym.facts.fact import Origin

pytest.importorskip("onnxruntime")

SIZES = [{"batch": 2, "seq": 5}, {"batch": 1, "seq": 8}, {"batch": 3, "seq": 1}]


def _dim_as_float(axis, out="f"):
    """Nodes: dim ``axis`` of x as a float scalar ``out``."""
    return [helper.make_node("Shape", ["x"], [f"s{axis}"]),
            helper.make_node("Gather", [f"s{axis}", f"ax{axis}"], [f"g{axis}"], axis=0),
            helper.make_node("Cast", [f"g{axis}"], [out], to=TensorProto.FLOAT)]


def _axes():
    return [init("ax0", np.array(0, np.int64)), init("ax1", np.array(1, np.int64)),
            init("ax2", np.array(2, np.int64))]


def _to_size(src, out):
    """Nodes: float scalar ``src`` back to int64, as a 1-element shape ``out``."""
    return [helper.make_node("Cast", [src], [out + "_i"], to=TensorProto.INT64),
            helper.make_node("Unsqueeze", [out + "_i", "zero1"], [out])]


def test_ceil_of_a_static_size_over_two_times_two():
    """x[batch, 7, 5]: ceil(7 / 2) * 2 = 8 and round(5 / 2) = 2 (half to even), computed in
    float32 and cast back; ConstantOfShape of them has onnxruntime's shape."""
    nodes = _dim_as_float(1, "h") + _dim_as_float(2, "w") + [
        helper.make_node("Div", ["h", "two"], ["h2"]),
        helper.make_node("Ceil", ["h2"], ["h3"]),
        helper.make_node("Mul", ["h3", "two"], ["h4"]),
        helper.make_node("Div", ["w", "two"], ["w2"]),
        helper.make_node("Round", ["w2"], ["w3"]),
    ] + _to_size("h4", "hs") + _to_size("w3", "ws") + [
        helper.make_node("Concat", ["hs", "ws"], ["shape"], axis=0),
        helper.make_node("ConstantOfShape", ["shape"], ["y"])]
    inits = _axes() + [init("two", np.array(2.0, np.float32)), init("zero1", np.array([0], np.int64))]
    m = model(nodes, [("x", F, ["batch", 7, 5])], ["y", "shape"], inits)
    res = check(m, random_cases([("x", F, ["batch", 7, 5])], SIZES), values=("shape",))
    assert res.shape("y") == (8, 2)


def test_float_range_over_a_symbolic_size_has_that_length():
    """Range(0.0, float(seq), 1.0) has seq elements, Range(0.5, float(seq) + 2.0, 2.0) has
    ceil((seq + 1.5) / 2) = (seq + 1)//2 + 1: exact while seq is within float32's mantissa,
    which is recorded."""
    nodes = _dim_as_float(1, "f") + [
        helper.make_node("Range", ["zero", "f", "one"], ["r"]),
        helper.make_node("Add", ["f", "two"], ["f2"]),
        helper.make_node("Range", ["one", "f2", "two"], ["r2"]),
    ]
    inits = _axes() + [init("zero", np.array(0.0, np.float32)), init("one", np.array(1.0, np.float32)),
                       init("two", np.array(2.0, np.float32))]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["r", "r2"], inits)
    res = check(m, random_cases([("x", F, ["batch", "seq"])], SIZES))
    no_fresh(res)
    assert str(res.shape("r")[0]) == "seq"
    assert any(c.origin is Origin.EXACT_WITHIN and "mantissa" in c.reason for c in res.constraints)


def test_float_range_from_a_fractional_start_stays_unresolved():
    """Range(0.5, float(seq), 1.0): a start that is not an integer is not folded (a fresh
    symbol with its reason), never a guess."""
    nodes = _dim_as_float(1, "f") + [helper.make_node("Range", ["half", "f", "one"], ["r"])]
    inits = _axes() + [init("half", np.array(0.5, np.float32)), init("one", np.array(1.0, np.float32))]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["r"], inits)
    res = onnxsym.infer(m)
    (u,) = res.unresolved()
    assert "float" in u.provenance[0].reason


def test_integral_float_arithmetic_on_a_symbolic_size_folds():
    """float(seq) * 3.0 - 1.0, floored, cast to int64: 3*seq - 1, the Expand target."""
    nodes = _dim_as_float(1, "f") + [
        helper.make_node("Mul", ["f", "three"], ["a"]),
        helper.make_node("Sub", ["a", "one"], ["b"]),
        helper.make_node("Floor", ["b"], ["c"]),
    ] + _to_size("c", "n") + [helper.make_node("ConstantOfShape", ["n"], ["y"])]
    inits = _axes() + [init("three", np.array(3.0, np.float32)), init("one", np.array(1.0, np.float32)),
                       init("zero1", np.array([0], np.int64))]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["y", "n"], inits)
    res = check(m, random_cases([("x", F, ["batch", "seq"])], SIZES), values=("n",))
    assert str(res.shape("y")[0]) == "3*seq - 1"


def test_ceil_of_a_symbolic_size_over_three_in_float_is_the_ceil_division():
    """ceil(float(seq) / 3.0) is ceil_div(seq, 3) within float32's mantissa (floatops.Quotient
    has the argument; test_float_quotients.py checks sizes next to 2**24)."""
    nodes = _dim_as_float(1, "f") + [helper.make_node("Div", ["f", "three"], ["a"]),
                                     helper.make_node("Ceil", ["a"], ["c"])] + _to_size("c", "n") + [
        helper.make_node("ConstantOfShape", ["n"], ["y"])]
    inits = _axes() + [init("three", np.array(3.0, np.float32)), init("zero1", np.array([0], np.int64))]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["y", "n"], inits)
    res = check(m, random_cases([("x", F, ["batch", "seq"])], SIZES + [{"batch": 1, "seq": 3}, {"batch": 1, "seq": 4}]),
                values=("n",))
    no_fresh(res)
    assert str(res.shape("y")[0]) == "(seq + 2)//3"
