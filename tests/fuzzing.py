"""A fuzzer for onnxsym: random valid graphs, checked against onnxruntime.

Each graph is built from random op steps over symbolic inputs (broadcasting,
shape-tensor arithmetic chains, reshapes with -1 and 0, slices with negative and
out-of-range bounds, pads to a multiple, pools and convs, ...). The generator
keeps its own idea of every tensor's shape only to pick operands that are likely
valid; onnxruntime is the judge: an assignment it refuses to run is skipped, and
every dim onnxsym infers is compared with the runtime's at every assignment that
runs. A failing graph is shrunk to a small reproducer and saved.

    python bench/fuzz.py --count 10000          # the long tier
"""

from __future__ import annotations

import os
import random
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from helpers import graph, model
from onnx import TensorProto, helper, numpy_helper

import onnxsym
from onnxsym import dims

F = TensorProto.FLOAT
I64 = TensorProto.INT64
SYMBOLS = ["batch", "seq", "h", "w"]
BIG = 2**63 - 1


@dataclass
class T:
    """A tensor of the graph being built; ``shape`` is the generator's guess."""

    name: str
    shape: tuple
    dtype: int = F


class Builder:
    """Accumulates nodes and constants; every step adds nodes through here."""

    def __init__(self, rng: random.Random, opset: int):
        self.rng = rng
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.tensors: list[T] = []
        self._n = 0

    def name(self, base: str) -> str:
        self._n += 1
        return f"{base}{self._n}"

    def node(self, op: str, inputs: list[str], n_out: int = 1, **attrs) -> list[str]:
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op + "_"), **attrs))
        return outs

    def const(self, values, dtype=np.int64) -> str:
        name = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(values, dtype=dtype), name))
        return name

    def add(self, name: str, shape, dtype=F) -> T:
        t = T(name, tuple(shape), dtype)
        self.tensors.append(t)
        return t

    def pick(self, pred: Callable[[T], bool] = lambda t: True) -> T | None:
        cands = [t for t in self.tensors if t.dtype == F and t.shape is not None and pred(t)]
        return self.rng.choice(cands) if cands else None

    def axes_input_or_attr(self, op: str, since: int, x: str, axes: list[int], **attrs) -> list[str]:
        """``op`` with its axes given as an input from opset ``since`` on, else as an attribute."""
        if self.opset >= since:
            return self.node(op, [x, self.const(axes)], **attrs)
        return self.node(op, [x], axes=axes, **attrs)

    # shape-tensor arithmetic: one dim of a tensor as a 1-element int64 tensor
    def dim_of(self, t: T, axis: int) -> str:
        (s,) = self.node("Shape", [t.name])
        (g,) = self.node("Gather", [s, self.const([axis])], axis=0)
        return g


def _is_static(d) -> bool:
    return isinstance(d, int)


# --------------------------------------------------------------------------- steps


def step_unary(b: Builder) -> None:
    x = b.pick()
    if x is None:
        return
    op = b.rng.choice(["Relu", "Sigmoid", "Neg", "Abs", "Tanh", "Softmax", "Identity"])
    attrs = {"axis": b.rng.randrange(-len(x.shape), len(x.shape))} if op == "Softmax" and x.shape else {}
    (y,) = b.node(op, [x.name], **attrs)
    b.add(y, x.shape)


def step_binary(b: Builder) -> None:
    x = b.pick()
    if x is None:
        return
    same = [t for t in b.tensors if t.dtype == F and t.shape == x.shape]
    r = b.rng.random()
    if r < 0.4 and same:
        other = b.rng.choice(same).name
    elif r < 0.7 and x.shape:
        # a reduced copy broadcasts back: 1s where it was reduced
        axes = sorted(b.rng.sample(range(len(x.shape)), b.rng.randint(1, len(x.shape))))
        other = b.axes_input_or_attr("ReduceMean", 18, x.name, axes, keepdims=1)[0]
    elif x.shape and _is_static(x.shape[-1]):
        other = b.const(np.ones([x.shape[-1]]), np.float32)  # a bias over the last axis
    else:
        other = b.const(np.ones([1] * b.rng.randint(0, len(x.shape) + 1)), np.float32)
    op = b.rng.choice(["Add", "Mul", "Sub", "Max", "Min", "Div", "Where"])
    a, c = (x.name, other) if b.rng.random() < 0.5 else (other, x.name)
    if op == "Where":
        (cond,) = b.node("Greater", [a, c])
        (y,) = b.node("Where", [cond, a, c])
    else:
        (y,) = b.node(op, [a, c])
    b.add(y, x.shape)


def step_transpose(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 2)
    if x is None:
        return
    perm = list(range(len(x.shape)))
    b.rng.shuffle(perm)
    (y,) = b.node("Transpose", [x.name], perm=perm)
    b.add(y, tuple(x.shape[p] for p in perm))


def step_unsqueeze_squeeze(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) <= 4)
    if x is None:
        return
    axis = b.rng.randint(0, len(x.shape))
    (u,) = b.axes_input_or_attr("Unsqueeze", 13, x.name, [axis])
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    b.add(u, shape)
    if b.rng.random() < 0.5:
        (s,) = b.axes_input_or_attr("Squeeze", 13, u, [axis - len(shape) if b.rng.random() < 0.5 else axis])
        b.add(s, x.shape)


