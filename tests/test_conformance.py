"""onnx's node suite against onnxruntime (tests/conformance.py): a fixed slice of ops in the
fast tier, every case in the slow one; 0 wrong dims, 0 domain disagreements outside KNOWN."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxsym
from tests import conformance
from tests.domain_boundary import run

SLICE = {"PRelu", "DFT", "Relu", "MatMul", "Transpose"}


def _failures(outcomes):
    return [(o.case, o.wrong[:1], o.too_wide[:1], o.too_narrow[:1], o.moved_wrong[:1])
            for o in outcomes if conformance._failing(o) and not conformance.known(o.op)]


def test_slice_agrees_with_onnxruntime():
    outcomes = conformance.sweep([n for n, _ in conformance.cases(SLICE)], jobs=1)
    assert sum(o.tries for o in outcomes) > 100  # the domain half ran
    assert sum(o.skipped is None for o in outcomes) > 20
    assert _failures(outcomes) == []


# Function bodies' cases, one per root cause fixed: Attention's GQA head repeat (a Where on the
# sizes), the causal conv's grouped Conv and bias, AffineGrid's gather in an If branch.
BODIES = ["test_attention_4d_gqa_expanded", "test_causal_conv_with_state_with_bias_expanded",
          "test_affine_grid_2d_expanded"]


def test_function_bodies_agree_with_onnxruntime():
    outcomes = conformance.sweep(BODIES, jobs=1)
    assert all(o.tries for o in outcomes)
    assert [(o.case, o.too_wide[:1], o.too_narrow[:1], o.moved_wrong[:1], o.wrong[:1])
            for o in outcomes if conformance._failing(o)] == []


@pytest.mark.slow
def test_every_case_agrees_with_onnxruntime():
    assert _failures(conformance.sweep([n for n, _ in conformance.cases()], jobs=2)) == []


def _model(op, inputs, output_rank, opset, **attrs):
    ins = [helper.make_tensor_value_info(n, et, s) for n, et, s in inputs]
    node = helper.make_node(op, [n for n, _, _ in inputs], ["y"], **attrs)
    g = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("x, slope", [(2, 1), (1, 3), (3, 3)])
def test_prelu_broadcasts_both_ways(x, slope):
    """onnxruntime broadcasts the slope into X and X into the slope."""
    m = _model("PRelu", [("x", TensorProto.FLOAT, [2, "n"]), ("s", TensorProto.FLOAT, ["k"])], 2, 16)
    res = onnxsym.infer(m)
    b = {"n": x, "k": slope}
    assert res.domain().violated(b) is None
    err, shapes = run(m, res, b)
    assert err is None
    assert shapes["y"] == tuple(onnxsym.dims.evaluate(d, b) for d in res.shape("y"))


def test_prelu_refuses_what_does_not_broadcast():
    m = _model("PRelu", [("x", TensorProto.FLOAT, [2, "n"]), ("s", TensorProto.FLOAT, ["k"])], 2, 16)
    res = onnxsym.infer(m)
    b = {"n": 2, "k": 3}
    assert res.domain().violated(b) is not None
    assert run(m, res, b)[0] is not None


@pytest.mark.parametrize("last", [1, 2, 3, 4])
def test_dft_last_axis_is_one_or_two(last):
    m = _model("DFT", [("x", TensorProto.FLOAT, [1, 8, "c"])], 3, 17, axis=1)
    res = onnxsym.infer(m)
    b = {"c": last}
    err, shapes = run(m, res, b)
    assert (res.domain().violated(b) is None) == (err is None), err
    if err is None:
        assert shapes["y"] == tuple(onnxsym.dims.evaluate(d, b) for d in res.shape("y"))


@pytest.mark.parametrize("n, last", [(3, 2), (6, 2), (1, 2), (4, 1)])
def test_dft_inverse_onesided_is_a_real_signal(n, last):
    """onnxruntime's IRFFT: a complex half spectrum [.., n, 2] gives [.., 2 * (n - 1), 1]."""
    m = _model("DFT", [("x", TensorProto.FLOAT, [2, "n", "c"])], 3, 17, axis=1, inverse=1, onesided=1)
    res = onnxsym.infer(m)
    b = {"n": n, "c": last}
    err, shapes = run(m, res, b)
    assert (res.domain().violated(b) is None) == (err is None), err
    if err is None:
        assert shapes["y"] == tuple(onnxsym.dims.evaluate(d, b) for d in res.shape("y"))


