"""Quotients of symbolic sizes computed in float32, as exporters write them
(``math.ceil(h / p)``: Cast(float) -> Div -> Ceil -> Cast(int64); ``floor(h * 0.5)``), checked
against onnxruntime's values, also at sizes next to 2**24 where float32 stops holding every
integer (floatops.Quotient has the argument for why they are exact up to there)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from oracle import check, run_ort

import onnxsym
from onnxsym import dims
from onnxsym.facts.fact import Origin

U8, I64, FLOAT = TensorProto.UINT8, TensorProto.INT64, TensorProto.FLOAT
E = 2**24

# output name -> nodes computing it (int64 scalar) from hf = float(h), pf = float(p)
FORMS = {
    "ceil_div": [helper.make_node("Div", ["hf", "pf"], ["q"]), helper.make_node("Ceil", ["q"], ["qc"]),
                 helper.make_node("Cast", ["qc"], ["ceil_div"], to=I64)],
    "floor_div": [helper.make_node("Div", ["hf", "pf"], ["q2"]), helper.make_node("Floor", ["q2"], ["qf"]),
                  helper.make_node("Cast", ["qf"], ["floor_div"], to=I64)],
    "trunc_div": [helper.make_node("Div", ["hf", "pf"], ["q3"]), helper.make_node("Cast", ["q3"], ["trunc_div"], to=I64)],
    # MobileViT's patch size: ceil(h / 2) * 2
    "patched": [helper.make_node("Div", ["hf", "two"], ["h2"]), helper.make_node("Ceil", ["h2"], ["h3"]),
                helper.make_node("Mul", ["h3", "two"], ["h4"]), helper.make_node("Cast", ["h4"], ["patched"], to=I64)],
    "half": [helper.make_node("Mul", ["hf", "point5"], ["hh"]), helper.make_node("Floor", ["hh"], ["hh2"]),
             helper.make_node("Cast", ["hh2"], ["half"], to=I64)],
    "three_halves": [helper.make_node("Mul", ["hf", "one5"], ["h15"]), helper.make_node("Ceil", ["h15"], ["h16"]),
                     helper.make_node("Cast", ["h16"], ["three_halves"], to=I64)],
}


def quotient_model(names):
    consts = {"two": 2.0, "point5": 0.5, "one5": 1.5, "point7": 0.7}
    nodes = [helper.make_node("Shape", ["a"], ["sa"]), helper.make_node("Shape", ["b"], ["sb"]),
             helper.make_node("Squeeze", ["sa"], ["h"]), helper.make_node("Squeeze", ["sb"], ["p"]),
             helper.make_node("Cast", ["h"], ["hf"], to=FLOAT), helper.make_node("Cast", ["p"], ["pf"], to=FLOAT)]
    nodes += [helper.make_node("Constant", [], [k], value=helper.make_tensor(k, FLOAT, [], [v])) for k, v in consts.items()]
    for n in names:
        nodes += FORMS[n]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", U8, ["h"]),
                                       helper.make_tensor_value_info("b", U8, ["p"])],
                          [helper.make_tensor_value_info(n, I64, []) for n in names])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def cases(sizes):
    return [({"h": h, "p": p}, {"a": np.zeros(h, np.uint8), "b": np.zeros(p, np.uint8)}) for h, p in sizes]


def run(m, h, p):
    return {k: int(v) for k, v in run_ort(m, cases([(h, p)])[0][1]).items()}


def inferred(res, name, h, p):
    (d,) = res.values[name].value
    return dims.evaluate(d, {"h": h, "p": p})


SMALL = [(7, 2), (8, 2), (1, 3), (5, 5), (100, 7), (3, 100)]
# Next to 2**24: quotients a hair above an integer (1 + 1/(2**24 - 2)), just below one
# (2**24 / (2**23 + 1)), exact (2**24 / 2**23), and odd sizes whose halves round.
NEAR = [(E, 3), (E - 1, E - 2), (E, 2**23 + 1), (E, 2**23), (E - 1, 5), (E - 3, 1)]


def test_every_form_is_exact_and_resolved():
    m = quotient_model(list(FORMS))
    res = onnxsym.infer(m)
    text = {n: str(res.values[n].value[0]) for n in FORMS}
    assert text["ceil_div"] == "(h + p - 1)//p" and text["floor_div"] == text["trunc_div"] == "h//p"
    assert text["patched"] == "2*((h + 1)//2)" and text["half"] == "h//2"
    check(m, cases(SMALL), values=list(FORMS))


@pytest.mark.parametrize("h,p", NEAR)
def test_quotients_next_to_two_to_the_24(h, p):
    names = ["ceil_div", "floor_div", "trunc_div", "patched", "half"]
    check(quotient_model(names), cases([(h, p)]), values=names)


def test_a_scale_of_one_and_a_half_up_to_its_bound():
    """ceil(h * 1.5) is the quotient 3h / 2: exact while 3h <= 2**24 (recorded)."""
    res = check(quotient_model(["three_halves"]), cases([(E // 3, 1), (E // 3 - 1, 1), (7, 1)]),
                values=["three_halves"])
    assert any(str(c) == f"3*h <= {E}" for c in res.assumptions)


def test_the_float32_bound_is_recorded_and_needed():
    """Above 2**24 float32 rounds h itself (2**24 + 1 becomes 2**24), so the closed forms hold
    only within the recorded bound h <= 2**24; onnxruntime shows the difference there."""
    m = quotient_model(["floor_div"])
    res = onnxsym.infer(m)
    assert any(c.origin is Origin.EXACT_WITHIN and str(c) == f"h <= {E}" for c in res.assumptions)
    assert run(m, E + 1, 1)["floor_div"] == E != inferred(res, "floor_div", E + 1, 1)


def test_a_range_within_the_bound_needs_no_assumption():
    res = onnxsym.infer(quotient_model(["ceil_div"]), ranges={"h": (1, 4096), "p": (1, 64)})
    assert not [c for c in res.assumptions if c.origin is Origin.EXACT_WITHIN]
    assert str(res.values["ceil_div"].value[0]) == "(h + p - 1)//p"


def test_a_scale_whose_float_has_a_long_mantissa_stays_unknown():
    """floor(h * 0.7): float32's 0.7 is 11744051 / 2**24, exact only for h <= 1: not kept."""
    nodes = [helper.make_node("Mul", ["hf", "point7"], ["h7"]), helper.make_node("Floor", ["h7"], ["h8"]),
             helper.make_node("Cast", ["h8"], ["seventy"], to=I64)]
    m = quotient_model([])
    m.graph.node.extend(nodes)
    m.graph.output.append(helper.make_tensor_value_info("seventy", I64, []))
    onnx.checker.check_model(m)
    res = onnxsym.infer(m)
    (v,) = res.values["seventy"].value  # an unknown of its own: a fresh symbol, no expression over h
    assert str(v) in res.fresh and res.fresh[str(v)].op_type == "Cast"
