"""The pipelines that call onnxruntime's symbolic shape inference (ORT SSI), run as users run them,
once with ORT SSI and once with ``onnxsym.ort_compat`` installed: what the tests and
bench/ort_compat_pipelines.py compare. Each returns an :class:`Outcome`; an output model is run in
onnxruntime at the manifest's sizes."""

from __future__ import annotations

import contextlib
import functools
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
            "unet_ts": "unet",
            # the other exports of those families, and models/'s tiny ones: each model_type the optimizer has
            # a family for here (the rest get "bert", whose fusions are the generic ones)
            "gpt_tiny_ts": "gpt2", "gpt_tiny_dynamo": "gpt2", "domain/gpt2_mask_ts": "gpt2",
            "t5_tiny_ts": "t5", "t5_tiny_dynamo": "t5", "hf_bart_dynamo": "bart", "hf_vit_dynamo": "vit",
            "vit_tiny_ts": "vit", "vit_tiny_dynamo": "vit", "swin_tiny_ts": "swin", "swin_tiny_dynamo": "swin",
            "unet_dynamo": "unet", "tiny_unet_timestep_ts": "unet", "tiny_unet_timestep_dynamo": "unet",
            "domain/unet_tiny_ts": "unet", "fused_clip": "clip", "fused_gpt_neox": "gpt_neox"}

# the models each pipeline runs on in tests/test_ort_compat_pipelines.py and bench/ort_compat_pipelines.py
QUANTIZE = ["optimum_bert_encoder", "hf_gpt2_ts", "hf_vit_ts", "tf_lstm_text", "silero_vad_16k_op15", "magika",
            "ddddocr_det", "hf_detr_ts"]
# optimize_model's model_type for the models of that family (OPTIMIZE); unet's NhwcConv runs on CUDA only
OPTIMIZE_FAST = ["optimum_bert_encoder", "fused_bert", "hf_gpt2_ts", "fused_gpt2", "hf_vit_ts", "fused_vit",
                 "unet_ts"]
OPTIMIZE_ENCDEC = ["hf_t5_ts", "hf_bart_ts", "fused_bart"]
# the model_types the models above do not cover (swin, clip, gpt_neox), and a dynamo export of gpt2's
OPTIMIZE_TYPES = ["swin_tiny_ts", "fused_clip", "fused_gpt_neox", "gpt_tiny_dynamo"]
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
    wrong: list = field(default_factory=list)  # dims written on the output that the run contradicts
    raised: str = ""  # what the shape inference raised inside a pipeline that catches it and goes on


MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")
# The sizes models/make_models.py checks its files at (models/README.md); another name gets 4, then 7.
SIZES = ({"batch": 2, "seq": 5, "past": 3, "height": 32, "width": 32, "frames": 20},
         {"batch": 3, "seq": 11, "past": 6, "height": 48, "width": 64, "frames": 37})


def others() -> list[str]:
    """The models under models/ that the corpus manifest does not list, by path from models/ without
    ``.onnx`` (``bert_tiny_ts``, ``domain/gpt2_mask_ts``)."""
    out = []
    for d, _, files in sorted(os.walk(MODELS)):
        if os.path.relpath(d, MODELS).split(os.sep)[0] == "real":
            continue
        for f in sorted(files):
            if f.endswith(".onnx"):
                out.append(os.path.relpath(os.path.join(d, f), MODELS)[:-len(".onnx")].replace(os.sep, "/"))
    return out


def entry(name: str) -> dict:
    found = next((e for e in corpus() if e["name"] == name), None)
    if found is not None:
        return found
    path = os.path.join(MODELS, *name.split("/")) + ".onnx"
    if not os.path.exists(path):
        raise KeyError(f"{name}: neither a corpus model nor a file under models/")
    m = onnx.load(path, load_external_data=False)
    names = {d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}
    sizes = [{n: s.get(n, 4 + 3 * k) for n in sorted(names)} for k, s in enumerate(SIZES)]
    return {"name": name, "path": path, "sizes": sizes, "feeds": {}}


@contextlib.contextmanager
def ssi(which: str):
    """ORT SSI as shipped (``"ort"``) or onnxsym's drop-in (``"onnxsym"``) inside."""
    if which == "onnxsym":
        with onnxsym.ort_compat.installed():
            yield
    else:
        assert not onnxsym.ort_compat.is_installed()
        yield


