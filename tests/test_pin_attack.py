"""What tests/pin_attack.py found (random chains on x[1, 1, seq] forced against a constant),
each model checked against onnxruntime at every size 1..60 of seq:

- a Concat whose *first* input may have no elements (x[seq - 2] after a Pad of -2, a Resize by
  0.75 of x[1]) while a later one has elements: onnxruntime skips the empty first one and takes
  the later one's dims (the axis still sums every input's). The rule equated the first with the
  others (a pin to 8 where seq 2 runs too, a contradiction where the model runs at 1 and 2);
  now the anchor is the first input proven to have elements; ConcatFromSequence's items too;
- a pin through one equality the forms leave undecided (x[-3:1000] against 12: seq 1 and 1002),
  or through cases with a bound for a piece (seq <= 3 or seq == 8): missed;
- a pin to a size where a condition of no other symbol fails (seq == 4 with 13 == 7): the model
  runs at no size, no pin;
- and the sweep itself, with a fixed seed: no pin onnxsym states is other than onnxruntime's.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from op_verdicts import isolated_disagreements

import onnxsym
from onnxsym.domain.pins import pins_of
from onnxsym.errors import ShapeContradiction

pytest.importorskip("onnxruntime")
n = h.make_node
SIZES = range(1, 61)


def _c(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def _model(nodes, inits):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, "seq"])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    return m


def _padded_concat():
    """x[seq - 2] (a Pad of -2) concatenated on axis 1 with ones[1, 1, 6]: seq 2 (skipped) and 8."""
    return _model([n("Pad", ["x", "p"], ["t"]), n("Concat", ["t", "k"], ["y"], axis=1)],
                  [_c("p", np.array([0, 0, 0, 0, 0, -2], np.int64)), _c("k", np.ones((1, 1, 6), np.float32))])


def _resized_concat():
    """x resized by 0.75 (floor(0.75*seq)) concatenated on axis 1 with ones[1, 1, 2]: seq 1 and 3."""
    return _model([n("Resize", ["x", "", "s"], ["t"], mode="nearest"), n("Concat", ["t", "k"], ["y"], axis=1)],
                  [_c("s", np.array([1, 1, 0.75], np.float32)), _c("k", np.ones((1, 1, 2), np.float32))])


def _sequence_concat():
    """As _padded_concat, through SequenceConstruct and ConcatFromSequence: seq 2 and 8."""
    return _model([n("Pad", ["x", "p"], ["t"]), n("SequenceConstruct", ["t", "k"], ["q"]),
                   n("ConcatFromSequence", ["q"], ["y"], axis=1)],
                  [_c("p", np.array([0, 0, 0, 0, 0, -2], np.int64)), _c("k", np.ones((1, 1, 6), np.float32))])


def _sliced_concat():
    """x padded by (-1, 1), sliced [-3:-2:3] (0 or 1 element) and concatenated on axis 1 with
    ones[1, 1, 8]: runs at seq 1 and 2 only, where the slice is empty (it was a contradiction)."""
    return _model([n("Pad", ["x", "p"], ["t"]), n("Slice", ["t", "st", "en", "ax", "sp"], ["u"]),
                   n("Concat", ["u", "k"], ["y"], axis=1)],
                  [_c("p", np.array([0, 0, -1, 0, 0, 1], np.int64)), _c("st", np.array([-3], np.int64)),
                   _c("en", np.array([-2], np.int64)), _c("ax", np.array([2], np.int64)),
                   _c("sp", np.array([3], np.int64)), _c("k", np.ones((1, 1, 8), np.float32))])


def _slice_and_add():
    """x[-3:1000] (at most 3 elements, 1 at seq 1 and at seq 1002) added to ones[1, 1, 12]: one
    equality the forms leave undecided, max(0, min(1000, seq) - max(0, seq - 3)) == 1."""
    return _model([n("Slice", ["x", "st", "en", "ax"], ["t"]), n("Add", ["t", "k"], ["y"])],
                  [_c("st", np.array([-3], np.int64)), _c("en", np.array([1000], np.int64)),
                   _c("ax", np.array([2], np.int64)), _c("k", np.ones((1, 1, 12), np.float32))])


def _bounded_concat():
    """x[3:50] concatenated on axis 1 with ones[1, 1, 5]: seq <= 3 (empty, skipped) or seq == 8,
    cases with a bound for a piece."""
    return _model([n("Slice", ["x", "st", "en", "ax"], ["t"]), n("Concat", ["t", "k"], ["y"], axis=1)],
                  [_c("st", np.array([3], np.int64)), _c("en", np.array([50], np.int64)),
                   _c("ax", np.array([2], np.int64)), _c("k", np.ones((1, 1, 5), np.float32))])


def _never_runs():
    """x[seq + 3] expanded to max(its shape, [1, 1, 13]) (seq >= 10), padded by 3 and added to
    ones[1, 1, 10] (max(seq + 3, 13) + 3 == 10 never): no size runs; no pin (it was seq == 4)."""
    return _model([n("Concat", ["x", "k3"], ["a"], axis=2), n("Shape", ["a"], ["s"]), n("Max", ["s", "m"], ["e"]),
                   n("Expand", ["a", "e"], ["b"]), n("Pad", ["b", "p"], ["c"]), n("Add", ["c", "k10"], ["y"])],
                  [_c("k3", np.ones((1, 1, 3), np.float32)), _c("m", np.array([1, 1, 13], np.int64)),
                   _c("p", np.array([0, 0, 3, 0, 0, 0], np.int64)), _c("k10", np.ones((1, 1, 10), np.float32))])


def _resize_reshape():
    """x resized by float32 0.3 (floor(3*seq/10) in onnxruntime's float32 arithmetic) reshaped
    to [1, 1, 6]: seq 20 to 23 (the size was an unknown, no pin)."""
    return _model([n("Resize", ["x", "", "s"], ["t"], mode="linear"), n("Reshape", ["t", "k"], ["y"])],
                  [_c("s", np.array([1, 1, 0.3], np.float32)), _c("k", np.array([1, 1, 6], np.int64))])


def _pad_resize_concat():
    """x padded by (1, 2), resized by 0.3 and concatenated on axis 1 with ones[1, 1, 6]: 17 to 20."""
    return _model([n("Pad", ["x", "p"], ["t"]), n("Resize", ["t", "", "s"], ["u"], mode="linear"),
                   n("Concat", ["u", "k"], ["y"], axis=1)],
                  [_c("p", np.array([0, 0, 1, 0, 0, 2], np.int64)), _c("s", np.array([1, 1, 0.3], np.float32)),
                   _c("k", np.ones((1, 1, 6), np.float32))])


def _slice_resize_add():
    """x[3:50] resized by 2.0 (2*(min(50, seq) - 3)) added to ones[1, 1, 2]: seq 4 only (the
    slice's loose range, below 0, made the size an unknown)."""
    return _model([n("Slice", ["x", "st", "en", "ax"], ["t"]), n("Resize", ["t", "", "s"], ["u"], mode="nearest"),
                   n("Add", ["u", "k"], ["y"])],
                  [_c("st", np.array([3], np.int64)), _c("en", np.array([50], np.int64)),
                   _c("ax", np.array([2], np.int64)), _c("s", np.array([1, 1, 2.0], np.float32)),
                   _c("k", np.ones((1, 1, 2), np.float32))])


def _far_end_slice_add():
    """x[0:2**62:2] ((min(2**62, seq) + 1)//2 elements) added to ones[1, 1, 12]: seq 1, 2, 23 and
    24 (the min changes its pick only at 2**62: the root search gave up there)."""
    return _model([n("Slice", ["x", "st", "en", "ax", "sp"], ["t"]), n("Add", ["t", "k"], ["y"])],
                  [_c("st", np.array([0], np.int64)), _c("en", np.array([2**62], np.int64)),
                   _c("ax", np.array([2], np.int64)), _c("sp", np.array([2], np.int64)),
                   _c("k", np.ones((1, 1, 12), np.float32))])


def _same_lower_pool_expand():
    """An AveragePool-18 with kernel 1, stride 3, SAME_LOWER, expanded to [1, 1, 11]: seq 1 and 31
    (before opset 19 onnxruntime refuses the negative SAME pads at 32 and 33, ceil(seq/3) == 11)."""
    return _model([n("AveragePool", ["x"], ["t"], kernel_shape=[1], strides=[3], auto_pad="SAME_LOWER"),
                   n("Expand", ["t", "k"], ["y"])], [_c("k", np.array([1, 1, 11], np.int64))])


def _reversed_slice_concat():
    """x[2:-1] (empty for seq <= 3) reversed by [-1:1:-1], concatenated on axis 2 with ones[1, 1, 1]
    and on axis 1 with ones[1, 1, 3]: seq 7 only (a negative step on a dim that may be empty was
    an unknown)."""
    parts = [("a", [2]), ("b", [-1]), ("ax", [2]), ("one", [1]), ("c", [-1]), ("d", [1]), ("neg", [-1])]
    return _model([n("Slice", ["x", "a", "b", "ax", "one"], ["t"]), n("Slice", ["t", "c", "d", "ax", "neg"], ["u"]),
                   n("Concat", ["u", "k1"], ["v"], axis=2), n("Concat", ["v", "k3"], ["y"], axis=1)],
                  [_c(k, np.array(v, np.int64)) for k, v in parts]
                  + [_c("k1", np.ones((1, 1, 1), np.float32)), _c("k3", np.ones((1, 1, 3), np.float32))])


def _ort_sizes(m):
    from pin_attack import ort_sizes

    got = ort_sizes(m, SIZES)
    assert got is not None and not got[1]
    return got[0]


@pytest.mark.parametrize("make, sizes", [(_padded_concat, (2, 8)), (_resized_concat, (1, 3)),
                                          (_sequence_concat, (2, 8)), (_slice_and_add, (1, 1002)),
                                          (_bounded_concat, (1, 2, 3, 8)), (_resize_reshape, (20, 21, 22, 23)),
                                          (_pad_resize_concat, (17, 18, 19, 20)), (_slice_resize_add, (4,)),
                                          (_far_end_slice_add, (1, 2, 23, 24)), (_same_lower_pool_expand, (1, 31)),
                                          (_reversed_slice_concat, (7,))],
                         ids=["padded", "resized", "from_sequence", "one_undecided_equality", "a_bound_in_cases",
                              "float32_scale", "pad_resize_concat", "slice_resize", "far_slice_end", "same_lower_pool",
                              "reversed_slice"])
def test_a_few_sizes_the_attack_found_are_the_pin(make, sizes):
    m = make()
    from pin_attack import ort_sizes

    assert _ort_sizes(m) == [v for v in sizes if v in SIZES]
    assert ort_sizes(m, [v for v in sizes if v not in SIZES] + [1001, 1003])[0] == [v for v in sizes if v not in SIZES]
    (pin,) = pins_of(onnxsym.infer(m))
    assert pin.symbol == "seq" and pin.values == sizes
    count, bad, _ = isolated_disagreements(m, [{"seq": v} for v in SIZES])
    assert count and not bad, bad[:5]


@pytest.mark.parametrize("make", [_resize_reshape, _slice_resize_add, _far_end_slice_add, _same_lower_pool_expand],
                         ids=["float32_scale", "slice_resize", "far_slice_end", "same_lower_pool"])
def test_check_exits_1_and_annotate_refuses_on_these_pins(make, tmp_path):
    """onnxruntime refuses seq at a size the pin leaves out (checked beside the pin's sizes):
    ``check`` exits 1 naming the pin, and ``annotate --dynamic`` of the symbol refuses."""
    from click.testing import CliRunner
    from pin_attack import ort_sizes

    from onnxsym.cli import main

    m = make()
    (pin,) = pins_of(onnxsym.infer(m))
    outside = [v for v in range(1, 40) if v not in pin.values][:6]
    assert ort_sizes(m, list(pin.values) + outside)[0] == list(pin.values)
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    r = CliRunner().invoke(main, ["check", str(path)])
    assert r.exit_code == 1 and f"pinned {pin.what}" in r.output, r.output
    r = CliRunner().invoke(main, ["annotate", str(path), "-o", str(tmp_path / "o.onnx"), "--dynamic", "x:2=seq"])
    assert r.exit_code == 2 and "cannot be dynamic" in r.output and not (tmp_path / "o.onnx").exists(), r.output


def _backward_slice_conv_expand():
    """x[1000:-1000:-1] (seq elements up to 999, then 2000 - seq) into a Conv of kernel 4,
    dilation 2, stride 2, pads (0, 1), expanded to [1, 1, 9]: 8 sizes, 4 of them past 1000."""
    parts = [("a", [1000]), ("b", [-1000]), ("ax", [2]), ("neg", [-1])]
    return _model([n("Slice", ["x", "a", "b", "ax", "neg"], ["t"]),
                   n("Conv", ["t", "w"], ["u"], kernel_shape=[4], strides=[2], dilations=[2], pads=[0, 1]),
                   n("Expand", ["u", "k"], ["y"])],
                  [_c(k, np.array(v, np.int64)) for k, v in parts]
                  + [_c("w", np.ones((1, 1, 4), np.float32)), _c("k", np.array([1, 1, 9], np.int64))])


def _max_expand_conv_slice():
    """x expanded to max(seq, 11), a Conv of kernel 4, dilation 2, stride 2, pads (1, 1), then
    [-2:1:-1], added to ones[1, 1, 9]: 1, 11, 12, 27 and 28 (0 on the whole stretch before the
    max changes its pick was taken as sizes without end)."""
    parts = [("m", [1, 1, 11]), ("a", [-2]), ("b", [1]), ("ax", [2]), ("neg", [-1])]
    return _model([n("Shape", ["x"], ["s"]), n("Max", ["s", "m"], ["e"]), n("Expand", ["x", "e"], ["t"]),
                   n("Conv", ["t", "w"], ["u"], kernel_shape=[4], strides=[2], dilations=[2], pads=[1, 1]),
                   n("Slice", ["u", "a", "b", "ax", "neg"], ["v"]), n("Add", ["v", "k"], ["y"])],
                  [_c(k, np.array(v, np.int64)) for k, v in parts]
                  + [_c("w", np.ones((1, 1, 4), np.float32)), _c("k", np.ones((1, 1, 9), np.float32))])


@pytest.mark.parametrize("make, sizes", [(_backward_slice_conv_expand, (6, 7, 22, 23, 1977, 1978, 1993, 1994)),
                                          (_max_expand_conv_slice, (1, 11, 12, 27, 28))],
                         ids=["past_1000", "zero_before_a_crossing"])
def test_more_than_a_few_sizes_are_listed_and_not_a_pin(make, sizes):
    """A finite set of more than a pin's few sizes: the domain lists it (finite_sizes), exactly
    where onnxruntime runs (past the first 60 sizes too), and states no pin."""
    from pin_attack import ort_sizes

    from onnxsym.domain.pins import finite_sizes

    m = make()
    res = onnxsym.infer(m)
    assert finite_sizes("seq", res.domain()) == sizes
    assert pins_of(res) == []
    assert _ort_sizes(m) == [v for v in sizes if v in SIZES]
    past = [v for v in sizes if v not in SIZES]
    assert ort_sizes(m, past + [v + 1 for v in past if v + 1 not in sizes] + [999, 1000, 2000])[0] == past


def test_a_concat_that_runs_only_where_its_first_input_is_empty_is_no_contradiction():
    m = _sliced_concat()
    assert _ort_sizes(m) == [1, 2]
    count, bad, _ = isolated_disagreements(m, [{"seq": v} for v in SIZES])
    assert count and not bad, bad[:5]


def test_no_pin_where_the_model_runs_at_no_size():
    m = _never_runs()
    assert _ort_sizes(m) == []
    with pytest.raises(ShapeContradiction):  # (no pin: the model runs at no size, a contradiction)
        pins_of(onnxsym.infer(m))


@pytest.mark.slow
def test_the_pin_attack_states_no_pin_other_than_onnxruntimes():
    import random

    from pin_attack import judge, random_model

    verdicts = [judge(random_model(random.Random(f"7:{i}")))["verdict"] for i in range(60)]
    assert "pin right" in verdicts
    assert not [v for v in verdicts if "WRONG" in v or v == "onnxsym error"], verdicts


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_a_same_padded_conv_refuses_an_empty_axis(auto_pad):
    """x[3:7] (empty at seq <= 3) into a Conv with auto_pad SAME: onnxruntime refuses the output
    size 0 (the domain allowed seq <= 3, and a pin stated {1, 2, 3} where no size runs)."""
    m = _model([n("Slice", ["x", "st", "en", "ax"], ["t"]),
                n("Conv", ["t", "w"], ["y"], kernel_shape=[4], strides=[2], auto_pad=auto_pad)],
               [_c("st", np.array([3], np.int64)), _c("en", np.array([7], np.int64)), _c("ax", np.array([2], np.int64)),
                _c("w", np.ones((1, 1, 4), np.float32))])
    assert _ort_sizes(m)[:3] == [4, 5, 6]
    count, bad, _ = isolated_disagreements(m, [{"seq": v} for v in range(1, 12)])
    assert count and not bad, bad[:5]


def test_sizes_refused_for_onnxruntimes_allocation_cap_make_no_finite_set(monkeypatch):
    """Shape-pin attack 3:36: x[seq] tiled by seq, then by 3*seq**2 (3*seq**4 elements, no condition).
    onnxruntime runs it at small sizes and refuses from 138 on for its cap on an allocation's bytes,
    no verdict on the sizes: the attack called it "finite, more than a few (not listed)", as if the
    model ran at a finite set of sizes. Both verdicts are onnxruntime's here (138 refused for the cap,
    20 run); the sweep between them is taken as the attack saw it (each size to 137 allocates up to 4 GiB)."""
    import random

    import pin_attack
    from shape_pin_attack import random_model

    m = random_model(random.Random("3:36"))
    refusals: dict[int, str] = {}
    assert pin_attack.ort_sizes(m, [20, 138], refusals) == ([20], [])
    assert pin_attack._limit(refusals[138]), refusals

    def swept(model, sizes, refusals=None):
        sizes = list(sizes)
        if refusals is not None:
            refusals.update({v: refusals_seen for v in sizes if v >= 138})
        return [v for v in sizes if v < 138], []

    refusals_seen = refusals[138]
    monkeypatch.setattr(pin_attack, "ort_sizes", swept)
    r = pin_attack.judge(m)
    assert r["verdict"] == "not pinned" and r["limited"] and not r["too_wide"], r
