"""A rule that cannot tell an output's rank says why, and explain passes the reason on.

The rank really is unknown in these models: onnxruntime gives outputs of different ranks
for inputs of different ranks (each with the same declared type, no shape)."""

import numpy as np
import onnx
import onnxruntime as ort
from helpers import I64, F, model
from onnx import helper

import onnxsym
from onnxsym.commands.explain import Lineage


def _shaped_nowhere():
    """x has no shape; y = Squeeze(x), z = ReduceSum(x, axes) with axes a graph input."""
    return model([helper.make_node("Squeeze", ["x"], ["y"]),
                  helper.make_node("Relu", ["y"], ["r"]),
                  helper.make_node("ReduceSum", ["r", "axes"], ["z"], keepdims=0)],
                 [("x", F, None), ("axes", I64, [1])], [("y", F), ("z", F)], ir=onnx.IR_VERSION)


def _ort_ranks(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    y, z = sess.run(None, {"x": x, "axes": np.array([0], np.int64)})
    return y.ndim, z.ndim


def test_onnxruntime_gives_different_ranks_so_the_rank_is_unknown():
    m = _shaped_nowhere()
    assert _ort_ranks(m, np.ones((2, 1, 3), np.float32)) == (2, 1)
    assert _ort_ranks(m, np.ones((2, 3, 4, 5), np.float32)) == (4, 3)


def test_the_rule_records_why_the_rank_is_unknown():
    res = onnxsym.infer(_shaped_nowhere())
    assert res.shape("y") is None and res.shape("z") is None
    assert res.unknown_rank["y"].reason == "input rank or axes unknown"
    # Relu passes the unknown rank on; ReduceSum says its own reason
    assert res.unknown_rank["z"].reason == "input rank unknown"
    assert res.unknown_rank["z"].op_type == "ReduceSum"


def test_explain_names_the_reason():
    res = onnxsym.infer(_shaped_nowhere())
    text = "\n".join(Lineage(res).explain("y").lines())
    assert "input rank or axes unknown" in text
