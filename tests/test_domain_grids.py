"""Ops whose domain was too wide (issue 21, found by attacking after it): a Pad in edge, reflect
or wrap mode whose negative pads crop what it copies from, a Resize whose ``sizes`` give a
scale of 0 or one its linear or cubic kernels refuse, an Expand to a negative size. On a
grid of sizes the domain holds exactly where onnxruntime runs, and where it runs every
output dim is the inferred one; a model that runs at no size is refused."""

import itertools
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym
from onnxsym import dims
from onnxsym.cli import main
from tests.domain_boundary import feeds
from tests.helpers import init, model

F = T.FLOAT


def _session(m):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _grid(symbols, sizes):
    return [dict(zip(symbols, v)) for v in itertools.product(sizes, repeat=len(symbols))]


def check_grid(m, grid, allow_zero=False):
    """Every size of ``grid``: in the domain exactly where onnxruntime runs, with the inferred
    output dims there; a model onnxsym refuses runs at none of them. Returns how many ran."""
    sess = _session(m)
    try:
        result = onnxsym.infer(m, allow_zero=allow_zero)
    except onnxsym.errors.ShapeContradiction:
        for b in grid:
            with pytest.raises(Exception):
                sess.run(None, feeds(SimpleNamespace(model=m), b))
        return 0
    domain = result.domain()
    ran = 0
    for b in grid:
        try:
            outs = sess.run(None, feeds(result, b))
        except Exception as exc:  # noqa: BLE001 - onnxruntime's refusal is what is compared
            assert domain.violated(b) is not None, f"{b}: the domain holds, onnxruntime fails: {str(exc)[:200]}"
            continue
        assert domain.violated(b) is None, f"{b}: onnxruntime runs, the domain says {domain.violated(b)}"
        for o, arr in zip(result.model.graph.output, outs):
            assert tuple(dims.evaluate(d, b) for d in result.shape(o.name)) == arr.shape, (b, o.name)
        ran += 1
    return ran


@pytest.mark.parametrize("start,end,step", [(-1, 1, -1), (-1, -1000, -1), (1000, 0, -2), (2, -5, -1), (-2, 0, -3)])
def test_a_negative_step_slice_of_a_dim_that_may_be_empty(start, end, step):
    """x[2:-1] (empty for n <= 3) sliced with a negative step: a closed form at every size, 0
    where the dim is (it was an unknown, so a pin through it was missed: [2:-1][-1:1:-1]
    concatenated with ones[1, 1, 3] runs at n == 7 only)."""
    c = [init(f"c{i}", np.array([v], np.int64)) for i, v in enumerate([2, -1, 2, 1, start, end, 2, step])]
    m = model([h.make_node("Slice", ["x", "c0", "c1", "c2", "c3"], ["t"]),
               h.make_node("Slice", ["t", "c4", "c5", "c6", "c7"], ["y"])], [("x", F, [1, 1, "n"])], ["y"], c)
    assert not onnxsym.infer(m).unresolved()
    assert check_grid(m, _grid(["n"], range(1, 14))) == 13


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap", "constant"])
@pytest.mark.parametrize("shape,axis", [(["n"], 0), (["n", 2], 0), ([2, "n"], 1)])
def test_pad_cropped_by_negative_pads(mode, shape, axis):
    """onnxruntime copies edge, reflect and wrap padding from what the negative pads leave: it
    refuses that empty, and reflect mirrors inside it (each pad at most its length - 1)."""
    ran = 0
    for begin, end in [(-1, 0), (0, -2), (-1, 1), (-2, 2), (1, -1), (2, -1), (-1, -1), (3, 0), (-3, 3)]:
        pads = [0] * (2 * len(shape))
        pads[axis], pads[axis + len(shape)] = begin, end
        m = model([h.make_node("Pad", ["x", "p"], ["y"], mode=mode)], [("x", F, shape)], ["y"],
                  [init("p", np.array(pads, np.int64))], opset=19)
        ran += check_grid(m, _grid(["n"], range(1, 8)))
    assert ran > 20


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap", "constant"])
@pytest.mark.parametrize("shape", [["n"], ["a", "b"], [2, "b"]])
def test_pad_of_an_input_that_may_be_empty(mode, shape):
    """With sizes that may be 0 onnxruntime pads an empty input apart: edge and reflect refuse
    to give length to an empty axis, wrap refuses any empty input (even unpadded), and what they
    need of the extent the negative pads leave holds only where the input is not empty. (The
    domain was too wide: edge by [-1, 2] at n = 1, wrap at a = 0; and too narrow: reflect by 1
    on b = 1 at a = 0.)"""
    symbols = [d for d in shape if isinstance(d, str)]
    ran = 0
    for begin, end in [(0, 0), (1, 0), (0, 1), (-1, 1), (-1, 2), (0, -1), (3, -1), (-2, 3), (0, 5), (-1, -1)]:
        pads = [0] * (2 * len(shape))
        pads[len(shape) - 1], pads[2 * len(shape) - 1] = begin, end
        if len(shape) > 1 and begin == end == 0:
            pads[0] = 1  # (and the first axis padded)
        m = model([h.make_node("Pad", ["x", "p"], ["y"], mode=mode)], [("x", F, shape)], ["y"],
                  [init("p", np.array(pads, np.int64))], opset=19)
        ran += check_grid(m, _grid(symbols, range(0, 7)), allow_zero=True)
    assert ran > 20


