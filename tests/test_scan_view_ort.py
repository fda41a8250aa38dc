"""What onnxruntime's Scan holds its body to (onnxsym/domain/scan_view.py), held to onnxruntime.

A Scan inside a subgraph (a Scan's body, a Loop's body) at scan lengths 0 to 3:
onnxruntime runs onnx's inference on the subgraphs too, and its Scan kernel treats a nested Scan as
a main-graph one. A state the body broadcasts to another shape ([4, H] against slices [S, 4]) is fed
back in the initial state's buffer, refused unless H is 4, except at a length of 1, where the one
output goes to the final buffer, which has the shape onnx's inference gives the body's output where
that is static ([4, 4]): it runs at H = 1 there (the domain was too narrow, stating H == 4 at every
length). Where onnx's inference leaves it symbolic ([1, K] against [S, 4]) the final buffer is the
state's, refused at every length unless S is 1; and the state after the Scan, stacked by the outer
Scan or carried out of the Loop, has the shape onnxruntime gives it.

A body onnx's Python inference does not stand in for (onnxruntime's own inference at load differs):
a contrib op on the state (com.microsoft Gelu: onnx leaves it unshaped, onnxruntime gives [4, 4]),
a Reshape to a target folded from a Shape (onnx folds it only with its data propagation): onnxruntime
runs the state at a length of 1 with H = 1, where holding it to onnx's inference said refused; the
domain says that length's need not stated instead."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import onnxsym
from tests.op_verdicts import isolated_disagreements

pytest.importorskip("onnxruntime")


def _vi(name, shape=None, dtype=T.FLOAT):
    return h.make_tensor_value_info(name, dtype, shape)


def _inner_scan(xs: str):
    """A Scan adding each slice of ``xs`` (axis 0) to the outer-scope state s."""
    body = h.make_graph([h.make_node("Add", ["st", "a"], ["t"]), h.make_node("Identity", ["t"], ["so"]),
                         h.make_node("Identity", ["t"], ["sc"])], "inner", [_vi("st"), _vi("a")], [_vi("so"), _vi("sc")])
    return h.make_node("Scan", ["s", xs], ["s2", "ys2"], body=body, num_scan_inputs=1)


def _model(nodes, ins, outs):
    g = h.make_graph(nodes, "g", [_vi(n, s) for n, s in ins], [_vi(o) for o in outs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def scan_in_scan(state):
    """An outer Scan over x [L, I, S, 4]; its body scans the slice [I, S, 4] (length I)."""
    body = h.make_graph([_inner_scan("xs"), h.make_node("Identity", ["s2"], ["o1"]),
                         h.make_node("Identity", ["ys2"], ["o2"])], "outer", [_vi("xs")], [_vi("o1"), _vi("o2")])
    return _model([h.make_node("Scan", ["x"], ["y1", "y2"], body=body, num_scan_inputs=1)],
                  [("s", state), ("x", ["L", "I", "S", 4])], ["y1", "y2"])


def scan_in_loop(state):
    """A Loop of 2 iterations whose body scans the outer-scope x [I, S, 4] (length I)."""
    body = h.make_graph([_inner_scan("x"), h.make_node("Identity", ["c"], ["co"]), h.make_node("Identity", ["s2"], ["o1"])],
                        "loop", [_vi("i", [], T.INT64), _vi("c", [], T.BOOL)], [_vi("co", [], T.BOOL), _vi("o1")])
    nodes = [h.make_node("Constant", [], ["trip"], value=h.make_tensor("trip", T.INT64, [], [2])),
             h.make_node("Loop", ["trip", ""], ["y1"], body=body)]
    return _model(nodes, [("s", state), ("x", ["I", "S", 4])], ["y1"])


def _grid(**axes):
    names = sorted(axes)
    return [dict(zip(names, v)) for v in itertools.product(*(axes[n] for n in names))]


@pytest.mark.parametrize("make, extra", [(scan_in_scan, {"L": [1, 2]}), (scan_in_loop, {})])
@pytest.mark.parametrize("state, axes, runs, refused", [
    # onnx infers the inner body's state output [4, 4] (static): at one step a state [4, 1] grows
    ([4, "H"], {"H": [1, 4], "I": [0, 1, 2, 3], "S": [1, 4]}, {"H": 1, "I": 1, "S": 4}, {"H": 1, "I": 2, "S": 4}),
    # onnx infers [S, 4] (symbolic): the final buffer is the state's, refused unless S is 1
    ([1, "K"], {"K": [4], "I": [0, 1, 2, 3], "S": [1, 2]}, {"K": 4, "I": 1, "S": 1}, {"K": 4, "I": 1, "S": 2}),
])
def test_a_nested_scan_state_at_lengths_0_to_3_is_as_onnxruntime_runs_it(make, extra, state, axes, runs, refused):
    m = make(state)
    n, bad, crashes = isolated_disagreements(m, _grid(**axes, **extra), allow_zero=True)
    assert not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])
    assert not crashes, crashes
    domain = onnxsym.infer(m, allow_zero=True).domain()
    outer = {k: v[-1] for k, v in extra.items()}  # (the outer Scan's length, 2)
    assert domain.violated({**outer, **runs}) is None and domain.violated({**outer, **refused}) is not None


def _scan_through(nodes):
    """A Scan over x [I, S, 4] whose body adds the slice to the state s [4, H] (t0), then ``nodes``
    make t from t0, the state and scan output."""
    body = h.make_graph([h.make_node("Add", ["st", "a"], ["t0"]), *nodes, h.make_node("Identity", ["t"], ["so"]),
                         h.make_node("Identity", ["t"], ["sc"])], "b", [_vi("st"), _vi("a")], [_vi("so"), _vi("sc")])
    g = h.make_graph([h.make_node("Scan", ["s", "x"], ["y1", "y2"], body=body, num_scan_inputs=1)], "g",
                     [_vi("s", [4, "H"]), _vi("x", ["I", "S", 4])], [_vi("y1"), _vi("y2")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def _ints(name, v):
    return h.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64), name))


CONTRIB = [h.make_node("Gelu", ["t0"], ["t"], domain="com.microsoft")]
FOLDED = [h.make_node("Shape", ["st"], ["sh"]), _ints("b0", [0]), _ints("b1", [1]), _ints("four", [4]),
          h.make_node("Slice", ["sh", "b0", "b1"], ["d0"]), h.make_node("Concat", ["d0", "four"], ["tgt"], axis=0),
          h.make_node("Reshape", ["t0", "tgt"], ["t"])]


@pytest.mark.parametrize("nodes", [CONTRIB, FOLDED], ids=["contrib-op", "folded-shape"])
def test_a_body_onnx_does_not_stand_in_for_says_the_length_of_1_not_stated(nodes):
    m = _scan_through(nodes)
    n, bad, crashes = isolated_disagreements(m, _grid(H=[1, 4], I=[1, 2, 3], S=[1, 4]), allow_zero=True)
    assert not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])
    assert not crashes, crashes
    domain = onnxsym.infer(m, allow_zero=True).domain()
    # (onnxruntime runs H = 1 at one step: the test above saw it run there, inside the domain)
    assert domain.violated({"H": 1, "I": 1, "S": 4}) is None
    assert domain.violated({"H": 1, "I": 2, "S": 4}) is not None
    assert any("final buffer" in text and text.startswith("if I == 1") for text, _ in domain.unstated), domain.unstated
