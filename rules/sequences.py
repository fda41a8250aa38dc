"""Rules for sequence ops. A sequence keeps its items one by one while their
number and positions are known; otherwise only what holds for every item."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.domain.needs import Site, agree_or_empty, concat_dims, concat_reference, may_be_empty
from onnxsym.errors import ShapeContradiction
from onnxsym.facts.join import join_tensors
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.provenance import Kind
from onnxsym.inference.values import Sequence, Tensor, unranked
from onnxsym.registry import Condition, Outputs, register
from onnxsym.semantics.shapes import normalize_axis

from .common import F32, I64, arg, present


def _fresh_for(node, output):
    return lambda axis, why, lo, hi: node.fresh(why, output, axis, lo, hi, Kind.POLICY)  # a merge, on purpose


def _of_items(node, items, dtype=0, output=0):
    """A sequence of known items; its element type is their join."""
    items = tuple(t if isinstance(t, Tensor) else unranked() for t in items)
    elem = join_tensors(items, _fresh_for(node, output), "the sequence items differ") if items else unranked(dtype)
    return Sequence(elem, items)


def any_item(node, seq, output=0):
    """An item at a position not known here. Dims that may differ between items
    get new symbols: two such items need not be alike."""
    if not isinstance(seq, Sequence):
        return unranked()
    if seq.items:
        return join_tensors(seq.items, _fresh_for(node, output), "the sequence items differ")
    elem = seq.elem
    if elem is None or elem.shape is None:
        return unranked(elem.dtype if elem is not None else 0)
    return Tensor(elem.dtype, tuple(
        d if node.is_resolved(d) else node.fresh(f"an item's dim {d} may differ between items", output, axis)
        for axis, d in enumerate(elem.shape)))


def _position(node, i, n, default, insert=False):
    """Input ``i`` as an index into ``n`` items (``default`` when omitted); ``None`` when unknown."""
    v = node.value(i) if present(node, i) else (default,)
    if v is None or len(v) != 1 or not isinstance(v[0], int) or n is None:
        return None
    p, hi = v[0], n + 1 if insert else n
    if not -n <= p < hi:
        raise ShapeContradiction(f"position {p} is out of range for a sequence of {n} items")
    return p + n if p < 0 else p


def _count(seq):
    """The number of items, when they are known one by one."""
    return len(seq.items) if isinstance(seq, Sequence) and seq.items is not None else None


def _length(seq):
    """The number of items, when known."""
    return seq.count if isinstance(seq, Sequence) else None


def _add(n, k):
    return None if n is None else dims.add(n, k)


@register("SequenceEmpty", conditions=())
def sequence_empty_rule(node: Node) -> Outputs:
    return [Sequence(unranked(node.attr_int("dtype", F32)), ())]


@register("SequenceConstruct", conditions=())
def sequence_construct_rule(node: Node) -> Outputs:
    return [_of_items(node, node.inputs)]


def _count_unseen(what, i=None, optional=False):
    """A condition check: where onnxsym cannot tell the number of the sequence's items (a join
    of sequences of other lengths, a split by sizes read from the data), or the position (input
    ``i``), the need ``what`` (an item, a position in range) is said not stated, so the domain is
    not silently too wide; ``optional``: an omitted position needs nothing (an insert at the end)."""
    def check(site: Site):
        seq = site.values.get(site.node.input[0]) if site.node.input else None
        given = i is not None and i < len(site.node.input) and bool(site.node.input[i])
        if optional and not given:
            return
        v = site.value(i) if given else None
        position_known = not given or (v is not None and len(v) == 1 and not isinstance(v[0], bool)
                                       and isinstance(v[0], (int, dims.Expr)))
        if isinstance(seq, Sequence) and seq.count is not None and position_known:
            return
        unseen = "the number of items" if not (isinstance(seq, Sequence) and seq.count is not None) else "the position"
        yield site.unstated(what, f"{site.node.op_type}: {unseen} onnxsym could not tell")
    return check


def _condition(text, what, i=None, optional=False):
    return Condition(f"{text}: not stated where onnxsym cannot tell the number of items or the position",
                     _count_unseen(what, i, optional), replayable=True)


@register("SequenceAt", conditions=["-n <= position < n, for n items",
                                   _condition("the position is in range", "-n <= position < n, for n items", 1)])
def sequence_at_rule(node):
    seq = node.input(0)
    _require_in_range(node, 1, _length(seq))
    p = _position(node, 1, _count(seq), None)
    if p is not None:
        item = seq.items[p]
    else:
        item = _chunk_at(seq, node.value(1)) or any_item(node, seq)
    shape_of(item, item.dtype, why="the item's rank is unknown")
    return [item]


def _chunk_at(seq, v):
    """The piece at a known position of an uneven split's pieces (``Sequence.chunks``): of
    ``k = ceil(n / s)`` pieces, piece ``q`` is ``min(s, n - q*s)`` long on the split axis, which
    is ``s`` for all but the last; position -1 is the last, ``(n - 1) mod s + 1`` (n >= 1: the
    position is in range), and -2 or before a full one. None for any other sequence or position."""
    c = _chunks(None, seq)
    if c is None or v is None or len(v) != 1 or isinstance(v[0], bool) or not isinstance(v[0], int):
        return None
    axis, n, s, _ = c
    p = v[0]
    size = dims.dmin(s, dims.sub(n, p * s)) if p >= 0 else dims.add(dims.mod(dims.sub(n, 1), s), 1) if p == -1 else s
    return _piece(seq, axis, size)


def _piece(seq, axis, size):
    """An item of ``seq``'s pieces (``Sequence.chunks``), ``size`` long on the split axis."""
    shape = seq.elem.shape
    return Tensor(seq.elem.dtype, shape[:axis] + (size,) + shape[axis + 1:])


