"""``onnxsym show``: the values of a model with their shapes, the symbol table
with ranges, and the assumptions inference recorded, as lines of text.

Dims are styled by kind (static, over input symbols, unresolved) through a
``style(text, kind)`` callable, so the caller decides about colours."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, replace

import click
import onnx

from .. import dims
from ..api import Result
from ..facts.edges import grouped
from ..facts.fact import Origin
from ..inference.symbols import under_ranges_of_result
from ..inference.values import Optional_, Tensor
from ..inference.values import Sequence as SeqValue
from ..output.numbers import bound_text
from .explain import Lineage
from .table import fit_text, render

Style = Callable[[str, str], str]  # (text, kind) -> text; kinds: static, symbolic, unresolved, head, dim


def plain(text: str, _kind: str) -> str:
    return text


@dataclass(frozen=True)
class ShowFilter:
    name: str | None = None  # a substring of the value name, or a glob
    ops: tuple[str, ...] = ()  # producer op types (case-insensitive)
    outputs: bool = False
    unresolved: bool = False
    constants: bool = False  # also Constant nodes' outputs (--all); an --op Constant asks for them too

    @property
    def narrows(self) -> bool:
        """Whether the filter keeps only some values (the sections then keep only what is theirs)."""
        return bool(self.name or self.ops or self.outputs or self.unresolved)

    def keeps_op(self, op: str) -> bool:
        ops = {o.lower() for o in self.ops}
        if ops:
            return op.lower() in ops
        return self.constants or op != "Constant"


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


@dataclass
class Shown:
    """What the filter keeps of one graph: rows of (value, op, [node,] type), the value names,
    the labels of the nodes that make them, and how many Constant outputs it hid."""

    rows: list[list[str]]
    values: list[str]
    nodes: set[str]
    hidden_constants: int = 0


def _kept(flt: ShowFilter, name: str, op: str, outputs: set[str]) -> bool:
    return (not flt.outputs or name in outputs) and flt.keeps_op(op) and _matches(name, flt.name)


@under_ranges_of_result
def shown_values(result: Result, flt: ShowFilter, style: Style = plain, verbose: bool = False) -> Shown:
    """The main graph's values the filter keeps, as table rows."""
    lineage = Lineage(result)
    outputs = set(lineage.outputs)
    shown = Shown([], [], set())
    for name in value_names(result):
        node, op = lineage.producer_of(name)
        if not _kept(flt, name, op, outputs):
            # a Constant output the other filters keep: hidden, and counted
            shown.hidden_constants += op == "Constant" and _kept(replace(flt, constants=True), name, op, outputs)
            continue
        text, bad = shape_text(declared_value(result, name) if node is None else result.values.get(name),
                               result.fresh, style)
        if flt.unresolved and not bad:
            continue
        label = op if node is not None else f"({op})"
        shown.rows.append([name, label] + ([node or ""] if verbose else []) + [text])
        shown.values.append(name)
        if node is not None:
            shown.nodes.add(node)
    return shown


def declared_value(result: Result, name: str):
    """The graph input ``name`` as its model declares it: a symbol the domain derives (``batch``
    pinned to 1, ``total`` tied to ``past + seq``) keeps its name, which :func:`pinned_lines`
    explains; a user's --bind shows its number."""
    v = result.values.get(name)
    derived = result.derived_symbols()
    if not isinstance(v, Tensor) or v.shape is None or not derived:
        return v
    at = {origin: sym for sym, origin in result.symbols.origin.items() if sym in derived}
    shape = tuple(dims.expr_of(result.symbols.symbols[at[f"{name}[{a}]"]]) if f"{name}[{a}]" in at else d
                  for a, d in enumerate(v.shape))
    return replace(v, shape=shape)


def pinned_lines(result: Result, inputs: list[str]) -> list[str]:
    """One line per derived symbol of the graph inputs ``inputs``: what the domain fixes it to, and
    the node that does (``pinned: batch = 1 because Reshape 'rs': ...``)."""
    from ..domain.pins import pins_of

    derived = result.derived_symbols()
    if not derived:
        return []
    wanted = {sym for sym, origin in result.symbols.origin.items()
              if sym in derived and origin.rpartition("[")[0] in inputs}
    pins = {p.symbol: p for p in pins_of(result)}
    out = []
    for sym in sorted(wanted):
        p = pins.get(sym)
        where = f" because {p.op_type} '{p.node}': {p.reason}" if p is not None else " (the domain's equality)"
        word = "pinned" if p is not None else "derived"
        out.append(f"{word}: {sym} = {derived[sym]}{where}; the declared input keeps its name")
    return out


