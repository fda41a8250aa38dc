"""The sympy bridge: exact both ways, and what infer() takes from sympy and torch.export."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import build
from test_dims_properties import NAMES, POSITIVE, SIGNED, trees

import onnxsym
from onnxsym import dims
from onnxsym.dims.sympy_bridge import from_sympy, to_sympy
from onnxsym.errors import UserInputError

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LLAMA = os.path.join(ROOT, "models", "llama_tiny_ts.onnx")


def _check_round_trip(tree, leaves, values):
    e = build(tree, lambda n: leaves[n])
    s = to_sympy(e)
    assert from_sympy(s) is e or (isinstance(e, int) and from_sympy(s) == e), f"{e} -> {s} -> {from_sympy(s)}"
    env = {dims.as_sym(leaves[n]).name: v for n, v in values.items()}
    at = {to_sympy(leaves[n]): v for n, v in values.items()}
    assert int(s.subs(at)) == dims.evaluate(e, env) == build(tree, lambda n: values[n]), str(e)


@settings(max_examples=200, deadline=None)
@given(trees(), st.fixed_dictionaries({n: st.integers(1, 40) for n in NAMES}))
def test_round_trip_is_the_same_expression_and_value_positive(tree, values):
    _check_round_trip(tree, POSITIVE, values)


@settings(max_examples=200, deadline=None)
@given(trees(), st.fixed_dictionaries({n: st.integers(-30, 30) for n in NAMES}))
def test_round_trip_is_the_same_expression_and_value_signed(tree, values):
    """Negative operands and divisors: floor division and modulo keep Python's signs."""
    _check_round_trip(tree, SIGNED, values)


def test_negative_floor_division_and_modulo_by_hand():
    x = dims.sym("x", lo=-50, hi=50)
    for e in (x // -3, x % -4, (-x) // 7, (-x) % 7, dims.ceil_div(x, 4), dims.ceil_div(x, -4)):
        s = to_sympy(e)
        for v in range(-50, 51):
            assert int(s.subs(sympy.Symbol("x", integer=True), v)) == dims.evaluate(e, {"x": v}), (e, v)
        assert from_sympy(s) is e


def test_sympy_forms_people_write_come_back_exact():
    seq, past = sympy.symbols("seq past", integer=True, positive=True)
    s, p = onnxsym.sym("seq"), onnxsym.sym("past")
    assert from_sympy(sympy.ceiling(seq / 8)) is onnxsym.ceil_div(s, 8)
    assert from_sympy(sympy.floor((seq - 1) / 2) + 1) is (s - 1) // 2 + 1
    assert from_sympy(sympy.Max(seq, past) * 2) is 2 * onnxsym.dmax(s, p)
    assert from_sympy((seq + past) ** 2) is (s + p) * (s + p)
    assert from_sympy(sympy.Mod(seq, 4)) is s % 4
    for bad in (seq / 2, sympy.sqrt(seq), sympy.Float(1.5) * seq):
        with pytest.raises(ValueError):
            from_sympy(bad)


def test_ranges_become_sign_assumptions_where_they_fit():
    assert to_sympy(dims.sym("a")).is_positive
    z = to_sympy(dims.sym("z", lo=0, hi=9))
    assert z.is_nonnegative and z.is_positive is None
    assert to_sympy(dims.sym("n", lo=-5, hi=-1)).is_negative
    assert to_sympy(dims.sym("w", lo=-5, hi=5)).is_integer
    # from_sympy gives back the range, which sympy cannot hold
    assert from_sympy(z) is dims.sym("z", lo=0, hi=9)
    assert from_sympy(sympy.Symbol("fresh_one", integer=True, nonnegative=True)) is dims.sym("fresh_one", lo=0)


def test_result_sympy_shape_is_runtime_exact():
    res = onnxsym.infer(LLAMA)
    shape = res.sympy_shape("present_key_0")
    batch, seq, past = (sympy.Symbol(n, integer=True, positive=True) for n in ("batch", "seq", "past"))
    assert shape == (batch, 2, past + seq, 16)
    assert res.sympy_shape("no such value") is None


def test_infer_takes_sympy_intervals_relations_and_export_range_constraints():
    seq, past = sympy.symbols("seq past", integer=True, positive=True)
    res = onnxsym.infer(LLAMA, ranges={seq: sympy.Interval(1, 4096), "batch": sympy.Interval.Ropen(1, 9)},
                        assume=[sympy.Eq(past, seq)])
    assert res.symbol_ranges()["seq"] == (1, 4096) and res.symbol_ranges()["batch"] == (1, 8)
    assert onnxsym.evaluate(res.shape("present_key_0")[2], {"seq": 5}) == 10
    # torch.export's ExportedProgram.range_constraints: {sympy symbol: ValueRanges(lower, upper)}
    # with upper often int_oo; duck-typed, so no torch is needed.
    int_oo = type("IntInfinity", (), {"__str__": lambda self: "int_oo", "is_infinite": True})()
    constraints = {sympy.Symbol("seq"): SimpleNamespace(lower=2, upper=sympy.Integer(512)),
                   sympy.Symbol("past"): SimpleNamespace(lower=sympy.Integer(0), upper=int_oo)}
    ranges = onnxsym.infer(LLAMA, ranges=constraints).symbol_ranges()
    assert ranges["seq"] == (2, 512) and ranges["past"] == (0, dims.INT64_MAX)


def test_infer_takes_an_exported_program_and_names_its_numbered_symbols():
    """torch.export calls the dims s77, s27; the ONNX export calls them batch, seq. An object
    shaped like an ExportedProgram (what torch 2.13 has: range_constraints, the signature's
    user inputs, placeholder nodes with a fake tensor's shape) maps them input by input."""
    s77, s27, s5 = sympy.symbols("s77 s27 s5", integer=True, positive=True)
    vr = lambda lo, hi: SimpleNamespace(lower=lo, upper=hi)  # noqa: E731
    node = lambda name, shape: SimpleNamespace(op="placeholder", name=name,  # noqa: E731
                                               meta={"val": SimpleNamespace(shape=shape)})
    ep = SimpleNamespace(
        range_constraints={s77: vr(1, 64), s27: vr(1, 4096), s5: vr(0, 2048)},
        graph_signature=SimpleNamespace(user_inputs=("input_ids", "past_key_0")),
        graph=SimpleNamespace(nodes=[node("p_weight", [128, 64]), node("input_ids", [s77, s27]),
                                     node("past_key_0", [s77, 2, s5, 16])]))
    path = os.path.join(ROOT, "models", "llama_tiny_dynamo.onnx")
    ranges = onnxsym.infer(path, ranges=ep).symbol_ranges()
    assert ranges["batch"] == (1, 64) and ranges["seq"] == (1, 4096) and ranges["past"] == (0, 2048)


def test_bad_sympy_input_is_a_user_error():
    seq = sympy.Symbol("seq", integer=True)
    with pytest.raises(UserInputError, match="assume"):
        onnxsym.infer(LLAMA, assume=[sympy.Le(seq, 4)])
    with pytest.raises(UserInputError, match="ranges"):
        onnxsym.infer(LLAMA, ranges={"seq": SimpleNamespace(lower=sympy.Rational(1, 2), upper=3)})


def test_annotate_and_the_cli_do_not_import_sympy():
    code = ("import sys, onnxsym, onnxsym.cli; onnxsym.annotate(sys.argv[1]); "
            "r = onnxsym.infer(sys.argv[1]); str(r.shape('logits')); print('sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, LLAMA], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
