"""Shape arithmetic that must follow onnxruntime exactly or give a fresh symbol (issue 21,
items 2-4): float Range elements accumulated in the tensor's type, no bound assumed that a
real size passes (SMALLEST_ASSUMABLE), and every search of the algebra bounded in its work.
Each graph is checked against onnxruntime at concrete sizes, the ones that broke included."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers import I32, I64, F, init, model
from onnx import TensorProto, helper
from oracle import check, random_cases, run_ort

import onnxsym
from onnxsym import dims
from onnxsym.dims import quasi
from onnxsym.facts.fact import Origin
from onnxsym.semantics import floatops, intops

pytest.importorskip("onnxruntime")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUTS = [("x", F, ["seq"])]


def _sizes(*seqs):
    return [{"seq": s} for s in seqs]


def _shape_as(dtype, out="si"):
    """Nodes: x's shape cast to ``dtype`` (``out``)."""
    return [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], [out], to=dtype)]


def _np(dtype):
    return helper.tensor_dtype_to_np_dtype(dtype)


def _float_elements_are_onnxruntimes(res, m, name):
    """The float elements onnxsym carries for ``name`` are onnxruntime's, bit for bit (the
    oracle's ``values`` compares integer elements only)."""
    got = res.values[name].value
    real = run_ort(m, {"x": np.zeros(2, np.float32)})[name]
    assert got is not None and got == tuple(real.tolist()), (got, real)


# ---------------------------------------------------------------- item 2: float Range elements


def _range_chain(dtype, start, limit, delta):
    """Range(start, limit, delta) -> Mul 5 -> Ceil -> Abs -> Cast int64 -> ReduceSum -> ConstantOfShape,
    with the Range itself an output too."""
    t = _np(dtype)
    inits = [init("st", np.array(start, t)), init("li", np.array(limit, t)), init("de", np.array(delta, t)),
             init("five", np.array(5, t))]
    nodes = [helper.make_node("Range", ["st", "li", "de"], ["r"]), helper.make_node("Mul", ["r", "five"], ["m"]),
             helper.make_node("Ceil", ["m"], ["c"]), helper.make_node("Abs", ["c"], ["a"]),
             helper.make_node("Cast", ["a"], ["ci"], to=I64), helper.make_node("ReduceSum", ["ci"], ["sum"], keepdims=1),
             helper.make_node("ConstantOfShape", ["sum"], ["y"])]
    return model(nodes, INPUTS, ["r", "y"], inits)


def test_float_range_of_the_issue_accumulates_in_float32():
    # element 8 is 0.80000007 in float32 (0 + 8*0.1 in double is 0.8): Ceil(5*it) is 5, and the sum 26
    m = _range_chain(F, 0.0, 1.0, 0.1)
    res = check(m, random_cases(INPUTS, _sizes(1, 3, 7)))
    _float_elements_are_onnxruntimes(res, m, "r")
    assert res.shape("y") == (26,)


RANGES = [(0.0, 1.0, 0.1), (1.0, 0.0, -0.1), (0.1, 2.3, 0.3), (-1.7, 2.9, 0.7), (3.0, -3.3, -0.45),
          (0.0, 10.0, 1.0 / 3), (0.5, 0.5, 0.1), (2.0, 1.0, 0.25), (0.0, 100.0, 0.7)]


@pytest.mark.parametrize("dtype", [F, TensorProto.DOUBLE])
@pytest.mark.parametrize("start,limit,delta", RANGES)
def test_float_range_count_and_elements_are_onnxruntimes(dtype, start, limit, delta):
    m = _range_chain(dtype, start, limit, delta)
    _float_elements_are_onnxruntimes(check(m, random_cases(INPUTS, _sizes(2, 9))), m, "r")


def test_range_values_mirror_numpy_accumulation():
    # the sequence v = float32(v + delta), not start + i*delta; float64 accumulates in double
    for dtype, t in ((F, np.float32), (TensorProto.DOUBLE, np.float64)):
        for start, limit, delta in RANGES:
            n, got = floatops.range_values(dtype, start, limit, delta, 1024)
            v, want = t(start), []
            for _ in range(n):
                want.append(float(v))
                v = t(v + t(delta))
            assert got == tuple(want)
            arr = run_ort(_range_chain(dtype, start, limit, delta), {"x": np.zeros(2, np.float32)})["r"]
            assert got == tuple(arr.tolist())


def test_range_of_no_defined_count_is_fresh():
    # a count past int64 is undefined in onnxruntime's cast: not guessed
    m = _range_chain(F, 0.0, 3e38, 1e-30)
    res = onnxsym.infer(m)
    assert res.unresolved()
    assert floatops.range_values(F, 0.0, 1.0, 0.0, 10) is None


def test_int64_range_of_a_huge_span_counts_exactly():
    # onnxruntime 1.32 counts integer Ranges exactly: (2**60 + 1) / 2**59 is 3 elements, though
    # the quotient in double would round to 2
    inits = [init("st", np.array(0, np.int64)), init("li", np.array(2**60 + 1, np.int64)),
             init("de", np.array(2**59, np.int64))]
    m = model([helper.make_node("Range", ["st", "li", "de"], ["r"])], INPUTS, ["r"], inits)
    check(m, random_cases(INPUTS, _sizes(1)), values=["r"])


