"""Rules of rules/image.py, checked against onnxruntime (or onnx's reference
evaluator where onnxruntime has no kernel, as each test says)."""


import numpy as np
import pytest
from helpers import I64, F, init, model
from onnx import helper
from oracle import check, no_fresh, random_cases, run_ort, run_reference

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

HW = [{"a": 1, "h": 4, "w": 6}, {"a": 2, "h": 6, "w": 2}]


def _m(nodes, inputs, outs, inits=(), opset=17):
    m = model(nodes, inputs, outs, inits, opset=opset)
    m.ir_version = 10
    return m


@pytest.mark.parametrize("opset", [1, 11, 13, 28])
def test_depth_to_space_and_back(opset):
    inputs = [("x", F, ["a", 8, "h", "w"])]
    nodes = [helper.make_node("DepthToSpace", ["x"], ["d"], blocksize=2),
             helper.make_node("SpaceToDepth", ["x"], ["s"], blocksize=2)]
    if opset >= 11:
        nodes.append(helper.make_node("DepthToSpace", ["x"], ["crd"], blocksize=2, mode="CRD"))
    outs = [n.output[0] for n in nodes]
    res = check(_m(nodes, inputs, outs, opset=opset), random_cases(inputs, HW))
    no_fresh(res)
    a, h, w = dims.sym("a"), dims.sym("h"), dims.sym("w")
    assert res.shape("d") == (a, 2, 2 * h, 2 * w)
    assert res.shape("s") == (a, 32, h // 2, w // 2)


def test_col2im():
    inputs = [("x", F, ["a", 12, 20])]  # C=3, block 2x2, image 5x6 -> L = 4*5
    inits = [init("img", np.array([5, 6], np.int64)), init("blk", np.array([2, 2], np.int64))]
    nodes = [helper.make_node("Col2Im", ["x", "img", "blk"], ["y"])]
    res = check(_m(nodes, inputs, ["y"], inits, opset=18), random_cases(inputs, [{"a": 1}, {"a": 3}]))
    no_fresh(res)
    assert res.shape("y") == (dims.sym("a"), 3, 5, 6)


@pytest.mark.parametrize("opset", [16, 20, 22])
def test_grid_sample(opset):
    inputs = [("x", F, ["a", 3, "h", "w"]), ("g", F, ["a", "p", "q", 2])]
    nodes = [helper.make_node("GridSample", ["x", "g"], ["y"])]
    outs = ["y"]
    if opset >= 20:  # N-D from opset 20
        inputs += [("v", F, ["a", 2, "h", "w", 3]), ("g3", F, ["a", "p", 2, "q", 3])]
        nodes.append(helper.make_node("GridSample", ["v", "g3"], ["y3"]))
        outs.append("y3")
    sizes = [{"a": 1, "h": 4, "w": 5, "p": 2, "q": 3}, {"a": 2, "h": 3, "w": 3, "p": 4, "q": 1}]
    res = check(_m(nodes, inputs, outs, opset=opset), random_cases(inputs, sizes))
    no_fresh(res)


def test_affine_grid():
    inputs = [("t", F, ["a", 2, 3]), ("t3", F, ["a", 3, 4]), ("x", F, ["a", 3, "h", "w"])]
    nodes = [helper.make_node("Shape", ["x"], ["sz"]),
             helper.make_node("AffineGrid", ["t", "sz"], ["g"]),
             helper.make_node("AffineGrid", ["t3", "sz5"], ["g3"], align_corners=1)]
    inits = [init("sz5", np.array([2, 1, 3, 4, 5], np.int64))]
    # the 3-D grid's batch comes from size: a = 2 there, and onnxruntime needs theta's batch to be
    # size's, so the model runs at a = 2 only (a is pinned, in g too)
    res = check(_m(nodes, inputs, ["g", "g3"], inits, opset=20),
                random_cases(inputs, [{"a": 2, "h": 4, "w": 6}, {"a": 2, "h": 5, "w": 1}]))
    no_fresh(res)
    assert res.shape("g") == (2, dims.sym("h"), dims.sym("w"), 2)
    assert res.shape("g3") == (2, 3, 4, 5, 3)


@pytest.mark.parametrize("opset", [9, 11, 22])
def test_max_unpool(opset):
    # indices 1..4 are valid positions in every output below
    inputs = [("x", F, ["a", 2, "h", "w"]), ("i", I64, ["a", 2, "h", "w"]), ("ref", F, ["a", 2, "p", "q"])]
    attrs = dict(kernel_shape=[2, 3], strides=[2, 2], pads=[0, 1, 1, 0])
    nodes = [helper.make_node("MaxUnpool", ["x", "i"], ["u"], **attrs),
             helper.make_node("MaxUnpool", ["x", "i"], ["u1"], kernel_shape=[3, 2])]
    nodes += [helper.make_node("Shape", ["ref"], ["rs"]),
              helper.make_node("MaxUnpool", ["x", "i", "rs"], ["uo"], **attrs)]
    outs = ["u", "u1", "uo"]
    sizes = [{"a": 1, "h": 2, "w": 3, "p": 4, "q": 6}, {"a": 2, "h": 3, "w": 1, "p": 7, "q": 4}]
    res = check(_m(nodes, inputs, outs, opset=opset), random_cases(inputs, sizes))
    no_fresh(res)
    h, w = dims.sym("h"), dims.sym("w")
    assert res.shape("u") == (dims.sym("a"), 2, 2 * h - 1, 2 * w)
    assert res.shape("uo") == (dims.sym("a"), 2, dims.sym("p"), dims.sym("q"))


def test_max_roi_pool():
    inputs = [("x", F, ["a", 3, "h", "w"])]
    inits = [init("r", np.array([[0, 0, 0, 2, 2], [0, 1, 1, 3, 3]], np.float32))]
    nodes = [helper.make_node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[2, 3])]
    res = check(_m(nodes, inputs, ["y"], inits, opset=10), random_cases(inputs, HW))
    no_fresh(res)
    assert res.shape("y") == (2, 3, 2, 3)
    # opset 22 (new types only): neither onnxruntime nor onnx's reference evaluator runs it;
    # the spec gives Y = (num_rois, C, pooled_h, pooled_w)
    m = _m(nodes, inputs + [("rr", F, ["n", 5])], ["y"], opset=22)
    m.graph.node[0].input[1] = "rr"
    assert onnxsym.infer(m).shape("y") == (dims.sym("n"), 3, 2, 3)


