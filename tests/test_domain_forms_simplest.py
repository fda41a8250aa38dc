"""The domain in its simplest equivalent form (issue 36, point 3): a product equality over
several symbols (a window partition's element count) splits into one condition per symbol
where that is proven, and the residues of one symbol combine into one modulus. The truth is
onnxruntime's: the domain's verdict equals its run or refusal at every size tried."""

import math
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from onnx import TensorProto, helper, numpy_helper

import onnxsym
from onnxsym import dims
from onnxsym import domain as dom
from onnxsym.domain.forms import simplify
from onnxsym.domain.products import split

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAXVIT = os.path.join(ROOT, "models", "domain", "timm_maxvit_slim.onnx")
MOBILEVIT = os.path.join(ROOT, "models", "real", "mobilevit_hw_ts.onnx")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "onnxsym", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def _session(path):
    so = ort.SessionOptions()
    so.log_severity_level = 4  # (the refusals are the point: not their log lines)
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _runs(sess, shape) -> bool:
    try:
        sess.run(None, {sess.get_inputs()[0].name: np.zeros(shape, np.float32)})
        return True
    except Exception:  # noqa: BLE001 (onnxruntime's refusal, whatever its type)
        return False


def _admits(d, point) -> bool:
    """The domain's verdict at ``point``: inside every range, no condition broken."""
    return all(lo <= point[n] <= hi for n, (lo, hi) in d.ranges.items()) and d.violated(point) is None


def _holds(forms, point) -> bool:
    return all(f.holds(point) for f in forms)


# ------------------------------------------------------------------ the forms, by hand


