"""Rules of rules/signal.py, checked against onnxruntime at several sizes."""


import numpy as np
import pytest
from helpers import I64, F, init, model
from onnx import TensorProto, helper
from oracle import check, no_fresh, random_cases

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

SIZES = [{"a": 2, "n": 7}, {"a": 3, "n": 8}, {"a": 1, "n": 13}]


def _m(nodes, inputs, outs, inits, opset):
    m = model(nodes, inputs, outs, inits, opset=opset)
    m.ir_version = 10
    return m


@pytest.mark.parametrize("onesided", [0, 1])
def test_dft_17_axis_attribute(onesided):
    real = 1 if onesided else 2  # one-sided transforms take real input
    inputs = [("x", F, ["a", "n", 1]), ("c", F, ["a", 4, "n", 2]), ("r", F, ["a", 4, "n", real])]
    inits = [init("len", np.array(6, np.int64))]
    nodes = [helper.make_node("DFT", ["x"], ["y"], onesided=onesided),
             helper.make_node("DFT", ["r", "len"], ["yl"], axis=2, onesided=onesided),
             helper.make_node("DFT", ["c"], ["yi"], axis=-2, inverse=1)]
    res = check(_m(nodes, inputs, ["y", "yl", "yi"], inits, 17), random_cases(inputs, SIZES))
    no_fresh(res)
    n = dims.sym("n")
    assert res.shape("y") == (dims.sym("a"), n // 2 + 1 if onesided else n, 2)


@pytest.mark.parametrize("onesided", [0, 1])
def test_dft_20_axis_input(onesided):
    inputs = [("x", F, ["a", "n", 4, 1])]
    inits = [init("len", np.array(5, np.int64)), init("ax", np.array(1, np.int64)),
             init("axn", np.array(-2, np.int64))]
    nodes = [helper.make_node("DFT", ["x", "", "ax"], ["y"], onesided=onesided),
             helper.make_node("DFT", ["x", "len", "axn"], ["yl"], onesided=onesided),
             helper.make_node("DFT", ["x"], ["yd"], onesided=onesided),
             helper.make_node("DFT", ["x", "", "ax"], ["yi"], inverse=1)]
    res = check(_m(nodes, inputs, ["y", "yl", "yd", "yi"], inits, 20), random_cases(inputs, SIZES))
    no_fresh(res)
    assert res.shape("yl")[2] == (3 if onesided else 5)


def test_dft_unknown_axis_is_fresh():
    inputs = [("x", F, ["a", "n", 1]), ("ax", I64, [])]
    m = _m([helper.make_node("DFT", ["x", "", "ax"], ["y"])], inputs, ["y"], [], 20)
    assert onnxsym.infer(m).unresolved()


@pytest.mark.parametrize("signal", [["a", "n", 1], ["a", "n"]])
@pytest.mark.parametrize("onesided", [0, 1])
def test_stft(onesided, signal):
    """The spec's (batch, length, 1) signal, and the (batch, length) one onnxruntime's kernel
    takes too (onnxscript's mel preprocessors of onnx-asr feed it the waveform so)."""
    inputs = [("x", F, signal)]
    inits = [init("step", np.array(2, np.int64)), init("win", np.ones(4, np.float32)),
             init("flen", np.array(3, np.int64))]
    nodes = [helper.make_node("STFT", ["x", "step", "win"], ["y"], onesided=onesided),
             helper.make_node("STFT", ["x", "step", "", "flen"], ["yf"], onesided=onesided)]
    sizes = [{"a": 2, "n": n} for n in (4, 5, 6, 9, 12)]
    res = check(_m(nodes, inputs, ["y", "yf"], inits, 17), random_cases(inputs, sizes))
    no_fresh(res)
    assert res.shape("y")[1] == (dims.sym("n") - 4) // 2 + 1


def test_windows_and_mel_weight_matrix():
    inputs = [("x", F, ["a"])]
    inits = [init("size", np.array(10, np.int64)), init("bins", np.array(8, np.int64)),
             init("dlen", np.array(17, np.int64)), init("rate", np.array(8000, np.int64)),
             init("lo", np.array(0, np.float32)), init("hi", np.array(3000, np.float32))]
    nodes = [helper.make_node("HannWindow", ["size"], ["hann"]),
             helper.make_node("HammingWindow", ["size"], ["ham"], periodic=0),
             helper.make_node("BlackmanWindow", ["size"], ["bl"], output_datatype=TensorProto.DOUBLE),
             helper.make_node("MelWeightMatrix", ["bins", "dlen", "rate", "lo", "hi"], ["mel"]),
             helper.make_node("Identity", ["x"], ["xo"])]
    res = check(_m(nodes, inputs, ["hann", "ham", "bl", "mel", "xo"], inits, 17), random_cases(inputs, [{"a": 2}]))
    no_fresh(res)
    assert res.shape("mel") == (9, 8)
    assert res.values["bl"].dtype == TensorProto.DOUBLE


def test_window_of_unknown_size_is_fresh():
    inputs = [("size", I64, [])]
    m = _m([helper.make_node("HannWindow", ["size"], ["w"])], inputs, ["w"], [], 17)
    assert onnxsym.infer(m).unresolved()
