"""The text and JSON forms of a :class:`Cost` for ``onnxsym cost``: sizes in binary units
and FLOPs in decimal ones where they are numbers (``13.8 MiB``, ``4.76 GFLOPs``; the JSON
keeps the exact integers), expressions where they are not; ``--nodes`` a table."""

from __future__ import annotations

import json

from ..dims import Dim
from ..output.numbers import flops_text, size_text


def _num(d: Dim | None) -> int | str | None:
    return d if d is None or isinstance(d, int) else str(d)


def human(d: Dim) -> str:
    """``d`` bytes, exact, with binary units after a number (what a budget is checked by)."""
    if not isinstance(d, int):
        return f"{d} bytes"
    return f"{d} bytes" + (f" ({size_text(d)})" if abs(d) >= 1024 else "")


def size(d: Dim | None) -> str:
    """Bytes as a person reads them: ``13.8 MiB``; an expression ``... bytes``."""
    if d is None:
        return "?"
    return size_text(d) if isinstance(d, int) else f"{d} bytes"


def flops(d: Dim | None) -> str:
    if d is None:
        return "not counted"
    return flops_text(d) if isinstance(d, int) else f"{d} FLOPs"


def kv_line(cost) -> str | None:
    if not cost.kv_outputs:
        return None
    head = f"KV cache ({len(cost.kv_outputs)} present outputs)"
    if cost.kv_cache is None:
        return f"{head}: size unknown"
    if cost.kv_factors is None:
        return f"{head}: {size(cost.kv_cache)}"
    factors = "*".join(f for f, _ in cost.kv_factors)
    legend = " x ".join(what for _, what in cost.kv_factors if not what.startswith("dim"))
    legend = legend.replace("itemsize", "one output's shape x itemsize")
    return f"{head}: {factors} = {size(cost.kv_cache)}  ({legend})"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def text_lines(model: str, cost, per_node: bool = False, solution=None, top: int | None = None,
               width: int | None = None) -> list[str]:
    lines = [f"{model}: {_count(len(cost.nodes), 'node')}"]
    lines.append(f"  parameters: {size(cost.param_bytes)}")
    lines.append(f"  graph inputs: {size(cost.input_bytes)}")
    lines.append(f"  activations (every node output): {size(cost.activation_bytes)}")
    lines.append(f"  FLOPs: {flops(cost.flops)}")
    for fam, f in sorted(cost.flops_by_family.items()):
        if f != 0:
            lines.append(f"    {fam}: {flops(f)}")
    skipped = cost.not_counted
    if skipped:
        ops = sorted({n.op_type for n in skipped})
        lines.append(f"    not counted: {_count(len(skipped), 'node')} ({', '.join(ops)})")
    kv = kv_line(cost)
    if kv:
        lines.append(f"  {kv}")
    lines.append(f"  peak live activations: {size(cost.peak)}")
    lines.append(f"  memory (parameters + peak): {size(cost.memory)}")
    if cost.data_dependent:
        wm, wf = cost.worst_memory, cost.worst_flops
        lines.append("  worst case (each data-dependent count at the bound its op proves): "
                     f"memory {size(wm) if wm is not None else 'not bounded'}, "
                     f"FLOPs {flops(wf) if wf is not None else 'not bounded'}")
    if cost.unknown_sizes:
        lines.append(f"  size unknown (not counted): {', '.join(cost.unknown_sizes[:5])}"
                     + (f" and {len(cost.unknown_sizes) - 5} more" if len(cost.unknown_sizes) > 5 else ""))
    if solution is not None:
        lines.extend(solution_lines(solution))
    if per_node or top is not None:
        lines += [""] + node_table(cost, top, width)
    return lines


