"""Integer arithmetic on shape values exactly as onnxruntime computes it.

The elements the engine carries through Shape/Gather/Concat chains are dims (ints or
expressions), but onnxruntime computes them in the tensor's integer type: ``Div``
truncates toward zero, ``Mod`` follows the divisor's sign (``fmod=0``) or the
dividend's (``fmod=1``), and every result wraps to the type's width (uint8 ``1 - 2``
is 255). Each function here returns the exact element, or ``None`` when it cannot be
known exactly; a symbolic element kept in a 32-bit type records the bound under which
it does not wrap (``x <= 2**31 - 1``), as the float32 sizes of Resize do, where that bound
is :func:`assumable`; else, and in a narrower type, it wraps exactly (``x % 256``).
"""

from __future__ import annotations

from onnx import TensorProto

from .. import dims
from ..dims import Dim
from ..dims.env import bounded

# (lowest, highest) element of each integer type
INT_RANGES: dict[int, tuple[int, int]] = {
    TensorProto.INT8: (-2**7, 2**7 - 1), TensorProto.INT16: (-2**15, 2**15 - 1),
    TensorProto.INT32: (-2**31, 2**31 - 1), TensorProto.INT64: (-2**63, 2**63 - 1),
    TensorProto.UINT8: (0, 2**8 - 1), TensorProto.UINT16: (0, 2**16 - 1),
    TensorProto.UINT32: (0, 2**32 - 1), TensorProto.UINT64: (0, 2**64 - 1),
}
INT_TYPES = frozenset(INT_RANGES)
# The largest integer up to which every integer is exact in each float type.
FLOAT_EXACT: dict[int, int] = {TensorProto.FLOAT: 2**24, TensorProto.DOUBLE: 2**53, TensorProto.FLOAT16: 2**11,
               TensorProto.BFLOAT16: 2**8}
# A bound below this would be one a real model passes: no bound, the value is unknown.
SMALLEST_ASSUMABLE = 2**20


def assumable(d: Dim, hi: int) -> bool:
    """Whether the bound ``d <= hi`` may be assumed (recorded) rather than the value given up:
    it must hold while any one symbol of ``d`` grows to SMALLEST_ASSUMABLE with the others at
    their least, so that it excludes only sizes no real model has. ``2**24*seq <= 2**31 - 1``
    (``seq <= 127``) is not assumable; ``batch*seq <= 2**31 - 1`` is."""
    if isinstance(d, int):
        return d <= hi
    env = dims.current()
    # (asked again in each pass of a loop body: kept in the environment, whose ranges decide it)
    known = env.cache("assumable")
    answer = known.get((d, hi))
    if answer is None:
        answer = bounded(known)[(d, hi)] = _assumable(d, hi, env)
    return answer


def _assumable(d: dims.Expr, hi: int, env: dims.RangeEnv) -> bool:
    syms = dims.free_symbols(d)
    linear = _linear(d)
    for s in syms:
        top = max(s.lo, min(s.hi, SMALLEST_ASSUMABLE))
        if linear is not None:  # (what the range below gives, in closed form: c*s + the rest at their least)
            c = linear[s]
            rest = sum(k * t.lo if t is not None else k for t, k in linear.items() if t is not s)
            if rest + max(c * s.lo, c * top) > hi:
                return False
            continue
        least = {t: t.lo for t in syms if t is not s}
        with env.child({s.name: (s.lo, top)}):
            if dims.range_of(dims.substitute(d, least))[1] > hi:
                return False
    return True


def _linear(d: dims.Expr) -> dict[dims.Sym | None, int] | None:
    """``d``'s coefficient of each symbol (None: its constant) where it is linear in plain symbols."""
    out: dict[dims.Sym | None, int] = {None: 0}
    for mono, c in d.terms:
        if not mono:
            out[None] = c
        elif len(mono) == 1 and mono[0][1] == 1 and isinstance(mono[0][0], dims.Sym):
            out[mono[0][0]] = c
        else:
            return None
    return out


def is_dim(v) -> bool:
    """Whether ``v`` is an integer element (an int or an expression; not a bool)."""
    return isinstance(v, (int, dims.Expr)) and not isinstance(v, bool)


def type_name(dtype: int) -> str:
    return TensorProto.DataType.Name(dtype).lower()