def evaluate(text, binding: dict) -> int | None:
    """A written dim at ``binding``: onnxsym's text, or ORT SSI's (sympy's: ``floor(h/2 - 1/2) + 1``);
    None for a name the run does not give, or a text neither reads."""
    return _evaluate(text, tuple(sorted(binding.items())))


@functools.lru_cache(maxsize=65536)
def _evaluate(text, binding: tuple) -> int | None:
    from oracle import _evaluate_written
    try:
        return _evaluate_written(text, dict(binding))
    except Exception:  # noqa: BLE001  (not onnxsym's syntax: sympy's, then)
        pass
    if not isinstance(text, str) or len(text) > 400 or not any(f in text for f in ("floor(", "ceiling(", "Mod(",
                                                                                    "Max(", "Min(")):
        return None  # (sympy's parser takes minutes on a long torch text, which onnxsym's reads anyway)
    try:
        import sympy
        expr = sympy.sympify(text, locals={n: sympy.Integer(v) for n, v in binding})
        return int(expr) if expr.is_number and expr.is_integer else None
    except Exception:  # noqa: BLE001
        return None


def declared(e: dict) -> dict[str, list]:
    """The dims the model as given declares on its values (graph outputs and value_info)."""
    if "_declared" not in e:
        from oracle import written_dims
        m = onnx.load(e["path"], load_external_data=False)
        e["_declared"] = {vi.name: written_dims(vi) for vi in [*m.graph.value_info, *m.graph.output]
                          if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")}
    return e["_declared"]


def _session(model: onnx.ModelProto):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def sizes_that_run(e: dict) -> list[dict]:
    """The manifest's sizes at which onnxruntime runs the model as given (every size, for the corpus;
    a models/ file may refuse a default size its domain excludes)."""
    if "_sizes_that_run" not in e:
        model = onnx.load(e["path"])
        ok = []
        try:
            sess = _session(model)
        except Exception:  # noqa: BLE001  (nothing to hold an output to)
            sess = None
        for b in e["sizes"] if sess is not None else []:
            try:
                sess.run(None, feeds_for(model, b, e["feeds"]))
                ok.append(b)
            except Exception:  # noqa: BLE001, S112
                continue
        e["_sizes_that_run"] = ok
    return e["_sizes_that_run"]


def runs_at_sizes(model: onnx.ModelProto, e: dict, wrong: list | None = None) -> bool | str:
    """True when onnxruntime runs ``model`` at every size the manifest gives where the model as
    given runs, or the first failure. ``wrong`` collects each dim the output declares (graph outputs
    and value_info, read back from its text) that the run contradicts."""
    from oracle import written_dims
    m = onnx.ModelProto()
    m.CopyFrom(model)
    written = {vi.name: written_dims(vi) for vi in [*m.graph.value_info, *m.graph.output]
               if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")}
    given = declared(e)  # a dim the model as given declares is the exporter's, not the pipeline's
    have = {o.name for o in m.graph.output}
    produced = {o for n in m.graph.node for o in n.output}
    for vi in m.graph.value_info:  # expose every annotated value, its declared shape not shaping the run
        if vi.name not in have and vi.name in produced and vi.type.HasField("tensor_type"):
            m.graph.output.add().CopyFrom(vi)
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    try:
        sess = _session(model)
        for b in sizes_that_run(e):
            sess.run(None, feeds_for(model, b, e["feeds"]))
    except Exception as exc:  # noqa: BLE001  (the outcome records it)
        return str(exc).splitlines()[0][:200]
    if wrong is None:
        return True
    try:
        sess = _session(m)
    except Exception:  # noqa: BLE001  (the exposed copy is refused: the dims are not checked)
        return True
    names = [o.name for o in sess.get_outputs()]
    for b in sizes_that_run(e):
        try:
            got = sess.run(None, feeds_for(model, b, e["feeds"]))
        except Exception:  # noqa: BLE001, S112
            continue
        for name, arr in zip(names, got):
            dims = written.get(name)
            if dims is None or not hasattr(arr, "ndim"):
                continue
            if len(dims) != arr.ndim:
                if given.get(name) != dims:  # (a rank the model as given declares is the exporter's)
                    wrong.append(f"{name}: rank {len(dims)}, real {arr.shape}")
                continue
            for axis, (text, real) in enumerate(zip(dims, arr.shape)):
                value = evaluate(text, b)
                if value is None or value == real or given.get(name) is not None and \
                        len(given[name]) == len(dims) and given[name][axis] == text:
                    continue
                wrong.append(f"{name}[{axis}] {text!r} = {value} at {b}, real {real}")
    return True


@contextlib.contextmanager
def raised_inside(module_name: str, attr: str, raised: list):
    """``module_name.attr`` (the class a pipeline calls ``infer_shapes`` of, ORT SSI's or the drop-in's)
    wrapped so that what its ``infer_shapes`` raises is appended to ``raised``: onnxslim and
    ``convert_float_to_float16`` catch it and go on without its shapes."""
    import importlib
    module = importlib.import_module(module_name)
    cls = getattr(module, attr)

    def infer_shapes(*args, **kwargs):
        try:
            return cls.infer_shapes(*args, **kwargs)
        except Exception as exc:
            raised.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200])
            raise

    setattr(module, attr, type(cls.__name__, (cls,), {"infer_shapes": staticmethod(infer_shapes)}))
    try:
        yield
    finally:
        setattr(module, attr, cls)


