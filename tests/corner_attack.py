"""An attack on the conditions of issue 34's last rounds: sequence positions (SequenceErase,
SequenceInsert and SequenceAt of pieces of an uneven SplitToSequence, and of an If joining two
splits), Scan 8 (a batch axis, with and without sequence_lens, a state the body may broadcast, a
scan output read by a node), and Scans nested under an If the sizes decide. Each model is built at
sizes where it runs, with its graph-input dims named by roles; tests/domain_attack.py's judge runs
onnxruntime (in a child) with one symbol at a time moved to 0, 1, 2, 3, 4, 7 and 8, and holds the
domain (``allow_zero=True``) and every written dim to its verdict: too wide, too narrow, wrong.

    python -m tests.corner_attack --count 200 --seed 0 [--show] [--save DIR]
"""

from __future__ import annotations

import random
import sys
from collections import Counter

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

try:  # (under pytest its siblings are top-level modules; run as python -m tests.NAME, in tests)
    from domain_attack import _Chain
    from domain_attack import main as domain_main
    from domain_attack import run as domain_run
except ImportError:
    from tests.domain_attack import _Chain
    from tests.domain_attack import main as domain_main
    from tests.domain_attack import run as domain_run

F = T.FLOAT


def _vi(name: str, dtype: int = F) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, dtype, None)


class _Corners(_Chain):
    """A chain of one corner: ``positions`` (sequences), ``joined`` (an If of two splits), ``scan8``
    (a model of its own at opset 8), ``guarded_scan`` (a Scan in an If's branch)."""

    def _split(self, x: str, axis: int, size: int) -> str:
        r = self.rng
        pick = r.random()
        if pick < 0.6:  # (a scalar split: uneven where it does not divide the axis)
            return self.node("SplitToSequence", [x, self.const(np.array(r.choice([1, 2, 3]), np.int64))],
                             axis=axis)[0]
        if pick < 0.8 and size >= 2:
            cut = r.randint(1, size - 1)
            return self.node("SplitToSequence", [x, self.const(np.array([cut, size - cut], np.int64))], axis=axis)[0]
        return self.node("SplitToSequence", [x], axis=axis, keepdims=r.choice([0, 1]))[0]

    def _finish(self, q: str, axis: int) -> None:
        """cur from a sequence: an item at a position, or the items concatenated."""
        r = self.rng
        if r.random() < 0.5:
            self.cur = self.node("SequenceAt", [q, self.const(np.array(r.choice([0, 1, -1, -2, 2, -3]), np.int64))])[0]
        else:
            self.cur = self.node("ConcatFromSequence", [q], axis=axis, new_axis=0)[0]
        self.shape = None

    def positions(self) -> bool:
        r = self.rng
        axis = r.randint(0, len(self.shape) - 1)
        q = self._split(self.cur, axis, self.shape[axis][1])
        for _ in range(r.randint(1, 2)):
            pos = self.const(np.array(r.choice([0, 1, -1, -2, 2, -3]), np.int64))
            if r.random() < 0.5:
                q = self.node("SequenceErase", [q, pos])[0]
            else:
                item = self.node("SequenceAt", [q, self.const(np.array(r.choice([0, -1]), np.int64))])[0]
                q = self.node("SequenceInsert", [q, item] + ([pos] if r.random() < 0.7 else []))[0]
        if r.random() < 0.3:
            self.cur = self.node("Cast", [self.node("SequenceLength", [q])[0]], to=F)[0]
            self.shape = None
            return True
        self._finish(q, axis)
        return True

    def joined(self) -> bool:
        """An If on a size (dim > c) giving a split by 2 or by 3 of cur: the join of the two."""
        r = self.rng
        axis = r.randint(0, len(self.shape) - 1)
        dim = self.node("Gather", [self.node("Shape", [self.cur])[0], self.const(np.array(axis, np.int64))])[0]
        cond = self.node("Greater", [dim, self.const(np.array(r.choice([1, 2, 3]), np.int64))])[0]
        seq = h.make_sequence_type_proto(h.make_tensor_type_proto(F, None))
        branches = []
        for k, split in enumerate(r.sample([1, 2, 3], 2)):
            c, out = self.name("k"), self.name("q")
            branches.append(h.make_graph(
                [h.make_node("Constant", [], [c], value=onnx.numpy_helper.from_array(np.array(split, np.int64))),
                 h.make_node("SplitToSequence", [self.cur, c], [out], axis=axis)],
                f"b{k}", [], [h.make_value_info(out, seq)]))
        q = self.node("If", [cond], then_branch=branches[0], else_branch=branches[1])[0]
        if r.random() < 0.5:
            q = self.node("SequenceErase", [q, self.const(np.array(r.choice([0, -1, 1]), np.int64))])[0]
        self._finish(q, axis)
        return True

    def guarded_scan(self) -> bool:
        """An If on a size whose then branch runs a Scan over cur (axis 0) adding each slice to a state
        of the outer scope (which may broadcast), its else branch cur's first slice."""
        r = self.rng
        rank = len(self.shape)
        if rank < 2:
            return False
        state = self.input([self.like(i) if r.random() < 0.75 else (None, 1) for i in range(1, rank)])
        dim = self.node("Gather", [self.node("Shape", [self.cur])[0], self.const(np.array(r.randint(0, rank - 1),
                                                                                       np.int64))])[0]
        cond = self.node(r.choice(["Greater", "Less"]), [dim, self.const(np.array(r.choice([1, 2, 3]), np.int64))])[0]
        body = h.make_graph([h.make_node("Add", ["st", "a"], ["t"]), h.make_node("Identity", ["t"], ["so"]),
                             h.make_node("Identity", ["t"], ["sc"])], "body", [_vi("st"), _vi("a")],
                            [_vi("so"), _vi("sc")])
        s_out, sc_out, first = self.name("s"), self.name("sc"), self.name("first")
        then = h.make_graph([h.make_node("Scan", [state, self.cur], [s_out, sc_out], body=body, num_scan_inputs=1)],
                            "then", [], [_vi(s_out)])
        zero = self.name("z")
        other = h.make_graph([h.make_node("Constant", [], [zero], value=onnx.numpy_helper.from_array(
            np.array(0, np.int64))), h.make_node("Gather", [self.cur, zero], [first])], "else", [], [_vi(first)])
        self.cur = self.node("If", [cond], then_branch=then, else_branch=other)[0]
        self.shape = None
        return True


