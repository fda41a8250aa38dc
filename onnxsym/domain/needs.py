"""The conditions an op registers that the domain checks on a node's inferred inputs, not
recorded by its rule (the shapes follow either way): broadcasts of dims that may be 1
(``min(64, seq)`` against ``seq``), Expand, index bounds (Gather, GatherElements, GatherND,
ScatterND, ScatterElements, from the element bounds of their indices), Split sizes and Tile
repeats. Each is a :class:`onnxsym.registry.Condition` a rule module names in its
registration; :mod:`.collect` calls its ``check`` with a :class:`Site`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import onnx

from .. import dims
from ..dims import Dim
from ..facts.fact import Constraint, Origin, Place, Rel
from ..inference.engine import node_label
from ..inference.values import Tensor
from ..registry import Condition
from ..semantics.shapes import prod, total
from .elements import Elements


@dataclass(frozen=True)
class Raw:
    """A condition a node needs (``fact``; for a broadcast, any of the equalities ``alts``),
    ``order`` the node's index in the graph. The fact's origin tells whether a node fails
    (or its shape changes) without it, or onnxsym assumes it (``assumed`` says why)."""

    fact: Constraint
    order: int
    alts: tuple[tuple[Dim, Dim], ...] = ()
    # the fact's reason ends with the condition itself (one inference recorded, restated over
    # the ranges before it narrowed them): a report need not say it again
    states_condition: bool = False
    # a condition on the input data, not on the sizes (``-n <= indices < n`` where the indices are
    # fed): what it says; the domain says it as data-dependent and states nothing of the sizes
    data: str = ""
    fed: bool = True  # data: the values come from the input data (else from values onnxsym could not follow)
    # a need the domain does not state (no exact rule is known): what it is; said "not stated"
    unstated: str = ""

    @property
    def assumed(self) -> str:
        return self.fact.reason if self.fact.origin.assumed else ""


def needed(rel: Rel, lhs: Dim, rhs: Dim, label: str, op_type: str, reason: str, order: int,
           alts: tuple[tuple[Dim, Dim], ...] = ()) -> Raw:
    """What the main graph's node ``label`` needs to run."""
    return Raw(Constraint(rel, lhs, rhs, Origin.NEEDED, Place(label, op_type), reason), order, alts)


@dataclass(frozen=True)
class Site:
    """One node after inference, as a condition's check sees it: its inputs' values, the
    element bounds of the main graph (None in a subgraph: index bounds are not walked
    there), its label and position, and the model's opset of its domain."""

    node: onnx.NodeProto
    index: int
    label: str
    values: Mapping[str, object]
    elements: Elements | None
    opset: int

    def shape(self, i: int) -> tuple[Dim, ...] | None:
        name = self.node.input[i] if i < len(self.node.input) else ""
        v = self.values.get(name) if name else None
        return v.shape if isinstance(v, Tensor) else None

    def value(self, i: int) -> tuple | None:
        name = self.node.input[i] if i < len(self.node.input) else ""
        v = self.values.get(name) if name else None
        return v.value if isinstance(v, Tensor) else None

    def attr_int(self, name: str, default: int) -> int:
        return next((a.i for a in self.node.attribute if a.name == name), default)

    def raw(self, rel: str, lhs: Dim, rhs: Dim, reason: str, alts: tuple[tuple[Dim, Dim], ...] = ()) -> Raw:
        """``lhs rel rhs`` (``==``, ``<=``; ``or``: any of the equalities ``alts``) that the node needs."""
        return needed(Rel.LE if rel == "<=" else Rel.EQ, lhs, rhs, self.label, self.node.op_type, reason,
                      self.index, alts)

    def unstated(self, what: str, reason: str) -> Raw:
        """A need of the node (``what``, and why) the domain does not state (no exact rule is known)."""
        return replace(needed(Rel.EQ, 0, 0, self.label, self.node.op_type, reason, self.index), unstated=what)


def _shape(values, name: str):
    v = values.get(name) if name else None
    return v.shape if isinstance(v, Tensor) else None


def _is_one(d: Dim) -> bool:
    return isinstance(d, int) and d == 1


