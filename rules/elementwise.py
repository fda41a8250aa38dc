"""Elementwise rules: unary ops that keep shape, broadcasting binary/variadic ops."""

from __future__ import annotations

import math
from fractions import Fraction

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.domain.needs import BROADCAST
from onnxsym.errors import ShapeContradiction
from onnxsym.facts.edges import comparison_text
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register
from onnxsym.semantics import floatops, intops
from onnxsym.semantics.shapes import broadcast_shapes

from .common import BOOL, arg, present, scalar


@register("Relu Sigmoid Tanh Erf Sqrt Exp Log Neg Abs Reciprocal Floor Ceil Round Sin Cos Tan "
          "Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Gelu Softplus Softsign LeakyRelu Elu Selu "
          "ThresholdedRelu HardSigmoid HardSwish Mish Celu Not Sign Clip Shrink BitwiseNot",
          conditions=(), cost=formulas.ELEMENTWISE)
@register("Softmax LogSoftmax Hardmax", conditions=(), cost=formulas.SOFTMAX)
def unary(node: Node) -> Outputs:
    x = arg(node, 0)
    value = None
    if x.value is not None and x.shape is not None:
        if x.dtype in intops.INT_TYPES:
            value = _int_unary(node, x)
        elif node.op_type == "Not" and x.dtype == BOOL:
            value = tuple(not bool(v) for v in x.value)
        elif x.dtype in floatops.FLOAT_TYPES and node.op_type == "Clip":
            value = _float_clip(node, x)
        elif x.dtype in floatops.FLOAT_TYPES:
            value = floatops.unary(node, x.dtype, x.value)
    return [Tensor(x.dtype, x.shape, None if value is None else tuple(value))]


def _float_clip(node, x):
    """The elements of a float Clip whose bounds are known (inputs from opset 11, attributes before)."""
    if node.opset < 11:
        lo, hi = node.attr_float("min"), node.attr_float("max")
    else:
        if any(present(node, i) and scalar(node, i) is None for i in (1, 2)):
            return None
        lo, hi = (scalar(node, i) if present(node, i) else None for i in (1, 2))
    if any(b is not None and not isinstance(b, (int, float)) for b in (lo, hi)):
        return None
    return floatops.clip(node, x.dtype, x.value, lo, hi)


def _int_unary(node, x):
    """The elements of an integer Neg, Abs, Sign, Relu or Clip, exact in ``x``'s type; None otherwise."""
    op = node.op_type
    if op == "Clip":
        lo, hi = (scalar(node, i) if present(node, i) else None for i in (1, 2))
        if any(b is not None and not intops.is_dim(b) for b in (lo, hi)) or \
                any(present(node, i) and scalar(node, i) is None for i in (1, 2)):
            return None
        f = lambda v: intops.clip(v, lo, hi)  # noqa: E731
    else:
        f = {"Neg": dims.neg, "Abs": intops.absolute, "Sign": intops.sign,
             "Relu": lambda v: dims.dmax(v, 0)}.get(op)
    if f is None or not all(intops.is_dim(v) for v in x.value):
        return None
    out = []
    for v in x.value:
        r = intops.fit(node, f(v), x.dtype, f"{op} of {v} in {intops.type_name(x.dtype)}")
        if r is None:
            return None
        out.append(r)
    return out


@register("IsNaN IsInf", conditions=(), cost=formulas.ELEMENTWISE)
def is_nan_inf(node: Node) -> Outputs:
    x = arg(node, 0)
    return [Tensor(BOOL, x.shape)]


@register("Dropout", conditions=(), cost=formulas.MOVEMENT)
def dropout_v1(node: Node) -> Outputs:
    """Before opset 10 the mask has x's type."""
    return _dropout(node, arg(node, 0).dtype)


@register("Dropout", since=10, conditions=(), cost=formulas.MOVEMENT)
def dropout(node: Node) -> Outputs:
    """The mask is bool."""
    ratio = arg(node, 1).value if present(node, 1) else None
    if ratio and isinstance(ratio[0], (int, float)) and not 0 <= ratio[0] < 1:
        # (onnxruntime checks a ratio input, from opset 12, at every run, training or not: no size runs)
        raise ShapeContradiction(f"Dropout ratio {ratio[0]} is not in [0, 1)")
    return _dropout(node, BOOL)


