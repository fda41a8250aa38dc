"""com.microsoft.nchwc: a small CNN rewritten by onnxruntime's NchwcTransformer
(ORT_ENABLE_ALL, saved with optimized_model_filepath) resolves fully and onnxsym.commands.verify
(which runs the saved model as written, optimizations off) finds no wrong dim. The block
size is the machine's, so the test only requires what every machine with NCHWc kernels
writes: the blocked Conv and the reorders."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxsym
from onnxsym import dims
from onnxsym.commands.verify import verify
from onnxsym.errors import VerificationError

ort = pytest.importorskip("onnxruntime")
F = TensorProto.FLOAT


def _w(rng, name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)


def _cnn():
    """NHWC input (a Transpose the transformer folds into ReorderInput), 16- and 32-channel
    convs, a 20-channel conv (padded to the block size), pools, a 2x nearest resize."""
    rng = np.random.default_rng(0)
    n = helper.make_node
    nodes = [
        n("Transpose", ["x"], ["xt"], perm=[0, 3, 1, 2]),
        n("Conv", ["xt", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], dilations=[2, 2]),
        n("MaxPool", ["c2"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
        n("AveragePool", ["p1"], ["p2"], kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER"),
        n("Resize", ["p2", "", "sc"], ["u1"], mode="nearest", coordinate_transformation_mode="asymmetric",
          nearest_mode="floor"),
        n("Conv", ["u1", "w3", "b3"], ["c3"], kernel_shape=[1, 1]),
        n("Conv", ["c3", "w4"], ["c4"], kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]),
        n("GlobalAveragePool", ["c3"], ["g1"]),
        n("GlobalMaxPool", ["p2"], ["g2"]),
        n("Conv", ["xt", "w5"], ["c5"], kernel_shape=[3, 3], pads=[0, 1, 0, 1]),
        n("Conv", ["img", "w6", "b6"], ["c6"], pads=[1, 1, 1, 1], strides=[2, 2]),
        n("Relu", ["c6"], ["y6"]),
    ]
    inits = [_w(rng, "w1", 32, 16, 3, 3), _w(rng, "b1", 32), _w(rng, "w2", 32, 32, 3, 3), _w(rng, "b2", 32),
             _w(rng, "w3", 16, 32, 1, 1), _w(rng, "b3", 16), _w(rng, "w4", 20, 16, 3, 3),
             _w(rng, "w5", 48, 16, 3, 3), _w(rng, "w6", 16, 3, 3, 3), _w(rng, "b6", 16),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")]
    vi = helper.make_tensor_value_info
    g = helper.make_graph(nodes, "cnn", [vi("x", F, ["n", "h", "w", 16]), vi("img", F, ["n", 3, "h", "w"])],
                          [helper.make_empty_tensor_value_info(o) for o in ("c4", "g1", "g2", "c5", "y6")],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _resnet():
    """A ResNet-like stem and block: 7x7 stride-2 conv with batch norm (folded), a residual
    Add (fused into the blocked Conv's Sum input), a channel Concat, a grouped conv,
    a 2x resize, pools and a classifier."""
    rng = np.random.default_rng(1)
    n = helper.make_node
    nodes = [n("Conv", ["x", "w0", "b0"], ["a0"], pads=[3, 3, 3, 3], strides=[2, 2]),
             n("BatchNormalization", ["a0", "g", "be", "mu", "var"], ["bn"]), n("Relu", ["bn"], ["r0"]),
             n("MaxPool", ["r0"], ["p0"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             n("Conv", ["p0", "w1"], ["a1"], pads=[1, 1, 1, 1]), n("Relu", ["a1"], ["r1"]),
             n("Conv", ["r1", "w2"], ["a2"], pads=[1, 1, 1, 1]), n("Add", ["a2", "p0"], ["s1"]),
             n("Relu", ["s1"], ["r2"]),
             n("Conv", ["r2", "w3"], ["a3"], strides=[2, 2], pads=[1, 1, 1, 1]),
             n("Conv", ["r2", "w4"], ["a4"], strides=[2, 2]),
             n("Concat", ["a3", "a4"], ["cat"], axis=1), n("Sigmoid", ["cat"], ["sg"]),
             n("Conv", ["sg", "w5"], ["a5"], group=4, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             n("Resize", ["a5", "", "sc"], ["up"], mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor"),
             n("AveragePool", ["up"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
             n("GlobalAveragePool", ["ap"], ["gap"]), n("Flatten", ["gap"], ["fl"]),
             n("Gemm", ["fl", "wf"], ["y"], transB=1)]
    inits = [_w(rng, "w0", 16, 3, 7, 7), _w(rng, "b0", 16), _w(rng, "g", 16), _w(rng, "be", 16), _w(rng, "mu", 16),
             numpy_helper.from_array(np.ones(16, np.float32), "var"), _w(rng, "w1", 16, 16, 3, 3),
             _w(rng, "w2", 16, 16, 3, 3), _w(rng, "w3", 32, 16, 3, 3), _w(rng, "w4", 16, 16, 1, 1),
             _w(rng, "w5", 48, 12, 3, 3), _w(rng, "wf", 10, 48),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")]
    g = helper.make_graph(nodes, "resnet", [helper.make_tensor_value_info("x", F, ["n", 3, "h", "w"])],
                          [helper.make_empty_tensor_value_info(o) for o in ("y", "cat")], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _optimized(tmp_path, build=_cnn):
    src, dst = tmp_path / "cnn.onnx", tmp_path / "cnn_nchwc.onnx"
    onnx.save(build(), src)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = str(dst)
    so.log_severity_level = 3
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    return onnx.load(dst)


@pytest.mark.parametrize("build,least_dims", [(_cnn, 40), (_resnet, 150)])
def test_an_nchwc_rewritten_cnn_resolves_and_verifies(tmp_path, build, least_dims):
    m = _optimized(tmp_path, build)
    ops = {n.op_type for n in m.graph.node if n.domain == "com.microsoft.nchwc"}
    if not ops:
        pytest.skip("this machine's MLAS has no NCHWc kernels: the transformer wrote nothing to check")
    assert {"Conv", "ReorderInput", "ReorderOutput"} <= ops, ops
    res = onnxsym.infer(m)
    assert res.unresolved() == [], res.unresolved()
    sizes = [{"n": 1, "h": 17, "w": 9}, {"n": 2, "h": 32, "w": 21}, {"n": 3, "h": 29, "w": 40}]
    report = verify(m, sizes, result=res)
    assert report.mismatches == [] and report.unresolved_dims == 0
    assert report.checked_dims > least_dims


def test_reorder_output_reads_the_real_channel_count():
    """The shapes that ReorderOutput and Upsample give by their kernels' definition, checked
    on a hand-built blocked graph in onnxruntime (16 channels: a multiple of every block size)."""
    n = helper.make_node
    nodes = [n("ReorderInput", ["x"], ["b"], domain="com.microsoft.nchwc"),
             n("Upsample", ["b"], ["u"], domain="com.microsoft.nchwc", scales=[1, 1, 3, 2]),
             n("ReorderOutput", ["u"], ["y"], domain="com.microsoft.nchwc", channels=16, channels_last=1),
             n("ReorderInput", ["y"], ["b2"], domain="com.microsoft.nchwc", channels_last=1),
             n("ReorderOutput", ["b2"], ["y2"], domain="com.microsoft.nchwc", channels=13)]
    vi = helper.make_tensor_value_info
    g = helper.make_graph(nodes, "g", [vi("x", F, ["n", 16, "h", "w"])],
                          [helper.make_empty_tensor_value_info(o) for o in ("y", "y2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft.nchwc", 1)])
    m.ir_version = 8
    res = onnxsym.infer(m)
    nn, h, w = (dims.sym(s) for s in "nhw")
    assert res.shape("y") == (nn, 3 * h, 2 * w, 16) and res.shape("y2") == (nn, 13, 3 * h, 2 * w)
    try:
        report = verify(m, [{"n": 1, "h": 3, "w": 5}, {"n": 2, "h": 4, "w": 7}], result=res)
    except VerificationError as e:  # a machine without NCHWc kernels
        pytest.skip(str(e))
    assert report.mismatches == [] and report.checked_dims >= 8


def test_nchwc_rules_take_inputs_of_unknown_shape_and_never_guess_the_block():
    """Inputs an unknown op produced give unknown outputs, never a failure; a channel count
    that is not a multiple of 16 gets a fresh symbol in [C, C + 15] (the machine's block)."""
    n = helper.make_node
    ops = ["Conv", "MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool", "ReorderInput", "ReorderOutput",
           "Upsample"]
    nodes = [n("Mystery", ["x"], ["u"], domain="my.ops"), n("ReorderInput", ["x"], ["r"], domain="com.microsoft.nchwc")]
    nodes += [n(op, ["u", "u"][:2 if op == "Conv" else 1], [f"y_{op}"], domain="com.microsoft.nchwc",
                **({"kernel_shape": [2, 2]} if "Pool" in op and "Global" not in op else {})) for op in ops]
    vi = helper.make_tensor_value_info
    g = helper.make_graph(nodes, "g", [vi("x", F, ["n", 20, "h", "w"])],
                          [helper.make_empty_tensor_value_info(o) for o in ["r"] + [f"y_{op}" for op in ops]])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft.nchwc", 1),
                                            helper.make_opsetid("my.ops", 1)])
    res = onnxsym.infer(m)
    assert [w for w in res.warnings if "rule failed" in w] == []
    c = res.shape("r")[1]
    with res.env:
        assert dims.range_of(c) == (20, 35)
    assert res.shape("r")[2:] == (dims.sym("h"), dims.sym("w"))
    assert [u.axis for u in res.unresolved() if u.value == "r"] == [1]


@pytest.mark.parametrize("name", ["cnn_tiny_ts", "cnn_tiny_dynamo", "vit_tiny_ts"])
def test_real_exports_at_ort_enable_all_resolve_and_verify(tmp_path, name):
    """The repository's torch exports as onnxruntime writes them at ORT_ENABLE_ALL: blocked
    convs, pools and resizes (and the fused transformer ops of the ViT)."""
    import os

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    so.log_severity_level = 3
    ort.InferenceSession(os.path.join(os.path.dirname(__file__), "..", "models", name + ".onnx"), so,
                         providers=["CPUExecutionProvider"])
    m = onnx.load(so.optimized_model_filepath)
    if not any(n.domain == "com.microsoft.nchwc" for n in m.graph.node):
        pytest.skip("this machine's MLAS has no NCHWc kernels")
    res = onnxsym.infer(m)
    assert res.unresolved() == [], res.unresolved()
    report = verify(m, result=res)
    assert report.mismatches == [] and report.unresolved_dims == 0 and report.checked_dims > 80
