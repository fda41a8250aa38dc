"""Integer semantics of shape values (issue 12, item 4), each checked against onnxruntime:
truncating Div, Mod with fmod 0 and 1, Neg/Abs/Sign/Clip/Min/Max, wrapping to the dtype's
width, narrow casts with their bound, and ranges learned from what a Conv or pool needs."""

import os

import numpy as np
import pytest
from helpers import I64, F, init, model
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from oracle import check, no_fresh, random_cases

import onnxsym
from onnxsym import dims
from onnxsym.commands.verify import verify
from onnxsym.errors import ShapeContradiction, VerificationError
from onnxsym.facts.fact import Origin, Rel
from onnxsym.facts.narrowing import Unreachable, direction, implied_ranges
from onnxsym.semantics import intops

ort = pytest.importorskip("onnxruntime")
HERE = os.path.dirname(os.path.abspath(__file__))
SEGFORMER = os.path.join(HERE, "..", "models", "real", "segformer_tiny_dynamo.onnx")


def _seq_minus(k, name="d"):
    """Nodes computing ``seq - k`` (an int64 scalar of unknown sign) from input x[batch, seq]."""
    return [helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "one"], ["seq"], axis=0),
            helper.make_node("Sub", ["seq", k], [name])]


SIZES = [{"batch": 2, "seq": 1}, {"batch": 3, "seq": 4}, {"batch": 1, "seq": 9}, {"batch": 2, "seq": 6}]


def test_div_mod_and_friends_on_a_value_of_unknown_sign_are_exact():
    """``seq - 5`` is negative at seq=1 and 4: Div truncates, Mod follows the divisor (fmod=0)
    or the dividend (fmod=1), each as onnxruntime computes it, at four sizes."""
    inputs = [("x", F, ["batch", "seq"])]
    inits = [init("one", np.array([1], np.int64)), init("five", np.array([5], np.int64)),
             init("three", np.array([3], np.int64)), init("mthree", np.array([-3], np.int64)),
             init("lo", np.array(-2, np.int64)), init("hi", np.array(2, np.int64))]
    nodes = _seq_minus("five") + [
        helper.make_node("Div", ["d", "three"], ["div"]),
        helper.make_node("Div", ["d", "mthree"], ["divn"]),
        helper.make_node("Mod", ["d", "three"], ["mod"]),
        helper.make_node("Mod", ["d", "mthree"], ["modn"]),
        helper.make_node("Mod", ["d", "three"], ["fmod"], fmod=1),
        helper.make_node("Mod", ["d", "mthree"], ["fmodn"], fmod=1),
        helper.make_node("Neg", ["d"], ["neg"]),
        helper.make_node("Abs", ["d"], ["abs"]),
        helper.make_node("Sign", ["d"], ["sign"]),
        helper.make_node("Clip", ["d", "lo", "hi"], ["clip"]),
        helper.make_node("Max", ["d", "mthree"], ["max"]),
        helper.make_node("Min", ["d", "one"], ["min"]),
    ]
    outs = ["div", "divn", "mod", "modn", "fmod", "fmodn", "neg", "abs", "sign", "clip", "max", "min"]
    res = check(model(nodes, inputs, outs, inits), random_cases(inputs, SIZES), values=outs)
    assert all(res.values[o].value is not None for o in outs)


