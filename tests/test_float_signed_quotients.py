"""Sizes computed in float whose numerator may be negative, or rounded half to even, or
divided by a float that is no integer, or cast to float64/float16: an audio front-end's
frame count ``floor((T - 400) / 160) + 1``, ``round(h / 3)``, ``floor(h / 2.5)``. Each is
checked against onnxruntime's values at small and edge sizes and next to the mantissa
bounds (floatops.Quotient has the argument); past the bound no formula is claimed."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from oracle import check, run_ort

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

U8, I64, FLOAT, DOUBLE, HALF = TensorProto.UINT8, TensorProto.INT64, TensorProto.FLOAT, TensorProto.DOUBLE, \
    TensorProto.FLOAT16
E = 2**24


def _c(name, v, dtype):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, dtype, [], [v]))


def _form(out, ops, src="hf"):
    """Nodes: ``ops`` ((op, constant or None) applied in turn to ``src``), cast to int64 ``out``."""
    nodes, cur = [], src
    for i, (op, c) in enumerate(ops):
        nxt = f"{out}_{i}"
        if c is None:
            nodes.append(helper.make_node(op, [cur], [nxt]))
        elif op == "RSub":  # the constant minus the value
            nodes += [_c(f"{out}_c{i}", c, FLOAT), helper.make_node("Sub", [f"{out}_c{i}", cur], [nxt])]
        else:
            nodes += [_c(f"{out}_c{i}", c, FLOAT), helper.make_node(op, [cur, f"{out}_c{i}"], [nxt])]
        cur = nxt
    return nodes + [helper.make_node("Cast", [cur], [out], to=I64)]


FORMS = {
    # Whisper/Kaldi-style frames without centering: floor((T - n_fft) / hop) + 1
    "frames": [("Sub", 400.0), ("Div", 160.0), ("Floor", None), ("Add", 1.0)],
    "frames_ceil": [("Sub", 400.0), ("Div", 160.0), ("Ceil", None)],
    "frames_trunc": [("Sub", 400.0), ("Div", 160.0)],  # a Cast truncates toward zero
    # centered (torch.stft center=True): floor(T / hop) + 1; librosa-style (T + 2*pad - n_fft) // hop + 1
    "centered": [("Div", 160.0), ("Floor", None), ("Add", 1.0)],
    "padded": [("Add", 200.0), ("Sub", 400.0), ("Div", 160.0), ("Floor", None), ("Add", 1.0)],
    "round_half": [("Mul", 0.5), ("Round", None)],
    "round_third": [("Div", 3.0), ("Round", None)],
    "round_quarter_neg": [("Sub", 7.0), ("Div", 4.0), ("Round", None)],
    "by_two_and_a_half": [("Div", 2.5), ("Floor", None)],
    "by_a_half": [("Div", 0.5)],
    "by_minus_three": [("Div", -3.0), ("Floor", None)],
    "minus_half": [("Mul", -0.5), ("Ceil", None)],
    # a quotient plus or minus an integer, rounded twice: floor(T / 160 + 1), floor(1.5 T - 7), ceil(3 - T / 4)
    "plus_one_after": [("Div", 160.0), ("Add", 1.0), ("Floor", None)],
    "scaled_minus": [("Mul", 1.5), ("Sub", 7.0), ("Floor", None)],
    "three_minus": [("Div", 4.0), ("RSub", 3.0), ("Ceil", None)],
    "shift_trunc": [("Div", 3.0), ("Sub", 100.0)],
}


def float_model(names, to=FLOAT, forms=FORMS):
    nodes = [helper.make_node("Shape", ["a"], ["sa"]), helper.make_node("Squeeze", ["sa"], ["h"]),
             helper.make_node("Cast", ["h"], ["hf"], to=to)]
    for n in names:
        nodes += _form(n, forms[n])
    if to != FLOAT:  # the constants are float32: one float type per graph
        for nd in nodes:
            for a in nd.attribute:
                if a.name == "value":
                    a.t.data_type = to
                    v = a.t.float_data[0]
                    del a.t.float_data[:]
                    if to == DOUBLE:
                        a.t.double_data.append(v)
                    else:
                        a.t.int32_data.append(int(np.float16(v).view(np.uint16)))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", U8, ["h"])],
                          [helper.make_tensor_value_info(n, I64, []) for n in names])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _assumed(res):
    """The domain's assumed conditions (the mantissa bounds), as it states them."""
    return {c.text for c in res.domain().conditions if c.assumed}