@pytest.mark.parametrize("form", ["Pad-2", "com.microsoft"])
@pytest.mark.parametrize("mode", ["edge", "reflect"])
def test_pad_of_an_input_that_may_be_empty_pads_as_an_attribute_or_contrib(form, mode):
    """The same where the pads are an attribute (Pad-2) or onnxruntime's contrib Pad's input."""
    pads = [0, -2, 0, 3]
    if form == "Pad-2":
        m = model([h.make_node("Pad", ["x"], ["y"], mode=mode, pads=pads)], [("x", F, ["a", "b"])], ["y"], opset=2)
    else:
        m = model([h.make_node("Pad", ["x", "p"], ["y"], mode=mode, domain="com.microsoft")], [("x", F, ["a", "b"])],
                  ["y"], [init("p", np.array(pads, np.int64))], opsets=[("com.microsoft", 1)])
    assert check_grid(m, _grid(["a", "b"], range(0, 7)), allow_zero=True) > 5


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("shape,sizes", [
    (["b", 1, "h", "w"], [1, 1, 4, 4]), ([1, "c", "h", "w"], [1, 3, 4, 4]), (["b", "c", 3, 3], [1, 2, 4, 3]),
    (["b", "c", "h", "w"], [1, 2, 4, 4]), (["b", "c", "h"], [2, 2, 4]), ([1, 1, "h", 2], [1, 1, 3, 2])])
def test_resize_sizes_give_scales_onnxruntime_accepts(mode, shape, sizes):
    """onnxruntime derives each scale as sizes[i] / X[i] in float32: it refuses one of 0, and its
    linear (4-D, 5-D) and cubic (4-D) kernels need the outer scales 1, cubic without antialias
    the inner ones >= 1 where the channel scale is not 1."""
    m = model([h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode=mode)], [("x", F, shape)], ["y"],
              [init("sz", np.array(sizes, np.int64))], opset=13)
    symbols = sorted({d for d in shape if isinstance(d, str)})
    check_grid(m, _grid(symbols, [1, 2, 3, 4, 5]))


@pytest.mark.parametrize("axes,sizes", [([2, 3], [4, 4]), ([1, 2], [2, 4])])
def test_resize_sizes_on_some_axes(axes, sizes):
    """From opset 18 ``axes`` names the resized axes; the others keep a scale of 1."""
    m = model([h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="cubic", axes=axes)],
              [("x", F, ["b", "c", "h", "w"])], ["y"], [init("sz", np.array(sizes, np.int64))], opset=18)
    assert check_grid(m, _grid(["b", "c", "h", "w"], [1, 2, 3])) > 0