# ---------------------------------------------------------------- item 3: no tiny bound assumed


def test_assumable_follows_smallest_assumable():
    seq, batch = dims.sym("seq"), dims.sym("batch")
    assert not intops.assumable(dims.mul(2**24, seq), 2**31 - 1)  # seq <= 127
    assert not intops.assumable(dims.add(dims.mul(2**20, seq), 1), 2**24)  # seq <= 15
    assert intops.assumable(seq, 2**31 - 1)
    assert intops.assumable(dims.mul(batch, seq), 2**31 - 1)  # either alone may reach 2**20
    assert intops.assumable(dims.mul(4, seq), 2**24)  # seq <= 2**22


def _int32_scaled(seqs):
    k = init("k", np.array([2**24], np.int32))
    nodes = _shape_as(I32) + [helper.make_node("Mul", ["si", "k"], ["m"]), helper.make_node("Div", ["m", "k"], ["q"]),
                              helper.make_node("Abs", ["q"], ["a"]), helper.make_node("Cast", ["a"], ["ai"], to=I64),
                              helper.make_node("ConstantOfShape", ["ai"], ["y"])]
    return model(nodes, INPUTS, ["q", "y"], [k])


def test_int32_product_that_wraps_at_128_is_wrapped_exactly():
    # 2**24*seq passes 2**31 - 1 at seq = 128: onnxruntime gives -56 at seq = 200
    m = _int32_scaled(None)
    res = check(m, random_cases(INPUTS, _sizes(1, 5, 127, 128, 129, 200, 255, 256, 300)), values=["q"])
    _no_tiny_bound(res)


def test_float32_quotient_past_the_mantissa_is_not_assumed_exact():
    # Ceil((seq*2**20 + 1)/2**20) is seq + 1 only while seq <= 15; 200 at seq = 200
    k, one = init("k", np.array([2**20], np.float32)), init("one", np.array([1], np.float32))
    nodes = _shape_as(F, "sf") + [helper.make_node("Mul", ["sf", "k"], ["m"]), helper.make_node("Add", ["m", "one"], ["a"]),
                                  helper.make_node("Div", ["a", "k"], ["q"]), helper.make_node("Ceil", ["q"], ["c"]),
                                  helper.make_node("Cast", ["c"], ["ci"], to=I64),
                                  helper.make_node("ConstantOfShape", ["ci"], ["y"])]
    m = model(nodes, INPUTS, ["y"], [k, one])
    check(m, random_cases(INPUTS, _sizes(1, 15, 16, 17, 200)), fresh_ok=["y"])


@pytest.mark.parametrize("dtype", [TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16,
                                   TensorProto.INT32, TensorProto.UINT32])
@pytest.mark.parametrize("op,k", [("Mul", 100), ("Mul", 3), ("Add", 120), ("Sub", 7), ("Div", 3), ("Mod", 5)])
def test_narrow_int_shape_arithmetic_wraps_as_onnxruntime(dtype, op, k):
    # the value compared at sizes on both sides of each type's wrap
    kk = init("k", np.array([k], _np(dtype)))
    nodes = _shape_as(dtype) + [helper.make_node(op, ["si", "k"], ["v"]), helper.make_node("Cast", ["v"], ["w"], to=I64)]
    m = model(nodes, INPUTS, ["w"], [kk])
    check(m, random_cases(INPUTS, _sizes(1, 2, 3, 127, 128, 200, 255, 256, 300)), values=["w"])


# ---------------------------------------------------------------- item 4: every search bounded

INT8_CHAIN = textwrap.dedent("""
    import numpy as np
    from onnx import TensorProto, helper
    from helpers import F, I64, init, model
    from oracle import check, random_cases
    inputs = [("x", F, ["seq"])]
    inits = [init("k", np.array([100], np.int8)), init("z", np.array([0], np.int64)),
             init("e", np.array([2**62], np.int64))]
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["si"], to=TensorProto.INT8),
             helper.make_node("Mul", ["si", "k"], ["m"]), helper.make_node("Cast", ["m"], ["mi"], to=I64),
             helper.make_node("Slice", ["x", "mi", "e", "z"], ["y"])]
    m = model(nodes, inputs, ["mi", "y"], inits)
    check(m, random_cases(inputs, [{"seq": s} for s in (1, 2, 3, 5, 7, 64, 200, 300)]), fresh_ok=["y"], values=["mi"])
""")


