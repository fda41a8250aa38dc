"""onnxsym: symbolic shapes for ONNX models.

    import onnxsym
    model = onnxsym.annotate("model.onnx")          # value_info filled with symbolic dims
    result = onnxsym.infer("model.onnx")            # shapes, symbols, unresolved dims
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# Each public name and the module that defines it. They load on first use (PEP 562), so
# `onnxsym --help` and a command's option parsing import neither onnx nor numpy.
_EXPORTS = {
    "annotate": "api", "infer": "api", "write_result": "api", "Result": "api", "UnresolvedDim": "api",
    "Dim": "dims", "Expr": "dims", "Sym": "dims", "sym": "dims", "dmax": "dims", "dmin": "dims",
    "ceil_div": "dims", "evaluate": "dims", "free_symbols": "dims", "is_static": "dims",
    "SymbolicDimError": "dims", "UndecidableError": "dims",
    "OnnxsymError": "errors", "ModelLoadError": "errors", "GraphError": "errors", "RuleFailure": "errors",
    "ShapeContradiction": "errors", "InvalidModel": "errors", "OutputError": "errors",
    "UserInputError": "errors", "PinnedError": "errors", "NoShapeError": "errors",
    "ExprSyntaxError": "dims.text", "format_dim": "dims.text", "parse_dim": "dims.text",
    "register_rule": "registry", "shape_of": "inference.node",
    "Optional_": "inference.values", "Sequence": "inference.values", "Tensor": "inference.values",
    "to_mlir": "mlir", "from_sympy": "dims.sympy_bridge", "verify": "commands.verify",
}

__all__ = [
    "annotate", "infer", "verify", "write_result", "to_mlir", "from_sympy", "Result", "UnresolvedDim", "register_rule",
    "shape_of",
    "Tensor", "Sequence",
    "Optional_", "Dim", "Expr", "Sym", "sym", "dmax", "dmin", "ceil_div", "evaluate", "free_symbols",
    "is_static", "parse_dim", "format_dim", "OnnxsymError", "ModelLoadError", "GraphError",
    "InvalidModel", "OutputError", "UserInputError", "PinnedError", "NoShapeError",
    "ShapeContradiction", "RuleFailure", "ExprSyntaxError", "SymbolicDimError", "UndecidableError", "__version__",
]

if TYPE_CHECKING:
    from .api import Result, UnresolvedDim, annotate, infer, write_result
    from .commands.verify import verify
    from .dims import (
        Dim,
        Expr,
        Sym,
        SymbolicDimError,
        UndecidableError,
        ceil_div,
        dmax,
        dmin,
        evaluate,
        free_symbols,
        is_static,
        sym,
    )
    from .dims.sympy_bridge import from_sympy
    from .dims.text import ExprSyntaxError, format_dim, parse_dim
    from .errors import (
        GraphError,
        InvalidModel,
        ModelLoadError,
        NoShapeError,
        OnnxsymError,
        OutputError,
        PinnedError,
        RuleFailure,
        ShapeContradiction,
        UserInputError,
    )
    from .inference.node import shape_of
    from .inference.values import Optional_, Sequence, Tensor
    from .mlir import to_mlir
    from .registry import register_rule


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        # a submodule (onnxsym.dims, onnxsym.inference.engine): it was an attribute once imported, as before
        try:
            return _importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'onnxsym' has no attribute {name!r}") from None
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
