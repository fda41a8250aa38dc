"""A drop-in for onnxruntime's symbolic shape inference (``SymbolicShapeInference``,
``SymbolicShapeInferenceHelper``): the same signatures, onnxsym's answers.

    import onnxsym.ort_compat
    onnxsym.ort_compat.install()          # or: with onnxsym.ort_compat.installed(): ...
    quant_pre_process("m.onnx", "p.onnx") # ORT's tools, onnxslim, Olive now call onnxsym

or ``python -m onnxsym.ort_compat --input m.onnx --output out.onnx`` (ORT's command line), or
``python -m onnxsym.ort_compat -m MODULE ARGS...`` (another tool's, with the drop-in installed).
Importing this package patches nothing. See docs/ort-compat.md.
"""

from .patching import install, installed, is_installed, uninstall
from .shape_inference import INCOMPLETE, SymbolicShapeInference, SymbolicShapeInferenceHelper

__all__ = ["INCOMPLETE", "SymbolicShapeInference", "SymbolicShapeInferenceHelper", "install", "installed",
           "is_installed", "uninstall"]