def test_div_of_a_provably_nonnegative_value_is_floor_division():
    inputs = [("x", F, ["batch", "seq"])]
    inits = [init("one", np.array([1], np.int64)), init("four", np.array([4], np.int64))]
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "one"], ["seq"], axis=0),
             helper.make_node("Div", ["seq", "four"], ["q"])]
    res = check(model(nodes, inputs, ["q"], inits), random_cases(inputs, SIZES), values=["q"])
    assert res.values["q"].value == (dims.sym("seq") // 4,)


def _convs_then_shape_div(kernel2=4):
    """A stride-2 Conv, then a Conv of kernel ``kernel2``; the graph computes the second's
    output length itself, ``(w1 - kernel2) // 2 + 1`` with a Div (as the dynamo exporter
    does) before the second Conv, and reshapes the second's output with it. ``w1 - kernel2`` is
    negative unless the second Conv's need is known."""
    inputs = [("x", F, [1, 1, 1, "w"])]
    inits = [init("k1", np.ones([1, 1, 1, 3], np.float32)), init("k2", np.ones([1, 1, 1, kernel2], np.float32)),
             init("three", np.array([3], np.int64)), init("kk", np.array([kernel2], np.int64)),
             init("two", np.array([2], np.int64)), init("one", np.array([1], np.int64)),
             init("head", np.array([1, 1], np.int64))]
    nodes = [helper.make_node("Conv", ["x", "k1"], ["c1"], strides=[1, 2]),
             helper.make_node("Shape", ["c1"], ["s"]), helper.make_node("Gather", ["s", "three"], ["w1"], axis=0),
             helper.make_node("Sub", ["w1", "kk"], ["n"]), helper.make_node("Div", ["n", "two"], ["q"]),
             helper.make_node("Add", ["q", "one"], ["len"]),
             helper.make_node("Concat", ["head", "len"], ["target"], axis=0),
             helper.make_node("Conv", ["c1", "k2"], ["c2"], strides=[1, 2]),
             helper.make_node("Reshape", ["c2", "target"], ["r"])]
    return model(nodes, inputs, ["r", "len"], inits), inputs


def test_a_conv_narrows_the_range_of_its_input_symbol_and_the_div_becomes_floor_division():
    m, inputs = _convs_then_shape_div()
    res = onnxsym.infer(m)
    # the second Conv needs (w - 3)//2 + 1 >= 4, so w >= 9; the Reshape comes before it
    assert res.symbol_ranges()["w"] == (9, dims.INT64_MAX)
    # (the text of a constraint is the algebra's canonical form: what it means is checked)
    first, second = res.constraints
    assert (first.rel, first.origin, first.node, str(first)) == (Rel.GE, Origin.NEEDED, "Conv_0", "w >= 3")
    assert second.rel is Rel.GE and second.node == "Conv_7"
    assert [second.holds({"w": w}) for w in (8, 9)] == [False, True]
    no_fresh(res)
    assert "max" not in str(res.values["len"].value[0])  # a floor division once w >= 9 is known
    check(m, random_cases(inputs, [{"w": 9}, {"w": 10}, {"w": 30}]), values=["len"])
    with pytest.raises(Exception, match="Conv"):  # and the bound is tight: onnxruntime refuses w=8
        check(m, random_cases(inputs, [{"w": 8}]))


def test_verify_runs_only_sizes_where_the_convs_run():
    m, _ = _convs_then_shape_div(kernel2=5)
    report = verify(m)
    assert report.ok and report.checked_dims > 0 and report.unresolved_dims == 0
    assert all(a["w"] >= 11 for a in report.assignments)


def test_a_pool_may_give_an_empty_output_and_needs_only_a_nonnegative_size():
    """onnxruntime's pools return 0 windows for an input 1 shorter than the kernel; they
    refuse a negative size. A pool's need is weaker than a Conv's."""
    inputs = [("x", F, [1, 1, "w"])]
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[5]),
             helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[5], strides=[3])]
    m = model(nodes, inputs, ["p", "a"])
    res = check(m, random_cases(inputs, [{"w": 4}, {"w": 5}, {"w": 9}]))
    assert res.symbol_ranges()["w"] == (4, dims.INT64_MAX)
    assert [str(c) for c in res.constraints] == ["w >= 4"]
    with pytest.raises(Exception, match="MaxPool|negative"):
        check(m, random_cases(inputs, [{"w": 3}]))


def test_a_conv_that_can_never_run_is_a_contradiction():
    inputs = [("x", F, [1, 1, 3])]
    m = model([helper.make_node("Conv", ["x", "k"], ["y"])], inputs, ["y"], [init("k", np.ones([1, 1, 5], np.float32))])
    with pytest.raises(ShapeContradiction, match="Conv node .* requires 3 >= 5"):
        onnxsym.infer(m)