def test_resize_sizes_of_0_and_a_linear_batch_scale_are_refused():
    """sizes 0 for a dim that is at least 1, or a linear batch scale of 2: no size runs."""
    zero = model([h.make_node("Resize", ["x", "", "", "sz"], ["y"])], [("x", F, [1, 1, "h", 2])], ["y"],
                 [init("sz", np.array([1, 1, 0, 2], np.int64))], opset=13)
    doubled = model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Mul", ["s", "k"], ["sz"]),
                     h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear")],
                    [("x", F, ["b", "c", "h", "w"])], ["y"], [init("k", np.array([2, 1, 2, 2], np.int64))], opset=13)
    for m, symbols in ((zero, ["h"]), (doubled, ["b", "c", "h", "w"])):
        with pytest.raises(onnxsym.errors.ShapeContradiction):
            onnxsym.infer(m)
        assert check_grid(m, _grid(symbols, [1, 2, 3])) == 0


def test_an_expand_to_0_of_a_size_that_may_be_0_reads_as_a_range():
    """[n] expanded to [0] runs where n is 0 or 1: the domain said "n <= 1 or n % 1 in {}"."""
    m = model([h.make_node("Expand", ["x", "t"], ["y"])], [("x", F, ["n"])], ["y"], [init("t", np.array([0], np.int64))])
    result = onnxsym.infer(m, allow_zero=True)
    assert [c.text for c in result.domain().conditions] == ["n <= 1"]
    assert check_grid(m, _grid(["n"], range(0, 5)), allow_zero=True) == 2


def test_expand_to_a_negative_size():
    """A 1 expanded to -1 was written as a dim of -1; onnxruntime fails at every size. To a
    computed ``n - 5`` it needs n >= 5 (against a dim m it broadcasts with, too)."""
    neg = model([h.make_node("Expand", ["x", "t"], ["y"])], [("x", F, ["n", 1])], ["y"],
                [init("t", np.array([-1, 1], np.int64))])
    with pytest.raises(onnxsym.errors.ShapeContradiction, match="-1 >= 0"):
        onnxsym.infer(neg)
    assert check_grid(neg, _grid(["n"], [1, 2])) == 0
    for shape in ([1], ["m"]):
        m = model([h.make_node("Shape", ["z"], ["s"]), h.make_node("Sub", ["s", "five"], ["t"]),
                   h.make_node("Expand", ["x", "t"], ["y"])], [("x", F, shape), ("z", F, ["n"])], ["y"],
                  [init("five", np.array([5], np.int64))])
        result = onnxsym.infer(m)
        assert [c.text for c in result.domain().conditions if "Expand" in str(c.sources[0])][:1] == ["n >= 5"]
        if shape == [1]:
            assert check_grid(m, _grid(["n"], range(1, 9))) == 4
        else:  # (m against n - 5: a fresh dim; onnxruntime runs where they broadcast)
            sess = _session(m)
            for n, mm in itertools.product(range(1, 9), (1, 2, 3)):
                try:
                    sess.run(None, feeds(result, {"n": n, "m": mm}))
                except Exception:  # noqa: BLE001
                    continue
                assert n >= 5, (n, mm)


@pytest.mark.parametrize("parts", [2, 3, 4, 5])
@pytest.mark.parametrize("shape", [["n"], [1], [5]])
def test_split_num_outputs_leaves_a_last_part_of_at_least_0(parts, shape):
    """Split-18's num_outputs gives parts of ceil(n / parts), the last the rest: onnxruntime
    refuses it negative (n = 5 in 4 parts: 2, 2, 2, -1, written as a dim of -1 before); a
    static one is refused, a symbolic one is a condition."""
    outs = [f"y{i}" for i in range(parts)]
    m = model([h.make_node("Split", ["x"], outs, num_outputs=parts)], [("x", F, shape)], outs, opset=18)
    check_grid(m, _grid(["n"], range(1, 14)))


