"""``SymbolicShapeInference`` and ``SymbolicShapeInferenceHelper`` with onnxruntime's signatures,
answered by :func:`onnxsym.infer` and :func:`onnxsym.write_result`.

What the callers in onnxruntime's wheel (quantization pre-processing, the transformer optimizer's
fusions, float16 conversion) and onnxslim read of ORT's classes, and nothing more: the static
``infer_shapes``, the helper's ``infer`` / ``get_edge_shape`` / ``compare_shape`` / ``known_vi_``.
Every dim written is one onnxsym proved; an unknown dim is a named ``dim_param`` of its own, so two
shapes compared with ``==`` are equal only when their dims are.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Iterator, Mapping
from typing import Any

import onnx

logger = logging.getLogger(__name__)

INCOMPLETE = "Incomplete symbolic shape inference"
INT_MAX = 2**31 - 1


def onnx_opset(model: onnx.ModelProto) -> int | None:
    """The default-domain opset ``model`` imports (None without one), as ORT's ``get_opset`` reads it."""
    for op in model.opset_import:
        if op.domain in ("", "ai.onnx"):
            return op.version
    return None


# The standard ops with graph attributes (every other one with a graph is of another domain).
_SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})
_OP_DOMAIN = operator.attrgetter("op_type", "domain")
_DOMAIN = operator.attrgetter("domain")


def graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """``graph`` and every graph nested in its nodes' attributes."""
    yield graph
    for node in graph.node:
        op, domain = _OP_DOMAIN(node)  # (a standard op's attributes are read only where it may hold a graph)
        if op not in _SUBGRAPH_OPS and (not domain or domain == "ai.onnx"):
            continue
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from graphs(g)


# The values and the symbol table (its range environment: the algebra's caches) of the last call,
# kept until the next one. The algebra's tables hold an expression only while something does
# (onnxsym.dims.expr: by weak references), and a pipeline infers one graph again and again (the
# optimizer once per fusion kind): the next call then finds its dims made, each with its text
# (written into value_info) and its periods. (Until the engine left no reference cycle, its garbage
# did this by chance, until a collection: timm_efficientnet_same_ts 46 ms a call, 54 without it.)
# One model's values and symbols, never its tensors or protos.
_LAST_VALUES: list[tuple[Any, ...]] = []


def annotated(in_mp: onnx.ModelProto, bind: Mapping[str, int] | None = None,
              guess_output_rank: bool = False, within_domain: bool = False,
              materialize: bool = False) -> onnx.ModelProto:
    """A copy of ``in_mp`` with onnxsym's shapes, laid out as ORT SSI lays its output: value_info
    for every produced value and graph output (outputs also filled in place), no ``onnxsym.*``
    metadata (ORT SSI adds none). ``within_domain``: the dims at the sizes where the model runs
    (``Result.within_domain``: ``min(64, seq)`` is ``seq`` when the model fails beyond 64), what the
    fusions need to see two equal dims as equal. ``materialize``: see :func:`_materialize`.
    Raises onnxsym's own errors."""
    from ..api import infer as infer_result
    from ..api import infer_written, write_result

    results = []

    def infer(model, bind):
        result = infer_result(model, bind=bind)
        results.append(result)
        return result.within_domain() if within_domain else result

    missing = _unimported_domains(in_mp)
    if missing:  # ORT's fusions add com.microsoft nodes before the import; ORT SSI reads no imports
        model = onnx.ModelProto()
        model.CopyFrom(in_mp)
        model.opset_import.extend(onnx.helper.make_opsetid(d, 1) for d in missing)
        out = write_result(infer(model, bind=dict(bind or {})), inplace=True, metadata_entries=False)
        kept_imports = [op for op in out.opset_import if op.domain not in missing]
        del out.opset_import[:]
        out.opset_import.extend(kept_imports)
    elif within_domain:  # (no onnxsym.* metadata: ORT SSI writes none, and those of an earlier annotation go)
        out = write_result(infer(in_mp, bind=dict(bind or {})), metadata_entries=False)
    else:  # (the same, its load check asked of the written copy: the dims written once)
        result, out = infer_written(in_mp, bind=dict(bind or {}))
        results.append(result)
    if guess_output_rank:
        _guess_output_ranks(out)
    if materialize:
        _materialize(out, results[0])
        _keep_declared_ranks(in_mp, out)
    _drop_unread_statistics(out)
    global _LAST_VALUES
    _LAST_VALUES = [(r.values, r.subgraph_values, r.scoped_values, r.symbols) for r in results]
    for g in graphs(out.graph):
        have = {vi.name for vi in g.value_info}
        g.value_info.extend(o for o in g.output if o.name not in have and o.type.HasField("tensor_type"))
    return out


