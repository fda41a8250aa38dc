"""Conditions on tensor data, which the sizes cannot decide: the domain says them as
data-dependent (``Domain.on_data``) and states no condition on the sizes for them; onnxruntime
runs exactly where the data meet them. Split and SplitToSequence sizes read from a graph input
(they add up to the axis), a Scan body's state output of a NonZero's count (it is the state's)."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

F = T.FLOAT


def _model(nodes, inputs, outputs, opset=18):
    m = h.make_model(h.make_graph(nodes, "g", inputs, [h.make_empty_tensor_value_info(o) for o in outputs]),
                     opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _run(m, feeds, outputs):
    """onnxruntime's output shapes, or None where it refuses."""
    from onnxsym.model.isolated import Child, Refused

    with Child() as child:
        child.load(m.SerializeToString())
        try:
            return child.run(feeds, outputs)
        except Refused:
            return None


def _same(res, name, shape, sizes) -> bool:
    """Whether the inferred shape of ``name`` is onnxruntime's (a dim over a fresh symbol, which
    the data decide, matches any)."""
    want = res.shape(name)
    return len(want) == len(shape) and all(
        any(s.name in res.fresh for s in dims.free_symbols(d)) or dims.evaluate(d, sizes) == g
        for d, g in zip(want, shape))


SPLITS = [(6, [1, 2, 3]), (6, [0, 6, 0]), (6, [1, 2, 2]), (1, [1, 1, 1]), (3, [1, 1, 1]), (4, [2, 2, 1])]


@pytest.mark.parametrize("op, opset", [("Split", 13), ("Split", 18), ("SplitToSequence", 17)])
def test_split_sizes_from_a_graph_input(op, opset):
    outs = ["y0", "y1", "y2"] if op == "Split" else ["y"]
    nodes = [h.make_node(op, ["x", "sp"], outs if op == "Split" else ["s"], axis=1)]
    if op == "SplitToSequence":
        nodes.append(h.make_node("SequenceAt", ["s", "i"], ["y"]))
    inputs = [h.make_tensor_value_info("x", F, ["b", "n"]), h.make_tensor_value_info("sp", T.INT64, [3])]
    m = _model(nodes, inputs + ([h.make_tensor_value_info("i", T.INT64, [])] if op == "SplitToSequence" else []),
               outs, opset)
    res = onnxsym.infer(m)
    domain = res.domain()
    (text, src), = domain.on_data()
    assert "== n" in text and "'sp'" in src.reason and not domain.conditions
    for n, sp in SPLITS:
        sizes = {"b": 2, "n": n}
        assert domain.violated(sizes) is None  # (the sizes alone decide nothing)
        feeds = {"x": np.ones((2, n), np.float32), "sp": np.array(sp, np.int64)}
        if op == "SplitToSequence":
            feeds["i"] = np.array(1, np.int64)
        got = _run(m, feeds, outs)
        assert (got is not None) is (sum(sp) == n), (n, sp)
        if got is not None:
            assert all(_same(res, o, s, sizes) for o, s in zip(outs, got))
            assert all(s[0] == 2 for s in got)  # (the dims off the axis are X's)


def _scan_of_nonzero():
    """A Scan whose state output is the NonZero positions of each step's row."""
    body = h.make_graph([h.make_node("NonZero", ["xt"], ["nz"]), h.make_node("Reshape", ["nz", "minus1"], ["f"]),
                         h.make_node("Cast", ["f"], ["so"], to=F), h.make_node("Identity", ["xt"], ["yo"])], "body",
                        [h.make_tensor_value_info("si", F, ["k"]), h.make_tensor_value_info("xt", F, ["m"])],
                        [h.make_tensor_value_info("so", F, None), h.make_tensor_value_info("yo", F, None)],
                        [numpy_helper.from_array(np.array([-1], np.int64), "minus1")])
    return _model([h.make_node("Scan", ["s", "x"], ["sf", "y"], num_scan_inputs=1, body=body)],
                  [h.make_tensor_value_info("s", F, ["k"]), h.make_tensor_value_info("x", F, ["n", "m"])],
                  ["sf", "y"], 17)