def _pairs(cols: Sequence[Sequence[Dim]]) -> Iterator[tuple[int, Dim, Dim]]:
    """Per axis, the pairs of different dims that broadcasting needs to agree (or one to be 1).
    Pairs of dims both provably not 1 are kept: inference recorded their equality only where it
    proved that then, and a range narrowed later (timm's MaxViT: ``(h + 1)//4``, which may be 1
    until a later Reshape needs ``h >= 17``) left a pair it had passed as "may be 1" unrecorded."""
    for axis, col in enumerate(cols):
        distinct = list(dict.fromkeys(d for d in col if not _is_one(d)))
        for j, a in enumerate(distinct):
            for b in distinct[j + 1:]:
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


def index_range(site: Site, d: Dim, b: tuple[Dim, Dim], count: Dim, what: str,
                negative: bool = True) -> Iterator[Raw]:
    """Indices of element bounds ``b`` into an axis of ``d`` (``what`` names it): ``b[1] < d`` and
    ``-d <= b[0]`` (``0 <= b[0]`` where a negative index is refused), unless there is no index
    at all (``count`` may be 0)."""
    lo, hi = b
    floor = dims.neg(d) if negative else 0
    raws = [site.raw("<=", x, y, why) for x, y, why in (
        (hi, dims.sub(d, 1), f"index {hi} < {d} {what}"), (floor, lo, f"index {lo} >= {floor} {what}"))
        if dims.try_le(x, y) is not True]
    yield from raws if dims.try_le(1, count) is True else _unless_empty(raws, count)


def on_data(label: str, op_type: str, order: int, text: str, reason: str, fed: bool = True) -> Raw:
    """A condition the node ``label`` needs of element values the sizes do not decide (``text``),
    and why; ``fed``: the values come from the input data."""
    return Raw(Constraint(Rel.EQ, 0, 0, Origin.NEEDED, Place(label, op_type), reason), order, data=text, fed=fed)


def unknown_indices(elements: Elements, name: str, label: str, op_type: str, order: int, what: str, d: Dim) -> Raw:
    """Indices ``name`` whose element bounds are not known (fed, or computed from fed data):
    onnxruntime refuses one out of range at run time, which the sizes cannot decide."""
    fed = elements.reads_data(name)
    return on_data(label, op_type, order, f"-{d} <= indices < {d} {what}",
                   "onnxruntime refuses an index out of range when it runs" + (" (the indices are fed data)" if fed
                                                                              else ""), fed=fed)


def _nonempty(shape) -> bool:
    return shape is not None and dims.try_le(1, prod(shape)) is True


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
    what = "rows" if axis == 0 else f"on axis {axis}"
    if b is not None:
        raws = _index_bounds(node_label(n, i), n.op_type, i, what, x[axis], b)
        yield from raws if _nonempty(idx) else _unless_empty(raws, prod(idx))
    elif dims.try_le(1, prod(idx)) is not False:  # (no index at all needs nothing)
        yield unknown_indices(elements, idx_name, node_label(n, i), n.op_type, i, what, x[axis])


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
            yield from raws if _nonempty(idx) else _unless_empty(raws, prod(idx))
        elif dims.try_le(1, prod(idx)) is not False:
            yield unknown_indices(elements, idx_name, node_label(n, i), n.op_type, i, f"on axis {batch + j}",
                                  x[batch + j])


