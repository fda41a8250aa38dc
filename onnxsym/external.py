"""External data (weights in files beside the model) when the annotated model is
written to another folder.

onnx and onnxruntime only accept external-data locations inside the model's own
folder: no absolute paths, no ``..``, no symbolic links. So the references are
left as they are and each weight file is hard-linked into the output folder:
no byte is copied or read, and the output folder then holds a complete model. A
hard link needs both folders on one filesystem; otherwise this fails with a
message and nothing is written.
"""

from __future__ import annotations

import os
from typing import Iterator, Set

import onnx

from .errors import ModelLoadError

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


def external_locations(model: onnx.ModelProto) -> Set[str]:
    """The files (relative to the model's folder) that hold its external data."""
    out = set()
    for t in _tensors(model.graph):
        if t.data_location == _EXTERNAL:
            for e in t.external_data:
                if e.key == "location":
                    out.add(e.value)
    return out


def link_weights(model: onnx.ModelProto, src_dir: str, dst_dir: str) -> None:
    """Make every external-data file of ``model`` (in ``src_dir``) also appear, under
    the same relative name, in ``dst_dir``."""
    src_dir, dst_dir = os.path.realpath(src_dir), os.path.realpath(dst_dir)
    if src_dir == dst_dir:
        return
    for loc in sorted(external_locations(model)):
        src = os.path.realpath(os.path.join(src_dir, loc))
        if os.path.isabs(loc) or os.path.commonpath([src, src_dir]) != src_dir:
            raise ModelLoadError(f"external data '{loc}' is outside the model's folder {src_dir}")
        if not os.path.exists(src):
            raise ModelLoadError(f"external data '{loc}' is missing from {src_dir}")
        dst = os.path.join(dst_dir, loc)
        if os.path.exists(dst):
            if os.path.samefile(src, dst):
                continue
            raise ModelLoadError(f"{dst} exists and is not the model's weight file '{loc}'; "
                                 f"refusing to overwrite it")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        try:
            os.link(src, dst)
        except OSError as exc:
            raise ModelLoadError(f"cannot link the weight file '{loc}' into {dst_dir} ({exc.strerror}); "
                                 f"write the output into {src_dir} or copy the weights there yourself") from None