STEPS = ["positions", "positions", "joined", "guarded_scan"]


def _chain_model(rng: random.Random) -> tuple[onnx.ModelProto, dict[str, int]]:
    c = _Corners(rng)
    c.opset = 18
    getattr(c, rng.choice(STEPS))()
    return c.model(rng)


def scan8_model(rng: random.Random) -> tuple[onnx.ModelProto, dict[str, int]]:
    """A Scan 8 over x [B, I, S, W] adding each slice to a state [B, ...] whose dims are the slice's,
    1 or symbols of their own (sized as the slice's, or 1); optionally with sequence_lens computed as
    the full length (Shape, Gather, Expand: entries I), a Relu after the Add, a node reading the scan
    output. Every graph-input dim is a symbol of its role."""
    sizes = {"B": rng.choice([1, 2]), "I": rng.choice([1, 2, 3]), "S": rng.choice([1, 2, 3]), "W": rng.choice([1, 4])}
    state, k = ["B"], 0
    for d in ("S", "W"):
        p = rng.random()
        if p < 0.5:
            state.append(d)
        elif p < 0.75:
            k += 1
            state.append(f"T{k}")
            sizes[f"T{k}"] = rng.choice([sizes[d], 1])
        else:
            state.append(1)
    if any((d == 1 or (isinstance(d, str) and sizes[d] == 1)) and sizes[w] != 1 for d, w in zip(state[1:], "SW")):
        sizes["I"] = 1  # (a state the body broadcasts runs at a length of 1 only: built there, moved off it)
    nodes = [h.make_node(rng.choice(["Add", "Mul", "Max"]), ["st", "a"] if rng.random() < 0.7 else ["a", "st"],
                         ["t"])]
    if rng.random() < 0.3:
        nodes.append(h.make_node("Relu", ["t"], ["t2"]))
    last = nodes[-1].output[0]
    nodes += [h.make_node("Identity", [last], ["so"]), h.make_node("Identity", [last], ["sc"])]
    body = h.make_graph(nodes, "body", [_vi("st"), _vi("a")], [_vi("so"), _vi("sc")])
    inits, outer = [], []
    lens = rng.random() < 0.5
    if lens:  # (each entry the full length: in [1, I] wherever I >= 1)
        inits = [onnx.numpy_helper.from_array(np.array([0], np.int64), "i0"),
                 onnx.numpy_helper.from_array(np.array([1], np.int64), "i1")]
        outer = [h.make_node("Shape", ["x"], ["sx"]), h.make_node("Gather", ["sx", "i1"], ["len1"]),
                 h.make_node("Gather", ["sx", "i0"], ["b1"]), h.make_node("Expand", ["len1", "b1"], ["sl"])]
    outer.append(h.make_node("Scan", ["sl" if lens else "", "s", "x"], ["y1", "y2"], body=body, num_scan_inputs=1))
    outs = ["y1", "y2"]
    if rng.random() < 0.4:
        outer.append(h.make_node(rng.choice(["Relu", "Neg"]), ["y2"], ["z"]))
        outs.append("z")
    ins = [h.make_tensor_value_info("s", F, state), h.make_tensor_value_info("x", F, ["B", "I", "S", "W"])]
    g = h.make_graph(outer, "g", ins, [_vi(o) for o in outs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 8)])
    m.ir_version = 4
    return m, {d: v for d, v in sizes.items() if d in {str(x) for x in state} | {"B", "I", "S", "W"}}


def random_model(rng: random.Random) -> tuple[onnx.ModelProto, dict[str, int]]:
    return scan8_model(rng) if rng.random() < 0.35 else _chain_model(rng)


def run(count: int, seed: int, show: bool = False) -> Counter:
    """tests/domain_attack.py's tally over ``count`` of these models."""
    return domain_run(count, seed, show, make=random_model)


if __name__ == "__main__":
    sys.exit(domain_main(make=random_model))
