"""The raw conditions a model's nodes need, with the node and why.

Two sources: the constraints inference recorded (MatMul inner dims, Concat
axes, Reshape element counts, broadcasts of dims proven not 1, float32 bounds,
declared dims), and what the nodes need that inference does not record because
their shapes follow either way: index bounds (Gather, GatherElements, GatherND,
ScatterND, ScatterElements, from the element bounds of their indices), broadcasts
of dims that may be 1 (``min(64, seq)`` against ``seq``), Expand, Split sizes and
Tile repeats.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import onnx

from .. import dims
from ..dims import Dim
from ..facts.fact import Constraint, Guard, Origin, Place, Rel
from ..inference.engine import node_label
from ..inference.values import Tensor
from . import forms
from .elements import Elements


@dataclass(frozen=True)
class Raw:
    """A condition a node needs (``fact``; for a broadcast, any of the equalities ``alts``),
    ``order`` the node's index in the graph. The fact's origin tells whether a node fails
    (or its shape changes) without it, or onnxsym assumes it (``assumed`` says why)."""

    fact: Constraint
    order: int
    alts: tuple[tuple[Dim, Dim], ...] = ()

    @property
    def assumed(self) -> str:
        return self.fact.reason if self.fact.origin.assumed else ""


def needed(rel: Rel, lhs: Dim, rhs: Dim, label: str, op_type: str, reason: str, order: int,
           alts: tuple[tuple[Dim, Dim], ...] = ()) -> Raw:
    """What the main graph's node ``label`` needs to run."""
    return Raw(Constraint(rel, lhs, rhs, Origin.NEEDED, Place(label, op_type), reason), order, alts)


# Ops that broadcast all their inputs (numpy rules).
BROADCASTING = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
    "And", "Or", "Xor", "Where", "Max", "Min", "Sum", "Mean", "BitShift", "BitwiseAnd", "BitwiseOr",
    "BitwiseXor", "PRelu"})


def raw_conditions(result) -> list[Raw]:
    """Every raw condition of ``result``, in node order (recorded ones before a node's own)."""
    graph = result.model.graph
    order = {node_label(n, i): i for i, n in enumerate(graph.node)}
    resolve = (lambda d: dims.substitute(d, result.derived)) if result.derived else (lambda d: d)
    # what a condition inference narrowed the ranges by is stated over the ranges before it
    eliminated = {s: v for s, v in result.derived.items() if (dims.as_sym(v) or s).name != s.name}
    out = list(_recorded(result, order, resolve, lambda d: dims.substitute(d, eliminated)))
    out += list(_from_nodes(result, graph))
    out += list(_from_subgraphs(result, len(order), resolve))
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
            yield Raw(replace(c, lhs=unnarrowed(c.lhs), place=place, reason=f"{c.reason}: {c}"), at)
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
    bv = dims.evaluate(b, point)
    if bv == 0:
        return None
    k = Fraction(dims.evaluate(a, point), bv)
    diff = dims.sub(dims.mul(k.denominator, a), dims.mul(k.numerator, b))
    if dims.try_eq(diff, 0) is True:
        return k
    if len(group) == 1 and forms.simplify("==", diff, 0) == []:
        return k
    return None


# ------------------------------------------------------------------ what nodes need

def _from_subgraphs(result, at: int, resolve) -> Iterator[Raw]:
    """What the nodes of each subgraph inferred need, under its guards (its values over the
    model's: a subgraph sees the scopes around it). Index bounds are left out (their element
    bounds are walked in the main graph only)."""
    for graph, when, own in result.subgraph_runs:
        values = ChainMap(own, result.subgraph_values, result.values)
        when = tuple(_resolved(g, resolve) for g in when)
        for raw in _from_nodes(result, graph, values, None):
            c = raw.fact
            fact = replace(c, lhs=resolve(c.lhs), rhs=resolve(c.rhs), place=replace(c.place, when=when))
            yield Raw(fact, at, tuple((resolve(a), resolve(b)) for a, b in raw.alts))


