"""``onnxsym check``: which dims of a model are unresolved, which of those the user
allows, and the report in text, JSON (docs/check-report.schema.json) or GitHub
Actions workflow commands."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..api import Result, UnresolvedDim, __version__, infer
from ..domain.pins import Pin, pins_of
from ..errors import OnnxsymError, UserInputError
from ..facts.declared import StaleDeclaration
from ..facts.edges import grouped
from ..inference.provenance import Kind
from ..inference.symbols import under_ranges_of_result
from .explain import Lineage


@dataclass(frozen=True)
class CheckOptions:
    allow_data_dependent: bool = False
    allow: tuple[str, ...] = ()  # glob patterns over fresh symbol names and the nodes that made them
    outputs_only: bool = False
    max_unresolved: int = 0
    allow_stale: bool = False  # a stale declaration (a declared shape the graph contradicts) passes
    # --require NAME=LO:HI: sizes the model's domain must contain, as (name, lo, hi)
    require: tuple[tuple[str, int, int], ...] = ()
    allow_pinned: tuple[str, ...] = ()  # glob patterns over declared symbols the domain may pin


@dataclass
class Entry:
    """One unresolved dim (or unknown rank, ``axis`` None) of one value."""

    value: str
    axis: int | None
    dim: str | None
    node: str | None  # the node that produces the value
    op_type: str
    is_output: bool
    origins: list[dict[str, object]]  # each fresh symbol: symbol, node, op_type, reason
    cause: dict[str, object] | None  # where the loss began upstream: node, op_type, domain, reason
    data_dependent: bool
    allowed_by: str | None = None

    @property
    def place(self) -> str:
        return f"{self.value}[{self.axis}]" if self.axis is not None else f"{self.value} (rank unknown)"

    def describe(self, with_cause: bool = True) -> str:
        """One line: the place, the dim, where each fresh symbol was made and why, the cause."""
        made = "; ".join(f"{o['op_type']} '{o['node']}': {o['reason']}" +
                         (f" (at most {o['bound']})" if o.get("bound") is not None else "") for o in self.origins)
        text = f"{self.place}" + (f" = {self.dim}" if self.dim is not None else "") + f": {made}"
        c = self.cause
        if with_cause and c is not None and all(c["node"] != o["node"] for o in self.origins):
            text += f"; cause: {c['op_type']} '{c['node']}': {c['reason']}"
        return text

    @property
    def root(self) -> str:
        """Where the loss began, as one line: the cause upstream, or the node that made the
        first fresh symbol when it began there. Dims with one root have one fix."""
        c = self.cause if self.cause is not None else self.origins[0] if self.origins else None
        if c is None:
            return "unknown"
        dom = f" [{c['domain']}]" if c.get("domain") else ""
        return f"{c['op_type']}{dom} '{c['node']}': {c['reason']}"


def by_root(entries: Sequence[Entry]) -> list[tuple[str, list[Entry]]]:
    """The entries grouped by root cause, the groups in order of first appearance."""
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(e.root, []).append(e)
    return list(groups.items())


@dataclass
class Stale:
    """A produced value whose declared shape the graph contradicts."""

    value: str
    declared: list[str]
    computed: list[str] | None  # None: the graph computes no rank
    allowed_by: str | None = None
    why: str = ""

    def describe(self) -> str:
        computed = None if self.computed is None else tuple(self.computed)
        return StaleDeclaration(self.value, tuple(self.declared), computed, self.why).describe()


@dataclass
class Pinned:
    """A declared input symbol the model's domain pins to a few sizes or ties to another."""

    pin: Pin
    allowed_by: str | None = None

    def describe(self) -> str:
        return self.pin.describe()


