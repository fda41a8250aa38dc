"""What the cost tests compare onnxsym's figures with, from what onnxruntime computes: every
value's shape and bytes at constrained sizes, and the peak of a plain liveness walk."""

import math

from onnx import TensorProto, numpy_helper

from onnxsym.commands.verify import constrained_assignments, runtime_values


def runtime_sizes(result, count=2, fixed=None):
    """(bindings, {name: (shape, bytes)}) for every value, from onnxruntime's tensors, feeds
    and initializers."""
    inits = {t.name: (tuple(t.dims), init_bytes(t)) for t in result.model.graph.initializer}
    for bindings, feeds, outs in runtime_values(result, constrained_assignments(result, count, fixed=fixed)):
        seen = dict(inits)
        seen.update({n: (a.shape, a.nbytes) for n, a in feeds.items()})
        seen.update({n: (tuple(v.shape()), v.tensor_size_in_bytes()) for n, v in outs.items() if v.is_tensor()})
        yield bindings, seen


def init_bytes(t):
    if t.data_type in (TensorProto.INT4, TensorProto.UINT4):
        return len(t.raw_data) if t.raw_data else math.ceil(math.prod(t.dims) / 2)
    return numpy_helper.to_array(t).nbytes


def peak_by_walk(graph, nbytes, constants):
    """The most bytes live at once along the node order, each value from its producer (or
    the start) to its last reader (or the end, for a graph output): a plain scan."""
    inits = {t.name for t in graph.initializer}
    outputs = {o.name for o in graph.output}
    nodes = list(graph.node)
    born = {i.name: 0 for i in graph.input if i.name not in inits}
    for i, node in enumerate(nodes):
        for o in node.output:
            if o and o not in constants:
                born[o] = i
    reads = [set(n.input) | body_reads(n) for n in nodes]
    dies = {}
    for name, b in born.items():
        readers = [j for j, r in enumerate(reads) if name in r]
        dies[name] = len(nodes) - 1 if name in outputs else max(readers, default=b)
    return max(sum(nbytes[name] for name, b in born.items() if b <= i <= dies[name]) for i in range(len(nodes)))


def body_reads(node):
    out = set()
    for a in node.attribute:
        for g in ([a.g] if a.type == a.GRAPH else list(a.graphs)):
            for n in g.node:
                out.update(n.input)
                out |= body_reads(n)
    return out