def _split(values, opset: int, n, i) -> Iterator[Raw]:
    x = _shape(values, n.input[0])
    if x is None or not x:
        return
    axis = _attr_int(n, "axis", 0)
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x):
        return
    d, label = x[axis], node_label(n, i)
    sizes = None
    if opset >= 13 and len(n.input) > 1 and n.input[1]:
        v = values.get(n.input[1])
        sizes = tuple(v.value) if isinstance(v, Tensor) and v.value is not None else None
        if sizes is None:  # sizes onnxsym cannot see (the input data): over the pieces' sizes
            outs = [_shape(values, o) for o in n.output]
            if all(o is not None and len(o) == len(x) for o in outs):
                whole: Dim = 0
                for o in outs:
                    whole = dims.add(whole, o[axis])  # type: ignore[index]
                yield needed(Rel.EQ, whole, d, label, n.op_type,
                             f"the split sizes (the elements of '{n.input[1]}') add up to {d}", i)
            return
    elif opset < 13:
        sizes = next((tuple(a.ints) for a in n.attribute if a.name == "split"), None) or None
    if sizes is not None:
        yield needed(Rel.EQ, total(sizes), d, label, n.op_type, f"split sizes add up to {d}", i)
        for s in sizes:
            if not isinstance(s, int) and dims.try_le(0, s) is not True:
                yield needed(Rel.LE, 0, s, label, n.op_type, f"split size {s} >= 0", i)
    elif not (opset >= 18 and any(a.name == "num_outputs" for a in n.attribute)):
        parts = len(n.output)
        if parts > 1 and not isinstance(d, int):
            yield needed(Rel.EQ, dims.mul(parts, dims.floordiv(d, parts)), d, label, n.op_type,
                         f"{d} splits into {parts} equal parts", i)
    else:  # num_outputs parts of ceil(d / parts), the last the rest: onnxruntime refuses it below 0
        parts = len(n.output)
        last = dims.sub(d, dims.mul(parts - 1, dims.ceil_div(d, parts)))
        if not isinstance(d, int) and dims.try_le(0, last) is not True:
            yield needed(Rel.LE, 0, last, label, n.op_type,
                         f"the last of {parts} parts of ceil({d}/{parts}), {last}, is >= 0", i)


def _tile(values, n, i) -> Iterator[Raw]:
    r = values.get(n.input[1]) if len(n.input) > 1 else None
    if not isinstance(r, Tensor) or r.value is None:
        return
    for k, rep in enumerate(r.value):
        # (a plain int too: a computed -4 runs at no size)
        if isinstance(rep, (int, dims.Expr)) and not isinstance(rep, bool) and dims.try_le(0, rep) is not True:
            yield needed(Rel.LE, 0, rep, node_label(n, i), n.op_type, f"repeat {k} is {rep} >= 0", i)


def _names(site: Site) -> list[str]:
    return [x for x in site.node.input if x]


BROADCAST = Condition("the inputs broadcast: on each axis the dims are equal, or one is 1",
                      lambda site: _broadcast(site.values, site.node, site.index, _names(site)), replayable=True)
EXPAND = Condition("X broadcasts to shape: on each axis X's dim and shape's element are equal, or one is 1",
                   lambda site: _expand(site.values, site.node, site.index), replayable=True)
# (index bounds come from the element bounds of the graph the node is in, and of the main graph)
GATHER_INDICES = Condition("-X[axis] <= indices < X[axis] (where the indices come from shapes)",
                           lambda site: () if site.elements is None else
                           _gather(site.values, site.elements, site.node, site.index), replayable=True)
GATHER_ND_INDICES = Condition("-X[b + j] <= indices[..., j] < X[b + j] on each indexed axis",
                              lambda site: () if site.elements is None else
                              _gather_nd(site.values, site.elements, site.node, site.index), replayable=True)
SPLIT_SIZES = Condition("the split sizes are >= 0 and add up to X[axis]; with no sizes and no num_outputs, "
                        "X[axis] divides into equal parts; with num_outputs, the last part (X[axis] less the others "
                        "of ceil(X[axis] / num_outputs)) is >= 0",
                        lambda site: _split(site.values, site.opset, site.node, site.index), replayable=True)
TILE_REPEATS = Condition("repeats >= 0", lambda site: _tile(site.values, site.node, site.index), replayable=True)


def _matmul_batch(site: Site) -> Iterator[Raw]:
    a, b = site.shape(0), site.shape(1)
    if a is None or b is None or len(a) < 3 and len(b) < 3:
        return
    sa, sb = tuple(a[:-2]), tuple(b[:-2])
    rank = max(len(sa), len(sb))
    cols = list(zip((1,) * (rank - len(sa)) + sa, (1,) * (rank - len(sb)) + sb))
    for axis, x, y in _pairs(cols):
        yield site.raw("or", x, y, f"matmul batch axis {axis}: {x} against {y}", alts=((x, y), (x, 1), (y, 1)))


MATMUL_BATCH = Condition("the batch dims (all but the last two) broadcast", _matmul_batch, replayable=True)


