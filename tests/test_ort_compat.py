"""onnxsym.ort_compat against onnxruntime's own SymbolicShapeInference (ORT SSI): the same
signatures and conventions, onnxsym's answers, checked by running onnxruntime."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from resolution import REAL, feeds_for, runtime_shapes

pytest.importorskip("onnxruntime")
pytest.importorskip("sympy")

import onnxsym.ort_compat as oc  # noqa: E402
from onnxsym.ort_compat import SymbolicShapeInference, SymbolicShapeInferenceHelper  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = {**os.environ, "PYTHONPATH": ROOT}  # this checkout's onnxsym, run from elsewhere


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path, monkeypatch):
    # ORT SSI saves sym_shape_infer_temp.onnx (and its data) in the working directory when it fails
    monkeypatch.chdir(tmp_path)


def ort_classes():
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference as S
    from onnxruntime.transformers.shape_infer_helper import SymbolicShapeInferenceHelper as H
    return S, H


def real(name):
    return onnx.load(os.path.join(REAL, name + ".onnx"))


def dims(vi):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
            for d in vi.type.tensor_type.shape.dim]


def _params(f):
    return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]


def test_signatures_are_ort_ssis():
    S, H = ort_classes()
    assert _params(SymbolicShapeInference.infer_shapes) == _params(S.infer_shapes)
    assert _params(SymbolicShapeInferenceHelper.__init__) == _params(H.__init__)
    assert _params(SymbolicShapeInferenceHelper.infer) == _params(H.infer)
    assert isinstance(inspect.getattr_static(SymbolicShapeInference, "infer_shapes"), staticmethod)


def test_infer_shapes_positional_and_keyword_keep_names_order_and_runtime_shapes():
    m = real("hf_gpt2_ts")
    a = SymbolicShapeInference.infer_shapes(m, 2**31 - 1, False, False, 0)  # as quant_pre_process calls it
    b = SymbolicShapeInference.infer_shapes(m, auto_merge=True, int_max=100)
    assert a is not m and a == b
    assert [o.name for o in a.graph.output] == [o.name for o in m.graph.output]
    assert [n.name for n in a.graph.node] == [n.name for n in m.graph.node]
    assert len(m.graph.value_info) == 0  # the input is left alone
    sizes = [{"batch": 1, "seq": 3, "past": 2}, {"batch": 2, "seq": 5, "past": 4}]
    runs = runtime_shapes(m, sizes)
    vis = {v.name: v for v in a.graph.value_info}
    for o in m.graph.output:  # ORT SSI puts graph outputs in value_info too
        assert o.name in vis
    for name, vi in vis.items():
        for run, b_ in zip(runs, sizes):
            if name in run:
                got = dims(vi)
                assert len(got) == len(run[name])
                for d, real_d in zip(got, run[name]):
                    if isinstance(d, int):
                        assert d == real_d, (name, got, run[name])
                    elif d in b_:
                        assert b_[d] == real_d, (name, got, run[name])
    assert not [p for p in a.metadata_props if p.key.startswith("onnxsym.")]


def test_below_opset_7_is_none_as_ort():
    S, _ = ort_classes()
    m = real("tf_lstm_text")
    m.opset_import[0].version = 6
    assert S.infer_shapes(m) is None
    assert SymbolicShapeInference.infer_shapes(m) is None


def _invalid_model():
    # a MatMul of [2, 3] by [4, 5]: fails at every size
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 5], np.zeros(20, np.float32))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_failure_text_contains_incomplete_without_a_class_to_ask(monkeypatch):
    monkeypatch.setattr(SymbolicShapeInference, "_original_class", classmethod(lambda cls: None))
    with pytest.raises(Exception, match="Incomplete symbolic shape inference"):
        SymbolicShapeInference.infer_shapes(_invalid_model())


def test_a_models_own_fault_gets_ort_ssis_own_error():
    S, _ = ort_classes()
    with pytest.raises(Exception) as theirs:
        S.infer_shapes(_invalid_model())
    with pytest.raises(Exception) as ours:
        SymbolicShapeInference.infer_shapes(_invalid_model())
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_ort_ssi_fails_on_a_plain_bert_export_and_the_drop_in_does_not():
    S, _ = ort_classes()
    m = real("optimum_bert_encoder")
    with pytest.raises(Exception, match="Incomplete symbolic shape inference"):
        S.infer_shapes(m)
    out = SymbolicShapeInference.infer_shapes(m)
    assert dims(out.graph.output[0]) == ["batch_size", "sequence_length", 16]


def _custom_op_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                           helper.make_node("Mystery", ["r"], ["y"], domain="my.domain")], "g", [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("my.domain", 1)])


def test_guess_output_rank_is_ort_ssis():
    S, _ = ort_classes()
    m = _custom_op_model()
    theirs = S.infer_shapes(m, guess_output_rank=True)
    ours = SymbolicShapeInference.infer_shapes(m, guess_output_rank=True)
    (t,) = [o for o in theirs.graph.output if o.name == "y"]
    (o,) = [o for o in ours.graph.output if o.name == "y"]
    assert len(dims(o)) == len(dims(t)) == 2
    assert all(isinstance(d, str) and d not in ("n",) for d in dims(o))  # fresh names: nothing proved
    assert len(set(dims(o))) == 2
    plain = SymbolicShapeInference.infer_shapes(m)
    assert not [o for o in plain.graph.output if o.name == "y"][0].type.tensor_type.HasField("shape")


def test_helper_binds_only_names_the_model_has_and_compares_as_ort():
    m = real("optimum_bert_encoder")
    h = SymbolicShapeInferenceHelper(m)
    assert h.infer({"batch_size": 4, "seq_len": 7}) is True
    ids, mask = "input_ids", "attention_mask"
    assert h.get_edge_shape(ids) == [4, "sequence_length"]
    assert h.compare_shape(ids, mask)
    assert h.get_edge_shape("no such value") is None
    out = h.get_edge_shape("last_hidden_state")
    assert out == [4, "sequence_length", 16]
    h2 = SymbolicShapeInferenceHelper(m)
    assert h2.infer({}) and h2.get_edge_shape(ids) == ["batch_size", "sequence_length"]


def test_equal_dims_have_equal_text_and_unknown_dims_are_apart():
    m = real("tf_shape_ops")
    h = SymbolicShapeInferenceHelper(m)
    assert h.infer({})
    seen: dict = {}
    for name, vi in h.known_vi_.items():
        for d in dims(vi) if vi.type.HasField("tensor_type") else ():
            if isinstance(d, str):
                seen.setdefault(d, set()).add(name)
    # every dim text is one expression over the input symbols or a fresh name of its own
    assert all(isinstance(k, str) and k for k in seen)


def test_known_vi_holds_subgraph_values():
    m = real("silero_vad_16k_op15")
    h = SymbolicShapeInferenceHelper(m)
    assert h.infer({})
    inner = [o for n in m.graph.node for a in n.attribute if a.type == onnx.AttributeProto.GRAPH
             for v in a.g.node for o in v.output if o]
    assert inner and all(n in h.known_vi_ for n in inner)


def test_nothing_patched_at_import_and_install_restores_exactly(tmp_path):
    code = ("import sys, onnxsym.ort_compat; assert 'onnxruntime' not in sys.modules; "
            "import onnxruntime.tools.symbolic_shape_infer as t; print(t.SymbolicShapeInference.__module__)")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "onnxruntime.tools.symbolic_shape_infer"


def test_install_everywhere_callers_bind_and_uninstall_puts_the_same_objects_back():
    import onnxruntime.quantization.shape_inference  # noqa: F401
    import onnxruntime.tools.symbolic_shape_infer as tools
    import onnxruntime.transformers  # noqa: F401  (puts symbolic_shape_infer and shape_infer_helper on sys.path)
    import shape_infer_helper
    import symbolic_shape_infer
    from onnxruntime.transformers import shape_infer_helper as pkg_helper
    mod = type(sys)("user_script")  # a module that already did `from ... import SymbolicShapeInference`
    mod.SymbolicShapeInference = tools.SymbolicShapeInference
    sys.modules["user_script"] = mod
    places = [(tools, "SymbolicShapeInference"), (symbolic_shape_infer, "SymbolicShapeInference"),
              (shape_infer_helper, "SymbolicShapeInferenceHelper"), (pkg_helper, "SymbolicShapeInferenceHelper"),
              (mod, "SymbolicShapeInference")]
    try:
        import onnxslim.core
        import onnxslim.third_party.symbolic_shape_infer as slim_ssi
        places += [(onnxslim.core, "SymbolicShapeInference"), (slim_ssi, "SymbolicShapeInference")]
    except ImportError:
        pass
    before = [getattr(m, a) for m, a in places]
    try:
        with oc.installed():
            assert oc.is_installed()
            for (m, a), b in zip(places, before):
                now = getattr(m, a)
                assert now is not b and getattr(now, "_onnxsym_drop_in", False), (m.__name__, a)
            helper_cls = shape_infer_helper.SymbolicShapeInferenceHelper
            assert helper_cls._original_helper is before[2]  # it asks ORT's helper where onnxsym cannot
            with oc.installed():  # nested: the outer one stays
                pass
            assert oc.is_installed()
        assert not oc.is_installed()
        assert [getattr(m, a) for m, a in places] == before
        assert all(x is y for x, y in zip([getattr(m, a) for m, a in places], before))
    finally:
        oc.uninstall()
        del sys.modules["user_script"]


def test_install_without_onnxruntime_says_so_in_one_line(tmp_path):
    code = ("import sys; sys.modules['onnxruntime'] = None\n"
            "import importlib.util; importlib.util.find_spec = lambda name, *a: None\n"
            "from onnxsym.ort_compat.__main__ import main; sys.exit(main(['-m', 'json.tool']))")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr.strip() == "onnxsym.ort_compat.install: onnxruntime is not installed (pip install onnxruntime)"


def test_cli_mirrors_ort_ssis(tmp_path):
    out = tmp_path / "out.onnx"
    src = os.path.join(REAL, "optimum_bert_encoder.onnx")
    r = subprocess.run([sys.executable, "-m", "onnxsym.ort_compat", "--input", src, "--output", str(out),
                        "--auto_merge", "--int_max", "100000", "--verbose", "0", "--save_as_external_data",
                        "--all_tensors_to_one_file", "--external_data_location", "w.data",
                        "--external_data_size_threshold", "64"],
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "w.data").exists()
    m = onnx.load(str(out))
    assert dims(m.graph.output[0]) == ["batch_size", "sequence_length", 16]
    import onnxruntime as ort
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    for b in ({"batch_size": 1, "sequence_length": 5}, {"batch_size": 3, "sequence_length": 17}):
        feeds = feeds_for(m, b, {"input_ids": {"int": [0, 64]}})
        (y,) = sess.run(None, feeds)
        assert y.shape == (b["batch_size"], b["sequence_length"], 16)


def test_cli_bad_input_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "onnxsym.ort_compat", "--input", str(tmp_path / "nope.onnx")],
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "nope.onnx" in r.stderr


def test_cli_runs_another_modules_command_line_with_the_drop_in(tmp_path):
    # ORT's quantization pre-processing command line on a plain BERT export: ORT SSI fails there
    src = os.path.join(REAL, "optimum_bert_encoder.onnx")
    out = tmp_path / "pre.onnx"
    cmd = ["-m", "onnxruntime.quantization.preprocess", "--input", src, "--output", str(out)]
    theirs = subprocess.run([sys.executable, *cmd], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert theirs.returncode != 0 and "Incomplete symbolic shape inference" in theirs.stderr
    ours = subprocess.run([sys.executable, "-m", "onnxsym.ort_compat", *cmd], cwd=tmp_path, env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert ours.returncode == 0, ours.stderr
    import onnxruntime as ort
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    m = onnx.load(str(out))
    for b in ({"batch_size": 1, "sequence_length": 5}, {"batch_size": 3, "sequence_length": 17}):
        (y,) = sess.run(None, feeds_for(m, b, {"input_ids": {"int": [0, 64]}}))
        assert y.shape == (b["batch_size"], b["sequence_length"], 16)


@pytest.mark.parametrize("name", ["genai_llama_fp32", "hummingbird_gemm", "onnxscript_scan_rnn",
                                  "timm_efficientnet_same_dynamo"])
def test_written_without_metadata_is_the_annotation_byte_for_byte_less_its_metadata(name):
    # The drop-in writes no onnxsym.* entries (ORT SSI writes none) and skips computing them:
    # everything else it writes is what write_result writes, to the byte.
    import onnxsym
    from onnxsym.output.metadata import PREFIX

    model = real(name)
    full = onnxsym.write_result(onnxsym.infer(model))
    assert any(p.key.startswith(PREFIX) for p in full.metadata_props)
    kept = [p for p in full.metadata_props if not p.key.startswith(PREFIX)]
    del full.metadata_props[:]
    full.metadata_props.extend(kept)
    bare = onnxsym.write_result(onnxsym.infer(model), metadata_entries=False)
    assert bare.SerializeToString(deterministic=True) == full.SerializeToString(deterministic=True)
    assert oc.SymbolicShapeInference.infer_shapes(model).graph.value_info[:len(bare.graph.value_info)] \
        == bare.graph.value_info