@under_ranges_of_result
def subgraph_tables(result: Result, flt: ShowFilter, style: Style = plain, verbose: bool = False,
                    width: int | None = None) -> list[str]:
    """A table per subgraph inferred (If branches, Loop and Scan bodies), under a heading that
    names the graph and the guards under which it runs."""
    out: list[str] = []
    for graph, guards, own in result.subgraph_runs:
        producer = {o: n for n in graph.node for o in n.output if o}
        rows = []
        for name, v in own.items():
            n = producer.get(name)
            op = n.op_type if n is not None else "graph input"
            if not _kept(flt, name, op, {o.name for o in graph.output}):
                continue
            text, bad = shape_text(v, result.fresh, style)
            if flt.unresolved and not bad:
                continue
            rows.append([name, op if n is not None else f"({op})"] + ([n.name if n is not None else ""] if verbose else [])
                        + [text])
        if rows:
            when = " and ".join(g.text for g in guards)
            out += ["", style(f"subgraph {graph.name or '(unnamed)'}" + (f" (runs where {when})" if when else ""), "head")]
            out += render(None, rows, width)
    return out


def _bound(n: int) -> str:
    return bound_text(n)


@under_ranges_of_result
def symbol_lines(result: Result, style: Style = plain, only: set[str] | None = None) -> list[str]:
    """Each symbol (of ``only``, if given) with its range and where it comes from (a graph
    input, or why it is fresh)."""
    rows = []
    ranges = result.symbol_ranges()  # narrowed by unification, what the nodes need and the domain
    bounds = result.bounds()
    for name in sorted(result.symbols.symbols):
        if only is not None and name not in only:
            continue
        p = result.fresh.get(name)
        origin = f"fresh: {p.op_type} '{p.node}': {p.reason}" if p else result.symbols.origin.get(name, "")
        if name in bounds and not isinstance(bounds[name], int):  # (a number: the range says it)
            origin += f" (at most {bounds[name]})"
        lo, hi = ranges[name]
        rows.append([style(name, "unresolved" if p else "symbolic"), f"[{_bound(lo)}, {_bound(hi)}]", origin])
    if result.symbols.bound and only is None:
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
def assumption_lines(result: Result, style: Style = plain, nodes: set[str] | None = None) -> list[str]:
    """The relations inference had to assume, each with the node that required it (of
    ``nodes``, if given): the float32 bounds folded to one line per symbol, as the domain
    states them."""
    kept = [a for a in result.assumptions if nodes is None or a.node in nodes]
    if not kept:
        return []
    out = [style("assumptions", "head")]
    bounds = [a for a in kept if a.origin is Origin.EXACT_WITHIN]
    for a in kept:
        if a.origin not in (Origin.DEFAULT_RANGE, Origin.EXACT_WITHIN):
            out.append(f"  {a}   {a.op_type} '{a.node}': {a.reason}")
    if bounds:
        out += [f"  {line}" for line in folded_bounds(result, bounds)]
    # the default lower bounds relied on: one line per symbol, not per node
    out += [f"  assumed {line}" for line in grouped([a for a in kept if a.origin is Origin.DEFAULT_RANGE])]
    return out


def folded_bounds(result: Result, bounds) -> list[str]:
    """The float32 exactness bounds, one line per input symbol: the tightest size it gives
    (the domain's range condition), and how many nodes need it."""
    domain = result.domain()
    nodes = {b.node for b in bounds}
    out, stated = [], set()
    for c in domain.conditions:
        if c.assumed and any(s.node in nodes for s in c.sources):
            n = sum(s.node in nodes for s in c.sources)
            stated |= {s.node for s in c.sources}
            out.append(f"assumed {c.text}   {c.sources[0]}" + (f" (and {n - 1} more)" if n > 1 else ""))
    # (a bound the domain does not state, over a fresh symbol: as it was recorded)
    out += [f"{b}   {b.op_type} '{b.node}': {b.reason}" for b in bounds if b.node not in stated]
    return out