def _einsum_letters(site: Site) -> Iterator[Raw]:
    eq = next((a.s.decode() for a in site.node.attribute if a.name == "equation"), "").replace(" ", "")
    terms = eq.partition("->")[0].split(",")
    by_letter: dict[str, list[Dim]] = {}
    ellipses: list[tuple[Dim, ...]] = []
    for i, term in enumerate(terms):
        shape = site.shape(i)
        if shape is None:
            continue
        head, dots, tail = term.partition("...")
        if len(head) + len(tail) > len(shape) or (not dots and len(term) != len(shape)):
            return
        # (after an ellipsis the letters are read from the end; the ellipsis holds the dims between)
        placed = list(zip(head, shape)) + (list(zip(tail, shape[len(shape) - len(tail):])) if tail else [])
        if dots:
            ellipses.append(tuple(shape[len(head):len(shape) - len(tail)]))
        mine: dict[str, list[Dim]] = {}
        for letter, d in placed:
            mine.setdefault(letter, []).append(d)
        for letter, ds in sorted(mine.items()):  # a letter repeated in one term (ii->i): equal, 1 is no exception
            for a, b in zip(ds, ds[1:]):
                if dims.try_eq(a, b) is not True:
                    yield site.raw("==", a, b, f"einsum letter {letter} repeated in operand {i}: {a} against {b}")
            by_letter.setdefault(letter, []).append(ds[0])
    for letter, ds in sorted(by_letter.items()):
        for _, a, b in _pairs([ds]):
            yield site.raw("or", a, b, f"einsum letter {letter}: {a} against {b}", alts=((a, b), (a, 1), (b, 1)))
    if len(ellipses) > 1:  # the ellipsis dims broadcast, aligned at the end
        rank = max(len(e) for e in ellipses)
        cols = list(zip(*[(1,) * (rank - len(e)) + e for e in ellipses]))
        for axis, a, b in _pairs(cols):
            yield site.raw("or", a, b, f"einsum ellipsis axis {axis}: {a} against {b}", alts=((a, b), (a, 1), (b, 1)))


def _unidirectional(site: Site) -> Iterator[Raw]:
    x, s = site.shape(0), site.shape(1)
    if x is None or s is None or len(s) > len(x):
        return
    for axis, (a, b) in enumerate(zip(x[len(x) - len(s):], s)):
        if _is_one(b) or dims.try_eq(a, b) is True:
            continue
        yield site.raw("or", a, b, f"slope axis {axis}: {b} broadcasts to {a}", alts=((a, b), (b, 1)))


def to_target(site: Site, target: tuple[Dim, ...], s: tuple[Dim, ...], what: str) -> Iterator[Raw]:
    """``s`` broadcasts to ``target`` one way (aligned at the end): each dim is the target's, or 1."""
    for axis, (a, b) in enumerate(zip(target[len(target) - len(s):], s)):
        if _is_one(b) or dims.try_eq(a, b) is True:
            continue
        yield site.raw("or", a, b, f"{what} axis {axis}: {b} broadcasts to {a}", alts=((a, b), (b, 1)))


def _gemm_c(site: Site) -> Iterator[Raw]:
    a, b, c = site.shape(0), site.shape(1), site.shape(2)
    if a is None or b is None or c is None or len(a) != 2 or len(b) != 2 or len(c) > 2:
        return
    m = a[1] if site.attr_int("transA", 0) else a[0]
    n = b[0] if site.attr_int("transB", 0) else b[1]
    yield from to_target(site, (m, n), c, "C")


def _norm_axis(site: Site) -> int | None:
    """The normalized axis of a LayerNormalization or RMSNormalization (None: X's rank unknown or
    the axis out of range, which the rule refuses)."""
    x = site.shape(0)
    if x is None:
        return None
    axis = site.attr_int("axis", -1)
    axis = axis + len(x) if axis < 0 else axis
    return axis if 0 <= axis < len(x) else None


def _layer_norm_scale(site: Site) -> Iterator[Raw]:
    """onnxruntime broadcasts Scale and B to all of X one way (aligned at the end), whatever the
    axis: (3, 1) scales X (2, 3, 4) at axis 2, though the spec says X[axis:]."""
    x = site.shape(0)
    if x is None or _norm_axis(site) is None:
        return
    for i, what in ((1, "Scale"), (2, "B")):
        s = site.shape(i)
        if s is not None and len(s) <= len(x):  # (a longer one the rule refuses)
            yield from to_target(site, tuple(x), s, what)