def _keep_declared_ranks(in_mp: onnx.ModelProto, out: onnx.ModelProto) -> None:
    """A graph output the model declares with another rank than onnxsym's keeps its declaration, in
    onnxslim's slot: onnxslim writes the declared dims back over the inferred ones axis by axis
    (``[b, 8]`` over ``[seq, b, 8]`` gives ``[b, 8, 8]``, wrong on two axes), where its own SSI keeps
    the declaration as it is."""
    declared = {o.name: o for o in in_mp.graph.output if o.type.tensor_type.HasField("shape")}
    for o in out.graph.output:
        given = declared.get(o.name)
        if given is not None and o.type.tensor_type.HasField("shape") and \
                len(o.type.tensor_type.shape.dim) != len(given.type.tensor_type.shape.dim):
            o.type.tensor_type.shape.CopyFrom(given.type.tensor_type.shape)


# com.microsoft ops whose outputs 1 and 2 (the mean and inverse standard deviation) are float32 whatever
# the input's type, and which ORT SSI leaves untyped
_STATISTICS = frozenset({"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"})


def _drop_unread_statistics(model: onnx.ModelProto) -> None:
    """No value_info for a Skip(Simplified)LayerNormalization's mean and inverse-std outputs when
    nothing reads them, as ORT SSI writes none: ``convert_float_to_float16`` turns every float
    value_info into float16, and the kernel's float32 output then fails onnxruntime's type check."""
    for g in graphs(model.graph):
        made = [o for n in g.node if n.domain == "com.microsoft" and n.op_type in _STATISTICS
                for o in n.output[1:3] if o]
        if not made:
            continue  # (the reads are gathered only where there is one)
        read = {i for n in g.node for i in n.input} | {o.name for o in g.output}
        for sub in graphs(g):
            if sub is not g:
                read |= {i for n in sub.node for i in n.input}
        drop = {o for o in made if o not in read}
        if drop:
            kept = [vi for vi in g.value_info if vi.name not in drop]
            del g.value_info[:]
            g.value_info.extend(kept)


def _materialize(model: onnx.ModelProto, result) -> None:
    """What onnxslim's own copy of SSI hands onnxslim besides shapes: each main-graph value onnxsym
    knows the integer or boolean data of (a shape computation: ``Equal(Concat(batch, -1), -1)`` is
    ``[False, True]`` at every size), that its node cannot fold from constants alone, becomes an
    initializer of that name (its node's output renamed, left for onnxslim to remove), so onnxslim
    folds what follows it as it does with its own SSI. Small tensors only (1024 elements at most)."""
    import numpy as np

    g = model.graph
    fixed = {t.name for t in g.initializer} | {i.name for i in g.input} | {o.name for o in g.output}
    for node in g.node:
        if all(not i or i in fixed for i in node.input):
            continue  # onnxslim folds it itself
        for k, name in enumerate(node.output):
            t = result.values.get(name)
            if not name or name in fixed or t is None or t.value is None or len(t.value) > 1024:
                continue
            if not all(isinstance(d, int) for d in t.shape) or not all(
                    isinstance(v, (bool, int)) and not isinstance(v, float) for v in t.value):
                continue
            if t.dtype not in _INTEGER_TYPES:
                continue
            array = np.array(t.value, dtype=onnx.helper.tensor_dtype_to_np_dtype(t.dtype)).reshape(t.shape)
            g.initializer.append(onnx.numpy_helper.from_array(array, name))
            node.output[k] = f"__materialized_{name}"


