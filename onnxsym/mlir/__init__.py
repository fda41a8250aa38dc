"""MLIR export: an ONNX model as MLIR text, its symbolic shapes as ``symbol`` dialect ops.

    text = onnxsym.to_mlir("model.onnx")                       # propagate-symbol form
    text = onnxsym.to_mlir(result, style="unfolded", generic=True)
"""

from __future__ import annotations

import os
from typing import Optional

from .build import build
from .encoding import encoding_to_symbol
from .printer import STYLES, Printer

__all__ = ["to_mlir", "encoding_to_symbol", "STYLES"]


def to_mlir(model_or_result, style: str = "propagate", generic: bool = False, weights: bool = False,
            names: bool = False, base_dir: Optional[str] = None) -> str:
    """MLIR text for a model (path or ModelProto) or an :class:`onnxsym.Result`.

    ``style``: one of ``propagate`` (default), ``erased``, ``encoding``, ``unfolded``;
    ``generic``: MLIR's generic op form (parses with ``--allow-unregistered-dialect``);
    ``weights``: embed initializer contents as ``dense_resource`` blobs (elided otherwise);
    ``names``: symbols named as in the model (``@batch``) instead of ``@S0, @S1, ...``.
    """
    from ..api import Result, infer

    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; one of {', '.join(STYLES)}")
    if isinstance(model_or_result, Result):
        result = model_or_result
    else:
        if base_dir is None and isinstance(model_or_result, (str, os.PathLike)):
            base_dir = os.path.dirname(os.path.abspath(os.fspath(model_or_result)))
        result = infer(model_or_result)
    prog = build(result, user_names=names, weights=weights, base_dir=base_dir)
    return Printer(prog, style, generic).run()
