"""Exactness of the Conv, pool, ConvTranspose, Resize/Upsample and Gemm rules of
rules/nn.py: every attribute combination against onnxruntime at many sizes,
including odd ones, inputs shorter than the kernel, and where ceil_mode matters."""

import itertools

import numpy as np
import pytest
from helpers import F, init, model
from onnx import helper
from oracle import check, no_fresh, random_cases

import onnxsym
from onnxsym import dims
from onnxsym.facts.fact import Origin

ort = pytest.importorskip("onnxruntime")

BOUNDED = {"h": (1, 4096)}


def _sizes(lo, hi):
    return [{"h": h} for h in range(lo, hi + 1)]


def _agree(op, attrs, weight=None, opset=19, sizes=range(1, 14)):
    """One node on a (1, 2, h) input: the inferred size equals onnxruntime's at every
    size onnxruntime accepts (it rejects some, e.g. a Conv input shorter than its kernel)."""
    inputs = [("x", F, [1, 2, "h"])]
    inits = [init("w", np.ones(weight, np.float32))] if weight else []
    m = model([helper.make_node(op, ["x", "w"] if weight else ["x"], ["y"], **attrs)], inputs, ["y"], inits,
              opset=opset)
    res = onnxsym.infer(m, ranges=BOUNDED)
    no_fresh(res)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    ran = 0
    for h in sizes:
        try:
            (y,) = sess.run(None, {"x": np.zeros((1, 2, h), np.float32)})
        except Exception:  # noqa: BLE001 - a size this node does not accept
            continue
        ran += 1
        assert onnxsym.evaluate(res.shape("y")[2], {"h": h}) == y.shape[2], (op, attrs, h)
    assert ran, (op, attrs)


PADDINGS = ["VALID", "SAME_UPPER", "SAME_LOWER", (0, 0), (1, 0), (0, 1), (2, 1)]


def _padding(attrs, pad):
    if isinstance(pad, str):
        return dict(attrs, auto_pad=pad)
    return dict(attrs, pads=list(pad))


@pytest.mark.parametrize("ceil_mode", [0, 1])
@pytest.mark.parametrize("op,opset", [("MaxPool", 12), ("AveragePool", 19), ("AveragePool", 11), ("LpPool", 18)])
def test_pool_every_combination(op, opset, ceil_mode):
    dilations = [1] if opset < 12 or (op == "AveragePool" and opset < 19) else [1, 2]
    for k, s, d, pad in itertools.product([1, 2, 3], [1, 2, 3], dilations, PADDINGS):
        if isinstance(pad, tuple) and max(pad) >= k:
            continue  # pads must be smaller than the kernel
        attrs = _padding(dict(kernel_shape=[k], strides=[s], dilations=[d], ceil_mode=ceil_mode), pad)
        if dilations == [1]:
            del attrs["dilations"]
        # sizes from 1: onnxruntime still pools an input shorter than the kernel
        _agree(op, attrs, opset=opset)


def test_conv_every_combination():
    for k, s, d, pad in itertools.product([1, 2, 3], [1, 2, 3], [1, 2], PADDINGS):
        if d > 1 and pad in ("SAME_UPPER", "SAME_LOWER"):
            continue  # onnxruntime refuses dilated SAME convolutions
        _agree("Conv", _padding(dict(strides=[s], dilations=[d]), pad), weight=(3, 2, k))


def test_conv_transpose_every_combination():
    for k, s, d, opad, pad in itertools.product([1, 2, 3], [1, 2, 3], [1, 2], [0, 1], PADDINGS):
        if opad < s:  # onnxruntime wants output_padding below the stride
            _agree("ConvTranspose", _padding(dict(strides=[s], dilations=[d], output_padding=[opad]), pad),
                   weight=(2, 3, k), sizes=range(1, 10))


def test_ceil_mode_of_an_unbounded_dim_records_its_float32_bound():
    inputs = [("x", F, [1, 2, "h"])]
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2], ceil_mode=1),
             helper.make_node("MaxPool", ["x"], ["f"], kernel_shape=[3], strides=[2])]
    m = model(nodes, inputs, ["y", "f"])
    res = check(m, random_cases(inputs, [{"h": 9}, {"h": 10}]))
    assert not res.unresolved()
    assert [str(c) for c in res.constraints] == ["h - 3 <= 16777216"]  # only ceil_mode needs it
    assert onnxsym.evaluate(res.shape("f")[2], {"h": 9}) == 4


