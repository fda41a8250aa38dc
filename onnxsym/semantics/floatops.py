"""Float arithmetic on shape values, as onnxruntime computes it.

Exporters compute sizes in float: TorchScript writes ``math.ceil(h / 2) * 2`` as
Cast(float) -> Div -> Ceil -> Mul -> Cast(int64), and ``torch.arange(w, dtype=float)``
as a float Range. A float element the engine carries is a float (rounded to its type),
an expression standing for an exact integral float (a Cast of an integer dim, exact under
the bound intops.as_float records), or a Quotient of integers as the type rounds it
(``Cast(h) / 2.0``, ``Cast(h) * 0.5``), of which Floor, Ceil and a Cast to an integer are known.
Each function returns the elements exactly as onnxruntime computes them, or ``None`` when one is not exactly known.

Only the operations IEEE arithmetic rounds correctly are folded (+ - * /, sqrt, floor,
ceil, round half to even, min, max, neg, abs, relu), so that numpy in the same type gives
onnxruntime's bits; an expression takes part only where the result is again an integer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from onnx import TensorProto

from .. import dims
from ..dims import structure
from . import intops
from .intops import FLOAT_EXACT, SMALLEST_ASSUMABLE, assumable, is_dim, product

# bfloat16 has no numpy type of its own: not folded.
NP_FLOAT: dict[int, type[np.floating]] = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
                                          TensorProto.FLOAT16: np.float16}
FLOAT_TYPES = frozenset(NP_FLOAT)

_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Max": np.maximum, "Min": np.minimum}
_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Floor": np.floor, "Ceil": np.ceil, "Round": np.rint, "Neg": np.negative, "Abs": np.abs,
    "Sqrt": np.sqrt, "Relu": lambda a: np.maximum(a, 0)}
# The ones that keep an integral expression integral.
_INTEGRAL_BINARY: dict[str, Callable[[dims.Dim, dims.Dim], dims.Dim | None]] = {
    "Add": dims.add, "Sub": dims.sub, "Mul": product, "Max": dims.dmax, "Min": dims.dmin}
_INTEGRAL_UNARY = {"Floor", "Ceil", "Round", "Relu"}


# Where a quotient is kept (see Quotient): binary float16, float32 and float64, whose precision
# t (11, 24, 53 bits) gives FLOAT_EXACT = 2**t; a quotient's least size, 1/den, must be normal:
# den at most 2**14 in float16 (its smallest normal is 2**-14), far past 2**63 in the others.
_QUOTIENT_TYPES = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16})
_LARGEST_DEN: dict[int, int] = {TensorProto.FLOAT: 2**126, TensorProto.DOUBLE: 2**1022, TensorProto.FLOAT16: 2**14}
# The largest finite element of each type: an integral result past it overflows to inf.
_LARGEST_FINITE: dict[int, float] = {t: float(np.finfo(f).max) for t, f in NP_FLOAT.items()}
# Where an integer element not held exactly is kept as Rounded: every int64 is finite there.
_ROUNDED_TYPES = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE})


@dataclass(frozen=True)
class Quotient:
    """The float element ``num / den`` as a float type of precision t rounds it (the real
    quotient rounded once), for integers ``|num| <= m * 2**t`` (the bound recorded where it is
    not proven) and ``den >= 1``, where ``m`` is the quotient's margin (:func:`margin`: 1, or
    ``min(r, den - r)`` where ``num % den`` is a constant ``r`` for every size). Its floor is
    ``num // den``, its ceil ``ceil_div(num, den)``, its truncation (a Cast to an integer) the
    one of the two toward zero:

    let q = num / den, with den not dividing num (an integer quotient is kept as the integer,
    where the type holds it). q lies strictly between n = num // den and n + 1, at least m/den
    from each (its distance to n is (num % den) / den), while rounding to nearest moves q by at
    most |q| * u / (1 + u) < |q| * 2**-t = |num| / (den * 2**t) <= m/den (u = 2**-t the unit
    roundoff; |q| >= 1/den is normal: den <= 2**14 in float16, see _LARGEST_DEN). So the rounded
    quotient stays strictly inside (n, n + 1) and floor and ceil see n and n + 1. A negative num
    is the mirror image: rounding to nearest is symmetric, and -0.0 (num = 0) floors, ceils and
    casts to 0. (|q| < m*2**t/den <= 2**(t-1): no overflow, in float16 either.)

    Where den is a power of two and ``|num| <= 2**t``, the type holds q exactly (no rounding):
    such a Quotient takes part in further arithmetic as the rational it is (:func:`_rational`),
    each result again the real value rounded once.

    ``round`` (half to even) needs the quotient's side of n + 1/2: ``2*num - (2n+1)*den`` is
    odd where den is odd, so q is at least 1/(2 den) from n + 1/2, and rounding keeps that
    side once ``|num| <= 2**(t-1)`` (no tie); where den is even that difference is even,
    q is n + 1/2 exactly (held exactly: |q| < 2**(t-1)) or at least 1/den from it, and the
    bound 2**t suffices (see :meth:`round`).
    """

    num: dims.Dim
    den: dims.Dim
    # rounded twice: a quotient plus or minus an integer c, ``fl(fl(num0 / den) + c)`` with
    # ``num = num0 + c*den`` (see ``shifted``); its floor, ceil and truncation are still the
    # integer ones, but no further arithmetic but a negation (``_scaled_quotient``), and no
    # round, is followed on it
    twice: bool = False

    def floor(self) -> dims.Dim:
        return dims.floordiv(self.num, self.den)

    def ceil(self) -> dims.Dim:
        return dims.ceil_div(self.num, self.den)

    def trunc(self) -> dims.Dim:
        return intops.trunc_div_positive(self.num, self.den)

    def round(self) -> dims.Dim:
        """Round half to even of ``num / den``: half up, ``(2 num + den) // (2 den)``, less one
        where ``num / den`` is a tie (``2 den`` divides ``2 num + den``) whose half-up result
        is odd (``2 num + 3 den`` is a multiple of ``4 den``); ``x//m - (x-1)//m`` is 1
        exactly where ``m`` divides ``x``. An odd den has no ties: the correction is left out."""
        two_num = dims.mul(2, self.num)
        up = dims.floordiv(dims.add(two_num, self.den), dims.mul(2, self.den))
        if isinstance(self.den, int) and self.den % 2:
            return up
        x, m = dims.add(two_num, dims.mul(3, self.den)), dims.mul(4, self.den)
        return dims.sub(up, dims.sub(dims.floordiv(x, m), dims.floordiv(dims.sub(x, 1), m)))

    def round_bound(self, dtype: int) -> int:
        """The largest ``|num|`` up to which :meth:`round` is exact in ``dtype``."""
        exact = FLOAT_EXACT[dtype]
        return exact if isinstance(self.den, int) and self.den % 2 == 0 else exact // 2


class Unknown:
    """A float element nothing is known of, beside known ones: Concat([1.0, 1.0], scale_hw) as a
    Resize's scales keeps the two that are 1. Every operation that meets it gives up (it is no
    float, no dim, no Quotient)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown()