def _from_nodes(result, graph: onnx.GraphProto, values=None, elements: Elements | None = None) -> Iterator[Raw]:
    if values is None:
        values, elements = result.values, Elements(result)
    for i, n in enumerate(graph.node):
        if n.domain not in ("", "ai.onnx"):
            continue
        op = n.op_type
        if op in BROADCASTING:
            yield from _broadcast(values, n, i, [x for x in n.input if x])
        elif op in ("Gather", "GatherElements", "ScatterElements") and elements is not None:
            yield from _gather(values, elements, n, i)
        elif op in ("GatherND", "ScatterND") and elements is not None:
            yield from _gather_nd(values, elements, n, i)
        elif op == "Expand":
            yield from _expand(values, n, i)
        elif op == "Split":
            yield from _split(values, result, n, i)
        elif op == "Tile":
            yield from _tile(values, n, i)


def _shape(values, name: str):
    v = values.get(name) if name else None
    return v.shape if isinstance(v, Tensor) else None


def _is_one(d: Dim) -> bool:
    return isinstance(d, int) and d == 1


def _pairs(cols: Sequence[Sequence[Dim]]) -> Iterator[tuple[int, Dim, Dim]]:
    """Per axis, the pairs of different dims that broadcasting needs to agree (or one to be 1),
    leaving out pairs of dims both provably not 1: inference recorded those."""
    for axis, col in enumerate(cols):
        distinct = list(dict.fromkeys(d for d in col if not _is_one(d)))
        for j, a in enumerate(distinct):
            for b in distinct[j + 1:]:
                if dims.try_eq(a, 1) is False and dims.try_eq(b, 1) is False:
                    continue
                if dims.try_eq(a, b) is True:
                    continue
                yield axis, a, b


def _broadcast(values, n, i, names) -> Iterator[Raw]:
    shapes = [_shape(values, x) for x in names]
    if len(shapes) < 2 or any(s is None for s in shapes) or all(s == shapes[0] for s in shapes):
        return
    rank = max(len(s) for s in shapes)
    cols = list(zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]))
    label = node_label(n, i)
    for axis, a, b in _pairs(cols):
        yield needed(Rel.EQ, a, b, label, n.op_type, f"broadcast on axis {axis}: {a} against {b}", i,
                     alts=((a, b), (a, 1), (b, 1)))


def _expand(values, n, i) -> Iterator[Raw]:
    x = _shape(values, n.input[0])
    t = values.get(n.input[1]) if len(n.input) > 1 else None
    if x is None or not isinstance(t, Tensor) or t.value is None:
        return
    target = tuple(t.value)
    rank = max(len(x), len(target))
    cols = list(zip((1,) * (rank - len(x)) + tuple(x), (1,) * (rank - len(target)) + target))
    label = node_label(n, i)
    for axis, a, b in _pairs(cols):
        yield needed(Rel.EQ, a, b, label, n.op_type, f"expand axis {axis}: {a} to {b}", i, alts=((a, b), (a, 1), (b, 1)))


def _attr_int(n, name: str, default: int) -> int:
    for a in n.attribute:
        if a.name == name:
            return a.i
    return default


def _index_bounds(label, op, i, what: str, d: Dim, b) -> Iterator[Raw]:
    lo, hi = b
    if dims.try_le(hi, dims.sub(d, 1)) is not True:
        yield needed(Rel.LE, hi, dims.sub(d, 1), label, op, f"index {hi} < {d} {what}", i)
    if dims.try_le(dims.neg(d), lo) is not True:
        yield needed(Rel.LE, dims.neg(d), lo, label, op, f"index {lo} >= -{d} {what}", i)


def _nonempty(shape) -> bool:
    return shape is not None and dims.try_le(1, _product(shape)) is True