def test_int8_wrap_of_a_wrap_finishes_fast_and_matches_onnxruntime():
    # ran for minutes with memory growing (a quasi-affine form searched per new sum); the
    # subprocess makes a regression fail instead of hang
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "tests")}  # (helpers and oracle, as pytest finds them)
    r = subprocess.run([sys.executable, "-c", INT8_CHAIN], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr[-2000:]


def test_a_spent_search_budget_gives_sound_dims_and_says_so(monkeypatch):
    # with no budget for canonical forms nor lower bounds, the dims stay right (or fresh), and
    # the result says which search gave up
    monkeypatch.setattr(quasi, "CANDIDATES_BUDGET", 0)
    monkeypatch.setattr(dims.ranges, "LOWER_BOUND_WORK", 0)
    kk = init("k", np.array([100], np.int8))
    nodes = _shape_as(TensorProto.INT8) + [helper.make_node("Mul", ["si", "k"], ["v"]),
                                           helper.make_node("Cast", ["v"], ["w"], to=I64)]
    m = model(nodes, INPUTS, ["w"], [kk])
    res = check(m, random_cases(INPUTS, _sizes(1, 2, 3, 64, 200)), values=["w"])
    assert any("work bound ran out" in w for w in res.warnings), res.warnings


def _no_tiny_bound(res):
    """Every bound the result assumes excludes only sizes where one symbol passes 2**20."""
    with res.env:
        tiny = [c for c in res.constraints if c.origin is Origin.EXACT_WITHIN and not intops.assumable(c.lhs, c.rhs)]
    assert not tiny, tiny


def test_float32_sizes_of_a_scaled_dim_assume_no_tiny_bound():
    # Tile by 1024 then a ceil_mode pool and a Resize by 1.5: floor(1.5*1024*h) in float32 is
    # exact only while h <= 10922, the pool's float32 size while h <= 16384: not assumed
    inputs = [("x", F, [1, 1, "h", 2])]
    inits = [init("reps", np.array([1, 1, 1024, 1], np.int64)), init("roi", np.array([], np.float32)),
             init("sc", np.array([1, 1, 1.5, 1], np.float32))]
    nodes = [helper.make_node("Tile", ["x", "reps"], ["t"]),
             helper.make_node("MaxPool", ["t"], ["p"], kernel_shape=[3, 1], strides=[2, 1], ceil_mode=1),
             helper.make_node("Resize", ["t", "roi", "sc"], ["r"], mode="nearest")]
    res = check(model(nodes, inputs, ["p", "r"], inits, opset=13),
                random_cases(inputs, [{"h": 1}, {"h": 3}]), fresh_ok=["p", "r"])
    _no_tiny_bound(res)


# ---------------------------------------------------------------- attacks of the same kind that held


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT16, F, TensorProto.DOUBLE])
@pytest.mark.parametrize("op,k", [("Div", 2.0), ("Div", 3.0), ("Mul", 0.5), ("Mul", 1.5), ("Mul", 0.1)])
@pytest.mark.parametrize("rounding", ["Ceil", "Floor"])
def test_float_size_arithmetic_past_a_narrow_mantissa(dtype, op, k, rounding):
    # float16 holds integers exactly only to 2048: no bound that small is assumed (a fresh size)
    nodes = _shape_as(dtype, "f") + [helper.make_node(op, ["f", "k"], ["q"]), helper.make_node(rounding, ["q"], ["c"]),
                                     helper.make_node("Cast", ["c"], ["ci"], to=I64),
                                     helper.make_node("ConstantOfShape", ["ci"], ["y"])]
    m = model(nodes, INPUTS, ["y"], [init("k", np.array([k], _np(dtype)))])
    check(m, random_cases(INPUTS, _sizes(1, 3, 7, 2047, 2049, 4099)), fresh_ok=["y"])


@pytest.mark.parametrize("dtype", [F, TensorProto.DOUBLE, TensorProto.INT16, TensorProto.INT32, I64])
@pytest.mark.parametrize("start,delta", [(0, 1), (0, 2), (-3, 1), (10, -1), (100, -7)])
def test_range_to_a_size_counts_as_onnxruntime(dtype, start, delta):
    t = _np(dtype)
    nodes = _shape_as(dtype, "l") + [helper.make_node("Squeeze", ["l"], ["ls"]),
                                     helper.make_node("Range", ["st", "ls", "de"], ["r"])]
    m = model(nodes, INPUTS, ["r"], [init("st", np.array(start, t)), init("de", np.array(delta, t))])
    check(m, random_cases(INPUTS, _sizes(1, 2, 5, 9, 150)), fresh_ok=["r"])


def test_a_shared_form_search_answers_as_the_search_under_a_spent_budget(monkeypatch):
    # the searches of one process share their answers (quasi._FORMS); a hit still charges the
    # budget, so with none left the same model gives the same warning as a first search
    kk = init("k", np.array([100], np.int8))
    nodes = _shape_as(TensorProto.INT8) + [helper.make_node("Mul", ["si", "k"], ["v"]),
                                           helper.make_node("Cast", ["v"], ["w"], to=I64)]
    m = model(nodes, INPUTS, ["w"], [kk])
    cases = random_cases(INPUTS, _sizes(1, 2, 3, 64, 200))
    check(m, cases, values=["w"])  # the forms found, shared
    assert quasi._FORMS
    monkeypatch.setattr(quasi, "CANDIDATES_BUDGET", 0)
    res = check(m, cases, values=["w"])
    assert any("work bound ran out" in w and quasi.FORM_SEARCH in w for w in res.warnings), res.warnings
