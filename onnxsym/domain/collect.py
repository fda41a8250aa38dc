"""The raw conditions a model's nodes need, with the node and why.

Two sources: the constraints inference recorded (MatMul inner dims, Concat
axes, Reshape element counts, broadcasts of dims proven not 1, float32 bounds),
and the conditions each op registered to be checked on its inferred inputs
(:mod:`.needs`: broadcasts of dims that may be 1, index bounds, Split sizes, ...).
"""

from __future__ import annotations

import operator
from collections import ChainMap
from collections.abc import Iterator, Sequence
from dataclasses import replace
from fractions import Fraction

import onnx

from .. import dims, registry
from ..dims import Dim
from ..facts.fact import Guard, Origin, Rel
from ..inference.values import Tensor
from . import forms, scan_view
from .elements import Elements
from .needs import Raw, Site
from .replay import Replay

_FIELDS = operator.attrgetter("name", "op_type", "domain")
# Whether a repeat of a node replays its checked raws (:mod:`.replay`); off, every node is checked
# (the differential test compares the two).
REPLAY = True


def raw_conditions(result) -> list[Raw]:
    """Every raw condition of ``result``, in node order (recorded ones before a node's own)."""
    graph = result.model.graph
    fields = list(map(_FIELDS, graph.node))  # (each protobuf field read once: a read costs)
    order = {name or f"{op_type}_{i}": i for i, (name, op_type, _) in enumerate(fields)}  # (as node_label)
    resolve = (lambda d: dims.substitute(d, result.derived)) if result.derived else (lambda d: d)
    # what a condition inference narrowed the ranges by is stated over the ranges before it
    # (every symbol solved for another symbol, an expression or a number is eliminated; only one
    # narrowed under its own name is kept: a condition over an eliminated one would be dropped)
    eliminated = {s: v for s, v in result.derived.items() if (a := dims.as_sym(v)) is None or a.name != s.name}
    out = list(_recorded(result, order, resolve, lambda d: dims.substitute(d, eliminated)))
    out += list(_from_nodes(result, graph, fields=fields))
    out += list(_from_subgraphs(result, len(order), resolve))
    out += list(scan_view.raws(result, order))
    out.sort(key=lambda r: r.order)  # stable: recorded first within a node
    return out


# ------------------------------------------------------------------ recorded constraints

def _recorded(result, order: dict[str, int], resolve, unnarrowed) -> Iterator[Raw]:
    reshape_ok: dict[str, bool] = {}
    for c in result.constraints:
        if c.origin is Origin.USER:
            continue  # the user's own knowledge, not the model's needs
        at = order.get(c.node, len(order))
        place = replace(c.place, when=tuple(_resolved(g, resolve) for g in c.when))
        if c.rel is Rel.GE and c.origin is not Origin.DEFAULT_RANGE:
            # a node runs only when lhs >= rhs (a Conv's input at least its kernel), stated over
            # the ranges before it narrowed them
            yield Raw(replace(c, lhs=unnarrowed(c.lhs), place=place, reason=f"{c.reason}: {c}"), at,
                      states_condition=True)
            continue
        if c.rel is Rel.EQ and c.op_type == "Reshape" and c.node in order:
            if c.node not in reshape_ok:
                reshape_ok[c.node] = _reshape_holds(result, result.model.graph.node[order[c.node]], resolve)
            if reshape_ok[c.node]:
                continue  # proven factor by factor: holds for every size
        yield Raw(replace(c, lhs=resolve(c.lhs), rhs=resolve(c.rhs), place=place), at)


def _resolved(g: Guard, resolve) -> Guard:
    """``g`` with its relation over the representatives (symbols solved after it was made)."""
    return g if g.relation is None else replace(g, relation=g.relation.map(resolve))


def _reshape_holds(result, n: onnx.NodeProto, resolve) -> bool:
    """Whether a Reshape's element counts provably agree for every size: after cancelling
    equal dims, the rest split into groups over disjoint symbols, each group's product a
    constant multiple of the other side's, and the constants agree."""
    x, y = result.values.get(n.input[0]), result.values.get(n.output[0])
    if not (isinstance(x, Tensor) and isinstance(y, Tensor)) or x.shape is None or y.shape is None:
        return False
    ins, outs = [resolve(d) for d in x.shape], [resolve(d) for d in y.shape]
    for d in list(ins):
        if not isinstance(d, int) and d in outs:
            ins.remove(d)
            outs.remove(d)
    const = Fraction(_prod(d for d in ins if isinstance(d, int)), _prod(d for d in outs if isinstance(d, int)) or 1)
    ins, outs = [d for d in ins if not isinstance(d, int)], [d for d in outs if not isinstance(d, int)]
    for group in _groups(ins + outs):
        gi = _product(d for d in ins if dims.free_symbols(d) & group)
        go = _product(d for d in outs if dims.free_symbols(d) & group)
        ratio = _ratio(gi, go, group)
        if ratio is None:
            return False
        const *= ratio
    return const == 1


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _product(ds) -> Dim:
    out: Dim = 1
    for d in ds:
        out = dims.mul(out, d)
    return out


