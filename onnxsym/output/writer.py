"""Writing inferred shapes back into a model: value_info and graph outputs (the metadata:
:mod:`onnxsym.output.metadata`).

Nothing else in the model changes: nodes, initializers, names and doc strings
are left exactly as they were.
"""

from __future__ import annotations

import onnx

from .. import dims, registry
from ..dims import Dim
from ..facts.declared import declared_dims
from ..inference.scope import graph_key
from ..inference.values import Optional_, Sequence, Tensor, Value
from ..model.loader import symbol_name
from .wire import ValueInfoBytes


def merge_dim(declared, inferred: Dim, where: str, fresh: dict[str, object], warnings: list[str],
              keep: bool = False):
    """The dim to write, given what the model declares and what was inferred:
    ``(value, param)`` with exactly one of them set. The inferred dim is written, except
    where ``keep`` says the declared dim_param names it (a fresh symbol, or with
    --keep-declared-names a proven equal dim): a declared text is never written where
    it is not proven (over a fresh dim it may be anything)."""
    if isinstance(inferred, int):
        # A number says more than any name (a contradicting declared number is a stale
        # declaration, reported by inference).
        return inferred, None
    if keep and declared is not None and declared.dim_param:
        # (kept where proven; a value declared at two places, value_info and the graph outputs, is
        # written alike at both: the other may declare no shape, or a number)
        return None, declared.dim_param
    if declared is not None and declared.HasField("dim_value"):
        warnings.append(f"{where}: the model declares {declared.dim_value}, the graph computes {inferred}; "
                        f"writing '{inferred}'")
    return None, str(inferred)


def tensor_type(t: Tensor, declared: onnx.TypeProto | None, where: str, fresh, warnings,
                keep=(), drop: bool = False) -> onnx.TypeProto | None:
    """``drop``: where the graph computes no rank, the declared shape is not written either
    (the branches that could make the value contradict it)."""
    dtype = t.dtype
    if not dtype and declared is not None and declared.WhichOneof("value") == "tensor_type":
        dtype = declared.tensor_type.elem_type
    if not dtype:
        return None
    tp = onnx.TypeProto()
    tp.tensor_type.elem_type = dtype
    decl = declared_dims(declared) if declared is not None else None
    if t.shape is None:
        if decl is not None and declared is not None and not drop:  # (a decl is read from a declared type)
            tp.tensor_type.shape.CopyFrom(declared.tensor_type.shape)
        return tp
    if decl is not None and len(decl) != len(t.shape):
        decl = None  # a stale declaration (reported by inference): the computed shape is written
    shape = tp.tensor_type.shape
    shape.SetInParent()
    for i, d in enumerate(t.shape):
        value, param = merge_dim(decl[i] if decl else None, d, f"{where}[{i}]", fresh, warnings,
                                 i in keep)
        dim = shape.dim.add()
        if value is not None:
            dim.dim_value = value
        else:
            dim.dim_param = param
    return tp


def type_proto(v: Value, declared: onnx.TypeProto | None, where: str, fresh, warnings,
               keep=(), drop: bool = False) -> onnx.TypeProto | None:
    """The type to write for ``v``; ``None`` when nothing is known of it."""
    if isinstance(v, Tensor):
        return tensor_type(v, declared, where, fresh, warnings, keep, drop)
    if isinstance(v, (Sequence, Optional_)):
        field = "sequence_type" if isinstance(v, Sequence) else "optional_type"
        inner_decl = getattr(declared, field).elem_type if declared is not None and \
            declared.WhichOneof("value") == field else None
        elem = type_proto(v.elem, inner_decl, where, fresh, warnings, ()) if v.elem is not None else None
        if elem is None:
            return declared
        tp = onnx.TypeProto()
        getattr(tp, field).elem_type.CopyFrom(elem)
        return tp
    return declared