@dataclass
class ModelReport:
    path: str
    error: str | None = None
    stats: dict[str, int] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    max_unresolved: int = 0
    # symbol, constraint, node, op_type, reason of each ">= 1" decision (Result.positive_assumptions)
    assumptions: list[dict[str, str]] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)  # the same, one line per symbol (facts.edges.grouped)
    assumed_deciding: list[str] = field(default_factory=list)  # those that chose an If's branch
    stale: list[Stale] = field(default_factory=list)
    # The first domain condition that cuts the required sizes (None: they are inside, or none required).
    outside: dict[str, object] | None = None
    pinned: list[Pinned] = field(default_factory=list)
    # --baseline OLD: how this model's contract differs from OLD's (onnxsym.commands.diff.Change)
    contract: list[Any] = field(default_factory=list)
    # root cause -> what to do about its dims (next_step), for the causes that have one
    next_steps: dict[str, str] = field(default_factory=dict)
    # what the nodes need of the input data, which the domain cannot promise (Domain.on_data): said
    on_data: list[dict[str, str]] = field(default_factory=list)
    # the other conditions the domain could not state (over a dim onnxsym could not resolve, or of an
    # input it could not see, Domain.unstated): the domain may call sizes valid that the model refuses
    not_stated: list[dict[str, str]] = field(default_factory=list)

    @property
    def failing(self) -> list[Entry]:
        return [e for e in self.entries if e.allowed_by is None]

    @property
    def failing_stale(self) -> list[Stale]:
        return [s for s in self.stale if s.allowed_by is None]

    @property
    def failing_pinned(self) -> list[Pinned]:
        return [p for p in self.pinned if p.allowed_by is None]

    @property
    def status(self) -> str:
        if self.error is not None:
            return "error"
        if self.outside is not None:
            return "outside"
        if len(self.failing) > self.max_unresolved:
            return "unresolved"
        if self.failing_pinned:
            return "pinned"
        if any(c.finding for c in self.contract):
            return "contract"
        return "stale" if self.failing_stale else "ok"

    @property
    def exit_code(self) -> int:
        return {"ok": 0, "unresolved": 1, "stale": 1, "outside": 1, "pinned": 1, "contract": 1, "error": 2}[self.status]


def _allowed_by(e: Entry, opts: CheckOptions) -> str | None:
    for pat in opts.allow:
        if all(fnmatch.fnmatchcase(str(o["symbol"]), pat) or fnmatch.fnmatchcase(str(o["node"]), pat)
               for o in e.origins):
            return f"--allow {pat}"
    if opts.allow_data_dependent and e.data_dependent:
        return "--allow-data-dependent"
    return None


@under_ranges_of_result
def entries_of(result: Result, opts: CheckOptions = CheckOptions(), lineage: Lineage | None = None) -> list[Entry]:
    """The unresolved dims of ``result`` in the scope the options give, each with its provenance."""
    lineage = Lineage(result) if lineage is None else lineage
    outputs = set(lineage.outputs)
    out = []
    bounds = {k: b for k, b in result.bounds().items() if not isinstance(b, int)}  # (a number: the range)
    for u in result.unresolved():
        if opts.outputs_only and u.value not in outputs:
            continue
        out.append(_entry(lineage, u, u.value in outputs, opts, bounds))
    return out


def _entry(lineage: Lineage, u: UnresolvedDim, is_output: bool, opts: CheckOptions,
           bounds: dict | None = None) -> Entry:
    bounds = bounds or {}
    node, op = lineage.producer_of(u.value)
    causes = [lineage.cause(p) for p in u.provenance]
    first = next((c for c in causes if c is not None), None)
    e = Entry(
        value=u.value, axis=u.axis, dim=None if u.dim is None else str(u.dim), node=node, op_type=op,
        is_output=is_output,
        origins=[{"symbol": p.symbol, "node": p.node, "op_type": p.op_type, "reason": p.reason,
                  "kind": p.kind.value, "bound": None if p.symbol not in bounds else str(bounds[p.symbol])}
                 for p in u.provenance],
        cause=None if first is None else {"node": first.node, "op_type": first.op_type, "domain": first.domain,
                                          "reason": first.reason,
                                          "kind": None if first.kind is None else first.kind.value},
        data_dependent=bool(causes) and all(c is not None and c.data_dependent for c in causes))
    e.allowed_by = _allowed_by(e, opts)
    return e