def _groups(ds: Sequence[Dim]) -> list[frozenset]:
    """The symbols of ``ds`` in classes that share a dim."""
    groups: list[frozenset] = []
    for d in ds:
        s = dims.free_symbols(d)
        joined = [g for g in groups if g & s]
        for g in joined:
            groups.remove(g)
            s = s | g
        groups.append(frozenset(s))
    return sorted(groups, key=lambda g: sorted(x.name for x in g))


def _ratio(a: Dim, b: Dim, group: frozenset) -> Fraction | None:
    """``k`` with ``a == k*b`` for every value of the group's symbols, or None."""
    point = {s: max(s.lo, 1) for s in group}
    try:
        bv, av = dims.evaluate(b, point), dims.evaluate(a, point)
    except ZeroDivisionError:  # (a quotient by a dim that is 0 at that point: no constant read there)
        return None
    if bv == 0:
        return None
    k = Fraction(av, bv)
    diff = dims.sub(dims.mul(k.denominator, a), dims.mul(k.numerator, b))
    if dims.try_eq(diff, 0) is True:
        return k
    if len(group) == 1 and forms.simplify("==", diff, 0) == []:
        return k
    return None


# ------------------------------------------------------------------ what nodes need

def _from_subgraphs(result, at: int, resolve) -> Iterator[Raw]:
    """What the nodes of each subgraph inferred need, under its guards (its values over the
    model's: a subgraph sees the scopes around it). Index bounds come from the subgraph's
    element bounds, and the main graph's for a name it reads from outside."""
    main = Elements(result)
    for graph, when, own in result.subgraph_runs:
        values = ChainMap(own, result.subgraph_values, result.values)
        when = tuple(_resolved(g, resolve) for g in when)
        for raw in _from_nodes(result, graph, values, Elements(result, graph, values, main)):
            c = raw.fact
            fact = replace(c, lhs=resolve(c.lhs), rhs=resolve(c.rhs), place=replace(c.place, when=when))
            yield replace(raw, fact=fact, order=at, alts=tuple((resolve(a), resolve(b)) for a, b in raw.alts))
    # a function body sees its call's inputs only: its own values, no enclosing scope; its nodes
    # are named after the call ("call/node")
    for graph, when, own in result.function_runs:
        when = tuple(_resolved(g, resolve) for g in when)
        for raw in _from_nodes(result, graph, own, Elements(result, graph, own)):
            c = raw.fact
            place = replace(c.place, node=f"{graph.name}/{c.place.node}", when=when)
            fact = replace(c, lhs=resolve(c.lhs), rhs=resolve(c.rhs), place=place)
            yield replace(raw, fact=fact, order=at, alts=tuple((resolve(a), resolve(b)) for a, b in raw.alts))


def _from_nodes(result, graph: onnx.GraphProto, values=None, elements: Elements | None = None,
                fields: list[tuple[str, str, str]] | None = None) -> Iterator[Raw]:
    """What each node's op registered to be checked on its inferred inputs (see :mod:`.needs`);
    ``fields``: each node's (name, op_type, domain), when read already. A node whose checks are
    all replayable is checked once per distinct node (:mod:`.replay`), unless ``REPLAY`` is off."""
    if values is None:
        values, elements = result.values, Elements(result)
    opsets = {registry.canonical_domain(o.domain): o.version for o in result.model.opset_import}
    # per op: its checks, and whether they may be replayed (a graph repeats few ops)
    checks_of: dict[tuple[str, str], tuple[list, bool]] = {}
    replay = Replay(values, elements) if REPLAY else None
    nodes = graph.node
    for i, (name, op_type, domain) in enumerate(map(_FIELDS, nodes) if fields is None else fields):
        op = (domain, op_type)
        known = checks_of.get(op)
        if known is None:
            e = registry.entry(domain, op_type)
            conditions = [c for c in (e.conditions or ()) if c.check is not None] if e is not None else []
            known = checks_of[op] = ([c.check for c in conditions], all(c.replayable for c in conditions))
        checks, replayable = known
        if checks:
            label, opset = name or f"{op_type}_{i}", opsets.get(registry.canonical_domain(domain), 1)
            if replayable and replay is not None:
                yield from replay.raws(nodes[i], i, label, op_type, domain, opset, checks)
                continue
            site = Site(nodes[i], i, label, values, elements, opset)
            for check in checks:
                yield from check(site)
