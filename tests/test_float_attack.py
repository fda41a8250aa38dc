"""What tests/float_attack.py checks (sizes computed in float and used as shapes), held to
onnxruntime: the patterns it found, each run in onnxruntime, a fast slice of the attack, and a
fuller run in the slow tier."""

import random
import subprocess
import sys

import numpy as np
import onnx
import pytest
from float_attack import judge, random_model
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import onnxsym
from onnxsym.errors import ShapeContradiction

ort = pytest.importorskip("onnxruntime")


def _c(name, a):
    return numpy_helper.from_array(np.asarray(a, np.int64), name)


def _computed_negative(op: str, c: int) -> onnx.ModelProto:
    """``op`` fed a shape whose last element is Shape(x)[0] * 0 - c: a -c computed at run time
    (no load-time folding sees it), as a float chain's floor((0*T - 2) * 2) is."""
    nodes = [h.make_node("Shape", ["x"], ["s"], end=1), h.make_node("Mul", ["s", "zero"], ["z"]),
             h.make_node("Sub", ["z", "c"], ["k"]), h.make_node("Concat", ["one", "k"], ["t"], axis=0)]
    nodes.append(h.make_node(op, ["t"] if op == "ConstantOfShape" else ["x2", "t"], ["y"], name="use"))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n"]),
                                  h.make_tensor_value_info("x2", T.FLOAT, [2, "n"])],
                     [h.make_empty_tensor_value_info("y")], [_c("zero", [0]), _c("c", [c]), _c("one", [1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 9
    return m


def _ort_refuses_everywhere(m) -> bool:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 2, 5):
        feeds = {"x": np.zeros(n, np.float32), "x2": np.zeros((2, n), np.float32)}
        try:
            sess.run(None, feeds)
            return False
        except Exception:  # noqa: BLE001 (onnxruntime's refusal is what is asked)
            pass
    return True


@pytest.mark.parametrize("op", ["ConstantOfShape", "Tile"])
@pytest.mark.parametrize("c", [1, 4])
def test_a_computed_negative_shape_element_is_a_contradiction(op, c):
    """ConstantOfShape of [1, -c] and Tile by [1, -c]: onnxruntime refuses at every size, and
    onnxsym wrote a dim of -c (-c*n for Tile) with the domain 'every size of n'."""
    m = _computed_negative(op, c)
    assert _ort_refuses_everywhere(m)
    with pytest.raises(ShapeContradiction, match="'use'"):
        onnxsym.infer(m).domain()


@pytest.mark.parametrize("op", ["ConstantOfShape", "Tile"])
def test_a_computed_zero_shape_element_still_runs(op):
    m = _computed_negative(op, 0)
    assert not _ort_refuses_everywhere(m)
    res = onnxsym.infer(m)
    assert res.domain().violated({"n": 3}) is None
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    real = sess.run(None, {"x": np.zeros(3, np.float32), "x2": np.zeros((2, 3), np.float32)})[0].shape
    assert tuple(int(d) for d in res.shape("y")) == real


def test_check_exits_2_on_a_computed_negative_tile(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(_computed_negative("Tile", 4), p)
    r = subprocess.run([sys.executable, "-m", "onnxsym", "check", str(p)], capture_output=True, text=True)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "use" in r.stdout + r.stderr and "Traceback" not in r.stderr


# each a chain the attack draws; judged at the whole grid of sizes (0..40, 2**k +- 1, near
# 2**11, 2**16 and 2**24, up to 2**31) at both optimization levels
FAST = ["1:100", "0:3", "0:7", "1:12", "1:40", "2:5", "2:180", "2:250", "3:222"]


@pytest.mark.parametrize("key", FAST)
def test_the_float_attack_finds_nothing(key):
    m, small = random_model(random.Random(key))
    r = judge(m, small)
    assert r["verdict"] in ("agrees", "refused at load", "contradiction, never runs",
                            "never runs, no contradiction"), r
    for k in ("wrong", "written_wrong", "narrow", "wide"):
        assert not r.get(k), (k, r[k][:3])


@pytest.mark.slow
def test_the_float_attack_finds_nothing_on_a_fuller_run():
    bad = []
    for i in range(120):
        m, small = random_model(random.Random(f"9:{i}"))
        r = judge(m, small)
        if any(r.get(k) for k in ("wrong", "written_wrong", "narrow", "wide")) or r["verdict"] == "false contradiction":
            bad.append((i, r["verdict"]))
    assert not bad, bad