def check_model(path: str, opts: CheckOptions, bind: dict[str, int] | None = None,
                progress: Callable[[int, int], None] | None = None, reraise: bool = False,
                constant_initializers: bool = False, allow_zero=False, dynamic=None,
                baseline: str | None = None) -> ModelReport:
    """Infer and check one model; an error becomes the report's ``error`` unless ``reraise``.
    ``allow_zero`` is ``infer``'s: True, or the symbols whose range starts at 0."""
    report = ModelReport(path, max_unresolved=opts.max_unresolved)
    try:
        result = infer(path, bind=bind, progress=progress, constant_initializers=constant_initializers,
                       allow_zero=allow_zero, dynamic=dynamic)
        report.stats = result.stats()
        lineage = Lineage(result)
        report.entries = entries_of(result, opts, lineage)
        report.next_steps = next_steps(report.entries, lineage)
        positive = result.positive_assumptions()
        report.assumed = grouped(positive)
        report.assumed_deciding = grouped([c for c in positive if c.op_type == "If"])
        report.assumptions = [{"symbol": c.lhs_name, "constraint": str(c), "node": c.node, "op_type": c.op_type,
                               "reason": c.reason} for c in positive]
        report.stale = [Stale(st.value, list(st.declared), None if st.computed is None else list(st.computed),
                              "--allow-stale" if opts.allow_stale else None, st.why) for st in result.stale]
        if opts.require:
            report.outside = outside_of(result, opts.require)
        report.pinned = pinned_of(result, opts)
        from ..domain import DATA

        domain = result.domain()
        report.on_data = [{"condition": text[:-len(DATA)].rstrip(", "), "node": src.node, "op_type": src.op_type,
                           "reason": src.reason} for text, src in domain.on_data()]
        report.not_stated = [{"condition": text, "node": src.node, "op_type": src.op_type, "reason": src.reason}
                             for text, src in domain.unstated if not text.endswith(DATA)]
        if baseline is not None:
            from .diff import compare, contract_of

            kw = dict(constant_initializers=constant_initializers, allow_zero=allow_zero)
            report.contract = compare(contract_of(baseline, **kw), contract_of(path, **kw))
    except OnnxsymError as exc:
        if reraise:
            raise
        # (the check command's report: a UserInputError as it names the command's options)
        msg = one_line(exc.cli if isinstance(exc, UserInputError) else str(exc))
        report.error = msg[len(path) + 2:] if msg.startswith(path + ": ") else msg
    return report


@under_ranges_of_result
def pinned_of(result: Result, opts: CheckOptions) -> list[Pinned]:
    """The declared symbols the domain pins or ties, each allowed by a matching ``--allow-pinned``."""
    out = []
    for pin in pins_of(result):
        pat = next((p for p in opts.allow_pinned if fnmatch.fnmatchcase(pin.symbol, p)), None)
        out.append(Pinned(pin, None if pat is None else f"--allow-pinned {pat}"))
    return out


@under_ranges_of_result
def outside_of(result: Result, require: Sequence[tuple[str, int, int]]) -> dict[str, object] | None:
    """The first condition of the model's domain that the required sizes leave, as the
    report's ``outside`` entry, or None when they are all inside."""
    from ..domain.box import check_box

    box: dict[str, tuple[int, int]] = {}
    for name, lo, hi in require:
        box[name] = (max(lo, box[name][0]), min(hi, box[name][1])) if name in box else (lo, hi)
    cut = check_box(result.domain(), result, box)
    if cut is None:
        return None
    c, src = cut.condition, cut.condition.sources[0]
    return {"required": {n: list(r) for n, r in box.items()}, "condition": c.text, "kind": c.kind,
            "node": src.node, "op_type": src.op_type, "reason": src.reason, "assumed": c.assumed or None,
            "when": c.to_json()["when"], "at": dict(cut.point), "proven": cut.proven, "message": cut.describe()}


def _required_text(outside: Mapping[str, Any]) -> str:  # outside_of's JSON object
    req = " ".join(f"{n}={lo}" if lo == hi else f"{n}={lo}:{hi}" for n, (lo, hi) in outside["required"].items())
    return f"the domain does not contain {req}: {outside['message']}"


def one_line(text: str) -> str:
    return " ".join(text.split()) or "(no message)"


def exit_code(reports: Sequence[ModelReport]) -> int:
    return max((r.exit_code for r in reports), default=0)


# ------------------------------------------------------------------ formats

# Per root cause, the unresolved dims listed without -v, and in a GitHub annotation.
SHOWN_PER_CAUSE = 3
GITHUB_PLACES = 10


# What decides a branch: the ops through which a graph input's elements reach an If's condition
# (a size read by Shape or Size is the symbols', not the data's).
_SIZE_OPS = frozenset({"Shape", "Size"})