def wrap_int(v: int, dtype: int) -> int:
    """``v`` as two's complement in ``dtype``'s width."""
    lo, hi = INT_RANGES[dtype]
    span = hi - lo + 1
    return (v - lo) % span + lo


def fit(node, v: Dim, dtype: int, why: str) -> Dim | None:
    """Element ``v`` computed in integer type ``dtype``: an int wraps; an expression is kept
    where its range fits the type. Else a type of up to 16 bits (and uint32 below zero) wraps
    it exactly, ``lo + (v - lo) % 2**bits``; a 32-bit type keeps it with the bound recorded on
    ``node`` (``seq <= 2**31 - 1``); uint64 below zero is not known (``None``)."""
    if isinstance(v, int):
        return wrap_int(v, dtype)
    if dtype == TensorProto.INT64:
        return v  # every dim is an int64: its range fits (not asked: a range can cost a search)
    lo, hi = INT_RANGES[dtype]
    vlo, vhi = dims.range_of(v)
    # every dim is an int64: a symbolic one never passes 2**63 - 1 (nor below -2**63)
    below, above = vlo < lo and lo > -2**63, vhi > hi and hi < dims.INT64_MAX
    if not (below or above):
        return v
    if dtype == TensorProto.UINT64:
        return None  # 2**64 + v would pass int64, which every dim is
    if hi - lo < SMALLEST_ASSUMABLE or (below and lo == 0) \
            or (below and not assumable(dims.neg(v), -lo)) or (above and not assumable(v, hi)):
        # a bound would be one a real size passes (int32 ``2**24*seq``): wrap it exactly
        return _wrapped(v, lo, hi)
    if below:
        node.assume_at_most(dims.neg(v), -lo, f"{why}: onnxruntime wraps it below {lo}")
    if above:
        node.assume_at_most(v, hi, f"{why}: onnxruntime wraps it above {_power_text(hi)}")
    return v


# The most terms of an element wrapped exactly: each wrap adds a periodic division whose
# canonical form the algebra searches for, and a chain of wraps (int8 Mul, Add, Mul, ...)
# would grow them without end; past this the element is not followed (``None``).
MAX_WRAP_TERMS = 8


def _wrapped(v: Dim, lo: int, hi: int) -> Dim | None:
    """``v`` as two's complement in ``[lo, hi]``: ``lo + (v - lo) % 2**bits``."""
    if isinstance(v, dims.Expr) and len(v.terms) > MAX_WRAP_TERMS:
        return None
    return dims.add(lo, dims.mod(dims.sub(v, lo), hi - lo + 1))


# The most term products of a product of elements: a graph that squares a sum again and
# again ((a + b + c)**128, 13 nodes) expands into thousands of terms at a cost that doubles
# each step; past this the element is not followed (``None``). Real shape products have a few.
MAX_PRODUCT_TERMS = 1024


def product(a: Dim, b: Dim) -> Dim | None:
    """``a * b``, or None where its expansion would be too large to follow (see above)."""
    if isinstance(a, dims.Expr) and isinstance(b, dims.Expr) and len(a.terms) * len(b.terms) > MAX_PRODUCT_TERMS:
        return None
    return dims.mul(a, b)


def _power_text(hi: int) -> str:
    """``2**31 - 1`` for 2147483647: how the bound reads in a reason."""
    k = (hi + 1).bit_length() - 1
    return f"2**{k} - 1" if hi + 1 == 2**k else str(hi)


def as_float(node, v: Dim, dtype: int) -> object | None:
    """Integer element ``v`` cast to float type ``dtype``: a float (rounded to the type, as
    onnxruntime does), or the expression itself, standing for an exact integral float, with
    the bound up to which it is exact recorded."""
    exact = FLOAT_EXACT.get(dtype)
    if exact is None:
        return None
    if isinstance(v, int):
        return round_to(float(v), dtype)
    lo, hi = dims.range_of(v)
    if lo >= -exact and hi <= exact:
        return v
    if exact < SMALLEST_ASSUMABLE or (lo < -exact and not assumable(dims.neg(v), exact)) \
            or (hi > exact and not assumable(v, exact)):
        return None
    if lo < -exact:
        node.assume_at_most(dims.neg(v), exact, "an integer cast to float is exact only within its mantissa")
    if hi > exact:
        node.assume_at_most(v, exact, "an integer cast to float is exact only within its mantissa")
    return v


