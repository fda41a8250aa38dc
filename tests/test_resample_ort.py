"""The domain of the sampling and resampling ops against onnxruntime's run/refuse verdict
(issue 34): AffineGrid, GridSample, MaxUnpool, STFT, Resize, Upsample, QLinearConv and
QLinearMatMul, on hand-built models whose graph-input dims are symbols, at sizes on both sides
of each condition onnxruntime checks. onnxruntime runs exactly where the domain holds, and there
with the inferred output shapes (tests/op_verdicts.py)."""

import itertools

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from op_verdicts import disagreements, session

import onnxsym

pytest.importorskip("onnxruntime")


def _model(op, inputs, opset, inits=(), outputs=1, domain="", out_type=T.FLOAT, **attrs):
    """One ``op`` node over ``inputs`` ((name, type, shape); a name of "" is an absent input) and
    the initializers ``inits`` ((name, array)), in the order the node takes them."""
    names = [n for n, *_ in inputs]
    graph_inputs = [h.make_tensor_value_info(n, t, s) for n, t, s in inputs if n and n not in dict(inits)]
    node = h.make_node(op, names, [f"y{i}" for i in range(outputs)], domain=domain, **attrs)
    g = h.make_graph([node], "g", graph_inputs, [h.make_tensor_value_info(f"y{i}", out_type, None) for i in range(outputs)],
                     initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid(domain, opset)])
    m.ir_version = 10
    return m


def _grid(**axes):
    names = sorted(axes)
    return [dict(zip(names, v)) for v in itertools.product(*(axes[n] for n in names))]


def _agrees(m, grid, data=None):
    n, bad = disagreements(m, grid, data)
    assert not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])


def _refused_at_every_size(m, match):
    with pytest.raises(Exception, match=match):
        onnxsym.infer(m)


# --------------------------------------------------------------------------- AffineGrid


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 3, 4, 5, 6]])
def test_affine_grid_theta_is_n_by_spatial_by_spatial_plus_one(size):
    """theta is (N, 2, 3) for a 4-element size, (N, 3, 4) for 5; N is size[0]."""
    m = _model("AffineGrid", [("theta", T.FLOAT, ["n", "r", "c"]), ("size", T.INT64, [len(size)])], 20,
               inits=[("size", np.array(size, np.int64))])
    _agrees(m, _grid(n=[1, 2, 3], r=[1, 2, 3, 4], c=[2, 3, 4, 5]))


def test_affine_grid_refuses_a_size_that_is_not_positive():
    m = _model("AffineGrid", [("theta", T.FLOAT, ["n", 2, 3]), ("size", T.INT64, [4])], 20,
               inits=[("size", np.array([1, 1, 0, 4], np.int64))])
    _refused_at_every_size(m, "positive")


# --------------------------------------------------------------------------- GridSample


@pytest.mark.parametrize("rank, mode", [(4, "linear"), (4, "cubic"), (5, "nearest")])
def test_grid_sample_grid_batch_and_last_dim(rank, mode):
    """The grid has X's batch and a last dim of the spatial rank (2 or 3)."""
    sp = [4] * (rank - 2)
    m = _model("GridSample", [("x", T.FLOAT, ["n", 1, *sp]), ("g", T.FLOAT, ["b", *[3] * (rank - 2), "k"])], 20,
               mode=mode)
    _agrees(m, _grid(n=[1, 2], b=[1, 2], k=[1, 2, 3, 4]))


def test_grid_sample_refuses_cubic_in_3d_and_other_ranks():
    _refused_at_every_size(_model("GridSample", [("x", T.FLOAT, ["n", 1, 4, 4, 4]), ("g", T.FLOAT, ["n", 2, 2, 2, 3])],
                                  20, mode="cubic"), "cubic")
    _refused_at_every_size(_model("GridSample", [("x", T.FLOAT, ["n", 1, 4]), ("g", T.FLOAT, ["n", 2, 1])], 20),
                           "4-D or 5-D")


# --------------------------------------------------------------------------- MaxUnpool