@dataclass(frozen=True)
class Rounded:
    """The integer ``n >= 0`` cast to float32 or float64 where the type may not hold it
    exactly: ``n`` rounded to nearest (finite: int64 is far inside both types' range). Nothing
    is known of it but its square root where ``n`` is a square (``sqrt_of_square``)."""

    n: dims.Dim


@dataclass(frozen=True)
class Near:
    """An integral size ``e`` times or divided by a float constant that is no short binary
    fraction (0.3, 0.7, 1/3 in float32: ``c = a / 2**k`` with ``a`` too long for a Quotient),
    known by the rational ``s = num / den`` the constant stands for (``P / Q`` close to ``c``:
    ``e * 0.3`` is near ``3e / 10``) and the side of ``s`` the computed element lies on,
    ``side`` (1: at or above ``s``, -1: at or below). Made by :func:`_near` only where the
    recorded bound keeps the element less than ``m / den`` from ``s`` (``m`` the margin, see
    :func:`margin`): then it lies strictly between the integers around ``s`` where ``s`` is
    none, and on ``side`` of ``s`` where ``s`` is one. So its floor is ``num // den`` on the
    upper side and its ceil ``ceil_div(num, den)`` on the lower one (at an integer ``s`` the
    other side may round back onto ``s`` or not: unknown); nothing else is followed."""

    num: dims.Dim
    den: int
    side: int

    def floor(self) -> dims.Dim | None:
        return dims.floordiv(self.num, self.den) if self.side > 0 else None

    def ceil(self) -> dims.Dim | None:
        return dims.ceil_div(self.num, self.den) if self.side < 0 else None

    def trunc(self) -> dims.Dim | None:
        """Toward zero: the floor of a nonnegative element, the ceil of a nonpositive one."""
        if dims.try_le(0, self.num) is True:
            return self.floor()
        return self.ceil() if dims.try_le(self.num, 0) is True else None


