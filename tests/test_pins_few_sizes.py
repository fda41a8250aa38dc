"""Pins the gate used to miss: a symbol broadcast against a constant (x[seq] + pos[8] runs at
seq 1 and 8 only), an Expand of x[seq] to a constant shape, and a bound with a divisibility
that leave a few sizes (n <= 10 and n % 4 == 0: 4 and 8). Each pinned set is checked against
onnxruntime at every size around it; `check` exits 1 and `annotate --dynamic` refuses."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from helpers import F, model
from onnx import helper, numpy_helper

import onnxsym
from onnxsym.domain.pins import pins_of
from onnxsym.errors import PinnedError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
n = helper.make_node


def _c(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def _broadcast(size):
    return model([n("Add", ["x", "pos"], ["y"])], [("x", F, [size])], [("y", F, None)],
                 inits=[_c("pos", np.ones(8, np.float32))])


def _expand(size):
    return model([n("Expand", ["x", "sh"], ["y"])], [("x", F, [size])], [("y", F, None)],
                 inits=[_c("sh", np.array([8], np.int64))])


def _bound_and_multiple(size):
    """x[n] plus the first n entries of a [10] table (n <= 10), reshaped to [-1, 4] (n % 4 == 0)."""
    nodes = [n("Shape", ["x"], ["s"]), n("Slice", ["tab", "st", "s"], ["p"]), n("Add", ["x", "p"], ["z"]),
             n("Reshape", ["z", "sh"], ["y"])]
    return model(nodes, [("x", F, [size])], [("y", F, None)],
                 inits=[_c("tab", np.ones(10, np.float32)), _c("st", np.array([0], np.int64)),
                        _c("sh", np.array([-1, 4], np.int64))])


def _sliced(size):
    """x[1:] (seq - 1, through a min with the Slice's end) broadcast against pos[8]: seq 2 and 9."""
    return model([n("Slice", ["x", "st", "en"], ["q"]), n("Add", ["q", "pos"], ["y"])], [("x", F, [size])],
                 [("y", F, None)], inits=[_c("st", np.array([1], np.int64)), _c("en", np.array([1000], np.int64)),
                                          _c("pos", np.ones(8, np.float32))])


def _halved(size):
    """x[seq] reshaped to [2, -1] (seq // 2, seq even) broadcast against pos[4]: seq 2 and 8."""
    return model([n("Reshape", ["x", "sh"], ["q"]), n("Add", ["q", "pos"], ["y"])], [("x", F, [size])],
                 [("y", F, None)], inits=[_c("sh", np.array([2, -1], np.int64)), _c("pos", np.ones(4, np.float32))])


def _convolved(size):
    """A Conv of kernel 3 (seq - 2) broadcast against pos[8]: seq 3 and 10."""
    return model([n("Conv", ["x", "k"], ["q"]), n("Add", ["q", "pos"], ["y"])], [("x", F, [1, 1, size])],
                 [("y", F, None)], inits=[_c("k", np.ones((1, 1, 3), np.float32)), _c("pos", np.ones(8, np.float32))])


def _sliced_halved(size):
    """x[1:] reshaped to [2, -1] and summed over the 2 (seq - 1 even, (seq - 1) // 2 against
    pos[8]): seq 3 and 17, not 4 and 18, which the divisibility the forms leave undecided rules out."""
    return model([n("Slice", ["x", "st", "en"], ["q"]), n("Reshape", ["q", "sh"], ["r"]),
                  n("ReduceSum", ["r", "ax"], ["p"], keepdims=0), n("Add", ["p", "pos"], ["y"])], [("x", F, [size])],
                 [("y", F, None)], inits=[_c("st", np.array([1], np.int64)), _c("en", np.array([1000], np.int64)),
                                          _c("sh", np.array([2, -1], np.int64)), _c("ax", np.array([0], np.int64)),
                                          _c("pos", np.ones(8, np.float32))])


def _tiled_pooled(size):
    """x tiled twice, max-pooled by 3 (2*seq - 2, its pads clamped: a condition of cases)
    against pos[8]: seq 5 only."""
    nodes = [n("Tile", ["x", "r"], ["t"]), n("Unsqueeze", ["t", "u"], ["t3"]), n("MaxPool", ["t3"], ["p3"], kernel_shape=[3]),
             n("Squeeze", ["p3", "u"], ["p"]), n("Add", ["p", "pos"], ["y"])]
    return model(nodes, [("x", F, [size])], [("y", F, None)],
                 inits=[_c("r", np.array([2], np.int64)), _c("u", np.array([0, 1], np.int64)), _c("pos", np.ones(8, np.float32))])


def _min_of_a_floor(size):
    """x[seq] reshaped to [1, 2, -1] (seq // 2), sliced to 1000 (a min of that floor), padded by 1
    and max-pooled by 2 with stride 2 ((min(1000, seq//2) + 1)//2 in effect) against pos[8]:
    seq 2, 4, 30 and 32 (a min or max whose argument holds a floor)."""
    nodes = [n("Reshape", ["x", "sh"], ["r"]), n("Slice", ["r", "st", "en", "ax"], ["s"]), n("Pad", ["s", "pads"], ["p"]),
             n("MaxPool", ["p"], ["q"], kernel_shape=[2], strides=[2]), n("Add", ["q", "pos"], ["y"])]
    return model(nodes, [("x", F, [size])], [("y", F, None)],
                 inits=[_c("sh", np.array([1, 2, -1], np.int64)), _c("st", np.array([0], np.int64)),
                        _c("en", np.array([1000], np.int64)), _c("ax", np.array([2], np.int64)),
                        _c("pads", np.array([0, 0, 0, 0, 0, 1], np.int64)), _c("pos", np.ones(8, np.float32))])


CASES = [(_broadcast, "seq", (1, 8)), (_expand, "seq", (1, 8)), (_bound_and_multiple, "n", (4, 8)),
         (_sliced, "seq", (2, 9)), (_halved, "seq", (2, 8)), (_convolved, "seq", (3, 10)),
         (_sliced_halved, "seq", (3, 17)), (_tiled_pooled, "seq", (5,)), (_min_of_a_floor, "seq", (2, 4, 30, 32))]
IDS = ["broadcast", "expand", "bound_and_multiple", "through_min", "through_floor", "through_conv", "undecided_multiple",
       "through_cases", "min_of_a_floor"]


def _runs(m, size) -> bool:
    import onnxruntime as ort

    try:
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        shape = [d.dim_value or size for d in m.graph.input[0].type.tensor_type.shape.dim]
        sess.run(None, {"x": np.ones(shape, np.float32)})
        return True
    except Exception:
        return False


@pytest.mark.parametrize("make, name, sizes", CASES, ids=IDS)
def test_a_few_sizes_are_a_pin_and_onnxruntime_agrees(make, name, sizes, tmp_path):
    dynamic = make(name)
    # (from 1: a graph-input dim is >= 1 by default; the bound and multiple runs at 0 too)
    assert [v for v in range(1, max(20, 2 * sizes[-1])) if _runs(dynamic, v)] == list(sizes)
    (pin,) = pins_of(onnxsym.infer(dynamic))
    axis = len(dynamic.graph.input[0].type.tensor_type.shape.dim) - 1
    assert pin.symbol == name and pin.values == sizes
    path = tmp_path / "m.onnx"
    onnx.save(dynamic, path)
    r = subprocess.run([sys.executable, "-m", "onnxsym", "check", str(path)], capture_output=True, text=True, cwd=ROOT)
    said = f"{name} == {sizes[0]}" if len(sizes) == 1 else f"{name} in {{{', '.join(map(str, sizes))}}}"
    assert r.returncode == 1 and f"pinned {said}" in r.stdout, r.stdout + r.stderr
    static = make(sizes[-1])
    with pytest.raises(PinnedError, match="nothing written"):
        onnxsym.annotate(static, dynamic={"x": {axis: name}})
    onnx.save(static, path)
    out = tmp_path / "out.onnx"
    r = subprocess.run([sys.executable, "-m", "onnxsym", "annotate", str(path), "-o", str(out), "--dynamic",
                        f"x:{axis}={name}"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "cannot be dynamic" in r.stderr and not out.exists(), r.stderr
