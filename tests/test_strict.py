"""Failures must be loud (issue 12, item 6): a rule planted to raise AttributeError fails a
test (strict mode, tests/conftest.py), fails `verify` and the CLI's verify outside strict
mode, and is a crash for the fuzzer in both modes."""

import contextlib

import fuzzing
import onnx
import pytest
from click.testing import CliRunner
from helpers import F, model
from onnx import helper
from oracle import check, random_cases

import onnxsym
import onnxsym.rules  # noqa: F401  (the built-in rules, so that Relu can be swapped)
from onnxsym import registry
from onnxsym.cli import main
from onnxsym.commands.verify import verify
from onnxsym.inference import engine

INPUTS = [("x", F, ["batch", "seq"])]
SIZES = [{"batch": 2, "seq": 3}, {"batch": 1, "seq": 5}]


@contextlib.contextmanager
def planted_failure():
    """Relu's rule raises AttributeError, as a rule reading a missing field would."""
    def broken_relu(node):
        return node.no_such_field

    with registry.override("Relu", broken_relu):
        yield


@contextlib.contextmanager
def lenient():
    saved, engine.STRICT = engine.STRICT, False
    try:
        yield
    finally:
        engine.STRICT = saved


def _model(tail=True):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="r")]
    if tail:
        nodes += [helper.make_node("Tanh", ["r"], ["t"], name="t"), helper.make_node("Neg", ["x"], ["n"], name="n")]
    outs = ["t", "n"] if tail else ["r"]
    return model(nodes, INPUTS, outs, name="planted")


def test_the_suite_runs_in_strict_mode_and_a_failing_rule_fails_the_test_helpers():
    assert engine.STRICT
    with planted_failure(), pytest.raises(onnxsym.RuleFailure, match="Relu node 'r': rule failed: AttributeError"):
        check(_model(), random_cases(INPUTS, SIZES))


def test_outside_strict_mode_a_failing_rule_is_recorded_and_fails_verify():
    with planted_failure(), lenient():
        res = onnxsym.infer(_model())
        failure = "Relu node 'r': rule failed: AttributeError: 'Node' object has no attribute 'no_such_field'"
        assert res.rule_failures == [failure]
        report = verify(_model(), SIZES, result=res)
    assert not report.ok and not report.mismatches
    # r and t have unknown ranks: unresolved, every dim of both at both sizes; n is checked
    assert report.unknown_rank_values == 4 and report.unresolved_dims == 8 and report.checked_dims == 4


def test_the_cli_verify_fails_on_a_failed_rule_and_says_when_it_checked_nothing(tmp_path):
    path = str(tmp_path / "m.onnx")
    onnx.save(_model(tail=False), path)
    with planted_failure(), lenient():
        r = CliRunner().invoke(main, ["verify", path])
    assert r.exit_code == 1, r.output
    assert "FAILED Relu node 'r': rule failed: AttributeError" in r.output
    assert "0 dims checked" in r.output and "nothing was verified" in r.output


def test_the_fuzzer_counts_a_failed_rule_as_a_crash_in_both_modes():
    a = fuzzing.assignments_for(0)
    with planted_failure():
        strict = fuzzing.check_model(_model(), a)
        with lenient():
            loose = fuzzing.check_model(_model(), a)
    assert strict.kind == loose.kind == "crash"
    assert "AttributeError" in strict.detail and "a rule failed" in loose.detail


def test_without_the_planted_rule_the_same_model_verifies():
    report = verify(_model(), SIZES)
    assert report.ok and report.unknown_rank_values == 0 and report.checked_dims == 12  # r, t, n: 2 dims, 2 sizes


@pytest.mark.parametrize("op, attrs, pads", [
    ("MaxPool", {"kernel_shape": [1, 3]}, None),
    ("Conv", {"pads": [0, 1, 0, 0]}, None),
    ("Pad", {"mode": "edge"}, [0, 0, 1, 0, 0, 0, 1, 0]),
])
def test_attributes_for_another_rank_are_a_contradiction_not_a_failed_rule(op, attrs, pads):
    """Found by the fuzzer once failed rules counted: a rank-5 input with rank-4 attributes
    raised IndexError inside the rule; onnxruntime refuses such a node too."""
    import numpy as np
    from helpers import init

    inputs = [("x", F, [1, 2, 3, "h", "w"])]
    ins, inits = ["x"], []
    if op == "Conv":
        ins, inits = ["x", "k"], [init("k", np.ones([1, 2, 1, 3], np.float32))]
    if op == "Pad":
        ins, inits = ["x", "p"], [init("p", np.array(pads, np.int64))]
    m = model([helper.make_node(op, ins, ["y"], **attrs)], inputs, ["y"], inits)
    with pytest.raises(onnxsym.ShapeContradiction, match="entries"):
        onnxsym.infer(m)
    assert fuzzing.check_model(m, fuzzing.assignments_for(0)).kind == "invalid"  # onnxruntime runs no size
