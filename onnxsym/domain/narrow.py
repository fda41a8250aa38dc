"""Narrowing an inference result's symbols to the ranges of its domain.

A symbol's range is part of the symbol (``Sym('seq', 1, 64)``), so narrowing
rewrites every dim that mentions it; the algebra then drops what the new range
decides (``min(64, seq)`` is ``seq`` for ``seq <= 64``). Outside the domain the
model does not run, or its shapes are not those expressions: that is what the
domain states.
"""

from __future__ import annotations

from typing import Dict, Tuple

from .. import dims
from ..engine import resolve_value


def narrow(result, ranges: Dict[str, Tuple[int, int]]) -> None:
    """Give ``result``'s symbols the ``ranges`` (an empty range is left alone) and
    rewrite its values and derived symbols over them."""
    table = result.symbols.symbols
    # the symbol a dim mentions: the table's, or the one inference narrowed (same name, derived)
    current = {name: {s} for name, s in table.items()}
    for v in result.derived.values():
        s = dims.as_sym(v)
        if s is not None and s.name in current:
            current[s.name].add(s)
    mapping = {}
    for name, (lo, hi) in ranges.items():
        s = table.get(name)
        if s is not None and lo <= hi and (s.lo, s.hi) != (lo, hi):
            table[name] = dims.Sym(name, lo, hi)
            for old in current[name]:
                mapping[old] = dims.expr_of(table[name])
    if not mapping:
        return
    memo: Dict[object, object] = {}

    def rewrite(d):
        if isinstance(d, int):
            return d
        r = memo.get(d)
        if r is None:
            r = memo[d] = dims.substitute(d, mapping)
        return r

    result.values = {k: resolve_value(v, rewrite) for k, v in result.values.items()}
    result.subgraph_values = {k: resolve_value(v, rewrite) for k, v in result.subgraph_values.items()}
    result.derived = {k: rewrite(v) for k, v in result.derived.items()}
    result._fresh_of.clear()
