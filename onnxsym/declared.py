"""What a model declares on the values its nodes produce, against what the graph computes.

Exporters write names of their own on produced values (TorchScript's
``LayerNormalizationout_dim_0``, paddle2onnx's ``p2o.DynamicDimension.3``, the
dynamo exporter's sympy text). Each such name is an *alias* of the dim the graph
computes there, and that dim (a number, or an expression over the graph-input
symbols) is what gets written. Only where the graph computes a fresh symbol (a dim
nothing else can name) is the declared name kept: it names that symbol.

A declaration on a produced value is the exporter's guess, not the model's contract
(onnxruntime runs the model whatever it says): one the graph contradicts (another
rank, another number, an expression provably different) is *stale*, a warning, and
the computed shape is written. A graph input's declared shape is never matched here:
it is where the symbols come from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import onnx

from . import dims
from .constraints import ConstraintContradiction, Constraints
from .dims import Dim
from .exprtext import ExprSyntaxError, parse_dim
from .loader import UNNAMED_PARAMS
from .symbols import SymbolTable
from .values import Tensor

# The names onnx's shape inference gives to dims it cannot name: not the model's names.
ANONYMOUS = re.compile(r"unk__\d+")

Place = Tuple[str, int]  # (value, axis)


@dataclass(frozen=True)
class StaleDeclaration:
    """A produced value whose declared shape the graph contradicts."""

    value: str
    declared: Tuple[str, ...]
    computed: Tuple[str, ...]

    def describe(self) -> str:
        return (f"value '{self.value}': the model declares [{', '.join(self.declared)}], "
                f"the graph computes [{', '.join(self.computed)}]")

    def __str__(self) -> str:
        return f"{self.describe()}: a stale declaration; the computed shape is written"


@dataclass
class Declarations:
    """The declared names of produced values, related to the computed dims."""

    aliases: Dict[str, Dim] = field(default_factory=dict)  # declared name -> the dim it names
    places: Dict[str, List[Place]] = field(default_factory=dict)  # declared name -> where it is declared
    named_fresh: Set[Place] = field(default_factory=set)  # where a declared name names a fresh symbol
    proven: Set[Place] = field(default_factory=set)  # where the declared dim_param equals the computed dim
    stale: List[StaleDeclaration] = field(default_factory=list)
    _new: Dict[str, dims.Sym] = field(default_factory=dict)  # names inside declared expressions

    def is_new(self, name: str) -> bool:
        """``name`` is a symbol that a declared expression introduced (``n`` in ``2*n``)."""
        return name in self._new

    def resolve(self, resolve: Callable[[Dim], Dim]) -> None:
        """Rewrite the aliases through the solved constraints; a name solved only as part of
        a declared expression (``2*n``) is an alias once it is defined."""
        for name, s in self._new.items():
            d = resolve(dims.expr_of(s))
            if name not in self.aliases and not dims.free_symbols(d) & set(self._new.values()):
                self.aliases[name] = d
        self.aliases = {k: resolve(v) for k, v in self.aliases.items()}


def declared_dims(tp: onnx.TypeProto) -> Optional[Sequence[onnx.TensorShapeProto.Dimension]]:
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    return tp.tensor_type.shape.dim


def _text(d: onnx.TensorShapeProto.Dimension) -> str:
    if d.HasField("dim_value"):
        return str(d.dim_value)
    return d.dim_param or "?"


class DeclaredMatcher:
    """Relates each produced value's declared dims to its computed ones, into ``out``."""

    def __init__(self, table: SymbolTable, fresh: Mapping[str, object], constraints: Constraints,
                 out: Declarations, warnings: List[str]):
        self.table, self.fresh, self.constraints, self.out, self.warnings = table, fresh, constraints, out, warnings

    def match(self, vi: onnx.ValueInfoProto, t: Tensor, made_by: str, relate: bool) -> None:
        """Match ``vi``'s declared shape against ``t``; ``relate``: record the relations a declared
        expression states as constraints (never in a subgraph: a branch may never run)."""
        decl = declared_dims(vi.type)
        if decl is None or t.shape is None:
            return
        if len(decl) != len(t.shape) or \
                not all([self._dim(vi.name, axis, dd, d, made_by, relate) for axis, (dd, d) in enumerate(zip(decl, t.shape))]):
            s = StaleDeclaration(vi.name, tuple(map(_text, decl)), tuple(map(str, t.shape)))
            self.out.stale.append(s)
            self.warnings.append(str(s))

    def _dim(self, value: str, axis: int, decl, d: Dim, made_by: str, relate: bool) -> bool:
        """Match one dim; False when the declaration contradicts it."""
        if decl.HasField("dim_value"):  # (a negative number is never a size)
            return decl.dim_value >= 0 and (not isinstance(d, int) or d == decl.dim_value)
        text = decl.dim_param
        if not text.strip() or ANONYMOUS.fullmatch(text) or text.strip() in UNNAMED_PARAMS:
            return True
        known, new, name = self._parse(text)
        place = (value, axis)
        if name is None and any(s.name in self.fresh for s in dims.free_symbols(known)):
            return True  # a name onnxsym itself wrote (an annotated model annotated again)
        if any(s.name in self.fresh for s in dims.free_symbols(d)):
            # The graph cannot name this dim: the model's name for it is kept.
            if name is not None and dims.as_sym(d) is not None and self.out.aliases.setdefault(name, d) is d:
                self.out.named_fresh.add(place)
                self.out.places.setdefault(name, []).append(place)
            return True
        for n in ([name] if name is not None else [s.name for s in new]):
            self.out.places.setdefault(n, []).append(place)
        if name is not None:
            if name not in self.out.aliases:
                self.out.aliases[name] = d
                self.out.proven.add(place)
                return True
            known, new = self.out.aliases[name], []  # the same name again: the model says the dims are equal
        if not relate:
            return dims.try_eq(self.constraints.resolve(known), self.constraints.resolve(d)) is not False
        try:
            # Only a name the declaration itself introduces is solved (2*half == seq);
            # a relation between computed dims is recorded, never solved: a declaration on a
            # produced value does not specialize the model (an output called 'batch' that is 1).
            self.constraints.require(known, d, made_by, "", f"the model declares {value}[{axis}] as '{text}'",
                                     solve=bool(new), kind="declared", only=set(new))
        except ConstraintContradiction:
            return False
        if self.constraints.resolve(known) is self.constraints.resolve(d):
            self.out.proven.add(place)
        return True

    def _parse(self, text: str) -> Tuple[Dim, List[dims.Sym], Optional[str]]:
        """The declared text over the input symbols and the aliases known so far; the names in
        it that are neither (each a symbol of its own); and, when the text is one name that is
        not an input symbol, that name."""
        new: List[dims.Sym] = []
        looked: List[Tuple[str, Dim]] = []

        def lookup(n: str) -> Dim:
            if n in self.table.origin or n in self.table.bound:
                v = self.table.get(n, "")
            elif n in self.out.aliases:
                v = self.out.aliases[n]
            else:
                s = self.out._new.get(n)
                if s is None:
                    s = self.out._new[n] = dims.Sym(n, dims.FRESH_LO, dims.INT64_MAX)
                if s not in new:
                    new.append(s)
                v = dims.expr_of(s)
            looked.append((n, v))
            return v

        try:
            known = parse_dim(text, lookup)
        except (ExprSyntaxError, ZeroDivisionError, dims.SymbolicDimError):
            # Any string is a legal dim_param: one outside the grammar is a name.
            new.clear()
            looked.clear()
            known = lookup(text)
        one = len(looked) == 1 and (looked[0][1] is known or looked[0][1] == known)
        name = looked[0][0] if one and not (looked[0][0] in self.table.origin or looked[0][0] in self.table.bound) else None
        if name is not None:
            new.clear()  # a single name is an alias, defined without solving anything
            self.out._new.pop(name, None)
        return known, new, name
