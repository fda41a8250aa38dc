"""Dynamism a model does not declare: ``--dynamic INPUT:AXIS=NAME`` makes a static graph-input
dim a symbol, so that the domain answers whether the graph runs at other sizes (and which
nodes pin it when it does not).

The model is not changed: inference runs on a copy whose input declares the symbol.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import onnx

from ..errors import UserInputError

# {input name: {axis: symbol name}}, as the library takes it
Dynamic = Mapping[str, Mapping[int, str]]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def parse(text: str) -> tuple[str, int, str]:
    """``"images:0=batch"`` as ``("images", 0, "batch")``; the input's name may hold colons."""
    spec, eq, name = text.rpartition("=")
    inp, colon, axis = spec.rpartition(":")
    try:
        ax = int(axis)
    except ValueError:
        ax = None
    if not eq or not colon or not inp or ax is None or not _NAME.match(name.strip()):
        raise UserInputError(f"dynamic {text!r}: expected INPUT:AXIS=NAME (images:0=batch)",
                             f"--dynamic {text}: expected INPUT:AXIS=NAME (--dynamic images:0=batch)")
    return inp, ax, name.strip()


def collect(specs) -> dict[str, dict[int, str]]:
    """The ``--dynamic`` options as the library's mapping; one axis named twice is an error."""
    out: dict[str, dict[int, str]] = {}
    for text in specs:
        inp, axis, name = parse(text)
        known = out.setdefault(inp, {})
        if axis in known and known[axis] != name:
            raise UserInputError(f"dynamic: {inp}:{axis} given as {known[axis]!r} and {name!r}",
                                 f"--dynamic {inp}:{axis} given twice: {known[axis]} and {name}")
        known[axis] = name
    return out


def apply(model: onnx.ModelProto, dynamic: Dynamic | None, copy: bool) -> onnx.ModelProto:
    """``model`` (a copy of it when ``copy``) with each named input dim declared as its symbol."""
    if not dynamic:
        return model
    _check_form(dynamic)
    inputs = {i.name: i for i in model.graph.input}
    inits = {t.name for t in model.graph.initializer}
    for inp, axes in dynamic.items():
        i = inputs.get(inp)
        if i is None or inp in inits:
            names = ", ".join(n for n in inputs if n not in inits) or "none"
            raise UserInputError(f"dynamic: the model has no graph input {inp!r} (its inputs: {names})",
                                 f"--dynamic {inp}:...: the model has no graph input {inp!r} (its inputs: {names})")
        tt = i.type.tensor_type if i.type.HasField("tensor_type") else None
        if tt is None or not tt.HasField("shape"):
            raise UserInputError(f"dynamic: input {inp!r} declares no shape", f"--dynamic {inp}:...: "
                                 f"input {inp!r} declares no shape")
        rank = len(tt.shape.dim)
        for axis, name in axes.items():
            if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
                raise UserInputError(f"dynamic: input {inp!r} has rank {rank}: no axis {axis!r}",
                                     f"--dynamic {inp}:{axis}={name}: input {inp!r} has rank {rank}")
            if not isinstance(name, str) or not _NAME.match(name):
                raise UserInputError(f"dynamic[{inp!r}][{axis}] = {name!r}: expected a symbol name",
                                     f"--dynamic {inp}:{axis}={name}: expected a symbol name")
            d = tt.shape.dim[axis % rank]
            if d.HasField("dim_param") and d.dim_param != name:
                raise UserInputError(f"dynamic: {inp}[{axis}] is already the symbol {d.dim_param!r}",
                                     f"--dynamic {inp}:{axis}={name}: {inp}[{axis}] is already "
                                     f"the symbol {d.dim_param!r}")
    if copy:
        out = onnx.ModelProto()
        out.CopyFrom(model)
        model = out
    inputs = {i.name: i for i in model.graph.input}
    for inp, axes in dynamic.items():
        dims = inputs[inp].type.tensor_type.shape.dim
        for axis, name in axes.items():
            dims[axis % len(dims)].dim_param = name  # (clears dim_value: one field of a oneof)
    return model


def _check_form(dynamic: object) -> None:
    """``dynamic`` is a mapping {input name: {axis: symbol name}}, else a UserInputError saying so."""
    want = "expected a mapping {input name: {axis: symbol name}}, as dynamic={'images': {0: 'batch'}}"
    if not isinstance(dynamic, Mapping):
        raise UserInputError(f"dynamic: {want}; got a {type(dynamic).__name__}"
                             + (" (the command line's INPUT:AXIS=NAME texts are for --dynamic)"
                                if isinstance(dynamic, (str, list, tuple)) else ""))
    for inp, axes in dynamic.items():
        if not isinstance(inp, str) or not isinstance(axes, Mapping):
            raise UserInputError(f"dynamic[{inp!r}]: {want}; got {axes!r}")


def introduced(dynamic: Dynamic | None) -> dict[str, str]:
    """Each symbol ``dynamic`` introduces -> the place it names (``images[0]``)."""
    return {name: f"{inp}[{axis}]" for inp, axes in (dynamic or {}).items() for axis, name in axes.items()}
