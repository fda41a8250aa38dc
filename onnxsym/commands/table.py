"""Tables for the terminal: columns that fit a width.

A cell may carry colour escapes (click.style); widths count what is seen. A cell too
wide for its column goes on a line of its own and the row goes on below it; the last
column wraps at its commas (a shape's dims) onto lines indented to where it starts.
Nothing is cut: every character of every cell is printed."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence

import click


def width_of(text: str) -> int:
    return len(click.unstyle(text))


def terminal_width(stream=None) -> int | None:
    """The width to fit: the terminal's, or ``COLUMNS`` when set; None (no limit) for a
    pipe or a file, so a line per row stays greppable."""
    stream = stream if stream is not None else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if stream.isatty():
        return shutil.get_terminal_size().columns
    return None


def pages(rows: int, stdin=None, stdout=None) -> bool:
    """Whether ``rows`` lines go through a pager: both ends are a terminal (a person reads and
    can answer the pager) and they are more than the terminal shows at once."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    return stdin.isatty() and stdout.isatty() and rows > shutil.get_terminal_size().lines - 1


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * max(0, width - width_of(text))
    return gap + text if right else text + gap


def _wrap_last(text: str, room: int) -> list[str]:
    """``text`` cut after its ``", "`` separators into pieces of at most ``room`` seen
    characters where it can be (a piece with no separator stays whole)."""
    if room <= 0 or width_of(text) <= room:
        return [text]
    parts = text.split(", ")
    lines, cur = [], parts[0]
    for p in parts[1:]:
        if width_of(cur) + 2 + width_of(p) <= room:
            cur += ", " + p
        else:
            lines.append(cur + ",")
            cur = p
    return lines + [cur]


def render(header: Sequence[str] | None, rows: Sequence[Sequence[str]], width: int | None = None,
           right: Sequence[int] = (), gap: int = 2, head_style=lambda t: t) -> list[str]:
    """The lines of a table: ``header`` (styled by ``head_style``) then ``rows``, columns
    left-aligned (``right``: the indices right-aligned), fitted to ``width`` seen characters."""
    all_rows = ([list(header)] if header is not None else []) + [list(r) for r in rows]
    if not all_rows:
        return []
    n = len(all_rows[0])
    widths = [max(width_of(r[i]) for r in all_rows) for i in range(n)]
    if width is not None:
        # a leading column may take a third of the width at most; the last one wraps
        cap = max(12, width // 3)
        for i in range(n - 1):
            if i not in right:
                widths[i] = min(widths[i], cap)
    starts = [sum(widths[:i]) + gap * i for i in range(n)]
    out: list[str] = []
    for k, r in enumerate(all_rows):
        lines = _row(r, widths, starts, width, set(right), gap)
        out += [head_style(line) for line in lines] if k == 0 and header is not None else lines
    return out


def _row(cells: list[str], widths: list[int], starts: list[int], width: int | None, right: set[int],
         gap: int) -> list[str]:
    lines: list[str] = []
    cur = ""  # the line being built, its seen width is width_of(cur)
    n = len(cells)
    for i, c in enumerate(cells):
        at = starts[i]
        if width_of(cur) > at - (gap if i else 0) and i:
            lines.append(cur.rstrip())  # the previous cell ran over: this one starts a new line
            cur = ""
        cur += " " * (at - width_of(cur))
        if i == n - 1:
            if i in right:
                c = _pad(c, widths[i], True)
            room = (width - at) if width is not None else 0
            pieces = _wrap_last(c, room)
            cur += pieces[0]
            lines.append(cur.rstrip())
            lines += [(" " * at + p).rstrip() for p in pieces[1:]]
            return lines
        cur += _pad(c, widths[i], i in right)
    return lines


def fit_text(line: str, width: int | None, sep: str = "; ") -> list[str]:
    """A line of prose cut after its ``sep`` where it is wider than ``width``, the rest indented."""
    if width is None or width_of(line) <= width:
        return [line]
    parts = line.split(sep)
    out, cur = [], parts[0]
    for p in parts[1:]:
        if width_of(cur) + len(sep) + width_of(p) <= width:
            cur += sep + p
        else:
            out.append(cur + sep.rstrip())
            cur = "  " + p
    return out + [cur]