def _failed(exc: BaseException) -> Outcome:
    return Outcome(False, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200])


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
            return _failed(exc)
        out = onnx.load(q)
    wrong: list = []
    ran = runs_at_sizes(out, e, wrong)
    return Outcome(True, "" if ran is True else str(ran), len(out.graph.node), runs=ran is True, model=out,
                   wrong=wrong)


def optimize(name: str, which: str, model_type: str | None = None) -> Outcome:
    """optimize_model (python fusions only, opt_level=0): the fused-op counts."""
    from onnxruntime.transformers.optimizer import optimize_model
    e = entry(name)
    with ssi(which), _quiet():
        try:
            opt = optimize_model(e["path"], model_type or OPTIMIZE.get(name, "bert"), num_heads=0, hidden_size=0,
                                 opt_level=0)
        except Exception as exc:  # noqa: BLE001
            return _failed(exc)
        fused = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
        shape_failed = not opt.enable_shape_infer
    out = opt.model
    wrong: list = []
    ran = runs_at_sizes(out, e, wrong)
    return Outcome(not shape_failed, "shape inference failed" if shape_failed else "", len(out.graph.node), fused,
                   ran is True, out, wrong)


def slim(name: str, which: str) -> Outcome:
    """onnxslim.slim with its own copy of SSI or the drop-in: the node count."""
    import onnxslim
    e = entry(name)
    raised: list = []
    with ssi(which), raised_inside("onnxslim.core", "SymbolicShapeInference", raised), _quiet():
        try:
            out = onnxslim.slim(onnx.load(e["path"]))
        except Exception as exc:  # noqa: BLE001
            return _failed(exc)
    wrong: list = []
    ran = runs_at_sizes(out, e, wrong)
    return Outcome(True, "" if ran is True else str(ran), len(out.graph.node), runs=ran is True, model=out,
                   wrong=wrong, raised="; ".join(raised))


def float16(name: str, which: str) -> Outcome:
    """OnnxModel.convert_float_to_float16 (it runs the SSI helper's infer_shapes with auto_merge=True)."""
    from onnxruntime.transformers.onnx_model import OnnxModel
    e = entry(name)
    raised: list = []
    # (the converter imports the helper at the call from the top-level module onnxruntime.transformers
    # puts on sys.path)
    with ssi(which), raised_inside("shape_infer_helper", "SymbolicShapeInferenceHelper", raised), _quiet():
        m = OnnxModel(onnx.load(e["path"]))
        try:
            m.convert_float_to_float16(keep_io_types=True)
        except Exception as exc:  # noqa: BLE001
            return _failed(exc)
    wrong: list = []
    ran = runs_at_sizes(m.model, e, wrong)
    return Outcome(True, "" if ran is True else str(ran), len(m.model.graph.node), runs=ran is True, model=m.model,
                   wrong=wrong, raised="; ".join(raised))
