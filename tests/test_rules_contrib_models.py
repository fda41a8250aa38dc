"""Real exports through onnxruntime's transformer optimizer (and its dynamic quantizer):
the fused com.microsoft ops must resolve fully and match onnxruntime on every dim.

The optimizer runs at test time on the models in models/ (see models/README.md for
their sizes) at opt_level 0; what needs torch or onnx_ir to make is stored in
models/optimized/ by models/make_optimized.py."""

import collections
import logging
import os

import onnx
import pytest

import onnxsym
from onnxsym import registry
from onnxsym.commands.verify import verify

optimizer = pytest.importorskip("onnxruntime.transformers.optimizer")

HERE = os.path.dirname(os.path.abspath(__file__))
MS = "com.microsoft"
HIDDEN = {"whisper": 48, "swin": 32, "vit": 32}  # widths from models/README.md (BERT: 64, 4 heads)


def stored(name):
    """A model models/make_optimized.py saved: the optimizer imports torch at opt_level >= 1
    and the 4-bit quantizer needs onnx_ir, neither of which the tests install."""
    return onnx.load(os.path.join(HERE, "..", "models", "optimized", name + ".onnx"))


def optimized(name, model_type, opt_level, **fusion_options):
    if opt_level > 0 and not fusion_options:
        return stored(f"{name}_opt{opt_level}")
    from onnxruntime.transformers.fusion_options import FusionOptions

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    path = os.path.join(HERE, "..", "models", name + ".onnx")
    options = FusionOptions(model_type)
    for k, v in fusion_options.items():
        setattr(options, k, v)
    hidden = HIDDEN.get(name.split("_")[0], 64)
    m = optimizer.optimize_model(path, model_type=model_type, num_heads=4, hidden_size=hidden, opt_level=opt_level,
                                 use_gpu=False, verbose=False, optimization_options=options)
    model = m.model
    if not any(o.domain == MS for o in model.opset_import):  # as save_model_to_file writes it
        model.opset_import.append(onnx.helper.make_opsetid(MS, 1))
    return model


def contrib_ops(model):
    return collections.Counter(n.op_type for n in model.graph.node if n.domain == MS
                               or n.op_type == "SimplifiedLayerNormalization")


def assert_resolves_and_verifies(model, ranges=None):
    result = onnxsym.infer(model, ranges=ranges)
    assert result.no_rule == {}, result.no_rule
    assert result.unresolved() == []
    report = verify(model, result=result)
    assert report.ok, "\n".join(map(str, report.mismatches[:5]))
    assert report.checked_dims > 0
    return result


# (model, model_type, opt_level, fused ops that must be there)
CASES = [
    ("bert_tiny_ts", "bert", 0, {"Attention": 2, "EmbedLayerNormalization": 1,
                                 "SkipLayerNormalization": 4, "BiasGelu": 2}),
    ("bert_tiny_dynamo", "bert", 2, {"EmbedLayerNormalization": 1, "SkipLayerNormalization": 4,
                                     "BiasGelu": 2}),
    ("gpt_tiny_ts", "gpt2", 0, {"SkipLayerNormalization": 4, "FastGelu": 2}),
    ("gpt_tiny_dynamo", "gpt2", 0, {"SkipLayerNormalization": 4, "BiasGelu": 2}),
    ("llama_tiny_ts", "gpt2", 0, {"SkipSimplifiedLayerNormalization": 4, "SimplifiedLayerNormalization": 1}),
    ("llama_tiny_dynamo", "gpt2", 2, {"SkipSimplifiedLayerNormalization": 4,
                                      "SimplifiedLayerNormalization": 1, "QuickGelu": 2}),
    ("whisper_tiny_ts", "bart", 0, {"SkipLayerNormalization": 6, "Gelu": 2, "BiasGelu": 2}),
    ("vit_tiny_dynamo", "vit", 0, {"SkipLayerNormalization": 5, "BiasGelu": 2}),
]
# image sizes within float32's exact range, as resizes and ceil-mode pools need
IMAGE_RANGES = {"height": (1, 4096), "width": (1, 4096)}


def ranges_for(model):
    names = {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim}
    return {k: v for k, v in IMAGE_RANGES.items() if k in names} or None


@pytest.mark.parametrize("name,model_type,opt_level,fused", CASES, ids=[c[0] for c in CASES])
def test_optimized_export_resolves_and_verifies(name, model_type, opt_level, fused):
    model = optimized(name, model_type, opt_level)
    ops = contrib_ops(model)
    for op, count in fused.items():  # the fusion happened, so the contrib rules are exercised
        assert ops[op] == count, ops
    assert_resolves_and_verifies(model, ranges_for(model))