def test_what_a_node_needs_of_a_dim_onnxsym_could_not_resolve_is_said(tmp_path):
    """Resize's sizes computed in float32 (``floor(0.3*w)``) are not resolved: onnxruntime fails
    where one is 0 (w < 4), which no condition on the inputs states. The domain says what it
    leaves out, in the text and the JSON, instead of "every size"; a count the data give
    (NonZero's) needs nothing of the sizes and is not listed."""
    m = model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Cast", ["s"], ["sf"], to=F),
               h.make_node("Mul", ["sf", "k"], ["p"]), h.make_node("Floor", ["p"], ["pf"]),
               h.make_node("Cast", ["pf"], ["sz"], to=T.INT64), h.make_node("Resize", ["x", "", "", "sz"], ["y"])],
              [("x", F, [1, 1, "h", "w"])], ["y"], [init("k", np.array([1, 1, 1.7, 0.3], np.float32))], opset=13)
    result = onnxsym.infer(m)
    domain = result.domain()
    assert [src.node for _, src in domain.unstated] == ["Resize_5"] * 4
    assert domain.violated({"h": 3, "w": 1}) is None  # (what it can state holds there)
    with pytest.raises(Exception, match="Scale value should be greater than 0"):
        _session(m).run(None, feeds(result, {"h": 3, "w": 1}))
    assert "not stated" in "\n".join(domain.lines()) and len(domain.to_json()["unstated"]) == 4
    nonzero = model([h.make_node("NonZero", ["x"], ["i"]), h.make_node("Transpose", ["i"], ["y"])],
                    [("x", F, ["n"])], ["y"])
    assert onnxsym.infer(nonzero).domain().unstated == ()
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path)
    out = CliRunner().invoke(main, ["annotate", path, "-o", str(tmp_path / "o.onnx")]).output
    assert "not stated: over a dim onnxsym could not resolve: Resize 'Resize_5': Resize: sizes[0]" in out, out
    out = CliRunner().invoke(main, ["domain", path]).output
    assert out.count("not stated") == 4, out


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("kernel,stride,dilation,outputs", [(1, 2, 1, 1), (2, 3, 1, 1), (1, 3, 1, 2), (3, 1, 2, 1),
                                                            (4, 1, 2, 2), (2, 2, 1, 1)])
@pytest.mark.parametrize("opset", [18, 19])
def test_pool_same_padding(op, auto_pad, kernel, stride, dilation, outputs, opset):
    """SAME pads of a stride past the kernel are negative at some sizes: MaxPool's plain kernel
    refuses them (with dilations or indices, and LpPool, run), and so does AveragePool's before
    opset 19 (x[1, 1, n] with kernel 1, stride 3 runs at n = 1, 4, 7, ... at opset 18, at every
    n at 19); with dilations the output size must not be negative (the pads come from the
    undilated kernel)."""
    if op != "MaxPool" and (dilation > 1 or outputs > 1):
        pytest.skip("dilations and indices are MaxPool's")
    if opset == 18 and dilation > 1:
        pytest.skip("dilations are MaxPool-10's and later: opset 19 covers them")
    attrs = dict(kernel_shape=[kernel], strides=[stride], auto_pad=auto_pad)
    if op == "MaxPool":
        attrs["dilations"] = [dilation]
    outs = ["y", "i"][:outputs]
    for ceil_mode in ((0, 1) if op != "LpPool" else (0,)):
        if op != "LpPool":
            attrs["ceil_mode"] = ceil_mode
        m = model([h.make_node(op, ["x"], outs, **attrs)], [("x", F, [1, 1, "n"])], outs, opset=opset)
        assert check_grid(m, _grid(["n"], range(1, 14))) > 0


def test_a_same_ceil_mode_pool_of_a_dim_whose_range_the_algebra_gives_up_on():
    """x resized by 0.3 then 0.5 (floor(3*n/20), written as a sum of floors) into an AveragePool
    with SAME_LOWER and ceil_mode: the float32 bound needs the pool's size range, which the
    algebra's work bound lost; the SAME pads total kernel - stride to kernel - 1, so it follows
    from the input dim's (it was an unknown, and a Concat after it a condition not stated)."""
    nodes = [h.make_node("Resize", ["x", "", "s3"], ["a"], mode="linear"),
             h.make_node("Resize", ["a", "", "s5"], ["b"], mode="nearest"),
             h.make_node("AveragePool", ["b"], ["y"], auto_pad="SAME_LOWER", ceil_mode=1, kernel_shape=[4], strides=[2])]
    m = model(nodes, [("x", F, [1, 1, "n"])], ["y"], [init("s3", np.array([1, 1, 0.3], np.float32)),
                                                      init("s5", np.array([1, 1, 0.5], np.float32))], opset=18)
    assert not onnxsym.infer(m).unresolved()
    assert check_grid(m, _grid(["n"], range(1, 90))) > 70


