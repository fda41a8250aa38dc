"""MLIR export: an ONNX model as MLIR text, its symbolic shapes as ``symbol`` dialect ops.

    text = onnxsym.to_mlir("model.onnx")                       # propagate-symbol form
    text = onnxsym.to_mlir(result, style="unfolded", generic=True)
    text = onnxsym.to_mlir("model.onnx", dialect="torch", weights=True)  # for iree-compile
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import onnx

from .build import build
from .encoding import encoding_to_symbol
from .printer import STYLES, Printer
from .torch import TorchPrinter, torch_resources

if TYPE_CHECKING:
    from ..inference.result import Result

__all__ = ["to_mlir", "encoding_to_symbol", "STYLES", "DIALECTS"]

DIALECTS = ("symbol", "torch")


def to_mlir(model_or_result: str | onnx.ModelProto | Result, style: str = "propagate", generic: bool = False,
            weights: bool = False, names: bool = False, base_dir: str | None = None, dialect: str = "symbol") -> str:
    """MLIR text for a model (path or ModelProto) or an :class:`onnxsym.Result`.

    ``style``: one of ``propagate`` (default), ``erased``, ``encoding``, ``unfolded``;
    ``generic``: MLIR's generic op form (parses with ``--allow-unregistered-dialect``);
    ``weights``: embed initializer contents as ``dense_resource`` blobs (elided otherwise);
    ``names``: symbols named as in the model (``@batch``) instead of ``@S0, @S1, ...``;
    ``dialect``: ``symbol`` (default) or ``torch``, the form torch-mlir's ONNX importer writes
    (``torch.operator "onnx.*"``, ``torch.symbolic_int``), which IREE compiles; it has one
    style and no generic form. Dims that hold only for given input data (``values``, ``--value``)
    are not exported: what is printed holds for every value the inputs may be fed.
    """
    from ..api import for_every_value, infer
    from ..inference.result import Result

    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; one of {', '.join(STYLES)}")
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; one of {', '.join(DIALECTS)}")
    if dialect == "torch" and (style != "propagate" or generic):
        raise ValueError("the torch dialect has one form: no style, no generic form")
    if isinstance(model_or_result, Result):
        result = model_or_result
    else:
        if base_dir is None and isinstance(model_or_result, (str, os.PathLike)):
            base_dir = os.path.dirname(os.path.abspath(os.fspath(model_or_result)))
        # its domain's ranges narrow the symbols' min_val/max_val, as annotate's export
        result = infer(model_or_result).within_domain()
    # (the dims that hold for given input data only are not exported: compiled in, they would
    # make the module compute another shape for other data, as a written model would)
    result = for_every_value(result)
    with result.env:  # the result's ranges: min_val/max_val, and what the printer derives
        if dialect == "torch":
            prog = build(result, user_names=names)
            return TorchPrinter(prog, result.model, torch_resources(weights, base_dir)).run()
        prog = build(result, user_names=names, weights=weights, base_dir=base_dir)
        return Printer(prog, style, generic).run()