# The denominators tried for the rational a float constant stands for (Fraction.limit_denominator).
_NEAR_DENS = (10, 100, 1000)


def _near(node, op: str, x, y, dtype: int) -> Near | None:
    """``e * c`` (either order) or ``e / c`` for an integral ``e`` of a known sign and a float
    constant ``c``, as a Near of ``s = e * P / Q`` (``e * Q / P`` for Div), ``P / Q`` the
    closest fraction to ``c`` of a small den (``_NEAR_DENS``) that is not ``c`` itself.

    Let ``v*`` be the real ``e * c`` (``e / c``) and ``v = fl(v*)`` the element. ``v* = s (1 +
    h)`` with ``h = c Q / P - 1`` (``P / (c Q) - 1``), an exact rational, whose sign and ``e``'s
    give the side of ``s`` that ``v*`` is on; rounding to nearest is monotone and ``s`` is
    held exactly where it is an integer (``|s| <= 2**t``), so ``v`` is on the same side or on
    ``s``. And ``|v - s| <= |s| |h| + |v*| u <= |s| (|h| + (1 + |h|) u)`` (u = 2**-t), less
    than ``m / den`` while ``|num| < m / (|h| + (1 + |h|) u)`` (``num = e P``, ``den = Q`` for
    Mul; ``e Q`` and ``P`` for Div): the bound recorded, where it is one no real size reaches
    (``3e <= 8388607`` for ``e * 0.3`` in float32). ``|v| >= 1/Q`` is normal: Q <= 1000."""
    if op not in ("Mul", "Div") or dtype not in _QUOTIENT_TYPES:
        return None
    e, c = (x, y) if isinstance(y, float) else (y, x) if op == "Mul" else (None, None)
    if not isinstance(e, (int, dims.Expr)) or not is_dim(e) or not isinstance(c, float) or not math.isfinite(c) \
            or c == 0:
        return None
    sign = 1 if dims.try_le(0, e) is True else -1 if dims.try_le(e, 0) is True else 0
    exact = Fraction(c)
    best = None
    for limit in _NEAR_DENS:
        r = exact.limit_denominator(limit)
        if r == exact or r == 0:
            continue
        h = exact / r - 1 if op == "Mul" else r / exact - 1
        p, q = (r.numerator, r.denominator) if op == "Mul" else (r.denominator, r.numerator)
        if q < 0:
            p, q = -p, -q
        num = dims.mul(p, e)
        bound = margin(num, q) / (abs(h) + (1 + abs(h)) * Fraction(1, FLOAT_EXACT[dtype]))
        cap = math.ceil(bound) - 1  # (|num| < bound: the largest integer below it)
        side = sign * (1 if h > 0 else -1) * (1 if p > 0 else -1)  # (the sign of v* - s = s h)
        if sign and cap >= 1 and _fits(num, cap) and (best is None or cap > best[2]):
            best = (num, q, cap, side)
    if best is None or structure.exact_quotient(best[0], best[1]) is not None:
        return None
    num, q, cap, side = best
    exact_float(node, num, dtype, op, cap, scaled=False)
    return Near(num, q, side)


def rounded(v: dims.Dim, dtype: int) -> Rounded | None:
    """Integer element ``v`` cast to ``dtype`` where the cast is not known to be exact."""
    if dtype not in _ROUNDED_TYPES or not is_dim(v) or dims.try_le(0, v) is not True:
        return None
    return Rounded(v)


