"""External data (weights in files beside the model) when the annotated model is
written to another folder.

onnx and onnxruntime only accept external-data locations inside the model's own
folder: no absolute paths, no ``..``, no symbolic links, and onnx refuses a
weight file with more than one hard link (for the original model too). So the
references are left as they are, and an output in another folder is written only
when that folder already holds the weight files under the same names (copied
there by the user); otherwise it is refused, before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

import onnx

from ..errors import UserInputError

_EXTERNAL = onnx.TensorProto.EXTERNAL


_A = onnx.AttributeProto
_HOLDERS = (_A.TENSOR, _A.TENSORS, _A.GRAPH, _A.GRAPHS, _A.UNDEFINED)  # (an old model may leave type unset)


def _tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    yield from graph.initializer
    for s in graph.sparse_initializer:
        yield s.values
        yield s.indices
    for n in graph.node:
        for a in n.attribute:
            if a.type not in _HOLDERS:  # (the attribute's type read once: most are ints and lists)
                continue
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            if a.HasField("g"):
                yield from _tensors(a.g)
            for g in a.graphs:
                yield from _tensors(g)


def external_references(tensors: Iterable[onnx.TensorProto]) -> Iterator[tuple[onnx.TensorProto, str]]:
    """Each of ``tensors`` kept in an external file, with that file (relative to the model's folder)."""
    for t in tensors:
        if t.data_location == _EXTERNAL:
            for e in t.external_data:
                if e.key == "location":
                    yield t, e.value


# Up to this size, the model's file is searched for the key every external reference has
# ("location") before its tensors are walked: a search of the bytes is a hundred times faster.
_SEARCHED = 256 * 2**20


def external_locations(model: onnx.ModelProto, path: str | None = None) -> set[str]:
    """The files (relative to the model's folder) that hold its external data; ``path``: the
    file ``model`` was read from, if it is one."""
    if path is not None and not _may_refer(path):
        return set()
    return {location for _, location in external_references(_tensors(model.graph))}


def _may_refer(path: str) -> bool:
    """False where the file at ``path`` cannot hold an external reference (no "location" in it)."""
    import mmap

    try:
        if not os.path.isfile(path) or not 0 < os.path.getsize(path) <= _SEARCHED:  # (a pipe is read once)
            return True
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return data.find(b"location") >= 0
    except (OSError, ValueError):
        return True


def check_output_folder(model: onnx.ModelProto, src_dir: str, dst_dir: str,
                        locations: set[str] | None = None) -> None:
    """Refuse to write ``model`` into ``dst_dir`` when its weight files (in ``src_dir``)
    would not resolve from there. ``locations``: ``external_locations(model)``, when known."""
    src_dir, dst_dir = os.path.realpath(src_dir), os.path.realpath(dst_dir)
    if src_dir == dst_dir:
        return
    if locations is None:
        locations = external_locations(model)
    missing = sorted(loc for loc in locations if not os.path.exists(os.path.join(dst_dir, loc)))
    if missing:
        raise UserInputError(
            f"the model keeps its weights in {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} "
            f"beside it, in {src_dir}; an annotated copy in {dst_dir} would not find them (onnx and "
            f"onnxruntime accept no path out of a model's folder, no symbolic link, and onnx no hard link). "
            f"Write the output into {src_dir} (the default MODEL.sym.onnx is there), or copy the weight "
            f"files into {dst_dir} first")


def external_problem(t: onnx.TensorProto, base_dir: str) -> str | None:
    """Why onnx and onnxruntime would not read ``t``'s external data (None: they would):
    a location out of the model's folder, through a symbolic link, missing, or an offset
    and length past the file's end or not the tensor's size."""
    info = {e.key: e.value for e in t.external_data}
    location = info.get("location", "")
    if not location:
        return "names no file (no 'location')"
    if os.path.isabs(location) or os.path.normpath(location).split(os.sep)[0] == os.pardir:
        return f"is '{location}', outside the model's folder {base_dir} (onnx and onnxruntime read none there)"
    path = os.path.join(base_dir, location)
    parts = os.path.normpath(location).split(os.sep)
    for k in range(1, len(parts) + 1):
        if os.path.islink(os.path.join(base_dir, *parts[:k])):
            return f"is '{location}', through a symbolic link (onnx and onnxruntime follow none)"
    if not os.path.isfile(path):
        return f"is '{location}', which is missing (looked in {base_dir})"
    try:
        offset, length = int(info.get("offset", 0)), int(info["length"]) if "length" in info else None
    except ValueError:
        return f"in '{location}' has an offset or length that is no number"
    size = os.path.getsize(path)
    if offset < 0 or offset > size or (length is not None and (length < 0 or offset + length > size)):
        return (f"in '{location}' is at offset {offset}" + (f", length {length}" if length is not None else "")
                + f": past the end of the file ({size} bytes)")
    need = _byte_size(t)
    have = length if length is not None else size - offset
    if need is not None and have != need:
        return (f"in '{location}' is {have} bytes at offset {offset}; the tensor's "
                f"{need // max(1, _itemsize(t))} elements need {need}")
    return None


def _itemsize(t: onnx.TensorProto) -> int:
    try:
        return int(onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize)
    except (KeyError, TypeError, ValueError):
        return 0


_NOT_BYTES = {"STRING", "INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2"}  # (sub-byte ones packed)


def _byte_size(t: onnx.TensorProto) -> int | None:
    """The bytes ``t``'s elements take (None for a type whose elements are not whole bytes or sized)."""
    item = _itemsize(t)
    if not item or onnx.TensorProto.DataType.Name(t.data_type) in _NOT_BYTES:
        return None
    n = 1
    for d in t.dims:
        n *= d
    return n * item