def _dropout(node, mask_dtype):
    x = arg(node, 0)
    outs = [Tensor(x.dtype, x.shape)]
    if node.num_outputs > 1:
        outs.append(Tensor(mask_dtype, x.shape))
    return outs


_COMPARE = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}


def _broadcast_values(shape, tensors):
    """Each input's value expanded to ``shape`` (static), or None."""
    if shape is None or not all(isinstance(d, int) for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    rank = len(shape)
    outs = []
    for t in tensors:
        if t.value is None or t.shape is None or not all(isinstance(d, int) for d in t.shape):
            return None
        ts = (1,) * (rank - len(t.shape)) + tuple(t.shape)
        strides = [0] * rank
        acc = 1
        for a in range(rank - 1, -1, -1):
            strides[a] = 0 if ts[a] == 1 else acc
            acc *= ts[a]
        vals = []
        for flat in range(n):
            rem, off = flat, 0
            for a in range(rank - 1, -1, -1):
                idx = rem % shape[a]
                rem //= shape[a]
                off += idx * strides[a]
            vals.append(t.value[off])
        outs.append(vals)
    return outs


def _combine(op, a, b, node):
    """One element of a binary op on integer values, before wrapping; None when not exactly known."""
    if op in ("Add", "Sum"):
        return dims.add(a, b)
    if op == "Sub":
        return dims.sub(a, b)
    if op == "Mul":
        return intops.product(a, b)
    if op == "Div":
        return intops.trunc_div(a, b)
    if op == "Mod":
        return intops.c_fmod(a, b) if node.attr_int("fmod", 0) else intops.py_mod(a, b)
    if op in ("Max", "Min"):
        f = dims.dmax if op == "Max" else dims.dmin
        return node.decide(f, (a, b), lambda r: f"{op.lower()}({a}, {b}) taken as {r}")
    if op in _DECIDE:
        return node.decide(_DECIDE[op], (a, b), lambda r: f"{comparison_text(op, a, b)} taken as {r}", output=0)
    return None


# The comparisons of shape values, each decided from the ranges (None: undecided).
_DECIDE = {
    "Equal": dims.try_eq,
    "Less": dims.try_lt,
    "Greater": lambda a, b: dims.try_lt(b, a),
    "LessOrEqual": dims.try_le,
    "GreaterOrEqual": lambda a, b: dims.try_le(b, a),
}


def _float_compare(op, vals, node):
    """A comparison of float elements that are integers: an integral float, or an expression,
    which stands for an exact integral float (floatops: a cast shape value, exact under the
    bound recorded where it was cast). Both sides exact, the float comparison is the
    integer one (``0.0 < seq``, ``Cast(i) < Cast(seq)``)."""
    out = []
    for a, b in zip(*vals):
        x, y = _as_integer(a), _as_integer(b)
        if x is None or y is None:
            return None
        r = _combine(op, x, y, node)
        if r is None:
            return None
        out.append(r)
    return tuple(out)


def _as_integer(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v if intops.is_dim(v) else None


def _bool_combine(op, a, b):
    a, b = bool(a), bool(b)
    if op == "And":
        return a and b
    if op == "Or":
        return a or b
    if op == "Xor":
        return a != b
    if op == "Equal":
        return a == b
    return None


# Before opset 7 these take a broadcast attribute: the second operand broadcasts into the first.
_BROADCAST_ATTR = "Add Sub Mul Div Pow And Or Xor Equal Less Greater"


@register(_BROADCAST_ATTR, conditions=[BROADCAST], cost=formulas.ELEMENTWISE)
def binary_v1(node: Node) -> Outputs:
    return _elementwise(node, unidirectional=True)


@register("PRelu", conditions=["slope has X's channels, or one element"], cost=formulas.ELEMENTWISE)
def prelu_v1(node: Node) -> Outputs:
    """PRelu before opset 7: a slope per channel (or one for all), the output X's shape.
    onnxruntime has no kernel for it: nothing to learn its refusals from."""
    return _elementwise(node, unidirectional=True)


@register("Mod Max Min Sum Mean BitShift BitwiseAnd BitwiseOr BitwiseXor LessOrEqual GreaterOrEqual",
          conditions=[BROADCAST], cost=formulas.ELEMENTWISE)
@register(_BROADCAST_ATTR + " PRelu", since=7, conditions=[BROADCAST], cost=formulas.ELEMENTWISE)
def binary(node: Node) -> Outputs:
    """The inputs broadcast into each other (PRelu too: the spec says the slope broadcasts
    into X, onnxruntime broadcasts both ways and the output takes the broadcast shape)."""
    return _elementwise(node, unidirectional=False)


def _elementwise(node, unidirectional):
    ts = [arg(node, i) for i in range(len(node.inputs)) if present(node, i)]
    if not ts:
        return [node.unknown_rank("no input is a tensor")]
    op = node.op_type
    dtype = BOOL if op in _COMPARE else ts[0].dtype
    shapes = [shape_of(t, dtype, why="an input's rank unknown") for t in ts]
    if unidirectional:
        shape = shapes[0]
    else:
        shape = broadcast_shapes(shapes, lambda axis, why: node.fresh(why, 0, axis), node.require_equal)
    value = None
    in_dtype = ts[0].dtype
    if all(t.value is not None for t in ts) and len(ts) >= 1:
        vals = _broadcast_values(shape, ts)
        if vals is not None:
            value = _fold(op, in_dtype, vals, node)
    return [Tensor(dtype, shape, value)]


def _float_power(in_dtype, vals):
    """Pow of float elements where every power is an integer the type holds exactly (TorchScript's
    ``num_patches ** 0.5`` is Pow(16.0, 0.5)): pow is not correctly rounded everywhere, but an exact
    result within the mantissa is what any pow accurate to half an ulp returns."""
    out = []
    for x, y in zip(*vals):
        r = _integral_power(x, y)
        if r is None or r > intops.FLOAT_EXACT[in_dtype]:
            return None
        out.append(float(r))
    return tuple(out)


def _integral_power(x, y):
    """``x**y`` for a nonnegative integral ``x`` and ``y = p/q`` (q at most 4, 0 <= p <= 64) when
    it is an integer; None otherwise."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (x, y)):
        return None
    if x < 0 or x != int(x):
        return None
    f = Fraction(y)
    p, q = f.numerator, f.denominator
    if q > 4 or not 0 <= p <= 64:
        return None
    base = int(x) ** p
    n = round(float(base) ** (1.0 / q)) if base < 2**1000 else None
    if n is None:
        return None
    for cand in (n - 1, n, n + 1):  # the float root is within one of the integer root
        if cand >= 0 and cand**q == base:
            return cand
    return None


def _fold(op, in_dtype, vals, node):
    n = len(vals[0])
    if in_dtype == BOOL and op in ("And", "Or", "Xor", "Equal"):
        out = []
        for i in range(n):
            acc = vals[0][i]
            for v in vals[1:]:
                acc = _bool_combine(op, acc, v[i])
            out.append(acc)
        return tuple(out)
    if in_dtype in floatops.FLOAT_TYPES and op in _DECIDE and len(vals) == 2:
        return _float_compare(op, vals, node)
    if in_dtype in floatops.FLOAT_TYPES and op == "Pow" and len(vals) == 2:
        return _float_power(in_dtype, vals)
    if in_dtype in floatops.FLOAT_TYPES:
        return floatops.fold(node, in_dtype, vals)
    if in_dtype not in intops.INT_TYPES:
        return None
    if op in ("Mean", "Pow", "BitShift", "PRelu", "And", "Or", "Xor") or op.startswith("Bitwise"):
        return None
    if op in ("Max", "Min", "Sum") and len(vals) == 1:
        return tuple(vals[0])
    if op not in ("Max", "Min", "Sum") and len(vals) != 2:
        return None
    compares = op in _COMPARE
    out = []
    for i in range(n):
        acc = vals[0][i]
        if not intops.is_dim(acc):
            return None
        for v in vals[1:]:
            b = v[i]
            if not intops.is_dim(b):
                return None
            acc = _combine(op, acc, b, node)
            if acc is None:
                return None
            if not compares:  # each step of a variadic Sum wraps, as onnxruntime's does
                acc = intops.fit(node, acc, in_dtype, f"{op} in {intops.type_name(in_dtype)}")
                if acc is None:
                    return None
        out.append(acc)
    return tuple(out)
