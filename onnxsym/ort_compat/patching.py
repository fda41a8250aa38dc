"""Put onnxsym's classes where onnxruntime's callers (and onnxslim) bind ORT SSI's, and take them out.

Callers bind the classes in several modules: ``onnxruntime.tools.symbolic_shape_infer``, the
top-level ``symbolic_shape_infer`` and ``shape_infer_helper`` that ``onnxruntime.transformers`` puts
on ``sys.path`` (``onnx_model`` imports the helper from there when it runs), their package twins,
onnxslim's copy, and any module that already did ``from ... import SymbolicShapeInference``. Each
of those attributes is replaced, and put back exactly (the same object) by :func:`uninstall`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator

from ..errors import UserInputError
from .shape_inference import standing_in_for

# Modules that bind the names, imported by install() so that a later `from X import Name` gets ours.
ORT_MODULES = ("onnxruntime.tools.symbolic_shape_infer", "onnxruntime.transformers", "symbolic_shape_infer",
               "shape_infer_helper", "onnxruntime.transformers.shape_infer_helper",
               "onnxruntime.quantization.shape_inference")
SLIM_MODULES = ("onnxslim.third_party.symbolic_shape_infer", "onnxslim.core")
NAMES = ("SymbolicShapeInference", "SymbolicShapeInferenceHelper")

# (module, attribute, the original object) for every attribute install() replaced
_replaced: list[tuple[object, str, object]] = []


def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception:  # not installed, or sympy missing for ORT's module: nothing there to replace
        return None


def install() -> None:
    """Make every ORT SSI caller get onnxsym's answers. Idempotent; undone by :func:`uninstall`."""
    if _replaced:
        return
    if importlib.util.find_spec("onnxruntime") is None:
        raise UserInputError("onnxsym.ort_compat.install: onnxruntime is not installed (pip install onnxruntime)")
    for name in ORT_MODULES + SLIM_MODULES:
        _import(name)
    # Each original class gets a drop-in of its own, which asks that original where onnxsym cannot.
    originals: dict[int, type] = {}
    for mod in list(sys.modules.values()):
        for attr in NAMES:
            obj = getattr(mod, attr, None) if mod is not None else None
            if isinstance(obj, type) and not getattr(obj, "_onnxsym_drop_in", False) and _is_original(obj):
                originals[id(obj)] = obj
    drop_ins: dict[int, type] = {}
    for obj in originals.values():
        if obj.__name__ == "SymbolicShapeInferenceHelper":  # ORT's helper: its base asked too
            base = next((b for b in obj.__mro__[1:] if b.__name__ == "SymbolicShapeInference"), None)
            drop_ins[id(obj)] = standing_in_for(base, obj)[1]
        else:
            drop_ins[id(obj)] = standing_in_for(obj)[0]
    for mod in list(sys.modules.values()):
        for attr in NAMES:
            obj = getattr(mod, attr, None) if mod is not None else None
            if obj is not None and id(obj) in drop_ins and getattr(mod, attr, None) is obj:
                _replaced.append((mod, attr, obj))
                setattr(mod, attr, drop_ins[id(obj)])


def _is_original(cls: type) -> bool:
    """Whether ``cls`` is ORT's class or onnxslim's copy (not another library's of the same name)."""
    return cls.__module__.split(".")[0] in ("onnxruntime", "onnxslim", "symbolic_shape_infer", "shape_infer_helper")


def uninstall() -> None:
    """Put back every attribute :func:`install` replaced (the same objects)."""
    while _replaced:
        mod, attr, obj = _replaced.pop()
        setattr(mod, attr, obj)


def is_installed() -> bool:
    return bool(_replaced)


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """``with installed():`` the drop-in in place inside, as it was before outside (a nested use
    leaves it to the outer one)."""
    outer = is_installed()
    install()
    try:
        yield
    finally:
        if not outer:
            uninstall()
