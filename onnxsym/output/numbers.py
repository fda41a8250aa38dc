"""Numbers as a person reads them: sizes in binary units (``13.8 MiB``), operation counts in
decimal ones (``4.76 GFLOPs``), a range's bound (``2**63-1`` for int64's top: no bound), and a
size a person types (``24GiB``, ``1 GB``) as bytes."""

from __future__ import annotations

import re
from fractions import Fraction

INT64_MAX = 2**63 - 1


def bound_text(n: int) -> str:
    """A range bound: int64's top, which means "no bound", as ``2**63-1``; others as they are."""
    return "2**63-1" if n == INT64_MAX else str(n)


def range_text(lo: int, hi: int) -> str:
    return f"[{bound_text(lo)}, {bound_text(hi)}]"


def _scaled(x: int, units: tuple[tuple[str, int], ...], unit: str) -> str:
    """``x`` in the largest unit it reaches, three significant digits (999999 is 1.00 M)."""
    for name, size in units:
        if abs(x) >= size or abs(float(f"{x / size:.3g}")) >= 1:
            q = x / size
            return (f"{q:#.3g}".rstrip(".") if abs(q) < 999.5 else f"{q:.0f}") + f" {name}"
    return f"{x} {unit}"


_BINARY = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
_DECIMAL = (("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("K", 10**3))


def size_text(n: int) -> str:
    """Bytes in binary units, three significant digits: ``13.8 MiB``; below 1 KiB, ``512 B``."""
    return _scaled(n, _BINARY, "B")


def flops_text(n: int) -> str:
    """An operation count in decimal units, three significant digits: ``4.76 GFLOPs``."""
    return _scaled(n, tuple((p + "FLOPs", s) for p, s in _DECIMAL), "FLOPs")


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
SIZE_HELP = "expected a size such as 24GiB, '80 GB' or 1000000 (bytes)"


def parse_size(text: str) -> int | None:
    """``24GiB``, ``24 GB``, ``1.5GiB`` or a number of bytes, as bytes (rounded down); None
    when it is no size."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).upper() not in _UNITS:
        return None
    return int(Fraction(m.group(1)) * _UNITS[m.group(2).upper()])