def test_a_scan_state_of_a_data_dependent_size():
    """The state output's length is a NonZero count: that it is the state's k is data-dependent
    (it was equated silently: the count solved to k, the domain saying nothing)."""
    m = _scan_of_nonzero()
    res = onnxsym.infer(m)
    domain = res.domain()
    (text, src), = domain.on_data()
    assert text.startswith("NonZero") and "== k" in text and src.op_type == "Scan" and not domain.conditions
    assert not any(n.startswith("NonZero") for n in res.derived_symbols())
    assert [str(d) for d in res.shape("sf")] == ["k"]
    for k, row, runs in [(3, [1, 1, 1], True), (2, [1, 1, 1], False), (2, [1, 0, 1], True), (1, [0, 0, 1], True),
                         (3, [0, 1, 1], False)]:
        sizes = {"k": k, "n": 2, "m": len(row)}
        assert domain.violated(sizes) is None
        got = _run(m, {"s": np.zeros(k, np.float32), "x": np.array([row, row], np.float32)}, ["sf", "y"])
        assert (got is not None) is runs, (k, row)
        if got is not None:
            assert _same(res, "sf", got[0], sizes) and _same(res, "y", got[1], sizes)


def test_check_says_a_condition_on_the_data(tmp_path):
    """check passes the Scan (every dim resolves) but says what its data must meet, in the text
    and the JSON; the exit status is the dims' (a condition on the data fails nothing)."""
    import json
    import subprocess
    import sys

    path = str(tmp_path / "scan.onnx")
    import onnx

    onnx.save(_scan_of_nonzero(), path)
    text = subprocess.run([sys.executable, "-m", "onnxsym", "check", path], capture_output=True, text=True)
    assert text.returncode == 0 and "data-dependent: 1 condition on the input data (Scan)" in text.stdout
    text = subprocess.run([sys.executable, "-m", "onnxsym", "check", "-v", path], capture_output=True, text=True)
    assert text.returncode == 0 and "    NonZero" in text.stdout and "== k: Scan 'Scan_0'" in text.stdout
    out = subprocess.run([sys.executable, "-m", "onnxsym", "check", "--format", "json", path], capture_output=True,
                         text=True)
    (c,), = [m["on_data"] for m in json.loads(out.stdout)["models"]]
    assert c["condition"].endswith("== k") and c["op_type"] == "Scan"


def _one(op, inputs, extra=(), **attrs):
    names = [n for n, _, _ in inputs]
    return _model([h.make_node(op, names, ["y", *extra], **attrs)], [h.make_tensor_value_info(*i) for i in inputs],
                  ["y", *extra], 17)