def test_segformer_resolves_fully_with_no_wrong_dim():
    """A SegFormer exported by the dynamo exporter (models/real/make_segformer.py) computes its
    reduced key/value length with a Div of ``(width - 1)//4 - 7``, negative only where the
    reduction Conv cannot run: 138 dims were unresolved."""
    res = onnxsym.infer(SEGFORMER)
    no_fresh(res)
    assert res.symbol_ranges()["width"] == res.symbol_ranges()["height"] == (29, dims.INT64_MAX)
    sizes = [{"batch": 2, "height": 64, "width": 96}, {"batch": 1, "height": 29, "width": 45}]
    report = verify(SEGFORMER, sizes, result=res)
    assert report.ok and report.checked_dims > 800 and report.unresolved_dims == 0, report.mismatches[:1]
    with pytest.raises(VerificationError, match="Conv"):  # the learned bound is tight
        verify(SEGFORMER, [{"batch": 1, "height": 29, "width": 28}], result=res)


# --------------------------------------------------------------------------- wrapping


def _const_of_shape(nodes, inits, out_dim):
    """``nodes`` compute int64 ``out_dim``; a ConstantOfShape of it gives a dim to check."""
    return model(nodes + [helper.make_node("ConstantOfShape", [out_dim], ["y"])], [("x", F, ["batch"])], ["y"], inits)


def test_uint8_sub_wraps_to_255():
    inits = [init("a", np.array([1], np.uint8)), init("b", np.array([2], np.uint8))]
    nodes = [helper.make_node("Sub", ["a", "b"], ["d"]), helper.make_node("Cast", ["d"], ["d64"], to=I64)]
    res = check(_const_of_shape(nodes, inits, "d64"), random_cases([("x", F, ["batch"])], [{"batch": 1}, {"batch": 2}]))
    assert res.shape("y") == (255,)


def test_an_int64_cast_to_int32_and_back_keeps_the_low_32_bits():
    inits = [init("a", np.array([2**32 + 3], np.int64))]
    nodes = [helper.make_node("Cast", ["a"], ["a32"], to=TensorProto.INT32),
             helper.make_node("Cast", ["a32"], ["a64"], to=I64)]
    res = check(_const_of_shape(nodes, inits, "a64"), random_cases([("x", F, ["batch"])], [{"batch": 1}, {"batch": 2}]))
    assert res.shape("y") == (3,)


def test_int32_arithmetic_wraps_and_a_float32_cast_rounds():
    inits = [init("big", np.array([2**20], np.int32)), init("k", np.array([2**12 + 1], np.int32)),
             init("odd", np.array([2**24 + 1], np.int64))]
    nodes = [helper.make_node("Mul", ["big", "k"], ["p"]),  # 2**32 + 2**20 wraps to 2**20
             helper.make_node("Cast", ["p"], ["p64"], to=I64),
             helper.make_node("Cast", ["odd"], ["f"], to=F),  # 2**24 + 1 is 2**24 in float32
             helper.make_node("Cast", ["f"], ["f64"], to=I64),
             helper.make_node("Sub", ["f64", "p64"], ["d"]), helper.make_node("Div", ["d", "k64"], ["q"])]
    inits.append(init("k64", np.array([2**12], np.int64)))
    res = check(_const_of_shape(nodes, inits, "q"), random_cases([("x", F, ["batch"])], [{"batch": 1}, {"batch": 2}]))
    assert res.shape("y") == ((2**24 - 2**20) // 2**12,)


def test_a_symbolic_element_cast_to_int32_records_its_bound():
    inputs = [("x", F, ["batch", "seq"])]
    inits = [init("k", np.array([64], np.int32))]
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["s32"], to=TensorProto.INT32),
             helper.make_node("Mul", ["s32", "k"], ["p"]), helper.make_node("Cast", ["p"], ["p64"], to=I64),
             helper.make_node("ConstantOfShape", ["p64"], ["y"])]
    res = check(model(nodes, inputs, ["y"], inits),
                random_cases(inputs, [{"batch": 2, "seq": 3}, {"batch": 1, "seq": 5}]))
    assert res.shape("y") == (64 * dims.sym("batch"), 64 * dims.sym("seq"))
    assert sorted((str(c), c.origin) for c in res.constraints) == [
        ("64*batch <= 2147483647", Origin.EXACT_WITHIN), ("64*seq <= 2147483647", Origin.EXACT_WITHIN),
        ("batch <= 2147483647", Origin.EXACT_WITHIN), ("seq <= 2147483647", Origin.EXACT_WITHIN)]


