"""``show --summary``: a model on one screen: its inputs and outputs with their dims, how many
nodes of each op type, its size (parameters, bytes, external data), opsets and producer."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator

import onnx

from ..inference.result import Result
from ..output.numbers import size_text


def graphs(g: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """``g`` and every subgraph under it (If branches, Loop and Scan bodies), depth first."""
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graphs(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from graphs(sub)


def op_counts(g: onnx.GraphProto) -> Counter[str]:
    """How many nodes of each op type ``g`` holds, subgraphs included (``com.microsoft.`` before
    an op of another domain than ONNX's)."""
    return Counter(f"{n.domain}.{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type
                   for sub in graphs(g) for n in sub.node)
