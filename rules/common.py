"""Small helpers that the rule modules share."""

from __future__ import annotations

from typing import Any

from onnx import TensorProto

from onnxsym import dims
from onnxsym.dims import Dim
from onnxsym.errors import InvalidModel, ShapeContradiction
from onnxsym.inference.node import Node
from onnxsym.inference.provenance import Kind
from onnxsym.inference.values import Tensor, unranked
from onnxsym.registry import Outputs
from onnxsym.semantics.shapes import Shape, prod

UNKNOWN = unranked()  # what arg() gives for an absent input
# the element types the rules name, defined once
BOOL, F32, I32, I64, STRING = (TensorProto.BOOL, TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64,
                               TensorProto.STRING)


def arg(node: Node, i: int) -> Tensor:
    """Input ``i`` as a tensor; an unknown tensor when absent or not a tensor."""
    t = node.tensor(i)
    return t if t is not None else UNKNOWN


def present(node: Node, i: int) -> bool:
    return i < len(node.inputs) and node.inputs[i] is not None


def unknown_ranks(node: Node, reason: str, *dtypes: int) -> list[Tensor]:
    """Outputs of unknown rank, one per dtype (as many as the node has, at least one),
    each recorded with why, so explain and show can tell the user."""
    return [node.unknown_rank(reason, k, dt) for k, dt in enumerate(dtypes)][:max(node.num_outputs, 1)]


def same_shape(x: Tensor, dtype: int | None = None) -> Tensor:
    """A tensor of ``x``'s shape (and ``dtype``, default ``x``'s)."""
    return Tensor(x.dtype if dtype is None else dtype, x.shape)


def like_input(node: Node) -> Outputs:
    """The rule of the ``*Like`` ops (EyeLike, RandomNormalLike, ...): input 0's shape, of the
    type the ``dtype`` attribute names (default input 0's)."""
    x = arg(node, 0)
    return [same_shape(x, node.attr_int("dtype", x.dtype))]


def static_bound(d: Dim) -> int:
    """The largest value ``d`` can take (INT64_MAX when its range says nothing)."""
    return min(dims.range_of(d)[1], dims.INT64_MAX)


def size_bound(shape: Shape | None) -> int:
    """The largest number of elements a tensor of ``shape`` can have."""
    if shape is None:
        return dims.INT64_MAX
    return static_bound(prod(shape))


def required_int(node: Node, name: str) -> int:
    """An INT attribute the operator cannot do without; a model that omits it is invalid."""
    v = node.attr_int(name)
    if v is None:
        raise ShapeContradiction(f"required attribute '{name}' is missing")
    return v


def required_ints(node: Node, name: str) -> list[int]:
    """An INTS attribute the operator cannot do without; a model that omits it is invalid."""
    v = node.attr_ints(name)
    if v is None:
        raise ShapeContradiction(f"required attribute '{name}' is missing")
    return v


def rank(t: Tensor, *allowed: int) -> int | None:
    """The rank of ``t``; a known rank outside ``allowed`` contradicts the op's spec."""
    if t.shape is None:
        return None
    if allowed and len(t.shape) not in allowed:
        raise ShapeContradiction(f"expected rank {' or '.join(map(str, allowed))}, got shape "
                                 f"{[str(d) for d in t.shape]}")
    return len(t.shape)


def scalar(node: Node, i: int) -> Any:
    """The single element of input ``i`` when known (a 1-element tensor counts), else None."""
    v = node.value(i)
    return v[0] if v is not None and len(v) == 1 else None


def count(node: Node, reason: str, output: int, axis: int | None, hi: int, lo: int = 0,
          bound: Dim | None = None) -> Dim:
    """A data-dependent count: a fresh symbol in [lo, hi] (and at most ``bound``, an expression the
    op proves it never passes), or the number itself when lo == hi."""
    if lo == hi:
        return lo
    return node.fresh(reason, output, axis, lo, hi, Kind.DATA_DEPENDENT, bound)