def deciding_inputs(lineage: Lineage, node: str) -> list[str]:
    """The graph inputs whose elements decide the If ``node``'s condition (empty: not an If, or
    no graph input's data reaches its condition): ``--value NAME=...`` takes its branch."""
    i = lineage.by_label.get(node)
    if i is None or lineage.nodes[i].op_type != "If" or not lineage.nodes[i].input:
        return []
    found: list[str] = []
    todo, seen = [lineage.nodes[i].input[0]], set()
    while todo:
        x = todo.pop()
        if x in seen or not x:
            continue
        seen.add(x)
        p = lineage.producer.get(x)
        if p is None:
            if x in lineage.graph_inputs and x not in lineage.initializers and x not in found:
                found.append(x)
            continue
        if lineage.nodes[p].op_type not in _SIZE_OPS:
            todo += list(lineage.nodes[p].input)
    return found


def next_step(group: Sequence[Entry], lineage: Lineage | None = None) -> str | None:
    """What to do about one root cause's dims: a data-dependent count passes
    ``--allow-data-dependent``; an If a graph input's data decides takes ``--value``; an op of
    no rule (a custom op) gets one with ``--rules``."""
    if all(e.data_dependent for e in group):
        return "data-dependent (a count only the data decides): check --allow-data-dependent passes these"
    c = group[0].cause if group[0].cause is not None else group[0].origins[0] if group[0].origins else None
    if c is not None and c.get("kind") == Kind.NO_RULE.value:
        return "no rule knows this op: write one and load it with --rules MODULE (docs/rules.md)"
    if lineage is not None and c is not None and c.get("op_type") == "If":
        names = deciding_inputs(lineage, str(c["node"]))
        if names:
            opts = " ".join(f"--value {n}=..." for n in names)
            return f"the If is decided by the graph input{'s' if len(names) > 1 else ''} {', '.join(names)}: " \
                   f"{opts} gives the dims for {'those values' if len(names) > 1 else 'that value'} " \
                   f"(reported apart: the written model keeps what holds for every value)"
    return None


def next_steps(entries: Sequence[Entry], lineage: Lineage) -> dict[str, str]:
    """Root cause -> its next step, for the causes that have one."""
    return {root: step for root, group in by_root(entries) if (step := next_step(group, lineage))}


def unresolved_lines(failing: Sequence[Entry], verbose: bool, steps: Mapping[str, str]) -> list[str]:
    """The unresolved dims by root cause: a line per cause, its next step, and its first dims."""
    lines = []
    for root, group in by_root(failing):
        lines.append(f"  cause {root}: {len(group)} unresolved dim{'s' if len(group) > 1 else ''}")
        step = steps.get(root)
        if step:
            lines.append(f"    next: {step}")
        shown = group if verbose else group[:SHOWN_PER_CAUSE]
        lines += [f"    unresolved {e.describe(with_cause=False)}" for e in shown]
        if len(shown) < len(group):
            lines.append(f"    ... and {len(group) - len(shown)} more (-v lists them)")
    return lines


def totals_line(reports: Sequence[ModelReport]) -> str:
    """One line across the models: how many in each status, and the unresolved dims in all."""
    counts: dict[str, int] = {}
    for r in reports:
        counts[r.status] = counts.get(r.status, 0) + 1
    order = ["ok", "unresolved", "stale", "pinned", "outside", "contract", "error"]
    parts = ", ".join(f"{counts[k]} {k}" for k in order if k in counts)
    dims = sum(len(r.failing) for r in reports if r.error is None)
    n = len(reports)
    return f"{n} model{'s' if n != 1 else ''}: {parts}; {dims} unresolved dim{'s' if dims != 1 else ''} in all"


def _ops_of(conditions: Sequence[dict[str, str]]) -> str:
    """The ops of ``conditions``, each once with its count: ``Gather x3, Reshape``."""
    ops: dict[str, int] = {}
    for c in conditions:
        ops[c["op_type"]] = ops.get(c["op_type"], 0) + 1
    return ", ".join(f"{op} x{k}" if k > 1 else op for op, k in ops.items())


def on_data_lines(on_data: Sequence[dict[str, str]], verbose: bool = False) -> list[str]:
    """What the nodes need of the input data (a Gather's fed token ids in range): one line saying
    how many and of which ops (a model with token ids has one, a detector some twenty), each
    under ``-v``. They change no exit code: the sizes cannot decide them."""
    if not on_data:
        return []
    n, which = len(on_data), _ops_of(on_data)
    lines = [f"  data-dependent: {n} condition{'s' if n != 1 else ''} on the input data ({which}), not checked by size"
             + ("" if verbose else " (-v lists them)")]
    if verbose:
        lines += [f"    {c['condition']}: {c['op_type']} '{c['node']}': {c['reason']} (the input data decide it: the "
                  f"domain cannot promise it)" for c in on_data]
    return lines


