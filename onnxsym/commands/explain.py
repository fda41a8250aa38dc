"""Why a value has the shape it has.

For one dim of one value: the chain of nodes (and the rules that ran at them)
that carried its expression, back to the graph-input symbols, or back to the
node where resolution was lost; and from there, upstream to the cause, e.g.
"Reshape '/m/Reshape_3': reshape target unknown; shape input computed by NonZero".

Everything here is read off an inference :class:`~onnxsym.api.Result`: the
model gives who produced each value, the result the values and the recorded
provenance of every fresh symbol and unknown rank.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import onnx

from .. import dims, registry
from ..dims import Dim
from ..errors import OnnxsymError
from ..inference.engine import node_label
from ..inference.provenance import Kind, Provenance
from ..inference.symbols import under_ranges_of_result
from ..inference.values import MAX_VALUE_ELEMENTS, Tensor
from ..semantics.floatops import FLOAT_TYPES, Quotient, Rounded, Unknown
from ..semantics.intops import INT_TYPES, is_dim

# What is wrong with a value, as a consumer needing it sees it (Lineage.trouble).
RANK_UNKNOWN, SHAPE_UNRESOLVED = "rank unknown", "shape unresolved"
VALUE_UNRESOLVED, VALUE_UNKNOWN = "value unresolved", "value unknown"
_VALUE_TROUBLES = frozenset({VALUE_UNRESOLVED, VALUE_UNKNOWN})  # its elements, not its shape


_MAX_STEPS = 500


class UnknownValueError(OnnxsymError):
    """The value (or axis) asked about is not in the model."""


@dataclass(frozen=True)
class Step:
    """One link of the chain: ``value[axis]`` (or element ``element`` of ``value``)
    equals ``dim``, as computed by ``op_type`` node ``node``."""

    value: str
    axis: int | None
    dim: Dim | None
    node: str | None  # None: a graph input or initializer
    op_type: str
    rule: str
    element: int | None = None  # the dim is this element of the (shape tensor) value

    def describe(self) -> str:
        where = f"{self.value}[{self.axis}]" if self.element is None else f"{self.value} element {self.element}"
        by = f"{self.op_type} '{self.node}'" + (f" ({self.rule})" if self.rule else "") \
            if self.node is not None else self.op_type
        return f"{where} = {'?' if self.dim is None else self.dim}   <- {by}"


@dataclass(frozen=True)
class Cause:
    """The first node upstream of a loss whose own inputs were fine: where it began."""

    node: str
    op_type: str
    domain: str
    reason: str
    via: tuple[tuple[str, str], ...]  # (value, what was wrong with it) from the lost node up
    kind: Kind | None  # None: a graph input the model itself declares so

    @property
    def data_dependent(self) -> bool:
        return self.kind is Kind.DATA_DEPENDENT


@dataclass
class Explanation:
    value: str
    axis: int | None
    dim: Dim | None
    steps: list[Step]
    lost: Provenance | None
    lost_input: str  # how the lost node's troubled input is named, "" if none
    cause: Cause | None
    symbols: dict[str, str]  # input symbol -> where it comes from
    declared: tuple[str, ...] = ()  # the names the model declares at this place (aliases of the dim)
    # what the chain's nodes need of the sizes (an If that takes one branch: see onnxsym.facts.branching)
    conditions: tuple[str, ...] = ()

    @property
    def resolved(self) -> bool:
        return self.lost is None

    def headline(self) -> str:
        where = f"{self.value}[{self.axis}]" if self.axis is not None else f"{self.value} (rank)"
        named = "".join(f"; the model names it '{n}' (an alias)" for n in self.declared)
        if self.lost is None:
            if isinstance(self.dim, int):
                return f"{where} = {self.dim}: static{named}"
            return f"{where} = {self.dim}: resolved over input symbols {', '.join(sorted(self.symbols))}{named}"
        text = f"{where} unresolved: {self.lost.op_type} '{self.lost.node}': {self.lost.reason}"
        c = self.cause
        if c is not None and c.node != self.lost.node:
            text += f"; {self.lost_input} computed by {c.op_type} '{c.node}': {c.reason}"
        return text + named

    def _changes(self) -> list[str]:
        """The chain with only the steps where the expression changes (both sides of each
        change), the first and the last; each run left out is one line."""
        n = len(self.steps)

        def text(k: int) -> tuple:
            s = self.steps[k]
            return (str(s.dim), s.element is None)  # (a dim of a shape, or an element of a shape tensor)
        changed = {k for k in range(n - 1) if text(k) != text(k + 1)}
        keep = {0, n - 1} | changed | {k + 1 for k in changed}
        out, skipped = [], 0
        for k in range(n):
            if k in keep:
                if skipped:
                    out.append(f"  ... {skipped} step{'s' if skipped > 1 else ''} that keep it (--verbose shows them)")
                    skipped = 0
                out.append("  " + self.steps[k].describe())
            else:
                skipped += 1
        return out

    def lines(self, max_steps: int | None = None) -> list[str]:
        """The headline, the chain (beyond ``max_steps`` steps, only where the expression changes),
        the loss and its cause."""
        out = [self.headline()]
        steps = ["  " + s.describe() for s in self.steps]
        if max_steps is not None and len(steps) > max_steps + 1:
            steps = self._changes()
        out += steps
        out += [f"holds where {c}" for c in self.conditions]
        if self.lost is not None:
            out.append(f"lost at {self.lost.op_type} '{self.lost.node}': {self.lost.reason}")
            c = self.cause
            if c is not None and (c.via or c.node != self.lost.node):
                out += [f"  from '{v}' ({why})" for v, why in c.via]
                dom = f" [{c.domain}]" if c.domain else ""
                tag = " (data-dependent)" if c.data_dependent else ""
                out.append(f"cause: {c.op_type}{dom} '{c.node}': {c.reason}{tag}")
        for s, origin in sorted(self.symbols.items()):
            out.append(f"symbol {s}: {origin}")
        return out


def _input_name(op_type: str, domain: str, opset: int, index: int, value: str) -> str:
    """'shape input' for Reshape's input 1, from the operator schema where there is one."""
    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
        formal = schema.inputs[min(index, len(schema.inputs) - 1)].name
        return f"{formal} input '{value}'"
    except Exception:
        return f"input {index} '{value}'"


