"""Whether a written model loads.

onnxruntime runs shape inference when it loads a model (onnx's rules for the standard
operators, its own for the contrib ones, its own propagation of shape values through
Shape, Gather, Concat and integer arithmetic, then constant folding and inference again),
reading the value_info it is given; ``onnx.checker.check_model(full_check=True)`` runs
onnx's. A static dim that onnxsym writes where that inference knew none can make it refuse
a node it accepts without it: a TopK(k) in an If branch that does not run at those sizes
(fuzzer seed 6515), an opset-18 Split without ``num_outputs`` whose axis became static
(seeds 4136, 4588: onnx requires the attribute once it sees the dim; the kernel splits
evenly without it). The written model must load wherever the model as given does, so the
judges are asked (:func:`refusal`) on a light copy: no weights, every node named by its
place, the value_info as written.

Where every node runs at every size, a node refused on true dims is one whose inference is
stricter than its kernel (the Split): onnx's inference finds those, at a fraction of what
onnxruntime's session costs on a large graph. onnxruntime itself is asked where a node may
not run (in a subgraph that may not run where the model does: a model whose every subgraph runs
wherever it does is judged as one without subgraphs, onnxsym.api._every_subgraph_runs) or the
inputs are specialised.
"""

from __future__ import annotations

import hashlib
import math
import operator
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import onnx

from ..model.runtime import load_error
from ..model.validate import node_order

# Initializers larger than this go to onnxruntime as typed graph inputs, without their data:
# no shape is computed from that many elements, and the copy stays small. (So do external
# ones, whose files the copy cannot name.)
_SMALL_INITIALIZER = 4096
_PREFIX = "onnxsym.node."
_NODE = re.compile(r"[Nn]ode \(([^)]*)\)")  # onnxruntime's message
_ONNX_NODE = re.compile(r"node name: ([^)]*)\)")  # onnx's


@dataclass(frozen=True)
class Place:
    """A node of the light copy: the graphs from the main one down to the node's, and the node."""

    graphs: tuple[onnx.GraphProto, ...] = field(repr=False)
    node: onnx.NodeProto = field(repr=False)
    name: str = ""  # its name in the model as given ('' when it has none)


@dataclass(frozen=True)
class Refusal:
    """A judge's refusal: its message, and the innermost node it names (None: none)."""

    message: str
    place: Place | None

    def describe(self) -> str:
        text = self.message.split(" : ", 3)[-1] if "ONNXRuntimeError" in self.message else self.message
        text = re.sub(r"\(op_type:[^)]*\):|Node \([^)]*\) Op \([^)]*\)", "", text)
        text = " ".join(re.sub(r"\[\w+Error\]|Inference error\(s\):", "", text).split()).rstrip(".")
        if self.place is None:
            return text
        return f"{self.place.node.op_type} node '{self.place.name or '?'}': {text}"


_CONTROL_FLOW = frozenset({"If", "Loop", "Scan", "SequenceMap"})