def not_stated_lines(not_stated: Sequence[dict[str, str]], verbose: bool = False) -> list[str]:
    """The conditions the domain could not state: one line saying how many and of which ops,
    each under ``-v``. They change no exit code (the dims written are still proven), but a
    size the domain allows may still be refused there: ``onnxsym domain`` says the same."""
    if not not_stated:
        return []
    n, which = len(not_stated), _ops_of(not_stated)
    lines = [f"  not stated: {n} condition{'s' if n != 1 else ''} onnxsym could not state ({which}): a size the "
             "domain allows may be refused there" + ("" if verbose else " (-v lists them)")]
    if verbose:
        lines += [f"    {c['condition']}: {c['op_type']} '{c['node']}': {c['reason']}" for c in not_stated]
    return lines


def format_text(reports: Sequence[ModelReport], quiet: bool = False, verbose: bool = False) -> list[str]:
    lines = []
    for r in reports:
        if r.error is not None:
            lines.append(f"{r.path}: error: {r.error}")
            continue
        failing, allowed = r.failing, [e for e in r.entries if e.allowed_by]
        dims = r.stats.get("static_dims", 0) + r.stats.get("symbolic_dims", 0) + r.stats.get("unresolved_dims", 0)
        summary = (f"{r.path}: {r.status}: {len(failing)} unresolved"
                   + (f" (at most {r.max_unresolved} allowed)" if r.max_unresolved else "")
                   + (f", {len(allowed)} allowed" if allowed else "")
                   + (f", {len(r.stale)} stale declaration{'s' if len(r.stale) > 1 else ''}" if r.stale else "")
                   + (f", {len(r.failing_pinned)} pinned" if r.failing_pinned else "")
                   + f"; {r.stats.get('values', 0)} values, {dims} dims")
        if quiet and r.status == "ok":
            continue
        lines.append(summary)
        if r.outside is not None:
            lines.append(f"  outside: {_required_text(r.outside)}")
        if quiet:
            continue
        lines += unresolved_lines(failing, verbose, r.next_steps)
        lines += [f"  stale declaration {s.describe()}" for s in r.failing_stale]
        lines += on_data_lines(r.on_data, verbose)
        lines += not_stated_lines(r.not_stated, verbose)
        lines += [f"  contract {c.describe()}" for c in r.contract if c.finding or verbose]
        lines += [f"  pinned {p.describe()} ({p.pin.symbol} is declared dynamic; "
                  f"--allow-pinned {p.pin.symbol} accepts it)" for p in r.failing_pinned]
        if verbose:
            lines += [f"  allowed ({p.allowed_by}) pinned {p.describe()}" for p in r.pinned if p.allowed_by]
            lines += [f"  allowed ({e.allowed_by}) {e.describe()}" for e in allowed]
            lines += [f"  allowed ({s.allowed_by}) stale declaration {s.describe()}" for s in r.stale if s.allowed_by]
        # an X >= 1 that chose an If's branch matters to the verdict; the routine ones, under -v
        lines += [f"  assumed {line} (a graph-input dim is >= 1 unless --allow-zero)"
                  for line in dict.fromkeys(r.assumed if verbose else r.assumed_deciding)]
    return lines


def to_json(reports: Sequence[ModelReport], opts: CheckOptions) -> dict[str, object]:
    """The report as the JSON document described by docs/check-report.schema.json."""
    return {
        "tool": "onnxsym",
        "version": __version__,
        "exit_code": exit_code(reports),
        "options": {"allow_data_dependent": opts.allow_data_dependent, "allow": list(opts.allow),
                    "outputs_only": opts.outputs_only, "max_unresolved": opts.max_unresolved,
                    "allow_stale": opts.allow_stale,
                    "require": {n: [lo, hi] for n, lo, hi in opts.require},
                    "allow_pinned": list(opts.allow_pinned)},
        "models": [{
            "path": r.path,
            "status": r.status,
            "error": r.error,
            "stats": r.stats,
            "unresolved_count": len(r.failing) if r.error is None else 0,
            "allowed_count": len(r.entries) - len(r.failing),
            "entries": [asdict(e) for e in r.entries],
            "assumptions": r.assumptions,
            "stale_declarations": [asdict(s) for s in r.stale],
            "outside": r.outside,
            "pinned": [{**p.pin.to_json(), "allowed_by": p.allowed_by} for p in r.pinned],
            "contract": [c.to_json() for c in r.contract],
            "on_data": r.on_data,
            "not_stated": r.not_stated,
        } for r in reports],
    }


