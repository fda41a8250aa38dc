"""The pipelines that call onnxruntime's symbolic shape inference (ORT SSI), run as users run them,
once with ORT SSI and once with ``onnxsym.ort_compat`` installed: what the tests and
bench/ort_compat_pipelines.py compare. Each returns an :class:`Outcome`; an output model is run in
onnxruntime at the manifest's sizes."""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from dataclasses import dataclass, field

import onnx
from resolution import corpus, feeds_for

import onnxsym.ort_compat

# optimize_model's model_type for the corpus models of that family
OPTIMIZE = {"optimum_bert_encoder": "bert", "fused_bert": "bert", "hf_gpt2_ts": "gpt2", "fused_gpt2": "gpt2",
            "hf_t5_ts": "t5", "hf_bart_ts": "bart", "fused_bart": "bart", "hf_vit_ts": "vit", "fused_vit": "vit",
            "unet_ts": "unet"}

# the models each pipeline runs on in tests/test_ort_compat_pipelines.py and bench/ort_compat_pipelines.py
QUANTIZE = ["optimum_bert_encoder", "hf_gpt2_ts", "hf_vit_ts", "tf_lstm_text", "silero_vad_16k_op15", "magika",
            "ddddocr_det", "hf_detr_ts"]
# optimize_model's model_type for the models of that family (OPTIMIZE); unet's NhwcConv runs on CUDA only
OPTIMIZE_FAST = ["optimum_bert_encoder", "fused_bert", "hf_gpt2_ts", "fused_gpt2", "hf_vit_ts", "fused_vit",
                 "unet_ts"]
OPTIMIZE_ENCDEC = ["hf_t5_ts", "hf_bart_ts", "fused_bart"]
SLIM_FAST = ["optimum_bert_encoder", "hf_gpt2_ts", "hf_vit_ts", "silero_vad_16k_op15", "tf_lstm_text", "magika"]
# onnxslim's own SSI hands it constants on these: the drop-in must hand it as much
SLIM_CONSTANTS = ["hf_t5_ts", "hf_mistral_ts", "hf_whisper_ts", "deberta_v2_ts", "mobilevit_ts"]
FLOAT16 = ["optimum_bert_encoder", "hf_gpt2_ts", "silero_vad_16k_op15"]


@dataclass
class Outcome:
    ok: bool
    error: str = ""
    nodes: int = 0
    fused: dict = field(default_factory=dict)
    runs: bool | None = None  # the output ran at every manifest size (None: not asked)
    model: onnx.ModelProto | None = None


def entry(name: str) -> dict:
    return next(e for e in corpus() if e["name"] == name)


@contextlib.contextmanager
def ssi(which: str):
    """ORT SSI as shipped (``"ort"``) or onnxsym's drop-in (``"onnxsym"``) inside."""
    if which == "onnxsym":
        with onnxsym.ort_compat.installed():
            yield
    else:
        assert not onnxsym.ort_compat.is_installed()
        yield


def runs_at_sizes(model: onnx.ModelProto, e: dict) -> bool | str:
    """True when onnxruntime runs ``model`` at every size the manifest gives, or the first failure."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    try:
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        for b in e["sizes"]:
            sess.run(None, feeds_for(model, b, e["feeds"]))
    except Exception as exc:  # noqa: BLE001  (the outcome records it)
        return str(exc).splitlines()[0][:200]
    return True


def _quiet():
    return contextlib.redirect_stdout(io.StringIO())


def quantize(name: str, which: str) -> Outcome:
    """quant_pre_process (ORT SSI with auto_merge=False, its default) then quantize_dynamic."""
    from onnxruntime.quantization import quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process
    e = entry(name)
    with tempfile.TemporaryDirectory() as d, ssi(which), _quiet():
        pre, q = os.path.join(d, "pre.onnx"), os.path.join(d, "q.onnx")
        try:
            quant_pre_process(e["path"], pre)
            quantize_dynamic(pre, q)
        except Exception as exc:  # noqa: BLE001
            return Outcome(False, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200])
        out = onnx.load(q)
    ran = runs_at_sizes(out, e)
    return Outcome(True, "" if ran is True else str(ran), len(out.graph.node), runs=ran is True, model=out)


def optimize(name: str, which: str, model_type: str | None = None) -> Outcome:
    """optimize_model (python fusions only, opt_level=0): the fused-op counts."""
    from onnxruntime.transformers.optimizer import optimize_model
    e = entry(name)
    with ssi(which), _quiet():
        opt = optimize_model(e["path"], model_type or OPTIMIZE[name], num_heads=0, hidden_size=0, opt_level=0)
        fused = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
        shape_failed = not opt.enable_shape_infer
    out = opt.model
    ran = runs_at_sizes(out, e)
    return Outcome(not shape_failed, "shape inference failed" if shape_failed else "", len(out.graph.node), fused,
                   ran is True, out)


def slim(name: str, which: str) -> Outcome:
    """onnxslim.slim with its own copy of SSI or the drop-in: the node count."""
    import onnxslim
    e = entry(name)
    with ssi(which), _quiet():
        out = onnxslim.slim(onnx.load(e["path"]))
    ran = runs_at_sizes(out, e)
    return Outcome(True, "" if ran is True else str(ran), len(out.graph.node), runs=ran is True, model=out)


def float16(name: str, which: str) -> Outcome:
    """OnnxModel.convert_float_to_float16 (it runs the SSI helper's infer_shapes with auto_merge=True)."""
    from onnxruntime.transformers.onnx_model import OnnxModel
    e = entry(name)
    with ssi(which), _quiet():
        m = OnnxModel(onnx.load(e["path"]))
        m.convert_float_to_float16(keep_io_types=True)
    ran = runs_at_sizes(m.model, e)
    return Outcome(True, "" if ran is True else str(ran), len(m.model.graph.node), runs=ran is True, model=m.model)