def _subgraph_owners(g: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The nodes of ``g`` with graph attributes (control flow; a contrib op such as BeamSearch)."""
    return [n for n in g.node if (n.op_type in _CONTROL_FLOW or n.domain not in ("", "ai.onnx"))
            and any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in n.attribute)]


def has_subgraphs(model: onnx.ModelProto) -> bool:
    return bool(_subgraph_owners(model.graph))


# onnxruntime is an extra of onnxsym (a user's own distribution of it, onnxruntime-gpu and the
# like, provides the same module); without any, only onnx's inference judges, and the result says so.
NO_RUNTIME = ("the written model was judged by onnx's shape inference only: onnxruntime, which judges a "
              "model with subgraphs that may not run or with bound inputs, is not installed (pip install onnxruntime, "
              "or your own distribution of it)")


def runtime_installed() -> bool:
    """Whether some distribution of onnxruntime can be imported."""
    import importlib.util

    try:
        return importlib.util.find_spec("onnxruntime") is not None
    except ImportError:  # (an import hook that refuses it)
        return False


class LightModel:
    """A copy of a model for the judges: graphs and nodes as they are (in an order that computes
    each value before its use; named by their place where names do not tell nodes apart), small
    initializers kept, the others typed graph inputs; with ``runtime``, large constants too.
    ``in_order``: the main graph's nodes are known to be in such an order (inference ran them so)."""

    def __init__(self, model: onnx.ModelProto, runtime: bool = False, in_order: bool = False,
                 nodes: list[int] | None = None):
        light = onnx.ModelProto(ir_version=model.ir_version, producer_name=model.producer_name)
        light.opset_import.extend(model.opset_import)
        light.functions.extend(model.functions)
        g = light.graph
        src = model.graph
        g.name = src.name
        if nodes is None:
            g.node.extend(src.node)
        else:  # (only these, by index: see onnxsym.output.repeats)
            stored = src.node
            g.node.extend(stored[i] for i in nodes)
        g.input.extend(src.input)
        g.output.extend(src.output)
        g.value_info.extend(src.value_info)
        g.sparse_initializer.extend(src.sparse_initializer)
        names = {i.name for i in src.input}
        for t in src.initializer:
            if keeps_elements(t):
                g.initializer.append(t)
            elif t.name not in names:
                g.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        # whether large constants became graph inputs (else the copy is the one without ``runtime``)
        self.constants_as_inputs = runtime and _big_constants_as_inputs(g)
        self.model = light
        self.renamed: dict[str, str] = {}  # a node's name here -> its name in the model as given
        self._prepare(g, in_order)

    def _prepare(self, g: onnx.GraphProto, in_order: bool = False) -> None:
        if not in_order and not _in_order(g):  # (onnx reads nodes in file order; onnxruntime sorts them)
            nodes = [g.node[i] for i in node_order(g)]
            del g.node[:]
            g.node.extend(nodes)
        graphs = [sg for n in _subgraph_owners(g) for sg in _subgraphs(n)]
        for sg in graphs:
            self._prepare(sg)
        if g is self.model.graph and not self.renamed:
            names = list(map(_NAME, g.node)) if not graphs else [n.name for n in _all_nodes(g)]
            if len(set(names)) < len(names) or "" in names:  # the refusal must name one node
                for k, n in enumerate(_all_nodes(g)):
                    key = f"{_PREFIX}{k}"
                    self.renamed[key] = n.name
                    n.name = key

    def place(self, name: str) -> Place | None:
        """The node named ``name`` here (as a refusal names it)."""
        found = _find(self.model.graph, name, ())
        if found is None:
            return None
        return Place(found[0], found[1], self.renamed.get(name, name))

    def copy(self) -> onnx.ModelProto:
        out = onnx.ModelProto()
        out.CopyFrom(self.model)
        return out


# Standard ops whose inference in onnx reads no input's elements (only types).
TYPES_ONLY = frozenset({"MatMul", "Gemm", "Conv", "ConvTranspose", "Add", "Sub", "Mul", "Div", "Pow",
                        "LayerNormalization", "BatchNormalization", "InstanceNormalization"})


def keeps_elements(t: onnx.TensorProto) -> bool:
    """Whether the light copy keeps an initializer's elements (else it is a typed graph input)."""
    return t.data_location != onnx.TensorProto.EXTERNAL and math.prod(t.dims) <= _SMALL_INITIALIZER  # (a scalar: 1)


def _all_nodes(g: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for n in g.node:
        yield n
        if n.op_type in _CONTROL_FLOW or n.domain not in ("", "ai.onnx"):
            for sg in _subgraphs(n):
                yield from _all_nodes(sg)


def _find(g: onnx.GraphProto, name: str, outer: tuple) -> tuple | None:
    graphs = outer + (g,)
    for n in g.node:
        if n.name == name:
            return graphs, n
        for sg in _subgraphs(n):
            found = _find(sg, name, graphs)
            if found is not None:
                return found
    return None


def _in_order(g: onnx.GraphProto) -> bool:
    """Whether every value ``g``'s nodes produce is produced before a node of ``g`` reads it."""
    fields = list(map(_INPUT_OUTPUT, g.node))  # (each protobuf field read once: reads are slow)
    first: dict[str, int] = {}  # each value -> the first node that produces it
    for k, (_, outputs) in enumerate(fields):
        for o in outputs:
            first.setdefault(o, k)
    get = first.get
    for k, (inputs, _) in enumerate(fields):
        for i in inputs:
            if get(i, -1) >= k:  # produced, and not by a node before this one
                return False
    return True


_INPUT_OUTPUT = operator.attrgetter("input", "output")
_NAME = operator.attrgetter("name")


def _size(dims) -> int:
    return math.prod(int(d) for d in dims)


def _big_constants(g: onnx.GraphProto) -> dict[int, tuple[int, list[int]]]:
    """The Constant and ConstantOfShape nodes of the main graph (by index) that make more than
    ``_SMALL_INITIALIZER`` elements, none a graph output, with the type and shape each makes."""
    known = {t.name: t for t in g.initializer}
    outputs = {o.name for o in g.output}
    found = {}
    for k, n in enumerate(g.node):
        made = None
        if n.op_type == "Constant" and len(n.output) == 1:
            for a in n.attribute:
                if a.name == "value" and _size(a.t.dims) > _SMALL_INITIALIZER:
                    made = (a.t.data_type, list(a.t.dims))
        elif n.op_type == "ConstantOfShape" and n.input and n.input[0] in known and len(n.output) == 1:
            shape = onnx.numpy_helper.to_array(known[n.input[0]]).reshape(-1).tolist()
            if _size(shape) > _SMALL_INITIALIZER and min(shape, default=0) >= 0:
                dtype = next((a.t.data_type for a in n.attribute if a.name == "value"), onnx.TensorProto.FLOAT)
                made = (dtype, shape)
        if made is not None and n.output[0] not in outputs:
            found[k] = made
    return found


def _big_constants_as_inputs(g: onnx.GraphProto) -> bool:
    """The main graph's large constants (:func:`_big_constants`) become typed graph inputs:
    onnxruntime would fold them into tensors as large as weights (the model zoo's slimmed CNNs) and
    compute no shape from them. Returns whether there was one."""
    big = _big_constants(g)
    if not big:
        return False
    for k, (dtype, shape) in big.items():
        g.input.append(onnx.helper.make_tensor_value_info(g.node[k].output[0], dtype, shape))
    keep = [n for k, n in enumerate(g.node) if k not in big]
    del g.node[:]
    g.node.extend(keep)
    return True


def runtime_as_is(model: onnx.ModelProto, in_order: bool) -> bool:
    """Whether both judges read in ``model`` itself what they read in its light copy for
    onnxruntime (``LightModel(model, True, in_order)``): the nodes of every graph in order, every
    initializer's elements kept, no large constant. The copy then differs only in node names, doc
    strings and metadata, which neither judge reads (but onnxruntime reads its session options
    from the metadata where ORT_LOAD_CONFIG_FROM_MODEL is set: then the copy is judged)."""
    if os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL") == "1":
        return False
    g = model.graph
    return (in_order or _in_order(g)) and all(map(keeps_elements, g.initializer)) and \
        not _big_constants(g) and _subgraphs_in_order(g)


def refusal(light: LightModel, model: onnx.ModelProto, onnx_judge: bool, runtime: bool) -> Refusal | None:
    """Why ``model`` (a written :meth:`LightModel.copy`) would be refused, or None: with
    ``onnx_judge``, by onnx's strict shape inference (what onnxruntime runs first on loading, and
    ``onnx.checker.check_model(full_check=True)`` runs); with ``runtime``, by onnxruntime loading it."""
    data = model.SerializeToString()
    if onnx_judge:
        text = onnx_refusal(data)
        if text is not None:
            return _refusal(light, text, _ONNX_NODE)
    if not runtime:
        return None
    error = runtime_refusal(data)
    return None if error is None else _refusal(light, error, _NODE)


def loads_as_is(model: onnx.ModelProto, onnx_judge: bool) -> bool:
    """Whether ``model`` itself (where :func:`runtime_as_is` holds) loads: taken by onnx's strict
    inference (with ``onnx_judge``), then by onnxruntime. A refusal names no node here: the caller
    judges the light copy again to find it."""
    data = model.SerializeToString()
    return not (onnx_judge and onnx_refusal(data) is not None) and runtime_refusal(data) is None


def runtime_refusal(data: bytes) -> str | None:
    """onnxruntime's refusal of the serialized model ``data``, or None: loaded as a user's
    onnxruntime loads it (a Shape of a written static dim folds into a TopK's rows)."""
    return _verdict("onnxruntime", data, lambda d: load_error(d, optimize=True))


# Each judge's verdict (its message, None: taken) by the bytes it judged: a pipeline infers one
# model again and again (the optimizer once per fusion kind), and a judge (one onnx, one
# onnxruntime in a process) answers the same bytes alike. Key: (the judge, the bytes themselves
# where they are small: Python's own hash of them, a fifth of a digest's cost on a small model's
# 100 kB, and an exact match; else their digest). The bytes held as keys are bounded.
_VERDICTS: dict[tuple[str, bytes], str | None] = {}
_MOST_VERDICTS = 256
_KEY_AS_IS = 1 << 20  # the most bytes a key holds as they are
_HELD = [0]  # the bytes _VERDICTS' keys hold as they are
_MOST_HELD = 32 << 20


def _verdict(judge: str, data: bytes, ask: Callable[[bytes], str | None]) -> str | None:
    small = len(data) <= _KEY_AS_IS
    key = (judge, data) if small else (judge + " digest", hashlib.blake2b(data, digest_size=20).digest())
    if key in _VERDICTS:
        return _VERDICTS[key]
    text = ask(data)
    held = len(data) if small else 0
    if len(_VERDICTS) >= _MOST_VERDICTS or _HELD[0] + held > _MOST_HELD:
        forget_verdicts()
    _VERDICTS[key] = text
    _HELD[0] += held
    return text


def forget_verdicts() -> None:
    """Forget every verdict (as for a model that changed: see bench/ort_compat_speed.py)."""
    _VERDICTS.clear()
    _HELD[0] = 0


def onnx_refusal(data: bytes) -> str | None:
    """onnx's strict inference's refusal of the serialized model ``data`` (its message), or None."""
    return _verdict("onnx", data, _onnx_refusal)


def _onnx_refusal(data: bytes) -> str | None:
    from onnx import shape_inference

    try:
        # (element types are not checked: onnxsym maps types no standard op takes yet)
        _strict_inference(data)
    except shape_inference.InferenceError as exc:
        if "instead is null" not in str(exc):  # (a type onnx could not infer upstream: a limit of its own)
            return str(exc)
    except Exception:  # noqa: BLE001 - onnx could not judge the model: a limit of its own, not a verdict
        pass
    return None


# The most elements of initializers the light copy leaves out that a model judged as itself holds.
_AS_IS_ELEMENTS = 4 * _SMALL_INITIALIZER


def light_as_is(model: onnx.ModelProto, in_order: bool) -> bool:
    """Whether onnx's inference reads in ``model`` itself what it reads in its light copy
    (``LightModel(model, False, in_order)``): the nodes in order, and every initializer's elements
    kept but a few (in the file, none a graph input) that only nodes whose inference reads no
    elements read (a MatMul's weights: the copy makes them typed inputs), so that the copy differs
    only in what inference does not read (doc strings, metadata, node names, which only name the
    node a refusal is of): its verdict on the model is the copy's."""
    if not in_order:
        return False
    g = model.graph
    big = [t for t in g.initializer if not keeps_elements(t)]
    if not big:
        return _subgraphs_in_order(g)
    if sum(math.prod(t.dims) for t in big) > _AS_IS_ELEMENTS:
        return False  # (then serializing their elements costs more than the copy saves)
    names = {t.name for t in big}
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in big) or \
            not names.isdisjoint(i.name for i in g.input):
        return False
    functions = {(f.domain, f.name) for f in model.functions}
    for n, (op, domain, inputs) in zip(g.node, map(_OP_DOMAIN_INPUT, g.node)):
        if not domain or domain == "ai.onnx":
            if op in _CONTROL_FLOW:
                return False  # (its subgraphs may read one)
            if op in _READ_AS_TYPES or names.isdisjoint(inputs):
                continue
            return False
        if (domain, op) not in functions and not onnx.defs.has(op, domain):
            continue  # (onnx infers nothing there)
        if not names.isdisjoint(inputs) or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                                               for a in n.attribute):
            return False
    return True