I64 = T.INT64
f32, i64 = np.float32, np.int64
# op: (model, feeds onnxruntime runs, feeds it refuses at the same sizes)
OPS = {
    "Reshape": (_one("Reshape", [("x", F, ["n"]), ("s", I64, [2])]),
                {"x": np.ones(6, f32), "s": np.array([2, 3], i64)}, {"x": np.ones(6, f32), "s": np.array([4, 2], i64)}),
    "Expand": (_one("Expand", [("x", F, ["n"]), ("s", I64, [2])]),
               {"x": np.ones(3, f32), "s": np.array([2, 3], i64)}, {"x": np.ones(3, f32), "s": np.array([2, 2], i64)}),
    "Tile": (_one("Tile", [("x", F, ["n"]), ("s", I64, [1])]),
             {"x": np.ones(3, f32), "s": np.array([2], i64)}, {"x": np.ones(3, f32), "s": np.array([-1], i64)}),
    "TopK": (_one("TopK", [("x", F, ["n"]), ("k", I64, [1])], ["i"]),
             {"x": np.ones(3, f32), "k": np.array([3], i64)}, {"x": np.ones(3, f32), "k": np.array([4], i64)}),
    "Range": (_one("Range", [("a", I64, []), ("b", I64, []), ("c", I64, [])]),
              {"a": np.array(0, i64), "b": np.array(3, i64), "c": np.array(1, i64)},
              {"a": np.array(0, i64), "b": np.array(3, i64), "c": np.array(0, i64)}),
    "OneHot": (_one("OneHot", [("x", I64, ["n"]), ("d", I64, []), ("v", F, [2])]),
               {"x": np.zeros(2, i64), "d": np.array(3, i64), "v": np.ones(2, f32)},
               {"x": np.zeros(2, i64), "d": np.array(0, i64), "v": np.ones(2, f32)}),
    "Slice": (_one("Slice", [("x", F, ["n"]), ("s", I64, [1]), ("e", I64, [1]), ("ax", I64, [1]), ("st", I64, [1])]),
              {"x": np.ones(3, f32), "s": np.array([0], i64), "e": np.array([2], i64), "ax": np.array([0], i64),
               "st": np.array([1], i64)},
              {"x": np.ones(3, f32), "s": np.array([0], i64), "e": np.array([2], i64), "ax": np.array([0], i64),
               "st": np.array([0], i64)}),
    "Pad": (_one("Pad", [("x", F, ["n"]), ("p", I64, [2])]),
            {"x": np.ones(3, f32), "p": np.array([1, -1], i64)}, {"x": np.ones(3, f32), "p": np.array([-2, -2], i64)}),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_what_an_op_needs_of_an_integer_graph_input_is_data_dependent(op):
    """The domain says it (data-dependent, naming the node) and states nothing of the sizes for
    it; onnxruntime runs one feed and refuses another of the same sizes."""
    m, good, bad = OPS[op]
    res = onnxsym.infer(m)
    domain = res.domain()
    said = domain.on_data()
    assert said and said[0][1].op_type == op and not domain.conditions
    sizes = {s: good[i.name].shape[a] for i in m.graph.input for a, d in enumerate(i.type.tensor_type.shape.dim)
             for s in [d.dim_param] if s}
    assert domain.violated(sizes) is None
    outs = [o.name for o in m.graph.output]
    got = _run(m, good, outs)
    assert got is not None and all(_same(res, o, s, sizes) for o, s in zip(outs, got))
    assert _run(m, bad, outs) is None


# Index ops whose indices are fed: onnxruntime refuses an index out of range when it runs, which
# the sizes cannot decide. op: (model, the index feed it runs, one it refuses, at a = [3, 4])
def _indexed(op, idx_shape, extra=(), **attrs):
    inputs = [("a", F, ["n", 4]), ("i", I64, idx_shape), *extra]
    return _one(op, inputs, **attrs)


INDEXED = {
    "Gather": (_indexed("Gather", ["k"], axis=0), np.array([2, -3], i64), np.array([3], i64)),
    "GatherElements": (_indexed("GatherElements", ["k", 4], axis=0), np.array([[0, 1, 2, -1]], i64),
                       np.array([[0, 3, 0, 0]], i64)),
    "GatherND": (_indexed("GatherND", ["k", 2]), np.array([[2, 3], [-3, -4]], i64), np.array([[0, 4]], i64)),
    "ScatterND": (_indexed("ScatterND", ["k", 1], [("u", F, ["k", 4])]), np.array([[2]], i64), np.array([[3]], i64)),
    "ScatterElements": (_indexed("ScatterElements", ["k", 4], [("u", F, ["k", 4])], axis=0),
                        np.array([[2, 0, 1, -1]], i64), np.array([[-4, 0, 0, 0]], i64)),
}


@pytest.mark.parametrize("op", sorted(INDEXED))
def test_fed_indices_are_a_condition_on_the_data(op):
    """The domain says the index range (data-dependent, naming the node, in check's report too)
    and states nothing of the sizes; onnxruntime runs one feed and refuses another of one size."""
    m, good, bad = INDEXED[op]
    res = onnxsym.infer(m)
    domain = res.domain()
    said = domain.on_data()
    assert said and all(src.op_type == op and "indices <" in text for text, src in said) and not domain.conditions
    sizes = {"n": 3, "k": good.shape[0]}
    assert domain.violated(sizes) is None
    for idx, runs in ((good, True), (bad, False)):
        feeds = {"a": np.ones((3, 4), f32), "i": idx}
        if op.startswith("Scatter"):
            feeds["u"] = np.ones((idx.shape[0], 4), f32)
        assert (_run(m, feeds, ["y"]) is not None) is runs, idx


def test_constant_indices_state_the_sizes():
    """Constant indices 5 and -7 on a symbolic axis: n >= 7 (stated, no data condition); onnxruntime
    refuses at n = 6 and runs at 7."""
    m = _model([h.make_node("Gather", ["a", "i"], ["y"], axis=0)], [h.make_tensor_value_info("a", F, ["n", 4])],
               ["y"])
    m.graph.initializer.append(numpy_helper.from_array(np.array([5, -7], i64), "i"))
    domain = onnxsym.infer(m).domain()
    assert not domain.on_data() and domain.ranges["n"][0] == 7
    for n in (6, 7):
        assert (_run(m, {"a": np.ones((n, 4), f32)}, ["y"]) is not None) is (n >= 7)
        assert (domain.violated({"n": n}) is None) is (n >= 7)


def test_data_conditions_in_subgraphs_carry_their_guard():
    """Fed indices in an If's then branch, a Loop body's Gather of row `it` (the trip count is
    fed): each said as data-dependent under the guard; onnxruntime refuses only where the branch
    or body runs with data out of range."""
    vi = h.make_tensor_value_info
    then = h.make_graph([h.make_node("Gather", ["a", "i"], ["t"], name="gt", axis=0)], "then", [],
                        [h.make_empty_tensor_value_info("t")])
    other = h.make_graph([h.make_node("Identity", ["a"], ["e"])], "else", [], [h.make_empty_tensor_value_info("e")])
    m = _model([h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
               [vi("c", T.BOOL, []), vi("a", F, ["n", 4]), vi("i", I64, ["k"])], ["y"], 17)
    (text, src), = onnxsym.infer(m).domain().on_data()
    assert text.startswith("if c: ") and "indices < n" in text and src.node == "gt"
    a = np.ones((3, 4), f32)
    for c, idx, runs in ((True, [2], True), (True, [3], False), (False, [3], True)):
        assert (_run(m, {"c": np.array(c), "a": a, "i": np.array(idx, i64)}, ["y"]) is not None) is runs
    reshape = h.make_graph([h.make_node("Reshape", ["a", "s"], ["t"], name="rs")], "then", [],
                           [h.make_empty_tensor_value_info("t")])
    m = _model([h.make_node("If", ["c"], ["y"], then_branch=reshape, else_branch=other)],
               [vi("c", T.BOOL, []), vi("a", F, ["n", 4]), vi("s", I64, [2])], ["y"], 17)
    (text, src), = onnxsym.infer(m).domain().on_data()
    assert text.startswith("if c: ") and "'s'" in text and src.node == "rs"
    for c, s, runs in ((True, [4, 3], True), (True, [5, 3], False), (False, [5, 3], True)):
        assert (_run(m, {"c": np.array(c), "a": a, "s": np.array(s, i64)}, ["y"]) is not None) is runs
    body = h.make_graph([h.make_node("Gather", ["a", "it"], ["row"], name="gb", axis=0),
                         h.make_node("Identity", ["cin"], ["cout"])], "body",
                        [vi("it", I64, []), vi("cin", T.BOOL, [])], [vi("cout", T.BOOL, []), vi("row", F, None)])
    loop = _model([h.make_node("Loop", ["m", ""], ["rows"], body=body)], [vi("m", I64, []), vi("a", F, ["n", 4])],
                  ["rows"], 17)
    domain = onnxsym.infer(loop).domain()
    (text, src), = domain.on_data()
    assert text.startswith("if the subgraph of Loop node") and src.node == "gb" and domain.violated({"n": 3}) is None
    for trips, runs in ((3, True), (4, False), (0, True)):
        assert (_run(loop, {"m": np.array(trips, i64), "a": a}, ["rows"]) is not None) is runs, trips
