"""`onnxsym mlir` takes --bind, --range and --assume as `annotate --mlir` does; the torch dialect
embeds its weights unless --no-weights; the range reaches IREE, which compiles and runs the text."""

import os
import re

import numpy as np
import onnx
import pytest
from cli_models import ROOT
from click.testing import CliRunner

from onnxsym.cli import main

BERT_DYNAMO = os.path.join(ROOT, "models", "bert_tiny_dynamo.onnx")


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_mlir_range_and_bind_as_annotate_writes_them(tmp_path):
    a, b = tmp_path / "a.mlir", tmp_path / "b.mlir"
    r = cli("mlir", BERT_DYNAMO, "-o", a, "--range", "seq=1:32", "--names")
    assert r.exit_code == 0, r.output
    text = a.read_text()
    assert re.search(r"symbol.symbolic_int @seq \{max_val = 32 : i64, min_val = 1 : i64\}", text), text[:2000]
    r = cli("annotate", BERT_DYNAMO, "-o", tmp_path / "m.onnx", "--mlir", b, "--range", "seq=1:32")
    assert r.exit_code == 0, r.output
    plain = tmp_path / "plain.mlir"
    assert cli("mlir", BERT_DYNAMO, "-o", plain, "--range", "seq=1:32").exit_code == 0
    assert plain.read_text() == b.read_text()
    r = cli("mlir", BERT_DYNAMO, "-o", tmp_path / "c.mlir", "--bind", "batch=2", "--assume", "seq == batch")
    assert r.exit_code == 0, r.output
    assert "tensor<2x2xi64>" in (tmp_path / "c.mlir").read_text()


def test_torch_dialect_embeds_weights_unless_no_weights(tmp_path):
    full, elided = tmp_path / "full.mlir", tmp_path / "elided.mlir"
    assert cli("mlir", BERT_DYNAMO, "--dialect", "torch", "-o", full).exit_code == 0
    assert cli("mlir", BERT_DYNAMO, "--dialect", "torch", "--no-weights", "-o", elided).exit_code == 0
    assert "__elided__" not in full.read_text() and "__elided__" in elided.read_text()
    sym = tmp_path / "sym.mlir"
    assert cli("mlir", BERT_DYNAMO, "-o", sym).exit_code == 0 and "dense_resource" not in sym.read_text().split(
        "{-#")[0].replace("dense_resource<__elided__>", "")
    assert "Default: yes for --dialect torch" in cli("mlir", "--help").output


@pytest.mark.compilers
def test_the_range_reaches_iree_which_runs_the_model_under_its_own_function_name(tmp_path):
    # iree comes with the mlir extra; without it (the README's `pip install ".[test]"`) this skips.
    for name in ("iree.compiler", "iree.runtime"):
        pytest.importorskip(name, reason="needs the MLIR compilers: pip install '.[mlir]'")
    from iree_check import compile_cpu, run_iree, run_ort

    out = tmp_path / "bert.torch.mlir"
    assert cli("mlir", BERT_DYNAMO, "--dialect", "torch", "--range", "seq=1:16", "-o", out).exit_code == 0
    text = out.read_text()
    m = onnx.load(BERT_DYNAMO)
    assert f"func.func @{m.graph.name}(" in text and 'max_val = 16' in text
    vmfb = compile_cpu(text)
    feeds = {i.name: np.ones((2, 7), np.int64) for i in m.graph.input}
    got = run_iree(vmfb, m.graph.name, list(feeds.values()))
    want = run_ort(m, feeds)
    for g, w in zip(got, want):
        assert g.shape == w.shape and np.allclose(g, w, atol=1e-4)


def test_a_mlir_source_takes_no_knowledge_options(tmp_path):
    enc = tmp_path / "e.mlir"
    assert cli("mlir", BERT_DYNAMO, "--style", "encoding", "-o", enc).exit_code == 0
    r = cli("mlir", enc, "-o", tmp_path / "back.mlir", "--range", "seq=1:8")
    assert r.exit_code == 2 and "a .mlir MODEL is converted as it is" in r.output


def test_one_style_for_an_existing_output(tmp_path):
    existing = tmp_path / "x.onnx"
    existing.write_bytes(b"")
    for args in (["annotate", BERT_DYNAMO, "-o", existing], ["mlir", BERT_DYNAMO, "-o", existing]):
        r = cli(*args)
        assert r.exit_code == 2 and r.stderr == f"onnxsym: error: {existing} exists; use --force to replace it\n", args


def test_mlir_exports_only_the_dims_that_hold_for_every_value(tmp_path):
    """--value decides the If, but the model is fed both values (z is seq long for True, 2*seq for
    False in onnxruntime): the MLIR, as the written model, keeps only what holds for every value."""
    import onnxruntime as ort
    from cli_models import input_if_model

    branch = tmp_path / "branch.onnx"
    onnx.save(input_if_model(), branch)
    sess = ort.InferenceSession(str(branch), providers=["CPUExecutionProvider"])
    x = np.ones(5, np.float32)
    assert [sess.run(None, {"x": x, "use_cache_branch": np.array([b])})[0].shape for b in (True, False)] == [(5,), (10,)]
    plain, given, annotated = tmp_path / "plain.mlir", tmp_path / "given.mlir", tmp_path / "annotated.mlir"
    assert cli("mlir", branch, "-o", plain, "--names").exit_code == 0
    r = cli("mlir", branch, "-o", given, "--names", "--value", "use_cache_branch=1")
    assert r.exit_code == 0, r.output
    r = cli("annotate", branch, "-o", tmp_path / "b.onnx", "--mlir", annotated, "--value", "use_cache_branch=1")
    assert r.exit_code == 0, r.output
    text = plain.read_text()
    assert "symbol.bind_symbolic_shape %z, [%seq]" not in text  # (z is not seq long for every value)
    assert given.read_text() == text
    default = tmp_path / "default.mlir"  # (annotate --mlir names symbols @S0, ...)
    assert cli("mlir", branch, "-o", default).exit_code == 0
    assert annotated.read_text() == default.read_text()