_OP_DOMAIN_INPUT = operator.attrgetter("op_type", "domain", "input")
# (and Gather, an embedding's table: its inference reads shapes; data propagation, which would
# read elements, is off in the strict inference asked)
_READ_AS_TYPES = TYPES_ONLY | {"Gather"}


def _subgraphs_in_order(g: onnx.GraphProto) -> bool:
    """Whether every subgraph in ``g`` (nested ones too) stores its nodes in an order that computes
    each value before a node reads it (the light copy sorts one that does not)."""
    return all(_in_order(sg) and _subgraphs_in_order(sg) for n in _subgraph_owners(g) for sg in _subgraphs(n))


def takes_as_written(model: onnx.ModelProto) -> bool:
    """Whether onnx's strict inference takes ``model`` (a written light copy) and infers on every
    value it declares in value_info exactly the type written there (nothing more: see
    onnxsym.output.repeats). False also where onnx could not judge it."""
    try:
        data = _strict_inference(model.SerializeToString())
    except Exception:  # noqa: BLE001 - a refusal, or no verdict: the whole model is judged
        return False
    inferred = onnx.ModelProto()
    inferred.ParseFromString(data)
    written = {vi.name: vi.type for vi in model.graph.value_info}
    for vi in inferred.graph.value_info:
        t = written.get(vi.name)
        if t is not None and vi.type != t:
            return False
    return True


