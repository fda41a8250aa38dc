"""Memory along the node order: which values are live at each node, the peak, the KV cache.

Every value is its own buffer (no in-place reuse): a value lives from the node that
produces it (a graph input: from the start) to the last node that reads it, through a
subgraph too; a graph output lives to the end. The peak is the ``max`` over the nodes of
the bytes live while each runs, simplified by the symbols' ranges (a sum that another
provably exceeds is dropped).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import onnx

from .. import dims
from ..dims import Dim


def _subgraph_reads(node: onnx.NodeProto, out: set) -> None:
    """Names the subgraphs of ``node`` read (outer-scope values among them)."""
    for a in node.attribute:
        graphs = [a.g] if a.type == a.GRAPH else list(a.graphs) if a.type == a.GRAPHS else []
        for g in graphs:
            for n in g.node:
                out.update(n.input)
                _subgraph_reads(n, out)


def lifetimes(graph: onnx.GraphProto, tracked: Sequence[str]) -> dict[str, tuple[int, int]]:
    """``name -> (first, last)`` node index during which each tracked value is live."""
    tracked_set = set(tracked)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    end = max(len(graph.node) - 1, 0)
    for inp in graph.input:
        if inp.name in tracked_set:
            first[inp.name] = last[inp.name] = 0
    for i, node in enumerate(graph.node):
        reads = set(node.input)
        _subgraph_reads(node, reads)
        for name in reads:
            if name in first:
                last[name] = i
        for name in node.output:
            if name in tracked_set and name not in first:
                first[name] = last[name] = i
    for out in graph.output:
        if out.name in first:
            last[out.name] = end
    return {n: (first[n], last[n]) for n in first}


def live_bytes(graph: onnx.GraphProto, sizes: dict[str, Dim]) -> list[Dim]:
    """The bytes of the values live while each node runs (its inputs and outputs included)."""
    spans = lifetimes(graph, list(sizes))
    starts: dict[int, list[str]] = {}
    ends: dict[int, list[str]] = {}
    for name, (a, b) in spans.items():
        starts.setdefault(a, []).append(name)
        ends.setdefault(b, []).append(name)
    out: list[Dim] = []
    live: Dim = 0
    for i in range(max(len(graph.node), 1)):
        for name in starts.get(i, ()):
            live = dims.add(live, sizes[name])
        out.append(live)
        for name in ends.get(i, ()):
            live = dims.sub(live, sizes[name])
    return out


def peak(steps: Sequence[Dim]) -> Dim:
    """The largest of the per-node live bytes, as one ``max`` the ranges simplify."""
    distinct = list(dict.fromkeys(steps))  # dims are interned: equal sums are one
    if all(isinstance(d, int) for d in distinct):
        return max(distinct, default=0)
    return dims.dmax(*distinct)


_PRESENT = re.compile("present", re.IGNORECASE)


def present_outputs(graph: onnx.GraphProto) -> list[str]:
    """The graph outputs a decoder returns as its KV cache (named ``present...``)."""
    return [o.name for o in graph.output if _PRESENT.search(o.name)]


def kv_factors(names: Sequence[str], shapes: Sequence[tuple | None],
               dtypes: Sequence[int]) -> list[tuple[str, str]] | None:
    """The KV cache's bytes as factors with what each is: ``[("2", "key/value"), ("2", "layers"),
    ("batch", "dim 0"), ..., ("4", "itemsize")]``, when every present output has the same type
    and shape (``None`` otherwise)."""
    from .sizes import itemsize_text
    shape = shapes[0] if shapes else None
    if shape is None or any(s != shape for s in shapes) or len(set(dtypes)) != 1:
        return None
    keys = sum("key" in n.lower() for n in names)
    values = sum("value" in n.lower() for n in names)
    if keys == values == len(names) / 2:
        head = [("2", "key/value"), (str(len(names) // 2), "layers")]
    else:
        head = [(str(len(names)), "outputs")]
    return head + [(_factor(d), f"dim {i}") for i, d in enumerate(shape)] + [(itemsize_text(dtypes[0]), "itemsize")]


def _factor(d: Dim) -> str:
    text = str(d)
    return f"({text})" if isinstance(d, dims.Expr) and (" + " in text or " - " in text) else text
