"""Dynamism the exporter lost: pinned symbols fail the gate, --dynamic asks for what the model
does not declare. Every pin is checked against onnxruntime: the model runs at the pinned size
and fails at another; every model written dynamic runs, with the shapes it declares, at several."""

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from oracle import check_written, run_ort

import onnxsym
from onnxsym.domain.pins import pins_of
from onnxsym.errors import PinnedError, UserInputError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DYN = os.path.join(ROOT, "models", "dynamism")


def path(name):
    return os.path.join(DYN, name + ".onnx")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "onnxsym", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)


def runs(model_or_path, shapes):
    """Whether onnxruntime runs the model on random float inputs of these shapes."""
    m = onnx.load(model_or_path) if isinstance(model_or_path, str) else model_or_path
    rng = np.random.default_rng(0)
    feeds = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    try:
        run_ort(m, feeds)
    except Exception as exc:  # onnxruntime's own errors (Fail, RuntimeException, InvalidArgument)
        if type(exc).__module__.startswith("onnxruntime"):
            return False
        raise
    return True


def pins(p, **kw):
    r = onnxsym.infer(p, **kw)
    with r.env:
        return pins_of(r)


# ---------------------------------------------------------------- pinned symbols fail the gate

def test_a_baked_view_pins_the_batch_and_onnxruntime_agrees():
    (pin,) = pins(path("shuffle_baked_ts"))
    assert (pin.symbol, pin.values, pin.tied_to, pin.node, pin.op_type) == ("batch", (1,), None, "/Reshape", "Reshape")
    assert runs(path("shuffle_baked_ts"), {"x": (1, 8, 6, 6)})
    assert not runs(path("shuffle_baked_ts"), {"x": (2, 8, 6, 6)})


def test_the_fixed_export_pins_nothing_and_runs_at_other_batches():
    assert pins(path("shuffle_fixed_ts")) == []
    for b in (1, 3):
        assert runs(path("shuffle_fixed_ts"), {"x": (b, 8, 6, 6)})


def test_check_fails_on_a_pin_in_every_format_and_allow_pinned_accepts_it():
    r = cli("check", path("shuffle_baked_ts"))
    assert r.returncode == 1
    assert "pinned batch == 1: Reshape '/Reshape'" in r.stdout and "--allow-pinned batch" in r.stdout
    j = json.loads(cli("check", path("shuffle_baked_ts"), "--format", "json").stdout)
    (model,) = j["models"]
    assert model["status"] == "pinned" and j["exit_code"] == 1
    assert model["pinned"][0]["symbol"] == "batch" and model["pinned"][0]["values"] == [1]
    assert model["pinned"][0]["node"] == "/Reshape" and model["pinned"][0]["allowed_by"] is None
    gh = cli("check", path("shuffle_baked_ts"), "--format", "github").stdout
    assert "::error file=" in gh and "title=onnxsym%3A pinned symbol::batch == 1" in gh
    ok = cli("check", path("shuffle_baked_ts"), "--allow-pinned", "batch")
    assert ok.returncode == 0, ok.stdout
    assert cli("check", path("shuffle_fixed_ts"), path("shuffle_fixed_dynamo")).returncode == 0


def test_annotate_and_domain_say_it_in_one_line_at_the_top(tmp_path):
    out = tmp_path / "a.onnx"
    lines = cli("annotate", path("shuffle_baked_ts"), "-o", out).stdout.splitlines()
    assert lines[1].startswith("  pinned: batch == 1 (Reshape '/Reshape')"), lines
    d = cli("domain", path("shuffle_baked_ts")).stdout.splitlines()
    assert d[1].startswith("  pinned: batch == 1 (Reshape '/Reshape')"), d
    j = json.loads(cli("domain", path("shuffle_baked_ts"), "--format", "json").stdout)
    assert [p["symbol"] for p in j["pinned"]] == ["batch"]


