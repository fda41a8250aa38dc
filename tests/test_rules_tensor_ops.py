"""EyeLike, BitCast, Det, CenterCropPad, OneHot, ImageDecoder and the random
generators against onnxruntime (the onnx reference evaluator where onnxruntime
has no kernel for the opset, as noted per test)."""

import io

import numpy as np
import pytest
from helpers import model
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from oracle import check, fresh_of, run_reference

from onnxsym import dims

pytest.importorskip("onnxruntime")
rng = np.random.default_rng(2)
node = helper.make_node
N = dims.sym("n")


def _x(shape):
    return rng.random(shape).astype(np.float32)


@pytest.mark.parametrize("opset", [11, 22])
def test_det_eye_like(opset):
    eye_opset = 9 if opset == 11 else 22
    nodes = [node("Det", ["m"], ["d"]), node("EyeLike", ["x"], ["e"], dtype=T.INT64), node("EyeLike", ["x"], ["f"])]
    m = model(nodes, [("m", T.FLOAT, ["n", 3, 3]), ("x", T.FLOAT, ["n", 4])], ["d", "e", "f"],
              opset=max(opset, eye_opset), ir=10)
    res = check(m, [({"n": n}, {"m": _x((n, 3, 3)), "x": _x((n, 4))}) for n in (1, 3)])
    assert res.shape("d") == (N,) and res.values["e"].dtype == T.INT64


def test_bitcast():
    m = model([node("BitCast", ["x"], ["y"], to=T.INT32)], [("x", T.FLOAT, ["n", 2])], ["y"], opset=26, ir=10)
    res = check(m, [({"n": n}, {"x": _x((n, 2))}) for n in (1, 4)])
    assert res.values["y"].dtype == T.INT32


def test_center_crop_pad():
    s = numpy_helper.from_array(np.array([4, 2], np.int64), "s")
    nodes = [node("CenterCropPad", ["x", "s"], ["y"], axes=[0, -1]), node("CenterCropPad", ["x", "t"], ["z"], axes=[1]),
             node("Shape", ["x"], ["sh"]), node("CenterCropPad", ["x", "sh"], ["same"])]
    m = model(nodes, [("x", T.FLOAT, ["n", "m", 3]), ("t", T.INT64, [1])], ["y", "z", "same"], opset=18,
              inits=[s], ir=10)
    res = check(m, [({"n": n, "m": k}, {"x": _x((n, k, 3)), "t": np.array([t], np.int64)})
                      for n, k, t in ((2, 5, 3), (6, 1, 4))], fresh_ok=["z"])
    assert res.shape("y") == (4, dims.sym("m"), 2) and res.shape("same") == (N, dims.sym("m"), 3)
    assert fresh_of(res, "z", 1)[1].op_type == "CenterCropPad"


@pytest.mark.parametrize("opset,axis", [(9, 1), (11, -2), (11, 0)])
def test_one_hot_depth_from_shape_and_constant(opset, axis):
    d = numpy_helper.from_array(np.array([5], np.int64), "d")
    fd = numpy_helper.from_array(np.array(4.7, np.float32), "fd")  # a float depth is cast (truncated) to int64
    v = numpy_helper.from_array(np.array([0, 1], np.float32), "v")
    nodes = [node("OneHot", ["i", "d", "v"], ["a"], axis=axis), node("OneHot", ["i", "fd", "v"], ["b"], axis=axis),
             node("Shape", ["i"], ["sh"]), node("Gather", ["sh", "one"], ["n"], axis=0),
             node("OneHot", ["i", "n", "v"], ["c"], axis=axis)]
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    m = model(nodes, [("i", T.INT64, [2, "n"])], ["a", "b", "c"], opset=opset, inits=[d, fd, v, one], ir=10)
    res = check(m, [({"n": n}, {"i": rng.integers(0, 4, (2, n))}) for n in (1, 6)])
    assert not res.unresolved()
    assert N in res.shape("c") and 4 in res.shape("b")


def test_image_decoder_onnx_reference():
    # onnxruntime 1.32 has no ImageDecoder kernel: checked against onnx's reference evaluator
    pil = pytest.importorskip("PIL.Image")
    nodes = [node("ImageDecoder", ["x"], ["rgb"]), node("ImageDecoder", ["x"], ["g"], pixel_format="Grayscale")]
    m = model(nodes, [("x", T.UINT8, ["n"])], ["rgb", "g"], opset=20, ir=10)
    cases = []
    for h, w in ((5, 7), (2, 3)):
        buf = io.BytesIO()
        pil.fromarray(np.zeros((h, w, 3), np.uint8)).save(buf, format="PNG")
        data = np.frombuffer(buf.getvalue(), np.uint8)
        cases.append(({"n": data.size}, {"x": data}))
    res = check(m, cases, run=run_reference, fresh_ok=["g", "rgb"])
    assert res.shape("g")[2] == 1 and res.shape("rgb")[2] == 3 and fresh_of(res, "rgb", 0)


def test_random_ops_opset1_15():
    nodes = [node("RandomNormal", [], ["a"], shape=[2, 3]), node("RandomUniform", [], ["b"], shape=[4], dtype=T.DOUBLE),
             node("RandomNormalLike", ["x"], ["c"]), node("RandomUniformLike", ["x"], ["d"], dtype=T.DOUBLE),
             node("Bernoulli", ["p"], ["e"]), node("Bernoulli", ["p"], ["f"], dtype=T.INT64),
             node("Multinomial", ["x"], ["g"], sample_size=5), node("Multinomial", ["x"], ["h"], dtype=T.INT64)]
    m = model(nodes, [("x", T.FLOAT, ["n", 3]), ("p", T.FLOAT, ["n"])], list("abcdefgh"), opset=15, ir=10)
    res = check(m, [({"n": n}, {"x": _x((n, 3)), "p": _x(n)}) for n in (1, 4)])
    assert res.shape("g") == (N, 5) and res.values["g"].dtype == T.INT32 and not res.unresolved()


def test_random_ops_opset22_onnx_reference():
    # onnxruntime 1.32 has no opset-22 kernels for these: checked against onnx's reference evaluator
    nodes = [node("RandomNormal", [], ["a"], shape=[2, 3], dtype=T.DOUBLE), node("RandomUniformLike", ["x"], ["d"]),
             node("Bernoulli", ["x"], ["e"], dtype=T.INT64)]
    m = model(nodes, [("x", T.FLOAT, ["n", 3])], ["a", "d", "e"], opset=22, ir=10)
    check(m, [({"n": n}, {"x": _x((n, 3))}) for n in (1, 4)], run=run_reference)
