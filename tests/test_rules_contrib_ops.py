"""Rules of rules/contrib_norm.py, rules/contrib_misc.py and rules/contrib_quant.py.

Ops with an onnxruntime CPU kernel are checked against onnxruntime at several sizes;
CUDA-only ops against the shapes in onnxruntime's operator docs (said per test)."""


import numpy as np
import pytest
from helpers import I32, I64, MS, U8, F, init, model, ms_node
from onnx import TensorProto, helper
from oracle import check, random_cases

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

b, s, p = (dims.sym(n) for n in ("b", "s", "p"))
SIZES = [{"b": 2, "s": 3, "p": 4}, {"b": 1, "s": 5, "p": 2}]
I8, I16 = TensorProto.INT8, TensorProto.INT16


def run(nodes, inputs, outputs, inits=(), sizes=SIZES, fixed=None, opset=17, fresh_ok=()):
    return check(model(nodes, inputs, outputs, inits, opset, opsets=[(MS, 1)]),
                 random_cases(inputs, sizes, fixed, ints=(0, 3)),
                 fresh_ok=fresh_ok)


def infer(nodes, inputs, outputs, inits=()):
    return onnxsym.infer(model(nodes, inputs, outputs, inits, opsets=[(MS, 1)]))


def vec(name, n, value=0.0):
    return init(name, np.full(n, value, np.float32))


def scalar(name, value, dtype):
    return init(name, np.array(value, dtype))


Q = [scalar("sc", 0.1, np.float32), scalar("zp", 3, np.uint8)]


# --------------------------------------------------------------------------- norms


def test_skip_layer_norms_and_their_optional_outputs():
    inputs = [("x", F, ["b", "s", 8]), ("k", F, ["b", "s", 8]), ("k1", F, [1, "s", 8]), ("k2", F, ["s", 8])]
    inits = [vec("g", 8, 1.0), vec("be", 8), vec("bias", 8)]
    nodes = [ms_node("SkipLayerNormalization", ["x", "k", "g", "be", "bias"], ["y", "mean", "inv", "sum"]),
             ms_node("SkipLayerNormalization", ["x", "k1", "g"], ["y1"]),
             ms_node("SkipLayerNormalization", ["x", "k2", "g"], ["y2", "", "", "sum2"]),
             ms_node("SkipSimplifiedLayerNormalization", ["x", "k", "g"], ["r", "rmean", "rinv", "rsum"])]
    outs = ["y", "mean", "inv", "sum", "y1", "y2", "sum2", "r", "rmean", "rinv", "rsum"]
    res = run(nodes, inputs, outs, inits)
    assert res.shape("inv") == (b, s, 1) and res.shape("sum2") == (b, s, 8)
    assert res.unresolved() == []


def test_simplified_layer_norm_in_the_onnx_domain():
    inputs = [("x", F, ["b", "s", 2, 4])]
    nodes = [helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y", "inv"], axis=-1),
             helper.make_node("SimplifiedLayerNormalization", ["x", "g8"], ["y2", "inv2"], axis=2)]
    res = run(nodes, inputs, ["y", "inv", "y2", "inv2"], [vec("g", 4, 1.0), init("g8", np.ones((2, 4), np.float32))])
    assert res.shape("inv2") == (b, s, 1, 1)


def test_contrib_layer_norm_before_opset_17():
    """onnxruntime's own LayerNormalization schema (ONNX domain, before ONNX had one)."""
    inputs = [("x", F, ["b", "s", 2, 4])]
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "be"], ["y", "mean", "inv"], axis=2)]
    res = run(nodes, inputs, ["y", "mean", "inv"], [init("g", np.ones((2, 4), np.float32)),
                                                   init("be", np.zeros((2, 4), np.float32))], opset=13)
    assert res.shape("mean") == (b, s, 1, 1)