def exact_quotient(node: Node, d: Dim, k: Dim, reason: str) -> Dim:
    """``d // k``, recording that ``node`` runs only when ``k`` divides ``d`` (onnxruntime
    refuses a remainder: a Reshape's -1, SpaceToDepth's blocks): the domain's divisibility."""
    q = dims.floordiv(d, k)
    op = dims.structure.operation(q)
    if op is not None and op[0] == "floordiv":
        given = _quotient_given(node, d, k)
        q = q if given is None else given
    node.require_equal(dims.mul(k, q), d, reason)
    return q


def _quotient_given(node: Node, d: Dim, k: Dim) -> Dim | None:
    """``d / k`` exactly where an equality ``a == b`` that the model needs to run makes it so
    (``d*b == q*k*a`` identically, ``a`` never 0). timm's window reverse divides
    ``512*batch*(h//4)*(w//4)`` by ``32*h*w``; the window partition before it needs
    ``512*batch*(h//4)*(w//4) == 32*batch*h*w``: the quotient is ``batch``."""
    from onnxsym.facts.edges import never_equals

    for a, b in node.equalities():
        for x, y in ((a, b), (b, a)):
            q = dims.structure.exact_quotient(dims.mul(d, y), dims.mul(k, x))
            if q is not None and never_equals(x, 0):
                return q
    return None


def spec_shape(node: Node, what: str, t: Tensor, want: Shape, how: str) -> None:
    """Input ``what`` (``t``) must have the shape ``want`` by the ONNX spec of the node's op
    (``how`` says how the spec makes it): another rank, or a dim provably different, breaks the
    spec (onnxruntime refuses the node at every size); a dim that may differ is a condition."""
    if t.shape is None:
        return
    rule = f"the ONNX spec of {node.op_type} makes it {how} = {list(want)}"
    if len(t.shape) != len(want) or any(dims.try_eq(a, b) is False for a, b in zip(t.shape, want)):
        raise InvalidModel(f"{what} has shape {list(t.shape)}; {rule}")
    for a, b in zip(t.shape, want):
        node.require_equal(a, b, f"{what} is {how}")


def spec_vector(node: Node, what: str, t: Tensor, scalar_ok: bool = False) -> None:
    """Input ``what`` (``t``) must be 1-D (or, with ``scalar_ok``, a scalar), as onnxruntime's
    kernel checks at every size ("must be a vector tensor")."""
    if t.shape is not None and not (len(t.shape) == 1 or (scalar_ok and not t.shape)):
        raise InvalidModel(f"{what} has rank {len(t.shape)}; the ONNX spec of {node.op_type} makes it 1-D"
                           + (" (onnxruntime also takes a scalar)" if scalar_ok else ""))


def spec_one_element(node: Node, what: str, t: Tensor) -> None:
    """Input ``what`` (``t``) must hold exactly one element (a scalar, or onnxruntime's 1-element
    vector): more or none break the spec; a count that may differ is a condition."""
    if t.shape is None:
        return
    n = prod(t.shape)
    if len(t.shape) > 1 or dims.try_eq(n, 1) is False:
        raise InvalidModel(f"{what} has shape {list(t.shape)}; the ONNX spec of {node.op_type} makes it a scalar "
                           f"(onnxruntime takes one element)")
    node.require_equal(n, 1, f"{what} holds one element")


def single_move(perm):
    """(moved, shifted): the input axis a permutation moves and the axes it moves past, where
    it moves one axis alone, as onnxruntime reads it: at the first axis out of place, the axis
    there moved out to it (``[1, 0]``: axis 1 past 0), else the one from there moved in."""
    n = len(perm)
    first = next((i for i in range(n) if perm[i] != i), None)
    if first is None:
        return None
    for moved in (perm[first], first):
        rest = [a for a in range(n) if a != moved]
        for to in range(n):
            if to != moved and list(perm) == rest[:to] + [moved] + rest[to:]:
                return moved, (range(to, moved) if to < moved else range(moved + 1, to + 1))
    return None
