"""The printers' own check that the text is valid SSA: every use is dominated by its definition.

A printer defines each value as it writes it and asks, for each operand it writes, whether
that value is visible there: defined earlier in the same block or in a block around it
(a value defined inside a region is not visible after the region's op, nor in its sibling
regions). A text that fails is never written: the failure is a bug of onnxsym, reported as
an internal error naming the value, where MLIR tools would reject the text
("operand #0 does not dominate this use").
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator


class InvalidIR(RuntimeError):
    """onnxsym was about to write MLIR that is not valid (a bug of onnxsym, not of the model)."""


def _base(ref: str) -> str:
    return ref.split("#", 1)[0]  # %x#1, one result of the op whose results are %x


class Dominance:
    def __init__(self) -> None:
        self._blocks: list[set[str]] = [set()]
        self._ever: set[str] = set()  # the printers name every value once per function

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        """Values defined while in it are visible only in it."""
        self._blocks.append(set())
        try:
            yield
        finally:
            self._blocks.pop()

    def visible(self, ref: str) -> bool:
        base = _base(ref)
        return any(base in b for b in self._blocks)

    def define(self, *refs: str) -> None:
        """The values one op (or a block's arguments) defines; an op's results %x#0, %x#1 are %x."""
        for base in dict.fromkeys(_base(r) for r in refs):
            if base in self._ever:
                raise InvalidIR(f"MLIR export: {base} is defined twice")
            self._ever.add(base)
            self._blocks[-1].add(base)

    def use(self, refs: Iterable[str], where: str) -> None:
        for ref in refs:
            if not self.visible(ref):
                raise InvalidIR(f"MLIR export: {where} uses {ref} where it is not defined "
                                f"(its definition does not dominate the use)")