def _quotient(node, num, den, dtype: int, op: str):
    """The real ``num / den`` (integers, ``den`` provably nonzero and of a known sign) rounded
    once to float type ``dtype``: the integer where ``den`` divides ``num`` exactly (correctly
    rounded, an integer the type holds is itself), else a Quotient (of a positive den); None
    where the type or the ranges do not allow it (``num`` within its bound only in a range
    too small)."""
    if dtype not in _QUOTIENT_TYPES:
        return None
    if dims.try_le(den, -1) is True:
        num, den = dims.neg(num), dims.neg(den)  # a / -b == -a / b: negation is exact
    if dims.try_le(1, den) is not True or dims.range_of(den)[1] > _LARGEST_DEN[dtype]:
        return None
    exact = structure.exact_quotient(num, den)
    if exact is not None:
        return exact_float(node, exact, dtype, op)
    if isinstance(den, int):  # in lowest terms as far as the constants go: the same real, a wider bound
        g = math.gcd(den, *(c for c, _ in structure.terms(num)))
        if g > 1:
            num, den = structure.exact_quotient(num, g), den // g
    bound = margin(num, den) * FLOAT_EXACT[dtype]
    return None if exact_float(node, num, dtype, op, bound, scaled=False) is None else Quotient(num, den)


def margin(num: dims.Dim, den: dims.Dim) -> int:
    """``m`` such that ``num / den``, no integer, is at least ``m / den`` from every integer:
    ``min(r, den - r)`` where ``num % den`` is a constant ``r`` the form shows (every term but
    the constant a multiple of a constant ``den``: ``n + 0.7`` in float32 is ``(2**24*n +
    11744051) / 2**24``, 0.3 from every integer), else 1."""
    if not isinstance(den, int):
        return 1
    r = 0
    for c, factors in structure.terms(num):
        if not factors:
            r = c % den
        elif c % den:
            return 1
    return max(1, min(r, den - r))


def _concrete(vals: Sequence) -> bool:
    return all(isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool)) for v in vals)


def _integral(v) -> dims.Dim | None:
    """``v`` as an integer dim when it is an integral float or an expression, else None."""
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    return v if is_dim(v) else None


def integral_elements(value: Sequence) -> list | None:
    """Each element as an integer dim (an integral float, or an expression standing for an
    exact one), or None when one is not (a fraction, a Quotient, UNKNOWN)."""
    out = [_integral(v) for v in value]
    return None if any(v is None for v in out) else out


def exact_float(node, d, dtype: int, op: str, exact: int | None = None, scaled: bool = True):
    """An integral result ``d`` as an element of float type ``dtype``: a float, or the
    expression with the bound under which the type holds it exactly, ``|d| <= exact``
    (the type's FLOAT_EXACT unless given), recorded on each side its range passes; None
    where such a bound would be one a real size passes.

    With the type's own bound (``scaled``, no ``exact`` given), ``d = 2**k * e`` for the
    largest power of two dividing every coefficient (``64*seq``, ``160*seq = 32*(5*seq)``) is
    held exactly where ``|e| <= 2**t`` is and ``d`` is finite: ``e`` is, and a power of two
    scales it exactly (the result's exponent stays within range: proven for float16, whose
    largest finite element is 65504; every int64 is finite in float32 and float64). A caller
    giving ``exact`` asks a magnitude (a Quotient's bound), not whether the type holds ``d``."""
    if exact is None and scaled and not isinstance(d, int):
        k = _two_power_content(d)
        e = structure.exact_quotient(d, 2**k) if k else None
        if e is not None:
            lo, hi = dims.range_of(d)
            if max(-lo, hi) > _LARGEST_FINITE[dtype] or exact_float(node, e, dtype, op) is None:
                return None
            return d
    exact = FLOAT_EXACT[dtype] if exact is None else exact
    if isinstance(d, int):
        return float(d) if abs(d) <= exact else None
    lo, hi = dims.range_of(d)
    if lo >= -exact and hi <= exact:
        return d
    if exact < SMALLEST_ASSUMABLE or (lo < -exact and not assumable(dims.neg(d), exact)) \
            or (hi > exact and not assumable(d, exact)):
        return None
    why = f"{op} of sizes in float is exact only within the mantissa"
    if lo < -exact:
        node.assume_at_most(dims.neg(d), exact, why)
    if hi > exact:
        node.assume_at_most(d, exact, why)
    return d


