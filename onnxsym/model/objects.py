"""Models held as objects by export scripts: an ``onnx_ir.Model`` and a torch ``ONNXProgram``.

Recognised by the module their class comes from, never by importing onnx_ir or torch: without
them installed nothing here imports them, and a plain ModelProto or path never reaches here.
Each is serialized to a ``ModelProto`` to be inferred (weights included: they are in memory
already), and :func:`back` gives an annotated proto back as the kind it came as.
"""

from __future__ import annotations

import onnx

from ..errors import UserInputError


def kind(obj) -> str | None:
    """``"onnx_ir"`` for an ``onnx_ir.Model``, ``"onnx_program"`` for a torch ``ONNXProgram``, else None."""
    cls = type(obj)
    module = getattr(cls, "__module__", "") or ""
    if cls.__name__ == "ONNXProgram" and module.startswith("torch.onnx"):
        return "onnx_program"
    if cls.__name__ == "Model" and module.split(".")[0] == "onnx_ir":
        return "onnx_ir"
    return None


def to_proto(obj, what: str) -> onnx.ModelProto:
    """The ``ModelProto`` of an object :func:`kind` recognises (``what`` is its kind)."""
    import onnx_ir as ir  # (installed: one of its models is here)

    model = obj.model if what == "onnx_program" else obj
    if model is None:
        raise UserInputError("model: the ONNXProgram holds no model (torch.onnx.export did not finish?)")
    try:
        return ir.to_proto(model)
    except Exception as exc:  # onnx_ir refuses a model it cannot serialize: the model's fault, said once
        raise UserInputError(f"model: onnx_ir could not serialize the {type(obj).__name__}: {exc}") from None


def back(proto: onnx.ModelProto, original, what: str):
    """``proto`` (the annotated copy of ``original``) as the kind ``original`` is: an
    ``onnx_ir.Model``, or a new ``ONNXProgram`` holding that model and ``original``'s
    exported program (``original`` itself is left as it was)."""
    import onnx_ir as ir

    model = ir.from_proto(proto)
    if what == "onnx_ir":
        return model
    return type(original)(model, getattr(original, "exported_program", None))