def _norm_elements(site: Site) -> Iterator[Raw]:
    """onnxruntime refuses to normalize over no elements: X[axis:] multiplies to at least 1,
    whatever the dims before the axis (X (0, 3, 4) runs at axis 1, not at axis 0)."""
    x, axis = site.shape(0), _norm_axis(site)
    if x is None or axis is None:
        return
    rest = prod(x[axis:])
    if dims.try_le(1, rest) is True:
        return
    yield site.raw("<=", 1, rest, f"{site.node.op_type}: the normalized dims {rest} have elements (>= 1)")


GEMM_C = Condition("C broadcasts to (M, N)", _gemm_c, replayable=True)
LAYER_NORM_SCALE = Condition("Scale and B broadcast to X (onnxruntime: to all of X, not X[axis:] only)",
                             _layer_norm_scale, replayable=True)
NORM_ELEMENTS = Condition("X[axis:] has elements (onnxruntime refuses to normalize over none)", _norm_elements,
                          replayable=True)
EINSUM_LETTERS = Condition("the dims of one letter are equal, or one is 1 (a letter repeated in one operand: "
                           "equal); the ellipsis dims broadcast", _einsum_letters, replayable=True)
SLOPE = Condition("slope broadcasts to X: on each axis its dim is X's, or 1", _unidirectional, replayable=True)


def _empty_unless_first(site: Site, first: int, what: str) -> Iterator[Raw]:
    """Input 0 has elements unless its dims before ``first`` (the batch; with ``first`` past
    an axis, all but that axis) multiply to 0: ``min(rest, 1) == 1 or before == 0``."""
    x = site.shape(0)
    if x is None or len(x) <= first:
        return
    before, rest = prod(x[:first]), prod(x[first:])
    if dims.try_le(1, rest) is True or (isinstance(before, int) and before == 0):
        return
    if isinstance(rest, int):  # rest is 0 (a static empty axis): only an empty head lets it run
        if dims.try_le(1, before) is not True:
            yield site.raw("==", before, 0, f"{what}: {rest} elements; it runs only where {before} is 0")
        return
    yield site.raw("or", dims.dmin(rest, 1), 1, f"{what}: {rest} >= 1, or {before} == 0",
                   alts=((dims.dmin(rest, 1), 1), (before, 0)))


def _pool_elements(site: Site) -> Iterator[Raw]:
    yield from _empty_unless_first(site, 1, "onnxruntime pools no input without elements unless the batch is 0")


def _arg_axis(site: Site) -> Iterator[Raw]:
    x = site.shape(0)
    if x is None or not x:
        return
    axis = site.attr_int("axis", 0)
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x):
        return
    d, others = x[axis], prod(x[:axis] + x[axis + 1:])
    if dims.try_le(1, d) is True or (isinstance(others, int) and others == 0):
        return
    why = f"{site.node.op_type} over axis {axis}: {d} >= 1 (onnxruntime refuses an empty axis), or no output ({others} == 0)"
    if isinstance(d, int):
        yield site.raw("==", others, 0, why)
        return
    yield site.raw("or", dims.dmin(d, 1), 1, why, alts=((dims.dmin(d, 1), 1), (others, 0)))


def may_be_empty(shape: Sequence[Dim]) -> bool:
    """Whether a tensor of ``shape`` may have no elements (its dims' product not proven >= 1)."""
    return dims.try_le(1, prod(shape)) is not True


def is_empty(shape: Sequence[Dim]) -> bool:
    """Whether a tensor of ``shape`` is proven to have no elements (a dim of 0)."""
    return dims.try_eq(prod(shape), 0) is True


def concat_reference(shapes: Sequence[tuple[Dim, ...]]) -> int:
    """The input (item) whose dims off the axis the output of Concat or ConcatFromSequence has
    where one is proven to have elements. onnxruntime takes them from the first input with
    elements (input 0 where none has): the first proven to have elements, else the first not
    proven empty, else input 0 (then :func:`concat_dims` picks among them by their sizes)."""
    return next((k for k, s in enumerate(shapes) if not may_be_empty(s)),
                next((k for k, s in enumerate(shapes) if not is_empty(s)), 0))


