"""`onnxsym domain` in the user's terms: residues with the small sizes that also run, and the
forms deployment tools take (trtexec profiles, onnxruntime overrides, torch.export Dims),
each checked in onnxruntime."""

import os
import re
import shlex

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from cli_models import BERT, ROOT, random_feeds
from click.testing import CliRunner
from helpers import F, model
from onnx import helper

import onnxsym
from onnxsym.cli import main
from onnxsym.domain.forms import simplify

DET = os.path.join(ROOT, "models", "real", "paddle_ocr_det.onnx")
CNN = os.path.join(ROOT, "models", "cnn_tiny_ts.onnx")

ort.set_default_logger_severity(4)


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _runs(sess, feeds) -> bool:
    try:
        sess.run(None, feeds)
        return True
    except Exception:
        return False


def test_paddle_detector_heights_as_residues_checked_in_onnxruntime():
    """Three broadcasts of ceil-pooled feature maps (issue 25: six equalities of floor divisions)
    are one condition per axis, `h <= 4 or h % 32 in {0, 29, 30, 31}`; onnxruntime runs exactly
    those heights."""
    r = cli("domain", DET)
    assert r.exit_code == 0, r.output
    h, w = "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"
    lines = r.output.splitlines()
    assert any(x.startswith(f"  {h} <= 4 or {h} % 32 in {{0, 29, 30, 31}}: Add 'p2o.Add.248'") for x in lines), r.output
    assert any(x.startswith(f"  {w} <= 4 or {w} % 32 in {{0, 29, 30, 31}}: ") for x in lines)
    assert "==" not in r.output  # no equality of floor divisions left
    d = onnxsym.infer(DET).domain()
    sess = ort.InferenceSession(DET, providers=["CPUExecutionProvider"])
    for height in [1, 4, 5, 16, 17, 28, 29, 31, 32, 33, 60, 61, 64, 65, 96, 97]:
        ok = _runs(sess, {"x": np.zeros((1, 3, height, 32), np.float32)})
        assert ok == (d.violated({d.symbols[0]: 1, d.symbols[1]: height, d.symbols[2]: 32}) is None), height


