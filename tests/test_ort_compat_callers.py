"""Callers of ORT SSI beyond tests/test_ort_compat_pipelines.py's: Olive's passes, NVIDIA ModelOpt's
ONNX quantization, onnxruntime's packing mode and float16 conversion of fused exports, onnxslim on a
model that declares an output with the wrong rank. Olive and ModelOpt pull some 300 MB each (torch,
transformers, pandas, scipy), more than their one call into ORT SSI earns in CI: their call is written
out here as they make it (a name bound at their import, or imported at the call), and the tests of
the real packages (tests/ort_callers.py) run only where they are installed. Every output is run in
onnxruntime and its written dims held to the run."""

from __future__ import annotations

import sys

import onnx
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("sympy")

import ort_pipelines as P  # noqa: E402

import onnxsym.ort_compat as oc  # noqa: E402

MODELS = ["bert_tiny_ts", "vit_tiny_ts", "whisper_tiny_ts", "hf_gpt2_ts"]


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # ORT SSI saves sym_shape_infer_temp.onnx where it fails


def _dims(vi):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim]


def _fix_output_shapes(model):
    """Olive's ``_fix_output_shapes`` (DynamicToFixedShape, and its static-LLM pass): ORT SSI imported
    at the call, ``auto_merge=True, guess_output_rank=True``, each graph output still dynamic takes the
    inferred shape when that is fixed."""
    from onnxruntime.tools.onnx_model_utils import is_fixed_size_tensor
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
    inferred = SymbolicShapeInference.infer_shapes(model, auto_merge=True, guess_output_rank=True)
    for k, o in enumerate(model.graph.output):
        if not is_fixed_size_tensor(o) and is_fixed_size_tensor(inferred.graph.output[k]):
            o.type.tensor_type.shape.CopyFrom(inferred.graph.output[k].type.tensor_type.shape)


@pytest.mark.parametrize("name", MODELS)
def test_olives_fixed_shape_call_gets_the_run_shapes(name):
    from onnxruntime.tools.onnx_model_utils import make_dim_param_fixed
    e = P.entry(name)
    at = e["sizes"][1]
    got = {}
    for which in ("ort", "onnxsym"):
        m = onnx.load(e["path"])
        for param, value in at.items():
            make_dim_param_fixed(m.graph, param, value)
        with P.ssi(which):
            _fix_output_shapes(m)
        got[which] = {o.name: _dims(o) for o in m.graph.output}
        if which == "onnxsym":
            real = P._session(m).run(None, P.feeds_for(m, at, e["feeds"]))
            assert {o.name: list(r.shape) for o, r in zip(m.graph.output, real)} == got[which]
    for out, dims in got["ort"].items():  # where ORT SSI fixed a dim, the drop-in fixed it too
        assert all(isinstance(d, int) for d in got["onnxsym"][out]) or not all(isinstance(d, int) for d in dims)


def test_a_name_bound_at_import_as_modelopts_quantizer_binds_it_gets_the_drop_in():
    # modelopt.onnx.quantization.ort_patching does this at its import, then calls it on the
    # calibration model before and after adding its ReduceMin/ReduceMax outputs
    mod = type(sys)("modelopt_like")
    exec("from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference", mod.__dict__)
    sys.modules["modelopt_like"] = mod
    e = P.entry("bert_tiny_ts")
    try:
        with oc.installed():
            assert getattr(mod.SymbolicShapeInference, "_onnxsym_drop_in", False)
            out = mod.SymbolicShapeInference.infer_shapes(onnx.load(e["path"]))
    finally:
        del sys.modules["modelopt_like"]
    wrong: list = []
    assert P.runs_at_sizes(out, e, wrong) is True and not wrong, wrong


def test_modelopts_output_reconciliation_call_sees_the_real_rank():
    # modelopt.onnx.utils._reconcile_stale_output_shapes clears the graph outputs' shapes, asks ORT SSI
    # (auto_merge=True) and adopts its shape where the declared one is stale: scan_rnn declares hs
    # [b, 8]; onnxruntime gives [seq, b, 8]
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference as ORT
    e = P.entry("onnxscript_scan_rnn")
    m = onnx.load(e["path"])
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    with oc.installed():
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
        assert SymbolicShapeInference is not ORT
        out = SymbolicShapeInference.infer_shapes(m, auto_merge=True)
    real = P._session(m).run(None, P.feeds_for(m, e["sizes"][1], e["feeds"]))
    for o, r in zip(out.graph.output, real):
        assert [P.evaluate(d, e["sizes"][1]) for d in _dims(o)] == list(r.shape), o.name


