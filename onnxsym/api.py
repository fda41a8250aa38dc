"""The library entry points: :func:`infer`, :func:`annotate` and :func:`write_result`."""

from __future__ import annotations

import os
from typing import Callable, Dict, Iterable, Mapping, Optional, Tuple, Union
from typing import Sequence as Seq

import onnx

from . import branching, dims, metadata, validate
from .engine import Engine
from .errors import RuleFailure, UserInputError
from .loader import load_model
from .result import Result, UnresolvedDim  # noqa: F401  (public here: onnxsym.api.Result)
from .symbols import SymbolTable, under_ranges_of_result
from .writer import write_shapes, write_subgraph_shapes

ModelLike = Union[str, os.PathLike, onnx.ModelProto]
# True: every graph-input dim may be 0; or the names of the symbols that may be.
AllowZero = Union[bool, str, Iterable[str]]

from . import __version__


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
    assumptions = [parse_assumption(a) for a in assume]

    def make_engine(choices) -> Engine:  # one per inference: an If the sizes decide may need more (branching)
        table = SymbolTable(bound=dict(bind or {}), ranges=given_ranges, assume=assumptions,
                            default_lo=0 if allow_zero is True else dims.DEFAULT_LO,
                            zero_ok=_zero_names(allow_zero))
        engine = Engine(model, table, base_dir, constant_initializers)
        engine.progress = None if choices else progress
        engine.choices = choices
        if strict is not None:
            engine.strict = strict
        return engine

    try:
        engine = branching.infer(make_engine)
    except RuleFailure:
        validate.check_with_onnx(model)  # a node the spec rules out is the model's fault, not a bug
        raise
    # What the rules take without complaint, onnx's inference may refuse (a node that fails
    # at every size): the model is invalid, not annotated.
    validate.check_with_onnx(model)
    table = engine.table
    main = engine.main
    return Result(model, main.values, engine.produced, table, engine.fresh, main.unknown_rank,
                  engine.constraints.items, table.warnings + engine.warnings, engine.no_rule, dict(engine.constraints.derived),
                  engine.declarations, main.subgraph_values, engine.rule_failures)


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
    metadata.write(model, metadata.entries(result, __version__))
    return model
