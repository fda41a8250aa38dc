"""The library entry points: :func:`infer` and :func:`annotate`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union
from typing import Sequence as Seq  # values.Sequence is the ONNX sequence value

import onnx

from . import dims, validate
from .dims import Dim
from .constraints import Constraint
from .declared import Declarations, StaleDeclaration
from .engine import Engine, Provenance
from .errors import UserInputError
from .loader import load_model
from .symbols import SymbolTable, under_ranges_of_result
from .values import Optional_, Sequence, Tensor, Value
from .writer import write_metadata, write_shapes, write_subgraph_shapes

if TYPE_CHECKING:
    from .domain import Domain  # (imported where computed: the domain reads a Result)

ModelLike = Union[str, os.PathLike, onnx.ModelProto]
# True: every graph-input dim may be 0; or the names of the symbols that may be.
AllowZero = Union[bool, str, Iterable[str]]

__version__ = "0.1.0"


@dataclass(frozen=True)
class UnresolvedDim:
    """A dim of a value that is not an expression over the model's input symbols."""

    value: str
    axis: Optional[int]  # None: the rank itself is unknown
    dim: Optional[Dim]
    provenance: Tuple[Provenance, ...]


@dataclass
class Result:
    """What :func:`infer` found."""

    model: onnx.ModelProto
    values: Dict[str, Value]
    produced: List[str]
    symbols: SymbolTable
    fresh: Dict[str, Provenance]
    unknown_rank: Dict[str, Provenance]
    assumptions: List[Constraint]
    warnings: List[str]
    no_rule: Dict[Tuple[str, str], int] = field(default_factory=dict)
    # Symbol -> its definition over the remaining symbols, from solved constraints.
    derived: Dict[dims.Sym, Dim] = field(default_factory=dict)
    # The names the model declares on produced values (aliases) and its stale declarations.
    declarations: Declarations = field(default_factory=Declarations)
    subgraph_values: Dict[str, Value] = field(default_factory=dict)  # computed inside If/Loop/Scan bodies
    # Each rule that raised (a bug in onnxsym; outside strict mode its outputs are unknown).
    rule_failures: List[str] = field(default_factory=list)
    # dim -> provenance of the fresh symbols it depends on (dims repeat across values)
    _fresh_of: Dict[Dim, Tuple[Provenance, ...]] = field(default_factory=dict, repr=False, compare=False)
    _domain: Optional[Domain] = field(default=None, repr=False, compare=False)  # see domain()

    @property
    def env(self) -> dims.RangeEnv:
        """The ranges of this result's symbols: ``with result.env:`` computes with its dims under
        them (elsewhere a symbol has the current environment's range: all of int64 if undeclared)."""
        return self.symbols.env

    def fresh_provenance(self, d: Dim) -> Tuple[Provenance, ...]:
        """Where each fresh symbol of ``d`` was made, by symbol name; empty when ``d`` is
        static or an expression over the input symbols only."""
        if isinstance(d, int) or not self.fresh:
            return ()
        prov = self._fresh_of.get(d)
        if prov is None:
            prov = self._fresh_of[d] = tuple(self.fresh[s.name] for s in sorted(dims.free_symbols(d), key=lambda s: s.name)
                                             if s.name in self.fresh)
        return prov

    @property
    def constraints(self) -> List[Constraint]:
        """Every equality (or float32 bound) the model is only valid under, each with the node
        that requires it; ``assumptions`` is the same list."""
        return self.assumptions

    def positive_assumptions(self) -> List[Constraint]:
        """The decisions taken because a graph-input symbol's default range starts at 1
        (``past_seq >= 1``, with the node that took each): wrong where that symbol is 0."""
        return [c for c in self.assumptions if c.kind == "positive"]

    @under_ranges_of_result
    def domain(self) -> Domain:
        """The valid input domain (an :class:`onnxsym.domain.Domain`): the conditions on the
        input symbols under which every node's shape is valid. Computing it narrows the
        symbols' ranges to it (the symbol table, the metadata and the MLIR export then
        carry ``seq`` in ``[1, 64]``) and rewrites the dims over them."""
        if self._domain is None:
            from .domain import compute
            from .domain.narrow import narrow

            self._domain = compute(self)
            narrow(self, self._domain.ranges)
        return self._domain

    @property
    def aliases(self) -> Dict[str, Dim]:
        """Each name the model declares on a produced value that is not a graph-input symbol
        (``LayerNormalizationout_dim_0``), with the dim it names (``batch``): a number, an
        expression over the input symbols, or the fresh symbol the name is kept for."""
        return self.declarations.aliases

    def alias_places(self, name: str) -> List[Tuple[str, int]]:
        """The (value, axis) where the model declares the alias ``name``."""
        return list(self.declarations.places.get(name, ()))

    @property
    def stale(self) -> List[StaleDeclaration]:
        """The produced values whose declared shape the graph contradicts (another rank or
        number): their computed shapes are written; each is also a warning."""
        return self.declarations.stale

    def symbol_ranges(self) -> Dict[str, Tuple[int, int]]:
        """Each symbol's range ``(lo, hi)`` (narrowed where inference or the domain narrowed it)."""
        return {name: self.symbols.range_of(name) for name in self.symbols.symbols}

    def derived_symbols(self) -> Dict[str, Dim]:
        """Derived symbol name -> its definition (``total == past + seq``)."""
        return {s.name: v for s, v in sorted(self.derived.items(), key=lambda kv: kv[0].name)
                if (a := dims.as_sym(v)) is None or a.name != s.name}

    def roots(self) -> List[str]:
        """The symbols an assignment must give: graph-input symbols neither fresh nor derived."""
        derived = self.derived_symbols()
        return [n for n in self.symbols.symbols if n not in self.fresh and n not in derived]

    def shape(self, name: str) -> Optional[Tuple[Dim, ...]]:
        v = self.values.get(name)
        return v.shape if isinstance(v, Tensor) else None

    @under_ranges_of_result
    def sympy_shape(self, name: str):
        """The shape of value ``name`` as sympy expressions (``None`` if unknown)."""
        from .sympy_bridge import to_sympy
        shape = self.shape(name)
        return None if shape is None else tuple(to_sympy(d) for d in shape)

    @under_ranges_of_result
    def cost(self):
        """Parameter and activation bytes, FLOPs, KV cache and peak memory: a :class:`onnxsym.cost.Cost`."""
        from .cost import model_cost
        return model_cost(self)

    def _dims_of(self, name: str) -> Optional[Tuple[Dim, ...]]:
        """The dims a value is annotated with: a sequence's or optional's are its element's."""
        v = self.values.get(name)
        while isinstance(v, (Sequence, Optional_)):
            if isinstance(v, Sequence) and v.items == ():
                return ()  # an empty sequence has no item to know
            v = v.elem
        return v.shape if isinstance(v, Tensor) else None

    @under_ranges_of_result
    def unresolved(self) -> List[UnresolvedDim]:
        """Every produced value's dim that depends on a fresh symbol, or whose rank is unknown."""
        if not self.fresh:
            return [UnresolvedDim(name, None, None, (self.unknown_rank[name],))
                    for name in self.produced if name in self.unknown_rank]
        out = []
        for name in self.produced:
            if name in self.unknown_rank:
                out.append(UnresolvedDim(name, None, None, (self.unknown_rank[name],)))
                continue
            shape = self._dims_of(name)
            if shape is None:
                continue
            for axis, d in enumerate(shape):
                prov = self.fresh_provenance(d)
                if prov:
                    out.append(UnresolvedDim(name, axis, d, prov))
        return out

    @under_ranges_of_result
    def stats(self) -> Dict[str, int]:
        """Counts of values and dims: static, symbolic over input symbols, unresolved."""
        values = static = symbolic = unresolved = 0
        for name in self.produced:
            shape = self._dims_of(name)
            values += 1
            if shape is None:
                unresolved += 1
                continue
            for d in shape:
                if isinstance(d, int):
                    static += 1
                elif self.fresh_provenance(d):
                    unresolved += 1
                else:
                    symbolic += 1
        return {"values": values, "static_dims": static, "symbolic_dims": symbolic,
                "unresolved_dims": unresolved}