def node_table(cost, top: int | None = None, width: int | None = None) -> list[str]:
    """Every node (the ``top`` by FLOPs) with its FLOPs, share of the total, parameter and
    output bytes: sorted by FLOPs where they are numbers, in node order where they are not."""
    from ..commands.table import render

    nodes = list(cost.nodes)
    numeric = all(isinstance(n.flops, int) or n.flops is None for n in nodes) and isinstance(cost.flops, int)
    if numeric:
        nodes.sort(key=lambda n: -1 if n.flops is None else n.flops, reverse=True)
    shown = nodes if top is None else nodes[:top]
    total = cost.flops

    def share(f):
        return f"{100 * f / total:.1f}%" if numeric and isinstance(f, int) and total else ""

    def cell(d, unit):  # in a column its header names: a number with its unit, an expression bare
        return unit(d) if isinstance(d, int) else ("-" if d is None else str(d))

    rows = [[n.name or "(unnamed)", n.op_type, cell(n.flops, flops_text), share(n.flops),
             cell(n.param_bytes, size_text), cell(n.output_bytes, size_text)] for n in shown]
    if numeric:
        rows.append(["total", "", flops(total), "100.0%" if total else "", size(cost.param_bytes),
                     size(cost.activation_bytes)])
        header = ["node", "op", "FLOPs", "share", "params", "output"]
        right = [2, 3, 4, 5]
    else:
        rows = [r[:3] + r[4:] for r in rows]
        header = ["node", "op", "FLOPs", "params", "output"]
        right = []
    out = render(header, rows, width, right=right)
    if top is not None and top < len(nodes):
        out.append(f"({len(nodes) - top} more nodes: --nodes lists them all)")
    if not numeric:
        out.append("(FLOPs over symbols: in node order; --bind every symbol for sorting and shares)")
    return out


def solution_lines(s) -> list[str]:
    lines = [f"  solve {s.symbol} under {human(s.budget)}: memory = {s.memory}"]
    if s.skipped:
        lines.append(f"  largest {s.symbol} in the domain = {s.value}: {human(s.at_value)} (the larger sizes "
                     f"that fit break {s.skipped})")
    elif s.range_top:
        lines.append(f"  {s.symbol} = {s.value} (the top of its range) fits: {human(s.at_value)}")
    else:
        lines.append(f"  largest {s.symbol} = {s.value}: {human(s.at_value)}; "
                     f"{s.symbol} = {s.value + 1} needs {human(s.at_next)}")
    return lines


def as_json(model: str, cost, solution=None) -> str:
    doc: dict[str, object] = {
        "model": model,
        "symbols": {k: list(v) for k, v in sorted(cost.ranges.items())},
        "parameter_bytes": _num(cost.param_bytes),
        "input_bytes": _num(cost.input_bytes),
        "activation_bytes": _num(cost.activation_bytes),
        "flops": _num(cost.flops),
        "flops_by_family": {k: _num(v) for k, v in sorted(cost.flops_by_family.items())},
        "kv_cache": None if not cost.kv_outputs else {
            "outputs": cost.kv_outputs, "bytes": _num(cost.kv_cache),
            "factors": [{"factor": f, "is": what} for f, what in cost.kv_factors or ()]},
        "peak_bytes": _num(cost.peak),
        "memory_bytes": _num(cost.memory),
        "worst_case": None if not cost.data_dependent else {
            "memory_bytes": _num(cost.worst_memory), "flops": _num(cost.worst_flops)},
        "unknown_sizes": cost.unknown_sizes,
        "nodes": [{"name": n.name, "op_type": n.op_type, "family": n.family, "flops": _num(n.flops),
                   "parameter_bytes": _num(n.param_bytes), "output_bytes": _num(n.output_bytes)}
                  for n in cost.nodes],
    }
    if solution is not None:
        doc["solve"] = {"symbol": solution.symbol, "value": solution.value, "budget": solution.budget,
                        "memory": _num(solution.memory), "bytes_at_value": solution.at_value,
                        "bytes_at_next": solution.at_next, "range_top": solution.range_top,
                        "skipped": solution.skipped or None}
    return json.dumps(doc, indent=2)