def test_a_disjunction_that_is_no_residue_class_plus_small_sizes_stays_as_it_is():
    s = onnxsym.sym("s")
    # s//2 == 3 or s//2 == 5: sizes 6, 7, 10, 11: no interval from the lowest, no class
    forms = simplify("or", s // 2, 3, [(s // 2, 3), (s // 2, 5)])
    assert [f.kind for f in forms] == ["other"]
    # (s + 3)//4 == 1 or s % 4 == 0: 1..4 and the multiples of 4
    [f] = simplify("or", (s + 3) // 4, 1, [((s + 3) // 4, 1), (s % 4, 0)])
    assert f.text() == "s <= 3 or s % 4 == 0"
    assert [v for v in range(1, 30) if f.holds({"s": v})] == [1, 2, 3, 4, 8, 12, 16, 20, 24, 28]


def test_require_reads_the_small_sizes_too():
    ok = cli("check", DET, "--require", "p2o.DynamicDimension.1=1:4")
    assert ok.exit_code == 0, ok.output
    bad = cli("check", DET, "--require", "p2o.DynamicDimension.1=1:8")
    assert bad.exit_code == 1 and "fails at p2o.DynamicDimension.1 = 5" in bad.output, bad.output


# ----------------------------------------------------------------- deployment forms

def _shapes(option_text):
    """{input: [dims]} from one --xxxShapes=a:1x2,b:3x4."""
    spec = option_text.split("=", 1)[1]
    return {name: [int(x) for x in dims.split("x")] for name, dims in (p.rsplit(":", 1) for p in spec.split(","))}


@pytest.mark.parametrize("path, args", [(BERT, ["--range", "batch=1:8"]), (CNN, ["--range", "batch=1:4",
                                                                              "--range", "height=1:96",
                                                                              "--range", "width=1:96"])])
def test_trtexec_profile_names_the_inputs_and_runs_in_onnxruntime(path, args):
    r = cli("domain", path, "--format", "trtexec", *args)
    assert r.exit_code == 0, r.output
    parts = shlex.split(r.stdout)
    assert [p.split("=")[0] for p in parts] == ["--minShapes", "--optShapes", "--maxShapes"]
    m = onnx.load(path)
    inputs = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for p in parts:
        shapes = _shapes(p)
        assert list(shapes) == inputs
        for i in m.graph.input:  # the declared static dims as declared
            if i.name in shapes:
                for k, d in enumerate(i.type.tensor_type.shape.dim):
                    if d.HasField("dim_value"):
                        assert shapes[i.name][k] == d.dim_value
        feeds = {}
        for i in m.graph.input:
            if i.name in shapes:
                dt = onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
                feeds[i.name] = np.ones(shapes[i.name], dt)
        sess.run(None, feeds)
    assert _shapes(parts[2]) != _shapes(parts[0])


def test_trtexec_needs_a_largest_size():
    r = cli("domain", CNN, "--format", "trtexec")  # (height and width: the float32 bound of its Resize)
    assert r.exit_code == 2
    assert r.stderr == "onnxsym: error: --format: batch has no largest size; give --range batch=LO:HI\n"


def test_trtexec_warns_where_the_box_leaves_the_domain():
    r = cli("domain", DET, "--format", "trtexec", "--range", "p2o.DynamicDimension.0=1:2",
            "--range", "p2o.DynamicDimension.1=1:640", "--range", "p2o.DynamicDimension.2=1:640")
    assert r.exit_code == 0, r.output
    assert "onnxsym: warning: not every size between min and max runs: p2o.DynamicDimension.1 <= 4 or" in r.stderr
    sess = ort.InferenceSession(DET, providers=["CPUExecutionProvider"])
    for p in shlex.split(r.stdout):
        [shape] = _shapes(p).values()
        assert _runs(sess, {"x": np.zeros(shape, np.float32)}), p  # each point itself runs


def test_ort_overrides_name_the_declared_dims_and_run():
    r = cli("domain", BERT, "--format", "ort", "--range", "batch=1:8")
    assert r.exit_code == 0, r.output
    overrides = dict(re.findall(r"add_free_dimension_override_by_name\('(\w+)', (\d+)\)", r.stdout))
    assert set(overrides) == {"batch", "seq"}
    scope: dict = {}
    exec(r.stdout, scope)  # the printed lines are the Python that sets the overrides
    sess = ort.InferenceSession(BERT, scope["so"], providers=["CPUExecutionProvider"])
    sizes = {k: int(v) for k, v in overrides.items()}
    out = sess.run(None, random_feeds(onnx.load(BERT), sizes))
    assert out[0].shape[:2] == (sizes["batch"], sizes["seq"])
    r = cli("domain", BERT, "--format", "ort", "--bind", "batch=3", "--range", "seq=1:16")
    assert "add_free_dimension_override_by_name('batch', 3)" in r.stdout


def test_torch_dims_over_the_ranges_and_multiples(tmp_path):
    """A Reshape to [h//4, 4] needs h % 4 == 0: a derived Dim 4*_h."""
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    shape = onnx.numpy_helper.from_array(np.array([-1, 4], np.int64), "shape")
    path = str(tmp_path / "m.onnx")
    onnx.save(model(nodes, [("x", F, ["h"])], [("y", F, None)], [shape]), path)
    r = cli("domain", path, "--format", "torch", "--range", "h=1:4096")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == ["from torch.export import Dim", "", "_h = Dim('_h', min=1, max=1024)", "h = 4*_h", "",
                                     "dynamic_shapes = {", "    'x': {0: h},", "}"]
    r = cli("domain", BERT, "--format", "torch")
    assert "batch = Dim('batch', min=1)" in r.stdout and "seq = Dim('seq', min=1, max=64)" in r.stdout
    assert "    'input_ids': {0: batch, 1: seq}," in r.stdout


def test_an_index_bound_holds_where_the_indices_may_be_empty():
    """BERT's position Gather reads Range(0, seq): with seq allowed to be 0 the indices may be
    empty, and the bound seq <= 64 still holds wherever there are any (it was dropped: the
    domain then promised seq = 100, where onnxruntime fails)."""
    r = cli("domain", BERT, "--allow-zero", "seq", "--sweep", "seq=0:100:25", "--bind", "batch=1", "--format", "json")
    assert r.exit_code == 0, r.output
    import json
    rows = json.loads(r.output)["rows"]
    assert [(x["seq"], x["valid"]) for x in rows] == [(0, False), (25, True), (50, True), (75, False), (100, False)]
    m = onnx.load(BERT)
    sess = ort.InferenceSession(BERT, providers=["CPUExecutionProvider"])
    for x in rows:
        assert _runs(sess, random_feeds(m, {"batch": 1, "seq": x["seq"]})) == x["valid"], x


def test_silero_conditions_are_ranges_checked_in_onnxruntime():
    """silero's encoder Convs need sizes written with min(0, ...) clamps: each is a range once
    the clamp settles (issue 25: `-((-samples + 128*min(0, ...) + 191)//512) == 1` and a page of
    `<=` like it); onnxruntime runs exactly 192..703 samples at 16 kHz and 96..351 at 8 kHz."""
    path = os.path.join(ROOT, "models", "real", "silero_vad.onnx")
    r = cli("domain", path)
    assert r.exit_code == 0 and "min(" not in r.output and "assumed" not in r.output, r.output
    assert "  if sr == 16000: 192 <= samples <= 703: " in r.output
    assert "  if sr != 16000: 96 <= samples <= 351: " in r.output
    # one line a branch: the STFT Conv's `samples >= 192` is implied by the line above it
    assert r.output.startswith(f"{path}: 2 conditions on batch, samples\n"), r.output
    summary = cli("annotate", path, "-o", os.devnull, "--force").output
    assert "min(" not in summary and "requires" not in summary, summary
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for sr, lo, hi in ((16000, 192, 703), (8000, 96, 351)):
        for n in (lo - 1, lo, hi, hi + 1):
            feeds = {"input": np.zeros((1, n), np.float32), "sr": np.array(sr, np.int64),
                     "state": np.zeros((2, 1, 128), np.float32)}
            assert _runs(sess, feeds) == (lo <= n <= hi), (sr, n)
