"""The library entry points: :func:`infer`, :func:`annotate` and :func:`write_result`."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Sequence as Seq
from contextvars import ContextVar

import onnx

from . import __version__, dims
from .errors import PinnedError, RuleFailure, UserInputError
from .facts import branching
from .inference.engine import Engine
from .inference.result import Result, UnresolvedDim  # noqa: F401  (public here: onnxsym.api.Result)
from .inference.scope import graph_key
from .inference.symbols import SymbolTable, under_ranges_of_result
from .model import dynamic as dynamic_inputs
from .model import given, validate
from .model.loader import load_model
from .output import metadata
from .output.writer import (
    dead_branch_reads,
    decided_ifs,
    if_paths,
    name_unnamed_inputs,
    specialise_inputs,
    write_shapes,
    write_subgraph_shapes,
)

# and an onnx_ir.Model or a torch ONNXProgram (see onnxsym.model.objects; typed as object: neither is imported)
ModelLike = str | os.PathLike | onnx.ModelProto | bytes | object
# True: every graph-input dim may be 0; or the names of the symbols that may be.
AllowZero = bool | str | Iterable[str]


def infer(model_or_path: ModelLike, bind: Mapping[str, int] | None = None,
          ranges: Mapping[str, tuple[int, int]] | None = None,
          assume: Seq[str | tuple[str, str]] = (), allow_zero: AllowZero = False,
          progress: Callable[[int, int], None] | None = None, constant_initializers: bool = False,
          strict: bool | None = None, dynamic: dynamic_inputs.Dynamic | None = None,
          values: Mapping[str, object] | None = None) -> Result:
    """Infer the symbolic shape of every value of a model (a path, a ``ModelProto``, the
    model's serialized bytes, an ``onnx_ir.Model`` or a torch ``ONNXProgram``: those two are
    recognised without importing onnx_ir or torch, and inferred on a serialized copy).

    ``bind`` fixes input symbols to numbers before inference (``{"batch": 1}``);
    ``ranges`` narrows their ranges (``{"seq": (1, 4096)}``); ``assume`` adds
    constraints (``["past == seq"]``); ``allow_zero`` lets graph-input dims be 0
    (their range starts at 1 otherwise): ``True`` for every one, or the names of the
    symbols that may be 0 (``["past_seq"]``); sizes are ints (a numpy integer is one; a
    bool, a float or a text is an error); ``progress(done, total)`` is called after
    each node. ``ranges`` also takes sympy intervals (``sympy.Interval(1, 4096)``), sympy
    symbols as keys, and objects with ``lower``/``upper`` (the ``range_constraints`` of a
    torch ``ExportedProgram``), or the ``ExportedProgram`` itself; ``assume`` takes
    ``sympy.Eq(past, seq)``. An initializer that is also a graph input may be fed by the
    caller from IR version 4 on, so only its declared shape is known;
    ``constant_initializers`` takes its value as a constant, as onnxruntime does below IR
    version 4. ``strict=True`` raises :class:`RuleFailure` when a rule fails (default:
    ``onnxsym.inference.engine.STRICT``, set by ``ONNXSYM_STRICT=1``). ``dynamic`` makes static
    graph-input dims symbols (``{"images": {0: "batch"}}``), in a copy of the model: the
    domain then says whether the graph runs at other sizes (``onnxsym.domain.pins``). ``values`` gives
    the data of scalar or small graph inputs of static shape (``{"use_cache_branch": True}``): an
    If they decide takes its branch (see :mod:`onnxsym.model.given`; default: the command line's ``--value``).
    """
    bind = _checked_bind(bind)
    allow_zero = _checked_allow_zero(allow_zero)
    if isinstance(assume, str):  # one assumption, not its characters
        assume = [assume]
    model, base_dir = load_model(model_or_path)
    model = dynamic_inputs.apply(model, dynamic, copy=model is model_or_path)
    validate.check_opsets(model)
    validate.check_external_data(model, base_dir)
    given_ranges = _checked_ranges(_plain_ranges({} if ranges is None else ranges, model))
    assumptions = [parse_assumption(a) for a in assume]
    given_values = given.checked(given.CLI_VALUES.get() if values is None else values, model,
                                 constant_initializers or model.ir_version < 4)
    return _infer(model, base_dir, bind, given_ranges, assumptions, allow_zero, progress, constant_initializers,
                  strict, given_values)


def _infer(model: onnx.ModelProto, base_dir: str | None, bind, given_ranges, assumptions,
           allow_zero: AllowZero, progress, constant_initializers: bool, strict: bool | None,
           given_values: dict[str, list] | None = None) -> Result:
    from . import rules  # noqa: F401  (registers the built-in rules)

    def make_engine(choices) -> Engine:  # one per inference: an If the sizes decide may need more (branching)
        table = SymbolTable(bound=dict(bind or {}), ranges=given_ranges, assume=assumptions,
                            default_lo=0 if allow_zero is True else dims.DEFAULT_LO,
                            zero_ok=_zero_names(allow_zero))
        engine = Engine(model, table, base_dir, constant_initializers)
        engine.progress = None if choices else progress
        engine.choices = choices
        engine.given_values = given_values or {}
        if strict is not None:
            engine.strict = strict
        engine.declared_verdicts = not _WRITTEN_ONLY.get()
        return engine

    try:
        engine = branching.infer(make_engine)
    except RuleFailure:
        validate.check_with_onnx(model)  # a node the spec rules out is the model's fault, not a bug
        raise
    table = engine.table
    main = engine.main
    state = engine.state
    result = Result(model=model, values=main.values, produced=engine.produced, symbols=table, fresh=state.fresh,
                    unknown_rank=main.unknown_rank, assumptions=engine.constraints.items,
                    warnings=table.warnings + state.warnings, no_rule=state.no_rule,
                    derived=dict(engine.constraints.derived), declarations=engine.declarations,
                    subgraph_values=main.subgraph_values, rule_failures=state.rule_failures, base_dir=base_dir,
                    constant_initializers=constant_initializers, scoped_values=main.scoped_values,
                    subgraph_runs=state.subgraph_runs, sure_runs=state.sure_runs,
                    function_runs=state.function_runs, given_values=dict(given_values or {}),
                    in_order=engine.in_order, node_keys=engine.node_keys, holds_subgraphs=engine.holds_subgraphs)
    # What the rules take without complaint, onnx's inference may refuse (a node that fails
    # at every size): the model is invalid, not annotated. Asked with the dims inferred in
    # value_info, as they would be written (the verdict is kept for writing: see
    # written_result); only a refusal is asked again of the model as given.
    if _JUDGE_LATER.get():  # (the caller asks it of the copy it writes: infer_written)
        return result
    _judge(result)
    return result


def _judge(result: Result) -> None:
    result.load_verdict = _refusal(result, onnx_judge=True, runtime=False)
    if result.load_verdict is not None:
        validate.check_with_onnx(result.model)


# Set by infer_written: _infer leaves the load verdict to it.
_JUDGE_LATER: ContextVar[bool] = ContextVar("onnxsym_judge_later", default=False)
# Set by infer_written: only what the written model needs of the declarations (no verdict on a
# declared dim that names nothing: Result.stale and the proven declarations then lack those)
_WRITTEN_ONLY: ContextVar[bool] = ContextVar("onnxsym_written_only", default=False)


def infer_written(model: onnx.ModelProto, bind: Mapping[str, int] | None = None) -> tuple[Result, onnx.ModelProto]:
    """``infer(model, bind=bind)`` and ``write_result(..., metadata_entries=False)`` of it (a new
    model), as one call: what ``onnxsym.ort_compat`` asks for each model. Where nothing decides
    what is written but the dims inferred (nothing bound, no ranges, assumptions or values), onnx's
    verdict on the model with those dims (:func:`_refusal`), and with a subgraph that may not run
    where the model does (see :func:`_every_subgraph_runs`) onnxruntime's (:func:`_loadable`), are
    asked of the written model itself or light copies of it (the same bytes as the light copies it
    writes them into otherwise: the dims are written once); on a
    refusal, or otherwise, the result is judged and written as :func:`infer` and
    :func:`write_result` do.

    The result's declarations hold what the written model needs (the declared names that name a
    fresh symbol): a declared dim that names nothing is not judged, nor are declared names where
    none may name a fresh symbol, so ``result.stale``, ``result.aliases`` and the proven
    declarations lack those (the written model, without metadata, shows none)."""
    from .output import loadcheck

    token, only = _JUDGE_LATER.set(True), _WRITTEN_ONLY.set(True)
    try:
        result = infer(model, bind=bind)
    finally:
        _WRITTEN_ONLY.reset(only)
        _JUDGE_LATER.reset(token)
    table = result.symbols
    plain = not (table.bound or table.ranges or table.assume or result.given_values)
    if plain and not _may_not_run_somewhere(result):
        if _taken_by_kind(result):  # (what _refusal asks first)
            result.load_verdict = None
            return result, write_result(result, metadata_entries=False)
        out = _write(result, False, False, [], False)
        if not _onnx_refuses(out, result.in_order):
            result.load_verdict = None
            result.load_checked = True
            return result, out
    elif plain and loadcheck.runtime_installed():
        # a subgraph that may not run where the model does: onnx's inference, then onnxruntime,
        # judge the written model itself or light copies of it (the same bytes as the light copies
        # the dims are written into otherwise), so the dims are written once, not three times; on a
        # refusal, as before
        out = _write(result, False, False, [], False)
        taken = _taken_by_kind(result)
        if loadcheck.runtime_as_is(out, result.in_order):
            # (the light copy would differ only in node names, which only name a refused node:
            # the judges are asked of the written model's own bytes; a refusal is judged below)
            loads = loadcheck.loads_as_is(out, onnx_judge=not taken)
        else:
            light = loadcheck.LightModel(out, True, result.in_order)
            if not (taken or light.constants_as_inputs):
                # onnx's light copy would be these bytes (no large constant became an input; where
                # loadcheck.light_as_is holds, onnx's verdict on them is the model's): both judges
                # asked of one serialization, onnx's first
                loads = loadcheck.refusal(light, light.model, True, True) is None
            else:
                loads = (taken or not _onnx_refuses(out, result.in_order)) and \
                    loadcheck.refusal(light, light.model, False, True) is None
        if loads:
            result.load_verdict = None
            result.load_checked = True
            return result, out
    _judge(result)
    return result, write_result(result, metadata_entries=False)


def _onnx_refuses(out: onnx.ModelProto, in_order: bool) -> bool:
    """Whether onnx's strict inference refuses the written model ``out``, asked of its light copy,
    or of its own bytes where the copy would hold what inference reads alike (loadcheck.light_as_is)."""
    from .output import loadcheck

    if loadcheck.light_as_is(out, in_order):
        return loadcheck.onnx_refusal(out.SerializeToString()) is not None
    light = loadcheck.LightModel(out, False, in_order)
    return loadcheck.refusal(light, light.model, True, False) is not None


def checked_size(value, where: str, cli: str) -> int:
    """``value`` as a size: an int or a numpy integer; a bool, float or text is an error."""
    import numbers

    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    why = f"expected an int, got {type(value).__name__} {value!r}"
    raise UserInputError(f"{where}: {why}", f"{cli}: {why}")


def _checked_bind(bind) -> dict[str, int]:
    if bind is None:
        return {}
    if not isinstance(bind, Mapping):
        raise UserInputError(f"bind: expected a mapping of symbol names to ints, got {type(bind).__name__}")
    out = {}
    for name, v in bind.items():
        if not isinstance(name, str):
            raise UserInputError(f"bind: a symbol name must be a str, got {type(name).__name__} {name!r}")
        out[name] = checked_size(v, f"bind[{name!r}]", f"--bind {name}")
    return out


def _checked_allow_zero(allow_zero) -> AllowZero:
    if isinstance(allow_zero, (bool, str)) or allow_zero is None:
        return bool(allow_zero) if allow_zero is None else allow_zero
    try:
        names = list(allow_zero)
    except TypeError:
        raise UserInputError(f"allow_zero: expected True, a symbol name or names, got {type(allow_zero).__name__} "
                             f"{allow_zero!r}") from None
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise UserInputError(f"allow_zero: a symbol name must be a str, got {type(bad[0]).__name__} {bad[0]!r}")
    return names


def _zero_names(allow_zero: AllowZero) -> frozenset:
    """The symbols ``allow_zero`` names (none when it is a bool)."""
    if isinstance(allow_zero, bool) or not allow_zero:
        return frozenset()
    if isinstance(allow_zero, str):
        return frozenset([allow_zero])
    return frozenset(str(n) for n in allow_zero)


def parse_assumption(a) -> tuple[str, str]:
    """``"past == seq"`` (or a pair of texts, or a ``sympy.Eq``) as ``(lhs, rhs)``."""
    if not isinstance(a, (str, tuple, list)):
        from .dims.sympy_bridge import relation_texts
        try:
            return relation_texts(a)
        except ValueError as exc:
            raise UserInputError(f"assume: {exc}") from None
    if not isinstance(a, str):
        if len(a) != 2:  # (a triple with the relation, say: only equalities are assumed)
            raise UserInputError(f"assume {a!r}: expected 'EXPR == EXPR' or a pair (lhs, rhs) of expressions "
                                 "assumed equal")
        lhs, rhs = a
        return str(lhs), str(rhs)
    lhs, sep, rhs = a.partition("==")
    if not sep or not lhs.strip() or not rhs.strip() or "==" in rhs:
        raise UserInputError(f"assume '{a}': expected 'EXPR == EXPR'", f"--assume '{a}': expected 'EXPR == EXPR'")
    return lhs.strip(), rhs.strip()


def _plain_ranges(ranges, model: onnx.ModelProto) -> Mapping[str, object]:
    """Ranges keyed by name with ``(lo, hi)`` pairs; sympy symbols and intervals, objects
    with ``lower``/``upper`` (torch.export's range_constraints) and an ExportedProgram
    itself (its numbered symbols named as the model's inputs name them) go through the bridge."""
    if isinstance(ranges, Mapping) and all(isinstance(k, str) and isinstance(v, (tuple, list)) for k, v in ranges.items()):
        return ranges
    for k, v in ranges.items() if isinstance(ranges, Mapping) else ():
        if isinstance(v, (int, float, str, bytes)):  # no interval: one number is a bind
            why = f"expected (lo, hi), got {v!r}"
            raise UserInputError(f"ranges[{str(k)!r}]: {why}", f"--range {k}: {why}")
    from .dims.sympy_bridge import exported_program_ranges, sympy_ranges
    try:
        if hasattr(ranges, "range_constraints"):
            return exported_program_ranges(ranges, model)
        return sympy_ranges(ranges)
    except (ValueError, AttributeError, KeyError, TypeError) as exc:
        raise UserInputError(f"ranges: {exc}") from None


def _checked_ranges(ranges: Mapping[str, object]) -> dict[str, tuple[int, int]]:
    out = {}
    for name, pair in ranges.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            why = f"expected (lo, hi), got {pair!r}"
            raise UserInputError(f"ranges[{name!r}]: {why}", f"--range {name}: {why}")
        lo, hi = (checked_size(v, f"ranges[{name!r}] = {tuple(pair)!r}", f"--range {name}") for v in pair)
        if lo < 0 or lo > hi or hi > dims.INT64_MAX:
            raise UserInputError(f"ranges[{name!r}] = ({lo}, {hi}): expected 0 <= lo <= hi <= 2**63 - 1",
                                 f"--range {name}={lo}:{hi}: expected 0 <= LO <= HI <= 2**63 - 1")
        out[name] = (lo, hi)
    return out


def annotate(model_or_path: ModelLike, bind: Mapping[str, int] | None = None,
             ranges: Mapping[str, tuple[int, int]] | None = None,
             inplace: bool = False, assume: Seq[str | tuple[str, str]] = (),
             allow_zero: AllowZero = False, constant_initializers: bool = False,
             keep_declared_names: bool = False, dynamic: dynamic_inputs.Dynamic | None = None,
             values: Mapping[str, object] | None = None) -> onnx.ModelProto:
    """The model with every produced value's dtype and symbolic shape in
    ``graph.value_info`` (graph outputs filled in place) and the symbol table in
    ``metadata_props``. A ``ModelProto`` argument is copied unless ``inplace``.
    An ``onnx_ir.Model`` gives an annotated ``onnx_ir.Model`` back (a new one, made from the
    annotated proto), a torch ``ONNXProgram`` a new ``ONNXProgram`` holding that annotated
    model and the given one's ``exported_program``: the object given is never changed
    (``inplace`` does not apply to them), and ``.save()``, ``.model`` and running it work as on the one given.
    ``keep_declared_names``: see :func:`write_result`. ``dynamic``: see :func:`infer`; the
    model is written with those dims symbolic, and refused (:class:`PinnedError`) when its
    domain pins one of them: it would fail at the other sizes its inputs then declare.
    ``values``: see :func:`infer`."""
    from .model import objects

    what = objects.kind(model_or_path)
    if what is not None:  # inferred on a proto of its own, given back as the kind it came as
        original, model_or_path = model_or_path, objects.to_proto(model_or_path, what)
        inplace = True
    if dynamic and inplace and isinstance(model_or_path, onnx.ModelProto):
        model_or_path = dynamic_inputs.apply(model_or_path, dynamic, copy=False)  # (checked before inferring)
    result = infer(model_or_path, bind=bind, ranges=ranges, assume=assume, allow_zero=allow_zero,
                   constant_initializers=constant_initializers, dynamic=dynamic, values=values)
    if dynamic:
        refuse_pinned(result, dynamic)
    written = write_result(result, inplace=inplace or not isinstance(model_or_path, onnx.ModelProto),
                           keep_declared_names=keep_declared_names)
    return written if what is None else objects.back(written, original, what)


def written_result(result: Result) -> Result:
    """The result whose dims :func:`write_result` writes: ``result`` itself, or, when it was
    inferred under ``ranges``, ``assume`` or ``values``, the model inferred again without them
    (the dims that hold only for the given values are kept apart, in ``value_only``: fed
    other data, the written model must compute what the model as given computes).

    onnxruntime folds shapes and plans buffers from the value_info it is given, so a dim
    that holds only under the caller's ranges or assumptions would make the written model
    fail (or compute another shape) at sizes its declared inputs allow, and ONNX has no way
    to declare a range on an input. ``bind`` is kept: the bound numbers are written into
    the graph inputs too, unless the bound sizes decide an If that is undecided without
    them (then the model is inferred without the bind as well). The domain is computed
    again where ``result``'s was.

    The model so written must load in onnxruntime wherever the model as given does: its
    load-time inference reads the written dims, and may refuse a node they make static (a
    TopK in an If branch that does not run at those sizes, an opset-18 Split without
    ``num_outputs``). onnxruntime is asked (:mod:`onnxsym.output.loadcheck`); where it refuses, the
    bind is not written into the inputs, and then the dims of the values that lead to the
    node it names are not written (``withheld``, each with why).

    A query: ``result`` itself is left as it was (what the check finds goes into the result
    returned, a new one unless ``result`` is itself settled, as a returned one is)."""
    if result.load_checked:
        return result
    written = _written(result)
    if written is result:  # settled on a copy of its own: the caller's result stays as it was
        written = dataclasses.replace(result, warnings=list(result.warnings), withheld=dict(result.withheld))
    return _loadable(written, result)


def _again(result: Result, bind, values: dict[str, list] | None = None) -> Result:
    """``result``'s model inferred again with ``bind``, without ranges or assumptions, and
    without the given input data unless ``values``."""
    table = result.symbols
    allow_zero: AllowZero = True if table.default_lo == 0 else table.zero_ok
    return _infer(result.model, result.base_dir, bind, {}, [], allow_zero, None, result.constant_initializers, None,
                  values)


def _for_every_value(written: Result, result: Result) -> Result:
    """``written`` (inferred without ``result``'s given data) recording that data, and the
    values whose dims hold for it only (``value_only``: their dims under it)."""
    written.given_values = dict(result.given_values)
    for name in result.produced:
        if name in result.values and name in written.values and written.shape(name) != result.shape(name):
            written.value_only[name] = result.shape(name)
    return written


def for_every_value(result: Result) -> Result:
    """``result`` as it holds for every value its given inputs may be fed: inferred again
    without ``values`` (with its bind, ranges and assumptions; narrowed to the domain where it
    was), or ``result`` itself where no data was given. What the MLIR export prints: a dim that
    holds for the given data only would be compiled in, as onnxruntime folds a written one."""
    if not result.given_values:
        return result
    table = result.symbols
    allow_zero: AllowZero = True if table.default_lo == 0 else table.zero_ok
    again = _infer(result.model, result.base_dir, dict(table.bound), dict(table.ranges), list(table.assume),
                   allow_zero, None, result.constant_initializers, None, None)
    return again.within_domain() if result.narrowed_to is not None else again


def _unbound(result: Result) -> Result:
    """``result``'s model inferred again without its bind, ranges and assumptions (the dims as
    they hold at every size), the given ones recorded, the domain computed where it was."""
    free = _again(result, {})
    free.given = result.given or result.symbols
    free = free.within_domain() if result.narrowed_to is not None else free
    return _for_every_value(free, result) if result.given_values else free


# The most rounds of withholding dims before none are written.
_ROUNDS = 8


def _refusal(result: Result, onnx_judge: bool, runtime: bool, light=None, withheld=None):
    """Why onnx's inference (``onnx_judge``) or onnxruntime (``runtime``) would refuse the model
    with ``result``'s dims written (with ``withheld`` instead of the result's), or None."""
    from .output import loadcheck

    if light is None and withheld is None and onnx_judge and not runtime and _taken_by_kind(result):
        return None
    if light is None:  # (asked once: written into the light copy itself)
        light = loadcheck.LightModel(result.model, runtime, result.in_order)
        target = light.model
    else:
        target = light.copy()
    if withheld is not None:
        result = dataclasses.replace(result, withheld=dict.fromkeys(withheld, ""))
    _write_dims(result, target, False, [])
    return loadcheck.refusal(light, target, onnx_judge, runtime)


def _taken_by_kind(result: Result) -> bool:
    """Whether onnx's inference takes the model with ``result``'s dims written, judged on one node
    of each kind (see onnxsym.output.repeats); False: not settled so."""
    from .output import loadcheck, repeats

    if not repeats.may_save(result):
        return False
    model = result.model
    decl = result.declarations
    special = repeats.special_names(model.graph, _skipped(result, model), result.values,
                                    {value for value, _ in decl.named_fresh} | decl.dropped)
    kept = repeats.kept_nodes(result, special)
    if kept is None:
        return False
    nodes, names = kept
    light = loadcheck.LightModel(model, in_order=True, nodes=nodes)
    _write_dims(dataclasses.replace(result, produced=names), light.model, False, [])
    return loadcheck.takes_as_written(light.model)


def _loadable(written: Result, result: Result) -> Result:
    """``written`` (a result of its own: this settles it) for ``result``, or what of it loads
    (see :func:`written_result`)."""
    from .output import loadcheck

    # onnxruntime itself where a node may not run at every size (in a subgraph that may not run
    # where the model does; every node once the inputs are specialised), else onnx's inference
    # (what onnxruntime runs first) decides, asked when the result was inferred unless the domain
    # made a dim static since
    can_run = loadcheck.runtime_installed()
    runtime = bool(written.symbols.bound) or _may_not_run_somewhere(written)
    if runtime and not can_run:  # onnx's inference alone judges, and the summary says so
        if loadcheck.NO_RUNTIME not in written.warnings:
            written.warnings.append(loadcheck.NO_RUNTIME)
        runtime = False
    if not runtime and written.load_verdict is None:
        written.load_checked = True
        return written
    light = loadcheck.LightModel(written.model, runtime=True, in_order=written.in_order)

    def refused(r: Result, withheld=None):
        return _refusal(r, r.load_verdict is not None or withheld is not None, runtime, light, withheld)

    why = refused(written)
    if why is not None and written.symbols.bound:
        written = _unbound(result)
        runtime = can_run and _may_not_run_somewhere(written)
        why = refused(written)
    everything = set(loadcheck.producers(light.model))
    if why is not None and refused(written, everything) is None:  # (else no dim of ours is the cause)
        rounds, depth, last = 0, 1, None
        while why is not None:
            if why.place is None or rounds == _ROUNDS:
                names = everything
            else:
                depth = depth * 2 if why.place.node.name == last else 1
                names = loadcheck.upstream(light.model, why.place.node, depth)
                last = why.place.node.name
            written.withheld.update((n, why.describe()) for n in names if n not in written.withheld)
            rounds += 1
            why = None if names is everything else refused(written)
    written.load_checked = True
    return written


def _written(result: Result) -> Result:
    table = result.symbols

    values = result.given_values
    # (the given data decides only what the model computes when it is fed that data: onnxruntime
    # folds what the written dims make static, so dims that hold for that data alone would change
    # what the model computes for another; they are reported apart, value_only)

    def again(bind) -> Result:
        return _again(result, bind, values)

    bind = table.bound
    decided = decided_ifs(result.model.graph, {**result.subgraph_values, **result.values}) if bind else set()
    # (an If the data decides may not run at the bound sizes, and onnxruntime's load-time inference
    # would refuse what its branch computes there: a Squeeze of the bound 11; inputs stay symbolic)
    undecided = bool(bind) and bool(if_paths(result.model.graph) - decided)
    if decided or undecided or 0 in bind.values():
        # With the numbers in its inputs, onnxruntime's shape inference runs when it loads the
        # model: it folds an If branch that only the bound sizes leave untaken, and refuses the
        # model for what that branch computes there (a ConstantOfShape of d - 5 at d = 1), and
        # it refuses a Reshape of 0 elements to [0, -1], which it runs at size 0. The inputs
        # are then not specialised, and the dims written as they hold at every size.
        free = again({})
        if 0 in bind.values() or undecided or \
                not decided <= decided_ifs(free.model.graph, {**free.subgraph_values, **free.values}):
            bind = {}
            if not table.ranges and not table.assume and not values:
                free.given = table
                return free.within_domain() if result.narrowed_to is not None else free
    if bind is table.bound and not table.ranges and not table.assume and not values:
        return result
    plain = _again(result, bind)
    plain.given = table
    plain = plain.within_domain() if result.narrowed_to is not None else plain
    return _for_every_value(plain, result) if values else plain


@under_ranges_of_result
def refuse_pinned(result: Result, dynamic: dynamic_inputs.Dynamic) -> None:
    """Raise :class:`PinnedError` when the domain pins or ties a symbol ``dynamic`` introduced."""
    from .domain.pins import pins_of

    asked = dynamic_inputs.introduced(dynamic)
    pinned = [p for p in pins_of(result) if p.symbol in asked]
    if pinned:
        raise PinnedError(pinned, asked)


def write_result(result: Result, inplace: bool = False, keep_declared_names: bool = False,
                 warnings: list[str] | None = None, metadata_entries: bool = True) -> onnx.ModelProto:
    """The annotated model for an inference result. Every produced value gets its inferred
    dims; a name the model declares there is kept only where the dim is a fresh symbol
    (it names it), and recorded in ``onnxsym.aliases``. ``keep_declared_names=True``
    keeps a declared name or text wherever it is proven equal to the inferred dim (never
    where it is not: a declaration is a claim).

    The written model runs, with the shapes it declares, at every size its declared inputs
    allow: a bound symbol's number is written into the graph inputs (as onnxruntime's
    ``make_dynamic_shape_fixed`` does), and dims that hold only under ``ranges``,
    ``assume`` or ``values`` are not written (:func:`written_result`); ``onnxsym.user`` records what
    was given.

    ``result`` stays as it was (``inplace=True`` writes into its model); ``warnings``, a list,
    receives what writing warns of (a number the model declares where the graph computes
    an expression). ``metadata_entries=False`` writes no ``onnxsym.*`` metadata (those of an
    earlier annotation still go): for a caller whose contract has none (``onnxsym.ort_compat``)."""
    return _write(written_result(result), inplace, keep_declared_names, [] if warnings is None else warnings,
                  metadata_entries)


@under_ranges_of_result
def _write(result: Result, inplace: bool, keep_declared_names: bool, warnings: list[str],
           metadata_entries: bool = True) -> onnx.ModelProto:
    model = result.model
    if not inplace:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        model = copy
    _write_dims(result, model, keep_declared_names, warnings)
    metadata.write(model, metadata.entries(result, __version__) if metadata_entries else {})
    return model


@under_ranges_of_result
def _write_dims(result: Result, model: onnx.ModelProto, keep_declared_names: bool, warnings: list[str]) -> None:
    """Write ``result``'s dims into ``model`` (its model, or a copy of the same graphs);
    what writing warns of goes to ``warnings``."""
    decl = result.declarations
    keep = decl.named_fresh | decl.proven if keep_declared_names else decl.named_fresh
    skip = _skipped(result, model)
    write_shapes(model.graph, result.values, result.produced, result.fresh, warnings, keep, skip, decl.dropped)
    if result.scoped_values:  # else no subgraph was inferred: nothing to look for
        write_subgraph_shapes(model.graph, result.scoped_values, result.fresh, warnings,
                              keep, skip, decl.dropped)
    name_unnamed_inputs(model.graph, result.values)
    if result.symbols.bound:
        specialise_inputs(model.graph, result.values)


def _skipped(result: Result, model: onnx.ModelProto) -> set[str]:
    """The values written without dims: withheld, and, where onnxruntime is not there to judge
    the written model, those read by a branch never taken.

    onnxruntime folds a branch's shape computations even where it never runs, and may refuse
    a model for what a dim written there makes it compute (a ConstantOfShape of a negative
    count); where it is installed it is asked (see :func:`_loadable`), and only the values
    leading to a node it refuses are withheld: the others keep their dims (TensorRT's
    execution provider and onnxruntime's fusions read them). Without it, onnx's inference
    alone judges, and it does not fold a branch: those reads are then not written."""
    if result.holds_subgraphs is False:  # (no branch: no walk over every node)
        return set(result.withheld)
    from .output import loadcheck

    if loadcheck.runtime_installed():
        return set(result.withheld)
    return dead_branch_reads(model.graph, {**result.subgraph_values, **result.values}) | set(result.withheld)


def _every_subgraph_runs(result: Result) -> bool:
    """Whether each subgraph of ``result``'s model, nested ones too, was inferred, and ran
    wherever the model runs (a Scan body whose length is at least 1 wherever the domain holds; not
    an If branch the data or sizes pick, nor one never taken). Then every node runs at every size
    the domain allows, as in a graph without subgraphs, and onnx's inference judges the written
    model alone: a static dim onnxruntime folds (a Shape of it into a TopK's k) is true wherever
    its node runs, which is everywhere."""
    return bool(result.sure_runs) and _all_sure(result.model.graph, (), result.sure_runs)


def _all_sure(g: onnx.GraphProto, path: tuple, runs: Mapping[tuple, bool]) -> bool:
    """Whether each subgraph in ``g`` (at ``path``), nested ones too, is in ``runs`` as sure.
    (A function of the module: a closure calling itself would be a reference cycle.)"""
    for n in g.node:
        for a in n.attribute:
            if a.type not in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                continue
            graphs = [(-1, a.g)] if a.type == onnx.AttributeProto.GRAPH else list(enumerate(a.graphs))
            for k, sg in graphs:
                here = path + (graph_key(n.output, a.name, k),)
                if not runs.get(here) or not _all_sure(sg, here, runs):
                    return False
    return True


def _may_not_run_somewhere(result: Result) -> bool:
    """Whether a node of ``result``'s model may not run where the model does (in a subgraph)."""
    return _holds_subgraphs(result) and not _every_subgraph_runs(result)


def _holds_subgraphs(result: Result) -> bool:
    """Whether a node of ``result``'s main graph has a graph attribute."""
    from .output import loadcheck

    return result.holds_subgraphs if result.holds_subgraphs is not None else loadcheck.has_subgraphs(result.model)
