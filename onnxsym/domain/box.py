"""Whether a domain contains a box of sizes (``check --require seq=1:4096``), and if
not, the first condition that cuts it and a size where it fails."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import dims
from ..dims import Dim
from ..errors import UserInputError
from ..facts.fact import Rel, Relation
from . import guarded
from .forms import simplify
from .guarded import choose

if TYPE_CHECKING:
    from . import Condition


@dataclass(frozen=True)
class Cut:
    """``condition`` fails at ``point`` inside the box (``proven`` False: no size was
    found where it fails, but onnxsym cannot prove it holds on the whole box)."""

    condition: Condition
    point: dict[str, int]
    proven: bool = True

    def describe(self) -> str:
        c = self.condition
        at = ", ".join(f"{k} = {v}" for k, v in self.point.items())
        how = f"fails at {at}" if self.proven else f"not proven for the whole box (tried {at})"
        if self.proven and any(g.relation is None for g in c.when):
            how += " (and no choice of the data inputs runs every condition there)"
        assumed = f" (assumed: {c.assumed})" if c.assumed else ""
        return f"{guarded.prefix(c.when)}{c.text} from {c.sources[0]}{assumed}: {how}"


def check_box(domain, result, box: Mapping[str, tuple[int, int]]) -> Cut | None:
    """The first condition of ``domain`` that the ``box`` (symbol -> (lo, hi)) leaves, or None."""
    fixed_cut = _constant(domain, result, box)
    if fixed_cut is not None:
        return fixed_cut
    derived = result.derived_symbols()
    box = _on_roots(domain, result, {n: r for n, r in box.items() if not (isinstance(derived.get(n), int) and r[0] <= r[1])})
    for c in domain.conditions:
        if c.kind == "equal" or c.when or not set(c.symbols) & set(box):
            continue
        cut = _cuts(c, domain, box)
        if cut is not None:
            return cut
    # a condition under guards cuts a size only where no choice of the data runs it
    fixed = {s: lo for s, (lo, _) in domain.ranges.items() if s not in box}
    found = _guarded_cut(domain, box, fixed)
    return None if found is None else Cut(*found)


def _constant(domain, result, box) -> Cut | None:
    """The equality that fixes a required symbol to one size (a Squeeze of its axis: ``n == 1``),
    when the box holds another."""
    derived = result.derived_symbols()
    for name, (lo, hi) in box.items():
        k = derived.get(name)
        if isinstance(k, int) and (lo, hi) != (k, k) and lo <= hi:
            c = next((c for c in domain.conditions if c.kind == "equal" and c.symbols[0] == name), None)
            if c is not None:
                return Cut(c, {name: lo if lo != k else hi})
    return None


def _on_roots(domain, result, box) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    derived = result.derived_symbols()
    for name, (lo, hi) in box.items():
        if lo > hi:
            raise UserInputError(f"require[{name!r}] = ({lo}, {hi}): expected lo <= hi",
                                 f"--require {name}={lo}:{hi}: expected LO <= HI")
        target = name
        if name in derived:
            s = dims.as_sym(derived[name])
            if s is None:
                why = f"'{name}' is {derived[name]} in this model; require its symbols"
                raise UserInputError(f"require[{name!r}]: {why}", f"--require {name}: {why}")
            target = s.name
        if target not in domain.symbols:
            import difflib

            known = ", ".join(domain.symbols) or "none"
            near = difflib.get_close_matches(name, list(domain.symbols), n=1)
            why = (f"the model has no input symbol '{name}'" + (f"; did you mean '{near[0]}'?" if near else "")
                   + f" (its symbols: {known})")
            raise UserInputError(f"require[{name!r}]: {why}", f"--require {name}: {why}")
        if target in out:
            lo, hi = max(lo, out[target][0]), min(hi, out[target][1])
        out[target] = (lo, hi)
    return out


def _cuts(c, domain, box) -> Cut | None:
    f = c.form
    if c.kind == "range":
        lo, hi = box[f.symbol]
        for v in (lo, hi):
            if not f.holds({f.symbol: v}):
                return Cut(c, {f.symbol: v})
        return None
    if c.kind == "divisible":
        lo, hi = box[f.symbol]
        start = lo if f.below is None else max(lo, f.below + 1)  # (its small sizes hold; a period past them)
        for v in range(lo, min(hi, start + f.modulus - 1) + 1):
            if not f.holds({f.symbol: v}):
                return Cut(c, {f.symbol: v})
        return None
    fixed = {s: domain.ranges[s][0] for s in c.symbols if s not in box}
    names = [s for s in c.symbols if s in box]
    point = {}
    for corner in itertools.product(*[sorted(set(box[s])) for s in names]):
        point = dict(zip(names, corner), **fixed)
        if not c.holds(point):
            return Cut(c, {k: point[k] for k in c.symbols})
    if _proven(f, box, fixed):
        return None
    return Cut(c, {k: point[k] for k in c.symbols}, proven=False)


def _proven(f, box, fixed) -> bool:
    """``f`` holds for every size in the box (the other symbols at ``fixed``)."""
    def narrowed(d):
        mapping = {}
        for s in dims.free_symbols(d):
            if s.name in box:
                mapping[s] = dims.expr_of(s)  # built again under the box's range
            elif s.name in fixed:
                mapping[s] = fixed[s.name]
        return dims.substitute(d, mapping)
    # a decision only: nothing derived under the box's ranges leaves it
    with dims.current().child({name: tuple(r) for name, r in box.items()}):
        if f.rel == "or":
            return any(dims.try_eq(narrowed(a), narrowed(b)) is True for a, b in f.alts)
        if f.rel == "cases":
            return any(all((dims.try_le if rel == "<=" else dims.try_eq)(narrowed(a), narrowed(b)) is True
                           for rel, a, b in p) for p in f.pieces)
        lhs, rhs = narrowed(f.lhs), narrowed(f.rhs)
        return (dims.try_le(lhs, rhs) if f.rel == "<=" else dims.try_eq(lhs, rhs)) is True


# ------------------------------------------------------------------ conditions under guards

MAX_POINTS = 20000


def _guarded_cut(domain, box: Mapping[str, tuple[int, int]], fixed: Mapping[str, int]):
    """The first guarded condition that leaves some size of ``box`` outside the domain whatever
    the data choose, with that size, as ``(condition, point, proven)``; None when every size
    of the box is in. Exact where every guarded condition and guard is a range or residue
    condition on one symbol: the sizes tried are where any of them changes."""
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
    point: dict[str, int] = {}
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


def _as_raw(rel: Relation) -> tuple[str, Dim, Dim]:
    """``rel`` as :func:`.forms.simplify` reads it (``==``, ``!=`` or ``<=``)."""
    op, a, b = rel.op, rel.lhs, rel.rhs
    if op is Rel.LT:
        return "<=", dims.add(a, 1), b
    if op is Rel.GT:
        return "<=", dims.add(b, 1), a
    if op is Rel.GE:
        return "<=", b, a
    return op.value, a, b


def _breakpoints(span: tuple[int, int], forms) -> Iterator[int]:
    lo, hi = span
    starts = {lo}
    for f in forms:
        if f.kind == "range":
            starts |= {f.lo, f.hi + 1}
        if f.kind == "divisible" and f.below is not None:
            starts.add(f.below + 1)
    periods = [f.modulus for f in forms if f.kind == "divisible"]
    reach = math.lcm(*periods) if periods else 1
    out = set()
    for s in starts:
        for v in (s - 1, *range(s, s + reach)):
            if lo <= v <= hi:
                out.add(v)
    out.add(hi)
    return iter(out)