def infer(model_or_path: ModelLike, bind: Optional[Mapping[str, int]] = None,
          ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
          assume: Seq[Union[str, Tuple[str, str]]] = (), allow_zero: AllowZero = False,
          progress: Optional[Callable[[int, int], None]] = None, constant_initializers: bool = False,
          strict: Optional[bool] = None) -> Result:
    """Infer the symbolic shape of every value of a model.

    ``bind`` fixes input symbols to numbers before inference (``{"batch": 1}``);
    ``ranges`` narrows their ranges (``{"seq": (1, 4096)}``); ``assume`` adds
    constraints (``["past == seq"]``); ``allow_zero`` lets graph-input dims be 0
    (their range starts at 1 otherwise): ``True`` for every one, or the names of the
    symbols that may be 0 (``["past_seq"]``); ``progress(done, total)`` is called after
    each node. ``ranges`` also takes sympy intervals (``sympy.Interval(1, 4096)``), sympy
    symbols as keys, and objects with ``lower``/``upper`` (the ``range_constraints`` of a
    torch ``ExportedProgram``), or the ``ExportedProgram`` itself; ``assume`` takes
    ``sympy.Eq(past, seq)``. An initializer that is also a graph input may be fed by the
    caller from IR version 4 on, so only its declared shape is known;
    ``constant_initializers`` takes its value as a constant, as onnxruntime does below IR
    version 4. ``strict=True`` raises :class:`RuleFailure` when a rule fails (default:
    ``onnxsym.engine.STRICT``, set by ``ONNXSYM_STRICT=1``).
    """
    from . import rules  # noqa: F401  (registers the built-in rules)

    model, base_dir = load_model(model_or_path)
    validate.check_opsets(model)
    validate.check_external_data(model, base_dir)
    given_ranges = _checked_ranges(_plain_ranges({} if ranges is None else ranges, model))
    table = SymbolTable(bound=dict(bind or {}), ranges=given_ranges,
                        assume=[parse_assumption(a) for a in assume],
                        default_lo=0 if allow_zero is True else dims.DEFAULT_LO,
                        zero_ok=_zero_names(allow_zero))
    engine = Engine(model, table, base_dir, constant_initializers)
    engine.progress = progress
    if strict is not None:
        engine.strict = strict
    engine.run()
    return Result(model, engine.env, engine.produced, table, engine.fresh, engine.unknown_rank,
                  engine.constraints.items, table.warnings + engine.warnings, engine.no_rule, dict(engine.constraints.derived),
                  engine.declarations, engine.subgraph_values, engine.rule_failures)