def _require_in_range(node, i, n, default=None, insert=False):
    """Record ``-n <= position < n`` (``<= n`` for an insert) where the position (input ``i``, else
    ``default``) or the count ``n`` is a symbol (both numbers: :func:`_position` decides)."""
    v = node.value(i) if present(node, i) else None if default is None else (default,)
    if v is None or len(v) != 1 or n is None or isinstance(v[0], bool) or not isinstance(v[0], (int, dims.Expr)):
        return
    p = v[0]
    if isinstance(p, int) and isinstance(n, int):
        return
    node.require_at_least(dims.add(p, n), 0, f"{node.op_type}: position {p} >= -{n} (the number of items)")
    if insert:
        node.require_at_least(dims.sub(n, p), 0, f"{node.op_type}: position {p} <= {n} (the number of items)")
    else:
        node.require_at_least(dims.sub(dims.sub(n, 1), p), 0,
                              f"{node.op_type}: position {p} < {n} (the number of items)")


@register("SequenceInsert", conditions=["-n <= position <= n, for n items",
                                       _condition("the position is in range", "-n <= position <= n, for n items", 2,
                                                  optional=True)])
def sequence_insert_rule(node):
    seq, t = node.input(0), arg(node, 1)
    _require_in_range(node, 2, _length(seq), insert=True)
    n = _count(seq)
    p = _position(node, 2, n, n if n is not None else -1, insert=True)
    if p is not None:
        return [_of_items(node, seq.items[:p] + (t,) + seq.items[p:], seq.elem.dtype if seq.elem else 0)]
    if not isinstance(seq, Sequence) or seq.elem is None or t is None:
        return [Sequence(None)]
    if seq.items == ():
        return [Sequence(t, None, 1)]
    return [Sequence(join_tensors([seq.elem, t], _fresh_for(node, 0), "the inserted item differs"), None,
                     _add(seq.length, 1))]


@register("SequenceErase", conditions=["-n <= position < n, for n items (the last by default)",
                                      _condition("the position is in range", "-n <= position < n, for n items", 1)])
def sequence_erase_rule(node):
    seq = node.input(0)
    _require_in_range(node, 1, _length(seq), default=-1)  # (onnxruntime refuses an empty sequence too)
    p = _position(node, 1, _count(seq), -1)
    if p is not None:
        return [_of_items(node, seq.items[:p] + seq.items[p + 1:], seq.elem.dtype if seq.elem else 0)]
    if not isinstance(seq, Sequence):
        return [Sequence(None)]
    erased = _erase_chunk(seq, node.value(1) if present(node, 1) else (-1,))
    return [erased or Sequence(seq.elem, None, _add(seq.length, -1))]