def test_two_declared_symbols_tied_by_a_matmul_and_onnxruntime_agrees():
    kv = os.path.join(ROOT, "models", "domain", "kv_decoder_ts.onnx")
    (pin,) = pins(kv)
    assert (pin.symbol, pin.tied_to, pin.op_type) == ("past_v", "past_k", "MatMul")
    m = onnx.load(kv)
    shapes = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in m.graph.input}

    def feeds(past_k, past_v):
        size = {"batch": 1, "seq": 3, "past_k": past_k, "past_v": past_v}
        out = {}
        for name, shape in shapes.items():
            concrete = [size[d] if isinstance(d, str) else d for d in shape]
            et = next(i for i in m.graph.input if i.name == name).type.tensor_type.elem_type
            dtype = onnx.helper.tensor_dtype_to_np_dtype(et)
            out[name] = (np.ones(concrete, dtype) if dtype == np.int64 else
                         np.random.default_rng(0).standard_normal(concrete).astype(dtype))
        return out

    run_ort(m, feeds(4, 4))
    with pytest.raises(Exception, match="MatMul"):
        run_ort(m, feeds(4, 5))


# ---------------------------------------------------------------- --dynamic

@pytest.mark.parametrize("name, node", [("shuffle_static_ts", "/Reshape"), ("tf_dense_fixed_batch", "Reshape")])
def test_dynamic_finds_the_node_that_pins_a_static_export(name, node, tmp_path):
    (pin,) = pins(path(name), dynamic={"x": {0: "batch"}})
    assert (pin.symbol, pin.values, pin.node) == ("batch", (1,), node)
    # the same model declared dynamic, as a hand edit of its dim_param would make it, fails at batch 2
    m = onnx.load(path(name))
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    shape = [d.dim_value for d in onnx.load(path(name)).graph.input[0].type.tensor_type.shape.dim]
    assert runs(m, {"x": shape}) and not runs(m, {"x": [2] + shape[1:]})
    r = cli("check", path(name), "--dynamic", "x:0=batch")
    assert r.returncode == 1 and "pinned batch == 1:" in r.stdout
    out = tmp_path / "dyn.onnx"
    w = cli("annotate", path(name), "--dynamic", "x:0=batch", "-o", out)
    assert w.returncode == 2 and not out.exists()
    assert f"x[0] cannot be dynamic: batch == 1: Reshape '{node}'" in w.stderr and "Traceback" not in w.stderr
    with pytest.raises(PinnedError, match="nothing written"):
        onnxsym.annotate(path(name), dynamic={"x": {0: "batch"}})


def test_dynamic_writes_a_model_that_runs_at_every_batch(tmp_path):
    out = tmp_path / "cnn.dyn.onnx"
    r = cli("annotate", path("cnn_static_ts"), "--dynamic", "x:0=batch", "-o", out)
    assert r.returncode == 0, r.stderr
    written = onnx.load(out)
    assert [d.dim_param or d.dim_value for d in written.graph.input[0].type.tensor_type.shape.dim] == \
        ["batch", 8, 6, 6]
    for b in (1, 2, 5):  # as written, value_info and all: onnxruntime folds what it declares
        got = run_ort(written, {"x": np.ones((b, 8, 6, 6), np.float32)})
        assert got["y"].shape == (b, 3)
    assert check_written(written, [{"batch": 1}, {"batch": 2}, {"batch": 5}]) > 0


def test_the_library_takes_dynamic_and_leaves_the_callers_model_as_it_was():
    m = onnx.load(path("cnn_static_ts"))
    before = m.SerializeToString()
    a = onnxsym.annotate(m, dynamic={"x": {0: "batch"}})
    assert m.SerializeToString() == before
    assert a.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert onnxsym.infer(m, dynamic={"x": {-4: "n"}}).shape("y") == (onnxsym.sym("n"), 3)


@pytest.mark.parametrize("spec, message", [
    ("x0=b", "expected INPUT:AXIS=NAME"), ("x:9=b", "has rank 4"), ("nope:0=b", "no graph input 'nope'"),
    ("x:0=2b", "expected INPUT:AXIS=NAME"),
])
def test_dynamic_misuse_is_one_clear_message(spec, message):
    r = cli("check", path("cnn_static_ts"), "--dynamic", spec)
    assert r.returncode == 2 and message in r.stdout + r.stderr and "Traceback" not in r.stderr
    with pytest.raises(UserInputError):
        onnxsym.infer(path("cnn_static_ts"), dynamic={"x": {9: "b"}})


def test_dynamic_on_an_already_symbolic_dim_names_it():
    r = cli("check", path("shuffle_fixed_ts"), "--dynamic", "x:0=n")
    assert r.returncode == 2 and "already the symbol 'batch'" in r.stdout + r.stderr


# ---------------------------------------------------------------- the corpus

