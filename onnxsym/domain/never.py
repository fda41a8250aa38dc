"""Conditions that hold at no size: a contradiction, as inference raises one.

A node's condition over constants only (``5 < 4``: a constant index past a static axis;
``7 == 13``) or whose range is empty is no condition on the sizes: the node fails at every
size, and so does the model (onnxruntime refuses it whatever its inputs). The domain raises
:class:`onnxsym.errors.ShapeContradiction` naming the node, as inference does for ``3 == 4``,
instead of keeping a condition nothing meets. Only an unguarded condition a node needs is one:
under a guard it says the subgraph cannot run (its guard must not hold), and an assumed one is
onnxsym's reliance, not the model's need.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ShapeContradiction
from ..inference.values import Tensor
from .forms import Form
from .needs import Raw


def nowhere(form: Form) -> bool:
    """Whether ``form`` holds at no size: over no symbol and false, or an empty range or
    residue set."""
    if form.kind == "range":
        return form.lo > form.hi
    if form.kind == "divisible":
        return not form.residues and form.below is None
    if form.symbols:
        return False
    return not form.holds({})


def contradiction(raw: Raw, values: Mapping[str, object], inputs: list[str] | None) -> ShapeContradiction:
    """The error for ``raw``, a condition that holds at no size; ``inputs``: the node's input
    names (where known), whose shapes ``values`` gives, said as the context."""
    c = raw.fact
    if raw.alts:
        (a, b), rest = raw.alts[0], raw.alts[1:]
        text = f"{a} == {b}" + (f" (or {' or '.join(f'{x} == {y}' for x, y in rest)})" if rest else "")
    else:
        text = f"{c.lhs} {c.rel.value} {c.rhs}"
    parts = []
    for x in inputs or ():
        v = values.get(x) if x else None
        if isinstance(v, Tensor) and v.shape is not None:
            parts.append(f"'{x}' [{', '.join(map(str, v.shape))}]")
    context = "inputs: " + ", ".join(parts) if parts else ""
    why = c.reason if not c.reason.endswith(text) else c.reason[:-len(text)].rstrip(": ")
    return ShapeContradiction(f"requires {text} ({why}): this holds at no size", node=c.node, op_type=c.op_type,
                              context=context)


def empty(domain, base: Mapping[str, tuple[int, int]]) -> None:
    """Raise a contradiction where the unguarded conditions a node needs of one symbol leave it
    no size (``n >= 6`` from a constant index 5, ``n == 3 (or n == 1)`` from an Expand to 3): the
    model fails at every size. Decided as :mod:`.pins` decides its few sizes (a range, the sizes a
    disjunction of equalities lists, a range small enough to try each size); else left alone.
    One the forms leave undecided (``seq*(seq//4) == 11 (or seq*(seq//4) == 1)``, a broadcast
    against 11) is needed by its node all the same, and evaluated exactly: it counts, as it does
    for a pin; only a reliance of onnxsym's (a float32 bound, a declared dim) does not."""
    from . import UNDECIDED
    from .pins import ENUMERATED, holds_at, listed_sizes

    for name in domain.symbols:
        own = [c for c in domain.conditions if c.symbols == (name,) and not c.when and c.assumed in ("", UNDECIDED)]
        if not own:
            continue
        lo, hi = base.get(name, (0, 2**63 - 1))
        for c in own:
            if c.kind == "range" and c.form is not None:
                lo, hi = max(lo, c.form.lo), min(hi, c.form.hi)
        if lo <= hi:
            listed = [s for s in (listed_sizes(c, name, lo, hi) for c in own) if s is not None]
            if listed:
                candidates = sorted(v for v in set.intersection(*listed) if lo <= v <= hi)
            elif hi - lo + 1 <= ENUMERATED:
                candidates = list(range(lo, hi + 1))
            else:
                continue
            if any(all(holds_at(c, name, v) for c in own) for v in candidates):
                continue
        cut = [c for c in own if c.kind == "range"] or own
        first, *rest = cut + [c for c in own if c not in cut]
        src = first.sources[0]
        together = " and ".join(f"{c.text} ({c.sources[0]})" for c in [first, *rest][1:4])
        raise ShapeContradiction(f"requires {first.text} ({src.reason})" + (f", with {together}," if together else "")
                                 + f" which leave {name} no size", node=src.node, op_type=src.op_type)
