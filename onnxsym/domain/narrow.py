"""Narrowing an inference result's symbols to the ranges of its domain.

A symbol's range is its environment's (the result's symbol table owns it): narrowing
narrows the range there, then builds every dim that mentions the symbol again; the
algebra then drops what the new range decides (``min(64, seq)`` is ``seq`` for
``seq <= 64``). Outside the domain the model does not run, or its shapes are not
those expressions: that is what the domain states.
"""

from __future__ import annotations

from .. import dims
from ..inference.engine import resolve_value


def narrow(result, ranges: dict[str, tuple[int, int]]) -> bool:
    """Narrow ``result``'s symbols to the ``ranges`` (an empty range is left alone; a range
    never widens) and build its values and derived symbols again over them. Whether a dim
    that was not a number became one (``seq // 128`` under ``seq <= 127``, a pinned ``batch``)."""
    table = result.symbols
    changed = []
    for name, (lo, hi) in ranges.items():
        s = table.symbols.get(name)
        if s is not None and lo <= hi:
            before = table.range_of(name)
            table.narrow(name, lo, hi)
            if table.range_of(name) != before:
                changed.append(s)
    if not changed:
        return False
    mapping = {s: dims.expr_of(s) for s in changed}  # the same symbol: each dim over it built again
    memo: dict[object, object] = {}
    fixed = False

    def rewrite(d):
        nonlocal fixed
        if isinstance(d, int):
            return d
        r = memo.get(d)
        if r is None:
            r = memo[d] = dims.substitute(d, mapping)
            fixed = fixed or isinstance(r, int)
        return r

    with table.env:
        result.values = {k: resolve_value(v, rewrite) for k, v in result.values.items()}
        result.subgraph_values = {k: resolve_value(v, rewrite) for k, v in result.subgraph_values.items()}
        result.scoped_values = {p: {k: resolve_value(v, rewrite) for k, v in vs.items()}
                                for p, vs in result.scoped_values.items()}
        result.derived = {k: rewrite(v) for k, v in result.derived.items()}
    result._fresh_of.clear()
    return fixed
