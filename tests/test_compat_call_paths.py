"""The shortcuts the ORT SSI drop-in's calls take give what the plain paths give.

``api.infer_written`` judges the written copy instead of writing the dims twice; a small tensor's
value is remembered by its bytes; ``dims.eq_verdict`` remembers ``try_eq``. Each is checked
against the path it stands in for, and the written models against onnxruntime at two sizes.
"""

from __future__ import annotations

import math
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnxsym import api, dims
from onnxsym.model import loader

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")


def _plain(model: onnx.ModelProto) -> bytes:
    return api.write_result(api.infer(model), metadata_entries=False).SerializeToString(deterministic=True)


@pytest.mark.parametrize("name", ["llama_tiny_ts", "bert_tiny_dynamo", "edge_shape_arith", "whisper_tiny_ts"])
def test_infer_written_is_infer_then_write(name):
    model = onnx.load(os.path.join(MODELS, f"{name}.onnx"))
    before = model.SerializeToString(deterministic=True)
    result, out = api.infer_written(model)
    assert out.SerializeToString(deterministic=True) == _plain(model)
    assert model.SerializeToString(deterministic=True) == before  # the caller's model is left as it was
    assert result.load_verdict is None


def _slice_model() -> onnx.ModelProto:
    """y = x[:, 1:] reshaped by a Constant target [0, -1]: dims from a Constant's value."""
    target = helper.make_tensor("t", TensorProto.INT64, [2], [0, -1])
    nodes = [helper.make_node("Constant", [], ["target"], value=target),
             helper.make_node("Constant", [], ["starts"], value=helper.make_tensor("s", TensorProto.INT64, [1], [1])),
             helper.make_node("Constant", [], ["ends"], value=helper.make_tensor("e", TensorProto.INT64, [1], [2**62])),
             helper.make_node("Constant", [], ["axes"], value=helper.make_tensor("a", TensorProto.INT64, [1], [1])),
             helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s1"]),
             helper.make_node("Reshape", ["s1", "target"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "n", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_written_model_runs_and_repeats(tmp_path):
    import onnxruntime as ort

    model = _slice_model()
    first = api.infer_written(model)[1]
    second = api.infer_written(model)[1]  # (the Constants' values remembered now)
    assert first.SerializeToString(deterministic=True) == second.SerializeToString(deterministic=True)
    (y_info,) = first.graph.output
    written = [d.dim_param or d.dim_value for d in y_info.type.tensor_type.shape.dim]
    assert all(written), written  # (every dim of y written: the Constants were read)
    sess = ort.InferenceSession(first.SerializeToString(), providers=["CPUExecutionProvider"])
    for b, n in ((2, 5), (3, 2)):
        (y,) = sess.run(None, {"x": np.zeros((b, n, 3), np.float32)})
        # (a written text is Python arithmetic over the input names)
        want = [d if isinstance(d, int) else eval(d, {"max": max, "min": min}, {"b": b, "n": n}) for d in written]
        assert list(y.shape) == want


def test_a_nan_constant_is_not_shared():
    t = helper.make_tensor("c", TensorProto.FLOAT, [2], [math.nan, 1.0])
    a = loader.initializer_value(t)
    b = loader.initializer_value(t)
    assert a is not b and math.isnan(a.value[0])
    plain = helper.make_tensor("d", TensorProto.INT64, [2], [3, 4])
    assert loader.initializer_value(plain) is loader.initializer_value(plain)
    assert loader.initializer_value(plain).value == (3, 4)


def test_eq_verdict_is_try_eq():
    s, t = dims.sym("s", 1, 100), dims.sym("t", 1, 100)
    cases = [(s, s), (s, t), (dims.add(s, 1), s), (dims.floordiv(dims.mul(s, 4), 4), s),
             (dims.dmax(s, t), t), (dims.dmax(s, 200), 200), (3, 3), (3, 4)]
    for a, b in cases:
        assert dims.eq_verdict(a, b) == dims.try_eq(a, b)
        assert dims.eq_verdict(a, b) == dims.try_eq(a, b)  # (the remembered answer)
        assert dims.same(a, b) == (dims.try_eq(a, b) is True)