def write_shapes(graph: onnx.GraphProto, values: dict[str, Value], produced: list[str],
                 fresh, warnings: list[str], keep_declared=frozenset(), skip=frozenset(),
                 dropped=frozenset()) -> None:
    """Fill ``graph.value_info`` for every produced value and the graph outputs' types;
    ``keep_declared`` holds the (value, axis) whose declared dim_param is written as is;
    nothing is written for the values in ``skip`` (dead_branch_reads); ``dropped``: the
    values of no computed rank whose declared shape is not written either."""
    declared_at = {vi.name: vi for vi in graph.value_info}
    declared_at.update((o.name, o) for o in graph.output)
    outputs = {o.name for o in graph.output}
    # a value declared at two places (value_info and the outputs, or twice): each gets what is written
    also: dict[str, list[onnx.ValueInfoProto]] = {}
    if len(declared_at) < len(graph.value_info) + len(graph.output):
        for vi in list(graph.value_info) + list(graph.output):
            if vi is not declared_at[vi.name]:
                also.setdefault(vi.name, []).append(vi)
    keep_axes: dict[str, set] = {}
    for value, axis in keep_declared:
        keep_axes.setdefault(value, set()).add(axis)
    added = ValueInfoBytes()  # values the model declares nothing of: the common case, made fast
    # (declared type's bytes, id of the value, axes kept, dropped) -> (the value, kept alive so that no
    # other takes its id; the type written, serialized; None: nothing written)
    written: dict[tuple, tuple[Value, bytes | None]] = {}
    for name in produced:
        v = values.get(name)
        target = declared_at.get(name)
        if name in skip:
            # nor does what the model declares there stay: onnxruntime would fold it all the same,
            # and a declaration is a claim nothing here proved (a declared 9 where the run has h);
            # a graph output keeps a type all the same (onnx.checker wants one, with a shape): the
            # element type and the rank, of dims without a value or a name
            for t in ([target] if target is not None else []) + also.get(name, []):
                if t.type.HasField("tensor_type"):
                    t.type.tensor_type.ClearField("shape")
                if t.name in outputs and isinstance(v, Tensor) and v.dtype and \
                        t.type.WhichOneof("value") in (None, "tensor_type"):
                    t.type.tensor_type.elem_type = v.dtype
                    if v.shape is not None:
                        shape = t.type.tensor_type.shape
                        shape.SetInParent()
                        for _ in v.shape:
                            shape.dim.add()
            continue
        if v is None:
            continue
        if target is None and type(v) is Tensor:
            if v.dtype:
                added.add_tensor(name, v.dtype, v.shape)
            continue
        declared = target.type if target is not None and target.HasField("type") else None
        again = None  # (an annotated model declares a type on every value: each layer's are one value's)
        if declared is not None and type(v) is Tensor:
            again = (declared.SerializeToString(), id(v), tuple(sorted(keep_axes.get(name, ()))), name in dropped)
            if again in written:
                data = written[again][1]
                for t in [target, *also.get(name, ())] if data is not None else ():
                    t.type.ParseFromString(data)
                continue
        warned = len(warnings)
        tp = type_proto(v, declared, f"value '{name}'", fresh, warnings, keep_axes.get(name, ()),
                        name in dropped)
        if again is not None and len(warnings) == warned:  # (a warning names its value: not reused)
            written[again] = (v, None if tp is None else tp.SerializeToString())
        if tp is None:
            continue
        if target is None:
            added.add(name, tp.SerializeToString())
        else:
            target.type.CopyFrom(tp)
            for t in also.get(name, ()):
                t.type.CopyFrom(tp)
    added.merge_into(graph)