def test_ceil_mode_float32_rounding_in_onnxruntime():
    """Why ceil_mode is exact only for bounded dims: at 2**24 + 2 onnxruntime loses one."""
    n = 2 ** 24 + 2
    inputs = [("x", F, [1, 1, "h"])]
    m = model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1], ceil_mode=1)], inputs, ["y"])
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": np.zeros((1, 1, n), np.float32)})
    assert y.shape[2] == n - 1  # the spec says n
    res = onnxsym.infer(m, ranges={"h": (2 ** 24 + 2, 2 ** 25)})
    assert res.unresolved()  # every size in that range is past float32's exact integers
    res = onnxsym.infer(m, ranges={"h": (1, 2 ** 25)})
    assert not res.unresolved() and [c.origin for c in res.constraints] == [Origin.EXACT_WITHIN]
    (bound,) = res.constraints
    assert not bound.holds({"h": n}) and bound.holds({"h": 2 ** 24 - 1})


@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_transpose_output_shape(auto_pad):
    inputs = [("x", F, ["a", 2, 4, 5])]
    inits = [init("w", np.ones((2, 3, 3, 2), np.float32))]
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 3], output_shape=[10, 16],
                              auto_pad=auto_pad),
             helper.make_node("ConvTranspose", ["x", "w"], ["z"], strides=[2, 3], output_shape=[9, 15],
                              auto_pad=auto_pad)]
    res = check(model(nodes, inputs, ["y", "z"], inits), random_cases(inputs, [{"a": 1}, {"a": 2}]))
    no_fresh(res)
    assert res.shape("y") == (dims.sym("a"), 3, 10, 16) and res.shape("z")[2:] == (9, 15)


SCALES = [2.0, 3.0, 1.5, 0.5, 0.25, 0.75, 1.25, 0.7, 0.3, 1 / 3]


@pytest.mark.parametrize("scale", SCALES)
def test_resize_scale_closed_form_or_fresh(scale):
    """Every scale here has a closed form checked against onnxruntime at each size: floor(p*h/q)
    for a short power-of-two fraction, else the simplest fraction giving the same float32 size
    (0.3: floor(3*h/10)); unbounded, it holds up to a bound a real model does not pass, recorded."""
    inputs = [("x", F, [1, 1, "h"])]
    inits = [init("sc", np.array([1, 1, scale], np.float32))]
    m = model([helper.make_node("Resize", ["x", "", "sc"], ["y"])], inputs, ["y"], inits, opset=13)
    sizes = _sizes(1, 40)
    no_fresh(check(m, random_cases(inputs, sizes), ranges=BOUNDED))
    unbounded = onnxsym.infer(m)
    assert not unbounded.unresolved()
    (bound,) = [str(c) for c in unbounded.constraints]
    assert bound.startswith("h <= ") and int(bound[5:]) >= 2 ** 20


@pytest.mark.parametrize("scale,last", [(0.3, 3495262), (0.7, 5991866)])
def test_resize_by_a_scale_near_a_fraction_holds_up_to_its_bound(scale, last):
    """floor(3*h/10) is onnxruntime's float32 size of h times 0.3 up to h = 3495262 (its last
    size where they agree): checked there, and one past it they differ, so the bound is needed."""
    inputs = [("x", F, [1, 1, "h"])]
    inits = [init("sc", np.array([1, 1, scale], np.float32))]
    m = model([helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest")], inputs, ["y"], inits, opset=13)
    res = onnxsym.infer(m)
    assert [str(c) for c in res.constraints] == [f"h <= {last}"]
    (d,) = res.shape("y")[2:]
    import onnxruntime as ort
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for h in (last - 1, last, last + 1):
        got = sess.run(None, {"x": np.zeros((1, 1, h), np.float32)})[0].shape[2]
        want = dims.evaluate(d, {"h": h})
        assert (got == want) == (h <= last), (h, got, want)


def test_resize_static_dims_use_float32():
    # float32(0.7) * 10 rounds to 7.0 in float32 though the exact product is below 7
    inputs = [("x", F, [1, 1, 10, 3])]
    inits = [init("sc", np.array([1, 1, 0.7, 1 / 3], np.float32))]
    m = model([helper.make_node("Resize", ["x", "", "sc"], ["y"])], inputs, ["y"], inits, opset=13)
    res = check(m, random_cases(inputs, [{}]))
    assert res.shape("y") == (1, 1, 7, 1)


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
def test_resize_keep_aspect_ratio_policy(policy):
    inputs = [("x", F, ["a", 3, 7, 5])]
    inits = [init("sz", np.array([4, 9], np.int64))]
    nodes = [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], axes=[2, 3], keep_aspect_ratio_policy=policy),
             helper.make_node("Resize", ["x", "", "", "sz"], ["z"], axes=[3, 2], keep_aspect_ratio_policy=policy)]
    no_fresh(check(model(nodes, inputs, ["y", "z"], inits, opset=18), random_cases(inputs, [{"a": 1}, {"a": 2}])))
    # over symbolic dims the policy's float32 rounding is not a closed form
    inputs = [("x", F, ["a", 3, "h", 5])]
    res = onnxsym.infer(model(nodes, inputs, ["y", "z"], inits, opset=18))
    assert bool(res.unresolved()) == (policy != "stretch")


