"""Subgraph scoping (onnxsym.inference.scope): a body sees the values around it, a name it defines
again hides the outer one inside the body only; checked against onnxruntime."""

import numpy as np
from helpers import I64, F, model
from onnx import TensorProto, helper
from oracle import check

from onnxsym import free_symbols
from onnxsym.inference.scope import Scope

BOOL = TensorProto.BOOL


def test_an_inner_scope_reads_through_writes_to_itself_and_reports_only_what_it_changed():
    outer = Scope({"x": 1, "y": 2}, {"": 17})
    inner = outer.inner()
    inner.values["y"] = 3  # hides the outer y
    inner.values["z"] = 4
    inner.values["x"] = outer.values["x"]  # the same object again: nothing changed
    assert (inner.values["x"], inner.values.get("y"), inner.values.get("w", 5)) == (1, 3, 5)
    assert "x" in inner.values and "w" not in inner.values
    assert dict(inner.changed()) == {"y": 3, "z": 4}
    assert dict(outer.values) == {"x": 1, "y": 2}
    # what the inner graph's nodes may not produce again: its names then, and the outer ones
    names = inner.names()
    inner.values["later"] = 6
    assert "z" in names and "x" in names and "later" not in names
    assert inner.producer is outer.producer and inner.unknown_rank is outer.unknown_rank


def test_a_function_scope_sees_only_its_inputs_and_keeps_its_records():
    outer = Scope({"x": 1}, {"": 17})
    body = outer.function({"a": 2}, {"": 17})
    assert "x" not in body.values and body.values["a"] == 2
    assert body.ops is outer.ops  # the same opsets: the rules found so far hold
    assert body.producer is not outer.producer and body.unknown_rank is not outer.unknown_rank
    assert outer.function({}, {"": 18}).ops is not outer.ops


def test_a_body_input_named_as_an_outer_value_hides_it_inside_the_body_only():
    # The Loop body's carried input is named 'x' like the graph input: inside, 'x' is the
    # carried value (batch, 1 + i); after the Loop, 'x' is the graph input again.
    g = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Concat", ["x", "s"], ["x_next"], axis=1)], "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", BOOL, []),
         helper.make_tensor_value_info("x", F, None)],
        [helper.make_tensor_value_info("cond_out", BOOL, None), helper.make_tensor_value_info("x_next", F, None)])
    m = model([helper.make_node("Constant", [], ["trip"], value=helper.make_tensor("t", I64, [], [3])),
               helper.make_node("ReduceSum", ["x"], ["s"], keepdims=1, axes=[1]),
               helper.make_node("Loop", ["trip", "", "s"], ["s_out"], body=g),
               helper.make_node("Relu", ["x"], ["after"])],
              [("x", F, ["batch", "seq"])], ["s_out", "after"], opset=12)
    cases = [(b, {"x": np.ones((b["batch"], b["seq"]), np.float32)}) for b in ({"batch": 2, "seq": 5}, {"batch": 3, "seq": 1})]
    res = check(m, cases, annotated=True)  # no fresh dim in either output
    assert [str(d) for d in res.shape("s_out")] == ["batch", "4"]
    assert [str(d) for d in res.shape("after")] == ["batch", "seq"]
    # the body's x is the carried value, not the graph input
    assert "seq" not in {s.name for s in free_symbols(res.subgraph_values["x"].shape[1])}
