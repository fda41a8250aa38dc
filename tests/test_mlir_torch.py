"""The torch dialect export: op for op what torch-mlir's ONNX importer writes, its symbols and
ranges reaching IREE, and the module compiled by iree-compile and run by iree-base-runtime with
the outputs of onnxruntime and the shapes of onnxsym."""

import glob
import os
import re
import subprocess

import compilers  # noqa: F401  (first: without the compilers, this module is skipped)
import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from iree.compiler import ir
from iree_check import compile_cpu, compile_error, expected_shape, importer_text, run_iree, run_ort, torch_mlir_importer_text
from mlir_check import refines, walk

import onnxsym
from onnxsym.cli import main
from onnxsym.commands.verify import constrained_assignments, feeds
from onnxsym.mlir import to_mlir

pytestmark = pytest.mark.compilers

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_DIR = os.path.join(HERE, "..", "models")
MODELS = sorted(glob.glob(os.path.join(MODELS_DIR, "*.onnx")))


def _ops(text):
    """The torch.operator ops and terminators of a module's function, in text order, and its arguments."""
    ctx = ir.Context()
    module = ir.Module.parse(text, ctx)
    assert module.operation.verify()
    func = module.body.operations[0].operation
    entry = func.regions[0].blocks[0]
    ops = [op for op in walk(entry) if op.name in ("torch.operator", "torch.operator_terminator", "func.return")]
    return module, [str(a.type) for a in entry.arguments], ops


def _attrs(op):
    out = {}
    for name in op.attributes:
        a = op.attributes[name]
        elements = str(a).startswith(("dense<", "dense_resource<"))
        out[name] = str(a.type) if elements else str(a)  # the contents: checked by running the model
    return out


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_torch_export_is_the_importers_form_with_onnxsyms_types(path):
    model = onnx.load(path)
    ours_parsed = _ops(to_mlir(path, dialect="torch"))  # (module, args, ops): the module keeps the ops alive
    _, our_args, ours = ours_parsed
    plain = importer_text(model)
    assert torch_mlir_importer_text(model) == plain  # torch-mlir's importer and IREE's write the same
    theirs_parsed = _ops(plain)
    _, their_args, theirs = theirs_parsed
    assert len(ours) == len(theirs)
    sharper = sum(refines(a, b) for a, b in zip(our_args, their_args))
    assert len(our_args) == len(their_args)
    for a, b in zip(ours, theirs):
        assert a.name == b.name
        assert _attrs(a) == _attrs(b), (a, b)
        assert len(a.operands) == len(b.operands) and len(a.results) == len(b.results)
        assert len(a.regions) == len(b.regions)
        for x, y in zip(a.operands, b.operands):
            sharper += refines(str(x.type), str(y.type))
    if path.endswith("_ts.onnx") and "cnn" not in path:  # torchscript exports carry no value_info
        assert sharper > 0  # onnxsym proves dims that onnx's shape inference leaves as '?'


def _symbolic_ints(text):
    return re.findall(r'torch\.symbolic_int "([^"]+)" \{min_val = (\d+), max_val = (\d+)\}', text)


def test_ranges_reach_iree_as_util_assume_int(tmp_path):
    """--range seq=1:4096 becomes min_val/max_val, and IREE's bind-symbolic-shapes pass makes it
    util.assume.int facts on the dims it reads."""
    path = os.path.join(MODELS_DIR, "bert_tiny_dynamo.onnx")
    result = onnxsym.infer(path, ranges={"seq": (1, 4096)}, bind={"batch": 2})
    text = to_mlir(result, dialect="torch", names=True)
    assert ("seq", "1", "4096") in _symbolic_ints(text)
    assert 'torch.symbolic_int "batch"' not in text  # bound: a number in every type
    src = tmp_path / "bert.torch.mlir"
    src.write_text(text)
    out = subprocess.run(["iree-opt", "--pass-pipeline=builtin.module(func.func(torch-iree-bind-symbolic-shapes))",
                          str(src)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"util\.assume\.int %\S+<umin = 1, umax = 4096>", out), out[:2000]


def test_derived_dims_are_affine_expressions_over_the_roots():
    path = os.path.join(MODELS_DIR, "cnn_tiny_dynamo.onnx")
    text = to_mlir(path, dialect="torch")
    assert [name for name, _, _ in _symbolic_ints(text)] == ["S0", "S1", "S2"]
    assert ("torch.bind_symbolic_shape %getitem, [%S0, %S1, %S2], affine_map<()[s0, s1, s2] -> "
            "(s0, 16, (s1 + 1) floordiv 2, (s2 + 1) floordiv 2)> : !torch.vtensor<[?,16,?,?],f32>") in text
    # a product of symbols is no affine expression: a symbolic_int of its own, named by its expression
    text = to_mlir(os.path.join(MODELS_DIR, "edge_shape_arith.onnx"), dialect="torch", names=True)
    assert 'torch.symbolic_int "batch*seq"' in text


# IREE compiles and runs these; the CNNs' dynamic Resize it cannot compile (test below).
RUN = ["bert_tiny_dynamo", "llama_tiny_dynamo", "gpt_tiny_dynamo", "vit_tiny_dynamo"]


@pytest.mark.parametrize("name", RUN)
def test_torch_export_compiles_and_runs_in_iree_as_onnxruntime(name):
    path = os.path.join(MODELS_DIR, f"{name}.onnx")
    result = onnxsym.infer(path)
    vmfb = compile_cpu(to_mlir(result, dialect="torch", weights=True))
    outputs = [o.name for o in result.model.graph.output]
    for bindings in constrained_assignments(result, count=2, seed=5):
        inputs = feeds(result, bindings)
        got = run_iree(vmfb, result.model.graph.name, list(inputs.values()))
        want = run_ort(result.model, inputs)
        assert len(got) == len(want) == len(outputs)
        for out, g, w in zip(outputs, got, want):
            assert g.shape == w.shape == expected_shape(result, out, bindings), (out, bindings)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=f"{out} at {bindings}")