def test_a_symbolic_element_wraps_exactly_in_a_narrow_type():
    """``seq - 5`` in uint8 is ``(seq - 5) % 256`` (252 at seq=1), and in int8 ``seq * 50``
    wraps to ``-128 + (50*seq + 128) % 256``; in uint64 a negative value would pass int64:
    not known."""
    inputs = [("x", F, ["batch", "seq"])]
    inits = [init("one", np.array([1], np.int64)), init("five", np.array([5], np.int64)),
             init("fifty", np.array([50], np.int8)), init("k", np.array([300], np.int64))]
    nodes = _seq_minus("five") + [
        helper.make_node("Cast", ["d"], ["u"], to=TensorProto.UINT8),
        helper.make_node("Cast", ["u"], ["u64"], to=I64),
        helper.make_node("Cast", ["seq"], ["s8"], to=TensorProto.INT8),
        helper.make_node("Mul", ["s8", "fifty"], ["p8"]),
        helper.make_node("Cast", ["p8"], ["p64"], to=I64),
        helper.make_node("Add", ["p64", "k"], ["pos"]),  # -128 <= p8 <= 127: a valid size
        helper.make_node("Concat", ["u64", "pos"], ["target"], axis=0),
        helper.make_node("ConstantOfShape", ["target"], ["y"]),
        helper.make_node("Cast", ["d"], ["big"], to=TensorProto.UINT64)]
    m = model(nodes, inputs, ["y", "big"], inits)
    res = check(m, random_cases(inputs, [{"batch": 1, "seq": 1}, {"batch": 1, "seq": 3}, {"batch": 2, "seq": 7}]))
    no_fresh(res)
    assert res.values["big"].value is None and not res.constraints


# --------------------------------------------------------------------------- the algebra


