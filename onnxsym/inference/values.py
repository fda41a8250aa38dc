"""What the engine knows about one value: its type, its shape, and for small
tensors (shape tensors, scalars, small constants) its elements."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import dims
from ..dims import Dim

if TYPE_CHECKING:
    from onnx import TypeProto

Element = int | float | bool | str | object  # an int element may be a symbolic Expr

# Tensors with at most this many elements carry their values through the engine.
MAX_VALUE_ELEMENTS = 1024


@dataclass(frozen=True)
class Tensor:
    """A tensor value: ``dtype`` is an ``onnx.TensorProto`` element type (0 when unknown),
    ``shape`` a tuple of dims (``None`` when even the rank is unknown), ``value`` the
    row-major elements when known (dims for integer tensors, floats, bools); ``extremes``
    the least and the greatest element of an integer tensor whose elements are not listed
    (a Range of symbolic length), each one of its elements if it has any."""

    dtype: int
    shape: tuple[Dim, ...] | None
    value: tuple[Any, ...] | None = None  # (dims, floats or bools, by the element type)
    # (what ReduceMin and ReduceMax of it give)
    extremes: tuple[Dim, Dim] | None = None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def reshaped(self, shape: tuple[Dim, ...]) -> Tensor:
        """The same elements in the same order under another shape (Reshape, Flatten, Squeeze,
        Unsqueeze): what is known of them, listed or only their extremes, stays."""
        return Tensor(self.dtype, shape, self.value, self.extremes)


@dataclass(frozen=True)
class Sequence:
    """An ONNX sequence; ``elem`` describes what is known of every element
    (``None`` when nothing is), ``items`` the elements when known one by one,
    ``length`` their number when known without them; ``chunks`` ``(axis, n, s)`` when the
    items are a tensor split along ``axis`` (of ``n``) into pieces of ``s``, the last one
    shorter where ``s`` does not divide ``n`` (SplitToSequence with a scalar split), which
    ``elem`` cannot say and ConcatFromSequence needs."""

    elem: Tensor | None
    items: tuple[Tensor, ...] | None = None
    length: Dim | None = None
    chunks: tuple[int, Dim, int] | None = None

    @property
    def count(self) -> Dim | None:
        """The number of items, when known."""
        return len(self.items) if self.items is not None else self.length


@dataclass(frozen=True)
class Optional_:
    """An ONNX optional; ``elem`` describes the contained value (a tensor or a sequence in
    ONNX's spec; what a model declares, such as a map, is kept as it is read)."""

    elem: Value | None


@dataclass(frozen=True)
class Opaque:
    """A value of a type the engine does not model (e.g. a map); passed through."""

    type_proto: TypeProto | None = None

    @property
    def map_value_dtype(self) -> int:
        """The element type of a map's values (0 when this is not a map of tensors)."""
        tp = self.type_proto
        if tp is None or tp.WhichOneof("value") != "map_type":
            return 0
        return tp.map_type.value_type.tensor_type.elem_type


Value = Tensor | Sequence | Optional_ | Opaque


def unranked(dtype: int = 0) -> Tensor:
    """A tensor of which at most the element type is known: what any item of a sequence,
    an optional's content or a subgraph's input may be. Not a node's output: a rule that
    cannot tell an output's rank says why, with ``node.unknown_rank(reason)``."""
    return Tensor(dtype, None)


def tensor_from_array(arr: object, dtype: int | None = None) -> Tensor:
    """A constant tensor from a numpy array; small ones keep their elements."""
    import numpy as np
    from onnx.helper import np_dtype_to_tensor_dtype

    arr = np.asarray(arr)
    if dtype is None:
        dtype = int(np_dtype_to_tensor_dtype(arr.dtype)) if arr.dtype != object else 8
    value = None
    if arr.size <= MAX_VALUE_ELEMENTS and arr.dtype.kind in "biuf":
        value = tuple(arr.reshape(-1).tolist())
    return Tensor(dtype, tuple(int(d) for d in arr.shape), value)


def resolve_value(v: Value | None, resolve: Callable[[Dim], Dim]) -> Value | None:
    """``v`` with every dim (and every symbolic element) passed through ``resolve``;
    the same object when nothing changes."""
    if isinstance(v, Tensor):
        return _resolve_tensor(v, resolve)
    if isinstance(v, Sequence):
        elem = v.elem if v.elem is None else _resolve_tensor(v.elem, resolve)
        items = v.items if v.items is None else tuple(_resolve_tensor(t, resolve) for t in v.items)
        length = v.length if v.length is None else resolve(v.length)
        chunks = v.chunks if v.chunks is None else (v.chunks[0], resolve(v.chunks[1]), v.chunks[2])
        if elem is v.elem and items == v.items and length is v.length and chunks == v.chunks:
            return v
        return Sequence(elem, items, length, chunks)
    if isinstance(v, Optional_) and v.elem is not None:
        inner = resolve_value(v.elem, resolve)
        return v if inner is v.elem else Optional_(inner)
    return v


def _resolve_tensor(v: Tensor, resolve: Callable[[Dim], Dim]) -> Tensor:
    shape = v.shape if v.shape is None else tuple(resolve(d) for d in v.shape)
    value = v.value
    # (the element types gathered at C speed: a constant's 1024 plain numbers are asked of every node reading it)
    if value is not None and dims.Expr in set(map(type, value)):
        value = tuple(resolve(e) if isinstance(e, dims.Expr) else e for e in value)
    if shape == v.shape and (value is v.value or value == v.value):
        return v
    return Tensor(v.dtype, shape, value)
