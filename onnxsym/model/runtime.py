"""onnxruntime asked whether it loads a model: the judge where onnx's inference and the kernels
differ. (onnxruntime is an extra: the callers say what they do without it.) It loads the model
in a child process (onnxsym.model.isolated): a native crash of it there is a refusal said, not
the end of onnxsym."""

from __future__ import annotations

import atexit
import importlib.util

from .isolated import Child, Crashed, Refused

_child: Child | None = None  # one child process answers every load asked (started on the first)


def _loader() -> Child:
    global _child
    if _child is None:
        _child = Child()
        atexit.register(_child.close)
    return _child


def load_error(data: bytes, optimize: bool) -> str | None:
    """onnxruntime's message on loading the serialized model ``data``, or None when it loads.
    ``optimize``: with the basic graph optimizations a user's session runs (constant folding
    computes shapes its inference alone leaves open, and infers again); else the graph as written.
    Raises ImportError without onnxruntime."""
    if importlib.util.find_spec("onnxruntime") is None:
        raise ImportError("no onnxruntime")
    options = {"optimization": "basic" if optimize else "disable_all", "threads": 1, "keep": False}
    try:
        _loader().load(data, options)
    except Refused as exc:
        return str(exc)
    except Crashed as exc:  # a native fault of onnxruntime's on loading: what a user's onnxruntime does too
        return f"onnxruntime crashed ({exc.signal}) loading the model"
    return None
