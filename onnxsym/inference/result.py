"""What inference found about a model: :class:`Result`, which :func:`onnxsym.infer` returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import onnx

from .. import dims
from ..dims import Dim
from ..facts.declared import Declarations, StaleDeclaration
from ..facts.fact import Constraint, Guard, Origin
from .provenance import Provenance
from .symbols import SymbolTable, under_ranges_of_result
from .values import Optional_, Sequence, Tensor, Value, resolve_value

if TYPE_CHECKING:
    from ..cost import Cost
    from ..domain import Domain  # (imported where computed: the domain reads a Result)
    from ..domain.pins import Pin


UNCHECKED = "unchecked"


@dataclass(frozen=True)
class UnresolvedDim:
    """A dim of a value that is not an expression over the model's input symbols."""

    value: str
    axis: int | None  # None: the rank itself is unknown
    dim: Dim | None
    provenance: tuple[Provenance, ...]

    def __str__(self) -> str:
        """``value[axis] = dim: Op 'node': reason``, the first provenance's (and how many more)."""
        where = f"{self.value}[{self.axis}] = {self.dim}" if self.axis is not None else f"{self.value}: rank unknown"
        if not self.provenance:
            return where
        p = self.provenance[0]
        more = f" (and {len(self.provenance) - 1} more)" if len(self.provenance) > 1 else ""
        return f"{where}: {p.op_type} '{p.node}': {p.reason}{more}"

    def __repr__(self) -> str:
        return f"<UnresolvedDim {self}>"


