"""ONNX attributes and tensor contents as MLIR attribute text.

Tensor contents are elided (``dense_resource<__elided__>``) unless they are tiny
(a shape or a scalar, which a reader wants to see) or weights are requested;
requested weights are embedded as ``dense_resource`` blobs in the module's
``dialect_resources`` section.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Container

import numpy as np
import onnx
from onnx import numpy_helper

from ..errors import ModelLoadError
from ..semantics.intops import INT_TYPES
from .types import tensor_type

# Tensors with at most this many elements are always written out (shapes, scalars).
INLINE_ELEMENTS = 8
_INLINE_TYPES = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16}
# Types whose storage is one byte per element in ONNX (numpy) and MLIR alike.
_BLOB_TYPES = _INLINE_TYPES | {14, 15, 17, 18, 19, 20, 24}


def string_attr(s: str) -> str:
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        out.append(ch if 32 <= b < 127 and ch not in '"\\' else f"\\{b:02X}")
    return '"' + "".join(out) + '"'


def float_attr(x: float, ty: str = "f32") -> str:
    return f"{float_literal(x, ty)} : {ty}"


def float_literal(x: float, ty: str = "f32") -> str:
    if math.isfinite(x):
        return f"{x:.9e}" if ty == "f32" else f"{x:.17e}"
    if ty == "f32":
        return f"0x{struct.unpack('<I', struct.pack('<f', x))[0]:08X}"
    return f"0x{struct.unpack('<Q', struct.pack('<d', x))[0]:016X}"


class Resources:
    """The blobs of ``dense_resource`` attributes, by unique key."""

    def __init__(self, weights: bool, base_dir: str | None = None,
                 type_text: Callable[[int, list[int]], str] = tensor_type, alignment: int | None = None) -> None:
        self.weights = weights
        self.base_dir = base_dir
        self.type_text = type_text    # (dtype, dims) -> the attribute's builtin tensor type
        self.alignment = alignment    # of every blob; None: the element's size
        self.blobs: dict[str, str] = {}

    def tensor(self, t: onnx.TensorProto, hint: str = "tensor") -> str:
        """An ONNX tensor as an elements attribute with its type."""
        ty = self.type_text(t.data_type, list(t.dims))
        n = math.prod(t.dims)
        external = t.data_location == onnx.TensorProto.EXTERNAL
        if n <= INLINE_ELEMENTS and t.data_type in _INLINE_TYPES and not external:
            return f"{_dense(numpy_helper.to_array(t), t.data_type)} : {ty}"
        if t.data_type == onnx.TensorProto.STRING and (n <= INLINE_ELEMENTS or self.weights) and not external:
            items = [string_attr(x.decode("utf-8", "replace")) for x in t.string_data]
            return f"dense<{_nested(items, tuple(t.dims)) if t.dims else items[0]}> : {ty}"
        if not self.weights or t.data_type not in _BLOB_TYPES:
            return f"dense_resource<__elided__> : {ty}"
        try:
            arr = numpy_helper.to_array(t, self.base_dir or "")
        except Exception as exc:  # external data missing or unreadable
            raise ModelLoadError(f"tensor '{t.name}': cannot read its data: {str(exc).splitlines()[0]}") from None
        key = _key(hint, self.blobs)
        align = self.alignment or max(1, arr.dtype.itemsize if t.data_type not in (14, 15) else arr.dtype.itemsize // 2)
        data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        self.blobs[key] = "0x" + struct.pack("<I", align).hex().upper() + data.hex().upper()
        return f"dense_resource<{key}> : {ty}"

    def section(self) -> list[str]:
        if not self.blobs:
            return []
        lines = ["{-#", "  dialect_resources: {", "    builtin: {"]
        items = list(self.blobs.items())
        for i, (k, v) in enumerate(items):
            lines.append(f"      {k}: \"{v}\"{',' if i < len(items) - 1 else ''}")
        lines += ["    }", "  }", "#-}"]
        return lines


def _key(hint: str, taken: Container[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", hint) or "tensor"
    if base[0].isdigit():
        base = "t" + base
    key, k = base, 0
    while key in taken:
        k += 1
        key = f"{base}_{k}"
    return key


def _dense(arr: np.ndarray, dtype: int) -> str:
    flat = arr.reshape(-1).tolist()
    if dtype == 9:
        items = ["true" if x else "false" for x in flat]
    elif dtype in INT_TYPES:
        items = [str(int(x)) for x in flat]
    else:
        ty = "f32" if dtype in (1, 10, 16) else "f64"
        items = [float_literal(float(x), ty) for x in flat]
    if arr.ndim == 0:
        return f"dense<{items[0]}>"
    if arr.size == 0:
        return "dense<>"
    return f"dense<{_nested(items, arr.shape)}>"


def _nested(items: list[str], shape: tuple[int, ...]) -> str:
    if not shape:
        return items[0]
    if len(shape) == 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(items[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


def attribute(a: onnx.AttributeProto, res: Resources, hint: str) -> str | None:
    """One ONNX attribute as MLIR attribute text; None for graphs (they become regions)."""
    T = onnx.AttributeProto
    if a.type == T.INT:
        return f"{a.i} : i64"
    if a.type == T.FLOAT:
        return float_attr(a.f)
    if a.type == T.STRING:
        return string_attr(a.s.decode("utf-8", "replace"))
    if a.type == T.INTS:
        return f"array<i64{': ' if a.ints else ''}{', '.join(str(i) for i in a.ints)}>"
    if a.type == T.FLOATS:
        return f"array<f32{': ' if a.floats else ''}{', '.join(float_literal(f) for f in a.floats)}>"
    if a.type == T.STRINGS:
        return "[" + ", ".join(string_attr(s.decode("utf-8", "replace")) for s in a.strings) + "]"
    if a.type == T.TENSOR:
        return res.tensor(a.t, hint)
    if a.type == T.TENSORS:
        return "[" + ", ".join(res.tensor(t, f"{hint}_{i}") for i, t in enumerate(a.tensors)) + "]"
    if a.type in (T.GRAPH, T.GRAPHS):
        return None
    # sparse tensors and type protos: kept as their text, so nothing is lost silently
    return string_attr(str(onnx.helper.get_attribute_value(a)))
