"""``Domain.violated`` is correct by itself: a binding outside a symbol's range (0 where the
range starts at 1, past a ``ranges=`` bound) breaks it, named as a range condition, though
no stated condition covers it (callers checked the ranges first; one that did not got None)."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym

pytest.importorskip("onnxruntime")


def _argmax():
    m = h.make_model(h.make_graph([h.make_node("ArgMax", ["x"], ["y"], axis=0)], "g",
                                  [h.make_tensor_value_info("x", T.FLOAT, ["n", "m"])],
                                  [h.make_empty_tensor_value_info("y")]), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _runs(m, n) -> bool:
    from onnxsym.model.isolated import Child, Refused

    with Child() as child:
        child.load(m.SerializeToString())
        try:
            child.run({"x": np.ones((n, 2), np.float32)}, ["y"])
            return True
        except Refused:
            return False


def test_a_size_below_the_range_is_violated():
    """ArgMax over an empty axis: onnxruntime refuses n = 0; the domain is over n >= 1 and says so."""
    m = _argmax()
    domain = onnxsym.infer(m).domain()
    assert not _runs(m, 0) and _runs(m, 1)
    bad = domain.violated({"n": 0, "m": 2})
    assert bad is not None and bad.kind == "range" and bad.text == "n >= 1" and "range of n" in bad.describe()
    assert domain.violated({"n": 1, "m": 2}) is None


def test_a_size_past_a_given_range_is_violated():
    domain = onnxsym.infer(_argmax(), ranges={"n": (2, 5)}).domain()
    assert domain.violated({"n": 6, "m": 2}).text == "2 <= n <= 5"
    assert domain.violated({"n": 1, "m": 2}) is not None and domain.violated({"n": 3, "m": 2}) is None