def test_narrowing_by_monotone_expressions():
    w, h = dims.sym("w"), dims.sym("h")
    assert implied_ranges((w - 1) // 4 + 1, 8) == {dims.as_sym(w): (29, dims.INT64_MAX)}
    assert implied_ranges(10 - w, 3) == {dims.as_sym(w): (1, 7)}
    assert implied_ranges(dims.dmax(w, 3) + h, 8) == {}  # h may be large: w alone is not bounded
    assert implied_ranges(w + 0 * h, 1) == {}  # already proven
    assert direction(w % 4, dims.as_sym(w)) is None
    assert direction(w * h - 3, dims.as_sym(h)) == 1
    with pytest.raises(Unreachable):
        implied_ranges(w % 4, 5)


def test_direction_through_max_and_floor_division():
    """MaxViT's stem: ``max(max(0, (h + 1)//2 - 2)//2 + 1, (h + 3)//4)//4`` grows with h (the
    difference of neighbours loses track through max); ``h//w`` has no direction in w's sign."""
    h, w = dims.sym("h"), dims.sym("w")
    stem = dims.floordiv(dims.dmax(dims.floordiv(dims.dmax(0, dims.floordiv(h + 1, 2) - 2), 2) + 1,
                                   dims.floordiv(h + 3, 4)), 4)
    values = [dims.evaluate(stem, {"h": v}) for v in range(1, 200)]
    assert values == sorted(values) and direction(stem, dims.as_sym(h)) == 1
    assert direction(-stem, dims.as_sym(h)) == -1
    assert implied_ranges(-stem, 0) == {dims.as_sym(h): (1, 12)}  # stem is 0 for h <= 12 only
    assert direction(dims.floordiv(h - 1, w), dims.as_sym(w)) is None
    assert direction(dims.dmax(h, 3) - dims.dmin(h, 2), dims.as_sym(h)) is None  # one part each way


def test_never_equals_by_residues_divisibility_and_generalized_atoms():
    from onnxsym.facts.edges import never_equals, never_equals_generalized

    a, h = dims.sym("a"), dims.sym("h")
    assert never_equals(16 * dims.floordiv(a, 4) - a, 0)  # a = 4q + r: 12q - r, never 0 for a >= 1
    assert not never_equals(4 * dims.floordiv(a, 4) - a, 0)  # 0 at a = 4
    m = dims.dmax(dims.floordiv(dims.dmax(0, dims.floordiv(h + 1, 2) - 2), 2) + 1, dims.floordiv(h + 3, 4))
    assert not never_equals(16 * dims.floordiv(m, 4) - m, 0)  # residues of h do not undo the max
    assert never_equals_generalized(16 * dims.floordiv(m, 4) - m, 0)
    assert not never_equals_generalized(4 * dims.floordiv(m, 4) - m, 0)
    for v in range(1, 300):
        assert dims.evaluate(16 * dims.floordiv(m, 4) - m, {"h": v}) != 0
    with dims.current().child({}):
        w = dims.sym("w24", 1, 24)  # (w + 7)//8 in [1, 3]
        d = 512 * dims.floordiv(h + 7, 32) - dims.floordiv(h + 7, 8) * dims.floordiv(w + 7, 8)
        assert never_equals_generalized(d, 0)
    assert all(dims.evaluate(d, {"h": x, "w24": y}) != 0 for x in range(1, 400) for y in range(1, 25))


@settings(max_examples=200, deadline=None)
@given(st.integers(-50, 50), st.integers(-9, 9).filter(bool), st.integers(0, 40))
def test_trunc_div_and_fmod_forms_agree_with_c_on_every_value(k, b, v):
    x = dims.sym("x", 0, 40)
    a = x + k
    q, r, m = intops.trunc_div(a, b), intops.c_fmod(a, b), intops.py_mod(a, b)
    n = v + k
    c_q = int(np.trunc(n / b)) if abs(n) < 2**52 else None
    assert dims.evaluate(q, {"x": v}) == c_q
    assert dims.evaluate(r, {"x": v}) == int(np.fmod(n, b))
    assert dims.evaluate(m, {"x": v}) == n % b


def test_a_conv_in_a_branch_that_may_not_run_narrows_nothing():
    """onnxruntime runs the If below at w=2 when c is false: the Conv's need holds only under c
    (recorded with that guard), and narrows no range."""
    conv = helper.make_graph([helper.make_node("Conv", ["x", "k"], ["y"])], "then", [],
                             [helper.make_tensor_value_info("y", F, None)])
    keep = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "else", [],
                             [helper.make_tensor_value_info("y", F, None)])
    inputs = [("x", F, [1, 1, "w"]), ("c", TensorProto.BOOL, [])]
    m = model([helper.make_node("If", ["c"], ["o"], then_branch=conv, else_branch=keep)], inputs, ["o"],
              [init("k", np.ones([1, 1, 5], np.float32))])
    res = onnxsym.infer(m)
    assert res.symbol_ranges()["w"] == (1, dims.INT64_MAX)
    (c,) = res.constraints
    assert str(c) == "w >= 5" and [(g.text, g.value) for g in c.when] == [("c", True)]
    d = res.domain()
    assert d.ranges["w"] == (1, dims.INT64_MAX) and d.violated({"w": 2}) is None
    assert d.conditions[0].describe().startswith("if c: w >= 5: Conv")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"x": np.ones([1, 1, 2], np.float32), "c": np.array(False)})[0].shape == (1, 1, 2)


def test_show_lists_the_learned_ranges():
    from click.testing import CliRunner

    from onnxsym.cli import main

    r = CliRunner().invoke(main, ["show", SEGFORMER, "-v"])  # (a filter would keep only its values' assumptions)
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line.split()[1:3] for line in r.output.splitlines() if line.startswith("  ")}
    assert rows["width"] == ["[29,", "2**63-1]"] and rows["batch"] == ["[1,", "2**63-1]"]
    assert "(width + 3)//4 >= 8" in r.output or ">= 8" in r.output
