"""Reduce* rules: axes from the attribute (older opsets) or the second input."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.dims import Dim
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register
from onnxsym.semantics import floatops, intops
from onnxsym.semantics.shapes import normalize_axis, prod

from .common import arg, present, spec_vector

_OPS = "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum " \
       "ReduceLogSumExp ReduceSumSquare"

_UNKNOWN = object()


def _from_input(node):
    return node.opset >= (13 if node.op_type == "ReduceSum" else 18)


def _axes(node):
    """The axes list, None for "no axes given", or _UNKNOWN when given but not known."""
    if not _from_input(node):
        a = node.attr_ints("axes")
        return None if a is None else list(a)
    if not present(node, 1):
        return None
    t = arg(node, 1)
    spec_vector(node, "axes", t)
    if t.value is None:
        if t.shape is not None and len(t.shape) == 1 and t.shape[0] == 0:
            return []
        return _UNKNOWN
    return [int(v) for v in t.value]


@register(_OPS, conditions=(), cost=formulas.REDUCTION)
def reduce(node: Node) -> Outputs:
    x = arg(node, 0)
    in_shape = shape_of(x, x.dtype)
    rank = len(in_shape)
    keepdims = node.attr_int("keepdims", 1)
    noop = node.attr_int("noop_with_empty_axes", 0)
    axes = _axes(node)
    if axes is _UNKNOWN:
        if keepdims:
            # each dim is kept or becomes 1, so a dim of 1 is 1 either way
            return [Tensor(x.dtype, tuple(d if d == 1 else node.fresh("reduce axes unknown", 0, a)
                                          for a, d in enumerate(in_shape)))]
        return [node.unknown_rank("axes input's value unknown", 0, x.dtype)]
    if not axes:
        if noop and _from_input(node):
            return [x.reshaped(in_shape)]
        axes = list(range(rank))
    red = {normalize_axis(a, rank) for a in axes}
    shape: list[Dim] = []
    for i, d in enumerate(in_shape):
        if i in red:
            if keepdims:
                shape.append(1)
        else:
            shape.append(d)
    value = _reduced_elements(node, x, red)
    if value is None and x.extremes is not None and node.op_type in ("ReduceMax", "ReduceMin") \
            and all(isinstance(d, int) and d == 1 for d in shape) and \
            node.decide(lambda n: dims.try_le(1, n) is True, (prod(in_shape),),
                        lambda _: f"{node.op_type} of {prod(in_shape)} elements has one"):
        # one output element: the largest (smallest) of all, an element of the input
        value = (x.extremes[1] if node.op_type == "ReduceMax" else x.extremes[0],)
    return [Tensor(x.dtype, tuple(shape), value)]


# The integer reductions whose elements are kept: a shape computed as the product of
# gathered dims (tf2onnx's Einsum lowering), or the sum, largest or smallest of several.
_STEP: dict[str, Callable[[Dim, Dim], Dim | None]] = {"ReduceProd": intops.product, "ReduceSum": dims.add,
                                               "ReduceMax": dims.dmax, "ReduceMin": dims.dmin}
_EMPTY = {"ReduceProd": 1, "ReduceSum": 0}  # of no element; Max and Min of none are no size


def _reduced_elements(node: Node, x: Tensor, red: set[int]) -> tuple | None:
    """The output's elements, row-major, when the input's are known integers and its shape
    static: each step computed and wrapped in the input's type, as onnxruntime does. Also
    the largest (smallest) of floats that are integers (TorchScript's max over an image
    batch's float sizes): it is one of them, so it rounds nothing."""
    op = node.op_type
    step = _STEP.get(op)
    if step is None or x.value is None or x.shape is None or not all(isinstance(d, int) for d in x.shape):
        return None
    shape = tuple(int(d) for d in x.shape)
    if x.dtype in floatops.FLOAT_TYPES and op in ("ReduceMax", "ReduceMin"):
        ints = floatops.integral_elements(x.value)
        if ints is None:
            return None
        out = _reduced_ints(node, shape, x.dtype, red, ints)
        return None if out is None else tuple(float(v) if isinstance(v, int) else v for v in out)
    if x.dtype not in intops.INT_TYPES or not all(intops.is_dim(v) for v in x.value):
        return None
    return _reduced_ints(node, shape, x.dtype, red, list(x.value))


def _reduced_ints(node: Node, shape: tuple[int, ...], dtype: int, red: set[int], elements: list) -> tuple | None:
    op = node.op_type
    step = _STEP[op]
    groups: dict = {}
    for index, v in zip(itertools.product(*map(range, shape)), elements):
        groups.setdefault(tuple(0 if a in red else i for a, i in enumerate(index)), []).append(v)
    out: list[Dim] = []
    for key in itertools.product(*(range(1 if a in red else d) for a, d in enumerate(shape))):
        vs = groups.get(key, [])
        if not vs and op not in _EMPTY:
            return None
        acc = vs[0] if op not in _EMPTY else _EMPTY[op]
        for v in vs[0 if op in _EMPTY else 1:]:
            if op in _EMPTY:
                stepped = step(acc, v)
                acc = None if stepped is None else intops.fit(node, stepped, dtype, f"{op} in {intops.type_name(dtype)}")
                if acc is None:
                    return None
            else:
                acc = node.decide(step, (acc, v), _taken(op, acc, v))
        out.append(acc)
    return tuple(out)


def _taken(op: str, a: Dim, b: Dim) -> Callable[[Dim], str]:
    return lambda r: f"{op}({a}, {b}) taken as {r}"