def test_conv_and_conv_transpose_what_onnxruntime_refuses():
    """onnxruntime's Conv refuses dilations under SAME padding at every size, and ConvTranspose
    an output_padding not less than the stride; a ConvTranspose whose pads crop its output to
    0 needs a larger input."""
    w = init("w", np.ones((1, 1, 3), np.float32))
    same = model([h.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", dilations=[2])],
                 [("x", F, [1, 1, "n"])], ["y"], [w])
    wide = model([h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[1], dilations=[2], output_padding=[1])],
                 [("x", F, [1, 1, "n"])], ["y"], [w])
    for m in (same, wide):
        with pytest.raises(onnxsym.errors.ShapeContradiction):
            onnxsym.infer(m)
        assert check_grid(m, _grid(["n"], range(1, 6))) == 0
    w1 = init("w", np.ones((1, 1, 1), np.float32))
    crop = model([h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3], pads=[0, 1])],
                 [("x", F, [1, 1, "n"])], ["y"], [w1])
    assert check_grid(crop, _grid(["n"], range(1, 8))) == 6


@pytest.mark.parametrize("op,make,symbols", [
    ("BatchNormalization", lambda: model([h.make_node("BatchNormalization", ["x", "s", "b", "mu", "v"], ["y"])],
                                         [("x", F, [1, "n", 3])] + [(v, F, ["m"]) for v in ("s", "b", "mu", "v")], ["y"]),
     ["n", "m"]),
    ("GroupNormalization", lambda: model([h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
                                         [("x", F, [1, "n", 3]), ("s", F, ["n"]), ("b", F, ["n"])], ["y"], opset=21),
     ["n"]),
    ("NonMaxSuppression", lambda: model([h.make_node("NonMaxSuppression", ["b", "s"], ["y"])],
                                        [("b", F, ["n", "m", 4]), ("s", F, ["m", 1, "n"])], ["y"]), ["n", "m"]),
    ("Det", lambda: model([h.make_node("Det", ["x"], ["y"])], [("x", F, [2, "n", "m"])], ["y"]), ["n", "m"]),
    ("GridSample", lambda: model([h.make_node("GridSample", ["x", "g"], ["y"])],
                                 [("x", F, ["n", 1, 4, 4]), ("g", F, ["m", 2, 2, 2])], ["y"], opset=16), ["n", "m"]),
    ("STFT", lambda: model([h.make_node("STFT", ["x", "st", "", "fl"], ["y"])], [("x", F, [1, "n", 1])], ["y"],
                           [init("st", np.array(2, np.int64)), init("fl", np.array(4, np.int64))]), ["n"]),
    ("AffineGrid", lambda: model([h.make_node("AffineGrid", ["t", "sz"], ["y"])], [("t", F, ["n", 2, 3])], ["y"],
                                 [init("sz", np.array([2, 1, 3, 4], np.int64))], opset=20), ["n"]),
    ("GatherElements", lambda: model([h.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
                                     [("x", F, ["n", 3]), ("i", T.INT64, ["m", 2])], ["y"]), ["n", "m"]),
    ("ScatterElements", lambda: model([h.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0)],
                                      [("x", F, [3, "n"]), ("i", T.INT64, [2, "m"]), ("u", F, [2, "m"])], ["y"]),
     ["n", "m"]),
    ("Gemm", lambda: model([h.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1)],
                           [("a", F, [2, "n"]), ("b", F, [2, 3]), ("c", F, ["m", 1])], ["y"]), ["n", "m"]),
    ("Gemm", lambda: model([h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)],
                           [("a", F, [2, 2]), ("b", F, ["n", 2]), ("c", F, ["m"])], ["y"]), ["n", "m"]),
    ("LayerNormalization", lambda: model([h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=1)],
                                         [("x", F, [2, "n", 3]), ("s", F, ["m", 1]), ("b", F, [1, 3])], ["y"]),
     ["n", "m"]),
    ("LayerNormalization", lambda: model([h.make_node("LayerNormalization", ["x", "s"], ["y"])],
                                         [("x", F, [2, "n"]), ("s", F, ["m"])], ["y"]), ["n", "m"]),
])
def test_what_an_op_checks_of_its_inputs_against_each_other(op, make, symbols):
    """Conditions the conditions page listed as not learned (or did not list), each a place
    where onnxruntime refuses the node: learned now, so the domain is exact on a grid."""
    assert check_grid(make(), _grid(symbols, [1, 2, 3, 4, 5])) > 0


