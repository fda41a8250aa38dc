"""A trial of a choice the sizes decide (a Squeeze without axes over a dim that may be 1,
onnxsym.facts.branching) reads the first run's rule results made before the choice
(onnxsym.inference.memo): the nodes before it run no rule again, and the answer is the one
trials of their own give. Checked against onnxruntime at sizes it runs, and at n == 1, which
it refuses."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import onnxsym
from onnxsym.inference import engine
from tests.helpers import init, model
from tests.oracle import check, run_ort

GEMM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "real", "hummingbird_gemm.onnx")


def _squeezed_model():
    """x [n, 3]: a few layers (each a rule to reuse), then [3, 1, n] squeezed without axes and
    transposed with perm [1, 0], which runs only where n was kept (n >= 2). After the Squeeze,
    nodes that read only what was computed before it (the Shape of the first layer), so that the
    first run computes them too, with n's range wider than the trial's."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Add", ["a", "bias"], ["b"]),
        helper.make_node("Mul", ["b", "scale"], ["c"]),
        helper.make_node("Transpose", ["c"], ["t"], perm=[1, 0]),
        helper.make_node("Unsqueeze", ["t", "one"], ["u"]),
        helper.make_node("Squeeze", ["u"], ["s"]),
        helper.make_node("Transpose", ["s"], ["y"], perm=[1, 0]),
        helper.make_node("Shape", ["a"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"]),
        helper.make_node("Max", ["n", "two"], ["m"]),
        helper.make_node("ConstantOfShape", ["m"], ["z"]),
    ]
    inits = [init("bias", np.ones(3, np.float32)), init("scale", np.full(3, 2.0, np.float32)),
             init("one", np.array([1], np.int64)), init("zero", np.array([0], np.int64)),
             init("two", np.array([2], np.int64))]
    return model(nodes, [("x", T.FLOAT, ["n", 3])], [("y", T.FLOAT, None), ("z", T.FLOAT, None)], inits=inits,
                 opset=17)


def _feeds(n):
    return {"x": np.arange(3 * n, dtype=np.float32).reshape(n, 3)}


def test_the_kept_dim_is_chosen_and_matches_onnxruntime():
    m = _squeezed_model()
    res = check(m, [({"n": n}, _feeds(n)) for n in (2, 5)])
    assert [str(d) for d in res.values["y"].shape] == ["n", "3"]
    with pytest.raises(Exception):  # noqa: B017 - onnxruntime's own error type
        run_ort(m, _feeds(1))  # (the domain leaves n == 1 out, as onnxruntime does)


def test_trials_run_no_rule_of_the_nodes_before_the_choice(monkeypatch):
    runs: list[tuple[bool, str]] = []
    original = engine.Engine._run_rule

    def counted(self, index, n, *args):
        runs.append((bool(self.choices), n.op_type))
        return original(self, index, n, *args)

    monkeypatch.setattr(engine.Engine, "_run_rule", counted)
    onnxsym.infer(_squeezed_model())
    in_trials = [op for tried, op in runs if tried]
    assert in_trials, "no trial ran: the test no longer tries the Squeeze both ways"
    assert not {"Relu", "Add", "Mul", "Unsqueeze"} & set(in_trials), in_trials
    assert "Squeeze" in in_trials and "Max" in in_trials  # (the choice itself, and what follows it)


def _answers(m):
    res = onnxsym.infer(m)
    return (onnxsym.write_result(res).SerializeToString(deterministic=True), list(res.warnings),
            str(res.domain()))


@pytest.mark.parametrize("name", ["hummingbird_gemm", "squeezed"])
def test_the_same_answers_as_trials_of_their_own(monkeypatch, name):
    m = _squeezed_model() if name == "squeezed" else onnx.load(GEMM)
    shared = _answers(m)
    monkeypatch.setattr(engine.Engine, "reuse", lambda self, first: None)
    assert _answers(m) == shared
