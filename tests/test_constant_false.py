"""A condition that holds at no size (over constants only, or conditions on one symbol that
leave it no size) is a contradiction, as inference's ``3 == 4``: onnxruntime refuses such a
model at every size, so ``check`` and ``annotate`` exit 2 naming the node (they said "ok").
Under an If's guard it is no contradiction: the branch must not run, and onnxruntime runs the
other one."""

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxsym
from onnxsym.errors import ShapeContradiction

pytest.importorskip("onnxruntime")

F, vi = T.FLOAT, h.make_tensor_value_info


def _model(nodes, inputs, outputs, inits=(), opset=17):
    m = h.make_model(h.make_graph(nodes, "g", inputs, [h.make_empty_tensor_value_info(o) for o in outputs],
                                  list(inits)), opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _i64(name, v):
    return nh.from_array(np.array(v, np.int64), name)


def _runs(m, feeds) -> bool:
    from onnxsym.model.isolated import Child, Refused

    with Child() as child:
        child.load(m.SerializeToString())
        try:
            child.run(feeds, [o.name for o in m.graph.output])
            return True
        except Refused:
            return False


X = [vi("a", F, ["n", 4])]
# name: (model, the node the contradiction names)
MODELS = {
    "Gather": (_model([h.make_node("Gather", ["a", "i"], ["y"], name="g", axis=1)], X, ["y"], [_i64("i", [5])]), "g"),
    "Gather negative": (_model([h.make_node("Gather", ["a", "i"], ["y"], name="g", axis=1)], X, ["y"],
                               [_i64("i", [0, -5])]), "g"),
    "GatherElements": (_model([h.make_node("GatherElements", ["a", "i"], ["y"], name="ge", axis=1)], X, ["y"],
                              [_i64("i", [[7]])]), "ge"),
    "GatherND": (_model([h.make_node("GatherND", ["a", "i"], ["y"], name="gn")], X, ["y"], [_i64("i", [[0, 9]])]),
                 "gn"),
    # n >= 6 (index 5 on axis 0) and n == 3 or n == 1 (an Expand to [3]): no size meets both
    "no size left": (_model([h.make_node("Gather", ["b", "i"], ["y"], name="g", axis=0),
                             h.make_node("Expand", ["b", "s"], ["z"], name="e")], [vi("b", F, ["n"])], ["y", "z"],
                            [_i64("i", [5]), _i64("s", [3])]), "g"),
}


def _feeds(m, n):
    return {i.name: np.zeros([d.dim_value or n for d in i.type.tensor_type.shape.dim], np.float32)
            for i in m.graph.input}


@pytest.mark.parametrize("case", sorted(MODELS))
def test_a_condition_that_holds_at_no_size_is_a_contradiction(case, tmp_path):
    m, node = MODELS[case]
    assert not any(_runs(m, _feeds(m, n)) for n in (1, 2, 3, 4, 6, 7))  # onnxruntime: at every size
    with pytest.raises(ShapeContradiction) as err:
        onnxsym.infer(m).domain()
    assert err.value.node == node and "no size" in str(err.value)
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path)
    for args in (["check", path], ["annotate", path, "-o", str(tmp_path / "out.onnx")]):
        p = subprocess.run([sys.executable, "-m", "onnxsym", *args], capture_output=True, text=True)
        assert p.returncode == 2 and f"node '{node}'" in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "out.onnx").exists()


def test_under_a_guard_it_says_the_branch_cannot_run():
    """A constant index past the axis in an If's then branch: onnxruntime runs the else branch
    and refuses the then branch at every size; the domain keeps it under the guard (no error)."""
    then = h.make_graph([h.make_node("Gather", ["a", "j"], ["t"], name="gt", axis=1)], "then", [],
                        [h.make_empty_tensor_value_info("t")], [_i64("j", [5])])
    other = h.make_graph([h.make_node("Identity", ["a"], ["e"])], "else", [], [h.make_empty_tensor_value_info("e")])
    m = _model([h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
               [vi("c", T.BOOL, []), *X], ["y"])
    domain = onnxsym.infer(m).domain()
    (c,) = domain.conditions
    assert c.when and c.text == "5 <= 3" and domain.violated({"n": 2}) is None
    for n in (1, 2, 5):
        feeds = {"a": np.zeros((n, 4), np.float32)}
        assert _runs(m, {**feeds, "c": np.array(False)}) and not _runs(m, {**feeds, "c": np.array(True)})


def _pool_in(kind):
    """A MaxPool of kernel 5 on a 3x3 input (negative output size: onnxruntime refuses it at every
    size) in an If's then branch or a Loop's body."""
    pool = h.make_node("MaxPool", ["a"], ["t"], kernel_shape=[5, 5])
    a = vi("a", F, ["n", 1, 3, 3])
    if kind == "If":
        then = h.make_graph([pool], "then", [], [h.make_empty_tensor_value_info("t")])
        other = h.make_graph([h.make_node("Identity", ["a"], ["e"])], "else", [], [h.make_empty_tensor_value_info("e")])
        return _model([h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
                      [vi("c", T.BOOL, []), a], ["y"])
    body = h.make_graph([pool, h.make_node("Identity", ["cin"], ["cout"])], "body",
                        [vi("it", T.INT64, []), vi("cin", T.BOOL, [])],
                        [vi("cout", T.BOOL, []), h.make_empty_tensor_value_info("t")])
    return _model([h.make_node("Loop", ["c", ""], ["y"], body=body)], [vi("c", T.INT64, []), a], ["y"])


@pytest.mark.parametrize("kind", ["If", "Loop"])
def test_a_subgraph_that_can_never_run_is_said_under_its_guard(kind):
    """It was a warning only; the domain now says the subgraph must not run (the other branch,
    no iteration), and every size runs so."""
    m = _pool_in(kind)
    domain = onnxsym.infer(m).domain()
    (c,) = domain.conditions
    assert c.when and not c.symbols and c.sources[0].op_type == "MaxPool"
    from onnxsym.domain import guarded

    for n in (1, 2):
        assert domain.violated({"n": n}) is None
        (key, value), = guarded.choose(domain.conditions, {"n": n})[0].items()
        assert not value  # (the branch not taken, the body run no time)
        a = np.zeros((n, 1, 3, 3), np.float32)
        runs, fails = (np.array(False), np.array(True)) if kind == "If" else (np.array(0), np.array(1))
        assert _runs(m, {"c": runs, "a": a}) and not _runs(m, {"c": fails, "a": a})
