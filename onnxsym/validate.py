"""Checks that turn a malformed model into one clear error before inference runs:
an opset newer than the installed onnx knows, an attribute of the wrong type, an
external-data file that is missing."""

from __future__ import annotations

import os
from typing import Dict, Optional, Tuple

import onnx
from onnx import defs

from .errors import GraphError, ModelLoadError
from .external import external_references

_ATTR_NAMES = {v: k for k, v in onnx.AttributeProto.AttributeType.items()}


def _known_opsets() -> Dict[str, int]:
    try:
        from onnx.onnx_cpp2py_export import defs as cdefs
        return {d: hi for d, (_, hi) in cdefs.schema_version_map().items()}
    except (ImportError, AttributeError):  # an onnx without the private map
        return {"": defs.onnx_opset_version(), "ai.onnx.ml": defs.onnx_ml_opset_version()}


def check_opsets(model: onnx.ModelProto) -> None:
    """A standard domain imported at a version the installed onnx does not know is an error:
    its operators may have changed in ways no rule here knows of."""
    known = _known_opsets()
    for op in model.opset_import:
        domain = "" if op.domain in ("", "ai.onnx") else op.domain
        hi = known.get(domain)
        if hi is not None and op.version > hi:
            raise ModelLoadError(f"the model imports opset {op.version} of '{op.domain or 'ai.onnx'}', "
                                 f"newer than the installed onnx {onnx.__version__} knows (up to {hi}); "
                                 f"upgrade onnx")


_schema_attrs: Dict[Tuple[str, str, int], Optional[Dict[str, int]]] = {}


def _declared_attr_types(domain: str, op_type: str, opset: int) -> Optional[Dict[str, int]]:
    key = (domain, op_type, opset)
    if key not in _schema_attrs:
        try:
            schema = defs.get_schema(op_type, opset, domain)
            # onnx's stub gives OpSchema.AttrType (a pybind11 enum) no __int__; it has one at runtime.
            _schema_attrs[key] = {name: int(a.type) for name, a in schema.attributes.items()}  # type: ignore[call-overload]
        except defs.SchemaError:
            _schema_attrs[key] = None
    return _schema_attrs[key]


def check_attributes(node: onnx.NodeProto, domain: str, opset: int, label: str) -> None:
    """An attribute whose type differs from what the operator's schema declares is an error."""
    if not node.attribute:
        return
    declared = _declared_attr_types(domain, node.op_type, opset)
    if declared is None:
        return
    for a in node.attribute:
        want = declared.get(a.name)
        if want is not None and a.type != want and not a.ref_attr_name:
            raise GraphError(f"{node.op_type} node '{label}': attribute '{a.name}' must be "
                             f"{_ATTR_NAMES.get(want, want)}, the model gives {_ATTR_NAMES.get(a.type, a.type)}")


def check_external_data(model: onnx.ModelProto, base_dir: Optional[str]) -> None:
    """Every external-data file an initializer points to must exist (its bytes are not read)."""
    if base_dir is None:
        return
    seen = set()
    for t, location in external_references(model.graph.initializer):
        if location in seen:
            continue
        seen.add(location)
        where = os.path.join(base_dir, location)
        if not os.path.exists(where) or os.path.isdir(where):  # any file: a pipe, a device
            raise ModelLoadError(f"initializer '{t.name}': its external data file '{location}' "
                                 f"is missing (looked in {base_dir})")