@dataclass(kw_only=True)
class Result:
    """What :func:`infer` found."""

    model: onnx.ModelProto
    values: dict[str, Value]
    produced: list[str]
    symbols: SymbolTable
    fresh: dict[str, Provenance]
    unknown_rank: dict[str, Provenance]
    assumptions: list[Constraint]
    warnings: list[str]
    no_rule: dict[tuple[str, str], int] = field(default_factory=dict)
    # Symbol -> its definition over the remaining symbols, from solved constraints.
    derived: dict[dims.Sym, Dim] = field(default_factory=dict)
    # The names the model declares on produced values (aliases) and its stale declarations.
    declarations: Declarations = field(default_factory=Declarations)
    subgraph_values: dict[str, Value] = field(default_factory=dict)  # computed inside If/Loop/Scan bodies
    # Each rule that raised (a bug in onnxsym; outside strict mode its outputs are unknown).
    rule_failures: list[str] = field(default_factory=list)
    # Each subgraph inferred: (its graph, its guards, its values), as Engine.subgraph_runs
    subgraph_runs: list[tuple[onnx.GraphProto, tuple[Guard, ...], dict[str, Value]]] = field(
        default_factory=list, repr=False, compare=False)
    # Each subgraph inferred, by its path: whether it ran wherever the model runs (Engine.sure_runs)
    sure_runs: dict[tuple[Any, ...], bool] = field(default_factory=dict, repr=False, compare=False)
    # Each function body inferred: (its graph, with the function's inputs, its guards, its values)
    function_runs: list[tuple[onnx.GraphProto, tuple[Guard, ...], dict[str, Value]]] = field(
        default_factory=list, repr=False, compare=False)
    # The same values per subgraph, by its path (onnxsym.inference.scope.graph_key of each enclosing one):
    # sibling scopes may define one name twice; a subgraph never inferred (an If branch proved
    # untaken) has no entry.
    scoped_values: dict[tuple[Any, ...], dict[str, Value]] = field(default_factory=dict)
    # The data the caller gave for graph inputs (``values``), by input name, row-major.
    given_values: dict[str, list[Any]] = field(default_factory=dict)
    # dim -> provenance of the fresh symbols it depends on (dims repeat across values): a cache
    fresh_of: dict[Dim, tuple[Provenance, ...]] = field(default_factory=dict, repr=False, compare=False)
    # The domain this result's symbols are narrowed to (see within_domain), else None.
    narrowed_to: Domain | None = field(default=None, repr=False, compare=False)
    _domain: Domain | None = field(default=None, repr=False, compare=False)  # domain()'s answer, once computed
    # How the model was read, so that it can be inferred again (api.written_result).
    base_dir: str | None = field(default=None, repr=False, compare=False)
    constant_initializers: bool = field(default=False, repr=False, compare=False)
    # The table of the inference whose --range and --assume this one sets aside (written_result).
    given: SymbolTable | None = field(default=None, repr=False, compare=False)
    # onnx's verdict on the model with these dims written (loadcheck.refusal; None: it takes
    # it), UNCHECKED until asked or after the domain made a dim static.
    load_verdict: object = field(default=UNCHECKED, repr=False, compare=False)
    # The values whose dims are not written, each with why: with them the load-time inference
    # refuses the model it loads without them (api.written_result); and whether that is settled.
    withheld: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    load_checked: bool = field(default=False, repr=False, compare=False)
    # The produced values whose dims hold only for the given input data (values): their dims under
    # it, where the written result, inferred without that data, has others (api.written_result).
    value_only: dict[str, tuple[Any, ...] | None] = field(default_factory=dict, repr=False, compare=False)
    # Whether the main graph's nodes are stored in an order that computes each value before a
    # node reads it (inference ran them so; False: not known).
    in_order: bool = field(default=False, repr=False, compare=False)
    # The main graph's nodes by index: (its kind: an object equal nodes share, None where the node
    # is its own; input names; output names; its op if a standard one; its domain as written): see
    # onnxsym.output.repeats.
    node_keys: dict[int, tuple[Any, ...]] = field(default_factory=dict, repr=False, compare=False)
    # Whether a node of the main graph has a graph attribute (None: not known).
    holds_subgraphs: bool | None = field(default=None, repr=False, compare=False)

    @property
    def env(self) -> dims.RangeEnv:
        """The ranges of this result's symbols: ``with result.env:`` computes with its dims under
        them (elsewhere a symbol has the current environment's range: all of int64 if undeclared)."""
        return self.symbols.env

    def fresh_provenance(self, d: Dim) -> tuple[Provenance, ...]:
        """Where each fresh symbol of ``d`` was made, by symbol name; empty when ``d`` is
        static or an expression over the input symbols only."""
        if isinstance(d, int) or not self.fresh:
            return ()
        prov = self.fresh_of.get(d)
        if prov is None:
            prov = self.fresh_of[d] = tuple(self.fresh[s.name] for s in sorted(dims.free_symbols(d), key=lambda s: s.name)
                                             if s.name in self.fresh)
        return prov

    @property
    def constraints(self) -> list[Constraint]:
        """Every equality (or float32 bound) the model is only valid under, each with the node
        that requires it; ``assumptions`` is the same list."""
        return self.assumptions

    def positive_assumptions(self) -> list[Constraint]:
        """The decisions taken because a graph-input symbol's default range starts at 1
        (``past_seq >= 1``, with the node that took each): wrong where that symbol is 0."""
        return [c for c in self.assumptions if c.origin is Origin.DEFAULT_RANGE]

    @under_ranges_of_result
    def domain(self) -> Domain:
        """The valid input domain (an :class:`onnxsym.domain.Domain`): the conditions on the
        input symbols under which every node's shape is valid. A query: nothing of this result
        changes (:meth:`within_domain` is the result narrowed to it)."""
        if self.narrowed_to is not None:
            return self.narrowed_to
        if self._domain is None:
            from ..domain import compute

            self._domain = compute(self)
        return self._domain

    def within_domain(self) -> Result:
        """A new result: this one's symbols narrowed to the ranges of its domain (its symbol
        table, metadata and MLIR export then carry ``seq`` in ``[1, 64]``), in an environment
        of its own (a child of this one's), with the dims over them built again there; its
        ``narrowed_to`` is the domain. This result stays as it was."""
        if self.narrowed_to is not None:
            return self
        return _narrowed(self, self.domain())

    @property
    def aliases(self) -> dict[str, Dim]:
        """Each name the model declares on a produced value that is not a graph-input symbol
        (``LayerNormalizationout_dim_0``), with the dim it names (``batch``): a number, an
        expression over the input symbols, or the fresh symbol the name is kept for."""
        return self.declarations.aliases

    def alias_places(self, name: str) -> list[tuple[str, int]]:
        """The (value, axis) where the model declares the alias ``name``."""
        return list(self.declarations.places.get(name, ()))

    @property
    def stale(self) -> list[StaleDeclaration]:
        """The produced values whose declared shape the graph contradicts (another rank or
        number): their computed shapes are written; each is also a warning."""
        return self.declarations.stale

    def symbol_ranges(self) -> dict[str, tuple[int, int]]:
        """Each symbol's range ``(lo, hi)`` (narrowed where inference or the domain narrowed it)."""
        return {name: self.symbols.range_of(name) for name in self.symbols.symbols}

    def derived_symbols(self) -> dict[str, Dim]:
        """Derived symbol name -> its definition (``total == past + seq``)."""
        return {s.name: v for s, v in sorted(self.derived.items(), key=lambda kv: kv[0].name)
                if (a := dims.as_sym(v)) is None or a.name != s.name}

    @under_ranges_of_result
    def bounds(self) -> dict[str, Dim]:
        """Each fresh symbol the op that made it bounds over other symbols -> that proven upper
        bound, over the same symbols as the dims (derived ones replaced): NonZero's count <=
        its input's element count, TopK's unknown k <= the axis, NonMaxSuppression's boxes <=
        batch * classes * min(boxes, max_output_boxes_per_class)."""
        out: dict[str, Dim] = {}
        for name, p in self.fresh.items():
            b = p.bound
            if b is not None:
                out[name] = dims.substitute(b, self.derived) if self.derived and not isinstance(b, int) else b
        return out

    def roots(self) -> list[str]:
        """The symbols an assignment must give: graph-input symbols neither fresh nor derived."""
        derived = self.derived_symbols()
        return [n for n in self.symbols.symbols if n not in self.fresh and n not in derived]

    def shape(self, name: str) -> tuple[Dim, ...] | None:
        """The shape of value ``name`` (a graph input, or a value a node produces): a tuple of
        dims, each an ``int`` or an expression over the input symbols (``batch``, ``past + seq``)
        or over a fresh symbol (see :meth:`unresolved`). ``None`` when the model has no such
        value, its rank is unknown or it is no tensor; :meth:`shape_of` raises there instead."""
        v = self.values.get(name)
        return v.shape if isinstance(v, Tensor) else None

    def shape_of(self, name: str) -> tuple[Dim, ...]:
        """The shape of value ``name``, as :meth:`shape` gives it, never ``None``: raises
        :class:`onnxsym.NoShapeError` (a ``KeyError``) where :meth:`shape` returns ``None``,
        naming the nearest value names (``did you mean 'present_key_0'?``) when the model has
        no value ``name``. Its type has no ``None``: ``result.shape_of(x)[2]`` type-checks."""
        from ..errors import NoShapeError

        v = self.values.get(name)
        if isinstance(v, Tensor) and v.shape is not None:
            return v.shape
        if v is None:
            import difflib

            near = tuple(difflib.get_close_matches(name, list(self.values), n=3))
            raise NoShapeError(name, "the model has no value of this name", near)
        why = "its rank is unknown" if isinstance(v, Tensor) else f"it is no tensor ({type(v).__name__.rstrip('_')})"
        raise NoShapeError(name, why)

    @property
    def pins(self) -> list[Pin]:
        """The declared symbols the domain pins to a few sizes or ties to another (``batch ==
        1`` from a Reshape to a constant ``[1, ...]``; ``height == width``), each a
        :class:`onnxsym.domain.pins.Pin` with the node that pins it; computes :meth:`domain`."""
        from ..domain.pins import pins_of

        return pins_of(self)

    def __repr__(self) -> str:
        """Short: the graph, its counts and symbols (no weights, no values)."""
        st = self.stats()
        name = self.model.graph.name or "graph"
        symbols = ", ".join(self.roots()) or "none"
        return (f"<Result {name!r}: {st['values']} values, {st['symbolic_dims']} symbolic dims, "
                f"{st['unresolved_dims']} unresolved; symbols: {symbols}>")

    def __str__(self) -> str:
        """The graph inputs and outputs with their shapes, the symbols with their ranges and the
        unresolved dims' count: what a first look needs."""
        from ..output.numbers import range_text

        g = self.model.graph
        inits = {t.name for t in g.initializer}

        def line(name: str) -> str:
            shape = self.shape(name)
            return f"  {name}: " + ("rank unknown" if shape is None else f"[{', '.join(map(str, shape))}]")

        out = [repr(self), "inputs:"] + [line(i.name) for i in g.input if i.name not in inits]
        out += ["outputs:"] + [line(o.name) for o in g.output]
        ranges = self.symbol_ranges()
        if ranges:
            out.append("symbols: " + ", ".join(f"{n} {range_text(*r)}" for n, r in ranges.items()))
        unresolved = self.unresolved()
        if unresolved:
            out.append(f"unresolved: {len(unresolved)} dims (result.unresolved())")
        return "\n".join(out)

    @under_ranges_of_result
    def sympy_shape(self, name: str) -> tuple[Any, ...] | None:
        """The shape of value ``name`` as sympy expressions (``None`` if unknown)."""
        from ..dims.sympy_bridge import to_sympy
        shape = self.shape(name)
        return None if shape is None else tuple(to_sympy(d) for d in shape)

    @under_ranges_of_result
    def cost(self) -> Cost:
        """Parameter and activation bytes, FLOPs, KV cache and peak memory: a :class:`onnxsym.cost.Cost`."""
        from ..cost import model_cost
        return model_cost(self)

    def _dims_of(self, name: str) -> tuple[Dim, ...] | None:
        """The dims a value is annotated with: a sequence's or optional's are its element's."""
        v = self.values.get(name)
        while isinstance(v, (Sequence, Optional_)):
            if isinstance(v, Sequence) and v.items == ():
                return ()  # an empty sequence has no item to know
            v = v.elem
        return v.shape if isinstance(v, Tensor) else None

    @under_ranges_of_result
    def unresolved(self) -> list[UnresolvedDim]:
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
    def stats(self) -> dict[str, int]:
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