def test_max_unpool_indices_have_x_shape():
    m = _model("MaxUnpool", [("x", T.FLOAT, [1, "c", "w"]), ("i", T.INT64, [1, "d", "v"])], 11,
               kernel_shape=[2], strides=[2])
    _agrees(m, _grid(c=[1, 2], w=[1, 2, 3], d=[1, 2], v=[1, 2, 3]))


@pytest.mark.parametrize("given", [[1, 1, 8], [1, 1, 7], [1, 1, 9], [2, 1, 8], [1, 2, 8]])
def test_max_unpool_output_shape(given):
    """output_shape has X's batch and channels and at least the computed shape's element count
    (onnxruntime compares the counts, not each dim: (1, 1, 2, 8) runs where (1, 1, 4, 4) is computed)."""
    m = _model("MaxUnpool", [("x", T.FLOAT, ["n", "c", "w"]), ("i", T.INT64, ["n", "c", "w"]),
                             ("o", T.INT64, [3])], 11, inits=[("o", np.array(given, np.int64))],
               kernel_shape=[2], strides=[2])
    _agrees(m, _grid(n=[1], c=[1], w=[1, 3, 4, 5]))


def test_max_unpool_output_shape_counts_elements():
    m = _model("MaxUnpool", [("x", T.FLOAT, [1, 1, "h", "w"]), ("i", T.INT64, [1, 1, "h", "w"]),
                             ("o", T.INT64, [4])], 11, inits=[("o", np.array([1, 1, 2, 8], np.int64))],
               kernel_shape=[2, 2], strides=[2, 2])
    _agrees(m, _grid(h=[1, 2, 3], w=[1, 2, 3]))


def test_max_unpool_output_shape_count_over_solved_symbols():
    """The batch and channels solved to output_shape's (n == 1, c == 1): the count condition
    4*n*c*h*w <= 16 is stated over what is left, h*w <= 4 (the domain dropped a condition over a
    symbol solved to a number, keeping only h <= 4 and w <= 4)."""
    m = _model("MaxUnpool", [("x", T.FLOAT, ["n", "c", "h", "w"]), ("i", T.INT64, ["n", "c", "h", "w"]),
                             ("o", T.INT64, [4])], 11, inits=[("o", np.array([1, 1, 4, 4], np.int64))],
               kernel_shape=[2, 2], strides=[2, 2])
    _agrees(m, _grid(n=[1, 2], c=[1], h=[1, 2, 3, 4], w=[1, 2, 3, 4]))


def test_max_unpool_computed_size_is_positive():
    """(w - 1) * 1 + 2 - 2 >= 1: w >= 2."""
    m = _model("MaxUnpool", [("x", T.FLOAT, [1, 1, "w"]), ("i", T.INT64, [1, 1, "w"])], 11,
               kernel_shape=[2], strides=[1], pads=[1, 1])
    _agrees(m, _grid(w=[1, 2, 3]))


def test_max_unpool_refuses_pads_not_below_the_kernel():
    m = _model("MaxUnpool", [("x", T.FLOAT, [1, 1, "w"]), ("i", T.INT64, [1, 1, "w"])], 11,
               kernel_shape=[1], strides=[1], pads=[1, 1])
    _refused_at_every_size(m, "below the kernel")


# --------------------------------------------------------------------------- STFT


@pytest.mark.parametrize("onesided", [0, 1])
def test_stft_signal_last_axis_is_one_or_two(onesided):
    m = _model("STFT", [("s", T.FLOAT, [1, "n", "c"]), ("step", T.INT64, []), ("", 0, None),
                        ("fl", T.INT64, [])], 17, inits=[("step", np.array(2, np.int64)), ("fl", np.array(4, np.int64))],
               onesided=onesided)
    _agrees(m, _grid(n=[3, 4, 16], c=[1, 2, 3, 4]))


def test_stft_window_is_frame_length():
    m = _model("STFT", [("s", T.FLOAT, [1, 16, 1]), ("step", T.INT64, []), ("w", T.FLOAT, ["k"]),
                        ("fl", T.INT64, [])], 17, inits=[("step", np.array(2, np.int64)), ("fl", np.array(4, np.int64))])
    _agrees(m, _grid(k=[1, 3, 4, 5]))


