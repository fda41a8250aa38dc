"""Sizes computed in float that floatops follows exactly beyond one quotient (see its
docstrings for each argument): an integral product by a power of two past 2**24 (``64*h``),
a sum with a short binary fraction rounded once (``h*0.5 + 0.25``), a float fraction's margin
(``h + 0.7`` is 0.3 from every integer), a quotient scaled by a power of two or negated, a
decimal constant's side (``h*0.3`` is at or above ``3h/10`` in float32), and float16 where
the size is proven small. Each is checked against onnxruntime's values at small sizes and
next to its bound, the bound is the one recorded, and past it the formula would be wrong."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from oracle import check, run_ort

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

U8, I64, FLOAT, DOUBLE, HALF = TensorProto.UINT8, TensorProto.INT64, TensorProto.FLOAT, TensorProto.DOUBLE, \
    TensorProto.FLOAT16
NP = {FLOAT: np.float32, DOUBLE: np.float64, HALF: np.float16}
E = 2**24


def chain_model(forms, to=FLOAT, clamp=None):
    """h = the length of uint8 input ``a`` (``min(h, clamp)`` where given), cast to ``to``; each
    output its form's ops ((op, float constant or None) in turn) and a Cast to int64."""
    nodes = [helper.make_node("Shape", ["a"], ["sa"]), helper.make_node("Squeeze", ["sa"], ["h"])]
    inits = []
    src = "h"
    if clamp is not None:
        inits.append(numpy_helper.from_array(np.array(clamp, np.int64), "clamp"))
        nodes.append(helper.make_node("Min", ["h", "clamp"], ["hc"]))
        src = "hc"
    nodes.append(helper.make_node("Cast", [src], ["hf"], to=to))
    for out, ops in forms.items():
        cur = "hf"
        for i, (op, c) in enumerate(ops):
            nxt = f"{out}_{i}"
            if c is None:
                nodes.append(helper.make_node(op, [cur], [nxt]))
            else:
                inits.append(numpy_helper.from_array(np.array(c, NP[to]), f"{out}_c{i}"))
                nodes.append(helper.make_node(op, [cur, f"{out}_c{i}"], [nxt]))
            cur = nxt
        nodes.append(helper.make_node("Cast", [cur], [out], to=I64))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", U8, ["h"])],
                          [helper.make_tensor_value_info(n, I64, []) for n in forms], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def cases(sizes):
    return [({"h": h}, {"a": np.zeros(h, np.uint8)}) for h in sizes]


def _assumed(res):
    return {c.text for c in res.domain().conditions if c.assumed}


def _within(res, sizes):
    """Every size (but 0: a symbol is at least 1 by default) is one the domain allows: the
    check is at sizes it promises."""
    dom = res.domain()
    for h in [h for h in sizes if h]:
        assert dom.violated({"h": h}) is None, (h, dom.violated({"h": h}).describe())


def _real(m, name, h):
    return int(run_ort(m, {"a": np.zeros(h, np.uint8)})[name])


def _formula(res, name, h):
    (d,) = res.values[name].value
    return dims.evaluate(d, {"h": h})


SMALL = [0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 29, 30, 31, 99, 100, 101, 1000, 2047, 2048, 2049, 65504, 65521]

FORMS = {
    # an integral product by a power of two is exact past 2**24 (64*h = 2**6 * h)
    "times_64": [("Mul", 64.0), ("Div", 128.0), ("Floor", None)],
    # short binary fractions: each result the real one rounded once
    "half_plus_quarter": [("Mul", 0.5), ("Add", 0.25), ("Floor", None)],
    "half_plus_quarter_ceil": [("Mul", 0.5), ("Add", 0.25), ("Ceil", None)],
    "quarter_times_quarter": [("Mul", 0.25), ("Mul", 0.25), ("Ceil", None)],
    "half_minus_half_round": [("Mul", 0.5), ("Sub", 0.5), ("Round", None)],
    # a fraction's margin: h + 0.7 is 0.3 from every integer
    "plus_point_seven": [("Add", 0.7), ("Floor", None)],
    "plus_point_seven_ceil": [("Add", 0.7), ("Ceil", None)],
    "minus_a_tenth": [("Sub", 0.1), ("Ceil", None)],
    # a rounded quotient scaled by a power of two, or negated
    "third_times_two": [("Div", 3.0), ("Mul", 2.0), ("Floor", None)],
    "third_negated": [("Div", 3.0), ("Div", -1.0), ("Ceil", None)],
    "fifth_halved": [("Div", 5.0), ("Mul", 0.5)],
    # a decimal constant: the side of the rational it stands for
    "times_point_three": [("Mul", 0.3), ("Floor", None)],
    "times_a_tenth": [("Mul", 0.1)],
}


