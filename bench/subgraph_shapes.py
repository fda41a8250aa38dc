"""How many values inside If/Loop/Scan bodies (and the outer values they read) each tool leaves
without a shape: onnxsym's annotate, onnx's infer_shapes, onnxruntime's symbolic_shape_infer.

    python bench/subgraph_shapes.py [MODEL...]     # default: every model under models/ with a subgraph

A value counts as shaped when the annotated model declares its rank (a value_info or graph
output with a shape) in the graph that produces it or in one it is visible from.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import io
import os
import sys
import time

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

CONTROL = {"If", "Loop", "Scan"}


def _subgraphs(node):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        yield from a.graphs


def has_subgraphs(model) -> bool:
    return any(n.op_type in CONTROL for n in model.graph.node)


def _shaped(graph, into: set[str]) -> None:
    for vi in list(graph.value_info) + list(graph.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            into.add(vi.name)


def counted(model) -> tuple[int, int, int, int]:
    """(values produced inside subgraphs, of them shaped, outer values subgraphs read, of them shaped)."""
    inside = shaped_inside = reads = shaped_reads = 0

    def walk(graph, outer_produced: dict[str, set[str]], shaped_outer: set[str]):
        nonlocal inside, shaped_inside, reads, shaped_reads
        shaped = set(shaped_outer)
        _shaped(graph, shaped)
        produced = {o for n in graph.node for o in n.output if o}
        for n in graph.node:
            for g in _subgraphs(n):
                local = {o for m in g.node for o in m.output if o} | {i.name for i in g.input} \
                    | {i.name for i in g.initializer}
                used = {i for m in _all_nodes(g) for i in m.input if i} - local
                for name in used & (produced | set().union(*outer_produced.values()) if outer_produced else used & produced):
                    reads += 1
                    shaped_reads += name in shaped
                inner = set(shaped)
                _shaped(g, inner)
                for m in g.node:
                    for o in m.output:
                        if o:
                            inside += 1
                            shaped_inside += o in inner
                walk(g, {**outer_produced, id(graph): produced}, shaped)

    walk(model.graph, {}, set())
    return inside, shaped_inside, reads, shaped_reads


def _all_nodes(graph):
    for n in graph.node:
        yield n
        for g in _subgraphs(n):
            yield from _all_nodes(g)


def by_onnxsym(model):
    import onnxsym

    return onnxsym.annotate(model)


def by_onnx(model):
    return onnx.shape_inference.infer_shapes(model)


def by_ort(model):
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return SymbolicShapeInference.infer_shapes(model, auto_merge=True)


TOOLS = {"onnxsym": by_onnxsym, "onnx": by_onnx, "ort_ssi": by_ort}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    paths = args.models or sorted(set(glob.glob("models/real/*.onnx") + glob.glob("models/*.onnx")))
    totals = {t: [0, 0] for t in TOOLS}
    print(f"{'model':40} {'values':>7} " + " ".join(f"{t + ' unshaped':>17}" for t in TOOLS) + "   (inside + outer reads)")
    for path in paths:
        model = onnx.load(path, load_external_data=False)
        if not has_subgraphs(model):
            continue
        cells = []
        n_all = None
        for tool, run in TOOLS.items():
            copy = onnx.ModelProto()
            copy.CopyFrom(model)
            t0 = time.perf_counter()
            try:
                out = run(copy)
            except Exception as exc:  # noqa: BLE001 - a peer that fails is reported as failing
                cells.append(f"{'fails: ' + type(exc).__name__:>17}")
                continue
            inside, shaped_in, reads, shaped_reads = counted(out)
            n_all = inside + reads
            unshaped = n_all - shaped_in - shaped_reads
            totals[tool][0] += unshaped
            totals[tool][1] += 1
            cells.append(f"{f'{inside - shaped_in} + {reads - shaped_reads}':>11} {time.perf_counter() - t0:4.1f}s")
        print(f"{os.path.basename(path):40} {n_all or 0:>7} " + " ".join(cells))
    print("total unshaped: " + ", ".join(f"{t} {u} (on {n} models)" for t, (u, n) in totals.items()))


if __name__ == "__main__":
    main()