_INTEGER_TYPES = frozenset({onnx.TensorProto.BOOL, onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32,
                            onnx.TensorProto.INT64, onnx.TensorProto.UINT8, onnx.TensorProto.UINT16,
                            onnx.TensorProto.UINT32, onnx.TensorProto.UINT64})


def _unimported_domains(model: onnx.ModelProto) -> list[str]:
    """The domains ``model``'s nodes use without an opset import for them (in the order met)."""
    have = {"" if op.domain == "ai.onnx" else op.domain for op in model.opset_import}
    have |= {f.domain for f in model.functions}
    out: list[str] = []
    for g in graphs(model.graph):
        for d in dict.fromkeys(map(_DOMAIN, g.node)):  # (each field read once, in node order)
            d = "" if d == "ai.onnx" else d
            if d not in have and d not in out:
                out.append(d)
    return out


def _guess_output_ranks(model: onnx.ModelProto) -> None:
    """ORT SSI's ``guess_output_rank``: an output of an op onnx has no schema for, left without a
    shape, gets the rank of the node's first input, each dim a fresh name of its own."""
    taken = {d.dim_param for g in graphs(model.graph)
             for vi in [*g.input, *g.output, *g.value_info] for d in vi.type.tensor_type.shape.dim}
    count = 0
    for g in graphs(model.graph):
        typed = {vi.name: vi for vi in [*g.input, *g.value_info, *g.output]}
        for node in g.node:
            if onnx.defs.has(node.op_type, node.domain) or not node.input or node.input[0] not in typed:
                continue
            first = typed[node.input[0]].type.tensor_type
            if not first.HasField("shape"):
                continue
            for name in node.output:
                vi = typed.get(name)
                if not name or (vi is not None and vi.type.tensor_type.HasField("shape")):
                    continue
                if vi is None:
                    vi = g.value_info.add(name=name)
                    vi.type.tensor_type.elem_type = first.elem_type
                    typed[name] = vi
                shape = vi.type.tensor_type.shape
                shape.SetInParent()
                for _ in first.shape.dim:
                    while f"unk__guess_{count}" in taken:
                        count += 1
                    taken.add(f"unk__guess_{count}")
                    shape.dim.add().dim_param = f"unk__guess_{count}"


def _own_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is one of onnxsym's (a refusal of the model, or a rule that failed)."""
    from ..errors import OnnxsymError, RuleFailure, UserInputError
    return isinstance(exc, (OnnxsymError, RuleFailure, UserInputError))