def test_every_chain_resolves_and_matches_onnxruntime():
    m = chain_model(FORMS)
    res = check(m, cases(SMALL), values=list(FORMS))
    assert not res.fresh, res.fresh
    _within(res, SMALL)


# each chain's bound on h, the assumption it records (h <= 2**24 is the Cast's own)
BOUNDS = {"half_plus_quarter": 2**23 - 1, "half_plus_quarter_ceil": 2**23 - 1, "plus_point_seven": 5033164,
          "plus_point_seven_ceil": 5033164, "minus_a_tenth": 1677721, "third_times_two": 2**23,
          "times_point_three": 3355443, "times_a_tenth": 13421772}


def test_the_bounds_recorded():
    for name in FORMS:
        res = onnxsym.infer(chain_model({name: FORMS[name]}))
        assert _assumed(res) == {f"h <= {BOUNDS.get(name, E)}"}, name


# next to the bounds: 2**21, 2**22, 2**23 (a float32's spacing 0.25, 0.5, 1 past them) and each chain's own
NEAR = sorted({2**21 - 1, 2**21, 2**22 - 1, 2**22, 2**22 + 1, 2**23 - 1, 2**23, 2**23 + 1, E - 1, E,
               *BOUNDS.values()})


@pytest.mark.parametrize("h", NEAR)
def test_next_to_the_bounds(h):
    within = {n: ops for n, ops in FORMS.items() if h <= BOUNDS.get(n, E)}
    res = check(chain_model(within), cases([h]), values=list(within))
    _within(res, [h])


@pytest.mark.parametrize("name, h", [("times_point_three", 3495263), ("half_plus_quarter", 2**23 + 1),
                                     ("plus_point_seven", 2**23)])
def test_past_the_bound_the_formula_would_be_wrong(name, h):
    """Where onnxruntime's value first departs from the formula (found by numpy over every h up to
    2**24): past the bound recorded, which the domain refuses as an assumption."""
    m = chain_model({name: FORMS[name]})
    res = onnxsym.infer(m)
    assert _real(m, name, h) != _formula(res, name, h)
    bad = res.domain().violated({"h": h})
    assert bad is not None and bad.assumed


