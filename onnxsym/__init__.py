"""onnxsym: symbolic shapes for ONNX models.

    import onnxsym
    model = onnxsym.annotate("model.onnx")          # value_info filled with symbolic dims
    result = onnxsym.infer("model.onnx")            # shapes, symbols, unresolved dims
"""

from __future__ import annotations

import importlib as _importlib
import os as _os
from typing import TYPE_CHECKING

# In a source checkout, rules/ and cli.py stand beside this package; the wheel places
# them inside it (see pyproject.toml). Either way they are onnxsym.rules and onnxsym.cli,
# and nothing else of the checkout (tests/, bench/) is part of the package.
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "rules")) and \
        _os.path.isfile(_os.path.join(_root, "cli.py")):
    from ._checkout import install as _install

    _install(_root)

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
    "ExprSyntaxError": "exprtext", "format_dim": "exprtext", "parse_dim": "exprtext",
    "register_rule": "registry",
    "Optional_": "values", "Sequence": "values", "Tensor": "values",
    "to_mlir": "mlir", "from_sympy": "sympy_bridge",
}

__all__ = [
    "annotate", "infer", "write_result", "to_mlir", "from_sympy", "Result", "UnresolvedDim", "register_rule", "Tensor",
    "Sequence",
    "Optional_", "Dim", "Expr", "Sym", "sym", "dmax", "dmin", "ceil_div", "evaluate", "free_symbols",
    "is_static", "parse_dim", "format_dim", "OnnxsymError", "ModelLoadError", "GraphError",
    "InvalidModel", "OutputError",
    "ShapeContradiction", "RuleFailure", "ExprSyntaxError", "SymbolicDimError", "UndecidableError", "__version__",
]

if TYPE_CHECKING:
    from .api import Result, UnresolvedDim, annotate, infer, write_result
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
    from .errors import GraphError, InvalidModel, ModelLoadError, OnnxsymError, OutputError, RuleFailure, ShapeContradiction
    from .exprtext import ExprSyntaxError, format_dim, parse_dim
    from .mlir import to_mlir
    from .registry import register_rule
    from .sympy_bridge import from_sympy
    from .values import Optional_, Sequence, Tensor


def _wire_dims(later) -> None:
    """Called by onnxsym.dims as it loads: ``str()`` and ``to_sympy()`` of an ``Expr`` belong to
    layers above the algebra, which load on first use (the printer then installs itself)."""

    def format_expr(e):
        from .exprtext import format_expr
        return format_expr(e)

    def to_sympy(d):
        from .sympy_bridge import to_sympy
        return to_sympy(d)

    later.format = format_expr
    later.to_sympy = to_sympy


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        # a submodule (onnxsym.dims, onnxsym.engine): it was an attribute once imported, as before
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