def test_a_range_of_delta_0_is_refused_and_a_computed_delta_is_said():
    """onnxruntime refuses a Range of delta 0 at every size; a delta computed from the sizes
    (n - 3, 0 at n = 3) leaves the length unresolved, and the domain says what it leaves out."""
    zero = init("z", np.array(0, np.int64))
    m = model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Squeeze", ["s"], ["q"]),
               h.make_node("Range", ["z", "q", "z"], ["y"])], [("x", F, ["n"])], ["y"], [zero])
    with pytest.raises(onnxsym.errors.ShapeContradiction, match="delta is 0"):
        onnxsym.infer(m)
    assert check_grid(m, _grid(["n"], [1, 2, 3])) == 0
    m = model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Squeeze", ["s"], ["q"]),
               h.make_node("Sub", ["q", "three"], ["d"]), h.make_node("Range", ["z", "ten", "d"], ["y"])],
              [("x", F, ["n"])], ["y"], [zero, init("three", np.array(3, np.int64)), init("ten", np.array(10, np.int64))])
    (text, src), = onnxsym.infer(m).domain().unstated
    assert src.op_type == "Range" and "could not see" in text


def test_a_custom_op_of_no_rule_is_said_not_stated():
    """A custom op no rule knows, its output of unknown rank: what it needs is unknown (here
    onnxruntime, without its kernel, refuses the model at every size), so the domain lists it as
    not stated; it read "every size of n" before."""
    import onnxruntime as ort

    m = model([h.make_node("Mystery", ["x"], ["y"], name="m", domain="my.ops")], [("x", F, ["n"])], ["y"],
              opsets=[("my.ops", 1)])
    with pytest.raises(Exception, match="Mystery"):
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    domain = onnxsym.infer(m).domain()
    (text, src), = domain.unstated
    assert domain.conditions == () and src.node == "m" and text == "what it needs of its inputs (no rule for its op)"


@pytest.mark.parametrize("strides,pads,dilations,block", [(1, 0, 1, 2), (2, 1, 1, 3), (3, 0, 2, 2), (1, 1, 3, 2)])
def test_col2im_needs_the_block_count_and_whole_blocks(strides, pads, dilations, block):
    """onnxruntime's Col2Im needs input[1] a positive multiple of prod(block_shape), the padded
    image at least the dilated block, and input[2] the number of sliding blocks (the domain was
    every size: both conditions were not learned)."""
    m = model([h.make_node("Shape", ["z"], ["img"]),
               h.make_node("Col2Im", ["x", "img", "blk"], ["y"], strides=[strides, 1], pads=[pads, 0, pads, 0],
                           dilations=[dilations, 1])],
              [("x", F, [1, "c", "l"]), ("z", F, ["h", 1])], ["y"], [init("blk", np.array([block, 1], np.int64))],
              opset=18)
    grid = [{"c": c, "l": length, "h": height} for c in (block, 2 * block, block + 1) for length in range(1, 7)
            for height in range(1, 8)]
    assert check_grid(m, grid) > 5


@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
@pytest.mark.parametrize("scale,axis,block", [((3,), 1, 0), ((3,), 0, 0), ((1,), 1, 0), ((2, 2), 1, 2), ((3, 1), 0, 2)])
def test_quantize_scale_fits_the_input(op, scale, axis, block):
    """A per-axis scale has X[axis] elements; a blocked one X's shape with ceil(X[axis] / block_size)
    on axis; one element is per tensor. onnxruntime checks it at every run (the domain said every
    size)."""
    attrs = {"axis": axis, **({"block_size": block} if block else {})}
    m = model([h.make_node(op, ["x", "s"], ["y"], **attrs)], [("x", F if op == "QuantizeLinear" else T.UINT8, ["a", "n"])],
              ["y"], [init("s", np.ones(scale, np.float32))], opset=21)
    assert check_grid(m, _grid(["a", "n"], range(1, 7))) > 0
