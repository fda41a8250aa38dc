"""The MLIR export's file side, for the command line: read, convert, write atomically."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ModelLoadError, OutputError
from ..output.atomic import check_target, replaces_a_file, write_output
from ..output.paths import check_outputs

if TYPE_CHECKING:
    from ..inference.result import Result

__all__ = ["OutputError", "write_text", "default_output", "convert"]


def write_text(path: str, text: str, replace: bool = True) -> None:
    """Write to ``path`` as :func:`onnxsym.output.atomic.write_output` does: a regular file through
    a temporary one renamed into place (never half-written), a pipe or device written
    into, ``-`` standard output."""
    write_output(path, text.encode("utf-8"), replace)


def default_output(src: str) -> str:
    if src.endswith(".mlir"):
        return src[:-5] + ".symbol.mlir"
    return (src[:-5] if src.endswith(".onnx") else src) + ".mlir"


def convert(src: str, out: str | None, style: str = "propagate", generic: bool = False,
            weights: bool = False, names: bool = False, force: bool = False, dialect: str = "symbol",
            result: Result | None = None) -> str:
    """Export ``src`` (an ONNX model; ``result``, its inference, when the caller made one with
    binds, ranges or assumptions) to ``out``; or, for a ``.mlir`` file in onnxsym's encoding form,
    write its propagate-symbol form (encoding-to-symbol). Returns ``out``."""
    from . import encoding_to_symbol, to_mlir

    if out is not None:
        check_target(out)  # (an empty -o is no request for the default)
    out = out or default_output(src)
    check_outputs([("the output", out)], [("the input", src)])
    check_target(out)
    if not force and replaces_a_file(out):
        raise OutputError(f"{out} exists; use --force to replace it")
    if src.endswith(".mlir"):
        try:
            with open(src, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise ModelLoadError(f"{src}: cannot read: {exc.strerror}") from None
        write_text(out, encoding_to_symbol(text), force)
    else:
        source = src if result is None else result
        write_text(out, to_mlir(source, style=style, generic=generic, weights=weights, names=names, dialect=dialect),
                   force)
    return out