def _narrowed(result: Result, domain: Domain) -> Result:
    """``result`` with its symbols narrowed to ``domain``'s ranges (an empty range is left alone;
    a range never widens) in a child of its environment, and every dim over a narrowed symbol
    built again there (the algebra then drops what the new range decides: ``min(64, seq)`` is
    ``seq`` for ``seq <= 64``). Outside the domain the model does not run, or its shapes are not
    the narrowed expressions: that is what the domain states."""
    table = result.symbols
    ranges: dict[str, tuple[int, int]] = {}
    for name, (lo, hi) in domain.ranges.items():
        if name in table.symbols and lo <= hi:
            olo, ohi = table.range_of(name)
            new = (max(lo, olo), min(hi, ohi))
            if new != (olo, ohi):
                ranges[name] = new
    if not ranges:
        return dataclasses.replace(result, narrowed_to=domain)
    env = table.env.child(ranges)
    symbols = dataclasses.replace(table, env=env, symbols=dict(table.symbols), origin=dict(table.origin),
                                  ranges=dict(table.ranges), bound=dict(table.bound), warnings=list(table.warnings),
                                  assume=list(table.assume), defaulted=set(table.defaulted))
    mapping = {table.symbols[name]: dims.expr_of(table.symbols[name]) for name in ranges}  # each built again
    memo: dict[Dim, Dim] = {}
    fixed = False

    def rewrite(d: Dim) -> Dim:
        nonlocal fixed
        if isinstance(d, int):
            return d
        r = memo.get(d)
        if r is None:
            r = memo[d] = dims.substitute(d, mapping)
            fixed = fixed or isinstance(r, int)
        return r

    # by object: equal values are mostly one (interned), so each distinct one is built again once
    done: dict[int, Value] = {}
    kept: list[Value] = []  # (each v kept alive: its id stays its own)

    def again(vs: dict[str, Value]) -> dict[str, Value]:
        ids = list(map(id, vs.values()))
        for i, v in dict(zip(ids, vs.values())).items():  # (each distinct object once)
            if i not in done:
                r = resolve_value(v, rewrite)
                assert r is not None  # (None only for None)
                done[i] = r
                kept.append(v)
        return dict(zip(vs, map(done.__getitem__, ids)))

    with env:
        values = again(result.values)
        subgraph_values = again(result.subgraph_values)
        scoped_values = {p: again(vs) for p, vs in result.scoped_values.items()}
        derived = {k: rewrite(v) for k, v in result.derived.items()}
    out = dataclasses.replace(result, symbols=symbols, values=values, subgraph_values=subgraph_values,
                              scoped_values=scoped_values, derived=derived, narrowed_to=domain, fresh_of={})
    if fixed:  # a dim it made static (seq // 128 under seq <= 127) may be refused where it did not run
        out.load_verdict, out.load_checked, out.withheld = UNCHECKED, False, {}
    return out
