"""The load check of a model that repeats its layers: one node of each kind.

onnx's shape inference (the judge of :mod:`.loadcheck`) judges a node by its op, opset and
attributes, the types it reads, the data of the initializers and Constants it reads, and
the types written on its outputs. Nodes that inference gave one memo key (the same op,
attributes and input values: :mod:`onnxsym.inference.memo`) read and make equal values; where
each of those values is written as its value says (nothing the model declares there is kept,
nothing is withheld) and each datum onnx reads is part of the value, onnx sees the same node twice
and says the same of both. So one node of each key is judged, in a light copy without the
others; a value a kept node reads from a left-out one is typed there by what is written for it.

onnx sees that in the whole model too only if its own inference adds nothing to what is
written (a number where a fresh symbol is written would reach the next layer): checked on
every value the copy writes. On a refusal, or where that check fails, the whole model is
judged as before (which also names the refused node).
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx

from ..inference.values import Tensor
from .loadcheck import TYPES_ONLY, keeps_elements

# Where more than this share of the nodes is kept, the copy saves too little to be worth it.
_WORTH = 0.5


# Standard ops whose inference in onnx reads no input's elements (only types): an input of
# elements the value does not hold is as good as any other there.
_TYPES_ONLY = TYPES_ONLY


def special_names(graph: onnx.GraphProto, skip: Iterable[str], values: dict, keeps_declared: Iterable[str]) -> set[str]:
    """The values that are not written as their value says: the graph's inputs (as declared),
    its outputs (a reader sees what onnx infers there), the skipped ones, and the declared values
    but those whose declaration is overwritten with their value (a tensor of known type and rank:
    an annotated model declares every value) where nothing declared is kept (``keeps_declared``:
    a declared name kept for a fresh symbol, a declared shape kept where no rank is computed)."""
    kept = set(keeps_declared)
    declared = {vi.name for vi in graph.value_info}
    overwritten = {x for x in declared if x not in kept and _whole_tensor(values.get(x))}
    return {i.name for i in graph.input} | {o.name for o in graph.output} | (declared - overwritten) | set(skip)


def _whole_tensor(v) -> bool:
    return type(v) is Tensor and bool(v.dtype) and v.shape is not None


def _unheld(graph: onnx.GraphProto, values: dict) -> set[str]:
    """The initializers whose elements the light copy keeps (onnx reads them) but their value
    does not hold."""
    return {t.name for t in graph.initializer if keeps_elements(t) and not _holds_data(values.get(t.name))}


def _holds_data(v) -> bool:
    return isinstance(v, Tensor) and v.value is not None


def may_save(result) -> bool:
    """False where :func:`kept_nodes` would keep too many nodes whatever the special values are:
    it keeps each node without a kind and the first node of each kind (asked before the special
    values are gathered, which a model of few repeats need not)."""
    keys = result.node_keys
    count = len(result.model.graph.node)
    if len(keys) != count or not result.in_order:
        return False
    alone = 0
    kinds: set[tuple[int, str]] = set()
    for kind, _, _, _, domain in keys.values():
        if kind is None:
            alone += 1
        else:
            kinds.add((id(kind), domain))
    return alone + len(kinds) <= _WORTH * count


def kept_nodes(result, special: set[str]) -> tuple[list[int], list[str]] | None:
    """The main graph's nodes to judge, by index, and the values to write in their copy (in
    ``result.produced``'s order); None where leaving nodes out saves little."""
    keys, values = result.node_keys, result.values
    count = len(result.model.graph.node)
    if len(keys) != count or not result.in_order:
        return None
    # what is not written as its value says (a set: a node is tested against it in one call)
    odd = special | {x for x, v in values.items() if type(v) is not Tensor or not v.dtype}
    odd.discard("")  # (an omitted input)
    unheld = _unheld(result.model.graph, values)  # (and the Constants of elements not held, as they come)
    seen: set[tuple[int, str]] = set()
    keep: list[int] = []
    for i in range(count):
        kind, ins, outs, op, domain = keys[i]
        if op == "Constant" and not _holds_data(values.get(outs[0])):
            unheld.update(outs)
        if kind is not None and odd.isdisjoint(ins) and odd.isdisjoint(outs) and \
                (op in _TYPES_ONLY or unheld.isdisjoint(ins)):
            same = (id(kind), domain)  # ("ai.onnx" is "" to inference, not to onnx: no opset may import it)
            if same in seen:
                continue
            seen.add(same)
        keep.append(i)
    if len(keep) > _WORTH * count:
        return None
    names = {x for i in keep for part in keys[i][1:3] for x in part}
    return keep, [x for x in result.produced if x in names]
