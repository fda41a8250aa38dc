"""``onnxsym diff OLD NEW``: the symbolic contract of two versions of a model, compared.

A model's contract is what its callers rely on: the graph inputs' and outputs' shapes as
expressions over the input symbols, the sizes it runs at (its domain), which dims it leaves
unresolved, which declared symbols its graph pins, and at a stated binding what it costs.
Symbols renamed by a re-export (``batch`` -> ``s0``) are matched by their position in the
graph inputs.

Every finding is shown by a witness, sizes inside the old model's domain at which the two
differ: a re-export that made a dim static, narrowed the domain, pinned a symbol, left a dim
unresolved or grew the KV cache. Two expressions that print differently but agree at every
size tried are not a finding.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import dims
from ..dims import Dim

# The sizes each symbol is tried at (within its range): edges, small and round numbers.
_TRIED = (0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 100, 127, 128, 255, 256, 1000, 1024, 4096)
_POINTS = 400  # sampled assignments, at most
_HUGE = 1 << 20  # a range's top beyond this is tried at this


@dataclass
class Contract:
    path: str
    inputs: dict[str, tuple[Dim, ...] | None]
    outputs: dict[str, tuple[Dim, ...] | None]
    symbols: list[str]  # the graph-input symbols, in declaration order
    domain: object  # onnxsym.domain.Domain
    derived: dict[str, Dim]
    pins: list  # onnxsym.domain.pins.Pin
    unresolved: list[str]  # "value[axis]" places
    fresh: frozenset  # names of fresh symbols
    cost: dict[str, int | None] = field(default_factory=dict)  # at the stated binding
    # each graph input's and output's element type (onnx.TensorProto's number; None: not a tensor or unknown)
    types: dict[tuple[str, str], int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Change:
    """One difference between the contracts. ``finding``: it breaks a caller (exit 1)."""

    kind: str  # input, output, domain, pinned, unresolved, cost
    place: str
    old: str
    new: str
    why: str
    finding: bool

    def describe(self) -> str:
        return f"{self.kind} {self.place}: {self.old} -> {self.new} ({self.why})"

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "place": self.place, "old": self.old, "new": self.new, "why": self.why,
                "finding": self.finding}


def contract_of(path: str, bind: Mapping[str, int] | None = None, **infer_kw) -> Contract:
    """Infer ``path`` and read its contract; the cost at ``bind`` when given."""
    from ..api import infer
    from ..domain import input_symbols
    from ..domain.pins import pins_of
    from ..inference.values import Tensor

    result = infer(path, **infer_kw).within_domain()
    with result.env:
        g = result.model.graph
        inits = {t.name for t in g.initializer}

        def shape(name):
            v = result.values.get(name)
            return v.shape if isinstance(v, Tensor) else None

        def dtype(name):
            v = result.values.get(name)
            return v.dtype if isinstance(v, Tensor) and v.dtype else None

        domain = result.domain()
        c = Contract(path, {i.name: shape(i.name) for i in g.input if i.name not in inits},
                     {o.name: shape(o.name) for o in g.output}, input_symbols(result), domain,
                     result.derived_symbols(), pins_of(result, domain),
                     [f"{u.value}[{u.axis}]" if u.axis is not None else f"{u.value} (rank)" for u in result.unresolved()],
                     frozenset(result.fresh))
        c.types = {**{("input", name): dtype(name) for name in c.inputs},
                   **{("output", name): dtype(name) for name in c.outputs}}
    if bind:
        c.cost = cost_at(path, bind, infer_kw)
    return c


def cost_at(path: str, bind: Mapping[str, int], infer_kw) -> dict[str, int | None]:
    from ..api import infer

    result = infer(path, bind=dict(bind), **infer_kw)
    with result.env:
        cost = result.cost()
        kv = cost.kv_cache

        def number(d):
            return d if isinstance(d, int) else None

        return {"parameters": number(cost.param_bytes), "kv_cache": None if kv is None else number(kv),
                "peak": number(cost.peak)}


# ---------------------------------------------------------------- matching and sampling

def symbol_map(old: Contract, new: Contract) -> dict[str, str]:
    """Old symbol name -> new one, from the graph inputs both have, axis by axis."""
    out: dict[str, str] = {}
    taken = set()
    for name, o in old.inputs.items():
        n = new.inputs.get(name)
        if o is None or n is None or len(o) != len(n):
            continue
        for a, b in zip(o, n):
            sa, sb = dims.as_sym(a), dims.as_sym(b)
            if sa is not None and sb is not None and sa.name not in out and sb.name not in taken:
                out[sa.name] = sb.name
                taken.add(sb.name)
    for s in old.symbols:  # the same name in both, not matched by position
        if s not in out and s in new.symbols and s not in taken:
            out[s] = s
            taken.add(s)
    return out


def _complete(point: dict[str, int], derived: Mapping[str, Dim]) -> dict[str, int] | None:
    """``point`` with the derived symbols it lacks computed from their definitions."""
    out = dict(point)
    for _ in range(len(derived) + 1):
        missing = [n for n in derived if n not in out]
        if not missing:
            return out
        for n in missing:
            try:
                out[n] = dims.evaluate(derived[n], out)
            except (KeyError, ZeroDivisionError):
                continue
    return out if all(n in out for n in derived) else None


def _holds(domain, point: Mapping[str, int], required_only: bool = False):
    """The first condition of ``domain`` that ``point`` breaks, or None (an unevaluable one holds).
    ``required_only``: only conditions a node needs, not those onnxsym assumes."""
    for c in domain.conditions:
        if required_only and c.assumed:
            continue
        try:
            if not c.holds(point):
                return c
        except (KeyError, ZeroDivisionError):
            continue
    return None


def _candidates(lo: int, hi: int) -> list[int]:
    top = min(hi, _HUGE)
    return sorted({v for v in _TRIED if lo <= v <= top} | {lo, top} | ({lo + 1} if lo < top else set()))


def old_points(old: Contract, seed: int = 0) -> list[dict[str, int]]:
    """Assignments of the old model's symbols inside its domain: each root symbol at its edges
    and at small and round sizes, the derived ones computed."""
    roots = [s for s in old.symbols if s not in old.derived]
    ranges = old.domain.ranges  # type: ignore[attr-defined]
    values = {s: _candidates(*ranges.get(s, (1, dims.INT64_MAX))) for s in roots}
    rng = random.Random(seed)
    tried = [{s: vs[min(i, len(vs) - 1)] for s, vs in values.items()} for i in range(3)]  # the low corner
    tried += [{s: rng.choice(vs) for s, vs in values.items()} for _ in range(_POINTS)]
    out, seen = [], set()
    for p in tried:
        full = _complete(p, old.derived)
        key = tuple(sorted((full or {}).items()))
        if full is None or key in seen or _holds(old.domain, full) is not None:
            continue
        seen.add(key)
        out.append(full)
    return out


def _to_new(point: Mapping[str, int], names: Mapping[str, str], new: Contract) -> dict[str, int] | None:
    given = {names[k]: v for k, v in point.items() if k in names}
    for s in new.symbols:  # a symbol only the new model has: at its lowest size
        if s not in given and s not in new.derived:
            given[s] = new.domain.ranges.get(s, (1, 1))[0]  # type: ignore[attr-defined]
    # the new model's derived symbols keep what the old point says (a pin is then broken)
    return _complete(given, {k: v for k, v in new.derived.items() if k not in given})


def _value(d: Dim, point: Mapping[str, int]) -> int | None:
    try:
        return dims.evaluate(d, point)
    except (KeyError, ZeroDivisionError):
        return None


def _text(point: Mapping[str, int], symbols) -> str:
    return ", ".join(f"{s}={point[s]}" for s in symbols if s in point)


# ---------------------------------------------------------------- the comparison

def compare(old: Contract, new: Contract) -> list[Change]:
    names = symbol_map(old, new)
    points = old_points(old)
    pairs = [(p, q) for p in points for q in (_to_new(p, names, new),) if q is not None]
    valid = [(p, q) for p, q in pairs if _holds(new.domain, q, required_only=True) is None]
    changes: list[Change] = []
    for kind, o_vals, n_vals in (("input", old.inputs, new.inputs), ("output", old.outputs, new.outputs)):
        changes += _types(kind, o_vals, old, new)
        changes += _values(kind, o_vals, n_vals, old, new, valid)
    changes += _domain(old, new, pairs)
    changes += _pins(old, new, names)
    changes += _unresolved(old, new)
    changes += _costs(old, new)
    return changes


def _types(kind, o_vals, old: Contract, new: Contract) -> list[Change]:
    """Each input or output both have whose element type changed: an old caller's feed (float32
    where float16 is now declared) fails, or it reads another type."""
    out = []
    for name in o_vals:
        a, b = old.types.get((kind, name)), new.types.get((kind, name))
        if a is not None and b is not None and a != b:
            why = ("an old caller's feed of this type fails" if kind == "input"
                   else "an old caller reads another type")
            out.append(Change(kind, name, _type_text(a), _type_text(b), f"another element type: {why}", True))
    return out


def _type_text(dtype: int) -> str:
    import onnx

    try:
        return onnx.TensorProto.DataType.Name(dtype).lower()
    except ValueError:
        return str(dtype)


def _values(kind, o_vals, n_vals, old: Contract, new: Contract, valid) -> list[Change]:
    out = []
    for name, o in o_vals.items():
        if name not in n_vals:
            out.append(Change(kind, name, _shape_text(o), "(none)", f"the new model has no {kind} '{name}'", True))
            continue
        n = n_vals[name]
        if o is None or n is None:
            if (o is None) != (n is None):
                out.append(Change(kind, name, _shape_text(o), _shape_text(n), "the rank is no longer known"
                                  if n is None else "the rank is now known", n is None))
            continue
        if len(o) != len(n):
            out.append(Change(kind, name, _shape_text(o), _shape_text(n), "another rank", True))
            continue
        for axis, (a, b) in enumerate(zip(o, n)):
            change = _dim_change(kind, f"{name}[{axis}]", a, b, old, new, valid)
            if change is not None:
                out.append(change)
    for name, n in n_vals.items():
        if name not in o_vals:
            out.append(Change(kind, name, "(none)", _shape_text(n), f"a new {kind}", kind == "input"))
    return out


def _dim_change(kind, place, a: Dim, b: Dim, old: Contract, new: Contract, valid) -> Change | None:
    old_fresh = bool({s.name for s in dims.free_symbols(a)} & old.fresh)
    new_fresh = bool({s.name for s in dims.free_symbols(b)} & new.fresh)
    if new_fresh:
        return None if old_fresh else Change(kind, place, str(a), str(b), "no longer resolved", True)
    if old_fresh:
        return Change(kind, place, str(a), str(b), "now resolved", False)
    for p, q in valid:
        va, vb = _value(a, p), _value(b, q)
        if va is not None and vb is not None and va != vb:
            at = _text(p, old.symbols)
            if dims.is_static(b) and not dims.is_static(a):
                return Change(kind, place, str(a), str(b), f"became static: at {at} the old model gives {va}", True)
            return Change(kind, place, str(a), str(b), f"at {at}: old {va}, new {vb}", True)
    return None


def _domain(old: Contract, new: Contract, pairs) -> list[Change]:
    """Sizes the old model runs at and the new one does not: one change per condition that cuts."""
    out, seen = [], set()
    for p, q in pairs:
        c = _holds(new.domain, q, required_only=True)
        if c is None or c.text in seen:
            continue
        seen.add(c.text)
        src = c.sources[0]
        out.append(Change("domain", c.text, "holds", "required", f"narrowed: at {_text(p, old.symbols)} the old "
                          f"model runs, the new one needs {c.text} ({src})", True))
    return out


def _pins(old: Contract, new: Contract, names: Mapping[str, str]) -> list[Change]:
    back = {v: k for k, v in names.items()}
    had = {(p.symbol, p.values, p.tied_to): p for p in old.pins}
    has = set()
    out = []
    for p in new.pins:
        sym = back.get(p.symbol, p.symbol)
        tied = None if p.tied_to is None else back.get(p.tied_to, p.tied_to)
        has.add((sym, p.values, tied))
        if (sym, p.values, tied) not in had:
            out.append(Change("pinned", sym, "dynamic", p.what, f"{p.op_type} '{p.node}': {p.reason}", True))
    for key, p in had.items():
        if key not in has:
            out.append(Change("pinned", p.symbol, p.what, "dynamic", "the new model no longer pins it", False))
    return out


def _unresolved(old: Contract, new: Contract) -> list[Change]:
    added = [u for u in new.unresolved if u not in set(old.unresolved)]
    if len(new.unresolved) <= len(old.unresolved) and not added:
        return []
    grew = len(new.unresolved) > len(old.unresolved)
    shown = ", ".join(added[:5]) + (f" and {len(added) - 5} more" if len(added) > 5 else "")
    return [Change("unresolved", "dims", str(len(old.unresolved)), str(len(new.unresolved)),
                   f"new: {shown}" if added else "more unresolved dims", grew)]


def _costs(old: Contract, new: Contract) -> list[Change]:
    out = []
    for key in ("parameters", "kv_cache", "peak"):
        a, b = old.cost.get(key), new.cost.get(key)
        if a is None or b is None or a == b:
            continue
        grew = b > a
        out.append(Change("cost", key, f"{a} bytes", f"{b} bytes",
                          f"{'grew' if grew else 'shrank'} {b / a:.2f}x" if a else ("grew" if grew else "shrank"),
                          key == "kv_cache" and grew))
    return out


def _shape_text(s) -> str:
    return "(rank unknown)" if s is None else "[" + ", ".join(str(d) for d in s) + "]"