def test_bert_fused_to_multi_head_attention():
    model = optimized("bert_tiny_ts", "bert", 0, use_multi_head_attention=True, enable_gelu_approximation=True)
    ops = contrib_ops(model)
    assert ops["MultiHeadAttention"] == 2 and ops["FastGelu"] == 2, ops
    assert_resolves_and_verifies(model)


def test_attention_shapes_are_exact_expressions():
    model = optimized("bert_tiny_ts", "bert", 0)
    result = onnxsym.infer(model)
    batch, seq = onnxsym.sym("batch"), onnxsym.sym("seq")
    for n in model.graph.node:
        if n.op_type in ("Attention", "SkipLayerNormalization", "EmbedLayerNormalization"):
            assert result.shape(n.output[0]) == (batch, seq, 64), n.name
        if n.op_type == "EmbedLayerNormalization" and len(n.output) > 1 and n.output[1]:
            assert result.shape(n.output[1]) == (batch,)


def _has_onnx_rule(op):
    return registry.find_rule("", op, 17) is not None


def _needs_onnx_quantize_rules():
    missing = [op for op in ("QuantizeLinear", "DynamicQuantizeLinear", "DequantizeLinear") if not _has_onnx_rule(op)]
    if missing:
        pytest.skip(f"full resolution needs ai.onnx rules for {missing} (not in this branch)")


def test_dynamically_quantized_bert(tmp_path):
    """quantize_dynamic needs every value's type: annotating with onnxsym gives it them."""
    from onnxruntime.quantization import quantize_dynamic

    src, dst = tmp_path / "bert_opt.onnx", tmp_path / "bert_q.onnx"
    onnx.save(onnxsym.annotate(optimized("bert_tiny_ts", "bert", 0)), src)
    quantize_dynamic(str(src), str(dst))
    model = onnx.load(dst)
    ops = contrib_ops(model)
    assert ops["QAttention"] == 2 and ops["QEmbedLayerNormalization"] == 1, ops
    result = onnxsym.infer(model)
    report = verify(model, result=result)
    assert report.ok, "\n".join(map(str, report.mismatches[:5]))
    _needs_onnx_quantize_rules()
    assert result.unresolved() == []


def test_statically_quantized_cnn(tmp_path):
    """quantize_static in QOperator format: QLinearConv, QGemm, QLinearGlobalAveragePool."""
    import numpy as np
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    class Images(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(0)
            self.batches = iter([{"image": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}])

        def get_next(self):
            return next(self.batches, None)

    dst = tmp_path / "cnn_q.onnx"
    quantize_static(os.path.join(HERE, "..", "models", "cnn_tiny_ts.onnx"), str(dst), Images(),
                    quant_format=QuantFormat.QOperator)
    model = onnx.load(dst)
    ops = contrib_ops(model)
    assert ops["QGemm"] == 1 and ops["QLinearGlobalAveragePool"] == 1, ops
    result = onnxsym.infer(model, ranges=ranges_for(model))
    report = verify(model, result=result)
    assert report.ok, "\n".join(map(str, report.mismatches[:5]))
    _needs_onnx_quantize_rules()
    assert result.unresolved() == []


SESSION_CASES = [
    ("bert_tiny_dynamo", {"SkipLayerNormalization": 5, "FusedMatMul": 2, "BiasGelu": 2, "FusedGemm": 1}),
    ("llama_tiny_dynamo", {"FusedMatMul": 2, "QuickGelu": 2}),
    ("cnn_tiny_ts", {"FusedConv": 4}),
]


@pytest.mark.parametrize("name,fused", SESSION_CASES, ids=[c[0] for c in SESSION_CASES])
def test_session_optimized_export_resolves_and_verifies(name, fused, tmp_path):
    """The model onnxruntime itself writes after its extended graph optimizations."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(tmp_path / "opt.onnx")
    opts.log_severity_level = 3
    ort.InferenceSession(os.path.join(HERE, "..", "models", name + ".onnx"), opts,
                         providers=["CPUExecutionProvider"])
    model = onnx.load(opts.optimized_model_filepath)
    ops = contrib_ops(model)
    for op, count in fused.items():
        assert ops[op] == count, ops
    assert_resolves_and_verifies(model, ranges_for(model))


def test_weight_only_4bit_quantized_gpt():
    """onnxruntime's MatMulNBits quantizer: 4-bit MatMul weights and embedding tables."""
    model = stored("gpt_tiny_ts_nbits4")
    ops = contrib_ops(model)
    assert ops["MatMulNBits"] == 13 and ops["GatherBlockQuantized"] == 2, ops
    assert_resolves_and_verifies(model)
