"""The engine's bookkeeping: order, errors, fresh symbols, preservation."""

import onnx
import pytest
from helpers import F, model
from onnx import helper

import onnxsym
from onnxsym import GraphError, ModelLoadError


def test_nodes_run_in_topological_order_not_file_order():
    m = model([helper.make_node("Relu", ["y"], ["z"], name="second"),
               helper.make_node("Relu", ["x"], ["y"], name="first")],
              [("x", F, ["batch", 4])], [("z", F, None)])
    r = onnxsym.infer(m)
    assert [str(d) for d in r.shape("z")] == ["batch", "4"]


def test_cycle_is_an_error_naming_the_nodes():
    m = model([helper.make_node("Relu", ["b"], ["a"], name="n1"),
               helper.make_node("Relu", ["a"], ["b"], name="n2")],
              [("x", F, [2])], [("a", F, None)])
    with pytest.raises(GraphError, match="cycle.*n1.*n2"):
        onnxsym.infer(m)


def test_value_nobody_produces_is_an_error():
    m = model([helper.make_node("Relu", ["ghost"], ["y"], name="r")], [("x", F, [2])], [("y", F, None)])
    with pytest.raises(GraphError, match="'r' reads 'ghost'"):
        onnxsym.infer(m)


def test_value_produced_twice_is_an_error():
    m = model([helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Relu", ["x"], ["y"], name="b")],
              [("x", F, [2])], [("y", F, None)])
    with pytest.raises(GraphError, match="produced twice"):
        onnxsym.infer(m)


def test_unknown_op_gets_recorded_unknowns_and_inference_goes_on():
    m = model([helper.make_node("Mystery", ["x"], ["y"], name="m", domain="my.ops"),
               helper.make_node("Relu", ["x"], ["z"], name="r")],
              [("x", F, ["batch", 3])], [("y", F, None), ("z", F, None)], opsets=[("my.ops", 1)])
    r = onnxsym.infer(m)
    assert [str(d) for d in r.shape("z")] == ["batch", "3"]
    (u,) = [u for u in r.unresolved() if u.value == "y"]
    assert u.axis is None and "no rule" in u.provenance[0].reason
    assert any("unknown operator" in w for w in r.warnings)


def test_loader_symbols_expressions_and_unnamed_dims():
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
              [("x", F, ["batch", "2*seq", None])], [("y", F, None)])
    r = onnxsym.infer(m)
    b, two_s, fresh = r.shape("y")
    assert str(b) == "batch" and str(two_s) == "2*seq"
    assert str(fresh) == "x_d2"
    assert r.symbols.origin["x_d2"] == "x[2]"


def test_annotate_changes_only_value_info_outputs_and_metadata():
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r", doc_string="keep me"),
               helper.make_node("Relu", ["y"], ["z"], name="r2")],
              [("x", F, ["batch", 3])], [("z", F, None)])
    before = onnx.ModelProto()
    before.CopyFrom(m)
    out = onnxsym.annotate(m)
    assert m == before  # the argument is not touched
    assert [vi.name for vi in out.graph.value_info] == ["y"]
    assert out.graph.value_info[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    stripped = onnx.ModelProto()
    stripped.CopyFrom(out)
    del stripped.graph.value_info[:]
    del stripped.metadata_props[:]
    stripped.graph.output[0].type.CopyFrom(before.graph.output[0].type)
    assert stripped == before
    assert {p.key for p in out.metadata_props} >= {"onnxsym.symbols", "onnxsym.version"}
    onnx.checker.check_model(out, full_check=True)


def test_bad_files_raise_model_load_error(tmp_path):
    p = tmp_path / "x.onnx"
    p.write_bytes(b"")
    with pytest.raises(ModelLoadError, match="empty"):
        onnxsym.infer(str(p))
    p.write_text("hello, this is not a model\n")
    with pytest.raises(ModelLoadError):
        onnxsym.infer(str(p))
    with pytest.raises(ModelLoadError, match="no such file"):
        onnxsym.infer(str(tmp_path / "missing.onnx"))
