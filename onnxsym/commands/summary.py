"""``show --summary``: a model on one screen: its inputs and outputs with their dims, how many
nodes of each op type, its size (parameters, bytes, external data), opsets and producer."""

from __future__ import annotations

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


def _itemsize(dtype: int) -> int:
    try:
        return int(onnx.helper.tensor_dtype_to_np_dtype(dtype).itemsize)
    except Exception:  # (strings: no fixed size; the few 4-bit types count a byte each)
        return 0 if dtype == onnx.TensorProto.STRING else 1


def _weights(model: onnx.ModelProto) -> tuple[int, int, int, set[str]]:
    """(parameters, bytes, bytes in external data, the external files) of the initializers of
    every graph and the tensors of Constant nodes."""
    tensors = [t for g in graphs(model.graph) for t in g.initializer]
    tensors += [a.t for g in graphs(model.graph) for n in g.node if n.op_type == "Constant"
                for a in n.attribute if a.type == onnx.AttributeProto.TENSOR]
    params = size = external = 0
    files: set[str] = set()
    for t in tensors:
        count = 1
        for d in t.dims:
            count *= d
        nbytes = count * _itemsize(t.data_type)
        params, size = params + count, size + nbytes
        if t.data_location == onnx.TensorProto.EXTERNAL:
            info = {e.key: e.value for e in t.external_data}
            external += int(info.get("length", nbytes))
            files.add(info.get("location", "?"))
    return params, size, external, files


def _count(n: int) -> str:
    for unit, scale in (("G", 10**9), ("M", 10**6), ("K", 10**3)):
        if n >= scale:
            return f"{n / scale:.3g}{unit} ({n:,})"
    return str(n)


def summary_lines(result: Result, shape_of, top: int = 12) -> list[str]:
    """The model on one screen. ``shape_of(name)`` is a value's type as ``show`` writes it (a graph
    input's as declared)."""
    m, g = result.model, result.model.graph
    inits = {t.name for t in g.initializer}
    inputs = [i.name for i in g.input if i.name not in inits]
    outputs = [o.name for o in g.output]
    width = max(map(len, inputs + outputs), default=0)
    out = [f"inputs ({len(inputs)})"] + [f"  {n.ljust(width)}  {shape_of(n)}" for n in inputs]
    out += [f"outputs ({len(outputs)})"] + [f"  {n.ljust(width)}  {shape_of(n)}" for n in outputs]
    counts = op_counts(g)
    total = sum(counts.values())
    ranked = counts.most_common()
    listed = ", ".join(f"{op} {k}" for op, k in ranked[:top])
    more = f", and {len(ranked) - top} more op types ({sum(k for _, k in ranked[top:])} nodes)" if len(ranked) > top else ""
    sub = sum(1 for _ in graphs(g)) - 1
    out.append(f"nodes: {total} of {len(ranked)} op types" + (f" (with {sub} subgraphs)" if sub else ""))
    if ranked:
        out.append(f"  {listed}{more}")
    params, size, external, files = _weights(m)
    ext = (f"; {size_text(external)} of it in external data ({', '.join(sorted(files))})" if files
           else "; no external data")
    out.append(f"size: {_count(params)} parameter{'s' if params != 1 else ''}, {size_text(size)}{ext}")
    opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in m.opset_import)
    out.append(f"opsets: {opsets}; IR version {m.ir_version}")
    producer = " ".join(x for x in (m.producer_name, m.producer_version) if x) or "(not recorded)"
    out.append(f"producer: {producer}" + (f"; graph '{g.name}'" if g.name else ""))
    return out
