"""Writing inferred shapes back into a model: value_info and graph outputs (the metadata:
:mod:`onnxsym.metadata`).

Nothing else in the model changes: nodes, initializers, names and doc strings
are left exactly as they were.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import onnx

from .dims import Dim
from .declared import declared_dims, reused_names
from .values import Optional_, Sequence, Tensor, Value
from .wire import ValueInfoBytes

def merge_dim(declared, inferred: Dim, where: str, fresh: Dict[str, object], warnings: List[str],
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
    if keep:
        return None, declared.dim_param
    if declared is not None and declared.HasField("dim_value"):
        warnings.append(f"{where}: the model declares {declared.dim_value}, the graph computes {inferred}; "
                        f"writing '{inferred}'")
    return None, str(inferred)


def tensor_type(t: Tensor, declared: Optional[onnx.TypeProto], where: str, fresh, warnings,
                keep=(), drop: bool = False) -> Optional[onnx.TypeProto]:
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


def type_proto(v: Value, declared: Optional[onnx.TypeProto], where: str, fresh, warnings,
               keep=(), drop: bool = False) -> Optional[onnx.TypeProto]:
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


def write_shapes(graph: onnx.GraphProto, values: Dict[str, Value], produced: List[str],
                 fresh, warnings: List[str], keep_declared=frozenset(), dropped=frozenset()) -> None:
    """Fill ``graph.value_info`` for every produced value and the graph outputs' types;
    ``keep_declared`` holds the (value, axis) whose declared dim_param is written as is,
    ``dropped`` the values of no computed rank whose declared shape is not written."""
    declared_at = {vi.name: vi for vi in graph.value_info}
    declared_at.update((o.name, o) for o in graph.output)
    keep_axes: Dict[str, set] = {}
    for value, axis in keep_declared:
        keep_axes.setdefault(value, set()).add(axis)
    added = ValueInfoBytes()  # values the model declares nothing of: the common case, made fast
    for name in produced:
        v = values.get(name)
        if v is None:
            continue
        target = declared_at.get(name)
        if target is None and type(v) is Tensor:
            if v.dtype:
                added.add_tensor(name, v.dtype, v.shape)
            continue
        declared = target.type if target is not None and target.HasField("type") else None
        tp = type_proto(v, declared, f"value '{name}'", fresh, warnings, keep_axes.get(name, ()),
                        name in dropped)
        if tp is None:
            continue
        if target is None:
            added.add(name, tp.SerializeToString())
        else:
            target.type.CopyFrom(tp)
    added.merge_into(graph)


def write_subgraph_shapes(graph: onnx.GraphProto, values: Dict[str, Value], fresh, warnings: List[str],
                          keep_declared=frozenset(), dropped=frozenset(), reused=None) -> None:
    """Fill each subgraph's own ``value_info`` (nested ones too) with the values
    computed inside it; its declared inputs and outputs are left as they are, and so is
    a value whose name nodes of another graph produce too (``values`` has one of them)."""
    if reused is None:
        reused = reused_names(graph)
    for n in graph.node:
        for a in n.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                declared = {v.name for v in g.input} | {v.name for v in g.output} | reused
                produced = [o for m in g.node for o in m.output if o and o not in declared]
                write_shapes(g, values, produced, fresh, warnings, keep_declared, dropped)
                write_subgraph_shapes(g, values, fresh, warnings, keep_declared, dropped, reused)