def decided_ifs(graph: onnx.GraphProto, values: dict[str, Value], path: tuple = ()) -> set:
    """The If nodes (in subgraphs too) whose condition is a known constant, each as its path
    of node positions (names may be empty or repeat)."""
    out = set()
    for i, n in enumerate(graph.node):
        if n.op_type == "If" and _known_condition(values.get(n.input[0]) if n.input else None) is not None:
            out.add(path + (i,))
        for a in n.attribute:
            for k, g in enumerate([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                out |= decided_ifs(g, values, path + (i, a.name, k))
    return out


def if_paths(graph: onnx.GraphProto, path: tuple = ()) -> set:
    """Every If node (in subgraphs too), as :func:`decided_ifs` names them."""
    out = set()
    for i, n in enumerate(graph.node):
        if n.op_type == "If":
            out.add(path + (i,))
        for a in n.attribute:
            for k, g in enumerate([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                out |= if_paths(g, path + (i, a.name, k))
    return out


def _known_condition(cond) -> bool | None:
    if isinstance(cond, Tensor) and cond.value is not None and len(cond.value) == 1 and \
            isinstance(cond.value[0], (int, bool, float)):
        return bool(cond.value[0])
    return None


def dead_branch_reads(graph: onnx.GraphProto, values: dict[str, Value]) -> set:
    """The values read inside an If branch that is never taken (its condition is a known
    constant), from outside it. Their dims are not written: onnxruntime folds a branch's
    shape computations even where it never runs, and from a dim it could not infer itself it
    would compute there what is invalid at every size (a ConstantOfShape of a negative
    count), and refuse to load the model that runs without the annotation."""
    out: set = set()
    ops = registry.subgraph_ops()  # (may_hold_subgraphs, inlined: this loop reads every node)
    for n in graph.node:
        if not (n.domain or n.op_type in ops):
            continue
        branches = {a.name: a.g for a in n.attribute if a.type == onnx.AttributeProto.GRAPH}
        known = _known_condition(values.get(n.input[0])) if n.op_type == "If" and n.input else None
        if known is not None:
            dead = branches.pop("else_branch" if known else "then_branch", None)
            if dead is not None:
                out |= _outer_reads(dead)
        for a in n.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                if a.type != onnx.AttributeProto.GRAPH or any(g is live for live in branches.values()):
                    out |= dead_branch_reads(g, values)
    return out


def _outer_reads(graph: onnx.GraphProto) -> set:
    """The names ``graph`` (its subgraphs too) reads that it does not define."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer} | \
        {o for n in graph.node for o in n.output}
    reads = {i for n in graph.node for i in n.input if i} | {o.name for o in graph.output}
    for n in graph.node:
        for a in n.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                reads |= _outer_reads(g)
    return reads - defined


def _input_dims(graph: onnx.GraphProto, values: dict[str, Value]):
    """Each graph input's declared dims beside the inferred ones: (input name, declared dim proto,
    inferred dim), for the inputs whose declared rank is the inferred one."""
    for inp in graph.input:
        v = values.get(inp.name)
        if not inp.type.HasField("tensor_type") or not isinstance(v, Tensor) or v.shape is None:
            continue
        declared = inp.type.tensor_type.shape.dim
        if len(declared) == len(v.shape):
            for d, inferred in zip(declared, v.shape):
                yield inp.name, d, inferred


def specialise_inputs(graph: onnx.GraphProto, values: dict[str, Value]) -> None:
    """Write the number of each graph-input dim that a bind made one (``batch``, or a text
    over it such as ``2*batch``) into the input (as onnxruntime's ``make_dynamic_shape_fixed``
    does): the dims computed from it are written as numbers, and onnxruntime folds and plans
    buffers from them, so the written model is valid only at that size and must say so
    where sizes enter. (Called only when something is bound.)"""
    for _, d, inferred in _input_dims(graph, values):
        if d.HasField("dim_param") and isinstance(inferred, int):
            d.dim_value = inferred  # (clears dim_param: a oneof)


def name_unnamed_inputs(graph: onnx.GraphProto, values: dict[str, Value]) -> None:
    """Write into each graph-input dim that names nothing (neither a size nor a name: no field,
    paddle2onnx's ``?``, a negative number) the symbol inference gave it (``x_d2``): the dims
    written over it then name a dim of the model, not one only the metadata knows."""
    for name, d, inferred in _input_dims(graph, values):
        s = dims.as_sym(inferred)
        if s is None:
            continue
        fresh = symbol_name(name) + "_d"  # how the loader names the symbol of an unnamed dim
        if s.name.startswith(fresh) and s.name != d.dim_param.strip() \
                and not (d.HasField("dim_value") and d.dim_value >= 0):
            d.dim_param = s.name  # (clears a negative dim_value: a oneof)


def _same_every_iteration(v, fresh) -> bool:
    """Whether a body output's inferred shape names only the model's own symbols (and numbers):
    then every iteration computes it so (a dim varying by iteration is a fresh symbol)."""
    if not isinstance(v, Tensor) or v.shape is None:
        return False
    return all(s.name not in fresh for d in v.shape for s in dims.free_symbols(d))


def write_subgraph_shapes(graph: onnx.GraphProto, scoped: dict[tuple, dict[str, Value]], fresh, warnings: list[str],
                          keep_declared=frozenset(), skip=frozenset(), dropped=frozenset(),
                          path: tuple = ()) -> None:
    """Fill each subgraph's own ``value_info`` (nested ones too) with the values computed
    inside it (``scoped``: per subgraph path, as ``Result.scoped_values``; sibling graphs may
    define one name with other shapes); its declared inputs are left as they are. Its outputs
    are written where they are what every run computes: an If branch's (a branch runs once),
    and a Loop or Scan body's whose dims hold no symbol made for the iteration (a carried value
    that grows gets one: its dims differ from one iteration to the next). A subgraph never
    inferred is left as it is."""
    for n in graph.node:
        for a in n.attribute:
            graphs = [(-1, a.g)] if a.type == onnx.AttributeProto.GRAPH else list(enumerate(a.graphs))
            for k, g in graphs:
                here = path + (graph_key(n.output, a.name, k),)
                values = scoped.get(here, {})
                declared = {v.name for v in g.input}
                if n.op_type != "If" or n.domain not in ("", "ai.onnx"):
                    declared |= {v.name for v in g.output if not _same_every_iteration(values.get(v.name), fresh)}
                produced = [o for m in g.node for o in m.output if o and o not in declared]
                write_shapes(g, values, produced, fresh, warnings, keep_declared, skip, dropped)
                write_subgraph_shapes(g, scoped, fresh, warnings, keep_declared, skip, dropped, here)