def step_reduce(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axes = sorted(b.rng.sample(range(len(x.shape)), b.rng.randint(1, len(x.shape))))
    keep = b.rng.randint(0, 1)
    op = b.rng.choice(["ReduceSum", "ReduceMean", "ReduceMax"])
    (y,) = b.axes_input_or_attr(op, 13 if op == "ReduceSum" else 18, x.name, axes, keepdims=keep)
    shape = tuple((1 if keep else None) if i in axes else d for i, d in enumerate(x.shape))
    b.add(y, tuple(d for d in shape if d is not None))


def step_concat_split(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axis = b.rng.randrange(len(x.shape))
    (y,) = b.node("Concat", [x.name, x.name], axis=axis - len(x.shape) * b.rng.randint(0, 1))
    shape = list(x.shape)
    shape[axis] = shape[axis] * 2
    b.add(y, shape)
    if b.rng.random() < 0.6:
        if b.opset >= 18 and b.rng.random() < 0.5:
            k = b.rng.randint(2, 3)
            outs = b.node("Split", [y], n_out=k, axis=axis, num_outputs=k)
            for o in outs:  # uneven pieces: the generator does not track them
                b.add(o, None)
        else:
            outs = b.node("Split", [y], n_out=2, axis=axis)
            for o in outs:
                b.add(o, x.shape)


def step_reshape(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 2)
    if x is None:
        return
    r = len(x.shape)
    kind = b.rng.choice(["merge_last", "zero_minus", "split_static", "flatten"])
    if kind == "merge_last":
        # shape computed in the graph: [d0, ..., d(r-3), d(r-2)*d(r-1)]
        (s,) = b.node("Shape", [x.name])
        (head,) = b.node("Slice", [s, b.const([0]), b.const([r - 2])])
        (tail,) = b.node("Slice", [s, b.const([r - 2]), b.const([BIG])])
        (prod,) = b.axes_input_or_attr("ReduceProd", 18, tail, [0], keepdims=1)
        (target,) = b.node("Concat", [head, prod], axis=0)
        (y,) = b.node("Reshape", [x.name, target])
        b.add(y, x.shape[:-2] + (x.shape[-2] * x.shape[-1],))
    elif kind == "zero_minus":
        keep = b.rng.randint(1, r - 1)
        (y,) = b.node("Reshape", [x.name, b.const([0] * keep + [-1])])
        rest = 1
        for d in x.shape[keep:]:
            rest = rest * d
        b.add(y, x.shape[:keep] + (rest,))
    elif kind == "split_static":
        axis = next((i for i, d in enumerate(x.shape) if _is_static(d) and d % 2 == 0 and d > 0), None)
        if axis is None:
            return
        target = [0] * axis + [2, -1]
        tail = x.shape[axis + 1:]
        (y,) = b.node("Reshape", [x.name, b.const(target)])
        rest = x.shape[axis] // 2
        for d in tail:
            rest = rest * d
        b.add(y, x.shape[:axis] + (2, rest))
    else:
        axis = b.rng.randint(0, r)
        (y,) = b.node("Flatten", [x.name], axis=axis)
        b.add(y, None)


def _slice_bound(rng: random.Random) -> int:
    return rng.choice([0, 1, 2, -1, -2, -3, 5, 100, -100, BIG, -BIG - 1])


def step_slice(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axis = b.rng.randrange(len(x.shape))
    step = b.rng.choice([1, 1, 2, -1, -2, 3])
    if b.rng.random() < 0.3:
        # the end computed from the shape: d - k
        d = b.dim_of(x, axis)
        (end,) = b.node("Sub", [d, b.const([b.rng.randint(0, 3)])])
        start = b.const([b.rng.choice([0, 1])])
        step = 1
    else:
        start, end = b.const([_slice_bound(b.rng)]), b.const([_slice_bound(b.rng)])
    (y,) = b.node("Slice", [x.name, start, end, b.const([axis - len(x.shape) * b.rng.randint(0, 1)]),
                            b.const([step])])
    b.add(y, None)


def step_pad(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    r = len(x.shape)
    if b.rng.random() < 0.5:
        # pad the last axis up to a multiple of k: (k - n % k) % k, computed in the graph
        k = b.rng.choice([2, 3, 4, 8])
        n = b.dim_of(x, r - 1)
        kc = b.const([k])
        (m,) = b.node("Mod", [n, kc])
        (d,) = b.node("Sub", [kc, m])
        (p,) = b.node("Mod", [d, kc])
        pads = b.node("Concat", [b.const([0] * (2 * r - 1)), p], axis=0)[0]
    else:
        pads = b.const([b.rng.randint(0, 2) for _ in range(2 * r)])
    (y,) = b.node("Pad", [x.name, pads], mode=b.rng.choice(["constant", "edge"]))
    b.add(y, None)


def step_expand_tile(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    if b.rng.random() < 0.5:
        axes = [i for i in range(len(x.shape)) if b.rng.random() < 0.5] or [0]
        (red,) = b.axes_input_or_attr("ReduceMax", 18, x.name, axes, keepdims=1)
        (s,) = b.node("Shape", [x.name])
        (y,) = b.node("Expand", [red, s])
        b.add(y, x.shape)
    else:
        reps = [b.rng.randint(1, 3) for _ in x.shape]
        (y,) = b.node("Tile", [x.name, b.const(reps)])
        b.add(y, tuple(d * k for d, k in zip(x.shape, reps)))


def step_gather(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axis = b.rng.randrange(len(x.shape))
    idx = b.const(b.rng.choice([[0], 0, [0, 0], [-1], [[0, -1]]]))
    (y,) = b.node("Gather", [x.name, idx], axis=axis)
    b.add(y, None)


def step_matmul(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 2)
    if x is None:
        return
    if _is_static(x.shape[-1]) and b.rng.random() < 0.5:
        n = b.rng.randint(1, 5)
        w = b.const(np.ones([x.shape[-1], n]), np.float32)
        (y,) = b.node("MatMul", [x.name, w])
        b.add(y, x.shape[:-1] + (n,))
    else:
        perm = list(range(len(x.shape)))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        (xt,) = b.node("Transpose", [x.name], perm=perm)
        (y,) = b.node("MatMul", [x.name, xt])
        b.add(y, x.shape[:-1] + (x.shape[-2],))


def step_range(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axis = b.rng.randrange(len(x.shape))
    (d,) = b.node("Squeeze", [b.dim_of(x, axis), b.const([0])])
    start = b.rng.choice([0, 1, 3])
    delta = b.rng.choice([1, 2, 3])
    (r,) = b.node("Range", [b.const(start), d, b.const(delta)])
    (f,) = b.node("Cast", [r], to=F)
    b.add(f, None)
    if b.rng.random() < 0.5:
        (c,) = b.node("ConstantOfShape", [b.node("Shape", [x.name])[0]],
                      value=numpy_helper.from_array(np.array([1.0], np.float32)))
        b.add(c, x.shape)


def step_pool_conv(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) == 4 and _is_static(t.shape[1]))
    if x is None:
        return
    k = b.rng.randint(1, 3)
    s = b.rng.randint(1, 2)
    attrs = {"kernel_shape": [k, k], "strides": [s, s]}
    auto = b.rng.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
    if auto == "NOTSET":
        attrs["pads"] = [b.rng.randint(0, k - 1) for _ in range(4)]
    else:
        attrs["auto_pad"] = auto
    op = b.rng.choice(["MaxPool", "AveragePool", "Conv"])
    if op == "Conv":
        if auto == "NOTSET" or b.rng.random() < 0.5:
            attrs["dilations"] = [b.rng.randint(1, 2)] * 2
        c = x.shape[1]
        m = b.rng.randint(1, 3)
        w = b.const(np.ones([m, c, k, k]), np.float32)
        (y,) = b.node("Conv", [x.name, w], **attrs)
    else:
        if auto == "NOTSET" and b.rng.random() < 0.5:
            attrs["ceil_mode"] = 1
        (y,) = b.node(op, [x.name], **attrs)
    b.add(y, None)


def step_resize(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) == 4)
    if x is None:
        return
    sc = b.rng.choice([2.0, 0.5, 3.0, 1.0])
    scales = b.const([1.0, 1.0, sc, sc], np.float32)
    (y,) = b.node("Resize", [x.name, "", scales], mode="nearest")
    b.add(y, None)


def step_broadcast_pair(b: Builder) -> None:
    """Two tensors of one rank with different dims: valid where they broadcast (a 1, or equal
    sizes), which onnxsym must express honestly (max, or a recorded constraint)."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    y = b.pick(lambda t: x is not None and len(t.shape) == len(x.shape) and t.name != x.name)
    if x is None or y is None:
        return
    op = b.rng.choice(["Add", "Mul", "Max"])
    (z,) = b.node(op, [x.name, y.name])
    b.add(z, None)


def step_depth_space(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) == 4 and _is_static(t.shape[1]))
    if x is None:
        return
    k = 2
    (s2d,) = b.node("SpaceToDepth", [x.name], blocksize=k)
    b.add(s2d, None)
    if b.rng.random() < 0.6:
        (d2s,) = b.node("DepthToSpace", [s2d], blocksize=k, mode=b.rng.choice(["DCR", "CRD"]))
        b.add(d2s, None)


def step_topk_sort(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axis = b.rng.randrange(len(x.shape))
    if b.rng.random() < 0.5:
        k = b.const([1])
    else:  # k computed in the graph: min(2, d) from the shape
        k = b.node("Min", [b.dim_of(x, axis), b.const([2])])[0]
    vals, idx = b.node("TopK", [x.name, k], n_out=2, axis=axis)
    b.add(vals, None)
    (idx_f,) = b.node("Cast", [idx], to=F)
    b.add(idx_f, None)


def step_einsum(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) == 3)
    if x is None:
        return
    eq = b.rng.choice(["bij,bkj->bik", "bij->bji", "bij,bij->bi", "bij->j"])
    operands = [x.name] * eq.split("->")[0].count(",") + [x.name]
    (y,) = b.node("Einsum", operands, equation=eq)
    b.add(y, None)


def step_split_sizes(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axis = b.rng.randrange(len(x.shape))
    # sizes computed in the graph: [1, d - 1]
    d = b.dim_of(x, axis)
    (rest,) = b.node("Sub", [d, b.const([1])])
    (sizes,) = b.node("Concat", [b.const([1]), rest], axis=0)
    if b.opset >= 13:
        outs = b.node("Split", [x.name, sizes], n_out=2, axis=axis)
    else:
        return
    for o in outs:
        b.add(o, None)


def step_cumsum_gather_elements(b: Builder) -> None:
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axis = b.rng.randrange(len(x.shape))
    (c,) = b.node("CumSum", [x.name, b.const(axis)])
    b.add(c, x.shape)
    (idx,) = b.node("Cast", [b.node("Mul", [c, b.const(0.0, np.float32)])[0]], to=I64)
    (g,) = b.node("GatherElements", [x.name, idx], axis=axis)
    b.add(g, x.shape)


def step_nonzero(b: Builder) -> None:
    """A data-dependent count: onnxsym must give a fresh symbol, never a number it cannot know."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    (nz,) = b.node("NonZero", [b.node("Greater", [x.name, b.const(0.0, np.float32)])[0]])
    (f,) = b.node("Cast", [nz], to=F)
    b.add(f, None)


# --------------------------------------------------------------------------- edges: 0, 1 and -1 (issue 17)


def _scalar_dim(b: Builder, t: T, axis: int) -> str:
    """Dim ``axis`` of ``t`` as an int64 scalar."""
    (s,) = b.node("Shape", [t.name])
    (g,) = b.node("Gather", [s, b.const(axis)], axis=0)
    return g


def _branch(b: Builder, nodes_before: int, out: str, name: str) -> onnx.GraphProto:
    """The nodes added since ``nodes_before`` moved into a subgraph whose output is ``out``."""
    body = b.nodes[nodes_before:]
    del b.nodes[nodes_before:]
    return graph(body, [], [out], name=b.name(name))


def _two_branches(b: Builder, x: T, cond: str, same_shape: bool) -> str:
    """An If on ``cond``: one branch keeps ``x``'s shape, the other doubles an axis
    (or, ``same_shape``, computes another value of the same shape)."""
    mark = len(b.nodes)
    (t,) = b.node("Relu", [x.name])
    then_g = _branch(b, mark, t, "then")
    axis = b.rng.randrange(len(x.shape))
    (e,) = b.node("Neg", [x.name]) if same_shape else b.node("Concat", [x.name, x.name], axis=axis)
    else_g = _branch(b, mark, e, "else")
    (y,) = b.node("If", [cond], then_branch=then_g, else_branch=else_g)
    return y


def step_if_shape_condition(b: Builder) -> None:
    """An If on a condition computed from a shape (``d > k``, ``d == 1``): decided only where
    the ranges decide it, and then recorded when only the default range (>= 1) does."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    d = _scalar_dim(b, x, b.rng.randrange(len(x.shape)))
    op, k = b.rng.choice([("Greater", 0), ("Greater", 1), ("Equal", 1), ("Equal", 0), ("Less", 2)])
    (cond,) = b.node(op, [d, b.const(k)])
    if b.rng.random() < 0.3:
        (cond,) = b.node("Not", [cond])
    b.add(_two_branches(b, x, cond, same_shape=False), None)


def step_where_shape_condition(b: Builder) -> None:
    """A Where picking between shape values on a shape condition, used as a size."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    d = _scalar_dim(b, x, b.rng.randrange(len(x.shape)))
    (cond,) = b.node("Greater", [d, b.const(b.rng.choice([0, 1, 2]))])
    (big,) = b.node("Add", [d, b.const(b.rng.randint(1, 3))])
    (n,) = b.node("Where", [cond, big, b.const(b.rng.choice([1, 2]))])
    (n1,) = b.node("Unsqueeze", [n, b.const([0])])
    (c,) = b.node("ConstantOfShape", [n1], value=numpy_helper.from_array(np.array([1.0], np.float32)))
    b.add(c, None)


def step_if_on_data(b: Builder) -> None:
    """An If on tensor data (is the sum positive?), sometimes nested: the dims on which the
    branches agree keep their value, the others get a fresh symbol."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    (s,) = b.node("ReduceSum", [x.name], keepdims=0)  # no axes: every axis
    (cond,) = b.node("Greater", [s, b.const(0.0, np.float32)])
    if b.rng.random() < 0.4:  # nested: the inner If on the data too, inside the then branch
        mark = len(b.nodes)
        (inner_cond,) = b.node("Less", [s, b.const(1e9, np.float32)])
        inner = _two_branches(b, x, inner_cond, same_shape=b.rng.random() < 0.5)
        then_g = _branch(b, mark, inner, "then")
        mark = len(b.nodes)
        (e,) = b.node("Sigmoid", [x.name])
        else_g = _branch(b, mark, e, "else")
        (y,) = b.node("If", [cond], then_branch=then_g, else_branch=else_g)
    else:
        y = _two_branches(b, x, cond, same_shape=b.rng.random() < 0.5)
    b.add(y, None)


def step_loop_edges(b: Builder) -> None:
    """A Loop that may run no iteration: its trip count a dim minus 0..2 (or 0), its initial
    condition true, false or computed from a dim; its scan output stacks a tensor."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    d = _scalar_dim(b, x, b.rng.randrange(len(x.shape)))
    kind = b.rng.choice(["dim", "dim", "zero", "none"])
    if kind == "dim":
        (m,) = b.node("Sub", [d, b.const(b.rng.randint(0, 2))])
    elif kind == "zero":
        m = b.const(0)
    else:
        m = ""
    c = b.rng.choice(["true", "false", "computed"])
    if c == "computed":
        (cond,) = b.node("Greater", [d, b.const(b.rng.choice([0, 1, 2]))])
    else:
        cond = b.const(c == "true", np.bool_)
    if m == "" and c != "false":
        return  # no trip count and a condition that stays true: the loop would not end
    i, c_in, c_out, y = (b.name(n) for n in ("i", "cond_in", "cond_out", "scan_y"))
    body = graph([helper.make_node("Identity", [c_in], [c_out]), helper.make_node("Relu", [x.name], [y])],
                 [(i, I64, []), (c_in, TensorProto.BOOL, [])], [(c_out, TensorProto.BOOL, []), y], name=b.name("body"))
    (ys,) = b.node("Loop", [m, cond], body=body)
    b.add(ys, None)


def step_reshape_computed(b: Builder) -> None:
    """A Reshape whose target elements are computed from shapes and may be 0 (copy the input's
    dim) or -1 (infer) at some sizes: ``[d - k, -1]``, ``[d0, dk - k2, ...]``."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    r = len(x.shape)
    axis = b.rng.randrange(r)
    (s,) = b.node("Shape", [x.name])
    (g,) = b.node("Gather", [s, b.const([axis])], axis=0)
    (e,) = b.node("Sub", [g, b.const([b.rng.randint(0, 2)])])
    kind = b.rng.choice(["minus", "copy", "all"])
    if kind == "minus":
        parts = [e, b.const([-1])]
    elif kind == "copy":
        parts = [b.node("Slice", [s, b.const([0]), b.const([axis])])[0], e,
                 b.node("Slice", [s, b.const([axis + 1]), b.const([BIG])])[0]]
    else:
        parts = [e] + [b.const([0])] * b.rng.randint(0, r - 1)
    (target,) = b.node("Concat", parts, axis=0)
    (y,) = b.node("Reshape", [x.name, target])
    b.add(y, None)


def step_if_rank_on_shape(b: Builder) -> None:
    """torch's squeeze(1) of a dynamic dim: If(d_1 == 1, Squeeze, Identity), rank 2 or 3. Half the
    time an LSTM after it (through Unsqueeze(0)) runs with the squeezed rank only, which decides
    the If (onnxsym.facts.branching); else nothing decides and the rank stays unknown."""
    x = b.pick(lambda t: len(t.shape) == 3 and _is_static(t.shape[2]))  # the LSTM's input size
    if x is None:
        return
    (cond,) = b.node("Equal", [_scalar_dim(b, x, 1), b.const(1)])
    mark = len(b.nodes)
    (squeezed,) = b.axes_input_or_attr("Squeeze", 13, x.name, [1])
    then_g = _branch(b, mark, squeezed, "then")
    mark = len(b.nodes)
    (same,) = b.node("Identity", [x.name])
    else_g = _branch(b, mark, same, "else")
    (y,) = b.node("If", [cond], then_branch=then_g, else_branch=else_g)
    if b.rng.random() < 0.5:
        return
    (x3,) = b.axes_input_or_attr("Unsqueeze", 13, y, [0])
    hidden = 2
    w = b.const(np.ones([1, 4 * hidden, x.shape[2]]), np.float32)
    r = b.const(np.ones([1, 4 * hidden, hidden]), np.float32)
    (_, y_h) = b.node("LSTM", [x3, w, r], n_out=2, hidden_size=hidden)
    b.add(y_h, (1, x.shape[0], hidden))


EDGE_STEPS = [step_if_shape_condition, step_where_shape_condition, step_if_on_data, step_loop_edges,
              step_reshape_computed]


# --------------------------------------------------------------------------- integer semantics
# (issue 12, item 4) shape values computed in narrow integer types, truncating Div and both
# Mods on values of either sign, and window lengths a graph computes before its Conv or pool.
# Each ends in a ConstantOfShape: the element becomes a dim, which verify compares.

_NARROW = [TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16, TensorProto.INT32,
           TensorProto.UINT32, TensorProto.UINT64]


def _as_dim(b: Builder, v: str, small: bool = False) -> None:
    """An int64 [1] value ``v`` (of either sign) made a dim: ``|v|``, or ``v mod 13`` (one of
    them when ``small``, since |v| of a wrapped value may be huge), as a ConstantOfShape's."""
    if small or b.rng.random() < 0.5:
        (v,) = b.node("Mod", [v, b.const([13])])
    else:
        (v,) = b.node("Abs", [v])
    b.node("ConstantOfShape", [v], value=numpy_helper.from_array(np.array([1.0], np.float32)))


def step_shape_div_mod(b: Builder) -> None:
    """``(d - k) op c`` for a dim d: Div, Mod (fmod 0 or 1) by a divisor of either sign,
    then one of Neg, Abs, Sign, Clip, Min, Max."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    d = b.dim_of(x, b.rng.randrange(len(x.shape)))
    (v,) = b.node("Sub", [d, b.const([b.rng.randint(-3, 8)])])
    op = b.rng.choice(["Div", "Div", "Mod", "fmod"])
    c = b.const([b.rng.choice([-3, -2, 2, 3, 4])])
    (v,) = b.node("Mod", [v, c], fmod=1) if op == "fmod" else b.node(op, [v, c])
    after = b.rng.choice(["", "Neg", "Abs", "Sign", "Clip", "Min", "Max"])
    if after == "Clip":
        (v,) = b.node("Clip", [v, b.const(b.rng.randint(-2, 0)), b.const(b.rng.randint(1, 4))])
    elif after in ("Min", "Max"):
        (v,) = b.node(after, [v, b.const([b.rng.randint(-2, 3)])])
    elif after:
        (v,) = b.node(after, [v])
    _as_dim(b, v)


def step_narrow_int(b: Builder) -> None:
    """A dim cast to a narrow integer type, an arithmetic step there that may wrap, cast back."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    dtype = b.rng.choice(_NARROW)
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    (v,) = b.node("Cast", [b.dim_of(x, b.rng.randrange(len(x.shape)))], to=dtype)
    op = b.rng.choice(["Add", "Sub", "Mul", "Div"])
    k = {"Add": [1, 120, 250], "Sub": [1, 5, 9], "Mul": [3, 50, 2**15], "Div": [2, 3]}[op]
    c = b.const(np.array([b.rng.choice(k)]).astype(np_type), np_type)  # (wrapped to the type)
    (v,) = b.node(op, [v, c] if b.rng.random() < 0.8 else [c, v])
    (v,) = b.node("Cast", [v], to=I64)
    _as_dim(b, v, small=True)


def step_computed_window_len(b: Builder) -> None:
    """The output length of a Conv or pool computed in the graph, with a truncating Div, before
    the node itself: its numerator is negative at sizes where the node cannot run."""
    x = b.pick(lambda t: len(t.shape) == 4 and _is_static(t.shape[1]))
    if x is None:
        return
    k, s = b.rng.randint(2, 5), b.rng.randint(1, 3)
    p0, p1 = b.rng.randint(0, 1), b.rng.randint(0, 1)
    (n,) = b.node("Sub", [b.dim_of(x, 3), b.const([k - p0 - p1])])
    (q,) = b.node("Div", [n, b.const([s])])
    (length,) = b.node("Add", [q, b.const([1])])
    b.node("ConstantOfShape", [length], value=numpy_helper.from_array(np.array([1.0], np.float32)))
    attrs = {"kernel_shape": [1, k], "strides": [1, s], "pads": [0, p0, 0, p1]}
    if b.rng.random() < 0.5:
        b.node("Conv", [x.name, b.const(np.ones([2, x.shape[1], 1, k]), np.float32)], **attrs)
    else:
        b.node(b.rng.choice(["MaxPool", "AveragePool"]), [x.name], **attrs)


INT_STEPS = [step_shape_div_mod, step_narrow_int, step_computed_window_len]


# --------------------------------------------------------------------------- loops and float sizes
# (issue 12) a while loop whose condition may or may not end it before M, with a carried
# counter; sizes computed in float32 (ceil(d / p), floor(d * 0.5)).


def step_while_loop(b: Builder) -> None:
    """A Loop as tf2onnx writes a while loop: M a dim (or one less), a counter carried from 0
    or 1 by 1 or 2 (int64 or int32), the condition ``i < d and counter + k < d + e`` (compared
    in float or in integers) that may end the loop early or not; the scan output stacks a
    tensor, and the counter's last value becomes a dim."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    d = _scalar_dim(b, x, b.rng.randrange(len(x.shape)))
    m = d if b.rng.random() < 0.6 else b.node("Sub", [d, b.const(1)])[0]
    ctype = b.rng.choice([I64, TensorProto.INT32])
    np_type = helper.tensor_dtype_to_np_dtype(ctype)
    (d_c,) = b.node("Cast", [d], to=ctype)
    (limit,) = b.node("Add", [d_c, b.const(np.array(b.rng.choice([-1, 0, 0, 1]), np_type), np_type)])
    t0 = b.const(np.array(b.rng.choice([0, 0, 1]), np_type), np_type)
    via_float = b.rng.random() < 0.5
    mark = len(b.nodes)
    i, c_in, t_in, y = (b.name(n) for n in ("i", "cond_in", "t_in", "scan_y"))
    (t_next,) = b.node("Add", [t_in, b.const(np.array(b.rng.choice([1, 1, 2]), np_type), np_type)])
    (probe,) = b.node("Add", [t_next, b.const(np.array(b.rng.choice([-1, 0, 0, 1]), np_type), np_type)])
    (i_c,) = b.node("Cast", [i], to=ctype)
    sides = [[i_c, d_c], [probe, limit]]
    if via_float:
        sides = [[b.node("Cast", [v], to=F)[0] for v in pair] for pair in sides]
    (first,) = b.node("Less", sides[0])
    (second,) = b.node("Less", sides[1])
    (c_out,) = b.node("And", [first, second]) if b.rng.random() < 0.7 else (second,)
    b.node("Relu", [x.name])
    body_nodes = b.nodes[mark:]
    del b.nodes[mark:]
    body_nodes[-1].output[0] = y
    body = helper.make_graph(
        body_nodes, b.name("body"),
        [helper.make_tensor_value_info(i, I64, []), helper.make_tensor_value_info(c_in, TensorProto.BOOL, []),
         helper.make_tensor_value_info(t_in, ctype, [])],
        [helper.make_tensor_value_info(c_out, TensorProto.BOOL, []), helper.make_tensor_value_info(t_next, ctype, []),
         helper.make_empty_tensor_value_info(y)])
    go = b.const(True, np.bool_) if b.rng.random() < 0.7 else b.node("Greater", [d, b.const(1)])[0]
    t_out, ys = b.node("Loop", [m, go, t0], n_out=2, body=body)
    b.add(ys, None)
    (t64,) = b.node("Cast", [t_out], to=I64)
    _as_dim(b, b.node("Unsqueeze", [t64, b.const([0])])[0], small=True)


def step_float_size(b: Builder) -> None:
    """A size computed in float32: ``float(d) / c`` (c 2.0, 3.0 or another dim) or
    ``float(d) * c`` (0.5, 1.5, 0.7), then Ceil, Floor or nothing, maybe times 2.0, cast back
    to int64 and made a dim."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    (f,) = b.node("Cast", [b.dim_of(x, b.rng.randrange(len(x.shape)))], to=F)
    kind = b.rng.choice(["div", "div", "div_dim", "mul"])
    if kind == "div_dim":
        (p,) = b.node("Cast", [b.dim_of(x, b.rng.randrange(len(x.shape)))], to=F)
        (q,) = b.node("Div", [f, p])
    else:
        c = b.rng.choice([2.0, 3.0, 4.0] if kind == "div" else [0.5, 1.5, 0.25, 0.7])
        (q,) = b.node("Div" if kind == "div" else "Mul", [f, b.const(np.array([c], np.float32), np.float32)])
    rnd = b.rng.choice(["Ceil", "Floor", ""])
    if rnd:
        (q,) = b.node(rnd, [q])
        if b.rng.random() < 0.4:
            (q,) = b.node("Mul", [q, b.const(np.array([2.0], np.float32), np.float32)])
    (v,) = b.node("Cast", [q], to=I64)
    _as_dim(b, v)


LOOP_FLOAT_STEPS = [step_while_loop, step_float_size]


# --------------------------------------------------------------------------- trust (issue 21)
# Float Range, narrow-int shape values as Slice and Reshape arguments, If branches that carry
# conditions of their own, and declarations that contradict the graph. These run in a phase
# of their own after the steps above, from a generator of their own, so that a seed's graph
# up to there (and the distribution of the steps above) is what it was.


def step_float_range(b: Builder) -> None:
    """A Range in float32 or float64 (onnxruntime adds ``delta`` in the tensor's type):
    up to a dim by a positive delta, down from it by a negative one, or over constants;
    its length is a dim, and its elements, scaled, rounded up and summed, a size."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    dtype = b.rng.choice([F, TensorProto.DOUBLE])
    np_type = helper.tensor_dtype_to_np_dtype(dtype)

    def scalar(v: float) -> str:
        return b.const(np.array(v, np_type), np_type)

    (d,) = b.node("Cast", [b.node("Squeeze", [b.dim_of(x, b.rng.randrange(len(x.shape))), b.const([0])])[0]], to=dtype)
    if b.rng.random() < 0.5:
        (d,) = b.node("Mul", [d, scalar(b.rng.choice([0.5, 1.0, 1.5, 0.3]))])
    kind = b.rng.choice(["up", "up", "down", "const"])
    if kind == "up":
        parts = [scalar(b.rng.choice([0.0, 0.5, 1.0, -1.0])), d, scalar(b.rng.choice([0.1, 0.3, 0.5, 1.0, 1.5]))]
    elif kind == "down":
        parts = [d, scalar(b.rng.choice([0.0, -1.0, 0.5])), scalar(-b.rng.choice([0.1, 0.3, 0.5, 1.0, 2.5]))]
    else:
        parts = [scalar(0.0), scalar(b.rng.choice([1.0, 2.0, 0.7])), scalar(b.rng.choice([0.1, 0.2, 0.3]))]
    (r,) = b.node("Range", parts)
    use = b.rng.choice(["sum", "sum", "length", "last"])
    if use == "length":
        (c,) = b.node("ConstantOfShape", [b.node("Shape", [r])[0]],
                      value=numpy_helper.from_array(np.array([1.0], np.float32)))
        b.add(c, None)
        return
    if use == "last":
        (r,) = b.node("Slice", [r, b.const([-1]), b.const([BIG])])
    (v,) = b.node("Mul", [r, b.const(np.array([b.rng.choice([1.0, 5.0, 3.0, 10.0])], np_type), np_type)])
    (v,) = b.node(b.rng.choice(["Ceil", "Floor"]), [v])
    (v,) = b.node("Cast", [v], to=I64)
    (v,) = b.node("ReduceSum", [v], keepdims=1)  # no axes: every axis, a [1] tensor (0 when empty)
    _as_dim(b, v)


_NARROW_ARGS = [TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.UINT8]


def step_narrow_int_args(b: Builder) -> None:
    """A dim cast to int8/int16/int32/uint8, Mul/Add/Div there (wrapping), cast back to int64
    and used as a Slice start or end or a Reshape target element."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    axis = b.rng.randrange(len(x.shape))
    dtype = b.rng.choice(_NARROW_ARGS)
    if b.opset < 14 and dtype != TensorProto.INT32:
        dtype = TensorProto.INT32  # (8- and 16-bit Add, Mul and Div are from opset 14 on)
    np_type = helper.tensor_dtype_to_np_dtype(dtype)

    def c(k: int) -> str:
        return b.const(np.array([k]).astype(np_type), np_type)  # (wrapped to the type)

    (v,) = b.node("Cast", [b.dim_of(x, axis)], to=dtype)
    op = b.rng.choice(["Mul", "Add", "Div", "MulDiv"])
    if op == "MulDiv":  # d * 2**k / 2**k: d where it does not wrap
        k = 2 ** b.rng.choice({TensorProto.INT32: [20, 24], TensorProto.INT16: [8, 12]}.get(dtype, [4, 6]))
        (v,) = b.node("Div", [b.node("Mul", [v, c(k)])[0], c(k)])
    else:
        k = b.rng.choice({"Mul": [2, 3, 100], "Add": [1, 3, 120, 250], "Div": [2, 3]}[op])
        (v,) = b.node(op, [v, c(k)])
    (v,) = b.node("Cast", [v], to=I64)
    use = b.rng.choice(["start", "end"] + (["reshape"] * 2 if op == "MulDiv" else []))
    if use == "reshape":  # [d, -1] where the product did not wrap (else rarely valid)
        (y,) = b.node("Reshape", [x.name, b.node("Concat", [v, b.const([-1])], axis=0)[0]])
    elif use == "start":
        (y,) = b.node("Slice", [x.name, v, b.const([BIG]), b.const([axis])])
    else:
        (y,) = b.node("Slice", [x.name, b.const([0]), v, b.const([axis])])
    b.add(y, None)


def _conditioned(b: Builder, x: T, kind: str) -> str | None:
    """A node on ``x`` that onnxruntime runs only at some sizes: its output, or None."""
    r = len(x.shape)
    axis = b.rng.randrange(r)
    if kind == "reshape2":  # an even element count
        return b.node("Reshape", [x.name, b.const([2, -1])])[0]
    if kind == "pad_neg":  # the last dim >= 2
        return b.node("Pad", [x.name, b.const([0] * (2 * r - 1) + [-2])])[0]
    if kind == "topk":  # the axis >= 3
        return b.node("TopK", [x.name, b.const([3])], n_out=2, axis=axis)[0]
    if kind == "cos":  # the axis >= 5
        d = b.dim_of(x, axis)
        return b.node("ConstantOfShape", [b.node("Sub", [d, b.const([5])])[0]],
                      value=numpy_helper.from_array(np.array([1.0], np.float32)))[0]
    if kind == "squeeze":  # the axis == 1
        return b.axes_input_or_attr("Squeeze", 13, x.name, [axis])[0]
    if kind == "conv" and r == 4 and _is_static(x.shape[1]):  # h, w >= 3
        return b.node("Conv", [x.name, b.const(np.ones([1, x.shape[1], 3, 3]), np.float32)])[0]
    if kind == "s2d" and r == 4 and _is_static(x.shape[1]):  # h, w even
        return b.node("SpaceToDepth", [x.name], blocksize=2)[0]
    return None


_CONDITIONED = ["reshape2", "pad_neg", "topk", "cos", "squeeze", "conv", "s2d"]


def step_if_branch_condition(b: Builder) -> None:
    """An If whose branches need sizes of their own (an even count, a dim >= 3, ...): on a
    data condition, which the sizes do not decide, so a branch's need holds only where it
    is taken; or on a shape condition that guards the need (``d >= 5`` before
    ``ConstantOfShape(d - 5)``), so the model runs at every size."""
    x = b.pick(lambda t: len(t.shape) >= 1)
    if x is None:
        return
    symbolic = [i for i, d in enumerate(x.shape) if not _is_static(d)]
    if symbolic and b.rng.random() < 0.3:
        # (on a symbolic dim: where onnxruntime sees a static one, it rejects the model for the
        # dead branch's negative ConstantOfShape when it loads it)
        axis = b.rng.choice(symbolic)
        (cond,) = b.node("GreaterOrEqual" if b.opset >= 12 else "Greater", [_scalar_dim(b, x, axis), b.const(5)])
        mark = len(b.nodes)
        (d,) = b.node("Sub", [b.dim_of(x, axis), b.const([5])])
        (t,) = b.node("ConstantOfShape", [d], value=numpy_helper.from_array(np.array([1.0], np.float32)))
        then_g = _branch(b, mark, t, "then")
        mark = len(b.nodes)
        (e,) = b.node("ConstantOfShape", [b.const([1])], value=numpy_helper.from_array(np.array([1.0], np.float32)))
        else_g = _branch(b, mark, e, "else")
    else:
        (s,) = b.node("ReduceSum", [x.name], keepdims=0)
        (cond,) = b.node("Greater", [s, b.const(0.0, np.float32)])
        outs = []
        conditioned = b.rng.randrange(2)  # one branch needs sizes of its own; the other too, at times
        for k, name in enumerate(("then", "else")):
            mark = len(b.nodes)
            kind = b.rng.choice(_CONDITIONED) if k == conditioned or b.rng.random() < 0.25 else "plain"
            out = _conditioned(b, x, kind) if kind != "plain" else None
            if out is None:
                (out,) = b.node("Neg", [x.name])
            outs.append(_branch(b, mark, out, name))
        then_g, else_g = outs
    (y,) = b.node("If", [cond], then_branch=then_g, else_branch=else_g)
    b.add(y, None)


TRUST_STEPS = [step_float_range, step_narrow_int_args, step_if_branch_condition]
TRUST_ZERO_STEPS = [step_float_range]  # (a Slice or If of an empty tensor: onnxruntime's kernels vary)


def _wrong_dim(rng: random.Random, real, names: list[str]):
    """A declared dim that may contradict ``real`` (the generator's guess, maybe None): a name of
    the model's own (shared across values, so that two declarations can contradict each other),
    an input symbol, a text over one, or a number."""
    kind = rng.choice(["name", "symbol", "text", "number", "real"])
    if kind == "real" and real is not None:
        return real if isinstance(real, int) else str(real)
    if kind == "name":
        return rng.choice(["n", "m", "total"])
    if kind == "symbol":
        return rng.choice(names)
    if kind == "text":
        return rng.choice([f"{rng.choice(names + ['n'])} + 1", f"{rng.choice(names + ['n'])} - 1",
                           f"2*{rng.choice(names)}", "n + 1"])
    return rng.randint(1, 9)


def declare_contradicting(rng: random.Random, m: onnx.ModelProto, tensors: list[T]) -> None:
    """Declare shapes on a few produced float values (value_info, or the graph output's type):
    wrong names, texts and numbers, sometimes another rank. Claims to check, never facts."""
    produced = {o for n in m.graph.node for o in n.output}
    known = [t for t in tensors if t.name in produced and t.dtype == F]
    if not known:
        return
    outputs = {o.name: o for o in m.graph.output}
    names = sorted({d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}) or ["n"]
    for t in rng.sample(known, min(len(known), rng.randint(1, 3))):
        rank = len(t.shape) if t.shape is not None and rng.random() < 0.8 else rng.randint(1, 3)
        shape = [_wrong_dim(rng, t.shape[i] if t.shape is not None and i < len(t.shape) else None, names)
                 for i in range(rank)]
        vi = helper.make_tensor_value_info(t.name, F, shape)
        if t.name in outputs:
            outputs[t.name].CopyFrom(vi)
        else:
            m.graph.value_info.append(vi)

STEPS = [step_unary, step_binary, step_binary, step_transpose, step_unsqueeze_squeeze, step_reduce,
         step_concat_split, step_reshape, step_reshape, step_slice, step_slice, step_pad, step_expand_tile,
         step_gather, step_matmul, step_range, step_pool_conv, step_resize, step_broadcast_pair,
         step_depth_space, step_topk_sort, step_einsum, step_split_sizes, step_cumsum_gather_elements,
         step_nonzero]
STEPS += INT_STEPS
STEPS += EDGE_STEPS
STEPS += [step_if_rank_on_shape]  # (not at size 0: an LSTM of an empty batch)
STEPS += LOOP_FLOAT_STEPS
# The steps whose kernels onnxruntime runs at size 0 without crashing the process (its Einsum,
# for one, dies of a floating point exception on an empty input).
ZERO_STEPS = [step_unary, step_binary, step_transpose, step_unsqueeze_squeeze, step_concat_split, step_reshape,
              step_slice, step_expand_tile, step_broadcast_pair] + EDGE_STEPS * 2


def zero_sizes(seed: int) -> bool:
    """Every fourth seed is checked at sizes that may be 0."""
    return seed % 4 == 1


def random_model(seed: int, max_steps: int = 8) -> onnx.ModelProto:
    """A random graph over symbolic inputs; valid in most assignments, not promised in all."""
    rng = random.Random(seed)
    opset = rng.choice([13, 17, 18])
    b = Builder(rng, opset)
    inputs = []
    for i in range(rng.randint(1, 2)):
        rank = rng.randint(1, 4)
        shape = [rng.choice(SYMBOLS[:3] + [2, 3, 4]) for _ in range(rank)]
        if rank == 4 and rng.random() < 0.7:
            shape = [rng.choice(["batch", 1]), rng.choice([1, 2, 3]), "h", "w"]
        name = f"x{i}"
        inputs.append(helper.make_tensor_value_info(name, F, shape))
        b.add(name, tuple(dims.sym(d) if isinstance(d, str) else d for d in shape))
    steps = ZERO_STEPS if zero_sizes(seed) else STEPS
    for _ in range(rng.randint(1, max_steps)):
        _step(rng.choice(steps), b)
    # the trust steps (issue 21), from a generator of their own: the graph up to here is unchanged
    b.rng = trust = random.Random(seed * 104729 + 3)
    for _ in range(trust.choice([0, 1, 1, 2])):
        _step(trust.choice(TRUST_ZERO_STEPS if zero_sizes(seed) else TRUST_STEPS), b)
    b.tensors = [t for t in b.tensors if t.name not in {i.name for i in inputs}] or b.tensors
    m = _assemble(b.nodes, b.inits, inputs, opset, f"fuzz_{seed}")
    if trust.random() < 0.25:
        declare_contradicting(trust, m, b.tensors)
    return m


def _step(step, b: Builder) -> None:
    try:
        step(b)
    except (TypeError, dims.SymbolicDimError, dims.UndecidableError):
        pass  # the generator's own shape guess was not enough for this step


def _assemble(nodes, inits, inputs, opset, name) -> onnx.ModelProto:
    produced = [o for n in nodes for o in n.output]
    used = {i for n in nodes for i in n.input}
    outs = [o for o in produced if o not in used] or produced[-1:] or [inputs[0].name]
    return model(nodes, inputs, outs, inits, opset, name=name)


# --------------------------------------------------------------------------- checking


@dataclass
class Outcome:
    kind: str  # "ok", "invalid" (onnxruntime runs no assignment), "wrong", "hang", "crash"
    detail: str = ""
    checked_dims: int = 0
    written_dims: int = 0  # dims of the written model compared with its run at fresh sizes


def assignments_for(seed: int, count: int = 3) -> list[dict[str, int]]:
    """Random sizes; for every third seed the last assignment has every symbol at 1, and every
    fourth seed's sizes may be 0 (checked with every input dim allowed to be 0)."""
    rng = random.Random(seed * 7919 + 1)
    sizes = [0, 0, 1, 2, 3, 5] if zero_sizes(seed) else [1, 2, 3, 4, 5, 7, 8, 11]
    out = [{s: rng.choice(sizes) for s in SYMBOLS} for _ in range(count)]
    if seed % 3 == 0:
        out[-1] = {s: 1 for s in SYMBOLS}
    return out


def fresh_assignments_for(seed: int, count: int = 3) -> list[dict[str, int]]:
    """Sizes the graph was not checked at (assignments_for's are), each one its declared
    inputs allow, for running the written model: mostly sizes outside assignments_for's."""
    rng = random.Random(seed * 6007 + 11)
    sizes = [0, 1, 4, 6] if zero_sizes(seed) else [1, 6, 9, 10, 12, 13, 16]
    return [{s: rng.choice(sizes) for s in SYMBOLS} for _ in range(count)]


def given_for(seed: int, model: onnx.ModelProto, assignments: list[dict[str, int]]) -> dict[str, object]:
    """What ``annotate`` is given for this seed: nothing mostly; else a bind (at a generated
    size), a range that the fresh sizes leave, an assumption between two input symbols that
    the fresh sizes break, or keep_declared_names."""
    rng = random.Random(seed * 3571 + 5)
    names = sorted({d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param})
    r = rng.random()
    if not names or r >= 0.4:
        return {}
    sym = rng.choice(names)
    if r < 0.15:
        return {"bind": {sym: assignments[0][sym]}}
    if r < 0.25:
        return {"ranges": {sym: (0 if zero_sizes(seed) else 1, max(max(a[sym] for a in assignments), 1))}}
    if r < 0.32 and len(names) >= 2:
        a, b = rng.sample(names, 2)
        return {"assume": [f"{a} == {b}"]}
    return {"keep_declared_names": True}


def stripped(model: onnx.ModelProto) -> onnx.ModelProto:
    """The graph without what it declares on produced values (value_info, output shapes):
    the model onnxruntime is the judge of, whatever the declarations claim."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    for o in m.graph.output:
        if o.type.HasField("tensor_type"):
            o.type.tensor_type.ClearField("shape")
    return m


def _fuzz_feeds(model: onnx.ModelProto):
    """Float inputs at a binding, seeded by it (so that a data condition goes either way)."""
    def feeds(binding):
        rng = np.random.default_rng(zlib.crc32(repr(sorted(binding.items())).encode()))
        out = {}
        for i in model.graph.input:
            shape = [d.dim_value if d.HasField("dim_value") else binding[d.dim_param] for d in i.type.tensor_type.shape.dim]
            out[i.name] = rng.standard_normal(shape).astype(np.float32)
        return out
    return feeds


def _runs(sess, feeds) -> bool:
    try:
        sess.run(None, feeds)
        return True
    except Exception:  # noqa: BLE001
        return False


def check_model(model: onnx.ModelProto, assignments: list[dict[str, int]],
                fresh: list[dict[str, int]] | None = None, given: dict[str, object] | None = None) -> Outcome:
    """Infer, then compare with onnxruntime at every assignment it can run; with ``fresh``
    sizes, also annotate (given ``given``: bind, ranges, assume, keep_declared_names) and run
    the written model there as a user runs it (check_written)."""
    from onnxsym.commands.verify import verify

    # sizes that may be 0: so may the input dims
    zero = any(0 in a.values() for a in list(assignments) + list(fresh or []))
    try:
        result = onnxsym.infer(model, allow_zero=zero)
    except onnxsym.OnnxsymError as exc:
        refused = _runs_anywhere(stripped(model), assignments)
        if refused:
            return Outcome("crash", f"onnxsym refused a graph onnxruntime runs: {type(exc).__name__}: {exc}")
        return Outcome("invalid", str(exc))
    except Exception as exc:  # noqa: BLE001 - any other exception is a bug (a failed rule in strict mode)
        return Outcome("crash", f"{type(exc).__name__}: {exc}")
    if result.rule_failures:  # outside strict mode a failed rule is only a warning: still a crash
        return Outcome("crash", f"a rule failed: {result.rule_failures[0]}")
    ran = 0
    checked = 0
    for a in assignments:
        try:
            report = verify(model, assignments=[a], result=result)
        except onnxsym.OnnxsymError:
            continue  # onnxruntime refuses this assignment: the graph is invalid there
        except Exception as exc:  # noqa: BLE001 - onnxsym itself failed (verify computes the domain)
            return Outcome("crash", f"verify at {a}: {type(exc).__name__}: {exc}")
        ran += 1
        checked += report.checked_dims
        if report.mismatches:
            return Outcome("wrong", str(report.mismatches[0]), checked)
    if not ran:
        return Outcome("invalid", "", checked)
    if fresh is None:
        return Outcome("ok", "", checked)
    out = check_written(model, result, zero, fresh, given or {})
    out.checked_dims += checked
    return out


def check_written(model: onnx.ModelProto, result, zero: bool, fresh: list[dict[str, int]],
                  given: dict[str, object]) -> Outcome:
    """Annotate as the CLI does (the domain computed first, which narrows the ranges the
    written dims are simplified under) and run the written model at the ``fresh`` sizes,
    with its value_info in place: where the graph runs, it must run too, every dim it
    declares must be the real one, and the domain must hold (a domain too narrow is wrong)."""
    from oracle import written_model_failure

    knowledge = {k: v for k, v in given.items() if k in ("bind", "ranges", "assume")}
    if knowledge:
        bind = knowledge.get("bind", {})
        fresh = [dict(a, **bind) for a in fresh]
        try:
            result = onnxsym.infer(model, allow_zero=zero, **knowledge)
        except onnxsym.OnnxsymError:
            # a documented refusal: a bound size or an assumption the graph contradicts (the
            # graph need not run at every size; where it runs, the check above compared it)
            return Outcome("ok")
        except Exception as exc:  # noqa: BLE001
            return Outcome("crash", f"infer({knowledge}): {type(exc).__name__}: {exc}")
    judge = stripped(model)
    feeds = _fuzz_feeds(judge)
    try:
        result = result.within_domain()
        domain = result.domain()
        written = onnxsym.write_result(result, keep_declared_names=bool(given.get("keep_declared_names")))
    except Exception as exc:  # noqa: BLE001
        return Outcome("crash", f"annotate({given}): {type(exc).__name__}: {exc}")
    if not knowledge:  # (under a range or an assumption the domain is narrower on purpose)
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.log_severity_level = 4
        sess = ort.InferenceSession(judge.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        for a in fresh:
            broken = domain.violated(a)
            if broken is not None and _runs(sess, feeds(a)):
                return Outcome("wrong", f"the domain is too narrow: the graph runs at {a}, the domain says "
                                        f"{broken.describe()}")
    checked, failure, _ = written_model_failure(judge, written, fresh, feeds)
    if failure is not None:
        return Outcome("wrong", f"annotate({given}): {failure}", 0, checked)
    return Outcome("ok", "", 0, checked)


def _runs_anywhere(model, assignments) -> bool:
    import onnxruntime as ort

    # as verify runs it: onnxruntime's graph optimizations run some invalid graphs (a Reshape
    # of [h, 4] to [h] computed from the shape comes out [4*h])
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    try:
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001
        return False
    for a in assignments:
        feeds = {}
        for i in model.graph.input:
            shape = [d.dim_value if d.HasField("dim_value") else a[d.dim_param] for d in i.type.tensor_type.shape.dim]
            feeds[i.name] = np.ones(shape, np.float32)
        try:
            sess.run(None, feeds)
            return True
        except Exception:  # noqa: BLE001
            continue
    return False


# --------------------------------------------------------------------------- shrinking


def _used_names(nodes) -> set:
    """Every name the nodes read, in their subgraphs too (a branch reads the outer constants)."""
    out = set()
    for n in nodes:
        out.update(n.input)
        for a in n.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                out |= _used_names(g.node)
    return out


def _without(model: onnx.ModelProto, drop: int) -> onnx.ModelProto | None:
    """The model without node ``drop`` and every node that depends on it (its declarations
    on the values that remain kept)."""
    nodes = list(model.graph.node)
    dead = set(nodes[drop].output)
    kept = []
    for i, n in enumerate(nodes):
        if i == drop or dead & _used_names([n]):
            dead.update(n.output)
            continue
        kept.append(n)
    if not kept:
        return None
    used = _used_names(kept)
    inits = [t for t in model.graph.initializer if t.name in used]
    m = _assemble(kept, inits, list(model.graph.input), model.opset_import[0].version, model.graph.name)
    declared = {o.name: o for o in model.graph.output if o.type.HasField("tensor_type")}
    for o in m.graph.output:
        if o.name in declared:
            o.CopyFrom(declared[o.name])
    produced = {o for n in kept for o in n.output}
    m.graph.value_info.extend(vi for vi in model.graph.value_info if vi.name in produced)
    return m


def shrink(model: onnx.ModelProto, assignments, kind: str, fresh=None, given=None) -> onnx.ModelProto:
    """A smaller model that still fails the same way (greedy node removal)."""
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(model.graph.node))):
            smaller = _without(model, i)
            if smaller is not None and check_model(smaller, assignments, fresh, given).kind == kind:
                model, changed = smaller, True
                break
    return model


def save_failure(model, outcome: Outcome, assignments, folder: str, fresh=None, given=None) -> str:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{model.graph.name}_{outcome.kind}.onnx")
    model.doc_string = (f"{outcome.kind}: {outcome.detail}\nassignments: {assignments}\n"
                        f"fresh sizes: {fresh}\nannotate given: {given}")
    onnx.save(model, path)
    return path


def case_for(seed: int, max_steps: int = 8):
    """The model of a seed and what it is checked with: (model, assignments, fresh sizes, given)."""
    model = random_model(seed, max_steps)
    a = assignments_for(seed)
    return model, a, fresh_assignments_for(seed), given_for(seed, model, a)


def check_seed(seed: int, max_steps: int = 8, failures_dir: str | None = None, report=None):
    """Check one seed; a wrong or crashing graph is shrunk (and saved in ``failures_dir``).
    ``report(outcome)`` is called with the outcome before shrinking starts.
    Returns (outcome, the shrunk outcome and saved path, or None)."""
    model, a, fresh, given = case_for(seed, max_steps)
    out = check_model(model, a, fresh, given)
    if report is not None:
        report(out)
    if out.kind not in ("wrong", "crash"):
        return out, None
    small = shrink(model, a, out.kind, fresh, given)
    again = check_model(small, a, fresh, given)
    path = save_failure(small, again, a, failures_dir, fresh, given) if failures_dir else None
    return out, (again, path)


def _quiet_runtime() -> None:
    import onnxruntime as ort

    ort.set_default_logger_severity(4)  # the graphs that do not run are expected: no log on stderr


def _worker(conn, max_steps: int, failures_dir: str | None) -> None:
    """A process checking the seeds it is sent, one at a time (run)."""
    _quiet_runtime()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)  # onnxruntime logs each graph it cannot run; the pipe reports what matters
    while True:
        seed = conn.recv()
        if seed is None:
            return
        try:
            _, shrunk = check_seed(seed, max_steps, failures_dir, report=lambda o: conn.send(("outcome", o)))
        except BaseException as exc:  # noqa: BLE001 - a bug of the fuzzer itself: reported, the worker goes on
            conn.send(("outcome", Outcome("crash", f"the fuzzer failed: {type(exc).__name__}: {exc}")))
            shrunk = None
        conn.send(("shrunk", shrunk))


class _Worker:
    """The worker process, restarted after a hang or a death."""

    def __init__(self, max_steps: int, failures_dir: str | None):
        import multiprocessing

        self.ctx = multiprocessing.get_context("spawn")  # (onnxruntime's threads do not survive a fork)
        self.args = (max_steps, failures_dir)
        self.proc = None

    def _start(self):
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,) + self.args, daemon=True)
        self.proc.start()
        child.close()

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
            self.proc = None

    def ask(self, seed: int, limit: float, shrink_limit: float):
        """(outcome, shrunk or None) for ``seed``; a check over ``limit`` seconds of CPU time is a hang."""
        if self.proc is None:
            self._start()
        self.conn.send(seed)
        got = self._receive(limit)
        if got is None:
            return Outcome("hang", f"no answer in {limit:.0f} s of CPU time"), None
        if got[0] == "died":
            return Outcome("crash", f"the process died (exit code {got[1]})"), None
        outcome = got[1]
        rest = self._receive(shrink_limit)
        if rest is None or rest[0] == "died":
            return outcome, None  # (shrinking it took too long: the seed reproduces it)
        return outcome, rest[1]

    def _cpu_seconds(self) -> float | None:
        """The worker's CPU time so far (None where /proc does not tell)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        except (OSError, ValueError, IndexError, AttributeError):
            return None

    def _receive(self, limit: float):
        """The worker's next message; None when it used more than ``limit`` seconds of CPU time on
        it (a hang: onnxsym's own work, not a machine busy with others; wall time where the CPU
        time is not known, and at most 10 times ``limit`` of wall time in any case)."""
        start, t0 = self._cpu_seconds(), time.monotonic()
        while not self.conn.poll(1.0):
            now = self._cpu_seconds()
            used = now - start if now is not None and start is not None else time.monotonic() - t0
            if used > limit or time.monotonic() - t0 > 10 * limit:
                self.stop()
                return None
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.proc.join()
            code = self.proc.exitcode
            self.proc = None
            return ("died", code)


def run(seeds, failures_dir: str | None = None, max_steps: int = 8, time_limit: float | None = None,
        progress=None):
    """Fuzz the given seeds; returns {kind: count} and the list of (seed, outcome, saved path).
    With ``time_limit`` (seconds), each seed is checked in a worker process and one that takes
    longer is a hang (also one whose process dies is a crash); without, in this process."""
    counts: dict[str, int] = {}
    failures = []
    worker = _Worker(max_steps, failures_dir) if time_limit else None
    try:
        for seed in seeds:
            if worker is not None:
                out, shrunk = worker.ask(seed, time_limit, 20 * time_limit)
            else:
                out, shrunk = check_seed(seed, max_steps, failures_dir)
            counts[out.kind] = counts.get(out.kind, 0) + 1
            counts["dims"] = counts.get("dims", 0) + out.checked_dims
            counts["written dims"] = counts.get("written dims", 0) + out.written_dims
            if out.kind in ("wrong", "crash", "hang"):
                if shrunk is not None:
                    failures.append((seed, shrunk[0], shrunk[1]))
                else:
                    path = None
                    if failures_dir:
                        model, a, fresh, given = case_for(seed, max_steps)
                        path = save_failure(model, out, a, failures_dir, fresh, given)
                    failures.append((seed, out, path))
            if progress is not None:
                progress(seed, out)
    finally:
        if worker is not None:
            worker.stop()
    return counts, failures