@pytest.mark.parametrize("opset", [18, 19])
def test_resize_axes(opset):
    inputs = [("x", F, ["a", 3, "h", "w"])]
    inits = [init("sc", np.array([2, 0.5], np.float32)), init("sz", np.array([6, 4], np.int64))]
    nodes = [helper.make_node("Resize", ["x", "", "sc"], ["y"], axes=[3, -2]),
             helper.make_node("Resize", ["x", "", "", "sz"], ["z"], axes=[2, 3])]
    res = check(model(nodes, inputs, ["y", "z"], inits, opset=opset),
                random_cases(inputs, [{"a": 1, "h": 5, "w": 3}, {"a": 2, "h": 8, "w": 7}]),
                ranges={"h": (1, 4096), "w": (1, 4096)})
    no_fresh(res)
    h, w = dims.sym("h", 1, 4096), dims.sym("w", 1, 4096)
    assert res.shape("y") == (dims.sym("a"), 3, h // 2, 2 * w)


@pytest.mark.parametrize("opset", [7, 9])  # onnxruntime refuses the deprecated Upsample-10
def test_upsample(opset):
    inputs = [("x", F, ["a", 2, "h", 3])]
    scales = [1.0, 1.0, 2.0, 1.5]
    if opset == 7:
        nodes, inits = [helper.make_node("Upsample", ["x"], ["y"], scales=scales)], []
    else:
        nodes, inits = [helper.make_node("Upsample", ["x", "sc"], ["y"])], [init("sc", np.array(scales, np.float32))]
    # Upsample-10 is deprecated: onnxruntime still runs it
    res = check(model(nodes, inputs, ["y"], inits, opset=opset),
                random_cases(inputs, [{"a": 1, "h": 3}, {"a": 2, "h": 5}]), ranges=BOUNDED)
    no_fresh(res)
    assert res.shape("y")[2:] == (2 * dims.sym("h", 1, 4096), 4)


@pytest.mark.parametrize("opset", [7, 9, 11, 13])
def test_gemm_c_shapes(opset):
    inputs = [("a", F, ["m", 4]), ("b", F, [5, 4]), ("at", F, [4, "m"])]
    inits = [init("c1", np.ones(5, np.float32)), init("c0", np.float32(2)), init("cm", np.ones((1, 5), np.float32))]
    nodes = [helper.make_node("Gemm", ["a", "b", "c1"], ["y1"], transB=1),
             helper.make_node("Gemm", ["a", "b", "c0"], ["y0"], transB=1, alpha=0.5),
             helper.make_node("Gemm", ["at", "b", "cm"], ["yt"], transA=1, transB=1, beta=2.0)]
    outs = ["y1", "y0", "yt"]
    if opset >= 11:  # C optional from opset 11
        nodes.append(helper.make_node("Gemm", ["a", "b"], ["yn"], transB=1))
        outs.append("yn")
    res = check(model(nodes, inputs, outs, inits, opset=opset), random_cases(inputs, [{"m": 1}, {"m": 5}]))
    no_fresh(res)
    assert res.shape("y1") == (dims.sym("m"), 5)


@pytest.mark.parametrize("opset", [10, 11, 13, 18, 19])
def test_resize_scales_and_sizes_at_every_opset(opset):
    inputs = [("x", F, ["a", 3, "h", "w"])]
    inits = [init("sc", np.array([1, 1, 0.5, 3], np.float32)), init("roi", np.array([], np.float32)),
             init("sz", np.array([2, 3, 5, 4], np.int64))]
    if opset == 10:
        nodes = [helper.make_node("Resize", ["x", "sc"], ["y"])]
    else:
        nodes = [helper.make_node("Resize", ["x", "roi", "sc"], ["y"]),
                 helper.make_node("Resize", ["x", "roi", "", "sz"] if opset >= 13 else ["x", "roi", "roi", "sz"],
                                  ["z"])]
    outs = [n.output[0] for n in nodes]
    sizes = [{"a": 2, "h": 5, "w": 3}, {"a": 2, "h": 8, "w": 1}]
    res = check(model(nodes, inputs, outs, inits, opset=opset), random_cases(inputs, sizes),
                ranges={"h": (1, 4096), "w": (1, 4096)})
    no_fresh(res)


@pytest.mark.parametrize("scale", SCALES + [1.0001, 2.5, 7.0, 0.999])
def test_resize_closed_form_matches_float32_up_to_its_bound(scale):
    """onnxruntime's (int64_t)(float(scale) * float(dim)), emulated in numpy at sizes
    too large to run: wherever the rule gives a closed form it agrees, up to the bound."""
    s = np.float32(scale)
    p, q = float(s).as_integer_ratio()
    bound = (2 ** 24 if q == 1 else 2 ** 24 - 1) // p
    if bound < 1:
        return
    inputs = [("x", F, [1, 1, "h"])]
    m = model([helper.make_node("Resize", ["x", "", "sc"], ["y"])], inputs, ["y"],
              [init("sc", np.array([1, 1, scale], np.float32))], opset=13)
    res = onnxsym.infer(m, ranges={"h": (1, bound)})
    no_fresh(res)
    rng = np.random.default_rng(1)
    for h in sorted(set(rng.integers(1, bound + 1, 2000).tolist() + list(range(max(1, bound - 300), bound + 1)))):
        assert onnxsym.evaluate(res.shape("y")[2], {"h": h}) == int(s * np.float32(h)), (scale, h)
    beyond = onnxsym.infer(m, ranges={"h": (1, bound + 1)})
    if bound >= 2 ** 20:
        assert [str(c) for c in beyond.constraints] == [f"h <= {bound}"] and not beyond.unresolved()
        return
    # a scale far from a short power-of-two fraction: the simplest fraction near it where it
    # gives the same sizes up to a bound past 2**20 (that bound recorded), else a fresh size
    free = onnxsym.infer(m)
    if free.unresolved():
        return
    (c,) = [str(c) for c in free.constraints]
    last = int(c.removeprefix("h <= "))
    assert last >= 2 ** 20
    hs = np.unique(np.concatenate([rng.integers(1, last + 1, 20000), np.arange(max(1, last - 3000), last + 1)]))
    d = free.shape("y")[2]
    assert all(onnxsym.evaluate(d, {"h": int(h)}) == int(s * np.float32(h)) for h in hs), scale



def resize_by_computed_scales(opset):
    """A Resize of x (1, 1, h, w) by scales the graph computes from the size in float:
    10 / Cast(h) (a quotient of dims, not a number) and Cast(w) (an integral float
    expression); also r = 10 / Cast(shape) * Cast(shape)."""
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["s"]), n("Cast", ["s"], ["sf"], to=F),
             n("Div", ["ten", "sf"], ["q"]), n("Mul", ["q", "sf"], ["r"]),
             n("Slice", ["q", "two", "three", "zero"], ["q_h"]), n("Slice", ["sf", "three", "four", "zero"], ["f_w"]),
             n("Concat", ["ones", "q_h", "f_w"], ["sc"], axis=0),
             n("Resize", ["x", "roi", "sc"], ["y"], mode="nearest")]
    inits = [init("ten", np.array([10.0], np.float32)), init("ones", np.ones(2, np.float32)),
             init("two", np.array([2])), init("three", np.array([3])), init("four", np.array([4])),
             init("zero", np.array([0])), init("roi", np.zeros(0, np.float32))]
    return model(nodes, [("x", F, [1, 1, "h", "w"])], ["y", "r"], inits, opset=opset)


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_resize_scales_computed_from_the_input_size(opset):
    """The sizes onnxruntime computes from scales a graph computed are no closed form onnxsym
    proves: fresh, with why (the rule once raised on them: float() of a quotient)."""
    inputs = [("x", F, [1, 1, "h", "w"])]
    res = check(resize_by_computed_scales(opset),
                random_cases(inputs, [{"h": h, "w": w} for h in (1, 3, 7, 10) for w in (1, 2, 5)]),
                fresh_ok=("y",))
    assert [(u.value, u.axis) for u in res.unresolved()] == [("y", 2), ("y", 3)]
    assert res.shape("y")[:2] == (1, 1)
    assert all("computed from sizes" in u.provenance[0].reason for u in res.unresolved())