def _two_power_content(d: dims.Dim) -> int:
    """The largest ``k`` with ``2**k`` dividing every coefficient of ``d`` (0 for an int, and at most 62)."""
    g = 0
    for c, _ in structure.terms(d):
        g = math.gcd(g, c)
    if isinstance(d, int) or g == 0:
        return 0
    return min((g & -g).bit_length() - 1, 62)


def unary(node, dtype: int, value: Sequence) -> tuple | None:
    op = node.op_type
    if dtype not in FLOAT_TYPES or op not in _UNARY:
        return None
    if _concrete(value):
        with np.errstate(all="ignore"):
            return tuple(float(x) for x in _UNARY[op](np.array(value, dtype=NP_FLOAT[dtype])))
    if op == "Sqrt":
        return _square_roots(node, dtype, value)
    if op not in _INTEGRAL_UNARY:
        return None
    out: list = []
    for v in value:  # floor, ceil and round of an integer, and relu of a nonnegative one, are itself
        if isinstance(v, float):  # (a number beside symbolic elements: as numpy computes it)
            out.append(float(_UNARY[op](np.array(v, dtype=NP_FLOAT[dtype]))))
            continue
        d = _rounded_quotient(node, dtype, op, v) if isinstance(v, Quotient) else \
            (v.floor() if op == "Floor" else v.ceil() if op == "Ceil" else None) if isinstance(v, Near) else _integral(v)
        if d is None or (op == "Relu" and dims.try_le(0, d) is not True):
            return None
        out.append(float(d) if isinstance(d, int) else d)
    return tuple(out)


def _rounded_quotient(node, dtype: int, op: str, q: Quotient) -> dims.Dim | None:
    """Floor, Ceil or Round of a Quotient (see there), None for Relu."""
    if op == "Floor":
        return q.floor()
    if op == "Ceil":
        return q.ceil()
    if op == "Round" and not q.twice and exact_float(node, q.num, dtype, op, q.round_bound(dtype)) is not None:
        return q.round()
    return None


def _square_roots(node, dtype: int, value: Sequence) -> tuple | None:
    """Sqrt of integral elements, known where each is provably the square of an integer
    ``k >= 0`` (``(h//8)**2``, a ViT's token count on a square image). IEEE rounds a square
    root correctly, so where the type holds ``k**2`` exactly, ``sqrt`` gives ``k``. Where it
    rounds ``k**2`` (a Rounded, float32 past 2**24), it still gives ``k`` while ``k <= 2**t``:
    ``fl(k**2) = k**2 (1 + d)`` with ``|d| <= 2**-t``, so ``sqrt`` of it is ``k (1 + e)`` with
    ``|e| < 2**-(t+1)``, strictly less than half the spacing of the floats at ``k`` (at least
    ``k 2**-t``), and ``sqrt``'s own rounding lands on ``k``, which the type holds."""
    out: list = []
    t = NP_FLOAT[dtype]
    for v in value:
        if isinstance(v, float):
            out.append(float(np.sqrt(t(v))))
            continue
        if isinstance(v, Rounded):
            k = square_root(v.n)
            k = None if k is None else exact_float(node, k, dtype, "Sqrt")
        else:
            k = square_root(v) if is_dim(v) else None
        if k is None:
            return None
        out.append(float(k) if isinstance(k, int) else k)
    return tuple(out)


def square_root(d: dims.Dim) -> dims.Dim | None:
    """The integer ``k >= 0`` with ``k*k == d`` where ``d``'s form shows it: a sum of the
    square roots of ``d``'s square terms (a square coefficient, even exponents), with some
    choice of signs, that squares back to ``d`` (``q**2 + 2*q + 1`` is ``(q + 1)**2``, a
    MaxPool's side squared); None otherwise."""
    if isinstance(d, int):
        n = math.isqrt(d) if d >= 0 else -1
        return n if n >= 0 and n * n == d else None
    roots = [r for r in (_term_root(c, f) for c, f in structure.terms(d)) if r is not None]
    if not roots or len(roots) > 6:
        return None
    for signs in range(2 ** (len(roots) - 1)):  # (the first root positive: -k is k's other sign)
        k: dims.Dim = roots[0]
        for i, r in enumerate(roots[1:]):
            k = dims.sub(k, r) if signs >> i & 1 else dims.add(k, r)
        if dims.mul(k, k) is d:
            for cand in (k, dims.neg(k)):
                if dims.try_le(0, cand) is True:
                    return cand
            return None
    return None