def test_embed_layer_norm():
    ids = lambda sz: np.ones((sz["b"], sz["s"]), np.int32)  # noqa: E731
    inputs = [("ids", I32, ["b", "s"]), ("seg", I32, ["b", "s"]), ("mask", I32, ["b", "s"])]
    inits = [init("we", np.ones((10, 8), np.float32)), init("pe", np.ones((16, 8), np.float32)),
             init("se", np.ones((2, 8), np.float32)), vec("g", 8, 1.0), vec("be", 8)]
    nodes = [ms_node("EmbedLayerNormalization", ["ids", "seg", "we", "pe", "se", "g", "be", "mask"], ["y", "mi", "es"]),
             ms_node("EmbedLayerNormalization", ["ids", "", "we", "pe", "", "g", "be"], ["y2", "mi2"])]
    res = run(nodes, inputs, ["y", "mi", "es", "y2", "mi2"], inits, fixed={"ids": ids, "seg": ids, "mask": ids})
    assert res.shape("y") == (b, s, 8) and res.shape("mi") == (b,) and res.values["mi"].dtype == I32


def test_group_norms():
    """CUDA only (GroupNorm, SkipGroupNorm): Y and S have the input's shape (docs)."""
    inputs = [("x", F, ["b", "h", "w", 8]), ("skip", F, ["b", 8])]
    nodes = [ms_node("GroupNorm", ["x", "g", "be"], ["y"], groups=2, activation=0),
             ms_node("SkipGroupNorm", ["x", "g", "be", "skip"], ["y2", "sum"], groups=2, activation=1)]
    res = infer(nodes, inputs, ["y", "y2", "sum"], [vec("g", 8, 1.0), vec("be", 8)])
    hw = (b, dims.sym("h"), dims.sym("w"), 8)
    assert res.shape("y") == hw and res.shape("sum") == hw


# --------------------------------------------------------------------------- activations, fused ops


def test_gelus_keep_shape():
    inputs = [("x", F, ["b", "s", 8])]
    nodes = [ms_node("BiasGelu", ["x", "bias"], ["y1"]), ms_node("FastGelu", ["x", "bias"], ["y2"]),
             ms_node("FastGelu", ["x"], ["y3"]), ms_node("Gelu", ["x"], ["y4"]),
             ms_node("QuickGelu", ["x"], ["y5"], alpha=1.702)]
    res = run(nodes, inputs, ["y1", "y2", "y3", "y4", "y5"], [vec("bias", 8)])
    assert res.shape("y5") == (b, s, 8)


def test_cuda_only_activations():
    """CUDA only (BiasSplitGelu, BiasAdd, GemmFastGelu): shapes from onnxruntime's docs."""
    inputs = [("x", F, ["b", "s", 8]), ("skip", F, ["b", "s", 8]), ("a", F, ["s", 4]), ("w", F, [4, "p"])]
    nodes = [ms_node("BiasSplitGelu", ["x", "bias"], ["y1"]), ms_node("BiasAdd", ["x", "bias", "skip"], ["y2"]),
             ms_node("GemmFastGelu", ["a", "w"], ["y3"])]
    res = infer(nodes, inputs, ["y1", "y2", "y3"], [vec("bias", 8)])
    assert res.shape("y1") == (b, s, 4) and res.shape("y2") == (b, s, 8) and res.shape("y3") == (s, p)


@pytest.mark.parametrize("attrs,a,bm", [
    (dict(transA=1, alpha=0.5), ["b", 4, "s"], [4, "p"]),
    (dict(transBatchA=1), ["s", "b", 3, 4], ["b", 3, 4, "p"]),
    (dict(transBatchB=1, transB=1), ["b", 3, "s", 4], ["p", "b", 3, 4]),
    (dict(transBatchB=1), ["b", 3, "s", 4], [4, "b", 3, "p"]),
    (dict(transBatchA=1, transA=1, transBatchB=1), [4, 2, "s", 3], [4, 2, 1, "p"]),
])
def test_fused_matmul(attrs, a, bm):
    inputs = [("a", F, a), ("bm", F, bm)]
    res = run([ms_node("FusedMatMul", ["a", "bm"], ["y"], **attrs)], inputs, ["y"])
    assert res.shape("y")[-1] == p and res.unresolved() == []


