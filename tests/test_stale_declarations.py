"""A shape declared on a produced value that the graph contradicts is stale: a warning
naming the value, the computed shape written, a finding of its own in `check`. Shapes
the graph computes that contradict each other stay errors; a graph input's declared
shape stays the truth. Checked against onnxruntime at two sizes."""

import json
import os

import numpy as np
import onnx
import pytest
from cli_models import ROOT, annotate_cli
from click.testing import CliRunner
from onnx import TensorProto, helper
from oracle import check_written, written_dims

import onnxsym
from onnxsym.cli import main

F = TensorProto.FLOAT
SIZES = [{"width": 4}, {"width": 7}]


def _ocr_like(declared_out=(1, "seqlen"), declared_mid=None):
    """As rapidocr's paddle recognizer ships: the output declared [1, 'seqlen'], the graph
    computing rank 3 (onnxruntime runs it and only warns)."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1], name="tr"),
             helper.make_node("Softmax", ["t"], ["probs"], axis=2, name="softmax")]
    vi = [helper.make_tensor_value_info("t", F, list(declared_mid))] if declared_mid else []
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [1, 3, "width"])],
                          [helper.make_tensor_value_info("probs", F, list(declared_out))], value_info=vi)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_a_declared_rank_the_graph_contradicts_is_stale_and_the_computed_shape_written():
    m = _ocr_like()
    res = onnxsym.infer(m)
    assert [(s.value, s.declared, s.computed) for s in res.stale] == [("probs", ("1", "seqlen"), ("1", "width", "3"))]
    assert "value 'probs': the model declares [1, seqlen], the graph computes [1, width, 3]: " \
           "a stale declaration; the computed shape is written" in res.warnings
    out = onnxsym.write_result(res)
    assert written_dims(out.graph.output[0]) == [1, "width", 3]
    assert list(out.graph.input) == list(m.graph.input)  # the input's declaration is the contract
    assert json.loads({p.key: p.value for p in out.metadata_props}["onnxsym.stale"]) == [
        {"value": "probs", "declared": ["1", "seqlen"], "computed": ["1", "width", "3"]}]
    assert check_written(out, SIZES) == 12


def test_a_declared_number_the_graph_contradicts_is_stale():
    m = _ocr_like(declared_out=(1, "width", 4), declared_mid=(1, "width", 5))
    res = onnxsym.infer(m)
    assert [(s.value, s.declared) for s in res.stale] == [("probs", ("1", "width", "4")), ("t", ("1", "width", "5"))]
    out = onnxsym.write_result(res)
    assert written_dims(out.graph.output[0]) == written_dims(out.graph.value_info[0]) == [1, "width", 3]
    assert check_written(out, SIZES) == 12


def test_contradictions_between_computed_shapes_stay_errors():
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1], name="tr"),
             helper.make_node("Add", ["t", "y"], ["s"], name="add")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [1, 3, "width"]),
                                       helper.make_tensor_value_info("y", F, [1, "width", 4])],
                          [helper.make_tensor_value_info("s", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(onnxsym.ShapeContradiction, match="'add'"):
        onnxsym.infer(m)


def test_cli_annotate_warns_and_check_lists_the_stale_declaration(tmp_path):
    p, out, r = annotate_cli(_ocr_like(), tmp_path)
    assert r.exit_code == 0 and "warning: value 'probs': the model declares [1, seqlen]" in r.stderr, r.output
    assert written_dims(onnx.load(out).graph.output[0]) == [1, "width", 3]
    r = CliRunner().invoke(main, ["check", p])
    assert r.exit_code == 1
    assert r.output.splitlines() == [
        f"{p}: stale: 0 unresolved, 1 stale declaration; 2 values, 6 dims",
        "  stale declaration value 'probs': the model declares [1, seqlen], the graph computes [1, width, 3]"]
    r = CliRunner().invoke(main, ["check", p, "--allow-stale", "-v"])
    assert r.exit_code == 0 and "  allowed (--allow-stale) stale declaration value 'probs'" in r.output, r.output
    r = CliRunner().invoke(main, ["show", p, "-v"])
    assert "stale declarations (the computed shape is written)" in r.output


def test_paddle_unknown_markers_are_unnamed_dims_and_a_declared_minus_one_claims_nothing():
    """rapidocr's shipped paddle classifier: input [-1, 3, '?', '?'], output [-1, 2]. A -1
    is no size and '?' no name: on an input each is a symbol of its own (height and width
    differ); on an output, "unknown", no stale declaration (issue 25: it failed CI)."""
    g = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1], name="tr")], "g",
                          [helper.make_tensor_value_info("x", F, [-1, 3, "?", "?"])],
                          [helper.make_tensor_value_info("y", F, [-1, "?", "?", 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    res = onnxsym.infer(m)
    assert [str(d) for d in res.shape("y")] == ["x_d0", "x_d2", "x_d3", "3"]
    assert "x[0]: dim_value -1 is not a size; taken as an unnamed dim, x_d0" in res.warnings
    assert res.aliases == {} and res.constraints == []
    assert res.stale == []
    out = onnxsym.write_result(res)
    assert written_dims(out.graph.output[0]) == ["x_d0", "x_d2", "x_d3", 3]
    assert written_dims(out.graph.input[0]) == ["x_d0", 3, "x_d2", "x_d3"]  # the names the dims use

    def feeds(b):
        return {"x": np.ones((b["x_d0"], 3, b["x_d2"], b["x_d3"]), np.float32)}

    assert check_written(out, [{"x_d0": 2, "x_d2": 4, "x_d3": 7}, {"x_d0": 1, "x_d2": 5, "x_d3": 3}], feeds) == 8


def test_a_declared_minus_one_beside_a_wrong_number_is_still_stale():
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                          [helper.make_tensor_value_info("x", F, ["n", 2])],
                          [helper.make_tensor_value_info("y", F, [-1, 5])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    assert [(s.value, s.declared) for s in onnxsym.infer(m).stale] == [("y", ("-1", "5"))]


def test_check_passes_paddle_s_classifier_whose_output_declares_minus_one():
    path = os.path.join(ROOT, "models", "real", "paddle_ocr_cls.onnx")
    r = CliRunner().invoke(main, ["check", path])
    assert r.exit_code == 0 and r.output.startswith(f"{path}: ok: 0 unresolved;"), r.output
