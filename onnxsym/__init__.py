"""onnxsym: symbolic shapes for ONNX models.

    import onnxsym
    model = onnxsym.annotate("model.onnx")          # value_info filled with symbolic dims
    result = onnxsym.infer("model.onnx")            # shapes, symbols, unresolved dims
"""

import os as _os

# In a source checkout, rules/ and cli.py stand beside this package; the wheel places
# them inside it (see pyproject.toml). Either way they are onnxsym.rules and onnxsym.cli,
# and nothing else of the checkout (tests/, bench/) is part of the package.
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "rules")) and \
        _os.path.isfile(_os.path.join(_root, "cli.py")):
    from ._checkout import install as _install

    _install(_root)
from .api import Result, UnresolvedDim, __version__, annotate, infer, write_result  # noqa: E402
from .dims import (Dim, Expr, Sym, SymbolicDimError, UndecidableError, ceil_div, dmax, dmin,  # noqa: E402
                   evaluate, free_symbols, is_static, sym)
from . import dims as _dims  # noqa: E402
from .errors import (GraphError, InvalidModel, ModelLoadError, OnnxsymError, OutputError, RuleFailure,  # noqa: E402
                     ShapeContradiction)
from .exprtext import ExprSyntaxError, format_dim, parse_dim  # noqa: E402
from .registry import register_rule  # noqa: E402
from .values import Optional_, Sequence, Tensor  # noqa: E402

__all__ = [
    "annotate", "infer", "write_result", "to_mlir", "from_sympy", "Result", "UnresolvedDim", "register_rule", "Tensor", "Sequence",
    "Optional_", "Dim", "Expr", "Sym", "sym", "dmax", "dmin", "ceil_div", "evaluate", "free_symbols",
    "is_static", "parse_dim", "format_dim", "OnnxsymError", "ModelLoadError", "GraphError",
    "InvalidModel", "OutputError",
    "ShapeContradiction", "RuleFailure", "ExprSyntaxError", "SymbolicDimError", "UndecidableError", "__version__",
]


def _to_sympy(d):
    # Expr.to_sympy: the bridge, and sympy with it, loads on first use
    from .sympy_bridge import to_sympy
    return to_sympy(d)


_dims.later.to_sympy = _to_sympy


def __getattr__(name):
    # The MLIR export loads when first used: annotating needs none of it.
    if name == "to_mlir":
        from .mlir import to_mlir
        return to_mlir
    if name == "from_sympy":  # sympy loads only when the bridge is used
        from .sympy_bridge import from_sympy
        return from_sympy
    raise AttributeError(f"module 'onnxsym' has no attribute {name!r}")
