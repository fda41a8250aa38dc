"""An inference result narrowed to the ranges of its domain: a new result, in an environment of its own.

A symbol's range is its environment's (the result's symbol table owns it). Narrowing makes a
child of that environment with the narrowed ranges, and builds every dim that mentions a
narrowed symbol again there; the algebra then drops what the new range decides
(``min(64, seq)`` is ``seq`` for ``seq <= 64``). The result narrowed from is left as it was:
its dims hold at every size its own ranges allow. Outside the domain the model does not run,
or its shapes are not the narrowed expressions: that is what the domain states.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .. import dims
from ..inference.engine import resolve_value
from ..inference.result import UNCHECKED
from ..inference.values import Value

if TYPE_CHECKING:
    from ..inference.result import Result
    from . import Domain


def narrowed(result: Result, domain: Domain) -> Result:
    """``result`` with its symbols narrowed to ``domain``'s ranges (an empty range is left alone;
    a range never widens) and its values and derived symbols built again over them."""
    table = result.symbols
    ranges: dict[str, tuple[int, int]] = {}
    for name, (lo, hi) in domain.ranges.items():
        if name in table.symbols and lo <= hi:
            olo, ohi = table.range_of(name)
            new = (max(lo, olo), min(hi, ohi))
            if new != (olo, ohi):
                ranges[name] = new
    if not ranges:
        return dataclasses.replace(result, narrowed_to=domain)
    env = table.env.child(ranges)
    symbols = dataclasses.replace(table, env=env, symbols=dict(table.symbols), origin=dict(table.origin),
                                  ranges=dict(table.ranges), bound=dict(table.bound), warnings=list(table.warnings),
                                  assume=list(table.assume), defaulted=set(table.defaulted))
    mapping = {table.symbols[name]: dims.expr_of(table.symbols[name]) for name in ranges}  # each built again
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

    def again(v: Value) -> Value:
        r = resolve_value(v, rewrite)
        assert r is not None  # (None only for None)
        return r

    with env:
        values = {k: again(v) for k, v in result.values.items()}
        subgraph_values = {k: again(v) for k, v in result.subgraph_values.items()}
        scoped_values = {p: {k: again(v) for k, v in vs.items()} for p, vs in result.scoped_values.items()}
        derived = {k: rewrite(v) for k, v in result.derived.items()}
    out = dataclasses.replace(result, symbols=symbols, values=values, subgraph_values=subgraph_values,
                              scoped_values=scoped_values, derived=derived, narrowed_to=domain, fresh_of={})
    if fixed:  # a dim it made static (seq // 128 under seq <= 127) may be refused where it did not run
        out.load_verdict, out.load_checked, out.withheld = UNCHECKED, False, {}
    return out