def _gather(values, elements: Elements, n, i) -> Iterator[Raw]:
    x, idx_name = _shape(values, n.input[0]), n.input[1] if len(n.input) > 1 else ""
    idx = _shape(values, idx_name)
    if x is None or not x or idx is None:
        return
    axis = _attr_int(n, "axis", 0)
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x):
        return
    b = elements.bounds(idx_name)
    if b is not None:
        what = "rows" if axis == 0 else f"on axis {axis}"
        raws = _index_bounds(node_label(n, i), n.op_type, i, what, x[axis], b)
        yield from raws if _nonempty(idx) else _unless_empty(raws, _product(idx))


def _unless_empty(raws, count: Dim) -> Iterator[Raw]:
    """Each ``lhs <= rhs`` an index needs, where there may be no index at all (``Range(0, seq)``
    at ``seq = 0``): ``count == 0 or min(lhs, rhs) == lhs``, a disjunction of equalities."""
    for r in raws:
        c = r.fact
        yield replace(r, fact=replace(c, rel=Rel.EQ), alts=((c.lhs, dims.dmin(c.lhs, c.rhs)), (count, 0)))


def _gather_nd(values, elements: Elements, n, i) -> Iterator[Raw]:
    x, idx_name = _shape(values, n.input[0]), n.input[1] if len(n.input) > 1 else ""
    idx = _shape(values, idx_name)
    if x is None or not idx or not isinstance(idx[-1], int):
        return
    k, batch = idx[-1], _attr_int(n, "batch_dims", 0)
    if batch + k > len(x):
        return
    # component j of each index tuple indexes axis batch + j (told apart where the tuples are a
    # Concat of one column per component, as torch's advanced indexing builds them)
    bounds = [elements.bounds(idx_name)] if k == 1 else elements.columns(idx_name, k)
    for j, b in enumerate(bounds):
        if b is not None:
            raws = _index_bounds(node_label(n, i), n.op_type, i, f"on axis {batch + j}", x[batch + j], b)
            yield from raws if _nonempty(idx) else _unless_empty(raws, _product(idx))


def _split(values, result, n, i) -> Iterator[Raw]:
    x = _shape(values, n.input[0])
    if x is None or not x:
        return
    axis = _attr_int(n, "axis", 0)
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x):
        return
    d, label = x[axis], node_label(n, i)
    opset = next((o.version for o in result.model.opset_import if o.domain in ("", "ai.onnx")), 0)
    sizes = None
    if opset >= 13 and len(n.input) > 1 and n.input[1]:
        v = values.get(n.input[1])
        sizes = tuple(v.value) if isinstance(v, Tensor) and v.value is not None else None
    elif opset < 13:
        sizes = next((tuple(a.ints) for a in n.attribute if a.name == "split"), None) or None
    if sizes is not None:
        total: Dim = 0
        for s in sizes:
            total = dims.add(total, s)
        yield needed(Rel.EQ, total, d, label, n.op_type, f"split sizes add up to {d}", i)
        for s in sizes:
            if not isinstance(s, int) and dims.try_le(0, s) is not True:
                yield needed(Rel.LE, 0, s, label, n.op_type, f"split size {s} >= 0", i)
    elif not (opset >= 18 and any(a.name == "num_outputs" for a in n.attribute)):
        parts = len(n.output)
        if parts > 1 and not isinstance(d, int):
            yield needed(Rel.EQ, dims.mul(parts, dims.floordiv(d, parts)), d, label, n.op_type,
                         f"{d} splits into {parts} equal parts", i)


def _tile(values, n, i) -> Iterator[Raw]:
    r = values.get(n.input[1]) if len(n.input) > 1 else None
    if not isinstance(r, Tensor) or r.value is None:
        return
    for k, rep in enumerate(r.value):
        if isinstance(rep, dims.Expr) and dims.try_le(0, rep) is not True:
            yield needed(Rel.LE, 0, rep, node_label(n, i), n.op_type, f"repeat {k} is {rep} >= 0", i)