def _term_root(c: int, factors) -> dims.Dim | None:
    r = math.isqrt(c) if c >= 0 else -1
    if r < 0 or r * r != c or any(e % 2 for _, e in factors):
        return None
    k: dims.Dim = r
    for f, e in factors:
        for _ in range(e // 2):
            k = dims.mul(k, f)
    return k


def fold(node, dtype: int, vals: Sequence[Sequence]) -> tuple | None:
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
    out = []
    for x, y in zip(a, b):
        dx, dy = _integral(x), _integral(y)
        r: object
        if _concrete((x, y)):  # (two numbers beside symbolic elements: as numpy computes them)
            t = NP_FLOAT[dtype]
            with np.errstate(all="ignore"):
                r = float(_BINARY[op](np.array(x, dtype=t), np.array(y, dtype=t)))
        elif dx is not None and dy is not None:
            if op == "Div":
                r = _quotient(node, dx, dy, dtype, op)
            elif f is None:
                return None
            else:
                folded = f(dx, dy)
                r = None if folded is None else exact_float(node, folded, dtype, op)
        elif op in _RATIONAL_OPS:
            r = _rational_op(node, op, x, y, dtype)
            if r is None:
                r = _near(node, op, x, y, dtype)
            if r is None and op in ("Add", "Sub") and (isinstance(x, Quotient) and dy is not None
                                                       or isinstance(y, Quotient) and dx is not None):
                r = shifted(node, x, y, op, dtype)
        else:
            return None
        if r is None:
            return None
        out.append(r)
    return tuple(out)


_RATIONAL_OPS = frozenset({"Add", "Sub", "Mul", "Div"})


def _rational(v, dtype: int) -> tuple[dims.Dim, dims.Dim, bool] | None:
    """``(num, den, bound)``: an element the type holds exactly as the rational ``num / den``:
    an integral expression (den 1), a finite float constant (every float is ``a / 2**k``), or
    a Quotient of a power-of-two den with ``|num| <= 2**t`` (``bound``: that is to be recorded,
    see Quotient); None for any other element."""
    if is_dim(v):
        return v, 1, False
    if isinstance(v, float):
        return (*v.as_integer_ratio(), False) if math.isfinite(v) else None
    if isinstance(v, Quotient) and not v.twice and isinstance(v.den, int) and v.den & (v.den - 1) == 0 \
            and _fits(v.num, FLOAT_EXACT[dtype]):
        return v.num, v.den, True
    return None


def _rational_op(node, op: str, x, y, dtype: int):
    """``x op y`` for elements the type holds exactly as rationals (:func:`_rational`): IEEE
    rounds the real result once (correctly rounded + - * /), so it is the integer or the
    Quotient of that real ``num / den`` (``Cast(h) * 0.5 + 0.25`` is ``(2h + 1) / 4`` rounded
    once, ``h - 0.3`` in float32 is ``(2**24 h - 5033165) / 2**24``, 0.3 from every integer).

    In float16, onnxruntime's CPU provider has no kernel for these: it inserts Casts and computes
    in float32 (a float16 chain of Casts, Div and Floor becomes one in float32, the first Cast
    to float16 gone). Every argument here needs only that each result is the real one rounded to
    nearest with a unit roundoff of at most 2**-t and that what is claimed exact is held exactly,
    both true of float32 where they are of float16 (and of float16 kernels rounding a float32
    result: twice to nearest, 24 >= 2*11 + 2 bits, is once; Figueroa 1995); so a float16 size is
    followed only where its range is proven within 2**11 (no bound is assumable), where the two
    agree. Past it (a Cast of an unbounded size) the runtimes differ: unknown."""
    rx, ry = _rational(x, dtype), _rational(y, dtype)
    if dtype not in _QUOTIENT_TYPES:
        return None
    if rx is None or ry is None:
        return _scaled_quotient(node, op, x, y, dtype)
    (nx, dx, bx), (ny, dy, by) = rx, ry
    if op in ("Add", "Sub"):
        left, right = product(nx, dy), product(ny, dx)
        num = None if left is None or right is None else dims.add(left, right) if op == "Add" else dims.sub(left, right)
        den = product(dx, dy)
    elif op == "Mul":
        num, den = product(nx, ny), product(dx, dy)
    else:
        num, den = product(nx, dy), product(dx, ny)
    if num is None or den is None:
        return None
    r = _quotient(node, num, den, dtype, op)
    if r is not None:  # (recorded only where the result is kept)
        for n, bound in ((nx, bx), (ny, by)):
            if bound:
                exact_float(node, n, dtype, op, FLOAT_EXACT[dtype], scaled=False)
    return r


def _scaled_quotient(node, op: str, x, y, dtype: int):
    """A rounded Quotient ``q`` times or divided by ``±2**k`` (either order for Mul): scaling by a
    power of two and negating are exact (the results stay normal: the new den is within
    _LARGEST_DEN; and finite: below 2**(t-1)), and rounding commutes with them, so
    ``fl(fl(num/den) * 2**k)`` is ``fl(num * 2**k / den)``: the Quotient of that, kept under its
    own bound. Rounded twice (``twice``), only a negation, ``fl(-x) = -fl(x)``, is followed."""
    q, c = (x, y) if isinstance(x, Quotient) else (y, x) if op == "Mul" else (None, None)
    if op not in ("Mul", "Div") or not isinstance(q, Quotient) or not isinstance(c, float) or not math.isfinite(c) \
            or c == 0:
        return None
    a, b = abs(c).as_integer_ratio()
    if a & (a - 1) or b & (b - 1) or (q.twice and a != b):
        return None  # (no power of two; or rounded twice and not -1 or 1)
    if op == "Div":
        a, b = b, a
    num = q.num if c > 0 else dims.neg(q.num)
    if q.twice:
        return Quotient(num, q.den, twice=True)
    r = _quotient(node, dims.mul(a, num), dims.mul(b, q.den), dtype, op)
    return r if isinstance(r, Quotient) else None  # (an integer: q was one, which no Quotient is)


def shifted(node, x, y, op: str, dtype: int) -> Quotient | None:
    """A Quotient ``q = num / den`` plus or minus an integral element ``c`` (either order):
    ``fl(fl(q) ± c)``, of which floor, ceil and truncation are those of the real
    ``(num ± c*den) / den`` while ``|num| <= 2**(t-1)`` and ``|num ± c*den| < 2**(t-1)``:

    q is no integer (Quotient), so the real sum s is none either, at least 1/den from every
    integer. The first rounding moves q by less than |q| u, the second (c and every integer
    near s are exact) moves the float sum by less than |fl(q) ± c| u <= (|s| + |q| u) u,
    together less than (A + B + A u) u / den with A = |num|, B = |num ± c*den|, which is below
    1/den where A + B + A u < 2**t: the rounded sum stays strictly between the integers
    around s. Another rounding would add to the error: no arithmetic is followed on the result."""
    q, c, first = (x, y, True) if isinstance(x, Quotient) else (y, x, False)
    c = _integral(c)
    if q.twice or c is None or dtype not in _QUOTIENT_TYPES:
        return None
    scaled = dims.mul(c, q.den)
    num = dims.add(q.num, scaled) if op == "Add" else dims.sub(q.num, scaled) if first else dims.sub(scaled, q.num)
    half = FLOAT_EXACT[dtype] // 2
    if not (_fits(q.num, half) and _fits(num, half - 1)):
        return None  # (checked first: a bound is recorded only where the result is kept)
    exact_float(node, q.num, dtype, op, half)
    exact_float(node, num, dtype, op, half - 1)
    return Quotient(num, q.den, twice=True)


def _fits(d, exact: int) -> bool:
    """Whether exact_float keeps ``d`` under the bound ``|d| <= exact`` (recording nothing)."""
    if isinstance(d, int):
        return abs(d) <= exact
    lo, hi = dims.range_of(d)
    return (lo >= -exact or (exact >= SMALLEST_ASSUMABLE and assumable(dims.neg(d), exact))) \
        and (hi <= exact or (exact >= SMALLEST_ASSUMABLE and assumable(d, exact)))


# The element types of onnxruntime's CPU Range kernel whose arithmetic is mirrored here.
_RANGE_TYPES = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE})


