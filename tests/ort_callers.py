"""Callers of onnxruntime's symbolic shape inference outside quantization pre-processing, the
transformer optimizer, float16 conversion and onnxslim (tests/ort_pipelines.py has those): Olive's
passes, NVIDIA ModelOpt's ONNX quantization, onnxruntime's packing-mode conversion, each run as its
users run it, with ORT SSI and with ``onnxsym.ort_compat`` installed. Each returns an
:class:`ort_pipelines.Outcome` with ``calls``: how many times onnxsym answered (0 with ORT SSI).

Olive and ModelOpt are not dependencies of the project (each pulls some 300 MB: torch, transformers,
pandas, scipy, ...); what CI runs of them is their call into ORT SSI, written out in
tests/test_ort_compat_callers.py. These functions need the packages themselves."""

from __future__ import annotations

import contextlib
import os
import tempfile

import onnx
from ort_pipelines import Outcome, _failed, _quiet, entry, runs_at_sizes, ssi
from resolution import feeds_for


@contextlib.contextmanager
def counting():
    """A list that grows by one each time onnxsym answers a call inside."""
    from onnxsym.ort_compat import shape_inference as S
    calls: list = []
    real = S.annotated

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    S.annotated = spy
    try:
        yield calls
    finally:
        S.annotated = real


def _outcome(path: str, e: dict, calls: list, **extra) -> Outcome:
    out = onnx.load(path)
    wrong: list = []
    ran = runs_at_sizes(out, e, wrong)
    o = Outcome(True, "" if ran is True else str(ran), len(out.graph.node), runs=ran is True, model=out,
                wrong=wrong, **extra)
    o.calls = len(calls)  # type: ignore[attr-defined]
    return o


def _symbols(e: dict) -> dict[str, int]:
    return dict(e["sizes"][0])


def olive_fixed_shape(name: str, which: str) -> Outcome:
    """Olive's DynamicToFixedShape pass (its graph outputs then come from ORT SSI with
    ``auto_merge=True, guess_output_rank=True``), every input symbol fixed at the first size."""
    from olive.model import ONNXModelHandler
    from olive.passes.olive_pass import create_pass_from_dict
    from olive.passes.onnx.dynamic_to_fixed_shape import DynamicToFixedShape
    e = entry(name)
    fixed = _symbols(e)
    e_fixed = dict(e, sizes=[fixed])
    with tempfile.TemporaryDirectory() as d, ssi(which), counting() as calls, _quiet():
        try:
            p = create_pass_from_dict(DynamicToFixedShape, {"dim_param": list(fixed), "dim_value": list(fixed.values())},
                                      disable_search=True)
            out = p.run(ONNXModelHandler(model_path=_copied(e["path"], d)), os.path.join(d, "fixed.onnx"))
        except Exception as exc:  # noqa: BLE001
            return _failed(exc)
        return _outcome(out.model_path, e_fixed, calls)


def olive_float16(name: str, which: str) -> Outcome:
    """Olive's OnnxFloatToFloat16 pass (onnxruntime's convert_float_to_float16, keep_io_types)."""
    from olive.model import ONNXModelHandler
    from olive.passes.olive_pass import create_pass_from_dict
    from olive.passes.onnx.float16_conversion import OnnxFloatToFloat16
    e = entry(name)
    with tempfile.TemporaryDirectory() as d, ssi(which), counting() as calls, _quiet():
        try:
            p = create_pass_from_dict(OnnxFloatToFloat16, {"keep_io_types": True}, disable_search=True)
            out = p.run(ONNXModelHandler(model_path=_copied(e["path"], d)), os.path.join(d, "f16.onnx"))
        except Exception as exc:  # noqa: BLE001
            return _failed(exc)
        return _outcome(out.model_path, e, calls)


def _copied(path: str, folder: str) -> str:
    """A copy of the model at ``path`` in ``folder``: these tools write beside the model they are
    given (inferred copies), and the checkout's models must stay as committed."""
    import shutil

    return shutil.copy(path, os.path.join(folder, "given_" + os.path.basename(path)))


def modelopt_int8(name: str, which: str, per_node: bool = False) -> Outcome:
    """ModelOpt's ``modelopt.onnx.quantization.quantize(mode="int8")`` on CPU, calibrated on one random
    batch at the first size; ``per_node``: its per-node max calibration (ORT SSI on the augmented model,
    twice). ``fused`` holds the QuantizeLinear count."""
    import logging

    import modelopt.onnx.quantization as q
    e = entry(name)
    model = onnx.load(e["path"], load_external_data=False)
    data = feeds_for(model, e["sizes"][0], e["feeds"])
    kw = {"calibrate_per_node": True, "calibration_method": "max"} if per_node else {}
    with tempfile.TemporaryDirectory() as d, ssi(which), counting() as calls, _quiet():
        out = os.path.join(d, "q.onnx")
        try:
            q.quantize(_copied(e["path"], d), quantize_mode="int8", calibration_data=data, calibration_eps=["cpu"],
                       output_path=out, log_level="ERROR", **kw)
        except Exception as exc:  # noqa: BLE001
            return _failed(exc)
        finally:
            logging.disable(logging.WARNING)
        o = _outcome(out, e, calls)
    o.fused = {"QuantizeLinear": sum(n.op_type == "QuantizeLinear" for n in o.model.graph.node)}
    return o


def packing_mode(name: str, which: str) -> Outcome:
    """onnxruntime's ``convert_to_packing_mode`` (BERT's Attention to PackedAttention, then the SSI
    helper's ``infer_shapes``; the helper was bound at the module's import) on the model
    ``optimize_model`` fused. PackedAttention is a CUDA kernel: the output is not run."""
    from onnxruntime.transformers.convert_to_packing_mode import PackingMode
    from onnxruntime.transformers.onnx_model import OnnxModel
    from ort_pipelines import optimize
    fused = optimize(name, "ort").model
    with ssi(which), counting() as calls, _quiet():
        m = OnnxModel(fused)
        try:
            PackingMode(m).convert(use_symbolic_shape_infer=True)
        except Exception as exc:  # noqa: BLE001
            return _failed(exc)
    out = m.model
    shaped = sum(vi.type.tensor_type.HasField("shape") for vi in out.graph.value_info)
    o = Outcome(True, "", len(out.graph.node), {"PackedAttention": sum(n.op_type == "PackedAttention"
                                                                      for n in out.graph.node)}, None, out)
    o.calls = len(calls)  # type: ignore[attr-defined]
    o.shaped = shaped  # type: ignore[attr-defined]
    return o


def output_dims(model: onnx.ModelProto) -> dict[str, list]:
    return {o.name: [d.dim_value if d.HasField("dim_value") else d.dim_param or "?"
                     for d in o.type.tensor_type.shape.dim] for o in model.graph.output}


__all__ = ["counting", "modelopt_int8", "olive_fixed_shape", "olive_float16", "output_dims", "packing_mode"]
