"""Scan 8 (a batch axis on every input and output, an optional sequence_lens) held to onnxruntime at
scan lengths 0 to 3: onnxruntime refuses a sequence_lens entry outside [1, the scan length], so with
sequence_lens a length of 0 is refused whatever the data (the domain states the length >= 1), and
which entries run is a condition on the data, said not stated (data-dependent); without it a length
of 0 runs, the final states the initial ones, and onnxruntime 1.32 gives no tensor at all for a scan
output there where onnx's inference leaves the body's output not all static (onnxsym writes
[B, 0, ...], which is what the spec stacks).

A state the body changes ([B, 4, H] against slices [S, 4], [B, 1, K], [B, T, H]): without
sequence_lens the body runs only at a length of at least 1 (what it needs holds there, by the sizes:
it was under a guard of its own, never checked), the state keeps its shape at lengths of 2 and more,
and at a length of 1 goes to a final buffer shaped as onnx's inference gives the body's output where
that is static, else as the initial state; at a length of 0 the initial state comes out, held to the
static dims onnx gives the output. With sequence_lens a row of one step goes to the final buffer too:
where that buffer is static, whether the state is fed back the entries decide (said data-dependent)."""

from __future__ import annotations

import itertools

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


def _model(lens: bool, state=("B", "S", 4), reader=None):
    """A Scan 8 adding each slice of x [B, I, S, 4] to the state s (by default [B, S, 4]); ``reader``:
    an op reading the scan output y2, whose output z is the graph's second output instead."""
    body = h.make_graph([h.make_node("Add", ["st", "a"], ["t"]), h.make_node("Identity", ["t"], ["so"]),
                         h.make_node("Identity", ["t"], ["sc"])], "b", [_vi("st"), _vi("a")], [_vi("so"), _vi("sc")])
    ins = [_vi("s", list(state)), _vi("x", ["B", "I", "S", 4])] + ([_vi("sl", ["B"], T.INT64)] if lens else [])
    nodes = [h.make_node("Scan", ["sl" if lens else "", "s", "x"], ["y1", "y2"], body=body, num_scan_inputs=1)]
    if reader is not None:
        nodes.append(h.make_node(reader, ["y2"] * (2 if reader == "Add" else 1), ["z"]))
    outs = [_vi("y1"), _vi("y2") if reader is None else _vi("z", None, T.INT64 if reader == "Shape" else T.FLOAT)]
    m = h.make_model(h.make_graph(nodes, "g", ins, outs), opset_imports=[h.make_opsetid("", 8)])
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


STATES = {"[B, 4, H]": (("B", 4, "H"), {"H": (0, 1, 2, 4), "S": (0, 1, 2, 4)}),
          "[B, 1, K]": (("B", 1, "K"), {"K": (0, 1, 2, 4), "S": (0, 1, 2, 4)}),
          "[B, T, H]": (("B", "T", "H"), {"T": (1, 4), "H": (1, 4), "S": (1, 4)})}


@pytest.mark.parametrize("lens", [False, True])
@pytest.mark.parametrize("state", sorted(STATES))
def test_scan8_state_the_body_changes_as_onnxruntime_runs_it(state, lens):
    """Every size of the grid: onnxruntime runs where the domain holds and refuses where it does not
    (with sequence_lens fed as the full length and as 1: a refusal inside the domain only with an entry
    above 1, where a data-dependent line on sequence_lens says so), every shape it gives matched."""
    shape, extra = STATES[state]
    m = _model(lens, shape)
    res = onnxsym.infer(m, allow_zero=True)
    domain = res.domain()
    data = [text for text, _ in domain.on_data() if "every entry of 'sl' is 1" in text]
    seen = set()
    with Child() as child:
        child.load(m.SerializeToString(), {"optimization": "all"})
        for values in itertools.product((1, 2), range(4), *extra.values()):
            sizes = dict(zip(["B", "I"] + list(extra), values))
            inside = domain.violated(sizes) is None
            sv = [sizes[d] if isinstance(d, str) else d for d in shape]
            for entry in ([sizes["I"], 1] if lens and sizes["I"] > 1 else [max(sizes["I"], 1)]):
                feeds = {"s": np.zeros(sv, np.float32), "x": np.ones((sizes["B"], sizes["I"], sizes["S"], 4), np.float32)}
                if lens:
                    feeds["sl"] = np.full(sizes["B"], entry, np.int64)
                try:
                    got = child.run(feeds, ["y1", "y2"])
                except Refused:
                    got = None
                seen.add((got is not None, inside))
                if got is None and inside:  # (only the data may decide it: entries above 1)
                    assert lens and entry > 1 and data, (sizes, entry, domain)
                    continue
                assert (got is not None) == inside, (sizes, entry, got, domain)
                for name, out in zip(("y1", "y2"), got or ()):
                    if out is not None:
                        assert _matches(res.shape(name), out, sizes, res.fresh), (sizes, name, out, res.shape(name))
    assert {(True, True), (False, False)} <= seen
    assert not any("subgraph of Scan" in str(c) for c in domain.conditions), domain  # (by the sizes, not a choice)


@pytest.mark.parametrize("reader", [None, "Shape", "ReduceSum", "Add"])
@pytest.mark.parametrize("state", [("B", "S", 4), ("B", 4, "H")])
def test_scan8_scan_output_of_no_step(state, reader):
    """At a length of 0 onnxruntime gives the scan output no tensor where onnx's inference leaves the
    body's output not all static ([S, 4]; [4, 4] is static: a [B, 0, 4, 4] tensor); a node reading
    it is refused there ("Missing Input"), so the domain needs I >= 1 exactly then. The written model
    does at a length of 0 what the original does (its [B, I, S, 4] changes nothing of onnxruntime's)."""
    m = _model(False, state, reader)
    res = onnxsym.infer(m, allow_zero=True)
    domain = res.domain()
    written = onnxsym.write_result(res)
    names = [o.name for o in m.graph.output]
    verdicts = {}
    for which, model in (("original", m), ("written", written)):
        with Child() as child:
            child.load(model.SerializeToString(), {"optimization": "all"})
            for b, i, s, hh in itertools.product((1, 2), range(3), (1, 4), (1, 4)):
                sizes = {"B": b, "I": i, "S": s, "H": hh}
                sv = [sizes[d] if isinstance(d, str) else d for d in state]
                feeds = {"s": np.zeros(sv, np.float32), "x": np.ones((b, i, s, 4), np.float32)}
                try:
                    got = child.run(feeds, names)
                except Refused:
                    got = None
                verdicts.setdefault(tuple(sizes.items()), []).append(got)
                if which == "original":
                    assert (got is not None) == (domain.violated(sizes) is None), (sizes, got, domain)
    for sizes, (a, b) in verdicts.items():
        assert a == b, (dict(sizes), a, b)
    static = state[1] == 4 and state[2] == "H"
    zero = [got for sizes, (got, _) in verdicts.items() if dict(sizes)["I"] == 0]
    if reader is None:
        assert all(got is not None and (got[1] is None) != static for got in zero), zero
    else:
        assert all((got is None) != static for got in zero), zero