def range_values(dtype: int, start: float, limit: float, delta: float, keep: int):
    """A float Range of constant bounds as onnxruntime's CPU kernel computes it:
    ``(count, elements)``, the elements None past ``keep`` of them; None where the count is
    not known (delta 0, a count not finite or past int64, or a type without that kernel).

    onnxruntime's count is ``ceil((1.0 * (limit - start)) / delta)``: the difference in the
    tensor's type, the quotient in double. Its elements are ``start`` then ``value += delta``,
    each sum rounded to the type: float32 Range(0, 1, 0.1) has 0.80000007 as element 8, not
    ``0 + 8*0.1``; Mul 5 and Ceil then give 5, not 4."""
    if dtype not in _RANGE_TYPES:
        return None  # float16, bfloat16: onnxruntime has no kernel, other runtimes differ
    t = NP_FLOAT[dtype]
    s, lim, d = t(start), t(limit), t(delta)
    with np.errstate(all="ignore"):
        span = t(lim - s)
    if d == 0 or not all(math.isfinite(x) for x in (float(s), float(d), float(span))):
        return None
    q = float(span) / float(d)
    if not math.isfinite(q) or not -2.0**63 <= math.ceil(q) < 2.0**63:
        return None  # the kernel's cast to int64 is undefined there
    n = max(math.ceil(q), 0)
    if n > keep:
        return n, None
    out = []
    v = s
    with np.errstate(all="ignore"):
        for _ in range(n):
            out.append(float(v))
            v = t(v + d)
    return n, tuple(out)


