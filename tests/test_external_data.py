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
from helpers import F, init, model
from onnx import helper

import onnxsym
from onnxsym.errors import ModelLoadError

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


def _reshape_by_external_target(folder):
    """x[batch, 6] reshaped by an external target [-1, 2, 3] in shape.bin beside the model."""
    m = model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")], [("x", F, ["batch", 6])],
              [("y", F, None)], inits=[init("shape", np.array([-1, 2, 3], np.int64))])
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "m.onnx")
    onnx.save(m, path, save_as_external_data=True, location="shape.bin", size_threshold=0)
    return path


def _with_external(path, name, **entries):
    """A copy of the model at ``path`` named ``name`` beside it, its target's external entries changed."""
    m = onnx.load(path, load_external_data=False)
    t = m.graph.initializer[0]
    for key, value in entries.items():
        e = next((e for e in t.external_data if e.key == key), None) or t.external_data.add(key=key)
        e.value = value
    out = os.path.join(os.path.dirname(path), name)
    onnx.save(m, out)
    return out


@pytest.mark.parametrize("case, entries, problem", [
    ("outside", {"location": "../outside.bin"}, "is '../outside.bin', outside the model's folder"),
    ("link", {"location": "link.bin"}, "is 'link.bin', through a symbolic link"),
    ("offset", {"offset": "4096"}, "in 'shape.bin' is at offset 4096, length 24: past the end of the file (24 bytes)"),
    ("length", {"length": "4096"}, "in 'shape.bin' is at offset 0, length 4096: past the end of the file"),
    ("short", {"length": "8"}, "in 'shape.bin' is 8 bytes at offset 0; the tensor's 3 elements need 24"),
])
def test_an_external_target_that_cannot_be_read_is_named_and_its_dims_fresh(tmp_path, case, entries, problem):
    src = _reshape_by_external_target(str(tmp_path / "d"))
    shutil.copyfile(str(tmp_path / "d" / "shape.bin"), str(tmp_path / "outside.bin"))
    os.symlink(str(tmp_path / "d" / "shape.bin"), str(tmp_path / "d" / "link.bin"))
    path = _with_external(src, f"{case}.onnx", **entries)
    with pytest.raises(Exception):  # onnx itself refuses to read it, or to take it as the tensor
        onnx.numpy_helper.to_array(onnx.load(path).graph.initializer[0])
    before = {p: open(p, "rb").read() for p in (path, str(tmp_path / "d" / "shape.bin"))}
    r = onnxsym.infer(path)
    (w,) = [w for w in r.warnings if "external data" in w]
    assert w.startswith(f"initializer 'shape': its external data {problem}"), w
    assert all(str(d).startswith("r_") for d in r.shape("y"))  # fresh: unknown, never a guess
    out = str(tmp_path / "d" / f"{case}.sym.onnx")
    p = subprocess.run([sys.executable, "-m", "onnxsym.cli", "annotate", path, "-o", out], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and f"warning: initializer 'shape': its external data {problem}" in p.stderr, p.stderr
    assert {q: open(q, "rb").read() for q in before} == before  # the user's files untouched


def test_a_missing_external_target_is_an_error_naming_the_file(tmp_path):
    path = _with_external(_reshape_by_external_target(str(tmp_path / "d")), "gone.onnx", location="gone.bin")
    with pytest.raises(ModelLoadError, match="initializer 'shape': its external data file 'gone.bin' is missing"):
        onnxsym.infer(path)