@pytest.mark.parametrize("opset", [10, 16, 22])
def test_roi_align(opset):
    inputs = [("x", F, ["a", 3, "h", "w"])]
    inits = [init("r", np.array([[0, 0, 2, 2], [1, 1, 3, 3], [0, 1, 2, 3]], np.float32)),
             init("bi", np.zeros(3, np.int64))]
    nodes = [helper.make_node("RoiAlign", ["x", "r", "bi"], ["y"], output_height=2, output_width=4),
             helper.make_node("RoiAlign", ["x", "r", "bi"], ["yd"])]
    # opset 22 (new types only) has no onnxruntime kernel: onnx's reference evaluator runs it
    res = check(_m(nodes, inputs, ["y", "yd"], inits, opset=opset), random_cases(inputs, HW),
                run=run_reference if opset >= 22 else run_ort)
    no_fresh(res)
    assert res.shape("y") == (3, 3, 2, 4) and res.shape("yd") == (3, 3, 1, 1)


@pytest.mark.parametrize("opset", [19, 22])
def test_deform_conv(opset):
    inputs = [("x", F, ["a", 2, "h", "w"]), ("off", F, ["a", 18, "oh", "ow"])]
    inits = [init("wt", np.ones((4, 2, 3, 3), np.float32))]
    nodes = [helper.make_node("DeformConv", ["x", "wt", "off"], ["y"], strides=[2, 1], pads=[1, 0, 1, 0],
                              dilations=[1, 2])]
    # offsets must be (N, 2*kh*kw, oh, ow): oh = (h + 2 - 3)//2 + 1, ow = w - 4
    sizes = [{"a": 1, "h": h, "w": w, "oh": (h - 1) // 2 + 1, "ow": w - 4} for h, w in [(5, 6), (6, 9), (9, 5)]]
    res = check(_m(nodes, inputs, ["y"], inits, opset=opset), random_cases(inputs, sizes))
    no_fresh(res)
    # the dilated kernel is 5 wide: w is at least 5 (h, padded by 2, at least 3: no news)
    h, w = dims.sym("h"), dims.sym("w", 5)
    assert res.shape("y") == (dims.sym("a"), 4, (h - 1) // 2 + 1, w - 4)


def test_causal_conv_with_state():
    inputs = [("x", F, ["a", 4, "n"]), ("past", F, ["a", 4, 2])]
    inits = [init("wt", np.ones((4, 1, 3), np.float32)), init("b", np.zeros(4, np.float32))]
    nodes = [helper.make_node("CausalConvWithState", ["x", "wt", "b", "past"], ["y", "st"], activation="silu"),
             helper.make_node("CausalConvWithState", ["x", "wt"], ["y0", "st0"])]
    # opset 27: no onnxruntime kernel; onnx's reference evaluator runs it
    res = check(_m(nodes, inputs, ["y", "st", "y0", "st0"], inits, opset=27),
                random_cases(inputs, [{"a": 1, "n": 1}, {"a": 2, "n": 5}]), run=run_reference)
    no_fresh(res)
    assert res.shape("st") == (dims.sym("a"), 4, 2)


def test_missing_required_attribute_names_the_node():
    inputs = [("x", F, ["a", 8, "h", "w"])]
    m = _m([helper.make_node("DepthToSpace", ["x"], ["d"], name="d2s")], inputs, ["d"], opset=13)
    with pytest.raises(onnxsym.InvalidModel, match="d2s.*the required attribute 'blocksize' is missing"):
        onnxsym.infer(m)