def _strict_inference(data: bytes) -> bytes:
    """onnx's strict shape inference of a serialized model, the inferred model's bytes; raises its
    InferenceError on a refusal. The C++ entry point of ``onnx.shape_inference.infer_shapes`` is
    called on the bytes: the model it returns (as large as the input) is parsed only by a caller
    that wants it."""
    from onnx import shape_inference

    infer = getattr(getattr(shape_inference, "C", None), "infer_shapes", None)
    if infer is None:  # (another onnx: its public function, which parses the result)
        return shape_inference.infer_shapes(data, check_type=False, strict_mode=True).SerializeToString()
    return infer(data, False, True, False)  # (check_type, strict_mode, data_prop), as infer_shapes passes them


def _refusal(light: LightModel, text: str, pattern: re.Pattern) -> Refusal:
    for name in reversed(pattern.findall(text)):  # the innermost first
        place = light.place(name)
        if place is not None:
            return Refusal(" ".join(text.split()), place)
    return Refusal(" ".join(text.split()), None)


def _subgraphs(n: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for a in n.attribute:
        yield from ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs)


def _reads(n: onnx.NodeProto) -> set[str]:
    """What ``n`` reads: its inputs, and the names its subgraphs read from outside them."""
    out = {i for i in n.input if i}
    for g in _subgraphs(n):
        defined = {i.name for i in g.input} | {t.name for t in g.initializer} | {o for m in g.node for o in m.output}
        for m in g.node:
            out |= _reads(m) - defined
        out |= {o.name for o in g.output} - defined
    return out


def producers(model: onnx.ModelProto) -> dict[str, list[onnx.NodeProto]]:
    """Each value name with the nodes that produce it, in every graph (sibling scopes may
    reuse a name: both are kept)."""
    out: dict[str, list[onnx.NodeProto]] = {}

    def walk(g: onnx.GraphProto) -> None:
        for n in g.node:
            for o in n.output:
                if o:
                    out.setdefault(o, []).append(n)
            for sg in _subgraphs(n):
                walk(sg)
    walk(model.graph)
    return out


def upstream(model: onnx.ModelProto, node: onnx.NodeProto, depth: int) -> set[str]:
    """The values ``node`` produces and those it reads, back through ``depth`` producing nodes
    (by name, in every scope)."""
    made = producers(model)
    out = {o for o in node.output if o}
    frontier = _reads(node)
    for _ in range(depth):
        nxt: set[str] = set()
        for name in frontier - out:
            for p in made.get(name, ()):
                out.add(name)
                nxt |= _reads(p)
        frontier = nxt
        if not frontier:
            break
    return out

