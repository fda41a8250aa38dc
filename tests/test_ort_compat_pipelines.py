"""The real pipelines that call ORT SSI, run on the corpus with ORT SSI and with
``onnxsym.ort_compat.install()``: never a failure where ORT SSI worked, never fewer fusions, never
more nodes, and every output model runs in onnxruntime at the manifest's two sizes."""

from __future__ import annotations

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("sympy")

import ort_pipelines as P  # noqa: E402


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path, monkeypatch):
    # ORT SSI saves sym_shape_infer_temp.onnx (and its data) in the working directory when it fails
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("name", P.QUANTIZE)
def test_quant_pre_process_then_quantize_dynamic(name):
    theirs, ours = P.quantize(name, "ort"), P.quantize(name, "onnxsym")
    assert ours.ok, ours.error
    assert ours.runs, ours.error
    if theirs.ok:
        assert ours.nodes <= theirs.nodes


def test_quantization_of_a_plain_bert_export_fails_with_ort_ssi_only():
    theirs = P.quantize("optimum_bert_encoder", "ort")
    assert not theirs.ok and "Incomplete symbolic shape inference" in theirs.error  # auto_merge=False
    assert P.quantize("optimum_bert_encoder", "onnxsym").runs


def _optimize(name):
    theirs, ours = P.optimize(name, "ort"), P.optimize(name, "onnxsym")
    assert ours.ok, "the drop-in's shape helper failed"
    for op, n in theirs.fused.items():
        assert ours.fused.get(op, 0) >= n, (op, theirs.fused, ours.fused)
    assert ours.runs or (theirs.runs is False and name == "unet_ts"), ours.error


@pytest.mark.parametrize("name", P.OPTIMIZE_FAST)
def test_optimize_model_fuses_at_least_as_much(name):
    _optimize(name)


@pytest.mark.parametrize("name", P.OPTIMIZE_ENCDEC)
def test_optimize_model_fuses_at_least_as_much_on_encoder_decoders(name):
    _optimize(name)


@pytest.mark.parametrize("name", P.OPTIMIZE_TYPES)
def test_optimize_model_fuses_at_least_as_much_with_the_other_model_types(name):
    _optimize(name)


def _slim(name):
    pytest.importorskip("onnxslim")
    theirs, ours = P.slim(name, "ort"), P.slim(name, "onnxsym")
    assert ours.runs, ours.error
    assert not ours.raised  # (onnxslim catches it and goes on with onnx's inference)
    assert ours.nodes <= theirs.nodes, (theirs.nodes, ours.nodes)


@pytest.mark.parametrize("name", P.SLIM_FAST)
def test_onnxslim_never_ends_with_more_nodes(name):
    _slim(name)


@pytest.mark.parametrize("name", P.SLIM_CONSTANTS)
def test_onnxslim_never_ends_with_more_nodes_where_its_ssi_hands_it_constants(name):
    _slim(name)


@pytest.mark.parametrize("name", P.FLOAT16)
def test_convert_float_to_float16(name):
    ours = P.float16(name, "onnxsym")
    assert ours.runs, ours.error
    assert not ours.raised  # (the converter catches it and converts without the types)
    assert any(t.data_type == 10 for t in ours.model.graph.initializer)  # something did become float16


def test_float16_where_ort_ssi_raises_inside_the_converter():
    # convert_float_to_float16 catches what the helper's infer_shapes raises and converts without its
    # types (onnxruntime/transformers/onnx_model.py): ORT SSI raises on this export, the drop-in does
    # not; the converter keeps TopK's and Min's float32 inputs behind Casts with the drop-in's types,
    # and both outputs fail onnxruntime's type check at the same Mul, the converter's own fault
    theirs = P.float16("float_anchor_grid_onnxscript", "ort")
    ours = P.float16("float_anchor_grid_onnxscript", "onnxsym")
    assert theirs.ok and theirs.raised.startswith("AttributeError"), theirs.raised
    assert ours.ok and not ours.raised, ours.raised
    assert not ours.runs and ours.error == theirs.error and "Mul" in ours.error, (theirs.error, ours.error)
    assert not ours.wrong


def test_the_drop_in_is_what_the_pipelines_call(monkeypatch):
    from onnxsym.ort_compat import shape_inference as S
    calls = []
    real = S.annotated

    def spy(*a, **k):
        calls.append(k)
        return real(*a, **k)

    monkeypatch.setattr(S, "annotated", spy)
    P.optimize("fused_bert", "onnxsym")
    assert calls and any(k.get("within_domain") for k in calls)  # the helper, in the fusions
    n = len(calls)
    P.quantize("tf_lstm_text", "onnxsym")
    assert len(calls) > n
    n = len(calls)
    pytest.importorskip("onnxslim")
    P.slim("tf_lstm_text", "onnxsym")
    assert len(calls) > n and calls[-1].get("materialize")