class Lineage:
    """Producer map and provenance lookups for one inference result."""

    def __init__(self, result):
        self.result = result
        graph = result.model.graph
        self.nodes = list(graph.node)
        self.producer: dict[str, int] = {}
        self.by_label: dict[str, int] = {}
        for i, n in enumerate(self.nodes):
            self.by_label[node_label(n, i)] = i
            for o in n.output:
                if o:
                    self.producer[o] = i
        self.initializers = {t.name for t in graph.initializer}
        self.graph_inputs = {i.name for i in graph.input}
        self.outputs = [o.name for o in graph.output]
        self.opsets = {registry.canonical_domain(o.domain): o.version for o in result.model.opset_import}
        self.reasons: dict[str, list[Provenance]] = {}
        for p in list(result.fresh.values()) + list(result.unknown_rank.values()):
            self.reasons.setdefault(p.node, []).append(p)
        self._causes: dict[int, Cause] = {}

    @property
    def env(self):
        """The result's range environment (the lookups below run under it)."""
        return self.result.env

    # -- lookups ----------------------------------------------------------------
    def opset(self, n: onnx.NodeProto) -> int:
        return self.opsets.get(registry.canonical_domain(n.domain), 1)

    def rule_name(self, n: onnx.NodeProto) -> str:
        rule = registry.find_rule(n.domain, n.op_type, self.opset(n))
        if rule is None:
            return "no rule"
        return f"{rule.__module__.replace('onnxsym.', '')}.{rule.__name__}"

    def producer_of(self, value: str) -> tuple[str | None, str]:
        """(node label, op type) of the node that makes ``value``; (None, kind) for a graph input."""
        i = self.producer.get(value)
        if i is None:
            return None, "initializer" if value in self.initializers and value not in self.graph_inputs \
                else "graph input"
        return node_label(self.nodes[i], i), self.nodes[i].op_type

    def fresh_of(self, d: Dim | None) -> list[Provenance]:
        if d is None or isinstance(d, int):
            return []
        return [self.result.fresh[s.name] for s in sorted(dims.free_symbols(d), key=lambda s: s.name)
                if s.name in self.result.fresh]

    @under_ranges_of_result
    def trouble(self, value: str) -> str:
        """What is wrong with a value, as far as a consumer needing it can tell; '' if nothing."""
        v = self.result.values.get(value)
        if value in self.result.unknown_rank or v is None or (isinstance(v, Tensor) and v.shape is None):
            return RANK_UNKNOWN
        if not isinstance(v, Tensor) or v.shape is None:  # (no shape: returned above)
            return ""
        if any(self.fresh_of(d) for d in v.shape):
            return SHAPE_UNRESOLVED
        # a float element may be a quotient of dims (Cast(h) / 10): its fresh symbols are its parts'
        if v.value is not None and any(self.fresh_of(d) for e in v.value
                                       for d in ((e.num, e.den) if isinstance(e, Quotient) else (e,)) if is_dim(d)):
            return VALUE_UNRESOLVED
        count = 1
        for d in v.shape:
            count = count * d if isinstance(d, int) else MAX_VALUE_ELEMENTS + 1
        # a shape value may pass through a 2-D Transpose (TorchScript's pads) or be computed
        # in float (TF-"same" pads): the first node that lost it is upstream of them
        shape_like = v.dtype in INT_TYPES or (v.dtype in FLOAT_TYPES and len(v.shape) <= 1)
        # (a partly known one: an element UNKNOWN or Rounded, beside known ones, is not known either)
        if shape_like and count <= MAX_VALUE_ELEMENTS and \
                (v.value is None or any(isinstance(e, (Unknown, Rounded)) for e in v.value)):
            return VALUE_UNKNOWN
        return ""

    # -- where a loss began -------------------------------------------------------
    @under_ranges_of_result
    def cause(self, lost: Provenance) -> Cause | None:
        """Walk upstream from the node that recorded ``lost`` through inputs that were
        themselves unknown, to the first node whose inputs were all fine."""
        start = self.by_label.get(lost.node)
        if start is None:
            return None
        if start not in self._causes:
            self._causes[start] = self._walk(start)
        return self._causes[start]

    def _troubled_inputs(self, n: onnx.NodeProto) -> list[tuple[int, str, str]]:
        found = [(i, x, self.trouble(x)) for i, x in enumerate(n.input) if x]
        found = [f for f in found if f[2]]
        # A shape tensor the rule could not read explains more than a data input.
        return sorted(found, key=lambda f: f[2] not in _VALUE_TROUBLES)

    def _walk(self, start: int) -> Cause:
        via: list[tuple[str, str]] = []
        seen = {start}
        cur = start
        for _ in range(_MAX_STEPS):
            n = self.nodes[cur]
            nxt = None
            for _, x, why in self._troubled_inputs(n):
                p = self.producer.get(x)
                if p is None:
                    via.append((x, why))
                    return self._input_cause(x, why, via)
                if p not in seen:
                    nxt = (p, x, why)
                    break
            if nxt is None:
                break
            cur, x, why = nxt
            seen.add(cur)
            via.append((x, why))
        return self._node_cause(cur, via)

    def _input_cause(self, name: str, why: str, via) -> Cause:
        kind: Kind | None = None
        if why in _VALUE_TROUBLES:
            reason, kind = "its elements are known only at run time", Kind.DATA_DEPENDENT
        else:
            reason = f"the model declares it with {why}"
        what = "initializer" if name in self.initializers and name not in self.graph_inputs else "graph input"
        return Cause(name, what, "", reason, tuple(via), kind)

    def _node_cause(self, i: int, via) -> Cause:
        n = self.nodes[i]
        label = node_label(n, i)
        recorded = self.reasons.get(label)
        if recorded:
            reason, kind = recorded[0].reason, recorded[0].kind
        elif all(isinstance(self.result.values.get(x), Tensor) and self.result.values[x].value is not None
                 for x in n.input if x):
            reason = f"the rule ({self.rule_name(n)}) does not compute the elements of its output"
            kind = Kind.UNSUPPORTED
        else:
            reason, kind = "its output's elements depend on tensor data", Kind.DATA_DEPENDENT
        return Cause(label, n.op_type, n.domain, reason, tuple(via), kind)

    # -- how a dim got its expression -------------------------------------------------
    @under_ranges_of_result
    def explain(self, value: str, axis: int | None = None) -> Explanation:
        """The explanation of ``value[axis]`` (``axis`` None: of the value's rank)."""
        v = self.result.values.get(value)
        known = value in self.producer or value in self.graph_inputs or value in self.initializers
        if v is None or not known:
            names = list(self.producer) + list(self.graph_inputs)
            # near names (difflib), or else names that contain it: 'Softmax' finds '/attn/Softmax_output_0'
            near = difflib.get_close_matches(value, names, n=3) or [n for n in names if value.lower() in n.lower()][:3]
            hint = f"; did you mean {', '.join(repr(x) for x in near)}?" if near else ""
            raise UnknownValueError(f"no value '{value}' in the model{hint}")
        shape = v.shape if isinstance(v, Tensor) else None
        if axis is None or shape is None:
            lost = self.result.unknown_rank.get(value)
            if shape is None and lost is not None:
                return self._finish(value, None, None, [], lost)
            if axis is None:
                raise UnknownValueError(f"value '{value}' has rank {len(shape) if shape is not None else '?'}: "
                                        "name an axis")
            raise UnknownValueError(f"value '{value}' has an unknown rank: it has no axis {axis}")
        if not -len(shape) <= axis < len(shape):
            raise UnknownValueError(f"value '{value}' has rank {len(shape)}: no axis {axis}")
        axis %= len(shape)
        steps, lost = self._trace(value, axis, shape[axis])
        return self._finish(value, axis, shape[axis], steps, lost)

    def _finish(self, value, axis, d, steps, lost) -> Explanation:
        cause = self.cause(lost) if lost is not None else None
        lost_input = ""
        if cause is not None and cause.via:
            i = self.by_label[lost.node]
            n = self.nodes[i]
            first = cause.via[0][0]
            lost_input = _input_name(n.op_type, n.domain, self.opset(n), list(n.input).index(first), first)
        symbols = {}
        if d is not None and not isinstance(d, int):
            table = self.result.symbols
            symbols = {s.name: table.origin.get(s.name, "") for s in dims.free_symbols(d)
                       if s.name not in self.result.fresh}
        declared = tuple(n for n in sorted(self.result.aliases) if (value, axis) in self.result.alias_places(n))
        nodes = {s.node for s in steps}
        conditions = tuple(f"{c} ({c.where}: {c.reason})" for c in self.result.constraints
                           if c.node in nodes and c.op_type == "If")
        return Explanation(value, axis, d, steps, lost, lost_input, cause, symbols, declared, conditions)

    def _trace(self, value: str, axis: int | None, d: Dim):
        steps: list[Step] = []
        fresh = self.fresh_of(d)
        focus = {fresh[0].symbol} if fresh else {s.name for s in dims.free_symbols(d)} if not isinstance(d, int) else set()
        cur, element = value, None
        for _ in range(_MAX_STEPS):
            label, op = self.producer_of(cur)
            if label is None:
                steps.append(Step(cur, axis, d, None, op, "", element))
                return steps, None
            n = self.nodes[self.producer[cur]]
            steps.append(Step(cur, axis, d, label, op, self.rule_name(n), element))
            made_here = [p for p in self.fresh_of(d) if p.symbol in focus and p.node == label]
            if made_here:
                return steps, made_here[0]
            if isinstance(d, int):
                return steps, None
            nxt = self._carrier(n, d, axis, focus)
            if nxt is None:
                return steps, None
            cur, axis, element, d = nxt
        return steps, None

    def _carrier(self, n: onnx.NodeProto, d: Dim, axis: int | None, focus):
        """The input of ``n`` that carries ``d`` (or, failing that, one of its symbols),
        as (value, axis, element, the dim there): a dim of its shape, or an element of
        its value (a shape tensor)."""
        cands = []
        for x in n.input:
            t = self.result.values.get(x) if x else None
            if not isinstance(t, Tensor):
                continue
            places = [(a, None, e) for a, e in enumerate(t.shape or ())]
            elems = [(None, k, e) for k, e in enumerate(t.value or ())]
            for rank, pool in ((0, places), (1, elems)):
                for a, k, e in pool:
                    if not isinstance(e, dims.Expr):
                        continue  # a number, or a float element known only in part (floatops.Quotient, Rounded)
                    names = {s.name for s in dims.free_symbols(e)}
                    score: tuple[int, int, int]
                    if e is d:
                        score = (0, rank, a != axis)
                    elif names & focus:
                        score = (1, rank, -len(names & focus))
                    else:
                        continue
                    cands.append((score, x, a, k, e))
        if not cands:
            return None
        _, x, a, k, e = min(cands, key=lambda c: c[0])
        return x, a, k, e
