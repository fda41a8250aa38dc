"""Scan 8 (a batch axis on every input and output, an optional sequence_lens) held to onnxruntime at
scan lengths 0 to 3: onnxruntime refuses a sequence_lens entry outside [1, the scan length], so with
sequence_lens a length of 0 is refused whatever the data (the domain states the length >= 1), and
which entries run is a condition on the data, said not stated (data-dependent); without it a length
of 0 runs, the final states the initial ones, and onnxruntime 1.32 gives no tensor at all for a scan
output there (left alone: onnxsym writes [B, 0, ...], which is what the spec stacks)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym
from onnxsym.model.isolated import Child, Refused
from tests.op_verdicts import _matches

pytest.importorskip("onnxruntime")


def _vi(name, shape=None, dtype=T.FLOAT):
    return h.make_tensor_value_info(name, dtype, shape)


def _model(lens: bool):
    """A Scan 8 adding each slice of x [B, I, S, 4] to the state s [B, S, 4]."""
    body = h.make_graph([h.make_node("Add", ["st", "a"], ["t"]), h.make_node("Identity", ["t"], ["so"]),
                         h.make_node("Identity", ["t"], ["sc"])], "b", [_vi("st"), _vi("a")], [_vi("so"), _vi("sc")])
    ins = [_vi("s", ["B", "S", 4]), _vi("x", ["B", "I", "S", 4])] + ([_vi("sl", ["B"], T.INT64)] if lens else [])
    node = h.make_node("Scan", ["sl" if lens else "", "s", "x"], ["y1", "y2"], body=body, num_scan_inputs=1)
    m = h.make_model(h.make_graph([node], "g", ins, [_vi("y1"), _vi("y2")]), opset_imports=[h.make_opsetid("", 8)])
    m.ir_version = 3
    return m


@pytest.mark.parametrize("lens", [True, False])
def test_scan8_lengths_0_to_3_as_onnxruntime_runs_them(lens):
    m = _model(lens)
    res = onnxsym.infer(m, allow_zero=True)
    domain = res.domain()
    seen = set()
    with Child() as child:
        child.load(m.SerializeToString(), {"optimization": "all"})
        for b in (1, 2):
            for i in range(4):
                for s in (1, 3):
                    sizes = {"B": b, "I": i, "S": s}
                    feeds = {"s": np.zeros((b, s, 4), np.float32), "x": np.ones((b, i, s, 4), np.float32)}
                    if lens:  # (the full length, and the shortest entry the data may give)
                        feeds["sl"] = np.array([max(i, 1)] * b, np.int64)
                    try:
                        got = child.run(feeds, ["y1", "y2"])
                    except Refused:
                        got = None
                    inside = domain.violated(sizes) is None
                    seen.add((got is not None, inside))
                    assert (got is not None) == inside, (sizes, got, domain)
                    if got is not None:
                        assert (got[1] is None) == (i == 0), (sizes, got)  # (no scan output of no step)
                        for name, shape in zip(("y1", "y2"), got):
                            if shape is not None:
                                assert _matches(res.shape(name), shape, sizes, res.fresh), (sizes, name, shape)
    assert (True, True) in seen
    assert ((False, False) in seen) == lens  # (a length of 0 is refused with sequence_lens only)
    data = [text for text, _ in domain.on_data()]
    assert any("sequence_lens" in text or "'sl'" in text for text in data) == lens, domain.unstated


def test_scan8_refuses_an_entry_outside_1_to_the_length():
    """The data condition: an entry of 0, or past the length, is refused at sizes inside the domain."""
    m = _model(True)
    with Child() as child:
        child.load(m.SerializeToString(), {"optimization": "all"})
        base = {"s": np.zeros((1, 1, 4), np.float32), "x": np.ones((1, 2, 1, 4), np.float32)}
        child.run({**base, "sl": np.array([2], np.int64)}, ["y1"])
        for bad in (0, 3):
            with pytest.raises(Refused):
                child.run({**base, "sl": np.array([bad], np.int64)}, ["y1"])
    assert onnxsym.infer(m, allow_zero=True).domain().violated({"B": 1, "I": 2, "S": 1}) is None