def _zero_names(allow_zero: AllowZero) -> frozenset:
    """The symbols ``allow_zero`` names (none when it is a bool)."""
    if isinstance(allow_zero, bool) or not allow_zero:
        return frozenset()
    if isinstance(allow_zero, str):
        return frozenset([allow_zero])
    return frozenset(str(n) for n in allow_zero)


def parse_assumption(a) -> Tuple[str, str]:
    """``"past == seq"`` (or a pair of texts, or a ``sympy.Eq``) as ``(lhs, rhs)``."""
    if not isinstance(a, (str, tuple, list)):
        from .sympy_bridge import relation_texts
        try:
            return relation_texts(a)
        except ValueError as exc:
            raise UserInputError(f"assume: {exc}") from None
    if not isinstance(a, str):
        lhs, rhs = a
        return str(lhs), str(rhs)
    lhs, sep, rhs = a.partition("==")
    if not sep or not lhs.strip() or not rhs.strip() or "==" in rhs:
        raise UserInputError(f"assume '{a}': expected 'EXPR == EXPR'", f"--assume '{a}': expected 'EXPR == EXPR'")
    return lhs.strip(), rhs.strip()


def _plain_ranges(ranges, model: onnx.ModelProto) -> Mapping[str, Tuple[int, int]]:
    """Ranges keyed by name with ``(lo, hi)`` pairs; sympy symbols and intervals, objects
    with ``lower``/``upper`` (torch.export's range_constraints) and an ExportedProgram
    itself (its numbered symbols named as the model's inputs name them) go through the bridge."""
    if isinstance(ranges, Mapping) and all(isinstance(k, str) and isinstance(v, tuple) for k, v in ranges.items()):
        return ranges
    from .sympy_bridge import exported_program_ranges, sympy_ranges
    try:
        if hasattr(ranges, "range_constraints"):
            return exported_program_ranges(ranges, model)
        return sympy_ranges(ranges)
    except (ValueError, AttributeError, KeyError, TypeError) as exc:
        raise UserInputError(f"ranges: {exc}") from None


