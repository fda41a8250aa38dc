"""The domain checks each distinct node once and replays its raw conditions for the repeats
(onnxsym.domain.replay): the raws and the domain must be exactly those of checking every node.
Compared with the replay off and on over every model of models/ and on hand-built graphs whose
repeated nodes differ only in what the key must cover (element bounds, attributes, outputs, data);
those graphs' domains are also judged by onnxruntime at their boundaries."""

import glob
import os

import numpy as np
import pytest
from domain_boundary import check_all
from helpers import I64, F, init, model
from onnx import helper

import onnxsym
from onnxsym.domain import collect, compute, needs
from onnxsym.errors import ShapeContradiction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "models", "**", "*.onnx"), recursive=True))
N = helper.make_node


def _both(result, monkeypatch):
    """(raws, domain json, domain lines) with the replay off, then on."""
    out = []
    for replay in (False, True):
        monkeypatch.setattr(collect, "REPLAY", replay)
        with result.env:
            raws = collect.raw_conditions(result)
        try:
            d = compute(result)
            said: tuple = (d.to_json(), d.lines())
        except ShapeContradiction as exc:  # (a condition that holds at no size: the same one both ways)
            said = (str(exc),)
        out.append(([(r, r.fact.node, r.order, r.fact.place, r.fact.reason, str(r.fact)) for r in raws], *said))
    return out


@pytest.mark.parametrize("path", MODELS)
def test_every_model_has_the_same_raws_and_domain_replayed(path, monkeypatch):
    off, on = _both(onnxsym.infer(os.path.join(ROOT, path)), monkeypatch)
    assert off == on


def test_the_corpus_is_every_model():
    assert len(MODELS) > 150 and "models/real/silero_vad.onnx" in MODELS


# ------------------------------------------------------------------ repeats the key must tell apart

def _dim(x, axis, out):
    """Nodes making the scalar ``out`` = dim ``axis`` of ``x``."""
    return [N("Shape", [x], [f"{out}_shape"], name=f"{out}_shape"),
            N("Gather", [f"{out}_shape", f"{out}_axis"], [out], name=f"{out}_dim")], [init(f"{out}_axis", np.int64(axis))]


_ONE = [init("zero", np.int64(0)), init("one", np.int64(1))]


def _two_ranges(a, b):
    """Nodes (and initializers) making ``a`` = 0 .. seq-1 and ``b`` = 1 .. seq from X ``[seq]``."""
    n, i = _dim("X", 0, "s")
    return n + [N("Add", ["s", "one"], ["s1"], name="s1"), N("Range", ["zero", "s", "one"], [a], name=f"range_{a}"),
                N("Range", ["one", "s1", "one"], [b], name=f"range_{b}")], i


def shifted_positions():
    """Rows 0 .. seq-1 and 1 .. seq of one table: the two Ranges' values are one (int64, (seq,)),
    their element bounds are not: seq <= 9, from the second Gather."""
    n, i = _two_ranges("pos0", "pos1")
    return model(n + [N("Gather", ["T", "pos0"], ["rows0"], name="rows0"),
                      N("Gather", ["T", "pos1"], ["rows1"], name="rows1"),
                      N("Add", ["rows0", "rows1"], ["Y"], name="add")],
                 [("X", F, ["seq"])], [("Y", F, None)], inits=i + _ONE + [init("T", np.ones((10, 2), np.float32))])


def two_axes():
    """One GatherElements of the same positions on axis 0 (10 rows) and on axis 1 (6 columns):
    their outputs are one value (the indices' shape), only the attribute differs; seq <= 6."""
    n, i = _dim("X", 0, "s")
    return model(n + [N("Range", ["zero", "s", "one"], ["pos"], name="range"),
                      N("Unsqueeze", ["pos", "ax1"], ["idx"], name="unsq"),
                      N("GatherElements", ["T", "idx"], ["rows"], axis=0, name="rows"),
                      N("GatherElements", ["T", "idx"], ["cols"], axis=1, name="cols"),
                      N("Add", ["rows", "cols"], ["Y"], name="add")],
                 [("X", F, ["seq"])], [("Y", F, None)],
                 inits=i + _ONE + [init("T", np.ones((10, 6), np.float32)), init("ax1", np.array([1], np.int64))])


def two_tables():
    """The same positions into a table of 10 rows and one of 4: the outputs are one value (the
    indices' shape), only an input differs; seq <= 4, from the second."""
    n, i = _dim("X", 0, "s")
    return model(n + [N("Range", ["zero", "s", "one"], ["pos"], name="range"),
                      N("Unsqueeze", ["pos", "ax1"], ["idx"], name="unsq"),
                      N("GatherElements", ["T", "idx"], ["a"], axis=0, name="a"),
                      N("GatherElements", ["U", "idx"], ["b"], axis=0, name="b"),
                      N("Add", ["a", "b"], ["Y"], name="add")],
                 [("X", F, ["seq"])], [("Y", F, None)],
                 inits=i + _ONE + [init("T", np.ones((10, 6), np.float32)), init("U", np.ones((4, 6), np.float32)),
                                   init("ax1", np.array([1], np.int64))])


