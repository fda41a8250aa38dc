"""The MLIR export's file side, for the command line: read, convert, write atomically."""

from __future__ import annotations

import os
from typing import Optional

from ..atomic import write_atomically
from ..errors import ModelLoadError, OnnxsymError
from ..paths import check_outputs


class OutputError(OnnxsymError):
    """The output file cannot be written."""


def write_text(path: str, text: str) -> None:
    """Write to a temporary file beside ``path``, then rename: never a half-written file."""
    try:
        write_atomically(path, text.encode("utf-8"))
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror}") from None


def default_output(src: str) -> str:
    if src.endswith(".mlir"):
        return src[:-5] + ".symbol.mlir"
    return (src[:-5] if src.endswith(".onnx") else src) + ".mlir"


def convert(src: str, out: Optional[str], style: str = "propagate", generic: bool = False,
            weights: bool = False, names: bool = False, force: bool = False, dialect: str = "symbol") -> str:
    """Export ``src`` (an ONNX model) to ``out``; or, for a ``.mlir`` file in onnxsym's
    encoding form, write its propagate-symbol form (encoding-to-symbol). Returns ``out``."""
    from . import encoding_to_symbol, to_mlir

    out = out or default_output(src)
    check_outputs([("the output", out)], [("the input", src)])
    if not force and os.path.exists(out):
        raise OutputError(f"{out} exists; use --force to replace it")
    if src.endswith(".mlir"):
        try:
            with open(src, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise ModelLoadError(f"{src}: cannot read: {exc.strerror}") from None
        write_text(out, encoding_to_symbol(text))
    else:
        write_text(out, to_mlir(src, style=style, generic=generic, weights=weights, names=names, dialect=dialect))
    return out