# every pin `onnxsym check` finds in models/real/ (the model zoo exported its CNNs at batch 1; make_real.py
# declares the batch); models/domain/kv_decoder_ts is the tie above
ZOO = ["zoo_bvlc_alexnet", "zoo_inception_v1", "zoo_inception_v2", "zoo_resnet50", "zoo_shufflenet", "zoo_vgg19",
       "zoo_zfnet512"]


@pytest.mark.parametrize("name", ZOO)
def test_the_model_zoos_batch_is_pinned_and_onnxruntime_agrees(name):
    p = os.path.join(ROOT, "models", "real", name + ".onnx")
    (pin,) = pins(p)
    assert pin.symbol == "batch" and pin.values == (1,) and pin.op_type == "Reshape"
    m = onnx.load(p)
    inits = {t.name for t in m.graph.initializer}
    (x,) = [i for i in m.graph.input if i.name not in inits]
    shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
    assert runs(m, {x.name: [1] + shape[1:]}) and not runs(m, {x.name: [2] + shape[1:]})


# ---------------------------------------------------------------- the contract across versions

def diff(old, new, *args):
    r = cli("diff", old, new, "--format", "json", *args)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def test_diff_of_a_baked_re_export_finds_the_pin_and_the_narrowed_domain_with_a_witness():
    code, doc = diff(path("shuffle_fixed_ts"), path("shuffle_baked_ts"))
    assert code == 1
    kinds = {c["kind"]: c for c in doc["changes"] if c["finding"]}
    assert set(kinds) == {"domain", "pinned"}
    assert kinds["pinned"]["place"] == "batch" and kinds["pinned"]["new"] == "batch == 1"
    assert "at batch=2 the old model runs" in kinds["domain"]["why"]
    # the witness, in onnxruntime: the old model runs at batch 2, the new one does not
    assert runs(path("shuffle_fixed_ts"), {"x": (2, 8, 6, 6)}) and not runs(path("shuffle_baked_ts"), {"x": (2, 8, 6, 6)})
    back, doc = diff(path("shuffle_baked_ts"), path("shuffle_fixed_ts"))
    assert back == 0 and [c["finding"] for c in doc["changes"]] == [False]  # the pin is gone: no finding


def test_diff_finds_a_dim_made_static_and_onnxruntime_agrees():
    code, doc = diff(path("shuffle_fixed_ts"), path("shuffle_static_ts"))
    assert code == 1
    places = {c["place"]: c for c in doc["changes"] if c["finding"]}
    assert set(places) == {"x[0]", "y[0]"}
    assert places["x[0]"]["old"] == "batch" and places["x[0]"]["new"] == "1"
    assert "became static" in places["x[0]"]["why"]
    assert not runs(path("shuffle_static_ts"), {"x": (2, 8, 6, 6)})


def test_a_re_export_by_the_newer_exporter_keeps_the_contract():
    code, doc = diff(path("shuffle_fixed_ts"), path("shuffle_fixed_dynamo"))
    assert code == 0 and not [c for c in doc["changes"] if c["finding"]]
    for b in (1, 3):
        a = run_ort(onnx.load(path("shuffle_fixed_ts")), {"x": np.ones((b, 8, 6, 6), np.float32)})["y"]
        n = run_ort(onnx.load(path("shuffle_fixed_dynamo")), {"x": np.ones((b, 8, 6, 6), np.float32)})["y"]
        assert a.shape == n.shape == (b, 8, 6, 6)


def _kv_model(dtype):
    from helpers import model

    nodes = [onnx.helper.make_node("Concat", ["past", "k"], ["present"], axis=1, name="cat")]
    return model(nodes, [("past", dtype, ["batch", "past_len", 4]), ("k", dtype, ["batch", "seq", 4])],
                 [("present", dtype, None)])


def test_diff_finds_a_kv_cache_that_grew_at_the_stated_sizes(tmp_path):
    old, new = tmp_path / "fp16.onnx", tmp_path / "fp32.onnx"
    onnx.save(_kv_model(onnx.TensorProto.FLOAT16), old)
    onnx.save(_kv_model(onnx.TensorProto.FLOAT), new)
    code, doc = diff(old, new, "--bind", "batch=2", "--bind", "past_len=5", "--bind", "seq=3")
    (kv,) = [c for c in doc["changes"] if c["place"] == "kv_cache"]
    assert code == 1 and kv["finding"] and "grew 2.00x" in kv["why"]
    # the sizes onnxruntime gives the present output at those sizes
    for path_, dtype, text in ((old, np.float16, kv["old"]), (new, np.float32, kv["new"])):
        out = run_ort(onnx.load(path_), {"past": np.ones((2, 5, 4), dtype), "k": np.ones((2, 3, 4), dtype)})
        assert text == f"{out['present'].nbytes} bytes"
    code, doc = diff(new, old, "--bind", "batch=2", "--bind", "past_len=5", "--bind", "seq=3")
    # the cache shrank (no finding); the element types changed (a finding each)
    assert code == 1 and {c["place"] for c in doc["changes"] if c["finding"]} == {"past", "k", "present"}