def round_to(x: float, dtype: int) -> float:
    """``x`` rounded to float type ``dtype`` (to nearest, as a cast does)."""
    import numpy as np

    if dtype == TensorProto.FLOAT:
        return float(np.float32(x))
    if dtype == TensorProto.FLOAT16:
        return float(np.float16(x))
    if dtype == TensorProto.BFLOAT16:
        import ml_dtypes  # onnx's own dependency

        return float(ml_dtypes.bfloat16(x))
    return x


def from_float(x: float, dtype: int) -> int | None:
    """A float element cast to integer type ``dtype``: truncated toward zero, as a C cast;
    ``None`` where that is undefined (not finite, or out of the type's range)."""
    import math

    if not math.isfinite(x):
        return None
    lo, hi = INT_RANGES[dtype]
    v = int(x)
    return v if lo <= v <= hi else None


# --------------------------------------------------------------------------- operators


def _sign_of(d: Dim) -> int | None:
    """1, -1 or 0 when the ranges prove the sign (0: nonnegative is not enough), else None."""
    lo, hi = dims.range_of(d)
    if lo > 0:
        return 1
    if hi < 0:
        return -1
    if lo == hi == 0:
        return 0
    return None


def trunc_div(a: Dim, b: Dim) -> Dim | None:
    """Integer ``Div``: ``a / b`` rounded toward zero; floor division where ``a >= 0`` and
    ``b > 0`` are proven, the exact form with both sign cases where only ``b``'s sign is,
    None when ``b`` may be 0 or of either sign."""
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            return None
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q
    sb = _sign_of(b)
    if sb is None or sb == 0:
        return None
    if sb < 0:
        return dims.neg(trunc_div_positive(a, dims.neg(b)))
    return trunc_div_positive(a, b)


def trunc_div_positive(a: Dim, b: Dim) -> Dim:
    """``a / b`` rounded toward zero for a divisor ``b >= 1``."""
    if dims.try_le(0, a) is True:
        return dims.floordiv(a, b)
    if dims.try_le(a, 0) is True:
        return dims.neg(dims.floordiv(dims.neg(a), b))
    # trunc(a/b) == max(a, 0)//b - max(-a, 0)//b: one of the two is 0; it collapses to one
    # floor division once the ranges tell a's sign (a later Conv may narrow them)
    return dims.sub(dims.floordiv(dims.dmax(a, 0), b), dims.floordiv(dims.dmax(dims.neg(a), 0), b))


def py_mod(a: Dim, b: Dim) -> Dim | None:
    """Integer ``Mod`` with ``fmod=0``: the remainder has the divisor's sign (Python's ``%``)."""
    if isinstance(a, int) and isinstance(b, int):
        return None if b == 0 else a % b
    if dims.try_eq(b, 0) is not False:
        return None
    return dims.mod(a, b)


def c_fmod(a: Dim, b: Dim) -> Dim | None:
    """Integer ``Mod`` with ``fmod=1``: the remainder has the dividend's sign (C's ``fmod``)."""
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            return None
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    sb = _sign_of(b)
    if sb is None or sb == 0:
        return None
    if sb < 0:
        b = dims.neg(b)  # fmod(a, -b) == fmod(a, b)
    if dims.try_le(0, a) is True:
        return dims.mod(a, b)
    if dims.try_le(a, 0) is True:
        return dims.neg(dims.mod(dims.neg(a), b))
    return dims.sub(dims.mod(dims.dmax(a, 0), b), dims.mod(dims.dmax(dims.neg(a), 0), b))


def absolute(a: Dim) -> Dim:
    """``Abs``: ``max(a, -a)``, which is ``a`` or ``-a`` where the ranges tell the sign."""
    if isinstance(a, int):
        return abs(a)
    return dims.dmax(a, dims.neg(a))


def sign(a: Dim) -> Dim:
    """``Sign`` of an integer: ``min(max(a, -1), 1)``."""
    if isinstance(a, int):
        return (a > 0) - (a < 0)
    return dims.dmin(dims.dmax(a, -1), 1)


def clip(a: Dim, lo: Dim | None, hi: Dim | None) -> Dim:
    """``Clip``: ``min(max(a, lo), hi)`` (all ``hi`` when ``lo > hi``, as the spec says)."""
    if lo is not None:
        a = dims.dmax(a, lo)
    if hi is not None:
        a = dims.dmin(a, hi)
    return a
