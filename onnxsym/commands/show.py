"""``onnxsym show``: the values of a model with their shapes, the symbol table
with ranges, and the assumptions inference recorded, as lines of text.

Dims are styled by kind (static, over input symbols, unresolved) through a
``style(text, kind)`` callable, so the caller decides about colours."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import click
import onnx

from .. import dims
from ..api import Result
from ..facts.edges import grouped
from ..facts.fact import Origin
from ..inference.symbols import under_ranges_of_result
from ..inference.values import Optional_, Tensor
from ..inference.values import Sequence as SeqValue
from .explain import Lineage

Style = Callable[[str, str], str]  # (text, kind) -> text; kinds: static, symbolic, unresolved, head, dim


def plain(text: str, _kind: str) -> str:
    return text


@dataclass(frozen=True)
class ShowFilter:
    name: str | None = None  # a substring of the value name, or a glob
    ops: tuple[str, ...] = ()  # producer op types (case-insensitive)
    outputs: bool = False
    unresolved: bool = False


def _dtype(t: int) -> str:
    if not t:
        return "?"
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(t).name
    except Exception:
        return onnx.TensorProto.DataType.Name(t).lower()


def _dim_kind(d, fresh) -> str:
    if isinstance(d, int):
        return "static"
    return "unresolved" if any(s.name in fresh for s in dims.free_symbols(d)) else "symbolic"


def shape_text(v, fresh, style: Style = plain) -> tuple[str, bool]:
    """The value's type as text, ``float32[batch, seq, 64]``, and whether any of it is unresolved."""
    if isinstance(v, SeqValue):
        inner, bad = shape_text(v.elem, fresh, style) if v.elem is not None else ("?", True)
        return f"seq({inner})", bad
    if isinstance(v, Optional_):
        inner, bad = shape_text(v.elem, fresh, style) if v.elem is not None else ("?", True)
        return f"optional({inner})", bad
    if not isinstance(v, Tensor):
        return "?", True
    if v.shape is None:
        return f"{_dtype(v.dtype)}[{style('rank unknown', 'unresolved')}]", True
    kinds = [_dim_kind(d, fresh) for d in v.shape]
    body = ", ".join(style(str(d), k) for d, k in zip(v.shape, kinds))
    return f"{_dtype(v.dtype)}[{body}]", "unresolved" in kinds


def _matches(name: str, pattern: str | None) -> bool:
    if not pattern:
        return True
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


def value_names(result: Result) -> list[str]:
    """The graph inputs that are not weights, then every value a node produces."""
    inits = {t.name for t in result.model.graph.initializer}
    return [i.name for i in result.model.graph.input if i.name not in inits] + list(result.produced)


@under_ranges_of_result
def value_rows(result: Result, flt: ShowFilter, style: Style = plain, verbose: bool = False) -> list[list[str]]:
    """Rows of (value, op, [node,] type and shape) for the values the filter keeps."""
    lineage = Lineage(result)
    outputs = set(lineage.outputs)
    names = value_names(result)
    ops = {o.lower() for o in flt.ops}
    rows = []
    for name in names:
        node, op = lineage.producer_of(name)
        if flt.outputs and name not in outputs:
            continue
        if ops and op.lower() not in ops:
            continue
        if not _matches(name, flt.name):
            continue
        text, bad = shape_text(result.values.get(name), result.fresh, style)
        if flt.unresolved and not bad:
            continue
        label = op if node is not None else f"({op})"
        rows.append([name, label] + ([node or ""] if verbose else []) + [text])
    return rows


def table(header: Sequence[str], rows: list[list[str]], style: Style = plain) -> list[str]:
    """Left-aligned columns; widths ignore the styling escapes of the last column."""
    widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(len(header) - 1)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)) + "  " + cells[-1]  # noqa: E731
    return [style(line(list(header)), "head")] + [line(r) for r in rows]


def _bound(n: int) -> str:
    return "2**63-1" if n == dims.INT64_MAX else str(n)


@under_ranges_of_result
def symbol_lines(result: Result, style: Style = plain) -> list[str]:
    """Each symbol with its range and where it comes from (a graph input, or why it is fresh)."""
    rows = []
    ranges = result.symbol_ranges()  # narrowed by unification and by what the nodes need
    for name in sorted(result.symbols.symbols):
        p = result.fresh.get(name)
        origin = f"fresh: {p.op_type} '{p.node}': {p.reason}" if p else result.symbols.origin.get(name, "")
        lo, hi = ranges[name]
        rows.append([style(name, "unresolved" if p else "symbolic"), f"[{_bound(lo)}, {_bound(hi)}]", origin])
    if result.symbols.bound:
        rows += [[name, f"= {v}", "bound by --bind"] for name, v in sorted(result.symbols.bound.items())]
    if not rows:
        return []
    widths = [max(len(click.unstyle(r[i])) for r in rows) for i in range(2)]
    out = [style("symbols", "head")]
    for r in rows:
        pad = widths[0] - len(click.unstyle(r[0]))
        out.append(f"  {r[0]}{' ' * pad}  {r[1].ljust(widths[1])}  {r[2]}")
    return out


@under_ranges_of_result
def assumption_lines(result: Result, style: Style = plain) -> list[str]:
    """The relations inference had to assume, each with the node that required it."""
    if not result.assumptions:
        return []
    out = [style("assumptions", "head")]
    for a in result.assumptions:
        if a.origin is not Origin.DEFAULT_RANGE:
            out.append(f"  {a}   {a.op_type} '{a.node}': {a.reason}")
    # the default lower bounds relied on: one line per symbol, not per node
    out += [f"  assumed {line}" for line in grouped(result.positive_assumptions())]
    return out


def _places(places, limit: int = 3) -> str:
    text = ", ".join(f"{v}[{a}]" for v, a in places[:limit])
    return text + (f" (+{len(places) - limit} more)" if len(places) > limit else "")


@under_ranges_of_result
def alias_lines(result: Result, style: Style = plain) -> list[str]:
    """Each dim name the model declares on produced values, with the dim it names and where."""
    if not result.aliases:
        return []
    items = sorted(result.aliases.items())
    widths = [max(len(name) for name, _ in items), max(len(str(d)) for _, d in items)]
    out = [style("aliases (dim names the model declares on produced values)", "head")]
    for name, d in items:
        text = style(str(d), _dim_kind(d, result.fresh)) + " " * (widths[1] - len(str(d)))
        out.append(f"  {name.ljust(widths[0])} = {text}  {_places(result.alias_places(name))}")
    return out


@under_ranges_of_result
def stale_lines(result: Result, style: Style = plain) -> list[str]:
    """The produced values whose declared shape the graph contradicts."""
    if not result.stale:
        return []
    return [style("stale declarations (the computed shape is written)", "head")] + \
        [f"  {s.describe()}" for s in result.stale]


def show_lines(result: Result, flt: ShowFilter, style: Style = plain, verbose: bool = False) -> list[str]:
    rows = value_rows(result, flt, style, verbose)
    header = ["value", "op"] + (["node"] if verbose else []) + ["type"]
    out = table(header, rows, style) if rows else ["(no value matches)"]
    st = result.stats()
    out.append(f"{len(rows)} of {len(value_names(result))} values shown; dims: "
               f"{st['static_dims']} static, {st['symbolic_dims']} symbolic, {st['unresolved_dims']} unresolved")
    for section in (symbol_lines(result, style), alias_lines(result, style), assumption_lines(result, style),
                    stale_lines(result, style)):
        if section:
            out += [""] + section
    if verbose and result.warnings:
        out += [""] + [style("warnings", "head")] + [f"  {w}" for w in result.warnings]
    return out
