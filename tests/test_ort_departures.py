"""Where onnxruntime departs from the spec's text, onnxsym follows onnxruntime (each listed in
docs/conditions.md): the dims checked against onnxruntime's outputs at several sizes."""

import numpy as np
import pytest
from helpers import I64, F, model
from onnx import helper, numpy_helper
from oracle import run_ort

import onnxsym
from onnxsym.commands.departures import DEPARTURES
from onnxsym.errors import ShapeContradiction

n = helper.make_node


def _c(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def _shape_at(result, name, sizes):
    return tuple(onnxsym.evaluate(d, sizes) for d in result.shape(name))


def _split_to_sequence(split, keepdims, length="len"):
    kw = {} if keepdims is None else {"keepdims": keepdims}
    nodes = [n("SplitToSequence", ["x", "sp"], ["s"], axis=1, **kw), n("SequenceAt", ["s", "z"], ["y"]),
             n("SequenceLength", ["s"], ["count"])]
    return model(nodes, [("x", F, ["b", length, 3])], [("y", F, None), ("count", I64, None)],
                 inits=[_c("sp", np.array(split, np.int64)), _c("z", np.array(0, np.int64))])


@pytest.mark.parametrize("keepdims", [None, 0, 1])
def test_split_to_sequence_with_a_scalar_split_applies_keepdims(keepdims):
    """Scalar split 1: keepdims=0 drops the axis (rank one less), else keeps it."""
    m = _split_to_sequence(1, keepdims)
    res = onnxsym.infer(m)
    for b, length in ((2, 6), (1, 1), (3, 4)):
        out = run_ort(m, {"x": np.ones((b, length, 3), np.float32)})
        assert out["y"].shape == _shape_at(res, "y", {"b": b, "len": length})
        assert out["y"].ndim == (2 if keepdims == 0 else 3)


def test_split_to_sequence_scalar_split_other_than_one_with_keepdims_0_fails():
    """Each piece is reshaped without the axis: a piece longer than 1 with elements fails, so
    split 2 runs where X[axis] <= 1 or X has no elements (the domain: len == 1 at b >= 1)."""
    m = _split_to_sequence(2, 0)
    with pytest.raises(Exception):
        run_ort(m, {"x": np.ones((2, 6, 3), np.float32)})
    res = onnxsym.infer(m)
    domain = res.domain()
    assert domain.violated({"b": 2, "len": 6}) is not None and domain.violated({"b": 2, "len": 1}) is None
    assert run_ort(m, {"x": np.ones((2, 1, 3), np.float32)})["y"].shape == _shape_at(res, "y", {"b": 2, "len": 1})
    empty = onnxsym.infer(m, allow_zero=True).domain()  # (no elements: every length runs)
    assert empty.violated({"b": 0, "len": 6}) is None
    assert run_ort(m, {"x": np.ones((0, 6, 3), np.float32)})["count"] == 3
    static = model([n("SplitToSequence", ["x", "sp"], ["s"], axis=1, keepdims=0)], [("x", F, [2, 6, 3])],
                   [("s", F, None)], inits=[_c("sp", np.array(2, np.int64))])
    with pytest.raises(ShapeContradiction, match="scalar split 2 with keepdims=0"):
        onnxsym.infer(static)
    kept = _split_to_sequence(2, 1, 6)  # keepdims=1: pieces of 2
    res = onnxsym.infer(kept)
    assert run_ort(kept, {"x": np.ones((2, 6, 3), np.float32)})["y"].shape == _shape_at(res, "y", {"b": 2, "len": 6})


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("length", [None, 5, 8])
def test_inverse_onesided_dft_is_a_real_signal(opset, length):
    """inverse=1, onesided=1: [..., dft_length, 1] (2*(n - 1) without dft_length) from a complex input."""
    kw = {"inverse": 1, "onesided": 1}
    inits = [_c("L", np.array(length, np.int64))] if length else []
    if opset == 17:
        kw["axis"] = 1
        ins = ["x"] + (["L"] if length else [])
    else:
        ins = ["x", "L" if length else "", "ax"]
        inits.append(_c("ax", np.array(1, np.int64)))
    m = model([n("DFT", ins, ["y"], **kw)], [("x", F, ["b", "n", 2])], [("y", F, None)], inits=inits, opset=opset)
    res = onnxsym.infer(m)
    for b, k in ((2, 6), (1, 3), (2, 1)):
        got = run_ort(m, {"x": np.ones((b, k, 2), np.float32)})["y"].shape
        assert got == _shape_at(res, "y", {"b": b, "n": k})
        assert got[-1] == 1


def test_stft_takes_a_real_signal_of_rank_two():
    m = model([n("STFT", ["x", "step", "", "fl"], ["y"])], [("x", F, ["b", "len"])], [("y", F, None)],
              inits=[_c("step", np.array(2, np.int64)), _c("fl", np.array(4, np.int64))], opset=17)
    res = onnxsym.infer(m)
    for b, length in ((1, 8), (2, 11)):
        got = run_ort(m, {"x": np.ones((b, length), np.float32)})["y"].shape
        assert got == _shape_at(res, "y", {"b": b, "len": length})


def test_every_departure_is_listed():
    assert {"SplitToSequence", "DFT", "STFT"} <= {op for op, _ in DEPARTURES}
