"""value_info entries encoded straight to protobuf wire bytes.

A large graph has tens of thousands of values but few distinct types: the bytes
of each (dtype, shape) are made once, and all entries are merged into the graph
in one call, instead of building a message per value and per dim.
"""

from __future__ import annotations

_MASK64 = (1 << 64) - 1


def varint(n: int) -> bytes:
    n &= _MASK64  # negative int64 values take ten bytes, as protobuf writes them
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(tag: int, payload: bytes) -> bytes:
    """A length-delimited field; ``tag`` is ``(number << 3) | 2``."""
    n = len(payload)
    return (bytes((tag, n)) if n < 0x80 else bytes((tag,)) + varint(n)) + payload


# Tags: ValueInfoProto.name = 1, .type = 2; TypeProto.tensor_type = 1;
# TypeProto.Tensor.elem_type = 1 (varint), .shape = 2; TensorShapeProto.dim = 1;
# Dimension.dim_value = 1 (varint), .dim_param = 2; GraphProto.value_info = 13.
_VI_NAME, _VI_TYPE, _TP_TENSOR, _T_SHAPE, _SHAPE_DIM, _DIM_PARAM = 0x0A, 0x12, 0x0A, 0x12, 0x0A, 0x12
_T_ELEM, _DIM_VALUE = 0x08, 0x08
_GRAPH_VALUE_INFO = 0x6A
_VALUE_INFO_TAG, _NAME_TAG = bytes((_GRAPH_VALUE_INFO,)), bytes((_VI_NAME,))


def tensor_type_bytes(dtype: int, shape: tuple | None) -> bytes:
    """A serialized TypeProto of a tensor; int dims as dim_value, others as dim_param text;
    no shape field when ``shape`` is None (unknown rank)."""
    if shape is None:
        return field(_TP_TENSOR, bytes((_T_ELEM,)) + varint(dtype))
    dims = []
    for d in shape:
        if isinstance(d, int):
            dims.append(field(_SHAPE_DIM, bytes((_DIM_VALUE,)) + varint(d)))
        else:
            dims.append(field(_SHAPE_DIM, field(_DIM_PARAM, str(d).encode("utf-8"))))
    return field(_TP_TENSOR, bytes((_T_ELEM,)) + varint(dtype) + field(_T_SHAPE, b"".join(dims)))


_VARINTS = [varint(n) for n in range(0x800)]  # the lengths of names and entries, ready


class ValueInfoBytes:
    """Collects value_info entries as bytes for :meth:`merge_into`."""

    def __init__(self):
        self._types: dict[tuple, bytes] = {}
        self._parts = []

    def add_tensor(self, name: str, dtype: int, shape: tuple | None) -> None:
        key = (dtype, shape)
        typed = self._types.get(key)
        if typed is None:
            typed = self._types[key] = field(_VI_TYPE, tensor_type_bytes(dtype, shape))
        # (the hot path of a large graph: no function call per name)
        named = name.encode("utf-8")
        k = len(named)
        n = k + len(typed)
        if n < 0x7F0:
            n += len(_VARINTS[k]) + 1
            self._parts += (_VALUE_INFO_TAG, _VARINTS[n], _NAME_TAG, _VARINTS[k], named, typed)
        else:
            self._add(name, typed)

    def add(self, name: str, type_bytes: bytes) -> None:
        self._add(name, field(_VI_TYPE, type_bytes))

    def _add(self, name: str, typed: bytes) -> None:
        named = field(_VI_NAME, name.encode("utf-8"))
        n = len(named) + len(typed)
        self._parts.append(bytes((_GRAPH_VALUE_INFO, n)) if n < 0x80 else bytes((_GRAPH_VALUE_INFO,)) + varint(n))
        self._parts.append(named)
        self._parts.append(typed)

    def merge_into(self, graph) -> None:
        """Append the entries to ``graph.value_info`` (merging appends repeated fields)."""
        if self._parts:
            graph.MergeFromString(b"".join(self._parts))
