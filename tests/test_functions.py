"""Nodes inferred through a function body: model-local functions (attribute
references, nested calls) and ONNX ops the standard defines by a function."""

import contextlib

import helpers
import numpy as np
import pytest
from helpers import I64, F
from onnx import AttributeProto, helper
from oracle import check
from test_control_flow import SIZES, dims_text

import onnxsym
from onnxsym import registry

LOCAL = "local.fn"


def ref_attr(name, ref, kind=AttributeProto.INT):
    a = AttributeProto()
    a.name, a.ref_attr_name, a.type = name, ref, kind
    return a


def cat_function():
    """Cat<axis>(a, b) = Relu(Concat<axis=axis>(a, b))."""
    concat = helper.make_node("Concat", ["a", "b"], ["c"])
    concat.attribute.append(ref_attr("axis", "axis"))
    return helper.make_function(LOCAL, "Cat", ["a", "b"], ["y"], [concat, helper.make_node("Relu", ["c"], ["y"])],
                                [helper.make_opsetid("", 17)], attributes=["axis"])


def twice_function():
    """Twice<axis>(a) = Cat<axis>(Cat<axis=0>(a, a), a): a function calling a function."""
    inner = helper.make_node("Cat", ["a", "a"], ["aa"], domain=LOCAL, axis=0)
    outer = helper.make_node("Cat", ["aa", "aa"], ["y"], domain=LOCAL)
    outer.attribute.append(ref_attr("axis", "axis"))
    return helper.make_function(LOCAL, "Twice", ["a"], ["y"], [inner, outer],
                                [helper.make_opsetid("", 17), helper.make_opsetid(LOCAL, 1)], attributes=["axis"])


def model(nodes, outputs, functions, opset=17, inputs=(("x", F, ["batch", "seq"]),)):
    return helpers.model(nodes, inputs, outputs, opset=opset, opsets=[(LOCAL, 1)], functions=functions)


def cases(shape=lambda b: (b["batch"], b["seq"])):
    return [(b, {"x": np.random.default_rng(i).standard_normal(shape(b)).astype(np.float32)})
            for i, b in enumerate(SIZES)]


def test_local_function_with_an_attribute_reference():
    m = model([helper.make_node("Cat", ["x", "x"], ["by_col"], domain=LOCAL, axis=1),
               helper.make_node("Cat", ["x", "by_col"], ["by_row"], domain=LOCAL, axis=0)],
              ["by_col", "by_row"], [cat_function()])
    m.graph.node[1].input[1] = "x"
    res = check(m, cases(), annotated=True)
    assert dims_text(res, "by_col") == ["batch", "2*seq"]
    assert dims_text(res, "by_row") == ["2*batch", "seq"]
    assert not res.no_rule


def test_nested_function_calls():
    m = model([helper.make_node("Twice", ["x"], ["y"], domain=LOCAL, axis=1)], ["y"],
              [cat_function(), twice_function()])
    res = check(m, cases(), annotated=True)
    assert dims_text(res, "y") == ["2*batch", "2*seq"]


def test_function_values_do_not_leak_into_the_graph():
    """The function's inner names ('c', 'y') may equal the graph's own."""
    m = model([helper.make_node("Cat", ["x", "x"], ["c"], domain=LOCAL, axis=1),
               helper.make_node("Flatten", ["c"], ["y"], axis=0)], ["c", "y"], [cat_function()])
    res = check(m, cases(), annotated=True)
    assert dims_text(res, "c") == ["batch", "2*seq"] and dims_text(res, "y") == ["1", "2*batch*seq"]


def test_recursive_function_gets_unknown_outputs_not_a_hang():
    loop = helper.make_function(LOCAL, "Self", ["a"], ["y"], [helper.make_node("Self", ["a"], ["y"], domain=LOCAL)],
                                [helper.make_opsetid(LOCAL, 1)])
    res = onnxsym.infer(model([helper.make_node("Self", ["x"], ["y"], domain=LOCAL)], ["y"], [loop]))
    assert res.shape("y") is None


@pytest.fixture
def without_rule():
    """Takes an op's rule away for one test, so that its function body must serve."""
    import onnxsym.rules  # noqa: F401  (registers the built-in rules first)

    with contextlib.ExitStack() as stack:
        yield lambda op: stack.enter_context(registry.override(op, None))


def test_op_without_a_rule_is_inferred_through_its_schema_function(without_rule):
    """Swish (opset 24) is defined by a function body in the standard."""
    without_rule("Swish")
    m = model([helper.make_node("Swish", ["x"], ["y"], alpha=0.5)], ["y"], [], opset=24)
    m.ir_version = 10
    res = check(m, cases(), annotated=True)
    assert dims_text(res, "y") == ["batch", "seq"] and not res.no_rule


def test_schema_function_with_values_the_rules_cannot_follow_gives_honest_unknowns(without_rule):
    """CenterCropPad's body computes its pads with integer division of shape values:
    the rank is known through the body and no dim is wrong."""
    without_rule("CenterCropPad")
    m = model([helper.make_node("Shape", ["x"], ["shp"]),
               helper.make_node("Concat", ["three", "shp"], ["target"], axis=0),
               helper.make_node("Slice", ["target", "zero", "two"], ["crop"]),
               helper.make_node("CenterCropPad", ["x", "crop"], ["y"])], ["y"], [], opset=18)
    m.graph.initializer.extend([helper.make_tensor(n, I64, [1], [v])
                                for n, v in (("zero", 0), ("two", 2), ("three", 3))])
    res = check(m, cases(), annotated=True)
    assert len(res.shape("y")) == 2 and not res.no_rule


def test_context_dependent_schema_function(without_rule):
    """RMSNormalization's body (opset 23) is built for the call's input types."""
    without_rule("RMSNormalization")
    m = model([helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=-1)], ["y"], [], opset=23,
              inputs=(("x", F, ["batch", "seq"]), ("scale", F, ["seq"])))
    m.ir_version = 10
    both = [(b, {**f, "scale": np.ones(b["seq"], np.float32)}) for b, f in cases()]
    res = check(m, both, annotated=True)
    assert dims_text(res, "y") == ["batch", "seq"] and not res.no_rule


def test_a_function_body_runs_at_its_own_opset_even_after_the_graph_used_the_op():
    """The main graph (opset 17) uses Squeeze with axes as an input; the function body
    imports opset 11, where axes is an attribute. Checked against onnx's reference
    evaluator, which honors the function's opset import (onnxruntime refuses the model)."""
    import numpy as np
    from onnx.reference import ReferenceEvaluator

    fn = helper.make_function("local", "SqueezeOld", ["x"], ["y"], [helper.make_node("Squeeze", ["x"], ["y"], axes=[1])],
                              opset_imports=[helper.make_opsetid("", 11)])
    m = helpers.model([helper.make_node("Squeeze", ["x", "ax"], ["s"], name="new"),
                       helper.make_node("SqueezeOld", ["x"], ["y"], domain="local", name="call")],
                      [("x", F, ["batch", 1, 3])], [("s", F), ("y", F)], [helpers.init("ax", np.array([1], np.int64))],
                      opsets=[("local", 1)], functions=[fn])
    res = onnxsym.infer(m)
    for batch in (2, 5):
        real = ReferenceEvaluator(m).run(None, {"x": np.ones((batch, 1, 3), np.float32)})
        for name, arr in zip(["s", "y"], real):
            assert tuple(onnxsym.evaluate(d, {"batch": batch}) for d in res.shape(name)) == arr.shape