def _erase_chunk(seq, v):
    """An uneven split's pieces (``Sequence.chunks``, k of them) with the one at a known position
    erased: the last (-1) leaves k - 1 full pieces of ``s``; the first (0), or any before the last
    (-2 or before), leaves the pieces of ``n - s`` in ``s``s (the last one still the shorter; none
    where ``n <= s``). None for any other sequence or position (from 1 on: whether it is the last
    depends on n)."""
    c = _chunks(None, seq)
    if c is None or v is None or len(v) != 1 or isinstance(v[0], bool) or not isinstance(v[0], int) or v[0] > 0:
        return None
    axis, n, s, _ = c
    k = dims.sub(dims.ceil_div(n, s), 1)
    if v[0] == -1:
        return Sequence(_piece(seq, axis, s), None, k)
    # (n - s is below 0 where n < s: the sequence is then empty, ceil((n - s) / s) = 0 items, and
    # whatever reads a piece of it or concatenates it needs an item, so n - s is read only where > 0)
    return Sequence(seq.elem, None, k, (axis, dims.sub(n, s), s))


@register("SequenceLength", conditions=())
def sequence_length_rule(node: Node) -> Outputs:
    n = _length(node.input(0))
    return [Tensor(I64, (), None if n is None else (n,))]


def _split_keepdims(site):
    """A scalar split with keepdims=0 (onnxruntime's departure): the split is 1, X[axis] <= 1,
    or X has no elements off the axis."""
    if site.attr_int("keepdims", 1) or len(site.node.input) < 2 or not site.node.input[1] or site.shape(1) != ():
        return
    x, v = site.shape(0), site.value(1)
    if x is None or not x or v is None or len(v) != 1 or isinstance(v[0], bool) or not isinstance(v[0], (int, dims.Expr)):
        return
    axis = site.attr_int("axis", 0)
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x):
        return
    s, d = v[0], x[axis]
    others = 1
    for e in x[:axis] + x[axis + 1:]:
        others = dims.mul(others, e)
    if dims.try_eq(s, 1) is True or dims.try_le(d, 1) is True or dims.try_eq(others, 0) is True:
        return
    alts = tuple(a for a in ((s, 1), (dims.dmax(d, 1), 1), (others, 0)) if not isinstance(a[0], int) or a[0] == a[1])
    yield site.raw("or", alts[0][0], alts[0][1], f"SplitToSequence: a scalar split {s} with keepdims=0 needs split 1, "
                   f"X[{axis}] = {d} <= 1, or no elements ({others} == 0)", alts=alts)


SPLIT_KEEPDIMS = Condition("a scalar split with keepdims=0: the split is 1, X[axis] <= 1, or X has no elements "
                           "(onnxruntime reshapes each piece without the axis)", _split_keepdims, replayable=True)


def _split_data(site):
    """Split sizes onnxsym could not see (read from the data): they add up to X[axis] (each
    at most it, where their number is unknown), over the fresh sizes the rule gave the pieces."""
    x, seq = site.shape(0), site.values.get(site.node.output[0])
    if x is None or len(site.node.input) < 2 or not site.node.input[1] or site.value(1) is not None \
            or not isinstance(seq, Sequence):
        return
    axis = site.attr_int("axis", 0)
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x):
        return
    name, d = site.node.input[1], x[axis]
    if seq.items and all(isinstance(t, Tensor) and t.shape is not None and len(t.shape) == len(x) for t in seq.items):
        total = 0
        for t in seq.items:
            total = dims.add(total, t.shape[axis])
        yield site.raw("==", total, d, f"SplitToSequence: the split sizes (the elements of '{name}') add up to "
                       f"X[{axis}] = {d}")
    elif isinstance(seq.elem, Tensor) and seq.elem.shape is not None and len(seq.elem.shape) == len(x):
        yield site.raw("<=", seq.elem.shape[axis], d, f"SplitToSequence: the split sizes (the elements of '{name}') "
                       f"add up to X[{axis}] = {d}")