def _einsum(eq, shapes):
    ins = [(f"x{i}", TensorProto.FLOAT, s) for i, s in enumerate(shapes)]
    return _model("Einsum", ins, 0, 12, equation=eq)


@pytest.mark.parametrize("eq, shapes, b", [
    ("ii->i", [["a", "b"]], {"a": 3, "b": 3}), ("ii->i", [["a", "b"]], {"a": 3, "b": 1}),
    ("ii->i", [["a", "b"]], {"a": 1, "b": 3}), ("...ii->...i", [[2, "a", "b"]], {"a": 2, "b": 3}),
    ("...i,...i->...i", [["a", 3], ["b", 3]], {"a": 1, "b": 4}),
    ("...i,...i->...i", [["a", 3], ["b", 3]], {"a": 2, "b": 4}),
    ("ij,jk->ik", [[2, "a"], ["b", 4]], {"a": 1, "b": 3})])
def test_einsum_domain_is_onnxruntimes(eq, shapes, b):
    """A repeated label needs equal dims; "..." dims and letters across operands broadcast."""
    m = _einsum(eq, shapes)
    res = onnxsym.infer(m)
    err, out = run(m, res, b)
    assert (res.domain().violated(b) is None) == (err is None), err
    if err is None:
        assert out["y"] == tuple(onnxsym.dims.evaluate(d, b) for d in res.shape("y"))


def test_einsum_ellipses_of_different_ranks_are_refused():
    m = _einsum("...i,...i->...i", [[2, 2, "a"], [4, "a"]])
    with pytest.raises(Exception, match="ellipses"):
        onnxsym.infer(m)
    static = _einsum("...i,...i->...i", [[2, 2, 3], [4, 3]])
    feeds = {"x0": np.ones((2, 2, 3), np.float32), "x1": np.ones((4, 3), np.float32)}
    with pytest.raises(Exception, match="Ellipsis"):
        conformance._session(static).run(None, feeds)


def _agrees(m, b):
    res = onnxsym.infer(m)
    err, out = run(m, res, b)
    assert (res.domain().violated(b) is None) == (err is None), (b, err, res.domain().violated(b))
    if err is None:
        assert out["y"] == tuple(onnxsym.dims.evaluate(d, b) for d in res.shape("y"))


@pytest.mark.parametrize("c, k", [(1, 3), (2, 3), (1, 2)])
def test_conv_transpose_channels_and_kernel(c, k):
    """X[1] is W[0]; W's spatial dims are kernel_shape."""
    m = _model("ConvTranspose", [("x", TensorProto.FLOAT, [1, "c", 4]), ("w", TensorProto.FLOAT, [1, 2, "k"])],
               3, 17, kernel_shape=[3])
    _agrees(m, {"c": c, "k": k})


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_conv_transpose_output_shape_within_reach(n):
    """output_shape [11] at stride 3, kernel 3: onnxruntime runs while 3 * (n - 1) + 3 + 2 >= 11."""
    m = _model("ConvTranspose", [("x", TensorProto.FLOAT, [1, 1, "n"]), ("w", TensorProto.FLOAT, [1, 1, 3])],
               3, 17, strides=[3], output_shape=[11])
    _agrees(m, {"n": n})


@pytest.mark.parametrize("k", [3, 4])
def test_conv_kernel_shape_is_the_weights(k):
    m = _model("Conv", [("x", TensorProto.FLOAT, [1, 1, 6]), ("w", TensorProto.FLOAT, [1, 1, "k"])],
               3, 17, kernel_shape=[3])
    _agrees(m, {"k": k})


@pytest.mark.parametrize("b, oc, os_", [(1, 4, 3), (2, 4, 3), (1, 2, 3), (1, 4, 2)])
def test_deform_conv_offset_batch_channels_and_size(b, oc, os_):
    """The offset has X's batch, offset_group * 2 * prod(kernel) channels, the output's size."""
    m = _model("DeformConv", [("x", TensorProto.FLOAT, [1, 1, 4, 1]), ("w", TensorProto.FLOAT, [1, 1, 2, 1]),
                              ("o", TensorProto.FLOAT, ["b", "oc", "os", 1])], 4, 19)
    _agrees(m, {"b": b, "oc": oc, "os": os_})
