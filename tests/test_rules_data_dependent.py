"""NonZero, Compress, Unique, NonMaxSuppression against onnxruntime: counts that
depend on the data are fresh symbols whose ranges hold the real counts."""


import numpy as np
import pytest
from helpers import model
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from oracle import check, fresh_of, run_reference

from onnxsym import dims

pytest.importorskip("onnxruntime")
rng = np.random.default_rng(0)


def node(op, ins, outs, **kw):
    return helper.make_node(op, ins, outs, **kw)


@pytest.mark.parametrize("opset", [9, 13])
def test_nonzero_count_is_fresh_and_bounded_by_static_size(opset):
    m = model([node("NonZero", ["x"], ["y"]), node("NonZero", ["s"], ["z"])],
              [("x", T.FLOAT, [3, 4]), ("s", T.FLOAT, ["n"])], ["y", "z"], opset=opset, ir=10)
    cases = [({"n": n}, {"x": (rng.random((3, 4)) > p).astype(np.float32),
                         "s": (rng.random(n) > 0.5).astype(np.float32)}) for n, p in ((5, 0.5), (2, 1.0), (7, 0.0))]
    res = check(m, cases, fresh_ok=["y", "z"])
    s, prov = fresh_of(res, "y", 1)
    assert (s.lo, s.hi) == (0, 12) and prov.op_type == "NonZero"
    assert res.shape("y")[0] == 2 and res.shape("z")[0] == 1


def test_nonzero_of_known_constant_is_exact():
    c = numpy_helper.from_array(np.array([[0, 3, 0], [1, 0, 2]], np.int64), "c")
    m = model([node("NonZero", ["c"], ["y"])], [("x", T.FLOAT, [1])], ["y"], inits=[c], ir=10)
    res = check(m, [({}, {"x": np.zeros(1, np.float32)})])
    assert res.shape("y") == (2, 3) and not res.unresolved()


@pytest.mark.parametrize("opset", [9, 11])
def test_compress_with_and_without_axis(opset):
    axis = 1 if opset == 9 else -1
    nodes = [node("Compress", ["x", "c"], ["y"], axis=axis), node("Compress", ["x", "c"], ["f"]),
             node("Compress", ["x", "k"], ["z"], axis=0)]
    k = numpy_helper.from_array(np.array([True, False, True]), "k")
    m = model(nodes, [("x", T.FLOAT, [3, "n"]), ("c", T.BOOL, ["m"])], ["y", "f", "z"], opset=opset, inits=[k], ir=10)
    cases = []
    for n, mm in ((5, 5), (4, 3)):
        cases.append(({"n": n, "m": mm}, {"x": rng.random((3, n)).astype(np.float32),
                                          "c": rng.random(mm) > 0.5}))
    res = check(m, cases, fresh_ok=["f", "y"])
    assert res.shape("z") == (2, dims.sym("n"))  # the known condition selects two rows
    assert fresh_of(res, "y", 1)[1].op_type == "Compress"


def test_unique_outputs_share_one_count():
    nodes = [node("Unique", ["x"], ["y", "i", "inv", "cnt"]),
             node("Unique", ["x"], ["ya", "ia", "inva", "cnta"], axis=1)]
    m = model(nodes, [("x", T.INT64, [2, "n"])], ["y", "i", "inv", "cnt", "ya", "ia", "inva", "cnta"], opset=11, ir=10)
    cases = [({"n": n}, {"x": rng.integers(0, hi, (2, n))}) for n, hi in ((6, 3), (3, 100), (4, 1))]
    res = check(m, cases, fresh_ok=["cnt", "cnta", "i", "ia", "y", "ya"])
    u = res.shape("y")[0]
    assert res.shape("i") == (u,) and res.shape("cnt") == (u,)
    assert res.shape("inv") == (2 * dims.sym("n"),)
    s, _ = fresh_of(res, "ya", 1)
    assert s.lo == 1 and res.shape("inva") == (dims.sym("n"),)


def _nms_inputs(b, n, c):
    xy = rng.random((b, n, 2)).astype(np.float32) * 10
    boxes = np.concatenate([xy, xy + 1 + rng.random((b, n, 2)).astype(np.float32)], axis=-1)
    return {"boxes": boxes, "scores": rng.random((b, c, n)).astype(np.float32)}


def test_non_max_suppression_count():
    inits = [numpy_helper.from_array(np.array([2], np.int64), "k"),
             numpy_helper.from_array(np.array([0.5], np.float32), "iou")]
    nodes = [node("NonMaxSuppression", ["boxes", "scores", "k", "iou"], ["sel"]),
             node("NonMaxSuppression", ["boxes", "scores"], ["none"])]
    m = model(nodes, [("boxes", T.FLOAT, [2, "n", 4]), ("scores", T.FLOAT, [2, 3, "n"])],
              ["sel", "none"], opset=11, inits=inits, ir=10)
    res = check(m, [({"n": n}, _nms_inputs(2, n, 3)) for n in (1, 5, 9)], fresh_ok=["sel", "y"])
    s, prov = fresh_of(res, "sel", 0)
    assert (s.lo, s.hi) == (0, 12) and prov.op_type == "NonMaxSuppression"
    assert res.shape("sel")[1] == 3 and res.shape("none") == (0, 3)


def test_nonzero_of_scalar_is_honest_about_the_runtimes_disagreeing():

    m = model([node("NonZero", ["x"], ["y"])], [("x", T.FLOAT, [])], ["y"], opset=13, ir=10)
    cases = [({}, {"x": np.array(v, np.float32)}) for v in (0.0, 2.0)]
    check(m, cases, fresh_ok=["y"])  # onnxruntime: (1, n)
    res = check(m, cases, run=run_reference, fresh_ok=["y"])  # onnx reference: (0, n)
    assert fresh_of(res, "y", 0)[0].hi == 1


def test_unique_of_known_constant_is_exact():
    c = numpy_helper.from_array(np.array([[3, 1], [1, 7]], np.int64), "c")
    m = model([node("Unique", ["c"], ["y", "i", "inv", "cnt"])], [("x", T.FLOAT, [1])],
              ["y", "i", "inv", "cnt"], opset=11, inits=[c], ir=10)
    res = check(m, [({}, {"x": np.zeros(1, np.float32)})])
    assert res.shape("y") == (3,) and res.shape("inv") == (4,) and not res.unresolved()
