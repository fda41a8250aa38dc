"""Shape helpers that rules share: axes, products and broadcasting."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial

from .. import dims
from ..dims import Dim
from ..errors import ShapeContradiction

Shape = tuple[Dim, ...]


def normalize_axis(axis: int, rank: int) -> int:
    """An axis in ``[-rank, rank)`` as a non-negative index."""
    if not -rank <= axis < rank:
        raise ShapeContradiction(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def prod(ds: Iterable[Dim]) -> Dim:
    out: Dim = 1
    for d in ds:
        out = dims.mul(out, d)
    return out


def total(ds: Iterable[Dim]) -> Dim:
    """The sum of dims (0 for none)."""
    out: Dim = 0
    for d in ds:
        out = dims.add(out, d)
    return out


# (a dim against 1 is asked at every broadcast of it: remembered in the environment, eq_verdict)
def _is_one(d: Dim) -> bool:
    return d == 1 or (not isinstance(d, int) and dims.eq_verdict(d, 1) is True)


def broadcast_dim(ds: Sequence[Dim], fresh: Callable[[str], Dim],
                  require_equal: Callable[[Dim, Dim, str], None] | None = None) -> Dim:
    """The broadcast of dims that stand at one axis (numpy rules).

    Every dim that is not 1 must equal every other dim that is not 1, so a static
    dim other than 1 decides the result; a dim provably not 1 decides it too. Two
    different dims that both may be 1 broadcast to their ``max`` (exact in every
    valid case), times ``min(d, 1)`` for each dim ``d`` that may be 0. Two dims both
    provably not 1 must agree: ``require_equal`` (a node's) records that.
    """
    rest: list[Dim] = []
    for d in ds:
        if not _is_one(d) and not any(dims.same(d, r) for r in rest):
            rest.append(d)
    if not rest:
        return 1
    if len(rest) == 1:
        return rest[0]
    statics = {d for d in rest if isinstance(d, int)}
    if len(statics) > 1:
        raise ShapeContradiction(f"cannot broadcast dims {sorted(statics)}")
    decided: Dim | None
    if statics:
        decided = statics.pop()
    else:
        not_one = [d for d in rest if dims.eq_verdict(d, 1) is False]
        decided = not_one[0] if not_one else None
    if decided is not None:
        for d in rest:
            if not dims.same(d, decided) and dims.eq_verdict(d, 1) is False:
                if dims.try_eq(d, decided) is False:
                    raise ShapeContradiction(f"cannot broadcast dim {d} against {decided}")
                if require_equal is not None:
                    require_equal(d, decided, "broadcast of two dims that are not 1")
        return decided
    if all(dims.range_of(d)[0] >= 0 or dims.try_le(0, d) is True for d in rest):
        # A 0 broadcasts only against 1s (and 0s), giving 0: each dim that may be 0
        # contributes a factor min(d, 1), which the ranges drop for dims known >= 1. (A
        # position table sliced to min(64, past + seq) - min(64, past) is never negative, and
        # never more than seq: against seq it broadcasts to seq*min(1, that).)
        out = dims.dmax(*rest)
        for d in rest:
            if dims.range_of(d)[0] < 1 and dims.try_le(1, d) is not True:
                out = dims.mul(dims.dmin(d, 1), out)
        return out
    return fresh("broadcast of dims that may be negative: " + ", ".join(str(d) for d in rest))


def broadcast_shapes(shapes: Sequence[Shape], fresh: Callable[[int, str], Dim],
                     require_equal: Callable[[Dim, Dim, str], None] | None = None) -> Shape:
    """Multidirectional (numpy) broadcasting of several shapes."""
    rank = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    if len(padded) == 2 and padded[0] == padded[1]:
        return padded[0]
    out: list[Dim] = []
    for axis in range(rank):
        col = [s[axis] for s in padded]
        out.append(broadcast_dim(col, partial(fresh, axis), require_equal))
    return tuple(out)