def test_iree_cannot_compile_the_cnns_dynamic_resize_whoever_imports_it():
    """The plain importer's text and onnxsym's fail alike, at the nearest Resize by scales 2 of a
    dynamic image and the ceil-mode MaxPool that reads it: an IREE limit, not the export's."""
    path = os.path.join(MODELS_DIR, "cnn_tiny_dynamo.onnx")
    plain = importer_text(onnx.load(path))
    ours = to_mlir(path, dialect="torch", weights=True)
    for text in (plain, ours):
        err = compile_error(text)
        assert "failed to resolve workgroup count hint" in err
        lines = text.splitlines()
        failing = {int(n) for n in re.findall(r":(\d+):\d+: error", err)}
        assert {lines[n - 1].split('"')[1] for n in failing} == {"onnx.Resize", "onnx.MaxPool"}, err[:1000]


def test_cli_dialect_torch(tmp_path):
    src = os.path.join(MODELS_DIR, "cnn_tiny_dynamo.onnx")
    out = tmp_path / "cnn.torch.mlir"
    r = CliRunner().invoke(main, ["mlir", src, "--dialect", "torch", "-o", str(out)])
    assert r.exit_code == 0, r.output
    # the command embeds the weights in the torch dialect (a text with elided weights compiles to
    # nothing useful), as blobs; --no-weights elides them, as the library does unless asked
    assert out.read_text() == to_mlir(src, dialect="torch", weights=True)
    assert "dialect_resources" in out.read_text()
    r = CliRunner().invoke(main, ["mlir", src, "--dialect", "torch", "--no-weights", "-o", str(tmp_path / "e.mlir")])
    assert r.exit_code == 0, r.output
    elided = (tmp_path / "e.mlir").read_text()
    assert elided == to_mlir(src, dialect="torch")
    assert "dense_resource<__elided__>" in elided and "dialect_resources" not in elided
    r = CliRunner().invoke(main, ["mlir", src, "--dialect", "torch", "--style", "unfolded", "-o", str(tmp_path / "x.mlir")])
    assert r.exit_code == 2 and "torch dialect" in r.output and not (tmp_path / "x.mlir").exists()


def test_initializers_listed_as_inputs_are_constants_in_the_importers_order():
    """IR version 3 lists initializers as graph inputs; the importer makes them no argument but
    constants, all initializers first in the graph's order."""
    from helpers import init, model
    from onnx import TensorProto, helper
    m = model([helper.make_node("Add", ["x", "b"], ["y"]), helper.make_node("Mul", ["y", "a"], ["z"])],
              [("x", TensorProto.FLOAT, ["n", 3])], ["z"],
              [init("a", np.ones((1, 3), np.float32)), init("b", np.full((3,), 2, np.float32))])
    m.graph.input.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, [3]))
    m.ir_version = 3
    ours_parsed = _ops(to_mlir(m, dialect="torch"))
    theirs_parsed = _ops(importer_text(m))
    assert ours_parsed[1] == theirs_parsed[1] == ["!torch.vtensor<[?,3],f32>"]
    assert [_attrs(op) for op in ours_parsed[2]] == [_attrs(op) for op in theirs_parsed[2]]
    assert [str(op.results[0].type) for op in ours_parsed[2][:2]] == ["!torch.vtensor<[1,3],f32>", "!torch.vtensor<[3],f32>"]


def test_iree_fails_on_the_slim_maxvit_cleanly_and_where_it_fails_on_the_importers_text():
    """models/domain/timm_maxvit_slim.onnx: iree-compile once crashed on onnxsym's text (a range
    onnxsym took from onnxslim's declared pool text, max 4, with a static 1 where the run has 24),
    where the importer's text failed cleanly. Now both fail alike: an error (exit code 1, no
    signal) at the window partition's Transpose, an IREE limit on the dynamic grid reshape."""
    path = os.path.join(MODELS_DIR, "domain", "timm_maxvit_slim.onnx")
    plain = importer_text(onnx.load(path))
    ours = to_mlir(path, dialect="torch", weights=True)
    for text in (plain, ours):
        err = compile_error(text)
        assert "Error code: 1" in err and "expected sizes to be non-negative" in err, err[:1000]
        lines = text.splitlines()
        failing = {int(n) for n in re.findall(r":(\d+):\d+: error", err)}
        assert {lines[n - 1].split('"')[1] for n in failing} == {"onnx.Transpose"}, err[:1000]
