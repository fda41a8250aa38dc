"""Data a caller gives for a graph input (``--value use_cache_branch=1``, ``infer(values=...)``).

optimum's merged decoders pick their branch with a bool input: its value is data, so the
branch-dependent dims stay unresolved (a guess is wrong for one of the branches). A user who
knows the value says so; the input then carries it, the If it decides takes that branch, and
the value is recorded in the metadata (``user.values``). Any scalar or small tensor input of
static shape may be given (a list, row-major)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType

import onnx

from ..errors import UserInputError
from ..inference.values import MAX_VALUE_ELEMENTS, Tensor, Value

# The command line's --value options (cli.py sets them for one command): infer's default.
CLI_VALUES: ContextVar[Mapping[str, object]] = ContextVar("onnxsym_cli_values", default=MappingProxyType({}))


def parse(text: str):
    """``NAME=1``, ``NAME=true``, ``NAME=0.5``, ``NAME=2,3``: (name, a number or a list of them)."""
    name, sep, rest = text.partition("=")
    items = [t.strip() for t in rest.split(",")]
    if not sep or not name.strip() or not all(items):
        raise UserInputError(f"values: expected NAME=NUMBER[,NUMBER...], got {text!r}",
                             f"--value {text}: expected NAME=NUMBER[,NUMBER...]")
    out: list[bool | int | float] = []
    for t in items:
        low = t.lower()
        if low in ("true", "false"):
            out.append(low == "true")
            continue
        try:
            out.append(int(t))
        except ValueError:
            try:
                out.append(float(t))
            except ValueError:
                raise UserInputError(f"values[{name.strip()!r}]: {t!r} is not a number",
                                     f"--value {text}: {t!r} is not a number") from None
    return name.strip(), out[0] if len(out) == 1 else out


def checked(values: Mapping[str, object], model: onnx.ModelProto, constant_initializers: bool) -> dict[str, list]:
    """The given values by input name, each a flat list; every name must be a graph input."""
    inits = {t.name for t in model.graph.initializer}
    inputs = {i.name for i in model.graph.input if i.name not in inits or not constant_initializers}
    out = {}
    for name, v in values.items():
        if name not in inputs:
            raise UserInputError(f"values: the model has no graph input {name!r}",
                                 f"--value {name}=...: the model has no graph input {name!r}")
        flat = list(v) if isinstance(v, (list, tuple)) else [v]
        if not flat or not all(isinstance(x, (bool, int, float)) for x in flat):
            raise UserInputError(f"values[{name!r}]: expected numbers or bools, got {v!r}",
                                 f"--value {name}=...: expected numbers or bools")
        out[name] = flat
    return out


def apply(value: Value, name: str, given: list | None) -> Value:
    """The declared input ``value`` carrying the given elements (converted to its type)."""
    if given is None:
        return value
    if not isinstance(value, Tensor):
        raise UserInputError(f"values[{name!r}]: graph input {name!r} is not a tensor",
                             f"--value {name}=...: graph input {name!r} is not a tensor")
    shape = value.shape
    if shape is None:  # no declared shape: the given data's
        shape = () if len(given) == 1 else (len(given),)
    static = [d for d in shape if isinstance(d, int)]
    if len(static) != len(shape):
        raise UserInputError(f"values[{name!r}]: graph input {name!r} has symbolic dims {list(map(str, shape))}",
                             f"--value {name}=...: graph input {name!r} has symbolic dims; only an input of "
                             "static shape may be given")
    count = math.prod(static)
    if count != len(given) or count > MAX_VALUE_ELEMENTS:
        raise UserInputError(f"values[{name!r}]: graph input {name!r} has shape {list(shape)}, "
                             f"{len(given)} element(s) given",
                             f"--value {name}=...: graph input {name!r} has shape {list(shape)}, "
                             f"{len(given)} element(s) given")
    dt = value.dtype
    elems: tuple[bool | int | float, ...]
    if dt == onnx.TensorProto.BOOL:
        elems = tuple(bool(x) for x in given)
    elif dt in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16):
        elems = tuple(float(x) for x in given)
    elif dt in _INTS:
        if not all(float(x).is_integer() for x in given):
            raise UserInputError(f"values[{name!r}]: graph input {name!r} is an integer tensor",
                                 f"--value {name}=...: graph input {name!r} is an integer tensor")
        elems = tuple(int(x) for x in given)
    else:
        raise UserInputError(f"values[{name!r}]: graph input {name!r} has a type whose data cannot be given",
                             f"--value {name}=...: graph input {name!r} has a type whose data cannot be given")
    return Tensor(dt, tuple(shape), elems)


_INTS = {onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
         onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64}