class SymbolicShapeInference:
    """onnxruntime's ``SymbolicShapeInference``, answered by onnxsym.

    ``int_max`` and ``auto_merge`` are accepted for ORT's signature and change nothing: onnxsym
    keeps slice bounds exact and never needs to merge two dims (where ORT SSI would merge, onnxsym
    either proves them equal or keeps them apart). ``guess_output_rank`` is ORT's: an op with no
    onnx schema and no onnxsym rule gets its first input's rank, with fresh dims.

    Where onnxsym cannot take the model (it is invalid, or a rule fails), the class it stands in for
    (``_original``: ORT's own, or onnxslim's copy) is asked, so a pipeline never fails where it
    worked before, and a model's own fault gets ORT's own error.
    """

    _original: type | None = None  # the class this one replaces (set by install())
    _materialize = False  # hand computed constants over, as onnxslim's copy of SSI does (see _materialize)

    def __init__(self, int_max: int = INT_MAX, auto_merge: bool = False, guess_output_rank: bool = False,
                 verbose: int = 0, prefix: str = "") -> None:
        self.int_max_ = int_max
        self.auto_merge_ = auto_merge
        self.guess_output_rank_ = guess_output_rank
        self.verbose_ = verbose
        self.prefix_ = prefix

    @classmethod
    def _original_class(cls) -> type | None:
        if cls._original is not None:
            return cls._original
        try:
            from onnxruntime.tools import symbolic_shape_infer as ort
        except ImportError:
            return None
        found = getattr(ort, "SymbolicShapeInference", None)
        return None if getattr(found, "_onnxsym_drop_in", False) else found

    _onnxsym_drop_in = True

    @classmethod
    def _infer_shapes(cls, in_mp: onnx.ModelProto, int_max: int = INT_MAX, auto_merge: bool = False,
                      guess_output_rank: bool = False, verbose: int = 0) -> onnx.ModelProto | None:
        opset = onnx_opset(in_mp)
        if not opset or opset < 7:
            logger.warning("Only support models of onnx opset 7 and above.")
            return None
        try:
            return annotated(in_mp, guess_output_rank=guess_output_rank, materialize=cls._materialize)
        except Exception as exc:
            if not _own_failure(exc):
                raise
            original: Any = cls._original_class()  # ORT's class, or onnxslim's: typed by neither
            if original is None:
                raise Exception(f"{INCOMPLETE}: {exc}") from None  # noqa: TRY002  (ORT raises Exception)
            logger.warning("onnxsym: %s; asking %s.%s", exc, original.__module__, original.__qualname__)
            out: onnx.ModelProto | None = original.infer_shapes(in_mp, int_max, auto_merge, guess_output_rank, verbose)
            return out

    @staticmethod
    def infer_shapes(in_mp: onnx.ModelProto, int_max: int = INT_MAX, auto_merge: bool = False,
                     guess_output_rank: bool = False, verbose: int = 0) -> onnx.ModelProto | None:
        """A new model with value_info and graph outputs filled (names and order kept); None
        below opset 7, as ORT. Raises an Exception containing "Incomplete symbolic shape
        inference" when neither onnxsym nor the class it stands in for can infer the model."""
        return SymbolicShapeInference._infer_shapes(in_mp, int_max, auto_merge, guess_output_rank, verbose)