def _places(places, limit: int = 3) -> str:
    text = ", ".join(f"{v}[{a}]" for v, a in places[:limit])
    return text + (f" (+{len(places) - limit} more)" if len(places) > limit else "")


@under_ranges_of_result
def alias_lines(result: Result, style: Style = plain, values: set[str] | None = None) -> list[str]:
    """Each dim name the model declares on produced values (at one of ``values``, if given),
    with the dim it names and where."""
    items = sorted((n, d) for n, d in result.aliases.items()
                   if values is None or any(v in values for v, _ in result.alias_places(n)))
    if not items:
        return []
    widths = [max(len(name) for name, _ in items), max(len(str(d)) for _, d in items)]
    out = [style("aliases (dim names the model declares on produced values)", "head")]
    for name, d in items:
        text = style(str(d), _dim_kind(d, result.fresh)) + " " * (widths[1] - len(str(d)))
        out.append(f"  {name.ljust(widths[0])} = {text}  {_places(result.alias_places(name))}")
    return out


@under_ranges_of_result
def stale_lines(result: Result, style: Style = plain, values: set[str] | None = None) -> list[str]:
    """The produced values (of ``values``, if given) whose declared shape the graph contradicts."""
    stale = [s for s in result.stale if values is None or s.value in values]
    if not stale:
        return []
    return [style("stale declarations (the computed shape is written)", "head")] + \
        [f"  {s.describe()}" for s in stale]


@under_ranges_of_result
def _symbols_of(result: Result, names: list[str]) -> set[str]:
    found: set[str] = set()
    for n in names:
        v = result.values.get(n)
        for d in (v.shape or ()) if isinstance(v, Tensor) else ():
            found |= {s.name for s in dims.free_symbols(d)} if not isinstance(d, int) else set()
    return found


@dataclass(frozen=True)
class Layout:
    """How much ``show`` prints: ``quiet`` the rows alone; ``verbose`` the node column and the
    trailing sections (symbols, aliases, assumptions, stale declarations, warnings);
    ``subgraphs`` a table per subgraph; ``width`` the columns' limit (None: none)."""

    quiet: bool = False
    verbose: bool = False
    subgraphs: bool = False
    width: int | None = None


def show_lines(result: Result, flt: ShowFilter, style: Style = plain, verbose: bool = False,
               layout: Layout | None = None) -> list[str]:
    layout = layout or Layout(verbose=verbose)
    verbose = layout.verbose
    shown = shown_values(result, flt, style, verbose)
    header = ["value", "op"] + (["node"] if verbose else []) + ["type"]
    if layout.quiet:
        out = render(None, shown.rows, layout.width)
        return out + (subgraph_tables(result, flt, style, verbose, layout.width) if layout.subgraphs else [])
    head = lambda text: style(text, "head")  # noqa: E731
    out = render(header, shown.rows, layout.width, head_style=head) if shown.rows else ["(no value matches)"]
    out += [fit for line in pinned_lines(result, shown.values) for fit in fit_text(line, layout.width)]
    if layout.subgraphs:
        out += subgraph_tables(result, flt, style, verbose, layout.width)
    st = result.stats()
    hidden = f"; {shown.hidden_constants} Constant outputs hidden (--all shows them)" if shown.hidden_constants else ""
    out += fit_text(f"{len(shown.rows)} of {len(value_names(result))} values shown{hidden}; dims: "
                    f"{st['static_dims']} static, {st['symbolic_dims']} symbolic, {st['unresolved_dims']} unresolved",
                    layout.width)
    if not verbose:
        return out
    result = result.within_domain()  # the symbols' ranges as the domain narrows them
    values = set(shown.values) if flt.narrows else None
    nodes = shown.nodes if flt.narrows else None
    symbols = _symbols_of(result, shown.values) if flt.narrows else None
    for section in (symbol_lines(result, style, symbols), alias_lines(result, style, values),
                    assumption_lines(result, style, nodes), stale_lines(result, style, values)):
        if section:
            out += [""] + section
    warnings = [w for w in result.warnings if nodes is None or any(f"'{n}'" in w for n in nodes | (values or set()))]
    if warnings:
        out += [""] + [style("warnings", "head")] + [f"  {w}" for w in warnings]
    return out
