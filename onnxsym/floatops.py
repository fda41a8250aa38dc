"""Float arithmetic on shape values, as onnxruntime computes it.

Exporters compute sizes in float: TorchScript writes ``math.ceil(h / 2) * 2`` as
Cast(float) -> Div -> Ceil -> Mul -> Cast(int64), and ``torch.arange(w, dtype=float)``
as a float Range. A float element the engine carries is a float (rounded to its type) or
an expression standing for an exact integral float (a Cast of an integer dim, exact under
the bound intops.as_float records). Each function returns the elements exactly as
onnxruntime computes them, or ``None`` when one is not exactly known.

Only the operations IEEE arithmetic rounds correctly are folded (+ - * /, sqrt, floor,
ceil, round half to even, min, max, neg, abs, relu), so that numpy in the same type gives
onnxruntime's bits; an expression takes part only where the result is again an integer.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Sequence, Type

import numpy as np
from onnx import TensorProto

from . import dims
from .intops import FLOAT_EXACT, SMALLEST_ASSUMABLE, is_dim

# bfloat16 has no numpy type of its own: not folded.
NP_FLOAT: Dict[int, Type[np.floating]] = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
                                          TensorProto.FLOAT16: np.float16}
FLOAT_TYPES = frozenset(NP_FLOAT)

_BINARY: Dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Max": np.maximum, "Min": np.minimum}
_UNARY: Dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Floor": np.floor, "Ceil": np.ceil, "Round": np.rint, "Neg": np.negative, "Abs": np.abs,
    "Sqrt": np.sqrt, "Relu": lambda a: np.maximum(a, 0)}
# The ones that keep an integral expression integral.
_INTEGRAL_BINARY: Dict[str, Callable[[dims.Dim, dims.Dim], dims.Dim]] = {
    "Add": dims.add, "Sub": dims.sub, "Mul": dims.mul, "Max": dims.dmax, "Min": dims.dmin}
_INTEGRAL_UNARY = {"Floor", "Ceil", "Round", "Relu"}


def _concrete(vals: Sequence) -> bool:
    return all(isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool)) for v in vals)


def _integral(v) -> Optional[dims.Dim]:
    """``v`` as an integer dim when it is an integral float or an expression, else None."""
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    return v if is_dim(v) else None


def _exact(node, d, dtype: int, op: str):
    """An integral result ``d`` as an element of float type ``dtype``: a float, or the
    expression with the bound under which the type holds it exactly (None below zero)."""
    if isinstance(d, int):
        return float(d) if abs(d) <= FLOAT_EXACT[dtype] else None
    lo, hi = dims.range_of(d)
    exact = FLOAT_EXACT[dtype]
    if lo < 0 or (hi > exact and exact < SMALLEST_ASSUMABLE):
        return None
    if hi > exact:
        node.assume_at_most(d, exact, f"{op} of sizes in float is exact only within the mantissa")
    return d


def unary(node, dtype: int, value: Sequence) -> Optional[tuple]:
    op = node.op_type
    if dtype not in FLOAT_TYPES or op not in _UNARY:
        return None
    if _concrete(value):
        with np.errstate(all="ignore"):
            return tuple(float(x) for x in _UNARY[op](np.array(value, dtype=NP_FLOAT[dtype])))
    if op not in _INTEGRAL_UNARY:
        return None
    out = []
    for v in value:  # floor, ceil and round of an integer, and relu of a nonnegative one, are itself
        d = _integral(v)
        if d is None or (op == "Relu" and dims.try_le(0, d) is not True):
            return None
        out.append(float(d) if isinstance(d, int) else d)
    return tuple(out)


def fold(node, dtype: int, vals: Sequence[Sequence]) -> Optional[tuple]:
    """Elementwise ``node.op_type`` over already broadcast ``vals`` (two operands)."""
    op = node.op_type
    if dtype not in FLOAT_TYPES or op not in _BINARY or len(vals) != 2:
        return None
    a, b = vals
    if _concrete(a) and _concrete(b):
        t = NP_FLOAT[dtype]
        with np.errstate(all="ignore"):
            return tuple(float(x) for x in _BINARY[op](np.array(a, dtype=t), np.array(b, dtype=t)))
    f = _INTEGRAL_BINARY.get(op)
    if f is None:  # a quotient of expressions is not an integer in general
        return None
    out = []
    for x, y in zip(a, b):
        dx, dy = _integral(x), _integral(y)
        if dx is None or dy is None:
            return None
        r = _exact(node, f(dx, dy), dtype, op)
        if r is None:
            return None
        out.append(r)
    return tuple(out)


def range_length(node, dtype: int, start, limit, delta) -> Optional[dims.Dim]:
    """The length of a float Range, ``max(0, ceil((limit - start) / delta))``, when start and
    delta are integral floats (delta > 0) and limit an integral float or expression;
    onnxruntime subtracts in the tensor's type, exact within the mantissa."""
    s, l, d = _integral(start), _integral(limit), _integral(delta)
    if dtype not in FLOAT_TYPES or s is None or l is None or not isinstance(s, int) \
            or not isinstance(d, int) or d <= 0:
        return None
    span = _exact(node, dims.sub(l, s), dtype, "Range") if dims.try_le(s, l) is True else None
    if span is None:
        return None
    return dims.ceil_div(span, d)