def test_stft_window_only_is_at_most_the_signal():
    m = _model("STFT", [("s", T.FLOAT, [1, "n", 1]), ("step", T.INT64, []), ("w", T.FLOAT, ["k"])], 17,
               inits=[("step", np.array(2, np.int64))])
    _agrees(m, _grid(n=[4, 8], k=[3, 4, 5, 8, 9]))


def test_stft_refuses_a_step_below_one():
    m = _model("STFT", [("s", T.FLOAT, [1, "n", 1]), ("step", T.INT64, []), ("", 0, None), ("fl", T.INT64, [])], 17,
               inits=[("step", np.array(0, np.int64)), ("fl", np.array(4, np.int64))])
    _refused_at_every_size(m, "frame_step")


def test_grid_sample_takes_5d_before_opset_20():
    """A departure from the spec (4-D only before opset 20): onnxruntime's kernel runs 5-D."""
    m = _model("GridSample", [("x", T.FLOAT, ["n", 1, 4, 4, 4]), ("g", T.FLOAT, ["b", 3, 3, 3, "k"])], 16)
    _agrees(m, _grid(n=[1, 2], b=[1, 2], k=[2, 3]))


# --------------------------------------------------------------------------- QLinearMatMul and QLinearConv


def _qmatmul(a, b, params):
    """QLinearMatMul of uint8 a and b with the scales and zero points' shapes ``params``
    (a_scale, a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point)."""
    asc, azp, bsc, bzp, ysc, yzp = params
    return _model("QLinearMatMul", [("a", T.UINT8, a), ("as", T.FLOAT, asc), ("az", T.UINT8, azp), ("b", T.UINT8, b),
                                    ("bs", T.FLOAT, bsc), ("bz", T.UINT8, bzp), ("ys", T.FLOAT, ysc),
                                    ("yz", T.UINT8, yzp)], 10, out_type=T.UINT8)


def test_qlinear_matmul_per_tensor_params_hold_one_element():
    m = _qmatmul([2, 4], [4, 3], (["p"], ["q"], [], [], ["r"], ["s"]))
    _agrees(m, _grid(p=[1, 2], q=[1, 2], r=[1, 3], s=[1, 2]))


@pytest.mark.parametrize("b", [[4, 3], [2, 4, 3]])
def test_qlinear_matmul_b_params_per_column(b):
    """1-D of 1 (or of B[1] for a 2-D B)."""
    m = _qmatmul([2, 4], b, ([], [], ["p"], ["q"], [], []))
    _agrees(m, _grid(p=[1, 2, 3], q=[1, 3, 4]))


def test_qlinear_matmul_b_params_of_b_rank():
    """B's shape with 1 at dim -2: (2, 1, 3) for B (2, 4, 3)."""
    m = _qmatmul([2, 2, 4], [2, 4, 3], ([], [], ["i", "j", "k"], [], [], []))
    _agrees(m, _grid(i=[1, 2, 3], j=[1, 4], k=[1, 3]))


def test_qlinear_matmul_refuses_a_per_tensor_param_of_rank_two():
    _refused_at_every_size(_qmatmul([2, 4], [4, 3], (["p", 1], [], [], [], [], [])), "a_scale has rank 2")


def _qconv(params, bias=None):
    """QLinearConv of X (1, 2, 5, 5) and W (3, 2, 3, 3), the scales' and zero points' shapes ``params``
    (x_scale, x_zero_point, w_scale, w_zero_point, y_scale, y_zero_point), and a bias of shape ``bias``."""
    xsc, xzp, wsc, wzp, ysc, yzp = params
    ins = [("x", T.UINT8, [1, 2, 5, 5]), ("xs", T.FLOAT, xsc), ("xz", T.UINT8, xzp), ("w", T.UINT8, [3, 2, 3, 3]),
           ("ws", T.FLOAT, wsc), ("wz", T.UINT8, wzp), ("ys", T.FLOAT, ysc), ("yz", T.UINT8, yzp)]
    return _model("QLinearConv", ins + ([("b", T.INT32, bias)] if bias is not None else []), 10, out_type=T.UINT8)


