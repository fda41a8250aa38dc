"""Conditions that hold only where a subgraph runs (an If's branch, a Loop's body).

A guarded condition ``if G: C`` comes from a node in a subgraph; its guards say when
that subgraph runs. A guard on the sizes (``seq > 8``) is decided by them; any other
(silero's ``sr == 16000``, "the body runs") is a choice the data make. A size is in the
domain when some choice lets every guarded condition that then applies hold: silero runs
512 samples at 16 kHz and 300 at 8 kHz, and 1000 at neither. Guards of one choice
(an If's then and else) exclude each other.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .. import dims
from ..constraints import Guard
from ..dims import Dim

if TYPE_CHECKING:
    from . import Condition

# The most data choices tried together (each doubles the work); past it, each guarded
# condition is taken alone: it cuts only where its guards are decided by the sizes.
MAX_CHOICES = 12


def free_keys(conditions: Sequence["Condition"]) -> List[tuple]:
    """The choices the data make, in the order first met."""
    return list(dict.fromkeys(g.key for c in conditions for g in c.when if g.relation is None))


def _applies(g: Guard, bindings: Mapping[str, int], chosen: Mapping[tuple, bool]) -> bool:
    decided = g.holds(bindings)
    return (chosen.get(g.key) == g.value) if decided is None else decided


def choose(conditions: Sequence["Condition"], bindings: Mapping[str, int]) -> Tuple[Optional[Dict[tuple, bool]],
                                                                                 Optional["Condition"]]:
    """A choice (key -> value) under which every guarded condition that applies holds at
    ``bindings``, or None and a guarded condition that fails there whatever the choice (the
    first that fails under the choice with the fewest failures)."""
    guarded = [c for c in conditions if c.when]
    keys = free_keys(guarded)
    if len(keys) > MAX_CHOICES:
        bad = next((c for c in guarded if all(g.holds(bindings) for g in c.when) and not c.holds(bindings)), None)
        return ({} if bad is None else None), bad
    best: Optional[Tuple[int, "Condition"]] = None
    for values in itertools.product((True, False), repeat=len(keys)):
        chosen = dict(zip(keys, values))
        failing = [c for c in guarded if all(_applies(g, bindings, chosen) for g in c.when) and not c.holds(bindings)]
        if not failing:
            return chosen, None
        if best is None or len(failing) < best[0]:
            best = (len(failing), failing[0])
    return None, (best[1] if best else None)


def feeds(conditions: Sequence["Condition"], chosen: Mapping[tuple, bool]) -> Dict[str, object]:
    """Graph-input values that make the ``chosen`` data choices (where a guard says how)."""
    out: Dict[str, object] = {}
    for c in conditions:
        for g in c.when:
            if g.relation is None and g.key in chosen:
                out.update(dict(g.feed if chosen[g.key] == g.value else g.feed_not))
    return out


def prefix(when: Sequence[Guard]) -> str:
    """``if sr == 16000: `` for a condition under those guards."""
    return "if " + " and ".join(g.text for g in when) + ": " if when else ""


# ------------------------------------------------------------------ a box of sizes

MAX_POINTS = 20000


def box_cut(domain, box: Mapping[str, Tuple[int, int]], fixed: Mapping[str, int]):
    """The first guarded condition that leaves some size of ``box`` outside the domain whatever
    the data choose, with that size, as ``(condition, point, proven)``; None when every size
    of the box is in. Exact where every guarded condition and guard is a range or residue
    condition on one symbol: the sizes tried are where any of them changes."""
    from .forms import simplify

    guarded = [c for c in domain.conditions if c.when]
    if not guarded:
        return None
    forms = [c.form for c in guarded if c.form is not None]
    # what is not a range or residue condition is exact only where its branch's ranges prove it
    unproven = [c for c in guarded if c.kind not in ("range", "divisible") and not _implied(c, guarded, box, fixed)]
    exact = not unproven
    for c in guarded:
        for g in c.when:
            if g.relation is not None:
                got = simplify(*_as_raw(g.relation))
                exact = exact and all(f.kind in ("range", "divisible") for f in got)
                forms += got
    names = sorted(set(box) & {s for c in guarded for s in c.symbols} | {f.symbol for f in forms if f.symbol in box})
    axes = [sorted(_breakpoints(box[n], [f for f in forms if f.kind != "other" and f.symbol == n])) for n in names]
    total = 1
    for a in axes:
        total *= len(a)
    if total > MAX_POINTS:
        axes = [sorted({box[n][0], box[n][1]}) for n in names]
        exact = False
    point: Dict[str, int] = {}
    for corner in itertools.product(*axes):
        point = {**fixed, **dict(zip(names, corner))}
        _, bad = choose(guarded, point)
        if bad is not None:
            return bad, {k: point[k] for k in bad.symbols if k in point}, True
    if exact:
        return None
    c = unproven[0] if unproven else guarded[0]
    return c, {k: point[k] for k in c.symbols if k in point}, False


def _implied(c, guarded, box, fixed) -> bool:
    """Whether ``c`` holds wherever the range conditions under the same guards do, in ``box``."""
    from .box import _proven

    if c.form is None:
        return False
    sub = dict(box)
    for r in guarded:
        if r.kind == "range" and r.when == c.when and r.form.symbol in sub:
            lo, hi = sub[r.form.symbol]
            sub[r.form.symbol] = (max(lo, r.form.lo), min(hi, r.form.hi))
    if any(lo > hi for lo, hi in sub.values()):
        return True
    try:
        return _proven(c.form, sub, fixed)
    except Exception:  # (an algebra that cannot decide: unproven)
        return False


def _as_raw(rel: Tuple[str, Dim, Dim]):
    op, a, b = rel
    if op == "<":
        return "<=", dims.add(a, 1), b
    if op == ">":
        return "<=", dims.add(b, 1), a
    if op == ">=":
        return "<=", b, a
    return op, a, b


def _breakpoints(span: Tuple[int, int], forms) -> Iterator[int]:
    lo, hi = span
    starts = {lo}
    for f in forms:
        if f.kind == "range":
            starts |= {f.lo, f.hi + 1}
    periods = [f.modulus for f in forms if f.kind == "divisible"]
    reach = math.lcm(*periods) if periods else 1
    out = set()
    for s in starts:
        for v in (s - 1, *range(s, s + reach)):
            if lo <= v <= hi:
                out.add(v)
    out.add(hi)
    return iter(out)
