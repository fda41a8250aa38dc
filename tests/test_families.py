"""The six patterns of the exporter families in issue 22, each a hand-built graph checked
against onnxruntime: dims at sizes inside the domain, and each stated condition at its
boundary (just inside runs, just outside fails)."""

import numpy as np
import pytest
from onnx import helper

import onnxsym
from onnxsym.explain import Lineage
from helpers import F, I64, init, model
from oracle import check, random_cases, run_ort


def _fails(m, feeds):
    with pytest.raises(Exception):
        run_ort(m, feeds)


# ---------------------------------------------------------------- 4. float pads through Clip

def _same_pads(hi):
    """timm's TF-"same" pads as TorchScript writes them: ceil(H / 2) * 2 - H in float32, through
    Clip(min=0, max=hi), cast, reshaped to [2, 3] and transposed (pads in torch's order)."""
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["xs"]), n("Gather", ["xs", "i2"], ["H"]),
             n("Cast", ["H"], ["Hf"], to=F), n("Div", ["Hf", "twof"], ["hq"]),
             n("Ceil", ["hq"], ["hc"]), n("Mul", ["hc", "twof"], ["hm"]), n("Sub", ["hm", "Hf"], ["pd"]),
             n("Clip", ["pd", "zerof", "hif"], ["pc"], name="the_clip"),
             n("Concat", ["zf", "zf", "pc", "zf", "zf", "pc"], ["padsf"], axis=0),
             n("Cast", ["padsf"], ["padsi"], to=I64),
             n("Reshape", ["padsi", "r23"], ["p2"]), n("Transpose", ["p2"], ["p3"], perm=[1, 0]),
             n("Reshape", ["p3", "m1"], ["pads"]), n("Pad", ["x", "pads"], ["y"])]
    inits = [init("i2", np.array([2])), init("twof", np.array(2.0, np.float32)),
             init("zerof", np.array(0.0, np.float32)), init("hif", np.array(hi, np.float32)),
             init("zf", np.array([0.0], np.float32)), init("r23", np.array([2, 3])), init("m1", np.array([-1]))]
    return model(nodes, [("x", F, ["b", 3, "H"])], ["y", "pads"], inits)


def test_float_pads_through_clip_are_tracked():
    m = _same_pads(100.0)
    sizes = [{"b": 2, "H": 5}, {"b": 1, "H": 8}, {"b": 3, "H": 1}]
    res = check(m, random_cases([("x", F, ["b", 3, "H"])], sizes), values=("pads",))
    assert not res.unresolved()


def test_explain_names_the_clip_that_lost_the_pads():
    """A fractional upper bound leaves the pads unknown: the loss began at the Clip, upstream of
    the Reshape, Transpose, Reshape and Cast the pads go through."""
    res = onnxsym.infer(_same_pads(0.5))
    e = Lineage(res).explain("y", 2)
    assert not e.resolved and e.cause is not None and e.cause.node == "the_clip", e.headline()