def concat_dims(shapes: Sequence[tuple[Dim, ...]], skip_axis: int | None) -> tuple[Dim, ...]:
    """The output's dims off the axis (``skip_axis``'s entry is input 0's, for the caller to
    replace) as onnxruntime takes them: those of the first input with elements, or input 0's
    where none has. With an input proven to have elements, :func:`concat_reference`'s; else,
    on an axis where the inputs differ, a pick by their sizes (``e*n + (1 - e)*m`` with ``e``
    ``min(1, a*n)``, 1 exactly where input 0 of ``[a, n]`` has elements)."""
    ref = concat_reference(shapes)
    if not may_be_empty(shapes[ref]):
        return tuple(shapes[ref])
    cands = [k for k, s in enumerate(shapes) if not is_empty(s)]
    out = []
    for i, d0 in enumerate(shapes[0]):
        if i == skip_axis or all(dims.try_eq(shapes[k][i], d0) is True for k in cands):
            out.append(d0)
            continue
        d: Dim = d0  # (where none has elements)
        for k in reversed(cands):
            e = dims.dmin(1, prod(shapes[k]))
            d = dims.add(dims.mul(e, shapes[k][i]), dims.mul(dims.sub(1, e), d))
        out.append(d)
    return tuple(out)


def agree_or_empty(site: Site, shapes: Sequence[tuple[Dim, ...]], skip_axis: int | None, what: str) -> Iterator[Raw]:
    """onnxruntime's Concat and ConcatFromSequence skip an input without elements, and take the
    output's dims off the axis (``skip_axis``; None: every axis) from the first input with
    elements, or input 0 where none has: each other input with elements agrees with that one.
    With an input proven to have elements (:func:`concat_reference`'s), each other input agrees
    with it or has no elements (a disagreeing input with elements fails, or, the reference
    skipped, gives other dims); inputs proven to have elements the rule equated already. With
    none, each input after the first not proven empty agrees with :func:`concat_dims`'s pick
    or has no elements. Inputs proven empty need nothing."""
    if not shapes or any(len(s) != len(shapes[0]) for s in shapes):
        return
    ref = concat_reference(shapes)
    first = shapes[ref]
    if may_be_empty(first):
        picked = concat_dims(shapes, skip_axis)
        for k, shape in enumerate(shapes):
            if k <= ref or is_empty(shape):  # (the first that may have elements agrees with the pick)
                continue
            n = prod(shape)
            for axis, (a, b) in enumerate(zip(picked, shape)):
                if axis == skip_axis or dims.try_eq(a, b) is True:
                    continue
                yield site.raw("or", b, a, f"{what}: input {k} agrees on axis {axis} with the first input with "
                               f"elements, or has none ({n} == 0: onnxruntime skips it)", alts=((b, a), (n, 0)))
        return
    for k, shape in enumerate(shapes):
        if k == ref or is_empty(shape):
            continue
        n, empty = prod(shape), may_be_empty(shape)
        for axis, (a, b) in enumerate(zip(first, shape)):
            if axis == skip_axis or dims.try_eq(a, b) is True:
                continue
            if not empty:  # (equated by the rule, unless the ranges narrowed since)
                yield site.raw("==", b, a, f"{what}: input {k} agrees with input {ref} on axis {axis}")
                continue
            yield site.raw("or", b, a, f"{what}: input {k} agrees with input {ref} on axis {axis}, or has no "
                           f"elements ({n} == 0: onnxruntime skips it)", alts=((b, a), (n, 0)))


def _concat_empty(site: Site) -> Iterator[Raw]:
    shapes = [site.shape(i) for i in range(len(site.node.input)) if site.node.input[i]]
    if not shapes or any(s is None for s in shapes):
        return
    known = [s for s in shapes if s is not None]
    r = len(known[0])
    axis = site.attr_int("axis", 0)
    axis = axis + r if axis < 0 else axis
    yield from agree_or_empty(site, known, axis, "Concat")


CONCAT_EMPTY = Condition("an input agrees off the axis with the first one with elements (onnxruntime takes the "
                         "output's dims from it, input 0's where none has), or has no elements (onnxruntime skips it)",
                         _concat_empty, replayable=True)


POOL_ELEMENTS = Condition("X has elements, or its batch X[0] is 0 (onnxruntime refuses an empty X otherwise)",
                          _pool_elements, replayable=True)
ARG_AXIS = Condition("X[axis] >= 1, or the output has no elements", _arg_axis, replayable=True)
