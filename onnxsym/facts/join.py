"""The join of values of which any one may be the real one: the branches of an
If, the items of a sequence. What all agree on is kept; a dim on which they
differ becomes a fresh symbol whose range covers them all."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence as Seq

from .. import dims
from ..dims import Dim
from ..inference.values import Opaque, Optional_, Sequence, Tensor, Value, unranked

# fresh(axis, reason, lo, hi) -> a new symbol
Fresh = Callable[[int, str, int, int], Dim]


def join_dim(ds: Seq[Dim], axis: int, fresh: Fresh, why: str) -> Dim:
    if all(dims.same(d, ds[0]) for d in ds):
        return ds[0]
    ranges = [dims.range_of(d) for d in ds]
    return fresh(axis, f"{why}: " + ", ".join(map(str, ds)), min(r[0] for r in ranges), max(r[1] for r in ranges))


def join_tensors(ts: Seq[Tensor | None], fresh: Fresh, why: str) -> Tensor:
    dtype = next((t.dtype for t in ts if t is not None and t.dtype), 0)
    tensors = [t for t in ts if t is not None]
    shapes = [t.shape for t in tensors if t.shape is not None]
    if len(shapes) < len(ts) or len({len(s) for s in shapes}) > 1:
        return unranked(dtype)
    shape = tuple(join_dim([s[a] for s in shapes], a, fresh, why) for a in range(len(shapes[0])))
    value = tensors[0].value if all(t.value == tensors[0].value for t in tensors) else None
    return Tensor(dtype, shape, value)


def join_sequences(ss: Seq[Sequence], fresh: Fresh, why: str) -> Sequence:
    items = None
    first_items = ss[0].items
    if first_items is not None and all(s.items is not None and len(s.items) == len(first_items) for s in ss):
        items = tuple(join_tensors(col, fresh, why) for col in zip(*(s.items for s in ss)))
    first = ss[0].count
    length = first if first is not None and all(s.count is not None and dims.same(s.count, first) for s in ss) else None
    filled = [s for s in ss if s.items != ()]  # an empty sequence says nothing of an item
    if not filled:
        return Sequence(ss[0].elem, items, length)
    elems = [s.elem for s in filled]
    elem = None if None in elems else join_tensors(elems, fresh, why)
    # (pieces of one split stay pieces of it: the same axis, length and split in every branch)
    same = ss[0].chunks is not None and all(s.chunks == ss[0].chunks for s in ss)
    return Sequence(elem, items, length, ss[0].chunks if same and elem == ss[0].elem else None)


def join(vs: Seq[Value | None], fresh: Fresh, why: str) -> Value | None:
    """The join of ``vs``; ``None`` when they are not all of one kind."""
    tensors = [v for v in vs if isinstance(v, Tensor)]
    if len(tensors) == len(vs):
        return join_tensors(tensors, fresh, why)
    seqs = [v for v in vs if isinstance(v, Sequence)]
    if len(seqs) == len(vs):
        return join_sequences(seqs, fresh, why)
    optionals = [v for v in vs if isinstance(v, Optional_)]
    if len(optionals) == len(vs):
        elems = [v.elem for v in optionals]
        return Optional_(None if None in elems else join(elems, fresh, why))
    if all(isinstance(v, Opaque) for v in vs):
        return vs[0]
    return None
