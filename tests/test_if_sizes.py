"""An If whose branches differ in rank on a condition over the sizes (torch's squeeze(k)
of a dynamic dim): when a later node runs with one branch only, the If takes it and its
condition is a condition of the domain; when nothing decides, the rank stays unknown.
Checked against onnxruntime inside the domain (same shapes) and outside it (it fails)."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import onnxsym
from tests.helpers import model
from tests.oracle import check, run_ort

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "..", "models", "real")


def _squeeze_like_if(x="x"):
    """``If((n + 3)//4 == 1, ReduceMean over axis 2, Identity)`` of ``x`` [batch, 4, n]:
    rank 2 for n <= 4, rank 3 above."""
    c = lambda name, v: helper.make_node("Constant", [], [name], value=helper.make_tensor(name, T.INT64, [], [v]))  # noqa: E731
    then = helper.make_graph([helper.make_node("ReduceMean", [x], ["mean"], axes=[2], keepdims=0)], "then", [],
                             [helper.make_empty_tensor_value_info("mean")])
    other = helper.make_graph([helper.make_node("Identity", [x], ["same"])], "else", [],
                              [helper.make_empty_tensor_value_info("same")])
    return [
        helper.make_node("Shape", [x], ["shape"]), c("two", 2), c("three", 3), c("four", 4), c("one", 1),
        helper.make_node("Gather", ["shape", "two"], ["n"]),
        helper.make_node("Add", ["n", "three"], ["n3"]),
        helper.make_node("Div", ["n3", "four"], ["q"]),
        helper.make_node("Equal", ["q", "one"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other),
    ]


def _lstm(y="y"):
    """Unsqueeze(y, 0) into an LSTM of hidden size 3: runs only when ``y`` has rank 2."""
    rng = np.random.default_rng(0)
    w = helper.make_tensor("W", T.FLOAT, [1, 12, 4], rng.standard_normal(48).astype(np.float32))
    r = helper.make_tensor("R", T.FLOAT, [1, 12, 3], rng.standard_normal(36).astype(np.float32))
    zero = helper.make_tensor("zero", T.INT64, [1], [0])
    nodes = [helper.make_node("Unsqueeze", [y, "zero"], ["x3"]),
             helper.make_node("LSTM", ["x3", "W", "R"], ["Y", "Y_h"], hidden_size=3)]
    return nodes, [w, r, zero]


X = ("x", T.FLOAT, ["batch", 4, "n"])


def _feeds(batch, n):
    return {"x": np.ones((batch, 4, n), np.float32)}


def test_a_later_node_that_needs_one_rank_decides_the_branch():
    lstm, inits = _lstm()
    m = model(_squeeze_like_if() + lstm, [X], ["y", "Y", "Y_h"], inits=inits, ir=10)
    inside = [({"batch": b, "n": n}, _feeds(b, n)) for b, n in ((1, 1), (3, 3), (2, 4))]
    res = check(m, inside)
    assert res.shape("y") == (res.shape("x")[0], 4)
    for n in (5, 9):  # outside the domain onnxruntime fails: the LSTM gets rank 4
        with pytest.raises(Exception, match="(?i)lstm|dimension|rank"):
            run_ort(m, _feeds(2, n))
    domain = res.domain()
    (cond,) = [c for c in domain.conditions if c.sources[0].op_type == "If"]
    assert cond.text == "n <= 4" and not cond.assumed
    assert "LSTM" in cond.sources[0].reason and domain.ranges["n"] == (1, 4)
    assert domain.violated({"batch": 1, "n": 5}) is cond and domain.violated({"batch": 1, "n": 4}) is None


def test_a_later_node_that_needs_the_else_rank_decides_it_and_that_trial_is_the_answer(monkeypatch):
    """A Transpose of rank 3 after the If: the then branch (rank 2) is refused, the else branch
    taken where n > 4, with the Transpose as the reason. The trial of the else branch ran with
    that reason already, so it is the inference returned: three runs (the first, stopped at the
    If, and one trial per branch), not a fourth."""
    from onnxsym.inference.engine import Engine

    runs = []
    real_run = Engine.run
    monkeypatch.setattr(Engine, "run", lambda self, until_split=False: (runs.append(dict(self.choices)),
                                                                        real_run(self, until_split))[1])
    m = model(_squeeze_like_if() + [helper.make_node("Transpose", ["y"], ["t"], perm=[0, 2, 1])], [X], ["t"], ir=10)
    inside = [({"batch": b, "n": n}, _feeds(b, n)) for b, n in ((1, 5), (2, 8), (3, 13))]
    res = check(m, inside)
    assert res.shape("t") == (res.shape("x")[0], res.shape("x")[2], 4)
    for n in (1, 4):  # outside the domain onnxruntime fails: the Transpose gets rank 2
        with pytest.raises(Exception, match="(?i)transpose|perm|rank"):
            run_ort(m, _feeds(2, n))
    (cond,) = [c for c in res.domain().conditions if c.sources[0].op_type == "If"]
    assert cond.text == "(n + 3)//4 != 1" and "Transpose" in cond.sources[0].reason
    assert res.domain().violated({"batch": 1, "n": 4}) is cond and res.domain().violated({"batch": 1, "n": 5}) is None
    runs.clear()
    assert onnxsym.infer(m).shape("t") == res.shape("t")
    assert len(runs) == 3 and [c.then for c in runs[-1].values()] == [False]
    assert "Transpose" in next(iter(runs[-1].values())).why


def test_the_condition_is_in_the_metadata_the_domain_and_explain(tmp_path):
    from click.testing import CliRunner

    from onnxsym.cli import main

    lstm, inits = _lstm()
    m = model(_squeeze_like_if() + lstm, [X], ["y", "Y", "Y_h"], inits=inits, ir=10)
    meta = {p.key: p.value for p in onnxsym.annotate(m).metadata_props}
    assert "LSTM" in meta["onnxsym.constraints"] and '"op_type": "If"' in meta["onnxsym.constraints"]
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path)
    r = CliRunner().invoke(main, ["domain", path])
    assert r.exit_code == 0 and "n <= 4: If 'If_" in r.output and "LSTM" in r.output, r.output
    r = CliRunner().invoke(main, ["explain", path, "y", "0"])
    assert r.exit_code == 0 and "holds where (n + 3)//4 == 1" in r.output, r.output


def test_nothing_after_the_if_decides_so_the_rank_stays_unknown():
    m = model(_squeeze_like_if() + [helper.make_node("Relu", ["y"], ["z"])], [X], ["z"], ir=10)
    res = onnxsym.infer(m)
    assert res.shape("y") is None and res.shape("z") is None
    assert "ranks 2 and 3" in res.unknown_rank["y"].reason
    assert not [c for c in res.constraints if c.op_type == "If"]
    # onnxruntime runs both ranks
    assert run_ort(m, _feeds(2, 3))["z"].shape == (2, 4)
    assert run_ort(m, _feeds(2, 7))["z"].shape == (2, 4, 7)


def test_a_split_nothing_decides_does_not_hide_a_later_one_that_a_node_decides(monkeypatch):
    """The first run stops at its first split (the If, which nothing after it decides); its
    trials both run, so the first run goes on to the end and meets the second split: a Squeeze
    of ``w`` [4, m] whose rank depends on m == 1, decided by the Transpose after it (m >= 2)."""
    from onnxsym.inference.engine import Engine

    partial = []
    real_run = Engine.run

    def run(self, until_split=False):
        real_run(self, until_split)
        partial.append(self.partial)

    monkeypatch.setattr(Engine, "run", run)
    m = model(_squeeze_like_if() + [helper.make_node("Relu", ["y"], ["z"]), helper.make_node("Squeeze", ["w"], ["s"]),
                                    helper.make_node("Transpose", ["s"], ["t"], perm=[1, 0])],
              [X, ("w", T.FLOAT, [4, "m"])], ["z", "t"], ir=10)
    res = onnxsym.infer(m)
    assert partial[0] is True and partial.count(True) == 1  # (the first run stopped at the If, once)
    assert res.shape("z") is None and res.shape("t") == (res.shape("w")[1], 4)
    assert res.domain().violated({"batch": 2, "n": 3, "m": 1}) is not None
    assert res.domain().violated({"batch": 2, "n": 3, "m": 2}) is None
    feeds = {**_feeds(2, 3), "w": np.ones((4, 3), np.float32)}
    assert run_ort(m, feeds)["t"].shape == (3, 4)
    with pytest.raises(Exception, match="(?i)transpose|perm|rank"):
        run_ort(m, {**_feeds(2, 3), "w": np.ones((4, 1), np.float32)})


def test_two_splits_that_need_opposite_ranks_are_a_contradiction():
    """Two Squeezes of ``w`` [4, m]: a Transpose of rank 2 after one (m >= 2), of rank 1 after
    the other (m == 1). Each way of the first is refused, so no size runs the model: a
    contradiction, not the domain ``m == 1`` the second alone gives (onnxruntime fails there too)."""
    m = model([helper.make_node("Squeeze", ["w"], ["a"]), helper.make_node("Transpose", ["a"], ["ta"], perm=[1, 0]),
               helper.make_node("Squeeze", ["w"], ["b"]), helper.make_node("Transpose", ["b"], ["tb"], perm=[0])],
              [("w", T.FLOAT, [4, "m"])], ["ta", "tb"], ir=10)
    with pytest.raises(onnxsym.ShapeContradiction, match="runs at no size"):
        onnxsym.infer(m)
    for size in (1, 2, 3):
        with pytest.raises(Exception, match="(?i)transpose|perm|rank"):
            run_ort(m, {"w": np.ones((4, size), np.float32)})


def test_a_node_in_a_branch_that_may_not_run_decides_nothing():
    """The LSTM is in the then branch of an If on data: with ``flag`` false onnxruntime runs
    the rank-3 case, so taking the rank-2 branch would be wrong there."""
    lstm, inits = _lstm()
    uses = helper.make_graph(lstm + [helper.make_node("Shape", ["Y_h"], ["s_then"])], "uses", [],
                             [helper.make_empty_tensor_value_info("s_then")])
    skips = helper.make_graph([helper.make_node("Shape", ["y"], ["s_else"])], "skips", [],
                              [helper.make_empty_tensor_value_info("s_else")])
    m = model(_squeeze_like_if() + [helper.make_node("If", ["flag"], ["s"], then_branch=uses, else_branch=skips)],
              [X, ("flag", T.BOOL, [])], ["y", "s"], inits=inits, ir=10)
    res = onnxsym.infer(m)
    assert res.shape("y") is None
    feeds = {**_feeds(2, 7), "flag": np.array(False)}
    assert run_ort(m, feeds)["y"].shape == (2, 4, 7)  # runs, with the rank-3 branch


def test_inside_a_branch_of_an_if_on_data_the_condition_holds_under_it_and_narrows_nothing():
    """The squeeze-like If and its LSTM both in the then branch of an If on ``flag``: where that
    branch runs, n <= 4 is needed; where the other runs, any n is fine."""
    lstm, inits = _lstm()
    uses = helper.make_graph(_squeeze_like_if() + lstm + [helper.make_node("Shape", ["Y_h"], ["s_then"])], "uses", [],
                             [helper.make_empty_tensor_value_info("s_then")])
    skips = helper.make_graph([helper.make_node("Shape", ["x"], ["s_else"])], "skips", [],
                              [helper.make_empty_tensor_value_info("s_else")])
    m = model([helper.make_node("If", ["flag"], ["s"], then_branch=uses, else_branch=skips)],
              [X, ("flag", T.BOOL, [])], ["s"], inits=inits, ir=10)
    res = onnxsym.infer(m)
    assert res.subgraph_values["y"].shape == (res.shape("x")[0], 4)
    (cond,) = [c for c in res.domain().conditions if c.sources[0].op_type == "If"]
    assert cond.text == "n <= 4" and not cond.assumed
    assert [(g.text, g.value) for g in cond.when] == [("flag", True)]
    assert cond.describe().startswith("if flag: n <= 4: If ")
    assert res.domain().ranges["n"] == (1, onnxsym.dims.INT64_MAX)
    assert res.domain().violated({"batch": 2, "n": 7}) is None  # (with flag false)
    assert run_ort(m, {**_feeds(2, 3), "flag": np.array(True)})["s"].tolist() == [1, 2, 3]
    assert run_ort(m, {**_feeds(2, 7), "flag": np.array(False)})["s"].tolist() == [2, 4, 7]
    with pytest.raises(Exception):
        run_ort(m, {**_feeds(2, 7), "flag": np.array(True)})


def _silero(name):
    path = os.path.join(REAL, name)
    if not os.path.exists(path):
        pytest.skip(f"{name} is not in models/real")
    return onnx.load(path)


def _silero_feeds(batch, seq, sr=16000):
    return {"input": np.zeros((batch, seq), np.float32), "state": np.zeros((2, batch, 128), np.float32),
            "sr": np.array(sr, np.int64)}


def test_silero_vad_op15_squeeze_is_decided_by_its_lstm():
    """torch's squeeze(-1) is If((sequence + 320)//512 == 1, Squeeze, Identity); the LSTM after
    it needs the squeezed rank: the domain is 192 <= sequence <= 703 (the low end from a Conv)."""
    m = _silero("silero_vad_16k_op15.onnx")
    inside = [({"batch": b, "sequence": s}, _silero_feeds(b, s)) for b, s in ((1, 192), (2, 512), (3, 703))]
    res = check(m, inside)
    assert not res.unknown_rank
    domain = res.domain()
    assert domain.ranges["sequence"] == (192, 703)
    assert any(c.sources[0].node == "/model/decoder/If" and "LSTM" in c.sources[0].reason for c in domain.conditions)
    for s in (191, 704, 1024):
        assert domain.violated({"batch": 1, "sequence": s}) is not None
        with pytest.raises(Exception):
            run_ort(m, _silero_feeds(1, s))


def test_silero_vad_spox_each_sample_rate_branch_needs_its_own_length():
    """The If on the sample rate (data) runs one branch; each branch's squeeze is decided by its
    LSTM: 192 <= samples <= 703 at 16 kHz, 96 <= samples <= 351 at 8 kHz, each under its
    branch's guard (``sr == 16000``), so a size either branch runs is in the domain, and the
    range is what some branch runs: 96..703. onnxruntime agrees at every edge."""
    m = _silero("silero_vad.onnx")
    inside = [(1, 192, 16000), (2, 512, 16000), (1, 576, 16000), (2, 703, 16000), (2, 96, 8000), (1, 351, 8000)]
    res = check(m, [({"batch": b, "samples": s}, _silero_feeds(b, s, sr)) for b, s, sr in inside])
    assert res.shape("output") is not None and res.shape("stateN") == (2, res.shape("output")[0], 128)
    domain = res.domain()
    ifs = sorted((c.text, tuple(g.text for g in c.when)) for c in domain.conditions if c.sources[0].op_type == "If")
    assert ifs == [("192 <= samples <= 703", ("sr == 16000",)), ("96 <= samples <= 351", ("sr != 16000",))]
    assert not any(c.assumed for c in domain.conditions if c.sources[0].op_type == "If")
    assert domain.ranges["samples"] == (96, 703)  # (95 and 704 fail at both rates, below)
    for s in (96, 351, 352, 512, 576, 703):  # some sample rate runs each
        assert domain.violated({"batch": 1, "samples": s}) is None, s
    for s in (95, 704, 1000):  # none runs these
        assert domain.violated({"batch": 1, "samples": s}) is not None, s
        for sr in (16000, 8000):
            with pytest.raises(Exception):
                run_ort(m, _silero_feeds(1, s, sr))
    for s, sr in ((191, 16000), (704, 16000), (95, 8000), (352, 8000)):
        with pytest.raises(Exception):
            run_ort(m, _silero_feeds(1, s, sr))


@pytest.mark.slow
def test_silero_vad_check_require_and_verify_bind_accept_the_16k_sizes(tmp_path):
    """``check --require samples=512:576`` and ``verify --bind samples=512`` succeed (verify
    feeds sr = 16000, the branch that runs 512); sizes no branch runs are refused."""
    import shutil

    from click.testing import CliRunner

    from onnxsym.cli import main

    _silero("silero_vad.onnx")
    path = str(tmp_path / "silero_vad.onnx")
    shutil.copy(os.path.join(REAL, "silero_vad.onnx"), path)
    run = CliRunner().invoke
    for box in ("512:576", "96:703", "300:600"):
        r = run(main, ["check", path, "--require", f"samples={box}"])
        assert r.exit_code == 0, (box, r.output)
    for box, at in (("500:704", "704"), ("1:100", "1")):
        r = run(main, ["check", path, "--require", f"samples={box}"])
        assert r.exit_code == 1 and f"samples = {at}" in r.output, (box, r.output)
    r = run(main, ["domain", path])
    assert "if sr == 16000: 192 <= samples <= 703" in r.output and "if sr != 16000: 96 <= samples <= 351" in r.output
    for s in ("512", "576", "300"):
        r = run(main, ["verify", path, "--bind", f"samples={s}"])
        assert r.exit_code == 0 and "0 wrong" in r.output, (s, r.output)
    r = run(main, ["verify", path, "--bind", "samples=1000"])
    assert r.exit_code != 0 and "outside samples's range [96, 703]" in r.output, r.output


@pytest.mark.parametrize("text", ["-((-s + 128*min(0, (s + 64)//128 - 1) + 191)//512)", "max(3, s)//4",
                                  "(max(0, s - 5) + 7)//8"])
@pytest.mark.parametrize("k", [0, 1, 2])
def test_an_equality_whose_clamp_settles_is_a_range(text, k):
    """What the silero branch conditions read as: the sizes where it holds, by brute force."""
    from onnxsym import dims
    from onnxsym.dims.text import parse_dim
    from onnxsym.domain.forms import simplify

    d = parse_dim(text, lambda n: dims.expr_of(dims.Sym(n, 1, dims.INT64_MAX)))
    (form,) = simplify("==", d, k)
    assert form.kind == "range"
    for v in range(1, 2000):
        assert form.holds({"s": v}) == (dims.evaluate(d, {"s": v}) == k), v


def test_a_condition_both_branches_state_holds_whichever_runs():
    """openWakeWord's copy of silero (torch 1.12): each sample-rate branch reflect-pads by 96,
    so each needs ``sequence >= 97``; stated under ``sr == 16000`` and under its opposite, it
    holds wherever the model runs: one condition with no guard, and the range narrows to it.
    Here each branch of an If on a bool input takes TopK(5) of x: both need n >= 5."""
    from tests.helpers import F, graph

    N = helper.make_node
    k = helper.make_tensor("k", T.INT64, [1], [5])
    then_g = graph([N("TopK", ["x", "k"], ["tv", "ti"], name="top_then")], [], ["tv"], name="then")
    else_g = graph([N("Neg", ["x"], ["nx"]), N("TopK", ["nx", "k"], ["ev", "ei"], name="top_else")], [], ["ev"],
                   name="else")
    m = model([N("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)],
              [("x", F, ["n"]), ("flag", T.BOOL, [])], ["y"], [k], opset=17)
    domain = onnxsym.infer(m).domain()
    assert [(c.text, c.when) for c in domain.conditions] == [("n >= 5", ())]
    assert domain.ranges["n"] == (5, onnxsym.dims.INT64_MAX)
    assert {s.node for s in domain.conditions[0].sources} == {"top_then", "top_else"}
    for flag in (True, False):
        feeds = {"x": np.arange(5, dtype=np.float32), "flag": np.array(flag)}
        assert run_ort(m, feeds)["y"].shape == (5,)
        with pytest.raises(Exception):
            run_ort(m, {**feeds, "x": np.arange(4, dtype=np.float32)})
