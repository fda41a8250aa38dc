"""GatherND, the Scatter family, ReverseSequence, CumProd and TensorScatter
against onnxruntime (the onnx reference evaluator where onnxruntime lacks the op)."""


import numpy as np
import pytest
from helpers import model
from onnx import TensorProto as T
from onnx import helper
from oracle import check, run_ort, run_reference

pytest.importorskip("onnxruntime")
rng = np.random.default_rng(1)
node = helper.make_node


def _gather_nd_cases(k, batch):
    cases = []
    for b, n in ((2, 3), (3, 5)):
        data = rng.random((b, n, 4)).astype(np.float32)
        lead = (b,) if batch else ()
        hi = [b, n, 4][batch:batch + k]
        idx = np.stack([rng.integers(0, h, lead + (n, 2)) for h in hi], axis=-1)
        cases.append(({"b": b, "n": n}, {"x": data, "i": idx.astype(np.int64)}))
    return cases


@pytest.mark.parametrize("opset,batch", [(11, 0), (12, 0), (12, 1), (13, 1)])
@pytest.mark.parametrize("k", [1, 2])
def test_gather_nd(opset, batch, k):
    kw = {"batch_dims": batch} if batch else {}
    shape_i = (["b"] if batch else []) + ["n", 2, k]
    m = model([node("GatherND", ["x", "i"], ["y"], **kw)],
              [("x", T.FLOAT, ["b", "n", 4]), ("i", T.INT64, shape_i)], ["y"], opset=opset, ir=10)
    res = check(m, _gather_nd_cases(k, batch))
    assert not res.unresolved()


def test_scatter_family_keeps_data_shape():
    nodes = [node("ScatterElements", ["x", "i", "u"], ["se"], axis=1),
             node("ScatterND", ["x", "j", "v"], ["sn"]),
             node("ReverseSequence", ["x", "lens"], ["rs"], batch_axis=0, time_axis=1)]
    m = model(nodes, [("x", T.FLOAT, ["b", "n"]), ("i", T.INT64, ["b", 1]), ("u", T.FLOAT, ["b", 1]),
                      ("j", T.INT64, [1, 1]), ("v", T.FLOAT, [1, "n"]), ("lens", T.INT64, ["b"])],
              ["se", "sn", "rs"], opset=18, ir=10)
    cases = [({"b": b, "n": n}, {"x": rng.random((b, n)).astype(np.float32), "i": np.zeros((b, 1), np.int64),
                                 "u": np.ones((b, 1), np.float32), "j": np.array([[0]], np.int64),
                                 "v": np.ones((1, n), np.float32), "lens": np.full(b, n, np.int64)})
             for b, n in ((2, 3), (4, 1))]
    assert not check(m, cases).unresolved()


def test_scatter_v9_and_scatter_elements_v11():
    for op, opset in (("Scatter", 9), ("ScatterElements", 11)):
        m = model([node(op, ["x", "i", "u"], ["y"], axis=0)],
                  [("x", T.FLOAT, ["n", 3]), ("i", T.INT64, [1, 3]), ("u", T.FLOAT, [1, 3])], ["y"], opset=opset, ir=10)
        check(m, [({"n": n}, {"x": np.zeros((n, 3), np.float32), "i": np.zeros((1, 3), np.int64),
                                "u": np.ones((1, 3), np.float32)}) for n in (1, 4)])


def test_cumprod_onnx_reference():
    # onnxruntime 1.32 has no CumProd kernel: checked against onnx's reference evaluator
    m = model([node("CumProd", ["x", "a"], ["y"])], [("x", T.FLOAT, ["n", 3]), ("a", T.INT64, [])], ["y"],
              opset=26, ir=10)
    check(m, [({"n": n}, {"x": np.ones((n, 3), np.float32), "a": np.array(0, np.int64)}) for n in (2, 5)],
          run=run_reference)


def test_tensor_scatter():
    m = model([node("TensorScatter", ["past", "upd", "w"], ["y"], axis=-2)],
              [("past", T.FLOAT, ["b", 2, "max", 4]), ("upd", T.FLOAT, ["b", 2, "s", 4]), ("w", T.INT64, ["b"])],
              ["y"], opset=24, ir=10)
    cases = [({"b": b, "max": mx, "s": s}, {"past": np.zeros((b, 2, mx, 4), np.float32),
                                             "upd": np.ones((b, 2, s, 4), np.float32),
                                             "w": np.zeros(b, np.int64)}) for b, mx, s in ((1, 8, 3), (2, 5, 1))]
    check(m, cases, run=_ort_or_reference(m, cases[0][1]))


def _ort_or_reference(m, feeds):
    try:
        run_ort(m, feeds)
        return run_ort
    except Exception:
        return run_reference
