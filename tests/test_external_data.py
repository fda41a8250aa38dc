"""Models with external data: annotating reads no weight byte, and the annotated
model still runs in onnxruntime with its weights, or is refused where it would not."""

import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

import onnxsym
from onnxsym.errors import ModelLoadError
from helpers import F, init, model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPT = os.path.join(ROOT, "models", "gpt_tiny_ts.onnx")
FEEDS = {"input_ids": np.arange(12, dtype=np.int64).reshape(2, 6) % 100}


def _external_copy(folder, src=GPT, threshold=1024):
    """``src`` saved in ``folder`` with every tensor over ``threshold`` bytes in weights.bin."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "m.onnx")
    onnx.save(onnx.load(src), path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=threshold)
    return path


def _annotate(*args):
    """The CLI in its own process, so that a read of the FIFO blocks it (and times out)."""
    return subprocess.run([sys.executable, "-m", "onnxsym.cli", "annotate", *args, "-q"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def _run(path):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return sess.run(None, FEEDS)


def _same_outputs(got, want):
    # value_info lets onnxruntime fuse differently: float rounding may differ in the last bits
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_annotating_reads_no_weight_byte_and_the_result_runs(tmp_path):
    src = _external_copy(str(tmp_path / "a"))
    weights = tmp_path / "a" / "weights.bin"
    assert weights.stat().st_size > 100_000
    expected = _run(src)
    # Weights replaced by a FIFO nobody writes to: opening it to read blocks, reading fails.
    shutil.move(str(weights), str(tmp_path / "real.bin"))
    os.mkfifo(str(weights))
    r = _annotate(src, "-o", str(tmp_path / "a" / "m.sym.onnx"))
    assert r.returncode == 0, r.stderr
    os.unlink(str(weights))
    shutil.move(str(tmp_path / "real.bin"), str(weights))

    # Next to the weights: the references are untouched, and it runs with them.
    beside = str(tmp_path / "a" / "m.sym.onnx")
    annotated = onnx.load(beside, load_external_data=False)
    assert len(annotated.graph.value_info) > 50
    assert [list(t.external_data) for t in annotated.graph.initializer] == \
        [list(t.external_data) for t in onnx.load(src, load_external_data=False).graph.initializer]
    _same_outputs(_run(beside), expected)

    # In another folder, without the weights there: refused, nothing written
    # (onnx and onnxruntime accept no path out of the model's folder, nor links).
    os.makedirs(str(tmp_path / "b"))
    r = _annotate(src, "-o", str(tmp_path / "b" / "m.onnx"))
    assert r.returncode == 2 and "weights.bin" in r.stderr and "Traceback" not in r.stderr
    assert os.listdir(str(tmp_path / "b")) == []
    # With the weights copied there, it is written and runs with them.
    shutil.copyfile(str(weights), str(tmp_path / "b" / "weights.bin"))
    r = _annotate(src, "-o", str(tmp_path / "b" / "m.onnx"))
    assert r.returncode == 0, r.stderr
    _same_outputs(_run(str(tmp_path / "b" / "m.onnx")), expected)
    onnx.load(str(tmp_path / "b" / "m.onnx"))  # onnx loads it, weights and all


def test_small_external_values_are_read_one_by_one(tmp_path):
    # Every tensor external, the Reshape target too: it is read alone, so the shape resolves.
    m = model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")],
              [("x", F, ["batch", 6])], [("y", F, None)],
              inits=[init("shape", np.array([-1, 2, 3], np.int64)),
                            init("w", np.zeros((64, 64), np.float32))])
    onnx.save(m, str(tmp_path / "src.onnx"))
    path = _external_copy(str(tmp_path / "ext"), str(tmp_path / "src.onnx"), threshold=0)
    assert all(t.data_location == onnx.TensorProto.EXTERNAL
               for t in onnx.load(path, load_external_data=False).graph.initializer)
    batch = onnxsym.infer(path).symbols.symbols["batch"]
    assert onnxsym.infer(path).shape("y") == (onnxsym.dims.expr_of(batch), 2, 3)
    # onnxruntime's own shape inference cannot read an external Reshape target: load it in memory
    sess = ort.InferenceSession(onnx.load(path).SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"x": np.zeros((4, 6), np.float32)})[0].shape == (4, 2, 3)


def test_a_graph_over_2gb_fails_with_a_clear_message(tmp_path):
    p = tmp_path / "huge.onnx"
    with open(p, "wb") as f:
        f.truncate(2**31 + 1)  # sparse: costs no disk
    with pytest.raises(ModelLoadError, match="over protobuf's 2 GB limit.*external data"):
        onnxsym.infer(str(p))
    r = _annotate(str(p))
    assert r.returncode == 2 and "2 GB" in r.stderr and "Traceback" not in r.stderr
