"""Bytes of a tensor: ``prod(shape) * itemsize``, exact for sub-byte types.

Sub-byte elements are packed, as onnx and onnxruntime store them: ``ceil(n*bits/8)``
bytes for ``n`` elements of ``bits`` bits (int4, uint4, float4e2m1: 4; int2, uint2: 2;
float6: 6). A string tensor has no size known from its shape (``None``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from onnx import TensorProto as T

from .. import dims
from ..dims import Dim

# Bits of one element of each onnx element type; STRING and UNDEFINED have none.
BITS: dict[int, int] = {
    T.FLOAT: 32, T.UINT8: 8, T.INT8: 8, T.UINT16: 16, T.INT16: 16, T.INT32: 32, T.INT64: 64,
    T.BOOL: 8, T.FLOAT16: 16, T.DOUBLE: 64, T.UINT32: 32, T.UINT64: 64, T.COMPLEX64: 64,
    T.COMPLEX128: 128, T.BFLOAT16: 16, T.FLOAT8E4M3FN: 8, T.FLOAT8E4M3FNUZ: 8, T.FLOAT8E5M2: 8,
    T.FLOAT8E5M2FNUZ: 8, T.UINT4: 4, T.INT4: 4, T.FLOAT4E2M1: 4,
}
for _name, _bits in (("FLOAT8E8M0", 8), ("UINT2", 2), ("INT2", 2), ("FLOAT6E2M3", 6), ("FLOAT6E3M2", 6)):
    if hasattr(T, _name):  # newer onnx only
        BITS[getattr(T, _name)] = _bits


def numel(shape: Sequence[Dim]) -> Dim:
    n: Dim = 1
    for d in shape:
        n = dims.mul(n, d)
    return n


def tensor_bytes(dtype: int, shape: Sequence[Dim] | None) -> Dim | None:
    """The bytes of a tensor of this element type and shape, or ``None`` when unknown."""
    bits = BITS.get(dtype)
    if bits is None or shape is None:
        return None
    n = numel(shape)
    if bits % 8 == 0:
        return dims.mul(n, bits // 8)
    g = math.gcd(bits, 8)  # 4 bits: ceil(n/2), the simplest form
    per, over = bits // g, 8 // g
    return -(-n * per // over) if isinstance(n, int) else dims.ceil_div(dims.mul(n, per), over)


def itemsize_text(dtype: int) -> str:
    bits = BITS.get(dtype)
    return "?" if bits is None else str(bits // 8) if bits % 8 == 0 else f"{bits}/8"