def cases(sizes):
    return [({"h": h}, {"a": np.zeros(h, np.uint8)}) for h in sizes]


SMALL = [0, 1, 2, 3, 5, 7, 9, 79, 80, 239, 240, 399, 400, 401, 559, 560, 16000]
# next to 2**23 (round of an odd divisor's bound) and 2**24 (float32's mantissa)
NEAR = [2**23 - 1, 2**23, 2**23 + 1, E - 401, E - 1, E]


def test_every_form_resolves_and_matches_onnxruntime():
    res = check(float_model(list(FORMS)), cases(SMALL), values=list(FORMS))
    assert not res.fresh, res.fresh


@pytest.mark.parametrize("h", NEAR)
def test_next_to_the_bounds(h):
    names = [n for n in FORMS if n not in ("round_third", "by_two_and_a_half", "by_a_half", "minus_half")
             and n not in SHIFTED]
    check(float_model(names), cases([h]), values=names)


SHIFTED = ("plus_one_after", "scaled_minus", "three_minus", "shift_trunc")


@pytest.mark.parametrize("h", [2**23 - 200, 2**22 - 5, 2**22 + 1, 5592400])
def test_a_shifted_quotient_next_to_its_bound(h):
    """A quotient plus or minus an integer is rounded twice: exact while |num| <= 2**23 and
    the shifted numerator below it (recorded; 1.5 h is 3h / 2, so h <= 2**23 / 3)."""
    names = [n for n in SHIFTED if n != "scaled_minus" or 3 * h < 2**23]
    check(float_model(names), cases([h]), values=names)


def test_a_shifted_quotient_past_its_bound_is_unknown():
    """fl(fl(h / 10) + 2**23) at h = 9 is 8388609.0 in float32 (0.9 rounds up at that
    magnitude), not floor(8388608.9): the shift passes the bound, no formula is claimed."""
    forms = {"far": [("Div", 10.0), ("Add", float(2**23)), ("Floor", None)]}
    m = float_model(["far"], forms=forms)
    assert int(run_ort(m, {"a": np.zeros(9, np.uint8)})["far"]) == 2**23 + 1
    res = onnxsym.infer(m)
    (v,) = res.values["far"].value
    assert str(v) in res.fresh


def test_a_quotient_shifted_twice_is_not_followed():
    forms = {"twice": [("Div", 10.0), ("Add", 1.0), ("Add", 1.0), ("Floor", None)]}
    res = onnxsym.infer(float_model(["twice"], forms=forms))
    (v,) = res.values["twice"].value
    assert str(v) in res.fresh


def test_round_of_an_odd_divisor_records_the_tighter_bound():
    """round(h / 3) sees h / 3's side of the half only while h <= 2**23: past it float32 may
    round h / 3 onto n + 1/2, and half to even then moves it (h = 12582914 is one)."""
    m = float_model(["round_third"])
    res = check(m, cases([7, 8, 2**23]), values=["round_third"])
    assert _assumed(res) == {f"h <= {2**23}"}
    (d,) = res.values["round_third"].value
    h = 12582914
    assert int(run_ort(m, {"a": np.zeros(h, np.uint8)})["round_third"]) != dims.evaluate(d, {"h": h})