def test_onnxslim_keeps_a_declared_output_rank_as_its_own_ssi_does():
    # onnxslim writes the declared output dims back over the inferred ones axis by axis
    pytest.importorskip("onnxslim")
    theirs, ours = P.slim("onnxscript_scan_rnn", "ort"), P.slim("onnxscript_scan_rnn", "onnxsym")
    assert ours.runs, ours.error
    assert {o.name: _dims(o) for o in ours.model.graph.output} == {o.name: _dims(o) for o in theirs.model.graph.output}
    assert len(ours.wrong) <= len(theirs.wrong)


def test_float16_of_a_fused_export_runs_where_ort_ssis_does():
    # SkipSimplifiedLayerNormalization's mean and inv_std_var are float32 whatever the input; the
    # float16 converter turns every float value_info into float16, so the drop-in leaves the unread
    # ones untyped as ORT SSI does
    theirs, ours = P.float16("onnxscript_ort_fusions_qwen2", "ort"), P.float16("onnxscript_ort_fusions_qwen2", "onnxsym")
    assert theirs.runs, theirs.error
    assert ours.runs, ours.error
    assert ours.nodes <= theirs.nodes and not ours.wrong


def test_the_statistics_outputs_read_by_a_node_keep_their_value_info():
    from onnx import TensorProto, helper

    from onnxsym.ort_compat.shape_inference import _drop_unread_statistics
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 4])
    node = helper.make_node("SkipSimplifiedLayerNormalization", ["x", "x", "g"], ["y", "mean", "inv", "sum"],
                            domain="com.microsoft")
    g = helper.make_graph([node, helper.make_node("Identity", ["inv"], ["z"])], "g", [x],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 4]),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                          [onnx.numpy_helper.from_array(__import__("numpy").ones(4, "float32"), "g")],
                          value_info=[helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                                      for n in ("mean", "inv", "sum")])
    m = helper.make_model(g)
    _drop_unread_statistics(m)
    assert [vi.name for vi in m.graph.value_info] == ["inv", "sum"]  # mean is read by nothing


@pytest.mark.torch  # (transformers comes with the torch extra)
@pytest.mark.parametrize("name", ["fused_bert", "optimum_bert_encoder"])
def test_packing_mode_conversion_binds_the_helper_at_import_and_gets_the_drop_in(name):
    pytest.importorskip("transformers")  # convert_to_packing_mode imports benchmark_helper, which needs it
    import ort_callers as K
    theirs, ours = K.packing_mode(name, "ort"), K.packing_mode(name, "onnxsym")
    assert ours.ok and ours.calls >= 1
    assert ours.fused == theirs.fused and ours.nodes == theirs.nodes
    assert ours.shaped >= theirs.shaped


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bert_tiny_ts", "vit_tiny_ts", "whisper_tiny_ts"])
def test_olive_passes(name):
    pytest.importorskip("olive")
    import ort_callers as K
    for run in (K.olive_fixed_shape, K.olive_float16):
        theirs, ours = run(name, "ort"), run(name, "onnxsym")
        assert ours.ok and ours.calls >= 1, ours.error
        assert ours.runs or not theirs.runs, ours.error
        assert ours.nodes <= theirs.nodes and len(ours.wrong) <= len(theirs.wrong), (ours.wrong, theirs.wrong)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bert_tiny_ts", "vit_tiny_ts", "cnn_tiny_ts"])
def test_modelopt_int8_quantization(name):
    pytest.importorskip("modelopt.onnx.quantization")
    import ort_callers as K
    theirs, ours = K.modelopt_int8(name, "ort"), K.modelopt_int8(name, "onnxsym")
    assert ours.ok and ours.calls >= 1, ours.error
    assert ours.runs, ours.error
    assert ours.nodes <= theirs.nodes and ours.fused == theirs.fused and not ours.wrong
