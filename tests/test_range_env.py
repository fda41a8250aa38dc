"""A symbol is its name; its range is an environment's. Two inferences in one process with
another range for one name share no simplification (checked against onnxruntime), and a
range in an inference only narrows."""

import numpy as np
import pytest
from helpers import model
from onnx import TensorProto, helper
from oracle import run_ort

import onnxsym
from onnxsym import dims


def _clamped():
    """y = x[:10] and z = x[:n // 4 * 4]: min(n, 10) and the dims a range decides (n at most 10)."""
    ten = helper.make_tensor("ten", TensorProto.INT64, [1], [10])
    zero = helper.make_tensor("zero", TensorProto.INT64, [1], [0])
    four = helper.make_tensor("four", TensorProto.INT64, [1], [4])
    nodes = [helper.make_node("Slice", ["x", "zero", "ten"], ["y"]),
             helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Div", ["s", "four"], ["q"]),
             helper.make_node("Mul", ["q", "four"], ["e"]),
             helper.make_node("Min", ["e", "ten"], ["m"]),
             helper.make_node("Slice", ["x", "zero", "m"], ["z"])]
    return model(nodes, [("x", TensorProto.FLOAT, ["n"])], ["y", "z"], inits=[ten, zero, four])


def _check(res, m, sizes):
    for n in sizes:
        real = run_ort(m, {"x": np.zeros(n, np.float32)})
        for name in ("y", "z"):
            (d,) = res.shape(name)
            assert dims.evaluate(d, {"n": n}) == real[name].shape[0], (name, n, d)


def test_two_inferences_with_other_ranges_share_no_simplification():
    m = _clamped()
    n = dims.sym("n")
    narrow = onnxsym.infer(m, ranges={"n": (1, 10)})
    assert narrow.shape("y") == (n,)  # min(n, 10) is n where n <= 10
    wide = onnxsym.infer(m)  # the same model, the same name, n unbounded
    assert wide.shape("y") == (dims.dmin(n, 10),) and wide.shape("y") != narrow.shape("y")
    assert wide.symbol_ranges()["n"] == (1, dims.INT64_MAX) and narrow.symbol_ranges()["n"] == (1, 10)
    _check(wide, m, [3, 10, 17, 40])
    _check(narrow, m, [1, 3, 8, 10])
    again = onnxsym.infer(m, ranges={"n": (1, 10)})  # and back: the narrow run is not the wide one's
    assert again.shape("y") == narrow.shape("y") and again.shape("z") == narrow.shape("z")
    _check(onnxsym.infer(m), m, [3, 10, 17, 40])


def test_a_result_computes_under_its_own_ranges():
    m = _clamped()
    narrow = onnxsym.infer(m, ranges={"n": (1, 10)})
    wide = onnxsym.infer(m)
    (z,) = wide.shape("z")
    with narrow.symbols.env:  # n <= 10 here: the clamp goes
        assert dims.dmin(dims.symbol("n"), 10) == dims.symbol("n")
    with wide.symbols.env:
        assert dims.dmin(dims.symbol("n"), 10) != dims.symbol("n")
        assert dims.range_of(z) == (0, 10)
    # outside both, n is the default environment's: nothing either run derived is reused
    assert dims.dmin(dims.sym("n"), 10) != dims.sym("n")


def test_a_range_only_narrows_in_an_inference():
    outer = dims.current()
    env = dims.RangeEnv()
    env.declare("n", 1, 100)
    with env:
        n = dims.symbol("n")
        assert dims.dmin(n, 100) == n
        env.narrow("n", 1, 10)  # narrower: what holds under [1, 100] still does
        assert dims.dmin(n, 10) == n and dims.range_of(n) == (1, 10)
        with pytest.raises(ValueError, match="cannot widen"):
            env.declare("n", 1, 1000)
        assert dims.dmin(n, 50) == n  # unchanged by the refused widening
    assert dims.current() is outer


def test_a_child_environment_leaves_its_parent_alone():
    env = dims.RangeEnv({"n": (1, dims.INT64_MAX)})
    with env:
        n = dims.symbol("n")
        with env.child({"n": (1, 8)}):
            assert dims.dmin(n, 8) == n
        assert dims.dmin(n, 8) != n and dims.range_of(n) == (1, dims.INT64_MAX)


def test_library_symbols_are_one_object_per_name():
    a = dims.sym("seq_lib", 1, 64)
    assert dims.dmin(a, 64) == a
    b = dims.sym("seq_lib")  # the default environment: a new range replaces the old, caches dropped
    assert b is a and dims.dmin(b, 64) != b and dims.range_of(b) == (1, dims.INT64_MAX)
    assert dims.Sym("seq_lib") is dims.as_sym(a)


def test_an_environment_entered_in_between_hides_no_mixing():
    """Under n <= 8, min(n, 8) is n; taken under n's wider range it would be wrong at n = 9.
    Entering the wider environment while the narrower one is active is refused, also with
    another (unrelated) environment entered in between."""
    wide = dims.RangeEnv({"n": (1, dims.INT64_MAX)})
    narrow = wide.child({"n": (1, 8)})
    with narrow:
        n = dims.symbol("n")
        derived = dims.dmin(n, 8)
        assert derived is n
        with dims.RangeEnv({"m": (1, 4)}):
            with pytest.raises(dims.MixedEnvironments, match=r"n in \[1, 8\] here"):
                with wide:
                    pass
            assert dims.current().range("m") == (1, 4)  # the refused entry changed nothing
    with wide:  # the narrower one left: the wider is free, and min(n, 8) is itself there
        assert dims.dmin(n, 8) is not n


def test_a_generator_query_computes_each_item_under_the_results_ranges():
    """``under_ranges_of_result`` on a generator (verify's runtime_values): each step runs with
    the result's environment current, and the caller's is current between the steps."""
    from types import SimpleNamespace

    from onnxsym.inference.symbols import under_ranges_of_result

    env = dims.RangeEnv({"n": (1, 8)})
    result = SimpleNamespace(env=env)

    @under_ranges_of_result
    def items(result):
        for _ in range(2):
            yield dims.current(), dims.range_of(dims.symbol("n"))

    outside = dims.current()
    seen = []
    for current, n_range in items(result):
        seen.append((current is env, n_range, dims.current() is outside))
    assert seen == [(True, (1, 8), True), (True, (1, 8), True)]
