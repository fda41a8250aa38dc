"""torch's dynamo exporter declares dims in the vocabulary of torch.utils._sympy.functions
(FloorDiv, CeilToInt(IntTrueDiv(...)), TruncToInt(2.0*ToFloat(...)), ...): read as claims,
checked like any declared text, never trusted. A wrong one is stale and the computed dim is
written; a right one is kept (--keep-declared-names) only where proven, which a float reading
is only where the ranges keep every integer within float64's 2**53. The written dims are run
in onnxruntime; a kept torch text is evaluated with Python's own float arithmetic."""

import math

import numpy as np
import pytest
from helpers import F, init, model
from onnx import helper
from oracle import check_written, run_ort, written_dims

import onnxsym

N = helper.make_node
SIZES = [{"height": 3, "width": 5}, {"height": 8, "width": 2}, {"height": 1, "width": 7}]

# torch's functions as Python computes them at run time: the test's own reading of the texts
TORCH = {"FloorDiv": lambda a, b: a // b, "CleanDiv": lambda a, b: a // b, "CeilDiv": lambda a, b: -(-a // b),
         "PythonMod": lambda a, b: a % b, "Mod": lambda a, b: a % b, "Min": min, "Max": max,
         "ToFloat": float, "FloatTrueDiv": lambda a, b: a / b, "IntTrueDiv": lambda a, b: a / b,
         "TruncToInt": math.trunc, "CeilToInt": math.ceil, "FloorToInt": math.floor, "Identity": lambda a: a,
         "PowByNatural": lambda a, b: a**b, "ModularIndexing": lambda a, b, c: (a // b) % c}


def _model(decl):
    """y = x[::2] (ceil(height/2) rows), z = Concat(x, x) (2*height), w = Concat(x, x, x)
    along width (3*width), each declared as ``decl`` gives."""
    nodes = [N("Slice", ["x", "zero", "big", "zero", "two"], ["y"]),
             N("Concat", ["x", "x"], ["z"], axis=0), N("Concat", ["x", "x", "x"], ["w"], axis=1)]
    outs = [("y", F, [decl["y"], "width"]), ("z", F, [decl["z"], "width"]), ("w", F, ["height", decl["w"]])]
    return model(nodes, [("x", F, ["height", "width"])], outs,
                 [init("zero", np.array([0], np.int64)), init("big", np.array([2**63 - 1], np.int64)),
                  init("two", np.array([2], np.int64))])


def _feeds(b):
    return {"x": np.zeros((b["height"], b["width"]), np.float32)}


RIGHT = {"y": "CeilToInt(IntTrueDiv(height, 2))", "z": "TruncToInt(2.0*ToFloat(height))",
         "w": "3*Max(width, 1) + PythonMod(width, width)"}
WRONG = {"y": "FloorDiv(height, 2) + height + 1", "z": "TruncToInt(3.0*ToFloat(height))",
         "w": "CeilToInt(FloatTrueDiv(ToFloat(width), 2.0)) + 3*width"}


def test_right_torch_claims_are_not_stale_and_wrong_ones_are():
    res = onnxsym.infer(_model(RIGHT))
    assert res.stale == [], res.stale
    res = onnxsym.infer(_model(WRONG))
    assert sorted(s.value for s in res.stale) == ["w", "y", "z"], res.stale
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert [written_dims(o) for o in out.graph.output] == [["(height + 1)//2", "width"], ["2*height", "width"],
                                                           ["height", "3*width"]]
    assert check_written(out, SIZES, _feeds) == 18


def _torch_value(text, b):
    return eval(text, {"__builtins__": {}}, {**TORCH, **b})  # noqa: S307 (the test's own texts)


def test_a_right_float_claim_is_proven_only_where_the_ranges_keep_floats_exact():
    m = _model(RIGHT)
    for b in SIZES:  # the premise: each right text, as Python computes it, is onnxruntime's dim
        real = run_ort(m, _feeds(b))
        for o in m.graph.output:
            declared = [d.dim_param for d in o.type.tensor_type.shape.dim]
            assert [_torch_value(d, b) for d in declared] == list(real[o.name].shape), (o.name, b)
    res = onnxsym.infer(m)  # heights up to 2**63 - 1: beyond 2**53 a float is not exact
    assert ("y", 0) not in res.declarations.proven and ("z", 0) not in res.declarations.proven
    assert ("w", 1) in res.declarations.proven  # integer functions: proven at every size
    kept = onnxsym.write_result(res, keep_declared_names=True)
    assert [written_dims(o) for o in kept.graph.output] == [["(height + 1)//2", "width"], ["2*height", "width"],
                                                            ["height", RIGHT["w"]]]
    assert check_written(onnxsym.write_result(res), SIZES, _feeds) == 18  # (the kept text: by the premise)
    res = onnxsym.infer(m, ranges={"height": (1, 2**20), "width": (1, 2**20)})
    assert {("y", 0), ("z", 0)} <= res.declarations.proven  # (under ranges, so not written: written_result)


def test_a_float_part_the_reading_cannot_follow_is_one_name_and_nothing_is_trusted():
    """The dynamo exporter's resize text: Min of two quotients is no exact float; the
    TruncToInt around it is a placeholder; the claim proves nothing and breaks nothing."""
    text = ("TruncToInt(32.0*ToFloat(CeilToInt(FloatTrueDiv(ToFloat(TruncToInt(ToFloat(height)*"
            "Min(IntTrueDiv(64, Min(height, width)), IntTrueDiv(128, Max(height, width))))), 32.0))))")
    res = onnxsym.infer(_model({"y": text, "z": text, "w": "3*width"}))
    assert [s.value for s in res.stale] == [], res.stale  # (a placeholder can take any value)
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert [written_dims(o)[0] for o in out.graph.output[:2]] == ["(height + 1)//2", "2*height"]
    assert check_written(out, SIZES, _feeds) == 18


# A frame count of a short signal divides a negative: torch's value is Python's float arithmetic
SIGNED = [("FloorToInt(IntTrueDiv(T - 64, 16)) + 1", lambda t: math.floor((t - 64) / 16) + 1),
          ("TruncToInt(IntTrueDiv(T - 64, 16))", lambda t: math.trunc((t - 64) / 16)),
          ("CeilToInt(IntTrueDiv(T - 64, -16))", lambda t: math.ceil((t - 64) / -16)),
          ("RoundToInt(IntTrueDiv(T - 7, 2))", lambda t: round((t - 7) / 2)),
          ("RoundToInt(IntTrueDiv(T, 3))", lambda t: round(t / 3))]


@pytest.mark.parametrize("text,value", SIGNED, ids=[t for t, _ in SIGNED])
def test_quotients_of_a_negative_and_round_are_read(text, value):
    from onnxsym import dims
    from onnxsym.facts import torch_text

    t = dims.symbol("T")
    r = torch_text.read(text, lambda name: t)
    assert r is not None and r.bounded  # (T's range passes 2**53: a claim read under that bound)
    for size in [*range(0, 200), 2**40 + 3, 2**52 - 1]:
        assert dims.evaluate(r.dim, {"T": size}) == value(size), (text, size)