def range_length(node, dtype: int, start, limit, delta) -> dims.Dim | None:
    """The length of a float Range, ``max(0, ceil((limit - start) / delta))``, when start and
    delta are integral floats (delta > 0) and limit an integral float or expression;
    onnxruntime subtracts in the tensor's type, exact within the mantissa, and divides in
    double, exactly rounded: the ceiling of an integer quotient below 2**53 is exact (see
    Quotient)."""
    s, lim, d = _integral(start), _integral(limit), _integral(delta)
    if dtype not in FLOAT_TYPES or s is None or lim is None or not isinstance(s, int) \
            or not isinstance(d, int) or d <= 0:
        return None
    span = exact_float(node, dims.sub(lim, s), dtype, "Range") if dims.try_le(s, lim) is True else None
    if span is None:
        return None
    return dims.ceil_div(span, d)


def truncated(v) -> dims.Dim | None:
    """A symbolic float element cast to an integer (truncated toward zero): an integral
    expression is itself, a Quotient its truncation; None otherwise."""
    if isinstance(v, (Quotient, Near)):
        return v.trunc()
    return v if is_dim(v) else None


def clip(node, dtype: int, value: Sequence, lo, hi) -> tuple | None:
    """A float Clip by constant bounds (None: no bound): max then min, the spec's order.
    Concrete elements as numpy computes them in the type; an integral expression stays one
    under integral bounds (TorchScript's ``max(pad, 0)`` of TF-"same" padding is ``Clip(min=0)``)."""
    if dtype not in FLOAT_TYPES:
        return None
    if _concrete(value) and all(b is None or isinstance(b, (int, float)) for b in (lo, hi)):
        t = NP_FLOAT[dtype]
        a = np.array(value, dtype=t)
        with np.errstate(all="ignore"):
            if lo is not None:
                a = np.maximum(a, t(lo))
            if hi is not None:
                a = np.minimum(a, t(hi))
        return tuple(float(x) for x in a)
    bounds = []
    for b in (lo, hi):
        if b is not None and math.isfinite(b) and not float(b).is_integer():
            return None  # a fractional bound may make an integral element fractional
        bounds.append(None if b is None or not math.isfinite(b) else int(b))
    out: list = []
    for v in value:
        d = _integral(v)
        if d is None:
            return None
        if bounds[0] is not None:
            d = dims.dmax(d, bounds[0])
        if bounds[1] is not None:
            d = dims.dmin(d, bounds[1])
        r = float(d) if isinstance(d, int) else exact_float(node, d, dtype, "Clip")
        if r is None:
            return None
        out.append(r)
    return tuple(out)