SPLIT_DATA = Condition("split sizes onnxsym cannot see (the input data) add up to X[axis]: data-dependent",
                       _split_data)


@register("SplitToSequence", conditions=["the split sizes add up to X[axis]", SPLIT_KEEPDIMS, SPLIT_DATA])
def split_to_sequence_rule(node):
    x = arg(node, 0)
    if x.shape is None:
        return [Sequence(unranked(x.dtype))]
    axis = normalize_axis(node.attr_int("axis", 0), len(x.shape))
    d = x.shape[axis]

    def piece(size, keep=True):
        mid = (size,) if keep else ()
        return Tensor(x.dtype, x.shape[:axis] + mid + x.shape[axis + 1:])

    split = arg(node, 1)
    if not present(node, 1):  # pieces of length 1
        one = piece(1, node.attr_int("keepdims", 1) != 0)
        return [Sequence(one, (one,) * d) if isinstance(d, int) else Sequence(one, None, d)]
    sizes = split.value
    if split.rank == 0 and sizes is not None and not node.attr_int("keepdims", 1):
        # onnxruntime departs from the spec (keepdims only without split): it applies keepdims=0 to a
        # scalar split, reshaping each piece without the axis: that fails for a piece longer than 1
        # with elements, so it runs where the split is 1, X[axis] <= 1, or X has no elements
        # (SPLIT_KEEPDIMS); the pieces have X's shape without the axis
        s = sizes[0]
        one = piece(1, False)
        others = 1
        for e in x.shape[:axis] + x.shape[axis + 1:]:
            others = dims.mul(others, e)
        if isinstance(s, int) and s != 1 and isinstance(d, int) and d > 1 and isinstance(others, int) and others:
            raise ShapeContradiction(f"SplitToSequence: a scalar split {s} with keepdims=0 of X[{axis}] = {d}; "
                                     "onnxruntime runs it only for split 1, X[axis] <= 1 or an X without elements")
        if isinstance(s, int) and s == 1:
            return [Sequence(one, (one,) * d) if isinstance(d, int) else Sequence(one, None, d)]
        if isinstance(d, int) and isinstance(s, int) and s > 0:
            return [_of_items(node, [one] * -(-d // s))]
        return [Sequence(one, None, dims.ceil_div(d, s) if isinstance(s, int) and s > 0 else None)]
    if split.rank == 0 and sizes is not None:  # pieces of this length, the last may be shorter
        s = sizes[0]
        if isinstance(d, int) and isinstance(s, int):
            k = -(-d // s)  # (an axis of 0 has no piece: onnxruntime's sequence is empty)
            return [_of_items(node, [piece(s)] * (k - 1) + [piece(d - s * (k - 1))] if k else [], x.dtype)]
        if dims.mod(d, s) == 0:
            return [Sequence(piece(s), None, dims.floordiv(d, s))]
        chunks = (axis, d, s) if isinstance(s, int) and s > 0 else None  # (what ConcatFromSequence needs)
        return [Sequence(piece(node.fresh("the last piece may be shorter", 0, axis)), None, dims.ceil_div(d, s),
                         chunks)]
    if sizes is not None:
        total = 0
        for s in sizes:
            total = dims.add(total, s)
        if not (isinstance(total, int) and isinstance(d, int) and total == d):
            if isinstance(total, int) and isinstance(d, int):
                raise ShapeContradiction(f"the split sizes {list(sizes)} add up to {total}, not X[{axis}] = {d}")
            node.require_equal(total, d, f"SplitToSequence: the split sizes add up to X[{axis}] = {d}")
        return [_of_items(node, [piece(s) for s in sizes])]
    # split sizes read from a graph input's elements are data: that they add up to X[axis] is a
    # condition on the data (SPLIT_DATA), which the domain says and cannot promise
    data = node.reads_data(1)
    why = "split sizes read from the input data" if data else "split sizes unknown"
    kind = Kind.DATA_DEPENDENT if data else Kind.UNSUPPORTED

    def size():
        return node.fresh(why, 0, axis, lo=0, kind=kind, bound=d if data else None)
    if split.rank == 1 and isinstance(split.shape[0], int):
        return [_of_items(node, [piece(size()) for _ in range(split.shape[0])])]
    return [Sequence(piece(size()))]



def _cfs_empty(site):
    seq = site.values.get(site.node.input[0])
    items = seq.items if isinstance(seq, Sequence) and seq.items else None
    if items is None or any(t.shape is None for t in items) or len({len(t.shape) for t in items}) != 1:
        return
    along = None
    if not site.attr_int("new_axis", 0):
        r = len(items[0].shape)
        along = site.attr_int("axis", 0)
        along = along + r if along < 0 else along
    yield from agree_or_empty(site, [t.shape for t in items], along, "ConcatFromSequence")


CFS_EMPTY = Condition("an item agrees off the axis (every axis with new_axis) with the first one with elements "
                      "(onnxruntime takes the output's dims from it, item 0's where none has), or has no elements "
                      "(onnxruntime skips it)",
                      _cfs_empty, replayable=True)


def _chunks(node_or_site, seq):
    """``(axis, n, s, others)`` for a sequence of pieces of ``s`` of an axis of ``n`` (the last
    one shorter where ``s`` does not divide ``n``), ``others`` the number of elements off the
    axis; None for any other sequence."""
    if not isinstance(seq, Sequence) or seq.chunks is None or seq.items is not None or seq.elem is None \
            or seq.elem.shape is None:
        return None
    axis, n, s = seq.chunks
    others = 1
    for i, e in enumerate(seq.elem.shape):
        if i != axis:
            others = dims.mul(others, e)
    return axis, n, s, others


def _cfs_chunks_agree(site):
    """The pieces of an uneven split agree on the split axis, where the concat needs them to (off
    its axis, or on every axis with new_axis): onnxruntime runs it where s divides n, there is a
    single piece (n <= s), or the pieces have no elements (it skips them)."""
    seq = site.values.get(site.node.input[0])
    c = _chunks(site, seq)
    if c is None:
        return
    split_axis, n, s, others = c
    stack = site.attr_int("new_axis", 0) == 1
    if not stack:
        along = site.attr_int("axis", 0)
        if (along + len(seq.elem.shape) if along < 0 else along) == split_axis:
            return
    alts = ((dims.mod(n, s), 0), (dims.dmax(n, s), s), (others, 0))
    if any(dims.try_eq(a, b) is True for a, b in alts):
        return
    alts = tuple(a for a in alts if not isinstance(a[0], int) or a[0] == a[1])
    if not alts:
        return
    yield site.raw("or", alts[0][0], alts[0][1], f"ConcatFromSequence: the pieces of {n} in {s}s (SplitToSequence) "
                   f"agree on axis {split_axis}: {s} divides {n}, {n} <= {s} (one piece), or they have no "
                   f"elements ({others} == 0: onnxruntime skips them)", alts=alts)


CFS_CHUNKS = Condition("the pieces of a scalar split agree on the split axis where the concat needs it (off its "
                       "axis, every axis with new_axis): the split s divides X[axis] = n, n <= s, or X has no "
                       "elements (onnxruntime skips empty items)", _cfs_chunks_agree, replayable=True)


def _concat_chunks(node, seq, stack, split_axis, n, s):
    """ConcatFromSequence of the pieces of an axis of ``n`` in ``s``s: the output's dims are the
    first piece's (``min(n, s)`` long), its axis the sum of the pieces' (``n`` on the split axis)
    or their number (new_axis); that the others agree with the first is CFS_CHUNKS."""
    like = seq.elem.shape[:split_axis] + (dims.dmin(n, s),) + seq.elem.shape[split_axis + 1:]
    k = dims.ceil_div(n, s)
    if stack:
        axis = normalize_axis(node.attr_int("axis"), len(like) + 1)
        return Tensor(seq.elem.dtype, like[:axis] + (k,) + like[axis:])
    axis = normalize_axis(node.attr_int("axis"), len(like))
    total = n if axis == split_axis else dims.mul(k, like[axis])
    return Tensor(seq.elem.dtype, like[:axis] + (total,) + like[axis + 1:])


@register("ConcatFromSequence", conditions=["the items agree off the axis (with new_axis, on every axis)",
                                            "the sequence has an item", CFS_EMPTY, CFS_CHUNKS,
                                            _condition("the sequence has an item", "the sequence has an item, "
                                                       "and the items agree off the axis (every axis with "
                                                       "new_axis)")])
def concat_from_sequence_rule(node):
    seq = node.input(0)
    stack = node.attr_int("new_axis", 0) == 1
    n = _length(seq)
    if isinstance(n, int) and n == 0:
        raise ShapeContradiction("ConcatFromSequence of an empty sequence (onnxruntime needs an item)")
    if n is not None:
        node.require_at_least(n, 1, "ConcatFromSequence: the sequence has an item (onnxruntime refuses none)")
    items = seq.items if isinstance(seq, Sequence) and seq.items else None
    if items is not None and all(t.shape is not None for t in items) and len({t.rank for t in items}) == 1:
        # Every item has the same dims off the axis: a static one says which.
        # onnxruntime skips an item without elements and takes the dims from the first with
        # elements: where one may have none, those of the item concat_reference picks (else a
        # pick by the sizes, concat_dims), and the others agree with them or have none (CFS_EMPTY)
        empty = any(may_be_empty(t.shape) for t in items)
        ref = items[concat_reference([t.shape for t in items])]
        along = None if stack else normalize_axis(node.attr_int("axis"), len(ref.shape))
        like = concat_dims([t.shape for t in items], along) if empty else \
            tuple(next((d for d in col if isinstance(d, int)), col[0]) for col in zip(*(t.shape for t in items)))
        for t in items:  # (onnxruntime refuses items that differ there, 1 is no exception)
            if empty and (t is ref or may_be_empty(t.shape)):
                continue
            for i, (d, want) in enumerate(zip(t.shape, like)):
                if i != along:
                    node.require_equal(d, want, f"ConcatFromSequence: the items agree on axis {i}")
        if stack:
            axis = normalize_axis(node.attr_int("axis"), len(like) + 1)
            return [Tensor(items[0].dtype, like[:axis] + (len(items),) + like[axis:])]
        axis = normalize_axis(node.attr_int("axis"), len(like))
        total = 0
        for t in items:
            total = dims.add(total, t.shape[axis])
        return [Tensor(items[0].dtype, like[:axis] + (total,) + like[axis + 1:])]
    c = _chunks(node, seq)
    if c is not None:
        return [_concat_chunks(node, seq, stack, *c[:3])]
    item = any_item(node, seq)
    rank = len(shape_of(item, item.dtype, why="the items' rank is unknown")) + stack
    axis = normalize_axis(node.attr_int("axis"), rank)
    if stack and n is not None:
        count = n
    elif not stack and n is not None and node.is_resolved(item.shape[axis]):  # every item is as long
        count = dims.mul(n, item.shape[axis])
    else:
        count = node.fresh("the number of items is unknown" if stack else "the items' lengths are unknown", 0, axis)
    return [Tensor(item.dtype, item.shape[:axis] + (count,) + item.shape[axis + (0 if stack else 1):])]


@register("SequenceMap", conditions=["what its body's nodes need, under \"the body runs\""], subgraphs=True)
def sequence_map_rule(node):
    """The body runs once per item; tensor inputs are given whole to every run."""
    body = node.attr_graph("body")
    seqs = [v for v in node.inputs if isinstance(v, Sequence)]
    counts = {_count(s) for s in seqs}
    general = [any_item(node, v) if isinstance(v, Sequence) else v for v in node.inputs]
    per_item = None
    if len(counts) == 1 and None not in counts:
        n = counts.pop()
        per_item = [node.infer_graph(body, [v.items[i] if isinstance(v, Sequence) else v for v in node.inputs])
                    for i in range(n)]
    # Inferred last with an item of any position, so that the body's own values hold for every run.
    outs = node.infer_graph(body, general)
    if per_item is None:
        n = _length(seqs[0]) if seqs else None
        return [Sequence(o if isinstance(o, Tensor) else None, None, n) for o in outs]
    return [_of_items(node, [run[k] for run in per_item], output=k) for k in range(len(outs))]