def test_a_product_by_a_power_of_two_is_exact_past_two_to_the_24():
    """160*h = 32*(5h) is exact while 5h <= 2**24, though 160*h is past 2**24; at 5h = 2**24 + 9
    (odd: no float32) onnxruntime's value is not the formula's."""
    m = chain_model({"t": [("Mul", 160.0)]})
    res = check(m, cases([0, 1, 7, (E - 1) // 5, E // 5]), values=["t"])
    assert _assumed(res) == {f"h <= {E // 5}"}
    h = (E + 9) // 5
    assert _real(m, "t", h) != _formula(res, "t", h)
    assert res.domain().violated({"h": h}) is not None


def test_a_decimal_constant_on_the_other_side_is_unknown():
    """0.7 in float32 is below 7/10: h*0.7 is at or below 7h/10, and where 7h/10 is an integer
    rounding may land on it or below it; floor is not claimed (nor ceil of h*0.3, above 3h/10)."""
    m = chain_model({"p7": [("Mul", 0.7), ("Floor", None)], "p3": [("Mul", 0.3), ("Ceil", None)]})
    res = onnxsym.infer(m)
    for name in ("p7", "p3"):
        (v,) = res.values[name].value
        assert str(v) in res.fresh
    # (and indeed: ceil(fl(10 * 0.3)) is 3 in float32, where ceil(10 * 0.30000001) would be 4)
    assert _real(m, "p3", 10) == 3


def test_double_chains():
    """In float64 the same chains hold to far larger sizes; 0.3 is below 3/10 there (above it in
    float32), so h*0.3 has its ceil known, and h / 0.3 its floor (whose float32 bound is one real
    sizes pass)."""
    forms = {n: FORMS[n] for n in ("half_plus_quarter", "plus_point_seven", "third_times_two")}
    forms["times_point_three_ceil"] = [("Mul", 0.3), ("Ceil", None)]
    forms["by_point_three"] = [("Div", 0.3), ("Floor", None)]
    m = chain_model(forms, to=DOUBLE)
    res = check(m, cases(SMALL + [E - 1, E, E + 1]), values=list(forms))
    assert not res.fresh
    _within(res, SMALL + [E + 1])


HALF_SIZES = [0, 1, 2, 3, 7, 100, 999, 1000, 1001, 1500, 2047, 2048, 2049, 4097, 65504, 65520, 70000]


def test_float16_where_the_size_is_proven_small():
    """min(h, 1000) in float16 is exact (below 2**11) and every chain on it is followed, at
    every size: no bound is recorded."""
    forms = {n: FORMS[n] for n in ("half_plus_quarter", "half_plus_quarter_ceil", "third_times_two",
                                   "third_negated", "quarter_times_quarter", "half_minus_half_round")}
    forms["by_three"] = [("Div", 3.0), ("Floor", None)]
    forms["by_three_round"] = [("Div", 3.0), ("Round", None)]
    m = chain_model(forms, to=HALF, clamp=1000)
    res = check(m, cases(HALF_SIZES), values=list(forms))
    assert not res.fresh, res.fresh
    assert not _assumed(res)


def test_float16_past_2048_is_unknown():
    """min(h, 4000) in float16 is rounded past 2048 in float16 arithmetic (2049 is 2048.0, and
    2048 / 3 floors to 682), but onnxruntime's CPU provider has no float16 Div or Floor: it
    computes the chain in float32 (its inserted Casts replace the float16 Cast), and gives 683.
    Which one a runtime gives past 2048 is its own: no formula, and no bound (2048 is a size real
    models pass, and the model runs there)."""
    m = chain_model({"by_three": [("Div", 3.0), ("Floor", None)]}, to=HALF, clamp=4000)
    res = onnxsym.infer(m)
    (v,) = res.values["by_three"].value
    assert str(v) in res.fresh
    assert not _assumed(res)
    assert int(np.floor(np.float16(2049) / np.float16(3))) == 682
    assert _real(m, "by_three", 2049) == 683


def test_numbers_beside_a_size_are_computed_as_numbers():
    """[0.75, h] * [0.5, 0.5]: the first element is a number times a number (numpy's float32, as
    onnxruntime), the second a Quotient; Floor gives [0, h // 2] (the whole value was lost before)."""
    nodes = [helper.make_node("Shape", ["a"], ["sa"]), helper.make_node("Cast", ["sa"], ["hf"], to=FLOAT),
             helper.make_node("Concat", ["c", "hf"], ["v"], axis=0), helper.make_node("Mul", ["v", "half"], ["w"]),
             helper.make_node("Floor", ["w"], ["f"]), helper.make_node("Cast", ["f"], ["out"], to=I64)]
    inits = [numpy_helper.from_array(np.array([0.75], np.float32), "c"),
             numpy_helper.from_array(np.array([0.5, 0.5], np.float32), "half")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", U8, ["h"])],
                          [helper.make_tensor_value_info("out", I64, [2])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    res = check(m, cases([1, 2, 7, 100]), values=["out"])
    assert res.values["out"].value[0] == 0