def test_qlinear_conv_per_tensor_params_hold_one_element():
    _agrees(_qconv((["p"], ["q"], [], [], ["r"], ["s"])), _grid(p=[1, 2], q=[1, 2], r=[1, 3], s=[1, 2]))


def test_qlinear_conv_w_params_per_channel_and_bias():
    """w_scale and w_zero_point: 1 or M = 3 elements; B exactly M."""
    _agrees(_qconv(([], [], ["p"], ["q"], [], []), bias=["k"]), _grid(p=[1, 2, 3], q=[1, 2, 3], k=[1, 3, 4]))


def test_qlinear_conv_refuses_params_of_rank_two():
    _refused_at_every_size(_qconv(([], [], [1, "p"], [], [], [])), "w_scale has rank 2")
    _refused_at_every_size(_qconv(([], [], [], [], [], []), bias=[1, 3]), "B has rank 2")


# --------------------------------------------------------------------------- Resize and Upsample


def _scales_data(sizes):
    """Scales of 1 (any length: their values run wherever their length does), the roi [0.., 1..]."""
    n, r = sizes.get("s", 4), sizes.get("r", 8)
    return {"scales": np.ones(n, np.float32), "roi": np.array([0] * (r // 2) + [1] * (r - r // 2), np.float32)}


def _agrees_with_data(m, grid):
    for sizes in grid:
        _agrees(m, [sizes], _scales_data(sizes))


@pytest.mark.parametrize("opset, axes", [(10, None), (13, None), (18, [2, 3])])
def test_resize_scales_input_has_one_element_per_axis(opset, axes):
    """A scales graph input: as many elements as X's rank (or the axes)."""
    ins = [("x", T.FLOAT, [1, 1, 2, 2])] + ([] if opset == 10 else [("", 0, None)]) + [("scales", T.FLOAT, ["s"])]
    m = _model("Resize", ins, opset, **({"axes": axes} if axes else {}))
    _agrees_with_data(m, _grid(s=[1, 2, 3, 4, 5]))


def test_upsample_scales_input_has_one_element_per_axis():
    m = _model("Upsample", [("x", T.FLOAT, [1, 1, 2, 2]), ("scales", T.FLOAT, ["s"])], 9)
    _agrees_with_data(m, _grid(s=[1, 3, 4, 5]))


@pytest.mark.parametrize("mode", ["tf_crop_and_resize", "half_pixel"])
def test_resize_roi_has_two_elements_per_axis_under_tf_crop_and_resize(mode):
    m = _model("Resize", [("x", T.FLOAT, [1, 1, 2, 2]), ("roi", T.FLOAT, ["r"]), ("scales", T.FLOAT, [4])], 13,
               inits=[("scales", np.array([1, 1, 2, 2], np.float32))], coordinate_transformation_mode=mode)
    _agrees_with_data(m, _grid(r=[2, 4, 7, 8, 9]))


@pytest.mark.parametrize("op, opset", [("Resize", 13), ("Upsample", 9)])
def test_resize_refuses_constant_scales_of_another_length(op, opset):
    ins = [("x", T.FLOAT, [1, 1, "h", "w"])] + ([("", 0, None)] if op == "Resize" else []) + [("scales", T.FLOAT, [3])]
    m = _model(op, ins, opset, inits=[("scales", np.array([1, 2, 2], np.float32))])
    _refused_at_every_size(m, "scales has 3 elements")
    static = _model(op, [("x", T.FLOAT, [1, 1, 2, 2])] + ins[1:], opset,
                    inits=[("scales", np.array([1, 2, 2], np.float32))])
    with pytest.raises(Exception, match="scales"):  # (onnxruntime refuses it at the sizes the case has)
        session(static).run(None, {"x": np.ones((1, 1, 2, 2), np.float32)})


def test_upsample_7_refuses_a_scales_attribute_of_another_length():
    m = _model("Upsample", [("x", T.FLOAT, [1, 1, "h", "w"])], 7, scales=[1.0, 2.0, 2.0])
    _refused_at_every_size(m, "scales has 3 elements")


@pytest.mark.parametrize("mode, scales, antialias", [
    ("linear", [1, 2, 2, 1], 0), ("linear", [1, 2, 2, 2], 0), ("linear", [2, 1, 1, 1], 1),
    ("cubic", [1, 2, 2, 1], 0), ("cubic", [1, 2, 0.5, 1], 0), ("cubic", [1, 2, 0.5, 1], 1),
    ("cubic", [1, 2, 1, 2], 0), ("nearest", [2, 2, 2, 2], 0)])
def test_resize_constant_scales_of_a_form_the_kernels_take(mode, scales, antialias):
    """Linear and cubic take only some forms of scales (linear 4-D: the outermost 1 and the second or
    innermost; cubic: the outermost two, or the outermost and innermost with the others >= 1 unless
    antialias); onnxruntime refuses the others when it loads the model, and so does onnxsym."""
    m = _model("Resize", [("x", T.FLOAT, ["a", "b", "c", "d"]), ("", 0, None), ("scales", T.FLOAT, [4])], 18,
               inits=[("scales", np.array(scales, np.float32))], mode=mode, antialias=antialias)
    try:
        session(m)
    except Exception as exc:
        assert "Resize" in str(exc)
        _refused_at_every_size(m, f"{mode} mode does not take the scales")
    else:
        _agrees(m, _grid(a=[1, 2], b=[1, 3], c=[1, 2, 5], d=[1, 3]))


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_constant_scales_every_form_as_onnxruntime_loads_it(mode):
    """Every scale vector over {1, 2, 0.5} of ranks 2 to 5 (and 4-D with antialias): onnxsym refuses
    exactly the models onnxruntime refuses to load."""
    differ, n = [], 0
    for r, opset, antialias in [(2, 13, 0), (3, 13, 0), (4, 13, 0), (5, 13, 0), (4, 18, 1)]:
        for scales in itertools.product((1, 2, 0.5), repeat=r):
            m = _model("Resize", [("x", T.FLOAT, [f"d{i}" for i in range(r)]), ("", 0, None), ("scales", T.FLOAT, [r])],
                       opset, inits=[("scales", np.array(scales, np.float32))], mode=mode,
                       **({"antialias": 1} if antialias else {}))
            try:
                session(m)
                loads = True
            except Exception:
                loads = False
            try:
                onnxsym.infer(m)
                infers = True
            except Exception:
                infers = False
            n += 1
            if loads != infers:
                differ.append((scales, antialias, loads))
    assert n > 300 and not differ, differ[:10]


def _resize(opset, scales=None, sizes=None, axes=None, **attrs):
    ins = [("x", T.FLOAT, ["a", "b", "c", "d"])]
    inits = []
    if opset > 10:
        ins.append(("", 0, None))
    for name, v, t in (("scales", scales, np.float32), ("sizes", sizes, np.int64)):
        if v is not None:
            ins.append((name, T.FLOAT if t is np.float32 else T.INT64, [len(v)]))
            inits.append((name, np.array(v, t)))
        elif opset > 10 and name == "scales":
            ins.append(("", 0, None))
    return _model("Resize", ins, opset, inits=inits, **({"axes": axes} if axes else {}), **attrs)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_constant_scales_and_sizes_at_moved_sizes(mode):
    """Every X of dims in {1, 2, 3, 5}: onnxruntime runs exactly where the domain holds (a downscale
    to 0, the float32 products), with the inferred shapes."""
    grid = _grid(a=[1, 2, 3, 5], b=[1, 2, 3, 5], c=[1, 2, 3, 5], d=[1, 2, 3, 5])
    models = [_resize(op, scales=sc, mode=mode) for op in ((13, 19) if mode == "cubic" else (10, 13, 19))
              for sc in ([1, 1, 2, 2], [1, 1, 0.5, 0.5], [1, 1, 0.6, 1.7], [1, 1, 1, 3])]
    models += [_resize(13, sizes=sz, mode=mode) for sz in ([1, 1, 4, 4], [1, 1, 1, 1], [2, 1, 3, 3], [1, 1, 3, 1])]
    models += [_resize(18, sizes=[4, 6], axes=[2, 3], mode=mode, keep_aspect_ratio_policy=p)
               for p in ("not_larger", "not_smaller")]
    for m in models:
        _agrees(m, grid)


def _attack_models():
    """(label, model, sizes) of a wider grid over the conditions above: MaxUnpool 2-D and 3-D with
    strides, pads and output shapes, GridSample's modes and paddings, AffineGrid, STFT windows and
    steps, QLinearMatMul's per-column params of 1-D to 4-D B."""
    for k, s, p in [([2, 2], [2, 2], None), ([3, 3], [1, 2], [1, 1, 1, 1]), ([2, 3], [2, 1], [1, 0, 0, 2]),
                    ([3, 2], [3, 3], [2, 1, 0, 1])]:
        attrs = dict(kernel_shape=k, strides=s, **({"pads": p} if p else {}))
        xi = [("x", T.FLOAT, ["n", "c", "h", "w"]), ("i", T.INT64, ["n", "c", "h", "w"])]
        yield f"unpool {k} {s} {p}", _model("MaxUnpool", xi, 11, **attrs), \
            _grid(n=[1, 2], c=[1, 2], h=[1, 2, 3, 4], w=[1, 2, 3, 4])
        for given in ([1, 1, 4, 4], [1, 1, 2, 8], [1, 1, 9, 1], [2, 1, 4, 4], [1, 1, 6, 6]):
            yield f"unpool {k} {s} {p} {given}", _model("MaxUnpool", xi + [("o", T.INT64, [4])], 11,
                                                        inits=[("o", np.array(given, np.int64))], **attrs), \
                _grid(n=[1, 2], c=[1], h=[1, 2, 3], w=[1, 2, 3])
    yield "unpool 3-D", _model("MaxUnpool", [("x", T.FLOAT, [1, 1, "d", "h", "w"]), ("i", T.INT64, [1, 1, "d", "h", "w"])],
                               11, kernel_shape=[2, 2, 2], strides=[2, 2, 2], pads=[1, 0, 1, 0, 1, 1]), \
        _grid(d=[1, 2, 3], h=[1, 2, 3], w=[1, 2, 3])
    for mode, pad, corners in itertools.product(("linear", "nearest", "cubic"), ("zeros", "border", "reflection"), (0, 1)):
        yield f"GridSample {mode} {pad} {corners}", _model(
            "GridSample", [("x", T.FLOAT, ["n", "c", "h", "w"]), ("g", T.FLOAT, ["b", "p", "q", "k"])], 20, mode=mode,
            padding_mode=pad, align_corners=corners), \
            _grid(n=[1, 2], c=[1, 2], h=[1, 3], w=[1, 2], b=[1, 2], p=[1, 2], q=[2], k=[1, 2, 3])
    for size, corners in itertools.product(([1, 1, 2, 3], [2, 3, 1, 1], [3, 1, 2, 2, 2]), (0, 1)):
        yield f"AffineGrid {size} {corners}", _model(
            "AffineGrid", [("theta", T.FLOAT, ["n", "r", "c"]), ("size", T.INT64, [len(size)])], 20,
            inits=[("size", np.array(size, np.int64))], align_corners=corners), \
            _grid(n=[1, 2, 3], r=[1, 2, 3, 4], c=[1, 2, 3, 4, 5])
    for step, onesided in itertools.product((1, 2, 3), (0, 1)):
        yield f"STFT window {step} {onesided}", _model(
            "STFT", [("s", T.FLOAT, ["b", "n", "c"]), ("step", T.INT64, []), ("w", T.FLOAT, ["k"])], 17,
            inits=[("step", np.array(step, np.int64))], onesided=onesided), \
            _grid(b=[1, 2], n=[1, 3, 4, 7], c=[1, 2, 3], k=[1, 2, 4, 5])
        yield f"STFT 2-D {step} {onesided}", _model(
            "STFT", [("s", T.FLOAT, ["b", "n"]), ("step", T.INT64, []), ("", 0, None), ("fl", T.INT64, [])], 17,
            inits=[("step", np.array(step, np.int64)), ("fl", np.array(3, np.int64))], onesided=onesided), \
            _grid(b=[1, 2], n=[1, 2, 3, 4, 7])
    for a, b, bsc, bzp, sizes in [
            ([2, 4], [4, 3], ["p"], ["q"], _grid(p=[1, 2, 3, 4], q=[1, 2, 3, 4])),
            ([2, 2, 4], [2, 4, 3], ["i", "j", "k"], ["u", "v", "w"], _grid(i=[1, 2], j=[1, 4], k=[1, 3], u=[2], v=[1], w=[3])),
            ([2, 4], [4], ["p"], [], _grid(p=[1, 2, 4])),
            ([2, 4], [4, 3], ["i", "j"], [], _grid(i=[1, 2, 4], j=[1, 3])),
            ([2, 2, 2, 4], [2, 2, 4, 3], ["i", "j", "k", "l"], [], _grid(i=[1, 2], j=[1, 2], k=[1, 4], l=[1, 3]))]:
        yield f"QLinearMatMul {a} {b} {bsc} {bzp}", _qmatmul(a, b, ([], [], bsc, bzp, [], [])), sizes


def test_a_wider_grid_finds_no_disagreement():
    found, total = [], 0
    for label, m, sizes in _attack_models():
        n, bad = disagreements(m, sizes)
        total += n
        found += [f"{label}: {b}" for b in bad[:2]]
    assert total > 5000 and not found, "\n".join(found[:10])


@pytest.mark.parametrize("scale", [0, -1])
def test_resize_refuses_a_constant_scale_not_above_zero(scale):
    m = _model("Resize", [("x", T.FLOAT, ["a", "b", "c", "d"]), ("", 0, None), ("scales", T.FLOAT, [4])], 13,
               inits=[("scales", np.array([1, 1, scale, 1], np.float32))])
    with pytest.raises(Exception, match="greater than 0"):
        session(m)
    _refused_at_every_size(m, "every scale > 0")


def test_resize_11_refuses_neither_scales_nor_sizes():
    m = _model("Resize", [("x", T.FLOAT, [1, 1, "h", "w"]), ("roi", T.FLOAT, [0]), ("scales", T.FLOAT, [0])], 11,
               inits=[("roi", np.zeros(0, np.float32)), ("scales", np.zeros(0, np.float32))])
    _refused_at_every_size(m, "neither scales nor sizes")
    with pytest.raises(Exception, match="scales or sizes"):  # (onnxruntime at the case's sizes)
        session(_model("Resize", [("x", T.FLOAT, [1, 1, 2, 2]), ("roi", T.FLOAT, [0]), ("scales", T.FLOAT, [0])], 11,
                       inits=[("roi", np.zeros(0, np.float32)), ("scales", np.zeros(0, np.float32))])).run(
            None, {"x": np.ones((1, 1, 2, 2), np.float32)})


def test_grid_sample_of_com_microsoft_is_the_standard_kernel():
    """The contrib op runs the same kernel: the same grid batch and last dim; 4-D only (its schema)."""
    def ms(rank):
        m = _model("GridSample", [("x", T.FLOAT, ["n", 1, *[4] * (rank - 2)]),
                                  ("g", T.FLOAT, ["b", *[3] * (rank - 2), "k"])], 1, domain="com.microsoft")
        m.opset_import.append(h.make_opsetid("", 17))
        return m
    _agrees(ms(4), _grid(n=[1, 2], b=[1, 2], k=[1, 2, 3]))
    with pytest.raises(Exception, match="rank 4"):
        session(ms(5))
    _refused_at_every_size(ms(5), "not 4")
