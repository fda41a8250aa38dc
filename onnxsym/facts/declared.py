"""What a model declares on the values its nodes produce, against what the graph computes.

Exporters write names of their own on produced values (TorchScript's
``LayerNormalizationout_dim_0``, paddle2onnx's ``p2o.DynamicDimension.3``, the
dynamo exporter's sympy text). A declaration on a produced value is the exporter's
claim, not the model's contract (onnxruntime runs the model whatever it says), and it
is only ever checked against what the graph computes; it is never a fact: no
constraint, no condition of the domain, no range comes from it.

What may be learned from one is a *name*: a declared name is an *alias* of the dim
the graph computes there when it is consistent with every place it is declared (the
same name on provably equal dims; inside a declared expression such as ``n + 1``, the
value that makes the expression the computed dim, and that value at every other
place). An alias is printed beside the computed dim, kept only where the graph
computes a fresh symbol (it names it) and, with ``--keep-declared-names``, where the
declared text is proven equal to the computed dim. A declaration the graph
contradicts (another rank, another number, an expression provably different, a name
bound at two places to provably different dims) is *stale*: a warning naming both
shapes, and the computed shape is written. A graph input's declared shape is never
matched here: it is where the symbols come from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import onnx

from .. import dims
from ..dims import Dim
from ..dims.text import ExprSyntaxError, parse_dim
from ..inference.scope import may_hold_subgraphs
from ..inference.symbols import SymbolTable
from ..inference.values import Tensor
from ..model.loader import UNNAMED_PARAMS
from . import torch_text
from .constraints import linear_symbols

# The names onnx's shape inference gives to dims it cannot name: not the model's names.
ANONYMOUS = re.compile(r"unk__\d+")

Place = tuple[str, int]  # (value, axis)


@dataclass(frozen=True)
class StaleDeclaration:
    """A produced value whose declared shape the graph contradicts. ``computed`` is
    ``None`` when the graph computes no rank there (then ``why`` says what it does compute);
    ``why`` also names the other place a contradicting name is declared at."""

    value: str
    declared: tuple[str, ...]
    computed: tuple[str, ...] | None
    why: str = field(default="", compare=False)

    def describe(self) -> str:
        computed = "an unknown rank" if self.computed is None else f"[{', '.join(self.computed)}]"
        text = f"value '{self.value}': the model declares [{', '.join(self.declared)}], the graph computes {computed}"
        return f"{text}; {self.why}" if self.why else text

    def __str__(self) -> str:
        written = "no shape is written" if self.computed is None else "the computed shape is written"
        return f"{self.describe()}: a stale declaration; {written}"


@dataclass
class Declarations:
    """The declared names of produced values, related to the computed dims."""

    aliases: dict[str, Dim] = field(default_factory=dict)  # declared name -> the dim it names
    places: dict[str, list[Place]] = field(default_factory=dict)  # declared name -> where it is declared
    named_fresh: set[Place] = field(default_factory=set)  # where a declared name names a fresh symbol
    proven: set[Place] = field(default_factory=set)  # where the declared dim_param equals the computed dim
    stale: list[StaleDeclaration] = field(default_factory=list)
    dropped: set[str] = field(default_factory=set)  # values of no computed rank whose declared shape is not written


def declared_dims(tp: onnx.TypeProto) -> Sequence[onnx.TensorShapeProto.Dimension] | None:
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    return tp.tensor_type.shape.dim


def reused_names(g: onnx.GraphProto) -> set[str]:
    """The names that nodes of more than one graph of ``g`` produce (sibling If branches may
    each define ``v``): a place (value, axis) names no one of them, so a declared name there
    is checked in each scope but never kept."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    stack = [g]
    while stack:
        graph = stack.pop()
        for n in graph.node:
            for o in n.output:
                if o and seen.setdefault(o, id(graph)) != id(graph):
                    out.add(o)
            if not may_hold_subgraphs(n):
                continue
            for a in n.attribute:
                stack.extend([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs)
    return out


def _text(d: onnx.TensorShapeProto.Dimension) -> str:
    if d.HasField("dim_value"):
        return str(d.dim_value)
    return d.dim_param or "?"


def _shape_text(shape: Sequence[Dim] | None) -> str:
    return "an unknown rank" if shape is None else f"[{', '.join(map(str, shape))}]"


@dataclass
class _Claim:
    """One declared dim that names something other than the input symbols."""

    key: tuple[str, int]  # (value, its match number)
    axis: int
    text: str
    known: Dim  # the text, over the input symbols and one placeholder symbol per declared name
    names: tuple[dims.Sym, ...]  # those placeholders
    computed: Dim
    verdict: bool | None = None  # proven equal, contradicted, or neither


# value -> the If outputs (one per branch) it may be, when a node picks one of them; None otherwise
Alternatives = Callable[[str], list[Tensor | None] | None]


class DeclaredMatcher:
    """Relates each produced value's declared dims to its computed ones, into ``out``:
    :meth:`match` each value, then :meth:`finish` once."""

    def __init__(self, table: SymbolTable, fresh: Mapping[str, object], resolve: Callable[[Dim], Dim],
                 out: Declarations, warnings: list[str], alternatives: Alternatives | None = None,
                 verdicts: bool = True):
        self.table, self.fresh, self.resolve, self.out, self.warnings = table, fresh, resolve, out, warnings
        # False: no verdict on a declared dim that names nothing (a number, a text over the input
        # symbols), nor on declared names where none may name a fresh symbol: ``proven``, ``stale``
        # and ``aliases`` then lack those, for a caller that writes none of them
        self.verdicts = verdicts
        self.alternatives = alternatives or (lambda name: None)
        self._names: dict[str, dims.Sym] = {}  # declared name -> its placeholder symbol
        self._claims: list[_Claim] = []
        # (value, how many times matched before: siblings reuse names) -> its declared and
        # computed shapes' texts (computed None: no rank)
        self._shapes: dict[tuple[str, int], tuple[tuple[str, ...], tuple[str, ...] | None]] = {}
        self._stale: dict[tuple[str, int], list[str]] = {}  # why each is stale, in the order found
        self._unkeepable: set[str] = set()  # values whose name several scopes define
        self._matched: dict[str, int] = {}  # value -> how many times matched so far
        self._parsed: dict[str, Dim | None] = {}  # declared text -> its dim (an annotated model repeats a few)
        self._torch_parts: torch_text.Memo = {}  # the parts of torch texts read (over this matcher's names)
        self._bounded: set[str] = set()  # torch texts read under a bound the ranges do not prove: never proven
        # (declared type's bytes, id of the computed value) -> (that value, kept alive: no other object
        # takes its id; the axes proven) where a value so declared and computed made neither a stale
        # declaration nor a claim (a declared name's place): its verdicts depend on those two alone
        self._plain: dict[tuple[bytes, int], tuple[Tensor, list[int]]] = {}

    # -- one value --------------------------------------------------------------
    def match(self, vi: onnx.ValueInfoProto, t: Tensor, keepable: bool = True) -> None:
        """``keepable``: the value's name is one scope's only, so its declared dims may be kept."""
        decl = declared_dims(vi.type)
        if decl is None:
            return
        name = vi.name
        if not keepable:
            self._unkeepable.add(name)
        key = (name, self._matched.get(name, 0))
        self._matched[name] = key[1] + 1
        alts = self.alternatives(name)
        # An annotated model declares the same type on the values of each repeated layer, and they
        # compute one value: its verdicts are the same (see _plain), taken from the first.
        repeat = (vi.type.SerializeToString(), id(t)) \
            if alts is None and t.shape is not None and key[1] == 0 and name not in self._unkeepable else None
        if repeat is not None and repeat in self._plain:
            self.out.proven.update((name, axis) for axis in self._plain[repeat][1])
            return
        claims = len(self._claims)
        self._match(key, decl, t, alts)
        if key in self._stale or len(self._claims) > claims:  # (the texts a stale declaration shows)
            self._shapes[key] = (tuple(map(_text, decl)), None if t.shape is None else tuple(map(str, t.shape)))
        elif repeat is not None:
            self._plain[repeat] = (t, [axis for axis in range(len(decl)) if (name, axis) in self.out.proven])

    def _match(self, key: tuple[str, int], decl, t: Tensor, alts: list[Tensor | None] | None) -> None:
        branches = [a.shape for a in alts if a is not None and a.shape is not None] if alts else []
        if len(branches) != len(alts or ()):
            branches = []  # some branch's shape is unknown: it may be anything
        if t.shape is None:
            if branches:
                self._match_unranked(key, decl, branches)
            return
        if len(decl) != len(t.shape):
            self._mark(key)
            return
        for axis, (dd, d) in enumerate(zip(decl, t.shape)):
            if self._dim(key, axis, dd, self.resolve(d)) is False:
                self._mark(key)
        if key not in self._stale and branches and all(self._contradicts(decl, b) for b in branches):
            self._mark(key, "every branch of the If contradicts it: it gives " +
                       " or ".join(map(_shape_text, branches)))

    def _match_unranked(self, key: tuple[str, int], decl, branches: list[tuple[Dim, ...]]) -> None:
        """The graph computes no rank: the value is one of the If's branch outputs (of
        ``branches`` shapes). A declared shape that every branch contradicts is stale; one that
        only some branches give is not written (it is wrong whenever another runs)."""
        gives = " or ".join(map(_shape_text, branches))
        value = key[0]
        self.out.dropped.add(value)
        if all(self._contradicts(decl, b) for b in branches):
            self._mark(key, f"the branches of the If that makes it give {gives}")
        else:
            self.warnings.append(f"value '{value}': the model declares [{', '.join(map(_text, decl))}], "
                                 f"the branches of the If that makes it give {gives}: the declared shape is not "
                                 f"written (it holds in some branches only)")

    def _contradicts(self, decl, shape: tuple[Dim, ...]) -> bool:
        """Whether the declared dims provably differ from ``shape`` (names aside)."""
        if len(decl) != len(shape):
            return True
        for dd, d in zip(decl, shape):
            d = self.resolve(d)
            if dd.HasField("dim_value"):
                if dd.dim_value >= 0 and dims.try_eq(d, dd.dim_value) is False:
                    return True  # (a negative number, paddle2onnx's -1, says "unknown": it claims nothing)
                continue
            parsed = self._parse(dd.dim_param)
            if parsed is not None and not dims.free_symbols(parsed) & set(self._names.values()) and \
                    dims.try_eq(self.resolve(parsed), d) is False:
                return True
        return False

    def _mark(self, key: tuple[str, int], why: str = "") -> None:
        whys = self._stale.setdefault(key, [])
        if why and why not in whys:
            whys.append(why)

    def _dim(self, key: tuple[str, int], axis: int, decl, d: Dim) -> bool | None:
        """Match one dim: True where proven equal, False where the declaration contradicts it,
        None where neither (or where it names something only :meth:`finish` can decide)."""
        if decl.HasField("dim_value"):  # a negative number (paddle2onnx's -1) is no size: "unknown", no claim
            return None if decl.dim_value < 0 or not self.verdicts else dims.try_eq(d, decl.dim_value)
        text, value = decl.dim_param, key[0]
        if not text.strip() or ANONYMOUS.fullmatch(text) or text.strip() in UNNAMED_PARAMS:
            return None
        known = self._parse(text)
        if known is None:
            return None
        names = tuple(sorted(dims.free_symbols(known) & set(self._names.values()), key=lambda s: s.name))
        if not names:
            if not self.verdicts:
                return None
            if any(s.name in self.fresh for s in dims.free_symbols(known)):
                return None  # a name onnxsym itself wrote (an annotated model annotated again)
            known = self.resolve(known)
            verdict = dims.eq_verdict(known, d)  # (asked once: True, False, or None)
            if verdict is True:
                if text in self._bounded:
                    return None  # (equal below 2**53 only: not proven)
                if value not in self._unkeepable:
                    self.out.proven.add((value, axis))
                return True
            return verdict
        for s in names:
            self.out.places.setdefault(s.name, []).append((value, axis))
        self._claims.append(_Claim(key, axis, text, known, names, d))
        return None

    def _parse(self, text: str) -> Dim | None:
        """The declared text over the input symbols and a placeholder symbol for each other
        name in it; a text outside the grammar (sympy's ``Mod(...)``) is one name."""
        if text not in self._parsed:
            self._parsed[text] = self._parse_new(text)
        return self._parsed[text]

    def _parse_new(self, text: str) -> Dim | None:
        def lookup(n: str) -> Dim:
            if n in self.table.origin or n in self.table.bound:
                return self.table.get(n, "")
            s = self._names.get(n)
            if s is None:
                self.table.env.declare(n, dims.FRESH_LO, dims.INT64_MAX)  # (the inference's, not whichever is current)
                s = self._names[n] = dims.Sym(n)
            return dims.expr_of(s)

        try:
            return parse_dim(text, lookup)
        except (ExprSyntaxError, ZeroDivisionError, dims.SymbolicDimError):
            if torch_text.mentions_torch(text):  # the dynamo exporter's sympy text: a claim like any other
                r = torch_text.read(text, lookup, self._torch_parts)
                if r is not None:
                    if r.bounded:
                        self._bounded.add(text)
                    return r.dim
            # Any string is a legal dim_param: one outside the grammar is a name.
            try:
                return lookup(text)
            except dims.SymbolicDimError:
                return None

    # -- every value ------------------------------------------------------------
    def finish(self) -> None:
        """Give each declared name the value that its places imply, check every place
        against it, and record the aliases, the proven places and the stale declarations.
        Without verdicts, only where a place may name a fresh symbol (what is written of them)."""
        if self.verdicts or any((a := dims.as_sym(c.computed)) is not None and a.name in self.fresh
                                for c in self._claims):
            self._settle_claims()
        for key, why in self._stale.items():
            st = StaleDeclaration(key[0], *self._shapes[key], "; ".join(why))
            self.out.stale.append(st)
            self.warnings.append(str(st))

    def _settle_claims(self) -> None:
        defs: dict[dims.Sym, Dim] = {}
        definer: dict[dims.Sym, _Claim] = {}
        impossible: dict[int, str] = {}  # claim index -> why no size makes it true
        pending = list(enumerate(self._claims))
        changed = True
        while changed:  # a name defined at one place may let another place define the next
            changed = False
            waiting = []
            for i, c in pending:
                open_ = [s for s in c.names if s not in defs]
                if len(open_) != 1:
                    if open_:
                        waiting.append((i, c))
                    continue
                k = dims.substitute(c.known, defs)
                s = open_[0]
                v = _solve(k, c.computed, s)
                if v is None:
                    continue
                lo, hi = dims.range_of(v)
                if hi < dims.FRESH_LO:
                    impossible[i] = f"'{s.name}' would be {v}, and a size is never negative"
                    continue
                defs[s], definer[s] = v, c
                changed = True
            pending = waiting
        for i, c in enumerate(self._claims):
            k = dims.substitute(c.known, defs)
            if i in impossible:
                c.verdict = False
            elif not dims.free_symbols(k) & set(self._names.values()):
                k = self.resolve(k)
                c.verdict = dims.eq_verdict(k, c.computed)
                if c.verdict and c.text in self._bounded:
                    c.verdict = None  # (equal below 2**53 only: not proven)
        consistent = set(defs) - {s for c in self._claims if not c.verdict for s in c.names}
        for i, c in enumerate(self._claims):
            if c.verdict is False:
                self._mark_claim(c, defs, definer, impossible.get(i, ""))
            elif c.verdict and all(s in consistent for s in c.names) and c.key[0] not in self._unkeepable:
                self.out.proven.add((c.key[0], c.axis))
                if len(c.names) == 1 and dims.as_sym(c.known) is c.names[0] and \
                        (a := dims.as_sym(c.computed)) is not None and a.name in self.fresh:
                    self.out.named_fresh.add((c.key[0], c.axis))
        self.out.aliases = {s.name: self.resolve(defs[s]) for s in sorted(consistent, key=lambda s: s.name)}

    def _mark_claim(self, c: _Claim, defs, definer, why: str) -> None:
        reasons = [why] if why else []
        for s in c.names:
            other = definer.get(s)
            if other is not None and other is not c:
                text = f"'{s.name}' is also declared at {other.key[0]}[{other.axis}] as '{other.text}', " \
                       f"where the graph computes {other.computed}"
                if dims.as_sym(other.known) is not s:
                    text += f" (so {s.name} = {defs[s]})"
                reasons.append(text)
        for r in reasons or [""]:
            self._mark(c.key, r)


def _solve(k: Dim, d: Dim, s: dims.Sym) -> Dim | None:
    """The ``s`` with ``k == d`` when that is linear in ``s`` with coefficient +-1."""
    diff = dims.sub(k, d)
    for sym, coef, rest in linear_symbols(diff):
        if sym is s:
            return dims.neg(rest) if coef == 1 else rest
    return None
