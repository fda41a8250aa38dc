"""Unique, valid MLIR SSA names made from ONNX value names."""

from __future__ import annotations

import re

_BAD = re.compile(r"[^A-Za-z0-9_$.-]+")


class Namer:
    """Hands out ``%name`` once per function; ONNX names are kept where MLIR allows."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def fresh(self, hint: str) -> str:
        base = _BAD.sub("_", hint).strip("_") or "v"
        if base[0].isdigit() or base[0] in "$.-":
            base = "v" + base
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return "%" + name
