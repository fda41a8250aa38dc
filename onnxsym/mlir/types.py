"""MLIR type text for ONNX values: element types mapped exactly, ``?`` for symbolic dims."""

from __future__ import annotations

from collections.abc import Sequence

from ..inference.values import Optional_, Tensor
from ..inference.values import Sequence as SeqValue

# onnx.TensorProto element type -> MLIR builtin type. Strings have no builtin
# counterpart: they are an opaque type of the onnx namespace.
ELEMENT_TYPES = {
    1: "f32", 2: "ui8", 3: "i8", 4: "ui16", 5: "i16", 6: "i32", 7: "i64", 8: "!onnx.string",
    9: "i1", 10: "f16", 11: "f64", 12: "ui32", 13: "ui64", 14: "complex<f32>", 15: "complex<f64>",
    16: "bf16", 17: "f8E4M3FN", 18: "f8E4M3FNUZ", 19: "f8E5M2", 20: "f8E5M2FNUZ", 21: "ui4",
    22: "i4", 23: "f4E2M1FN", 24: "f8E8M0FNU", 25: "ui2", 26: "i2", 27: "f6E2M3FN", 28: "f6E3M2FN",
}
UNKNOWN_ELEMENT = "!onnx.unknown"


def element_type(dtype: int) -> str:
    return ELEMENT_TYPES.get(dtype, UNKNOWN_ELEMENT)


def tensor_type(dtype: int, shape: Sequence[object] | None, encoding: str | None = None) -> str:
    """``tensor<?x640xf16>``; ``tensor<*xf32>`` when the rank is unknown."""
    elem = element_type(dtype)
    if shape is None:
        return f"tensor<*x{elem}>"
    dims = "".join(f"{d}x" if isinstance(d, int) else "?x" for d in shape)
    return f"tensor<{dims}{elem}{', ' + encoding if encoding else ''}>"


def value_type(v: object, encoding: str | None = None) -> str:
    """The MLIR type of an onnxsym value (tensor, sequence, optional or opaque)."""
    if isinstance(v, Tensor):
        return tensor_type(v.dtype, v.shape, encoding)
    if isinstance(v, SeqValue):
        return f"!onnx.seq<{value_type(v.elem) if v.elem is not None else 'none'}>"
    if isinstance(v, Optional_):
        return f"!onnx.opt<{value_type(v.elem) if v.elem is not None else 'none'}>"
    if v is None:
        return f"tensor<*x{UNKNOWN_ELEMENT}>"
    return "!onnx.opaque"
