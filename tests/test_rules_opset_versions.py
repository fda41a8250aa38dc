"""Ops whose inputs or attributes changed across opset versions: Reduce* (axes
input at 13/18, noop_with_empty_axes), Tile-1, Cast-1, Shape-15 and the
gather/expand/fill ops, each at several versions against onnxruntime."""


import numpy as np
import pytest
from helpers import model
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from oracle import check

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")
rng = np.random.default_rng(6)
node = helper.make_node
N, M = dims.sym("n"), dims.sym("m")


def _cases(shape):
    return [({"n": n, "m": m}, {"x": rng.random([{"n": n, "m": m}.get(d, d) for d in shape]).astype(np.float32)})
            for n, m in ((2, 3), (5, 1))]


def _reduce_nodes(op, opset, axes, name, **kw):
    """A Reduce node with ``axes`` as attribute or input, whichever the opset takes."""
    from_input = opset >= (13 if op == "ReduceSum" else 18)
    if axes is None:
        return [node(op, ["x"], [name], **kw)], []
    if from_input:
        return [node(op, ["x", name + "_axes"], [name], **kw)], [numpy_helper.from_array(np.array(axes, np.int64),
                                                                                         name + "_axes")]
    return [node(op, ["x"], [name], axes=axes, **kw)], []


@pytest.mark.parametrize("op,opset", [("ReduceSum", 11), ("ReduceSum", 13), ("ReduceMean", 13), ("ReduceMean", 18),
                                      ("ReduceMax", 20), ("ReduceL2", 18)])
def test_reduce_axes_by_version(op, opset):
    nodes, inits = [], []
    for name, axes, kw in (("a", [1], {}), ("b", [-1, 0], dict(keepdims=0)), ("c", None, {}),
                           ("d", None, dict(keepdims=0))):
        ns, its = _reduce_nodes(op, opset, axes, name, **kw)
        nodes += ns
        inits += its
    m = model(nodes, [("x", T.FLOAT, ["n", "m", 4])], ["a", "b", "c", "d"], opset=opset, inits=inits, ir=10)
    res = check(m, _cases(["n", "m", 4]))
    assert res.shape("a") == (N, 1, 4) and res.shape("b") == (M,) and res.shape("d") == ()


@pytest.mark.parametrize("op,opset", [("ReduceSum", 13), ("ReduceMean", 18), ("ReduceMin", 20)])
def test_reduce_noop_with_empty_axes(op, opset):
    empty = numpy_helper.from_array(np.array([], np.int64), "e")
    nodes = [node(op, ["x"], ["noop"], noop_with_empty_axes=1),
             node(op, ["x", "e"], ["noop_e"], noop_with_empty_axes=1),
             node(op, ["x", "e"], ["all_e"], keepdims=0)]
    m = model(nodes, [("x", T.FLOAT, ["n", "m"])], ["noop", "noop_e", "all_e"], opset=opset, inits=[empty], ir=10)
    res = check(m, _cases(["n", "m"]))
    assert res.shape("noop") == (N, M) and res.shape("all_e") == ()


def test_reduce_axes_unknown_keeps_what_it_can():
    m = model([node("ReduceSum", ["x", "ax"], ["y"])], [("x", T.FLOAT, ["n", 1, 3]), ("ax", T.INT64, [1])], ["y"],
              opset=13, ir=10)
    cases = [({"n": n}, {"x": rng.random((n, 1, 3)).astype(np.float32), "ax": np.array([a], np.int64)})
             for n, a in ((2, 0), (4, 2))]
    res = check(m, cases, fresh_ok=["y"])
    assert res.shape("y")[1] == 1 and len(res.unresolved()) == 2


def test_tile_v1_spec():
    # Neither onnxruntime nor onnx's reference evaluator implements Tile-1; its spec:
    # "Repeat the elements of a tensor along an axis" (inputs: input, tiles, axis).
    inits = [numpy_helper.from_array(np.array(3.0, np.float32), "t"),
             numpy_helper.from_array(np.array(-1.0, np.float32), "a")]
    m = model([node("Tile", ["x", "t", "a"], ["y"])], [("x", T.FLOAT, ["n", 2])], ["y"], opset=1, inits=inits, ir=10)
    assert onnxsym.infer(m).shape("y") == (N, 6)


@pytest.mark.parametrize("opset", [6, 13])
def test_tile_v6(opset):
    reps = numpy_helper.from_array(np.array([2, 3], np.int64), "r")
    m = model([node("Tile", ["x", "r"], ["y"])], [("x", T.FLOAT, ["n", "m"])], ["y"], opset=opset, inits=[reps], ir=10)
    assert check(m, _cases(["n", "m"])).shape("y") == (2 * N, 3 * M)