def test_scales_that_need_a_bound_record_it():
    """h / 2.5 rounds as 2h / 5 and h * 1.5 as 3h / 2: exact while 2h (3h) <= 2**24."""
    res = check(float_model(["by_two_and_a_half"]), cases([E // 2, E // 2 - 1, 12]), values=["by_two_and_a_half"])
    assert _assumed(res) == {f"h <= {E // 2}"}


def test_negative_numerators_past_the_bound_are_recorded():
    """T - 400 with T a size: the lower side (-(T - 400) <= 2**24) always holds; the
    upper side is the one recorded, as the Cast's own."""
    res = onnxsym.infer(float_model(["frames"]))
    assert _assumed(res) == {f"h <= {E}"}


def test_float64_keeps_the_formula_up_to_two_to_the_53():
    """(2**52 for round(h / 3), an odd divisor: see Quotient)"""
    res = check(float_model(["frames"], to=DOUBLE), cases([0, 399, 400, 16001, E + 1]), values=["frames"])
    assert _assumed(res) == {f"h <= {2**53}"}
    res = check(float_model(["round_third"], to=DOUBLE), cases([4, 5, E + 1]), values=["round_third"])
    assert _assumed(res) == {f"h <= {2**52}"}


def test_float16_claims_no_formula():
    """float16 holds every integer only up to 2**11, a bound real sizes pass: the frame
    count is an unknown of its own (onnxruntime's float16 floor((2049 - 400) / 160) is 10,
    the integer one too, but at 4097 float16 holds only 4096)."""
    m = float_model(["frames"], to=HALF)
    res = onnxsym.infer(m)
    (v,) = res.values["frames"].value
    assert str(v) in res.fresh


def test_past_float32s_bound_the_formula_would_be_wrong():
    """2**24 + 1 is no float32: onnxruntime's frame count there is not the formula's."""
    m = float_model(["centered"], forms={"centered": [("Div", 1.0), ("Floor", None)]})
    res = onnxsym.infer(m)
    (d,) = res.values["centered"].value
    assert int(run_ort(m, {"a": np.zeros(E + 1, np.uint8)})["centered"]) != dims.evaluate(d, {"h": E + 1})


def _elementwise(ops, den):
    """n (float32) -> ops -> int64, over a tensor of integers: onnxruntime's value at each."""
    nodes = [helper.make_node("Cast", ["n"], ["nf"], to=FLOAT), _c("den", float(den), FLOAT),
             helper.make_node("Div", ["nf", "den"], ["q"])]
    outs = []
    for op in ops:
        nodes += [helper.make_node(op, ["q"], [op + "q"]), helper.make_node("Cast", [op + "q"], [op], to=I64)]
        outs.append(op)
    nodes.append(helper.make_node("Cast", ["q"], ["Trunc"], to=I64))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("n", I64, ["k"])],
                          [helper.make_tensor_value_info(o, I64, ["k"]) for o in outs + ["Trunc"]])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.slow
@pytest.mark.parametrize("den", [3, 160, 6])
def test_every_numerator_within_the_bound(den):
    """Over every integer |n| <= 2**24 (2**23 for round by an odd divisor), onnxruntime's
    float32 floor, ceil, truncation and round half to even of n / den are the integer
    formulas floatops.Quotient writes (the exhaustive form of its argument)."""
    m = _elementwise(["Floor", "Ceil", "Round"], den)
    q = onnxsym.semantics.floatops.Quotient(dims.symbol("n"), den)
    forms = {"Floor": q.floor(), "Ceil": q.ceil(), "Trunc": q.trunc(), "Round": q.round()}
    for lo in range(-E, E + 1, 2**22):
        n = np.arange(lo, min(lo + 2**22, E + 1), dtype=np.int64)
        got = run_ort(m, {"n": n})
        want = {"Floor": n // den, "Ceil": -(-n // den), "Trunc": np.where(n >= 0, n // den, -(-n // den)),
                "Round": _half_even(n, den)}
        for k, w in want.items():
            keep = np.abs(n) <= (E // 2 if k == "Round" and den % 2 else E)
            assert np.array_equal(got[k][keep], w[keep]), (k, den, lo)
        # the written forms are those formulas (spot-checked: dims.evaluate is per integer)
        for x in (int(n[0]), int(n[len(n) // 3]), int(n[-1])):
            for k, f in forms.items():
                if abs(x) <= (E // 2 if k == "Round" and den % 2 else E):
                    assert dims.evaluate(f, {"n": x}) == int(want[k][np.searchsorted(n, x)]), (k, x)


def _half_even(n, den):
    q, r = np.divmod(n, den)  # n = q*den + r, 0 <= r < den
    up = (2 * r > den) | ((2 * r == den) & (q % 2 == 1))
    return q + up


def _cast_chain(src):
    """h cast to float type ``src``, then to uint8, then to int64."""
    nodes = [helper.make_node("Shape", ["a"], ["s"]), helper.make_node("Cast", ["s"], ["f"], to=src),
             helper.make_node("Cast", ["f"], ["u"], to=U8), helper.make_node("Cast", ["u"], ["o"], to=I64)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", U8, ["h"])],
                          [helper.make_tensor_value_info("o", I64, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_a_float_cast_to_uint8_wraps_only_within_int32():
    """onnxruntime casts a float to uint8 through int32: the low byte within int32's range
    (300.0 -> 44), 0 past it (2**31 + 44 -> 0). A float32 size is within it (its mantissa
    bound), so h % 256 holds; a float64 one may not: unknown."""
    m = _cast_chain(FLOAT)
    res = check(m, cases([3, 300, 1000]), values=["o"])
    assert str(res.values["o"].value[0]) == "h % 256"
    g = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=U8)], "g",
                          [helper.make_tensor_value_info("x", DOUBLE, [2])], [helper.make_tensor_value_info("y", U8, [2])])
    cast = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    cast.ir_version = 8
    assert run_ort(cast, {"x": np.array([300.0, 2.0**31 + 44], np.float64)})["y"].tolist() == [44, 0]
    res = onnxsym.infer(_cast_chain(DOUBLE))
    (v,) = res.values["o"].value
    assert str(v) in res.fresh


def _recast_model(first, second, quotient_first=False):
    """h cast to ``first``, then to ``second``; divided by 3 (before the second cast where
    ``quotient_first``), floored, cast to int64."""
    c1 = helper.make_tensor("three", first if quotient_first else second, [], [3.0])
    nodes = [helper.make_node("Shape", ["a"], ["s"]), helper.make_node("Squeeze", ["s"], ["h"]),
             helper.make_node("Cast", ["h"], ["f1"], to=first), helper.make_node("Constant", [], ["three"], value=c1)]
    if quotient_first:
        nodes += [helper.make_node("Div", ["f1", "three"], ["q"]), helper.make_node("Cast", ["q"], ["f2"], to=second),
                  helper.make_node("Floor", ["f2"], ["fl"])]
    else:
        nodes += [helper.make_node("Cast", ["f1"], ["f2"], to=second), helper.make_node("Div", ["f2", "three"], ["q"]),
                  helper.make_node("Floor", ["q"], ["fl"])]
    nodes.append(helper.make_node("Cast", ["fl"], ["o"], to=I64))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", U8, ["h"])],
                          [helper.make_tensor_value_info("o", I64, [])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_a_size_recast_between_float_types():
    """float32 -> float64 keeps the exact size (under float32's bound); float64 -> float32
    records float32's; a float32 quotient cast to float64 is float32's rounding, not
    float64's: not carried over (unknown)."""
    res = check(_recast_model(FLOAT, DOUBLE), cases([0, 7, 9, E]), values=["o"])
    assert _assumed(res) == {f"h <= {E}"}
    res = check(_recast_model(DOUBLE, FLOAT), cases([0, 7, 9, E]), values=["o"])
    assert _assumed(res) == {f"h <= {E}"}
    res = onnxsym.infer(_recast_model(FLOAT, DOUBLE, quotient_first=True))
    (v,) = res.values["o"].value
    assert str(v) in res.fresh


def test_a_shift_that_is_not_kept_records_no_bound():
    """The shift past its bound (above) gives up: the quotient's own bound (h <= 2**23) is not
    recorded for it, only the Cast's h <= 2**24."""
    forms = {"far": [("Div", 10.0), ("Add", float(2**23)), ("Floor", None)]}
    assert _assumed(onnxsym.infer(float_model(["far"], forms=forms))) == {f"h <= {E}"}