def test_transpose_matmul_fused_gemm_fused_conv():
    inputs = [("a", F, ["b", "s", 4]), ("bm", F, ["p", 4]), ("g", F, [4, "s"]), ("x", F, ["b", 3, "s", "p"])]
    nodes = [ms_node("TransposeMatMul", ["a", "bm"], ["y1"], transB=1),
             ms_node("FusedGemm", ["g", "gb", "c"], ["y2"], transA=1, activation="Relu"),
             ms_node("FusedConv", ["x", "w"], ["y3"], activation="Relu", strides=[2, 2], pads=[1, 1, 1, 1])]
    inits = [init("gb", np.ones((4, 5), np.float32)), vec("c", 5), init("w", np.ones((5, 3, 3, 3), np.float32))]
    res = run(nodes, inputs, ["y1", "y2", "y3"], inits)
    assert res.shape("y3") == (b, 5, (s + 1) // 2, (p + 1) // 2)


def test_nhwc_conv():
    """CUDA only: X (N, H, W, C), W (M, kH, kW, C/group) -> (N, oH, oW, M) (docs and the
    NhwcConv fusion, which transposes the weight with perm [0, 2, 3, 1])."""
    inputs = [("x", F, ["b", "s", "p", 3])]
    nodes = [ms_node("NhwcConv", ["x", "w"], ["y"], strides=[2, 1], pads=[1, 0, 1, 0])]
    res = infer(nodes, inputs, ["y"], [init("w", np.ones((5, 3, 2, 3), np.float32))])
    # a Conv needs p at least its kernel, 2
    assert res.shape("y") == (b, (s - 1) // 2 + 1, dims.sym("p", 2) - 1, 5)


def test_moe_keeps_the_input_shape():
    inputs = [("x", F, ["b", 8]), ("x3", F, [1, "b", 8]), ("router", F, ["b", 2])]
    inits = [init("fc1", np.ones((2, 6, 8), np.float32)), init("fc2", np.ones((2, 8, 6), np.float32))]
    nodes = [ms_node("MoE", ["x", "router", "fc1", "", "fc2"], ["y"], k=1, activation_type="relu"),
             ms_node("MoE", ["x3", "router", "fc1", "", "fc2"], ["y3"], k=1, activation_type="relu"),
             ms_node("QMoE", ["x16", "router", "q1", "s1", "", "q2", "s2"], ["yq"], k=1, activation_type="relu",
                     expert_weight_bits=4)]
    inits += [init("q1", np.ones((2, 16, 8), np.uint8)), init("s1", np.ones((2, 16), np.float32)),
              init("q2", np.ones((2, 16, 8), np.uint8)), init("s2", np.ones((2, 16), np.float32))]
    inputs.append(("x16", F, ["b", 16]))
    res = run(nodes, inputs, ["y", "y3", "yq"], inits)
    assert res.shape("y3") == (1, b, 8)


def test_small_contrib_ops():
    inputs = [("x", F, ["b", "s"]), ("z", F, ["p", "s"])]
    nodes = [ms_node("ExpandDims", ["x", "ax"], ["y1"]), ms_node("CDist", ["x", "z"], ["y2"]),
             ms_node("Range", ["r0", "r1"], ["y3"]), ms_node("Range", ["r0", "r1", "r2"], ["y4"]),
             ms_node("Inverse", ["sq"], ["y5"]), ms_node("Trilu", ["x"], ["y6"], upper=0)]
    inits = [scalar("ax", -1, np.int32), scalar("r0", 2, np.int64), scalar("r1", 9, np.int64),
             scalar("r2", 3, np.int64), init("sq", np.eye(3, dtype=np.float32))]
    res = run(nodes, inputs, ["y1", "y2", "y3", "y4", "y5", "y6"], inits)
    assert res.shape("y1") == (b, s, 1) and res.shape("y2") == (b, p)
    assert res.shape("y3") == (7,) and res.shape("y4") == (3,)


# --------------------------------------------------------------------------- quantized


def test_qlinear_elementwise_concat_and_qdq():
    inputs = [("a", U8, ["b", "s", 4]), ("c", U8, ["s", 1]), ("cond", TensorProto.BOOL, [1, "s", 4]),
              ("f", F, ["b", "s"])]
    q3 = ["sc", "zp"]
    nodes = [ms_node("QLinearAdd", ["a", *q3, "c", *q3, *q3], ["y1"]),
             ms_node("QLinearMul", ["a", *q3, "c", *q3, *q3], ["y2"]),
             ms_node("QLinearSigmoid", ["a", *q3, *q3], ["y3"]),
             ms_node("QLinearLeakyRelu", ["a", *q3, *q3], ["y4"], alpha=0.1),
             ms_node("QLinearSoftmax", ["a", *q3, *q3], ["y5"], axis=-1, opset=13),
             ms_node("QLinearConcat", [*q3, "a", *q3, "a", *q3], ["y6"], axis=1),
             ms_node("QLinearWhere", ["cond", "a", *q3, "c", *q3, *q3], ["y7"]),
             ms_node("QuantizeLinear", ["f", *q3], ["y8"]), ms_node("DequantizeLinear", ["a", *q3], ["y9"])]
    outs = ["y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8", "y9"]
    res = run(nodes, inputs, outs, Q)
    assert res.shape("y6") == (b, 2 * s, 4)
    assert res.values["y8"].dtype == U8 and res.values["y9"].dtype == F


def test_qlinear_pools_and_nhwc_conv():
    inputs = [("x", U8, ["b", 3, "s", "p"]), ("xl", U8, ["b", "s", "p", 3])]
    q = ["sc", "zp"]
    nodes = [ms_node("QLinearAveragePool", ["x", *q, *q], ["y1"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
             ms_node("QLinearAveragePool", ["xl", *q, *q], ["y2"], kernel_shape=[2, 3], strides=[2, 1],
                     pads=[1, 1, 0, 0], channels_last=1),
             ms_node("QLinearGlobalAveragePool", ["x", *q, *q], ["y3"], channels_last=0),
             ms_node("QLinearGlobalAveragePool", ["xl", *q, *q], ["y4"], channels_last=1),
             ms_node("QLinearConv", ["xl", *q, "w", *q, *q], ["y5"], channels_last=1, strides=[2, 1],
                     pads=[1, 1, 1, 1])]
    sizes = [{"b": 2, "s": 5, "p": 6}, {"b": 1, "s": 8, "p": 3}, {"b": 1, "s": 4, "p": 4}]
    res = run(nodes, inputs, ["y1", "y2", "y3", "y4", "y5"], Q + [init("w", np.ones((5, 3, 2, 4), np.uint8))], sizes,
              fresh_ok=("y1",))
    assert res.shape("y4") == (b, 1, 1, 3) and res.shape("y5")[3] == 5
    # (the ceil_mode pool y1 may stay fresh: that is the ONNX pool rule's call)
    assert {u.value for u in res.unresolved()} <= {"y1"}


def test_qlinear_reduce_mean():
    """CUDA/other EPs only: the ReduceMean shape with the axes and keepdims attributes."""
    q = ["sc", "zp"]
    nodes = [ms_node("QLinearReduceMean", ["a", *q, *q], ["y1"], axes=[1], keepdims=0),
             ms_node("QLinearReduceMean", ["a", *q, *q], ["y2"], axes=[-1, 0], keepdims=1)]
    res = infer(nodes, [("a", U8, ["b", "s", 4])], ["y1", "y2"], Q)
    assert res.shape("y1") == (b, 4) and res.shape("y2") == (1, s, 1)


def test_integer_matmuls():
    inputs = [("a16", I16, ["b", "s", 4]), ("b16", I16, [4, "p"]), ("f", F, ["b", "s", 4]), ("u", U8, ["b", "s", 4]),
              ("q2", U8, ["s", 4])]
    inits = [init("w8", np.ones((4, 6), np.int8)), scalar("ws", 0.1, np.float32), scalar("as", 0.1, np.float32),
             scalar("az", 1, np.uint8), init("wq", np.ones((6, 4), np.uint8)), *Q]
    nodes = [ms_node("MatMulInteger16", ["a16", "b16"], ["y1"]),
             ms_node("DynamicQuantizeMatMul", ["f", "w8", "ws"], ["y2"]),
             ms_node("MatMulIntegerToFloat", ["u", "w8", "as", "ws", "az"], ["y3"]),
             ms_node("QGemm", ["q2", "sc", "zp", "wq", "sc", "zp", "", "sc", "zp"], ["y4"], transB=1),
             ms_node("QGemm", ["q2", "sc", "zp", "wq", "sc", "zp"], ["y5"], transB=1)]
    res = run(nodes, inputs, ["y1", "y2", "y3", "y4", "y5"], inits)
    assert res.values["y1"].dtype == I32 and res.values["y3"].dtype == F
    assert res.values["y4"].dtype == U8 and res.values["y5"].dtype == F
    assert res.shape("y4") == (s, 6)


def test_matmul_nbits_and_gather_block_quantized():
    inputs = [("a", F, ["b", "s", 32]), ("idx", I64, ["b", "s"])]
    inits = [init("bq", np.ones((6, 2, 8), np.uint8)), init("sc", np.ones((6, 2), np.float32)),
             init("data", np.ones((10, 16), np.uint8)), init("dsc", np.ones((10, 2), np.float32)),
             init("data8", np.ones((10, 32), np.uint8)), init("dsc8", np.ones((10, 1), np.float32)),
             helper.make_tensor("data4", TensorProto.INT4, [4, 16], np.ones(64, np.int8)),
             init("dsc4", np.ones((4, 1), np.float32))]
    nodes = [ms_node("MatMulNBits", ["a", "bq", "sc"], ["y1"], K=32, N=6, bits=4, block_size=16),
             ms_node("GatherBlockQuantized", ["data", "idx", "dsc"], ["y2"], gather_axis=0, quantize_axis=1,
                     block_size=16, bits=4),
             ms_node("GatherBlockQuantized", ["data8", "idx", "dsc8"], ["y3"], gather_axis=0, quantize_axis=1,
                     block_size=32, bits=8),
             ms_node("GatherBlockQuantized", ["data4", "idx", "dsc4"], ["y4"], gather_axis=0, quantize_axis=1,
                     block_size=16)]
    res = run(nodes, inputs, ["y1", "y2", "y3", "y4"], inits,
              fixed={"idx": lambda sz: np.zeros((sz["b"], sz["s"]), np.int64)})
    assert res.shape("y1") == (b, s, 6)
    assert res.shape("y2") == (b, s, 32)  # two 4-bit values per byte
    assert res.shape("y3") == (b, s, 32) and res.shape("y4") == (b, s, 16)  # int4 is not packed in uint8


# --------------------------------------------------------------------------- the rest of the CPU contrib set


def test_image_and_pool_ops():
    inputs = [("x", F, ["b", 3, "s", "p"]), ("grid", F, ["b", 4, 5, 2]), ("xl", U8, ["b", "s", "p", 3]),
              ("m", I32, ["b", 3, "s", "p"])]
    nodes = [ms_node("GridSample", ["x", "grid"], ["y1"]),
             ms_node("CropAndResize", ["x", "rois", "bi", "crop"], ["y2"]),
             ms_node("MaxpoolWithMask", ["x", "m"], ["y3"], kernel_shape=[2, 2], strides=[2, 2]),
             ms_node("NhwcMaxPool", ["xl"], ["y4"], kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 0])]
    inits = [init("rois", np.array([[0, 0, 1, 1], [0, 0, 0.5, 0.5]], np.float32)), init("bi", np.zeros(2, np.int32)),
             init("crop", np.array([3, 4], np.int32))]
    sizes = [{"b": 2, "s": 4, "p": 6}, {"b": 1, "s": 7, "p": 3}]
    res = run(nodes, inputs, ["y1", "y2", "y3", "y4"], inits, sizes, fixed={"m": lambda sz: np.ones(
        (sz["b"], 3, sz["s"], sz["p"]), np.int32)})
    assert res.shape("y1") == (b, 3, 4, 5) and res.shape("y2") == (2, 3, 3, 4)
    assert res.unresolved() == []


def test_hash_ngram_block_and_mrope():
    pos3 = lambda sz: np.tile(np.arange(sz["s"]), (3, sz["b"], 1)).astype(np.int64)  # noqa: E731
    inputs = [("ids", I64, ["b", "s"]), ("scores", F, ["b", 10]), ("h", I32, ["b", "s"]),
              ("x", F, ["b", "s", 16]), ("pos", I64, [3, "b", "s"])]
    inits = [init("cos", np.ones((16, 4), np.float32)), init("sin", np.zeros((16, 4), np.float32))]
    nodes = [ms_node("MurmurHash3", ["h"], ["y1"], positive=0),
             ms_node("NGramRepeatBlock", ["ids", "scores"], ["y2"], ngram_size=2),
             ms_node("MRotaryEmbedding", ["x", "pos", "cos", "sin"], ["y3"], num_heads=2, mrope_section=[2, 1, 1])]
    res = run(nodes, inputs, ["y1", "y2", "y3"], inits, fixed={"pos": pos3})
    assert res.values["y1"].dtype == I32 and res.shape("y3") == (b, s, 16)


def test_unfold_gather_nd_sample():
    inputs = [("x", F, ["b", "s", 8]), ("idx", I64, ["p", 2])]
    nodes = [ms_node("UnfoldTensor", ["x"], ["y1"], dim=1, size=2, step=2),
             ms_node("UnfoldTensor", ["x"], ["y2"], size=3),
             ms_node("GatherND", ["x", "idx"], ["y3"]), ms_node("SampleOp", ["x"], ["y4"])]
    sizes = [{"b": 2, "s": 5, "p": 3}, {"b": 3, "s": 8, "p": 1}]
    res = run(nodes, inputs, ["y1", "y2", "y3", "y4"], sizes=sizes,
              fixed={"idx": lambda sz: np.zeros((sz["p"], 2), np.int64)})
    assert res.shape("y1") == (b, (s - 2) // 2 + 1, 8, 2) and res.shape("y3") == (p, 8)


def test_unique_count_is_fresh_and_bounded():
    inputs = [("x", F, [6]), ("xs", F, ["s"])]
    nodes = [ms_node("Unique", ["x"], ["y", "idx", "cnt"]), ms_node("Unique", ["xs"], ["ys", "idxs", "cnts"])]
    res = run(nodes, inputs, ["y", "idx", "cnt", "ys", "idxs"], fresh_ok=("y", "cnt", "ys"))
    assert res.shape("idx") == (6,) and res.shape("idxs") == (s,)
    (k,) = dims.free_symbols(res.shape("y")[0])
    assert res.shape("cnt") == res.shape("y") and res.symbol_ranges()[k.name] == (0, 6)


def test_cuda_only_misc_ops():
    """CUDA only: shapes from onnxruntime's docs."""
    inputs = [("x", F, ["b", "s", 8]), ("g", F, ["b", "s", 16]), ("w", F, [10, 8]), ("idx", I64, ["b", "s"]),
              ("i8", I8, ["b", "s", 4]), ("i8b", I8, [1, 4]), ("q", F, ["b", 2, "s", 4]), ("emb", F, ["b", "s", 4])]
    nodes = [ms_node("SwiGLU", ["g"], ["y1"]), ms_node("SwiGLU", ["x", "x"], ["y2"]),
             ms_node("TorchEmbedding", ["w", "idx"], ["y3"]), ms_node("ComplexMul", ["x", "x"], ["y4"]),
             ms_node("MulInteger", ["i8", "", "i8b"], ["y5"]), ms_node("IsAllFinite", ["x", "g"], ["y6"]),
             ms_node("ReduceSumInteger", ["i8"], ["y7"], axes=[2], keepdims=1),
             ms_node("GemmaRotaryEmbedding", ["emb", "q", "q", "q", "q"], ["y8", "y9"]),
             ms_node("ScaledSiLU", ["x"], ["y10"])]
    res = infer(nodes, inputs, ["y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8", "y9", "y10"])
    assert res.shape("y1") == (b, s, 8) and res.shape("y2") == (b, s, 8) and res.shape("y3") == (b, s, 8)
    assert res.shape("y5") == (b, s, 4) and res.values["y5"].dtype == I32 and res.shape("y6") == ()
    assert res.shape("y7") == (b, s, 1) and res.shape("y9") == (b, 2, s, 4) and res.unresolved() == []


def test_generation_sequences_are_padded_to_max_length():
    """Spec (onnxruntime's BeamSearch/GreedySearch kernels allocate sequences with
    max_length; running them needs a decoder subgraph, not built here)."""
    inputs = [("ids", I32, ["b", "s"]), ("maxl", I32, [1])]
    consts = [init("ml", np.array([20], np.int32)), init("one", np.array([1], np.int32)),
              init("two", np.array([2], np.int32))]
    nodes = [ms_node("BeamSearch", ["ids", "ml", "", "two", "two"], ["seq", "sc"], eos_token_id=0, pad_token_id=0),
             ms_node("GreedySearch", ["ids", "ml"], ["gseq"], eos_token_id=0, pad_token_id=0),
             ms_node("GreedySearch", ["ids", "maxl"], ["gseq2"], eos_token_id=0, pad_token_id=0)]
    res = infer(nodes, inputs, ["seq", "sc", "gseq", "gseq2"], consts)
    assert res.shape("seq") == (b, 2, 20) and res.shape("sc") == (b, 2) and res.shape("gseq") == (b, 20)
    assert [(u.value, u.axis) for u in res.unresolved()] == [("gseq2", 1)]


def test_every_contrib_rule_takes_inputs_of_unknown_shape():
    """Inputs that an unknown op produced: outputs may be unknown, but no rule may fail."""
    from onnxsym import registry, rules  # noqa: F401  (registers the rules)

    ops = sorted(op for (domain, op) in registry.registered_ops() if domain == "com.microsoft")
    assert len(ops) > 90
    attrs = dict(num_heads=2, kv_num_heads=1, axis=1, axes=[0], keepdims=1, kernel_shape=[2, 2], N=4, K=8,
                 block_size=16, size=2, sparse_block_size=16, groups=1, activation=0, max_distance=4, ngram_size=2,
                 heads=2, n_groups=1, q_num_heads=2, max_ngram_size=3, n_head_per_ngram=1, Nq=4, Nkv=4,
                 token_budget=4, compress_ratio=2, max_output_entries=4)
    unknown = [helper.make_node("Mystery", ["x"], [f"i{k}"], domain="my.ops") for k in range(9)]
    nodes = unknown + [ms_node(op, [f"i{k}" for k in range(9)], [f"{op}_{k}" for k in range(4)], **attrs)
                       for op in ops]
    m = model(nodes, [("x", F, ["b"])], [f"{ops[0]}_0"], opsets=[(MS, 1)])
    m.opset_import.append(helper.make_opsetid("my.ops", 1))
    res = onnxsym.infer(m)
    assert [w for w in res.warnings if "rule failed" in w] == []