def format_json(reports: Sequence[ModelReport], opts: CheckOptions) -> str:
    return json.dumps(to_json(reports, opts), indent=2)


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def gh_command(kind: str, path: str, title: str, message: str) -> str:
    """A GitHub Actions workflow command: ``::error file=PATH,title=TITLE::MESSAGE``."""
    return f"::{kind} file={_gh_prop(path)},title={_gh_prop(title)}::{_gh_data(message)}"


def format_github(reports: Sequence[ModelReport], notices: bool = False) -> list[str]:
    """One ``::error`` per root cause of unresolved dims, stale declaration or failed model
    (a ``::warning`` for an allowed stale declaration); with ``notices``, a ``::notice`` per
    passing model."""
    lines = []
    for r in reports:
        if r.error is not None:
            lines.append(gh_command("error", r.path, "onnxsym: error", r.error))
            continue
        if r.outside is not None:
            lines.append(gh_command("error", r.path, "onnxsym: required sizes outside the domain",
                                    _required_text(r.outside)))
        for s in r.stale:
            lines.append(gh_command("warning" if s.allowed_by else "error", r.path, "onnxsym: stale declaration",
                                    s.describe()))
        for p in r.pinned:
            lines.append(gh_command("warning" if p.allowed_by else "error", r.path, "onnxsym: pinned symbol",
                                    p.describe()))
        for c in r.contract:
            if c.finding:
                lines.append(gh_command("error", r.path, f"onnxsym: contract {c.kind}", c.describe()))
        if r.status == "ok" and notices:
            lines.append(gh_command("notice", r.path, "onnxsym: ok",
                                    f"{len(r.failing)} unresolved dims (at most {r.max_unresolved} allowed)"))
        elif r.status == "unresolved":
            for root, group in by_root(r.failing):
                places = "\n".join(e.describe(with_cause=False) for e in group[:GITHUB_PLACES])
                places += f"\n... and {len(group) - GITHUB_PLACES} more" if len(group) > GITHUB_PLACES else ""
                places += f"\nnext: {r.next_steps[root]}" if root in r.next_steps else ""
                lines.append(gh_command("error", r.path, "onnxsym: unresolved dims",
                                        f"{len(group)} unresolved dim{'s' if len(group) > 1 else ''} caused by "
                                        f"{root}:\n{places}"))
    return lines


# ------------------------------------------------------------------ many models

def model_files(paths: Sequence[str]) -> list[str]:
    """The models to check: each path as given; a folder, the ``*.onnx`` files under it
    (recursively, sorted). A folder with none is an error naming it."""
    import os

    out = []
    for p in paths:
        if not os.path.isdir(p):
            out.append(p)
            continue
        found = sorted(os.path.join(d, f) for d, _, files in os.walk(p) for f in files if f.endswith(".onnx"))
        if not found:
            raise UserInputError(f"{p}: a folder with no *.onnx file under it")
        out += found
    return out


def _worker_init(rules: Sequence[str], values: Mapping[str, object]) -> None:
    """A worker process loads what the command loaded: the rules and the --value data."""
    from .. import plugins
    from ..model.given import CLI_VALUES

    plugins.load_entry_points()
    for m in rules:
        plugins.load_module(m)
    CLI_VALUES.set(dict(values))


def check_parallel(paths: Sequence[str], opts: CheckOptions, jobs: int, rules: Sequence[str] = (),
                   **kw) -> list[ModelReport]:
    """``check_model`` of each path in ``jobs`` worker processes; the reports in the order of
    ``paths``. Each worker infers whole models: one model's time is not split."""
    from concurrent.futures import ProcessPoolExecutor

    from ..model.given import CLI_VALUES

    with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init,
                             initargs=(tuple(rules), dict(CLI_VALUES.get()))) as pool:
        futures = [pool.submit(check_model, p, opts, **kw) for p in paths]
        return [f.result() for f in futures]