class SymbolicShapeInferenceHelper(SymbolicShapeInference):
    """onnxruntime's ``SymbolicShapeInferenceHelper`` (``onnxruntime.transformers.shape_infer_helper``),
    the stateful object ``OnnxModel.infer_runtime_shape`` gives the fusions."""

    _original_helper: type | None = None  # ORT's helper this one replaces (set by install())

    def __init__(self, model: onnx.ModelProto, verbose: int = 0, int_max: int = INT_MAX, auto_merge: bool = True,
                 guess_output_rank: bool = False) -> None:
        super().__init__(int_max, auto_merge, guess_output_rank, verbose)
        self.model_ = model
        self.all_shapes_inferred_: bool = False
        self.is_inferred_: bool = False
        self.dynamic_axis_mapping_: dict[str, int] = {}
        self.known_vi_: dict[str, onnx.ValueInfoProto] = {}
        self.out_mp_: onnx.ModelProto | None = None
        self._fallback: object | None = None

    def infer(self, dynamic_axis_mapping: dict[str, int], max_runs: int = 200) -> bool:
        """Infer the model's shapes with the dims ``dynamic_axis_mapping`` names fixed (names the
        model's inputs do not have are ignored, as ORT does); whether every value got a shape."""
        assert dynamic_axis_mapping is not None
        if self.is_inferred_ and self.dynamic_axis_mapping_ == dynamic_axis_mapping:
            return self.all_shapes_inferred_
        self.dynamic_axis_mapping_ = dynamic_axis_mapping
        names = {d.dim_param for vi in self.model_.graph.input for d in vi.type.tensor_type.shape.dim}
        bind = {k: int(v) for k, v in dynamic_axis_mapping.items() if k in names}
        self._fallback = None
        try:
            self.out_mp_ = annotated(self.model_, bind, self.guess_output_rank_, within_domain=True)
        except Exception as exc:
            if not _own_failure(exc) or self._original_helper is None:
                raise
            logger.warning("onnxsym: %s; asking onnxruntime's SymbolicShapeInferenceHelper", exc)
            fallback = self._original_helper(self.model_, self.verbose_, self.int_max_, self.auto_merge_,
                                             self.guess_output_rank_)
            self.all_shapes_inferred_ = fallback.infer(dynamic_axis_mapping, max_runs)
            self.known_vi_ = fallback.known_vi_
            self._fallback = fallback
            self.is_inferred_ = True
            return self.all_shapes_inferred_
        self.known_vi_ = {}
        for g in graphs(self.out_mp_.graph):
            for t in g.initializer:
                self.known_vi_.setdefault(t.name, onnx.helper.make_tensor_value_info(t.name, t.data_type, t.dims))
            for vi in [*g.input, *g.value_info, *g.output]:
                self.known_vi_.setdefault(vi.name, vi)
        self._add_unwritten(self.out_mp_)
        self.all_shapes_inferred_ = True
        self.is_inferred_ = True
        return True

    def _add_unwritten(self, model: onnx.ModelProto) -> None:
        """A ValueInfoProto without a shape for each value onnxsym wrote nothing for (read only by an
        If branch that never runs): the fusions index ``known_vi_`` for every value; its element
        type is onnx's inference's where that gives one."""
        missing = [o for g in graphs(model.graph) for n in g.node for o in n.output if o and o not in self.known_vi_]
        if not missing:
            return
        types: dict[str, int] = {}
        try:
            typed = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001  (then no element types: the values stay unknown)
            typed = None
        if typed is not None:
            types = {vi.name: vi.type.tensor_type.elem_type for g in graphs(typed.graph) for vi in g.value_info
                     if vi.type.HasField("tensor_type")}
        for name in missing:
            vi = onnx.ValueInfoProto(name=name)
            vi.type.tensor_type.elem_type = types.get(name, onnx.TensorProto.UNDEFINED)
            self.known_vi_[name] = vi

    def get_edge_shape(self, edge: str) -> list | None:
        """The shape of value ``edge``: ints and dim names (a dim bound by the mapping as its
        number), None where it has no shape; equal dims have equal text."""
        assert self.all_shapes_inferred_
        if self._fallback is not None:
            return self._fallback.get_edge_shape(edge)  # type: ignore[attr-defined]
        if edge not in self.known_vi_:
            print("Cannot retrieve the shape of " + str(edge))
            return None
        tt = self.known_vi_[edge].type
        if tt.WhichOneof("value") != "tensor_type" or not tt.tensor_type.HasField("shape"):
            return None
        shape: list = []
        for d in tt.tensor_type.shape.dim:
            which = d.WhichOneof("value")
            dim = getattr(d, which) if which else None
            shape.append(self.dynamic_axis_mapping_.get(dim, dim) if isinstance(dim, str) else dim)
        return shape

    def compare_shape(self, edge: str, edge_other: str) -> bool:
        """Whether the two values have the same shape; raises when one has none, as ORT."""
        assert self.all_shapes_inferred_
        shape = self.get_edge_shape(edge)
        shape_other = self.get_edge_shape(edge_other)
        if shape is None or shape_other is None:
            raise Exception("At least one shape is missed for edges to compare")  # noqa: TRY002  (as ORT)
        return shape == shape_other


def standing_in_for(original: type | None, helper: type | None = None) -> tuple[type, type]:
    """The two classes to put where ``original`` (an ORT SSI class, or onnxslim's copy) and
    ``helper`` (ORT's helper) were: onnxsym's, asking them only where onnxsym cannot take a model."""

    def infer_shapes(in_mp, int_max=INT_MAX, auto_merge=False, guess_output_rank=False, verbose=0):
        return Inference._infer_shapes(in_mp, int_max, auto_merge, guess_output_rank, verbose)

    infer_shapes.__doc__ = SymbolicShapeInference.infer_shapes.__doc__
    Inference = type("SymbolicShapeInference", (SymbolicShapeInference,),
                     {"_original": original, "infer_shapes": staticmethod(infer_shapes),
                      "_materialize": original is not None and original.__module__.startswith("onnxslim"),
                      "__module__": __name__, "__doc__": SymbolicShapeInference.__doc__})
    Helper = type("SymbolicShapeInferenceHelper", (SymbolicShapeInferenceHelper, Inference),
                  {"_original_helper": helper, "__module__": __name__,
                   "__doc__": SymbolicShapeInferenceHelper.__doc__})
    return Inference, Helper
