"""The valid input domain of a model: for which sizes of its input symbols every
node's shape is valid.

:func:`compute` collects what the nodes need (:mod:`.collect`), simplifies each
condition to a range, a divisibility, an equality or what does not simplify
(:mod:`.forms`), and merges conditions that read the same, keeping every node they
come from. A condition is *required* when the named node fails (or its shape
changes) outside it, *assumed* when onnxsym relies on it without knowing that
(a float32 bound, a declared dim): ``assumed`` says why. A condition from a subgraph
that may not run holds only under that subgraph's guards (``when``; see :mod:`.guarded`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .. import dims
from ..dims import Dim
from ..facts.fact import Guard, Origin, Rel
from ..inference.symbols import under_ranges_of_result
from . import guarded, never
from .collect import Raw, raw_conditions
from .forms import Form, ranges_of, simplify

# Why a condition that does not simplify is assumed rather than known to cut.
UNDECIDED = "onnxsym cannot decide for which sizes this holds"

_KIND_ORDER = {"range": 0, "divisible": 1, "equal": 2, "other": 3}


@dataclass(frozen=True)
class Source:
    """A node that needs a condition, and why."""

    node: str
    op_type: str
    reason: str

    def __str__(self) -> str:
        if not self.node:
            return self.reason
        return f"{self.op_type} '{self.node}': {self.reason}" if self.op_type else f"{self.node}: {self.reason}"


@dataclass(frozen=True)
class Condition:
    """One condition on the input symbols. ``kind``: range, divisible, equal or other."""

    kind: str
    text: str
    symbols: tuple[str, ...]
    sources: tuple[Source, ...]
    assumed: str = ""  # empty: a node needs it; else why onnxsym assumes it
    form: Form | None = field(default=None, compare=False)
    # equal: symbol == definition
    definition: Dim = field(default=0, compare=False)
    # it holds only where these guards do (a subgraph that may not run); empty: always
    when: tuple[Guard, ...] = ()

    def holds(self, bindings: Mapping[str, int]) -> bool:
        """Whether the condition itself holds at ``bindings`` (whatever its guards)."""
        if self.kind == "equal":
            return bindings[self.symbols[0]] == dims.evaluate(self.definition, dict(bindings))
        assert self.form is not None  # every other kind has one
        return self.form.holds(bindings)

    # What "assumed" means, said on the line (the reason follows, after the node).
    ASSUMED = "(assumed: onnxsym relies on it, not knowing that the model fails outside it)"
    # (one the forms leave undecided is needed by its node all the same: it is no reliance)
    UNDECIDED_NOTE = f"(assumed: the node needs it, but {UNDECIDED})"

    def describe(self) -> str:
        """One line: the condition, then where it comes from; an assumed one says what that means."""
        head = guarded.prefix(self.when) + ("assumed " if self.assumed else "") + self.text
        head += f" {self.UNDECIDED_NOTE if self.assumed == UNDECIDED else self.ASSUMED}" if self.assumed else ""
        return f"{head}: {self.sources[0]}" + (f" (and {len(self.sources) - 1} more)" if len(self.sources) > 1 else "")

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "condition": self.text, "symbols": list(self.symbols),
                "assumed": self.assumed or None,
                "when": [{"condition": g.text, "node": g.node, "op_type": g.op_type, "holds": g.value}
                         for g in self.when] or None,
                "sources": [{"node": s.node, "op_type": s.op_type, "reason": s.reason} for s in self.sources]}


@dataclass
class Domain:
    """The conditions of one model, over its input symbols, and the ranges they give."""

    symbols: tuple[str, ...]
    conditions: tuple[Condition, ...]
    ranges: dict[str, tuple[int, int]]
    # what nodes need of dims onnxsym could not resolve (a fresh symbol): not a condition on
    # the inputs it can state, so the sizes above may include some where those nodes fail
    unstated: tuple[tuple[str, Source], ...] = ()

    def violated(self, bindings: Mapping[str, int]) -> Condition | None:
        """The first condition that ``bindings`` (every input symbol) breaks, or None: a range
        of :attr:`ranges` first (a size below a symbol's own range, 0 where it starts at 1, is
        no size the conditions were stated over), as a range condition. A guarded one breaks
        only where no choice of the data lets the model run."""
        outside = self._outside_ranges(bindings)
        if outside is not None:
            return outside
        bad = next((c for c in self.conditions if not c.when and not c.holds(bindings)), None)
        return bad if bad is not None else guarded.choose(self.conditions, bindings)[1]

    def _outside_ranges(self, bindings: Mapping[str, int]) -> Condition | None:
        """A range condition for the first bound symbol outside its range, or None."""
        for name, (lo, hi) in self.ranges.items():
            v = bindings.get(name)
            if v is None or lo <= v <= hi:
                continue
            stated = next((c for c in self.conditions if c.kind == "range" and not c.when and c.symbols == (name,)
                           and not c.holds(bindings)), None)
            if stated is not None:
                return stated
            form = Form("range", name, lo, hi)
            text = form.text((lo - 1, hi + 1) if hi < dims.INT64_MAX else (lo - 1, hi))
            return Condition("range", text, (name,), (Source("", "", f"the range of {name} the domain is over"),),
                             form=form)
        return None

    def broken_by(self, bindings: Mapping[str, int]) -> str | None:
        """What sizes for some of the symbols (``bindings``: ``--bind``) break: the first
        unguarded condition over those symbols only that they break, or a range they fall
        outside, described; None where they break nothing stated."""
        for c in self.conditions:
            if c.when or not set(c.symbols) <= set(bindings):
                continue
            try:
                if not c.holds(bindings):
                    return c.describe()
            except (KeyError, ZeroDivisionError):
                continue
        for name, v in bindings.items():
            lo, hi = self.ranges.get(name, (v, v))
            if not lo <= v <= hi:
                from ..output.numbers import range_text

                return f"{name} in {range_text(lo, hi)}"
        return None
    def __str__(self) -> str:
        """The conditions, one a line as ``onnxsym domain`` prints them, then the ranges."""
        if not self.conditions and not self.unstated:
            return f"every size of {', '.join(self.symbols)}" if self.symbols else "static"
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return (f"<Domain over {', '.join(self.symbols) or 'no symbol'}: {len(self.conditions)} conditions"
                + (f", {len(self.unstated)} not stated" if self.unstated else "") + ">")

    def lines(self) -> list[str]:
        """The conditions as ``onnxsym domain`` prints them, then the ranges and what is not stated."""
        out = [c.describe() for c in self.conditions]
        from ..output.numbers import range_text  # (as show prints them: 2**63-1, no bound)

        out.append("ranges: " + ", ".join(f"{n} {range_text(lo, hi)}" for n, (lo, hi) in self.ranges.items()))
        return out + self.unstated_lines()

    def unstated_lines(self, limit: int = 5) -> list[str]:
        """What the domain leaves out: conditions over unresolved dims, each with its node."""
        out = [f"not stated: {text}: {src}" for text, src in self.unstated[:limit]]
        if len(self.unstated) > limit:
            out.append(f"... and {len(self.unstated) - limit} more not stated")
        return out

    def on_data(self) -> list[tuple[str, Source]]:
        """What the nodes need of the input data (split sizes read from a graph input add up to
        the axis): conditions the sizes cannot decide, so the domain cannot promise them."""
        return [(text, src) for text, src in self.unstated if text.endswith(DATA)]

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"symbols": list(self.symbols), "ranges": {n: list(r) for n, r in self.ranges.items()},
                                  "conditions": [c.to_json() for c in self.conditions]}
        if self.unstated:
            out["unstated"] = [{"condition": text, "node": src.node, "op_type": src.op_type, "reason": src.reason,
                                "data_dependent": text.endswith(DATA)} for text, src in self.unstated]
        return out


def input_symbols(result) -> list[str]:
    """The graph-input symbols (neither fresh nor declared on a produced value), in order."""
    origin = result.symbols.origin
    return [n for n in result.symbols.symbols
            if n not in result.fresh and not origin.get(n, "").startswith(("fresh", "declared"))]


@under_ranges_of_result
def compute(result) -> Domain:
    """The domain of an inference result."""
    names = input_symbols(result)
    derived = result.derived_symbols()  # eliminated symbols (a narrowed one keeps its name)
    roots = [n for n in names if n not in derived]
    base = {n: lo_hi for n, lo_hi in result.symbol_ranges().items() if n in roots}
    merged: dict[tuple, dict] = {}
    unstated: dict[tuple[str, str], tuple[str, Source]] = {}  # (condition, node) -> (what is said, where)
    simplified: dict[tuple, list[Form]] = {}  # each distinct raw condition simplified once (layers repeat them)
    data = data_inputs(result)
    for raw in raw_conditions(result):
        c = raw.fact
        read = (c.rel, c.origin is Origin.DEFAULT_RANGE, c.lhs, c.rhs, raw.alts, c.before)  # (what _forms reads)
        forms = simplified.get(read)
        if forms is None:
            if c.before:  # stated over the ranges before it narrowed them (wider: what holds there holds here)
                with result.env.child({n: (lo, hi) for n, lo, hi in c.before}):
                    forms = simplified[read] = _forms(raw)
            else:
                forms = simplified[read] = _forms(raw)
        src = Source(c.node, c.op_type, c.reason)
        when = tuple(_decidable(g, base) for g in c.when)
        unresolved = _unresolved_guard_symbols(result, c.when, base, data)
        if unresolved and not raw.data:
            # under a guard over a dim onnxsym could not resolve (not one the data decide): whether
            # it applies the sizes decide, by a dim the domain cannot state; taken as a data choice
            # it would never cut, so it is said not stated instead
            cond = guarded.prefix(when) + (raw.unstated or f"{c.lhs} {c.rel.value} {c.rhs}")
            unstated.setdefault((cond, src.node), (f"{cond}, under a guard over a dim onnxsym could not resolve "
                                                   f"({', '.join(unresolved)})", src))
            continue
        if raw.data:  # (of the input data: said, no condition on the sizes)
            said = guarded.prefix(when) + raw.data
            unstated.setdefault((said, src.node), (f"{said}, {DATA if raw.fed else UNFOLLOWED}", src))
            continue
        if raw.unstated:  # (a need no exact rule states: said, so the domain is not silently too wide)
            said = guarded.prefix(when) + raw.unstated
            unstated.setdefault((said, src.node), (said, src))
            continue
        for f in forms:
            if not c.when and not raw.assumed and never.nowhere(f):
                raise never.contradiction(raw, result.values, _node_inputs(result).get(c.node))
            if any(s not in base for s in f.symbols):
                # over a fresh symbol: not a condition on the inputs onnxsym can state, but
                # said, since the model may fail at sizes the conditions allow
                # (under a subgraph's guards too, said with them: what a branch or a body needs of
                # a count the data give, a Loop's trip count, holds only where it runs)
                if not raw.assumed and any(s in result.fresh for s in f.symbols):
                    cond = guarded.prefix(when) + f"{c.lhs} {c.rel} {c.rhs}"
                    said = guarded.prefix(when) if raw.states_condition else cond + ", "
                    why = DATA if _on_data(result, f.symbols, data) else "over a dim onnxsym could not resolve"
                    unstated.setdefault((cond, src.node), (f"{said}{why}", src))
                continue
            text = f.text(base.get(f.symbol, (1, dims.INT64_MAX)) if f.kind != "other" else (1, 0))
            if not f.symbols and not raw.alts:  # (false under a guard: as the node states it, 5 <= 3, not 2 <= 0)
                text = "never" if (c.lhs, c.rhs) == (0, 1) else f"{c.lhs} {c.rel.value} {c.rhs}"
            assumed = raw.assumed or (UNDECIDED if f.kind == "other" and not f.linear else "")
            key = (f.kind, text, when)
            if f.kind == "other" and f.rel == "==" and key not in merged:
                swapped = (f.kind, f"{f.rhs} == {f.lhs}", when)  # (one equality, as two nodes state it)
                key = swapped if swapped in merged else key
            _merge(merged, key, f, src, raw.order, assumed)
    for n, d in derived.items():
        if n in result.fresh:
            # a dim onnxsym could not resolve, solved by what a node needs of it (a Reshape's
            # element count): the model fails where it is otherwise, by sizes the domain cannot state
            src = _equality_source(result, n, equality_first=True)
            why = DATA if _on_data(result, (n,), data) else "over a dim onnxsym could not resolve"
            unstated.setdefault((f"{n} == {d}", src.node), (f"{n} == {d}, {why}", src))
    for n in names:
        if n in derived and all(s.name in base for s in dims.free_symbols(derived[n])):
            src = _equality_source(result, n)
            _merge(merged, ("equal", f"{n} == {derived[n]}", ()), None, src, -1, "", definition=derived[n], symbol=n)
    _merge_residues(merged, base)
    _fold_complements(merged)
    for key in [k for k in merged if k[2] and (k[0], k[1], ()) in merged]:
        del merged[key]  # (what holds wherever the model runs holds where a subgraph runs)
    conditions = _tightest([_condition(key, m) for key, m in merged.items()], base)
    conditions.sort(key=lambda c_order: (bool(c_order[0].assumed), _KIND_ORDER[c_order[0].kind], c_order[1]))
    ordered = tuple(c for c, _ in conditions)
    # (what a branch that may not run needs holds only when it runs: a range narrows only to
    # the sizes some choice of the data runs)
    ranges = guarded.hull_of_choices(ordered, ranges_of([c.form for c in ordered if c.kind == "range" and not c.when],
                                                        base))
    _unseen_inputs(result, unstated)
    domain = Domain(tuple(roots), ordered, ranges, tuple(unstated.values()))
    never.empty(domain, base)  # (conditions that together leave a symbol no size: a contradiction)
    return domain


# Said of a condition over a count the data give (split sizes read from a graph input, a
# NonZero's count): whether it holds depends on tensor elements, so the domain cannot promise it.
DATA = "data-dependent: it holds or not by the input data, which the domain cannot promise"
# Said of a condition on element values computed from what onnxsym could not follow.
UNFOLLOWED = "over element values onnxsym could not follow"


def _on_data(result, symbols, data: Mapping[str, list[str]]) -> bool:
    """Whether one of ``symbols`` is a fresh symbol the data decide (a count of theirs, or a
    size a node read from a graph input's elements: OneHot's depth)."""
    from ..inference.provenance import Kind

    fresh = [p for p in map(result.fresh.get, symbols) if p is not None]
    return any(p.kind is Kind.DATA_DEPENDENT for p in fresh) or any(p.node in data for p in fresh)


def _unseen_inputs(result, unstated: dict[tuple[str, str], tuple[str, Source]]) -> None:
    """A node that made a fresh dim because it could not see an input (a shape value,
    Resize's sizes) needs of that input what its op's conditions say, which the domain
    cannot state: said, once a node. So is a node of no rule whose outputs have no rank (a
    custom op): what it needs is unknown, and without the line the domain would read "every
    size". An op that needs nothing is left out, and so are counts
    the data give (NonZero's; what a node needs of data is no condition on the sizes)."""
    from ..inference.provenance import Kind
    from ..registry import rules

    seen = {src.node for _, src in unstated.values()}
    fed, when = data_inputs(result), _guards_of(result)
    bodies = rules.subgraph_ops()  # (what a Loop's or If's body needs is collected under its guard)
    no_rank = [p for p in result.unknown_rank.values() if p.kind is Kind.NO_RULE]
    for p in [*result.fresh.values(), *no_rank]:
        if p.node in seen or p.kind in (Kind.POLICY, Kind.DATA_DEPENDENT) or not p.op_type or p.op_type in bodies:
            continue
        found = [e for e in (rules.entry(d, p.op_type) for d in ("", "com.microsoft")) if e]
        entry = next((e for e in found if e.conditions is not None), found[0] if found else None)
        if entry is not None and entry.conditions == ():
            continue
        seen.add(p.node)
        needs = "what its op needs" if entry is not None else "what it needs (no rule)"
        data = fed.get(p.node)
        said = guarded.prefix(when.get(p.node, ())) + (
            f"{needs} of the input data ({', '.join(repr(n) for n in data)}), {DATA}" if data
            else f"{needs} of an input onnxsym could not see" if entry is not None
            else "what it needs of its inputs (no rule for its op)")
        unstated.setdefault(("", p.node), (said, Source(p.node, p.op_type, p.reason)))


def data_inputs(result) -> dict[str, list[str]]:
    """Per node (by label), the graph inputs it reads the elements of: what it needs of them (a
    Reshape's target, Range's bounds) is a condition on the data. A node of a subgraph (an If
    branch, a Loop body) reading the model's inputs, or its subgraph's own (a Loop's iteration,
    its carried state), counts too."""
    graph = result.model.graph
    inits = {t.name for t in graph.initializer}
    given = {i.name for i in graph.input if i.name not in inits}
    out: dict[str, list[str]] = {}
    _read_by(graph.node, given, out)
    for sub, _when, _own in result.subgraph_runs:
        _read_by(sub.node, given | {i.name for i in sub.input}, out)
    return out


def _read_by(nodes, given: set[str], out: dict[str, list[str]]) -> None:
    for i, n in enumerate(nodes):
        read = [x for x in n.input[1:] if x in given]  # (input 0 is what is reshaped, expanded, tiled...)
        if n.op_type == "ConstantOfShape" or n.op_type == "Range":
            read = [x for x in n.input if x in given]
        elif n.op_type == "Loop":  # (its trip count and first condition: how often the body runs)
            read = [x for x in n.input[:2] if x in given]
        if read:
            out.setdefault(n.name or f"{n.op_type}_{i}", read)


def _guards_of(result) -> dict[str, tuple[Guard, ...]]:
    """Per node of a subgraph (by label), the guards its subgraph runs under."""
    out: dict[str, tuple[Guard, ...]] = {}
    for sub, when, _own in result.subgraph_runs:
        for i, n in enumerate(sub.node):
            out.setdefault(n.name or f"{n.op_type}_{i}", tuple(when))
    return out


def _node_inputs(result) -> dict[str, list[str]]:
    """Per node of the main graph (by label), its input names: a contradiction's context."""
    return {n.name or f"{n.op_type}_{i}": list(n.input) for i, n in enumerate(result.model.graph.node)}


def _forms(raw: Raw) -> list[Form]:
    """The raw condition simplified (:func:`.forms.simplify`)."""
    c = raw.fact
    if raw.alts:
        return simplify("or", c.lhs, c.rhs, raw.alts)
    if c.rel is Rel.GE:
        if c.origin is Origin.DEFAULT_RANGE:  # stated even where its range says so: an assumption
            return simplify("atleast", c.lhs, c.rhs)
        return simplify("<=", c.rhs, c.lhs)
    return simplify(c.rel.value, c.lhs, c.rhs)


def _unresolved_guard_symbols(result, when, base, data: Mapping[str, list[str]]) -> list[str]:
    """The fresh symbols of ``when``'s relations that the data do not decide (a dim onnxsym
    could not resolve, which the sizes do): a guard over one is no choice of the data."""
    out: list[str] = []
    for g in when:
        if g.relation is None:
            continue
        syms = [s.name for s in dims.free_symbols(g.relation.lhs) | dims.free_symbols(g.relation.rhs)
                if s.name not in base and s.name in result.fresh]
        out += [s for s in sorted(syms) if s not in out and not _on_data(result, [s], data)]
    return out


def _decidable(g: Guard, base) -> Guard:
    """``g``, its relation dropped where it is not over the input symbols (a fresh symbol's
    value is the data's: the choice is theirs)."""
    if g.relation is None:
        return g
    a, b = g.relation.lhs, g.relation.rhs
    if all(s.name in base for s in dims.free_symbols(a) | dims.free_symbols(b)):
        return g
    return replace(g, relation=None)


def _merge(merged, key, form, src, order, assumed, definition=0, symbol=""):
    """One condition per text: its sources gathered; required when any source requires it."""
    m = merged.get(key)
    if m is None:
        merged[key] = {"form": form, "sources": [src], "order": order, "definition": definition, "symbol": symbol,
                       "assumed": assumed}
        return
    if src not in m["sources"]:
        m["sources"].append(src)
    if not assumed:
        m["assumed"] = ""


def _fold_complements(merged) -> None:
    """A condition stated under a guard and under its opposite (the same text in an If's then
    and else branches: both Pads of silero's two STFTs need ``sequence >= 97``) holds whichever
    runs: one condition without that guard, from both sources."""
    changed = True
    while changed:
        changed = False
        for key in list(merged):
            found = _complement(key, merged) if key in merged else None
            if found is None:
                continue
            twin, folded = found
            a, b = merged.pop(key), merged.pop(twin)
            for m in (a, b):
                for src in m["sources"]:
                    _merge(merged, folded, m["form"], src, m["order"], m["assumed"], m["definition"], m["symbol"])
            merged[folded]["order"] = min(merged[folded]["order"], a["order"], b["order"])
            changed = True


def _complement(key, merged):
    """The key of ``merged`` with ``key``'s condition under the same guards but one, which it has
    with the opposite value, and the key without that guard; None if there is none."""
    kind, text, when = key
    for other in merged:
        if other[:2] != (kind, text) or len(other[2]) != len(when):
            continue
        differ = [i for i, (g, h) in enumerate(zip(when, other[2])) if (g.key, g.value) != (h.key, h.value)]
        if len(differ) == 1 and when[differ[0]].key == other[2][differ[0]].key:
            i = differ[0]
            return other, (kind, text, when[:i] + when[i + 1:])
    return None


def _condition(key, m) -> tuple:
    kind, text, when = key
    assumed = m["assumed"]
    form = m["form"]
    symbols = (m["symbol"],) + tuple(sorted(s.name for s in dims.free_symbols(m["definition"]))) \
        if kind == "equal" else form.symbols
    return Condition(kind, text, symbols, tuple(m["sources"]), assumed, form, m["definition"], when), m["order"]


def _below(forms, residues, modulus: int, span: tuple[int, int]) -> int | None:
    """The largest ``t`` such that every size from the symbol's lowest to ``t`` meets every form
    (their small sizes together), where that goes past the sizes the residues allow; else None."""
    top = max((f.below for f in forms if f.below is not None), default=None)
    if top is None:
        return None
    t = span[0] - 1
    while t + 1 <= top and all(f.holds({forms[0].symbol: t + 1}) for f in forms):
        t += 1
    return t if t >= span[0] else None


def _merge_residues(merged, base) -> None:
    """The divisibility conditions on one symbol as one: the residues all allow, every source."""
    by_symbol: dict[tuple, list] = {}
    for key, m in merged.items():
        if key[0] == "divisible":  # (under the same guards)
            by_symbol.setdefault((m["form"].symbol, key[2]), []).append(key)
    for (name, when), keys in by_symbol.items():
        if len(keys) < 2:
            continue
        forms = [merged[k]["form"] for k in keys]
        modulus = 1
        for f in forms:
            modulus = math.lcm(modulus, f.modulus)
        residues = tuple(r for r in range(modulus) if all(f.residue_holds(r) for f in forms))
        form = Form("divisible", name, modulus=modulus, residues=residues, below=_below(forms, residues, modulus, base[name]))
        if not all(form.holds({name: v}) == all(f.holds({name: v}) for f in forms)
                   for v in range(base[name][0], max([f.below or 0 for f in forms] + [0]) + 2 * modulus)):
            continue  # the small sizes of each do not make one interval: kept apart
        ms = [merged.pop(k) for k in keys]
        first = min(ms, key=lambda m: m["order"])
        sources = [src for m in ms for src in m["sources"]]
        merged[("divisible", form.text(), when)] = {**first, "form": form, "sources": list(dict.fromkeys(sources)),
                                             "assumed": "" if any(not m["assumed"] for m in ms) else first["assumed"]}


def _tightest(conditions: list[tuple], base: dict[str, tuple[int, int]]) -> list[tuple]:
    """Range conditions without those others on the same symbol, under the same guards, imply
    (``seq <= 64`` beside ``seq <= 16``): the model fails at the tighter one first."""
    his: dict[tuple, int] = {}  # (symbol, guards) -> the tightest bound
    los: dict[tuple, int] = {}
    for c, _ in conditions:
        if c.kind == "range":
            f, k = c.form, (c.form.symbol, c.when)
            his[k] = min(his.get(k, f.hi), f.hi)
            los[k] = max(los.get(k, f.lo), f.lo)

    def kept(c) -> bool:
        if c.kind != "range":
            return True
        f, (lo, hi) = c.form, base[c.form.symbol]
        k = (f.symbol, c.when)
        if implied(c, k):
            return False
        if f.lo <= lo and f.hi >= hi:
            return True  # states the symbol's own range: an assumption inference relied on
        return (f.hi < hi and f.hi == his[k]) or (f.lo > lo and f.lo == los[k])

    def implied(c, k) -> bool:
        """Another one that a node needs is alone at least as tight on both sides (``192 <= n <= 703``
        implies ``n >= 192``; ``h >= 17`` implies ``h >= 5``); of two equal ones, the first stays. (An
        assumed one's form carries the range it was stated over: it implies nothing.)"""
        f = c.form
        return any(d is not c and not d.assumed and (d.form.symbol, d.when) == k and f.lo <= d.form.lo
                   and d.form.hi <= f.hi and ((d.form.lo, d.form.hi) != (f.lo, f.hi) or rank[id(d)] < rank[id(c)])
                   for d in ranges)

    ranges = [c for c, _ in conditions if c.kind == "range"]
    rank = {id(c): i for i, (c, _) in enumerate(conditions)}
    return [(c, order) for c, order in conditions if kept(c)]


def _equality_source(result, name: str, equality_first: bool = False) -> Source:
    """The first recorded constraint that mentions the eliminated symbol ``name`` (with
    ``equality_first``, the first equality that does, if any)."""
    mentions = [c for c in result.constraints
                if any(s.name == name for s in dims.free_symbols(c.lhs) | dims.free_symbols(c.rhs))]
    for c in sorted(mentions, key=lambda c: equality_first and c.rel is not Rel.EQ):
        return Source(c.node, c.op_type, f"{c.reason}: {c}")
    return Source("", "", "solved")