def test_cast_v1_names_the_type():
    # onnxruntime and onnx's reference evaluator reject Cast-1 and onnx's type inference
    # leaves it untyped; its spec: "to" is the name of a TensorProto.DataType
    m = model([node("Cast", ["x"], ["y"], to="INT64"), node("Cast", ["x"], ["z"], to="NOT_A_TYPE")],
              [("x", T.FLOAT, ["n"])], ["y", "z"], opset=1, ir=10)
    res = onnxsym.infer(m)
    assert res.values["y"].dtype == T.INT64 and res.values["y"].shape == (N,) and res.values["z"].dtype == 0


@pytest.mark.parametrize("opset", [11, 13, 15, 19])
def test_gather_expand_fill_where_size_shape(opset):
    i = numpy_helper.from_array(np.array([[0, -1]], np.int64), "i")
    nodes = [node("Gather", ["x", "i"], ["g"], axis=1), node("GatherElements", ["x", "j"], ["ge"], axis=0),
             node("Shape", ["x"], ["s"]), node("Expand", ["x", "s"], ["e"]), node("ConstantOfShape", ["s"], ["c"]),
             node("Where", ["b", "x", "e"], ["w"]), node("Size", ["x"], ["z"]), node("CastLike", ["x", "j"], ["cl"])]
    if opset < 15:
        nodes.pop()
    outs = [n.output[0] for n in nodes]
    if opset >= 15:
        nodes.append(node("Shape", ["x"], ["s15"], start=-1))
        outs.append("s15")
    m = model(nodes, [("x", T.FLOAT, ["n", "m"]), ("j", T.INT64, [1, "m"]), ("b", T.BOOL, ["m"])], outs,
              opset=opset, inits=[i], ir=10)
    cases = [({"n": n, "m": k}, {"x": rng.random((n, k)).astype(np.float32), "j": np.zeros((1, k), np.int64),
                                 "b": rng.random(k) > 0.5}) for n, k in ((2, 3), (4, 1))]
    res = check(m, cases)
    assert res.shape("g") == (N, 1, 2) and res.shape("c") == (N, M) and not res.unresolved()
    if opset >= 15:
        assert res.values["s15"].value == (M,)


def _since_case(op, opset):
    """A model of ``op`` at ``opset`` (an opset where one of its rules registered by since= is in force)."""
    x = ("x", T.FLOAT, ["n", 3, "m", 4])
    if op == "Add":  # (before 7, which onnxruntime does not run, the second operand broadcast into the first)
        return model([node("Add", ["x", "y"], ["z"])], [x, ("y", T.FLOAT, [3, 1, 1])], ["z"],
                     opset=opset, ir=10), {"y": rng.random([3, 1, 1]).astype(np.float32)}
    if op == "Dropout":  # the mask: x's type before 10, bool after
        return model([node("Dropout", ["x"], ["z", "mask"])], [x], ["z", "mask"], opset=opset, ir=10), {}
    if op == "DequantizeLinear":  # float before 19, the scale's type from 19 on
        s = numpy_helper.from_array(np.array(0.5, np.float16 if opset >= 19 else np.float32), "s")
        return model([node("Cast", ["x"], ["q"], to=T.UINT8), node("DequantizeLinear", ["q", "s"], ["z"])], [x],
                     ["z"], opset=opset, inits=[s], ir=10), {}
    # Resize: scales at input 1 (10), at input 2 beside roi and sizes (11, 13)
    sc = numpy_helper.from_array(np.array([1, 1, 2, 0.5], np.float32), "sc")
    roi = numpy_helper.from_array(np.array([], np.float32), "roi")
    ins = ["x", "sc"] if opset < 11 else ["x", "roi", "sc"]
    return model([node("Resize", ins, ["z"])], [x], ["z"], opset=opset, inits=[sc, roi], ir=10), {}


@pytest.mark.parametrize("op,opset", [("Add", 7), ("Dropout", 7), ("Dropout", 12),
                                      ("DequantizeLinear", 13), ("DequantizeLinear", 19),
                                      ("Resize", 10), ("Resize", 11), ("Resize", 13)])
def test_rules_by_since(op, opset):
    """Each version of an op whose meaning changed has its own rule (registered by since=):
    dims and element types as onnxruntime computes them."""
    m, more = _since_case(op, opset)
    cases = [({"n": n, "m": k}, {"x": rng.random((n, 3, k, 4)).astype(np.float32), **more}) for n, k in ((2, 4), (1, 6))]
    res = check(m, cases)
    assert not res.unresolved()
