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
from typing import Iterable, Iterator, Set, Tuple

import onnx

from .errors import UserInputError

_EXTERNAL = onnx.TensorProto.EXTERNAL


def _tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    yield from graph.initializer
    for s in graph.sparse_initializer:
        yield s.values
        yield s.indices
    for n in graph.node:
        for a in n.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            if a.HasField("g"):
                yield from _tensors(a.g)
            for g in a.graphs:
                yield from _tensors(g)


def external_references(tensors: Iterable[onnx.TensorProto]) -> Iterator[Tuple[onnx.TensorProto, str]]:
    """Each of ``tensors`` kept in an external file, with that file (relative to the model's folder)."""
    for t in tensors:
        if t.data_location == _EXTERNAL:
            for e in t.external_data:
                if e.key == "location":
                    yield t, e.value


def external_locations(model: onnx.ModelProto) -> Set[str]:
    """The files (relative to the model's folder) that hold its external data."""
    return {location for _, location in external_references(_tensors(model.graph))}


def check_output_folder(model: onnx.ModelProto, src_dir: str, dst_dir: str) -> None:
    """Refuse to write ``model`` into ``dst_dir`` when its weight files (in ``src_dir``)
    would not resolve from there."""
    src_dir, dst_dir = os.path.realpath(src_dir), os.path.realpath(dst_dir)
    if src_dir == dst_dir:
        return
    missing = sorted(loc for loc in external_locations(model) if not os.path.exists(os.path.join(dst_dir, loc)))
    if missing:
        raise UserInputError(
            f"the model keeps its weights in {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} "
            f"beside it, in {src_dir}; an annotated copy in {dst_dir} would not find them (onnx and "
            f"onnxruntime accept no path out of a model's folder, no symbolic link, and onnx no hard link). "
            f"Write the output into {src_dir} (the default MODEL.sym.onnx is there), or copy the weight "
            f"files into {dst_dir} first")
