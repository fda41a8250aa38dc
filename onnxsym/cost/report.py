"""The text and JSON forms of a :class:`Cost` for ``onnxsym cost``."""

from __future__ import annotations

import json

from ..dims import Dim


def _num(d: Dim | None) -> int | str | None:
    return d if d is None or isinstance(d, int) else str(d)


def human(d: Dim) -> str:
    """``d`` bytes, with binary units after a number."""
    if not isinstance(d, int):
        return f"{d} bytes"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(d) >= size:
            return f"{d} bytes ({d / size:.2f} {unit})"
    return f"{d} bytes"


def kv_line(cost) -> str | None:
    if not cost.kv_outputs:
        return None
    head = f"KV cache ({len(cost.kv_outputs)} present outputs)"
    if cost.kv_cache is None:
        return f"{head}: size unknown"
    if cost.kv_factors is None:
        return f"{head}: {human(cost.kv_cache)}"
    factors = "*".join(f for f, _ in cost.kv_factors)
    legend = " x ".join(what for _, what in cost.kv_factors if not what.startswith("dim"))
    legend = legend.replace("itemsize", "one output's shape x itemsize")
    return f"{head}: {factors} = {human(cost.kv_cache)}  ({legend})"


def text_lines(model: str, cost, per_node: bool = False, solution=None) -> list[str]:
    lines = [f"{model}: {len(cost.nodes)} nodes"]
    lines.append(f"  parameters: {human(cost.param_bytes)}")
    lines.append(f"  graph inputs: {human(cost.input_bytes)}")
    lines.append(f"  activations (every node output): {human(cost.activation_bytes)}")
    lines.append(f"  FLOPs: {cost.flops}")
    for fam, f in sorted(cost.flops_by_family.items()):
        if f != 0:
            lines.append(f"    {fam}: {f}")
    skipped = cost.not_counted
    if skipped:
        ops = sorted({n.op_type for n in skipped})
        lines.append(f"    not counted: {len(skipped)} nodes ({', '.join(ops)})")
    kv = kv_line(cost)
    if kv:
        lines.append(f"  {kv}")
    lines.append(f"  peak live activations: {human(cost.peak)}")
    lines.append(f"  memory (parameters + peak): {human(cost.memory)}")
    if cost.unknown_sizes:
        lines.append(f"  size unknown (not counted): {', '.join(cost.unknown_sizes[:5])}"
                     + (f" and {len(cost.unknown_sizes) - 5} more" if len(cost.unknown_sizes) > 5 else ""))
    if solution is not None:
        lines.extend(solution_lines(solution))
    if per_node:
        lines.append("  per node: op, name, FLOPs, parameter bytes, output bytes")
        for n in cost.nodes:
            flops = "not counted" if n.flops is None else n.flops
            out = "?" if n.output_bytes is None else n.output_bytes
            lines.append(f"    {n.op_type} '{n.name}': {flops}; {n.param_bytes}; {out}")
    return lines


def solution_lines(s) -> list[str]:
    lines = [f"  solve {s.symbol} under {human(s.budget)}: memory = {s.memory}"]
    if s.range_top:
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
        "unknown_sizes": cost.unknown_sizes,
        "nodes": [{"name": n.name, "op_type": n.op_type, "family": n.family, "flops": _num(n.flops),
                   "parameter_bytes": _num(n.param_bytes), "output_bytes": _num(n.output_bytes)}
                  for n in cost.nodes],
    }
    if solution is not None:
        doc["solve"] = {"symbol": solution.symbol, "value": solution.value, "budget": solution.budget,
                        "memory": _num(solution.memory), "bytes_at_value": solution.at_value,
                        "bytes_at_next": solution.at_next, "range_top": solution.range_top}
    return json.dumps(doc, indent=2)