def _checked_ranges(ranges: Mapping[str, Tuple[int, int]]) -> Dict[str, Tuple[int, int]]:
    out = {}
    for name, (lo, hi) in ranges.items():
        if not (isinstance(lo, int) and isinstance(hi, int)) or lo < 0 or lo > hi:
            raise UserInputError(f"ranges[{name!r}] = ({lo}, {hi}): expected 0 <= lo <= hi",
                                 f"--range {name}={lo}:{hi}: expected 0 <= LO <= HI")
        out[name] = (lo, hi)
    return out


def annotate(model_or_path: ModelLike, bind: Optional[Mapping[str, int]] = None,
             ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
             inplace: bool = False, assume: Seq[Union[str, Tuple[str, str]]] = (),
             allow_zero: AllowZero = False, constant_initializers: bool = False,
             keep_declared_names: bool = False) -> onnx.ModelProto:
    """The model with every produced value's dtype and symbolic shape in
    ``graph.value_info`` (graph outputs filled in place) and the symbol table in
    ``metadata_props``. A ``ModelProto`` argument is copied unless ``inplace``.
    ``keep_declared_names``: see :func:`write_result`."""
    result = infer(model_or_path, bind=bind, ranges=ranges, assume=assume, allow_zero=allow_zero,
                   constant_initializers=constant_initializers)
    return write_result(result, inplace=inplace or not isinstance(model_or_path, onnx.ModelProto),
                        keep_declared_names=keep_declared_names)


@under_ranges_of_result
def write_result(result: Result, inplace: bool = False, keep_declared_names: bool = False) -> onnx.ModelProto:
    """The annotated model for an inference result. Every produced value gets its inferred
    dims; a name the model declares there is kept only where the dim is a fresh symbol
    (it names it), and recorded in ``onnxsym.aliases``. ``keep_declared_names=True``
    keeps a declared name wherever it is proven equal to the inferred dim, or where the
    inferred dim is over fresh symbols only (the rule before aliases)."""
    model = result.model
    if not inplace:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        model = copy
    decl = result.declarations
    keep = decl.named_fresh | decl.proven if keep_declared_names else decl.named_fresh
    write_shapes(model.graph, result.values, result.produced, result.fresh, result.warnings,
                 keep, keep_declared_names)
    if result.subgraph_values:  # else no subgraph was inferred: nothing to look for
        write_subgraph_shapes(model.graph, result.subgraph_values, result.fresh, result.warnings,
                              keep, keep_declared_names)
    ranges = result.symbol_ranges()
    table = result.symbols
    write_metadata(model, {
        "version": __version__,
        "symbols": {name: {"origin": table.origin.get(name, ""), "range": list(ranges[name])}
                    for name in sorted(table.symbols)},
        "constraints": [{"constraint": str(c), "node": c.node, "op_type": c.op_type, "reason": c.reason,
                         "kind": c.kind}
                        for c in result.constraints],
        "derived": {name: str(v) for name, v in result.derived_symbols().items()},
        "aliases": {name: str(v) for name, v in sorted(result.aliases.items())},
        "stale": [{"value": st.value, "declared": list(st.declared), "computed": list(st.computed)}
                  for st in result.stale],
        "user": {"bind": dict(table.bound), "ranges": {k: list(v) for k, v in table.ranges.items()},
                 "assume": [f"{a} == {b}" for a, b in table.assume],
                 "allow_zero": table.default_lo == 0, "allow_zero_symbols": sorted(table.zero_ok)},
        "unresolved": [{"value": u.value, "axis": u.axis, "dim": None if u.dim is None else str(u.dim),
                        "reasons": [f"{p.op_type} '{p.node}': {p.reason}" for p in u.provenance]}
                       for u in result.unresolved()],
    })
    if result._domain is not None:  # computed: the ranges above are its
        write_metadata(model, {"domain": result._domain.to_json()})
    return model