def test_a_window_count_over_two_symbols_splits_into_the_residues_of_each():
    b, h, w = (dims.sym(n, 1, 2**40) for n in ("b", "h", "w"))
    lhs = 32 * b * ((h + 3) // 8) * ((w + 3) // 8)
    rhs = 8 * b * ((h + 3) // 4) * ((w + 3) // 4)
    forms = simplify("==", lhs, rhs)
    assert sorted(f.text() for f in forms) == ["h % 8 in {0, 5, 6, 7}", "w % 8 in {0, 5, 6, 7}"]
    # exhaustively over three periods of each (from 1: (h + 3)//8 is 0 below 5, a factor that may be 0)
    for bv in (1, 2):
        for hv in range(1, 25):
            for wv in range(1, 25):
                point = {"b": bv, "h": hv, "w": wv}
                assert _holds(forms, point) == (dims.evaluate(lhs, point) == dims.evaluate(rhs, point)), point


def test_what_does_not_separate_is_left_as_it_is():
    h, w = dims.sym("h", 1, 2**40), dims.sym("w", 1, 2**40)
    # h*w == 4: (1, 4), (2, 2), (4, 1), no product of per-symbol conditions
    assert split(h * w, 4) is None
    (form,) = simplify("==", h * w, 4)
    assert form.kind == "other"
    # the sides ordered one way in h, the other in w: 2*(h//2) <= h but 2*((w + 1)//2) >= w, and
    # (h, w) = (3, 2) and (2, 3)... are no product set
    lhs, rhs = 2 * (h // 2) * 2 * ((w + 1) // 2), h * w
    assert split(lhs, rhs) is None
    sols = {(hv, wv) for hv in range(1, 9) for wv in range(1, 9) if hv * wv == 4 * (hv // 2) * ((wv + 1) // 2)}
    assert (2, 2) in sols and (2, 3) not in sols and (3, 3) not in sols
    # constants the sides' limit ratios do not match (3 against 1): no split is claimed
    assert split(3 * (h // 2) * (w // 2), ((h + 1) // 2) * ((w + 1) // 2)) is None


def test_a_shared_factor_that_may_be_zero_blocks_the_split():
    # (h//4) is 0 for h < 4 on both sides: there the equality holds whatever w is
    h, w = dims.sym("h", 1, 2**40), dims.sym("w", 1, 2**40)
    lhs, rhs = 2 * (h // 4) * (w // 2), (h // 4) * w
    assert split(lhs, rhs) is None
    forms = simplify("==", lhs, rhs)
    for hv in range(1, 13):
        for wv in range(1, 13):
            point = {"h": hv, "w": wv}
            assert _holds(forms, point) == (dims.evaluate(lhs, point) == dims.evaluate(rhs, point)), point


_side = hs.tuples(hs.integers(0, 7), hs.sampled_from([1, 2, 4, 8]))  # (offset, divisor)


@settings(max_examples=80, deadline=None)
@given(hs.integers(1, 2), hs.integers(1, 2), _side, _side, _side, _side, hs.integers(1, 6), hs.integers(1, 6),
       hs.booleans(), hs.booleans())
def test_whatever_simplify_makes_of_a_product_equality_is_the_same_condition(mh, mw, a, b, c, d, lo_h, lo_w,
                                                                            shared, matched):
    """``k1*A(h)*B(w) == k2*C(h)*D(w)``, each a floor ``(m*s + offset)//divisor`` (``shared``: ``C`` is
    ``A``, a factor on both sides, which may be 0; ``matched``: the constants make the two sides grow
    alike, else 1 and 2): the forms hold exactly where the equality does, at every size over three
    periods from the ranges' lows."""
    c = a if shared else c
    h, w = dims.sym("h", lo_h, 2**40), dims.sym("w", lo_w, 2**40)
    k1, k2 = (a[1] * b[1], c[1] * d[1]) if matched else (1, 2)
    g = math.gcd(k1, k2)
    lhs = dims.mul(k1 // g, dims.mul((mh * h + a[0]) // a[1], (mw * w + b[0]) // b[1]))
    rhs = dims.mul(k2 // g, dims.mul((mh * h + c[0]) // c[1], (mw * w + d[0]) // d[1]))
    forms = simplify("==", lhs, rhs)
    span = 3 * math.lcm(a[1], b[1], c[1], d[1])
    for hv in range(lo_h, lo_h + span):
        for wv in range(lo_w, lo_w + span):
            point = {"h": hv, "w": wv}
            assert _holds(forms, point) == (dims.evaluate(lhs, point) == dims.evaluate(rhs, point)), (forms, point)


# ------------------------------------------------------------------ a model built by hand


def _windows2d(a=4, b=8):
    """x[batch, 1, height, width] pooled by strides ``a`` and ``b``; the first reshaped to the second's
    windows ``[batch, (b//a)**2, (height + b-1)//b, (width + b-1)//b]``, the target from the second's shape:
    the element count ``batch*ceil(h/a)*ceil(w/a) == k*batch*ceil(h/b)*ceil(w/b)``."""
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[1, 1], strides=[a, a], name="pa"),
             helper.make_node("MaxPool", ["x"], ["q"], kernel_shape=[1, 1], strides=[b, b], name="pb"),
             helper.make_node("Shape", ["q"], ["sq"], name="sq"),
             helper.make_node("Gather", ["sq", "i0"], ["n"], axis=0, name="gn"),
             helper.make_node("Slice", ["sq", "two", "four"], ["hw"], name="hw"),
             helper.make_node("Concat", ["n", "k", "hw"], ["t"], axis=0, name="cat"),
             helper.make_node("Reshape", ["p", "t"], ["y"], name="win")]
    inits = [numpy_helper.from_array(np.array([v], np.int64), n)
             for n, v in (("i0", 0), ("two", 2), ("four", 4), ("k", (b // a) ** 2))]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, "height", "width"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_a_hand_built_window_reshape_states_the_residues_onnxruntime_runs(tmp_path):
    path = tmp_path / "win.onnx"
    onnx.save(_windows2d(), path)
    d = dom.compute(onnxsym.infer(str(path)))
    texts = [c.text for c in d.conditions]
    assert "height % 8 in {0, 5, 6, 7}" in texts and "width % 8 in {0, 5, 6, 7}" in texts, texts
    assert not any("//" in t for t in texts), texts
    sess = _session(path)
    for bv in (1, 2):
        for hv in range(1, 26):
            for wv in range(1, 26):
                point = {"batch": bv, "height": hv, "width": wv}
                assert _admits(d, point) == _runs(sess, (bv, 1, hv, wv)), point


# ------------------------------------------------------------------ MaxViT and MobileViT


def test_maxvit_states_the_rule_the_sweep_shows_and_onnxruntime_keeps():
    r = _cli("domain", MAXVIT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(line.startswith("  height % 32 in {0, 31}: ") for line in lines), r.stdout
    assert any(line.startswith("  width % 32 in {0, 31}: ") for line in lines), r.stdout
    assert "assumed" not in r.stdout and "//8)*" not in r.stdout, r.stdout
    assert not any(line.startswith("  height % 8") or line.startswith("  height % 4") for line in lines), r.stdout
    sweep = _cli("domain", MAXVIT, "--sweep", "height=17:70:1", "--bind", "batch=1", "--bind", "width=32")
    assert "4 of 54 sizes in the domain" in sweep.stdout, sweep.stdout

    d = dom.compute(onnxsym.infer(MAXVIT))
    sess = _session(MAXVIT)
    ran = []
    for hv in range(1, 71):  # one symbol at a time, the other at a size the model runs at
        point = {"batch": 1, "height": hv, "width": 32}
        assert _admits(d, point) == _runs(sess, (1, 3, hv, 32)), point
        ran += [hv] if _admits(d, point) else []
        point = {"batch": 2, "height": 32, "width": hv}
        assert _admits(d, point) == _runs(sess, (2, 3, 32, hv)), point
    assert ran == [31, 32, 63, 64]


@pytest.mark.slow
def test_maxvit_and_mobilevit_over_a_grid_of_heights_and_widths():
    for path, top in ((MAXVIT, 70), (MOBILEVIT, 70)):
        d = dom.compute(onnxsym.infer(path))
        sess = _session(path)
        for hv in range(1, top + 1):
            for wv in range(1, top + 1):
                point = {"batch": 1, "height": hv, "width": wv}
                assert _admits(d, point) == _runs(sess, (1, 3, hv, wv)), (path, point)


def test_mobilevit_window_counts_merge_into_the_residues_of_each_symbol():
    d = dom.compute(onnxsym.infer(MOBILEVIT))
    texts = [c.text for c in d.conditions]
    assert "height % 32 in {0, 25, 26, 27, 28, 29, 30, 31}" in texts, texts
    assert not any("*batch*" in t for t in texts), texts
    sess = _session(MOBILEVIT)
    for hv in range(1, 70):
        point = {"batch": 1, "height": hv, "width": 32}
        assert _admits(d, point) == _runs(sess, (1, 3, hv, 32)), point


def test_the_deployment_formats_carry_the_simple_rule():
    torch = _cli("domain", MAXVIT, "--format", "torch")
    assert "# also needed: height % 32 in {0, 31}" in torch.stdout, torch.stdout
    assert "height = Dim('height', min=31)" in torch.stdout, torch.stdout  # (17 to 30 fail: the least is 31)
    assert "*batch*" not in torch.stdout, torch.stdout
    trt = _cli("domain", MAXVIT, "--format", "trtexec", "--range", "batch=1:8", "--range", "height=17:512",
               "--range", "width=17:512")
    # the least sizes both symbols allow together (each alone was searched with the other off: none)
    assert trt.returncode == 0 and "--minShapes=x:1x3x31x31" in trt.stdout, trt.stdout + trt.stderr
    assert "height % 32 in {0, 31}" in trt.stderr, trt.stderr  # the box between min and max leaves it
    sess = _session(MAXVIT)
    assert _runs(sess, (1, 3, 31, 31)) and not _runs(sess, (1, 3, 33, 31))