def two_splits():
    """One input split in 2 and in 3 equal parts: only the outputs differ; seq % 6 == 0."""
    return model([N("Split", ["X"], ["h0", "h1"], axis=0, name="halves"),
                  N("Split", ["X"], ["t0", "t1", "t2"], axis=0, name="thirds"),
                  N("ReduceSum", ["h0"], ["a"], keepdims=0, name="a"),
                  N("ReduceSum", ["t0"], ["b"], keepdims=0, name="b"),
                  N("Add", ["a", "b"], ["Y"], name="add")],
                 [("X", F, ["seq"])], [("Y", F, None)])


def two_index_tables():
    """Rows [0, 1] and [0, 7] of a table of n rows: the indices differ in their data only;
    n >= 8, from the second. Nodes named after the symbol (its label may be in a reason)."""
    return model([N("Gather", ["T", "ia"], ["ra"], name="n"),
                  N("Gather", ["T", "ib"], ["rb"], name="seq"),
                  N("Add", ["ra", "rb"], ["Y"], name="add")],
                 [("T", F, ["n", 2])], [("Y", F, None)],
                 inits=[init("ia", np.array([0, 1], np.int64)), init("ib", np.array([0, 7], np.int64))])


GRAPHS = [
    ("shifted_positions", shifted_positions, {"seq": 3}, ["seq <= 9"], ["rows1"]),
    ("two_axes", two_axes, {"seq": 3}, ["seq <= 6"], ["cols"]),
    ("two_tables", two_tables, {"seq": 3}, ["seq <= 4"], ["b"]),
    ("two_splits", two_splits, {"seq": 6}, ["seq % 6 == 0"], ["thirds"]),
    ("two_index_tables", two_index_tables, {"n": 9}, ["n >= 8"], ["seq"]),
]


@pytest.mark.parametrize("name, make, base, texts, nodes", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_repeats_that_differ_only_in_what_the_key_covers(name, make, base, texts, nodes, monkeypatch):
    result, domain, outcomes = check_all(make(), base, expect=texts)  # (judged by onnxruntime)
    assert [o[2] for o in outcomes] == [f"fails at {n}" for n in nodes]
    off, on = _both(onnxsym.infer(make()), monkeypatch)
    assert off == on


def same_name_twice():
    """Gather(P, P) then Gather(P, R): P (0 .. seq-1) and R (1 .. seq) are one value and so are
    the outputs; only that the first reads its indices' bounds from its data's name tells them
    apart (R's last index is out of range: the second node never runs)."""
    n, i = _two_ranges("P", "R")
    return model(n + [N("Gather", ["P", "P"], ["a"], name="a"),
                      N("Gather", ["P", "R"], ["b"], name="b"),
                      N("Add", ["a", "b"], ["Y"], name="add")],
                 [("X", F, ["seq"])], [("Y", I64, None)], inits=i + _ONE)


def test_which_inputs_share_a_name_is_part_of_the_key(monkeypatch):
    result = onnxsym.infer(same_name_twice())
    off, on = _both(result, monkeypatch)
    assert {r[1] for r in off[0]} == {"b"} and off == on  # (only b: its indices reach seq)
    assert "Gather node 'b'" in off[1] and "no size" in off[1]  # (b runs at no size: a contradiction)
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # (the graph as it is)
    sess = ort.InferenceSession(same_name_twice().SerializeToString(), options, providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="Name:'b'"):  # (onnxruntime: b fails; a runs)
        sess.run(None, {"X": np.zeros(3, np.float32)})


def test_a_repeated_layer_is_checked_once(monkeypatch):
    """Not vacuous: on a model of repeated layers the broadcast check runs on fewer nodes."""
    calls = []
    real = needs._broadcast

    def counted(*args):
        calls.append(args[3])
        return real(*args)

    monkeypatch.setattr(needs, "_broadcast", counted)
    result = onnxsym.infer(os.path.join(ROOT, "models/llama_tiny_ts.onnx"))
    off, on = [], []
    for replay, seen in ((False, off), (True, on)):
        monkeypatch.setattr(collect, "REPLAY", replay)
        calls.clear()
        compute(result)
        seen.extend(calls)
    assert len(on) < len(off) / 1.5, (len(on), len(off))


def test_a_replayable_check_that_reads_another_value_is_not_replayed(monkeypatch):
    """The first node of a key is watched: a read of a value not the node's keeps it from replay."""
    from onnxsym.registry import Condition, rules

    seen = []

    def check(site):
        seen.append(site.label)
        site.values.get("input_ids")
        return ()

    entry = rules.entry("", "Add")
    monkeypatch.setattr(entry, "conditions", (Condition("spy", check, replayable=True),) + entry.conditions)
    result = onnxsym.infer(os.path.join(ROOT, "models/llama_tiny_ts.onnx"))
    compute(result)
    adds = [n for n in result.model.graph.node if n.op_type == "Add"]
    assert len(seen) == len(adds) > 2


def test_an_op_with_a_check_not_marked_replayable_is_checked_at_every_node(monkeypatch):
    """A plugin's check may read anything of its site: never replayed."""
    from onnxsym.registry import Condition, rules

    seen = []

    def check(site):
        seen.append(site.label)
        return ()

    entry = rules.entry("", "Add")
    monkeypatch.setattr(entry, "conditions", (Condition("spy", check),) + entry.conditions)
    result = onnxsym.infer(os.path.join(ROOT, "models/llama_tiny_ts.onnx"))
    compute(result)
    adds = [n for n in result.model.graph.node if n.op_type == "Add"]
    assert len(seen) == len(adds) > 2