def _typed_model(in_type, out_type):
    from helpers import model

    nodes = [onnx.helper.make_node("Cast", ["x"], ["y"], to=out_type, name="cast")]
    return model(nodes, [("x", in_type, ["batch", 4])], [("y", out_type, None)])


def test_diff_and_check_baseline_report_a_changed_element_type(tmp_path):
    """float32 -> float16 on an input (an old caller's float32 feed fails in onnxruntime), float
    -> int64 on an output: each a finding, by diff and by check --baseline."""
    old, new = tmp_path / "old.onnx", tmp_path / "new.onnx"
    onnx.save(_typed_model(onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT), old)
    onnx.save(_typed_model(onnx.TensorProto.FLOAT16, onnx.TensorProto.INT64), new)
    feed = {"x": np.ones((2, 4), np.float32)}
    assert run_ort(onnx.load(old), feed)["y"].dtype == np.float32
    with pytest.raises(Exception, match="(?i)type"):
        run_ort(onnx.load(new), feed)
    assert run_ort(onnx.load(new), {"x": np.ones((2, 4), np.float16)})["y"].dtype == np.int64
    code, doc = diff(old, new)
    found = {(c["kind"], c["place"]): (c["old"], c["new"]) for c in doc["changes"] if c["finding"]}
    assert code == 1 and found == {("input", "x"): ("float", "float16"), ("output", "y"): ("float", "int64")}
    c = cli("check", str(new), "--baseline", str(old))
    assert c.returncode == 1 and "contract input x: float -> float16" in c.stdout, c.stdout
    assert "contract output y: float -> int64" in c.stdout
    assert diff(old, old)[0] == 0


def test_diff_matches_renamed_symbols_by_position(tmp_path):
    m = onnx.load(path("shuffle_fixed_ts"))
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.shape.dim[0].dim_param = "N"
    renamed = tmp_path / "renamed.onnx"
    onnx.save(m, renamed)
    r = cli("diff", path("shuffle_fixed_ts"), renamed)
    assert r.returncode == 0 and "symbols renamed: batch -> N" in r.stdout, r.stdout


@pytest.mark.slow
def test_diff_text_github_and_check_baseline():
    t = cli("diff", path("shuffle_fixed_ts"), path("shuffle_static_ts"))
    assert t.returncode == 1 and "2 findings" in t.stdout.splitlines()[0]
    assert "finding: input x[0]: batch -> 1 (became static" in t.stdout
    gh = cli("diff", path("shuffle_fixed_ts"), path("shuffle_static_ts"), "--format", "github").stdout
    assert gh.count("::error file=") == 2 and "title=onnxsym%3A contract input" in gh
    c = cli("check", path("shuffle_static_ts"), "--baseline", path("shuffle_fixed_ts"))
    assert c.returncode == 1 and "contract input x[0]: batch -> 1" in c.stdout
    j = json.loads(cli("check", path("shuffle_static_ts"), "--baseline", path("shuffle_fixed_ts"),
                       "--format", "json").stdout)
    assert j["models"][0]["status"] == "contract" and len([c for c in j["models"][0]["contract"] if c["finding"]]) == 2
    assert cli("check", path("shuffle_fixed_dynamo"), "--baseline", path("shuffle_fixed_ts")).returncode == 0


@pytest.mark.slow
def test_show_and_explain_take_dynamic():
    s = cli("show", path("cnn_static_ts"), "--dynamic", "x:0=batch", "--outputs")
    assert s.returncode == 0 and "float32[batch, 3]" in s.stdout, s.stderr
    e = cli("explain", path("cnn_static_ts"), "y", "0", "--dynamic", "x:0=batch")
    assert e.returncode == 0 and e.stdout.startswith("y[0] = batch: resolved") and "x[0] = batch" in e.stdout
    assert cli("explain", path("cnn_static_ts"), "y", "0").stdout.startswith("y[0] = 1: static")
