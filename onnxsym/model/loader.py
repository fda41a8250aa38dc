"""Reading a model: the file, its declared types' dims (symbols in a :class:`SymbolTable`), its constant values.

Weights are never read: the graph is loaded without external data, and only
small inline initializers (shape tensors and the like) give values.
"""

from __future__ import annotations

import functools
import keyword
import os
import re
import stat

import onnx
from onnx import numpy_helper

from .. import dims
from ..dims import Dim
from ..dims.text import ExprSyntaxError, parse_dim
from ..errors import ModelLoadError, UserInputError
from ..inference.symbols import SymbolTable
from ..inference.values import MAX_VALUE_ELEMENTS, Opaque, Optional_, Sequence, Tensor, Value

# The largest message protobuf parses or writes.
PROTOBUF_LIMIT = 2**31 - 1


def load_model(model_or_path: str | os.PathLike | onnx.ModelProto | bytes | object) -> tuple[onnx.ModelProto, str | None]:
    """The model and the folder its external data is relative to (``None`` for an
    in-memory model). External data is not loaded. An ``onnx_ir.Model`` or a torch
    ``ONNXProgram`` is serialized to a new ModelProto (see :mod:`onnxsym.model.objects`)."""
    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path, None
    from . import objects  # an export script's object: an onnx_ir.Model or a torch ONNXProgram
    what = objects.kind(model_or_path)
    if what is not None:
        return objects.to_proto(model_or_path, what), None
    if isinstance(model_or_path, (bytes, bytearray, memoryview)):  # the serialized model (onnx.load_from_string)
        return _parsed(bytes(model_or_path), "the model bytes"), None
    if not isinstance(model_or_path, (str, os.PathLike)):
        raise UserInputError(f"model: expected a path, a ModelProto, the model's bytes, an onnx_ir.Model or a "
                             f"torch ONNXProgram, got "
                             f"{type(model_or_path).__name__}")
    path = os.fspath(model_or_path)
    if not os.path.exists(path):
        raise ModelLoadError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ModelLoadError(f"{path}: is a folder, not an ONNX file")
    kind = _file_kind(path)
    if kind is not None:  # /dev/zero would be read forever, a terminal waited on
        raise ModelLoadError(f"{path}: is {kind}, not an ONNX file (a regular file or a pipe is read)")
    size = os.path.getsize(path)
    if size > PROTOBUF_LIMIT:
        raise ModelLoadError(f"{path}: the graph file is {size / 2**30:.1f} GB, over protobuf's 2 GB limit; "
                             f"store the weights as external data (onnx.save(model, path, "
                             f"save_as_external_data=True)) and annotate that")
    try:
        with open(path, "rb") as f:
            # bounded: a pipe (or a file that grows) gives no size beforehand
            data = f.read(PROTOBUF_LIMIT + 1)
    except OSError as exc:
        raise ModelLoadError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > PROTOBUF_LIMIT:
        raise ModelLoadError(f"{path}: more than protobuf's 2 GB limit to read; not one ONNX graph file")
    if not data:
        raise ModelLoadError(f"{path}: the file is empty")
    return _parsed(data, path), os.path.dirname(os.path.abspath(path))


def _parsed(data: bytes, where: str) -> onnx.ModelProto:
    if not data:
        raise ModelLoadError(f"{where}: empty")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception:
        raise ModelLoadError(f"{where}: not an ONNX model (the protobuf does not parse; truncated or another format)") from None
    if not model.HasField("graph") or model.ir_version <= 0:
        raise ModelLoadError(f"{where}: not an ONNX model (no graph or no ir_version)")
    return model


def _file_kind(path: str) -> str | None:
    """What ``path`` is when it is neither a regular file nor a pipe (then None)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # (opening it reports why)
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return None
    return ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "no regular file")


_SANITIZE = re.compile(r"[^0-9A-Za-z_]+")


@functools.lru_cache(maxsize=4096)  # (a pure function of the text, asked per dim at every inference and write)
def symbol_name(text: str) -> str:
    """An identifier made from a value or node name, for naming fresh symbols."""
    s = _SANITIZE.sub("_", text).strip("_") or "v"
    return "_" + s if s[0].isdigit() else s


# dim_params that exporters write for "unknown" (paddle2onnx's '?'): no name, one unknown each.
UNNAMED_PARAMS = frozenset({"?"})


def dim_from_proto(d, table: SymbolTable, where: str, fresh_base: str) -> Dim:
    """A dim of a declared shape: a number, a parsed dim_param, or, for a dim with neither,
    a symbol of its own. A negative number or a '?' is no size and no name (exporters write
    them for "unknown"): a symbol of its own too, with a warning."""
    why = ""
    if d.HasField("dim_value"):
        if d.dim_value >= 0:
            return d.dim_value
        why = f"dim_value {d.dim_value} is not a size"
    elif d.HasField("dim_param") and d.dim_param.strip() and d.dim_param.strip() not in UNNAMED_PARAMS:
        text = d.dim_param
        try:
            if text.isascii() and text.isidentifier() and not keyword.iskeyword(text):
                v = table.get(text, where)  # (a plain name: what parsing it gives, without the parse)
            else:
                v = parse_dim(text, lambda n: table.get(n, where))
        except (ExprSyntaxError, ZeroDivisionError, dims.SymbolicDimError):
            # Any string is a legal dim_param: one outside the grammar is an opaque name.
            if text not in table.symbols:
                table.warnings.append(f"{where}: dim_param {text!r} is not an expression; "
                                      f"taken as the name of one symbol")
            return table.get(text, where)
        if not isinstance(v, int) or v >= 0:
            return v
        why = f"dim_param {text!r} is not a size"
    elif d.HasField("dim_param") and d.dim_param.strip():
        why = f"dim_param {d.dim_param!r} names no dim"
    name = table.unique(fresh_base)
    if why:  # (a graph input's unnamed dim is written with this name: see output.writer)
        table.warnings.append(f"{where}: {why}; taken as an unnamed dim, {name}")
    return table.get(name, where)


def value_from_type(tp, table: SymbolTable, name: str) -> Value:
    """The value a declared type describes; unnamed dims become fresh symbols named after ``name``."""
    which = tp.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        tt = getattr(tp, which)
        shape = None
        if tt.HasField("shape"):
            base = symbol_name(name)
            shape = tuple(dim_from_proto(d, table, f"{name}[{i}]", f"{base}_d{i}")
                          for i, d in enumerate(tt.shape.dim))
        return Tensor(tt.elem_type, shape)
    if which == "sequence_type":
        elem = value_from_type(tp.sequence_type.elem_type, table, name + "_elem")
        return Sequence(elem if isinstance(elem, Tensor) else None)
    if which == "optional_type":
        return Optional_(value_from_type(tp.optional_type.elem_type, table, name))
    return Opaque(tp)


# A small tensor's bytes -> its value (decoding is a pure function of the bytes): every inference
# decodes every small initializer and Constant again, an If's trials and a pipeline's calls the same
# ones; the bytes are a fraction of numpy's conversion. Bounded by the elements held (a few MB);
# only values without a NaN (a NaN is unequal to itself: one shared object would make two constants
# the same value to the memo).
_DECODED: dict[bytes, object] = {}
_DECODED_ELEMENTS = [0]  # the elements _DECODED holds
_DECODED_LIMIT = 1 << 16


def decoded(t: onnx.TensorProto, decode):
    """``decode()`` (a value made from ``t`` alone, stored in the model: not external data),
    remembered by ``t``'s bytes where ``t`` is small."""
    n = 1
    for d in t.dims:
        n *= d
    if n > MAX_VALUE_ELEMENTS or t.data_location == onnx.TensorProto.EXTERNAL:
        return decode()
    key = t.SerializeToString()
    v = _DECODED.get(key)
    if v is None:
        v = decode()
        elements = getattr(v, "value", None)
        if elements is None or not any(x != x for x in elements):  # (no NaN)
            size = 1 + (len(elements) if elements is not None else 0)
            if _DECODED_ELEMENTS[0] + size > _DECODED_LIMIT:
                _DECODED.clear()
                _DECODED_ELEMENTS[0] = 0
            _DECODED[key] = v
            _DECODED_ELEMENTS[0] += size
    return v


def initializer_value(t: onnx.TensorProto, base_dir: str | None = None,
                      warnings: list[str] | None = None) -> Tensor:
    """An initializer as a tensor; small ones keep their elements (an external one is
    read by itself, from ``base_dir``; large ones, the weights, are never read). A small
    external one that cannot be read is a warning in ``warnings``, its value unknown."""
    if t.data_location != onnx.TensorProto.EXTERNAL:
        out: Tensor = decoded(t, lambda: _initializer_value(t, base_dir, warnings))
        return out
    return _initializer_value(t, base_dir, warnings)


def _initializer_value(t: onnx.TensorProto, base_dir: str | None = None,
                       warnings: list[str] | None = None) -> Tensor:
    shape = tuple(t.dims)
    n = 1
    for d in shape:
        n *= d
    value = None
    if n <= MAX_VALUE_ELEMENTS and t.data_type != onnx.TensorProto.STRING:
        try:
            if t.data_location == onnx.TensorProto.EXTERNAL:
                value = _small_external_value(t, base_dir, warnings)
            else:
                value = tuple(numpy_helper.to_array(t).reshape(-1).tolist())
        except Exception as exc:
            value = None
            if t.data_location == onnx.TensorProto.EXTERNAL and warnings is not None:
                _warn(warnings, _unread(t, f"cannot be read ({' '.join(str(exc).split())})"))
    return Tensor(t.data_type, shape, value)


def _warn(warnings: list[str], text: str) -> None:
    if text not in warnings:  # (a subgraph's initializers are read at each inference of it)
        warnings.append(text)


def _unread(t: onnx.TensorProto, why: str) -> str:
    return (f"initializer '{t.name}': its external data {why}; its value is unknown "
            f"(what is computed from it, a Reshape target say, is a fresh symbol)")


def _small_external_value(t: onnx.TensorProto, base_dir: str | None,
                          warnings: list[str] | None = None) -> tuple | None:
    if base_dir is None:
        return None
    from onnx.external_data_helper import load_external_data_for_tensor

    from .external import external_problem

    problem = external_problem(t, base_dir)
    if problem is not None:
        if warnings is not None:
            _warn(warnings, _unread(t, problem))
        return None
    copy = onnx.TensorProto()
    copy.CopyFrom(t)
    load_external_data_for_tensor(copy, base_dir)  # onnx's own checks: inside base_dir, in bounds
    return tuple(numpy_helper.to_array(copy).reshape(-1).tolist())
