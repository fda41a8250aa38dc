"""The six patterns of the exporter families in issue 22, each a hand-built graph checked
against onnxruntime: dims at sizes inside the domain, and each stated condition at its
boundary (just inside runs, just outside fails)."""

import numpy as np
import pytest
from helpers import I64, F, init, model
from onnx import helper
from oracle import check, random_cases, run_ort

import onnxsym
from onnxsym.commands.explain import Lineage
from onnxsym.facts.fact import Origin, Rel


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


# ---------------------------------------------------------------- 3. a Reshape element that may be 0

def _window_partition():
    """[2, H, 8] reshaped to [2, H // 4, 4, 8] (timm's MaxViT window partition): H // 4 is 0 below
    4, where it copies H, and 2*H*4*8 never equals 2*H*8."""
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["xs"]), n("Gather", ["xs", "i1"], ["H"]), n("Div", ["H", "four"], ["q"]),
             n("Concat", ["two", "q", "four", "eight"], ["shp"], axis=0), n("Reshape", ["x", "shp"], ["y"])]
    inits = [init("i1", np.array([1])), init("four", np.array([4])), init("two", np.array([2])),
             init("eight", np.array([8]))]
    return model(nodes, [("x", F, [2, "H", 8])], ["y"], inits)


def test_a_reshape_element_that_may_be_0_is_a_size_and_the_domain_has_it_at_least_1():
    m = _window_partition()
    res = check(m, random_cases([("x", F, [2, "H", 8])], [{"H": 4}, {"H": 12}, {"H": 64}]))
    assert not res.unresolved() and str(res.shape("y")[1]) == "H//4"
    assert res.symbol_ranges()["H"][0] == 4
    assert any(c.rel is Rel.GE and c.node == "Reshape_4" for c in res.constraints)
    # the boundary: H = 4 runs; H = 3 copies 3 for the 0 and fails, as every H below 4 does
    run_ort(m, {"x": np.zeros((2, 4, 8), np.float32)})
    for h in (1, 2, 3):
        _fails(m, {"x": np.zeros((2, h, 8), np.float32)})


def test_a_reshape_element_whose_0_case_may_run_stays_unresolved():
    """[4, H] to [H // 4, -1]: at H = 1..3 the 0 copies 4 and -1 is H, which runs: no condition."""
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["xs"]), n("Gather", ["xs", "i1"], ["H"]), n("Div", ["H", "four"], ["q"]),
             n("Concat", ["q", "m1"], ["shp"], axis=0), n("Reshape", ["x", "shp"], ["y"])]
    m = model(nodes, [("x", F, [4, "H"])], ["y"],
              [init("i1", np.array([1])), init("four", np.array([4])), init("m1", np.array([-1]))])
    res = onnxsym.infer(m)
    assert res.symbol_ranges()["H"][0] == 1  # H = 3 runs: [4, 3] to [4 (copied), 3]
    assert run_ort(m, {"x": np.zeros((4, 3), np.float32)})["y"].shape == (4, 3)
    check(m, random_cases([("x", F, [4, "H"])], [{"H": 2}, {"H": 8}]), fresh_ok=("y",))


def _window_partition_2d(pool):
    """timm's MaxViT block partition: [B, H, W, 8] reshaped to [B, H//4, 4, W//4, 4, 8]; with
    ``pool``, H and W are first pooled twice (ceil mode) from [B, 8, H, W] and transposed, as its
    stem does. Two elements may be 0: H//4 = 0 copies H (then 16*(W//4) != W), W//4 = 0 copies
    the 8 at index 3 (and then W <= 3: the count needs W = 512, which no W//4 = 0 allows)."""
    n = helper.make_node
    nodes, src = [], "x"
    if pool:
        nodes += [n("MaxPool", ["x"], ["xp"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
                  n("MaxPool", ["xp"], ["xq"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
                  n("Transpose", ["xq"], ["xt"], perm=[0, 2, 3, 1])]
        src = "xt"
    nodes += [n("Shape", [src], ["xs"]), n("Gather", ["xs", "i0"], ["b0"]), n("Gather", ["xs", "i1"], ["H"]),
              n("Gather", ["xs", "i2"], ["W"]), n("Div", ["H", "four"], ["qh"]), n("Div", ["W", "four"], ["qw"]),
              n("Concat", ["b0", "qh", "four", "qw", "four", "eight"], ["shp"], axis=0),
              n("Reshape", [src, "shp"], ["y"], name="partition")]
    inits = [init("i0", np.array([0])), init("i1", np.array([1])), init("i2", np.array([2])),
             init("four", np.array([4])), init("eight", np.array([8]))]
    shape = ["B", 8, "H", "W"] if pool else ["B", "H", "W", 8]
    return model(nodes, [("x", F, shape)], ["y"], inits), shape


@pytest.mark.parametrize("pool, least, sizes", [(False, 4, [(4, 16), (64, 36)]), (True, 10, [(10, 10), (26, 42)])])
def test_a_2d_window_partition_has_both_elements_at_least_1(pool, least, sizes):
    """It runs where the (pooled) height and width are multiples of 4; at the least size one
    below, the element is 0 and onnxruntime fails."""
    m, shape = _window_partition_2d(pool)

    def x(h, w):
        return np.zeros([{"B": 1, "H": h, "W": w}.get(d, d) for d in shape], np.float32)

    res = check(m, random_cases([("x", F, shape)], [{"B": b, "H": h, "W": w} for b, (h, w) in zip((1, 2), sizes)]))
    assert not res.unresolved()
    ranges = res.symbol_ranges()
    assert ranges["H"][0] == least and ranges["W"][0] == least
    assert sum(c.rel is Rel.GE and c.node == "partition" for c in res.constraints) == 2
    ok = sizes[0][1]
    run_ort(m, {"x": x(least, ok)})
    _fails(m, {"x": x(least - 1, ok)})  # H//4 is 0: the copied H breaks the count
    _fails(m, {"x": x(ok, least - 1)})  # W//4 is 0: the copied 8 breaks it too


def _window_roundtrip():
    """MaxViT's window partition and its reverse: [B, H, W, 8] to windows [-1, 4, 4, 8] and back
    by [-1, H//4, W//4, 4, 4, 8] and [-1, H, W, 8], then added to the input. The last -1 is
    ``512*B*(H//4)*(W//4) // (32*H*W)``: B exactly where the partition keeps the count, as every
    run needs."""
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["xs"]), n("Gather", ["xs", "i0"], ["B"]), n("Gather", ["xs", "i1"], ["H"]),
             n("Gather", ["xs", "i2"], ["W"]), n("Div", ["H", "four"], ["qh"]), n("Div", ["W", "four"], ["qw"]),
             n("Concat", ["B", "qh", "four", "qw", "four", "eight"], ["shp"], axis=0),
             n("Reshape", ["x", "shp"], ["p"], name="partition"),
             n("Transpose", ["p"], ["pt"], perm=[0, 1, 3, 2, 4, 5]), n("Reshape", ["pt", "win"], ["windows"]),
             n("Concat", ["m1", "qh", "qw", "four", "four", "eight"], ["shp2"], axis=0),
             n("Reshape", ["windows", "shp2"], ["r"]), n("Transpose", ["r"], ["rt"], perm=[0, 1, 3, 2, 4, 5]),
             n("Concat", ["m1", "H", "W", "eight"], ["shp3"], axis=0),
             n("Reshape", ["rt", "shp3"], ["back"], name="reverse"), n("Add", ["back", "x"], ["y"])]
    inits = [init("i0", np.array([0])), init("i1", np.array([1])), init("i2", np.array([2])),
             init("four", np.array([4])), init("eight", np.array([8])), init("m1", np.array([-1])),
             init("win", np.array([-1, 4, 4, 8]))]
    return model(nodes, [("x", F, ["B", "H", "W", 8])], ["y"], inits)


def test_the_window_reverse_gives_the_batch_back():
    m = _window_roundtrip()
    res = check(m, random_cases([("x", F, ["B", "H", "W", 8])],
                                [{"B": 1, "H": 4, "W": 8}, {"B": 3, "H": 12, "W": 4}, {"B": 2, "H": 16, "W": 20}]))
    assert not res.unresolved()
    assert [str(d) for d in res.shape("back")] == ["B", "H", "W", "8"]
    assert [str(d) for d in res.shape("windows")] == ["B*(H//4)*(W//4)", "4", "4", "8"]
    _fails(m, {"x": np.zeros((1, 6, 8, 8), np.float32)})  # H = 6: the partition breaks the count


def _shortcut_add():
    """MaxViT's conv block in small: a stride-4 path of (H + 3)//4 added to a shortcut pooled to
    (H + 1)//4, then a node that needs H >= 7 (a kernel of 8: an output of 0 runs). When the Add is inferred, the
    shortcut may be 1 (H <= 6), so it broadcasts; the later node leaves it at least 2."""
    n = helper.make_node
    nodes = [n("AveragePool", ["x"], ["a"], kernel_shape=[1], strides=[4]),
             n("AveragePool", ["x"], ["b"], kernel_shape=[3], strides=[4]), n("Add", ["a", "b"], ["y"], name="the_add"),
             n("MaxPool", ["x"], ["z"], kernel_shape=[8])]
    return model(nodes, [("x", F, [1, 1, "H"])], ["y", "z"])


def test_a_broadcast_that_a_later_range_leaves_unequal_joins_the_domain():
    """The domain said only H >= 7: too wide at H = 9 (3 against 2). onnxruntime runs exactly
    where the domain holds (H >= 7 and H % 4 in {0, 3}), with the inferred shapes."""
    import onnxruntime as ort

    m = _shortcut_add()
    res = onnxsym.infer(m)
    domain = res.domain()
    assert any(c.text == "H % 4 in {0, 3}" and c.sources[0].node == "the_add" for c in domain.conditions), \
        [c.text for c in domain.conditions]
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for h in range(1, 41):
        try:
            shapes = [o.shape for o in sess.run(None, {"x": np.zeros((1, 1, h), np.float32)})]
        except Exception:
            shapes = None
        inside = domain.violated({"H": h}) is None
        assert (shapes is not None) == inside, (h, shapes)
        if inside:
            assert shapes == [tuple(onnxsym.dims.evaluate(d, {"H": h}) for d in res.shape(v)) for v in ("y", "z")]


# ---------------------------------------------------------------- 5. a data input that picks a branch

def _merged_decoder():
    """optimum's merged decoder in small: an If on the bool input use_cache_branch; its then
    branch concatenates the past before the new tokens, its else branch does not."""
    n = helper.make_node
    then = helper.make_graph([n("Concat", ["p", "x"], ["t"], axis=1)], "then", [], [helper.make_empty_tensor_value_info("t")])
    other = helper.make_graph([n("Identity", ["x"], ["e"])], "else", [], [helper.make_empty_tensor_value_info("e")])
    nodes = [n("If", ["use_cache_branch"], ["h"], then_branch=then, else_branch=other), n("Relu", ["h"], ["y"])]
    from helpers import BOOL
    return model(nodes, [("x", F, ["batch", "seq", 4]), ("p", F, ["batch", "past", 4]),
                         ("use_cache_branch", BOOL, [1])], ["y"])


def _feeds(b, s, p, cache):
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((b, s, 4)).astype(np.float32), "p": rng.standard_normal((b, p, 4)).astype(np.float32),
            "use_cache_branch": np.array([cache])}


def test_a_given_value_decides_the_if_and_is_recorded():
    from onnxsym import dims
    from onnxsym.output import metadata

    m = _merged_decoder()
    assert onnxsym.infer(m).unresolved()  # data picks the branch: left unresolved without the value
    for cache, want in ((True, lambda b, s, p: (b, p + s, 4)), (False, lambda b, s, p: (b, s, 4))):
        res = onnxsym.infer(m, values={"use_cache_branch": cache})
        assert not res.unresolved()
        for b, s, p in ((1, 3, 5), (2, 1, 9)):
            real = run_ort(m, _feeds(b, s, p, cache))["y"].shape
            got = tuple(dims.evaluate(d, {"batch": b, "seq": s, "past": p}) for d in res.shape("y"))
            assert got == real == want(b, s, p)
        written = onnxsym.annotate(m, values={"use_cache_branch": cache})
        assert metadata.read(written)["user"]["values"] == {"use_cache_branch": [cache]}


def _merged_decoder_static():
    """The merged decoder with a static new-token input, whose shape a later Shape reads: the
    else branch's [2, 1, 4] is static, and onnxruntime folds a Shape of a static value."""
    n = helper.make_node
    then = helper.make_graph([n("Concat", ["p", "x"], ["t"], axis=1)], "then", [], [helper.make_empty_tensor_value_info("t")])
    other = helper.make_graph([n("Identity", ["x"], ["e"])], "else", [], [helper.make_empty_tensor_value_info("e")])
    nodes = [n("If", ["use_cache_branch"], ["h"], then_branch=then, else_branch=other), n("Shape", ["h"], ["y"])]
    from helpers import BOOL
    return model(nodes, [("x", F, [2, 1, 4]), ("p", F, [2, "past", 4]), ("use_cache_branch", BOOL, [1])], ["y"])


@pytest.mark.parametrize("make", [_merged_decoder, _merged_decoder_static])
@pytest.mark.parametrize("cache", [True, False])
def test_a_given_value_writes_only_what_holds_for_every_value(make, cache, tmp_path):
    """The model annotated with --value computes what the original computes for every feed
    (written with the value's dims, onnxruntime folded Shape(h) to [2, 1, 4] when fed True);
    the value's own dims are reported apart, in onnxsym.value_only."""
    import json

    import onnx
    from click.testing import CliRunner

    from onnxsym.cli import main
    from onnxsym.output import metadata

    m = make()
    static = make is _merged_decoder_static
    written = onnxsym.annotate(m, values={"use_cache_branch": cache})
    for b, s, p in ((2, 1, 5), (2, 1, 1), (2, 1, 9)):
        for fed in (True, False):
            feeds = _feeds(b, s, p, fed)
            want, got = run_ort(m, feeds)["y"], run_ort(written, feeds)["y"]
            assert np.array_equal(want, got), (cache, fed, want, got)
    meta = metadata.read(written)
    assert meta["user"]["values"] == {"use_cache_branch": [cache]}
    # the value's dims, checked against onnxruntime fed that value
    real = run_ort(m, _feeds(2, 1, 5, cache))
    h = meta["value_only"]["h"]
    env = {"batch": 2, "seq": 1, "past": 5}
    from onnxsym.dims.text import parse_dim
    assert [onnxsym.dims.evaluate(parse_dim(d), env) for d in h] == [2, 6 if cache else 1, 4]
    assert (real["y"] if static else np.array(real["y"].shape)).tolist()[1] == (6 if cache else 1)
    path, out = str(tmp_path / "m.onnx"), str(tmp_path / "m.sym.onnx")
    onnx.save(m, path)
    r = CliRunner().invoke(main, ["annotate", path, "-o", out, "--value", f"use_cache_branch={int(cache)}"])
    assert r.exit_code == 0 and "hold for the --value data only (h" in r.output, r.output
    assert json.loads({p.key: p.value for p in onnx.load(out).metadata_props}["onnxsym.value_only"])["h"] == h


def test_value_on_the_command_line(tmp_path):
    import onnx
    from click.testing import CliRunner

    from onnxsym.cli import main

    path = str(tmp_path / "merged.onnx")
    onnx.save(_merged_decoder(), path)
    r = CliRunner().invoke(main, ["verify", path, "--value", "use_cache_branch=1"])
    assert r.exit_code == 0 and " 0 wrong, 0 unresolved" in r.output, r.output
    r = CliRunner().invoke(main, ["explain", path, "y", "1", "--value", "use_cache_branch=true"])
    assert r.exit_code == 0 and r.output.startswith("y[1] = past + seq: resolved"), r.output
    r = CliRunner().invoke(main, ["explain", path, "y", "1"])  # the value lasts for its command only
    assert r.exit_code == 0 and "unresolved" in r.output.splitlines()[0], r.output
    for bad, said in ((["--value", "nosuch=1"], "no graph input 'nosuch'"),
                      (["--value", "x=1"], "symbolic dims"), (["--value", "use_cache_branch=yes"], "not a number")):
        r = CliRunner().invoke(main, ["show", path] + bad)
        assert r.exit_code != 0 and said in r.output and "Traceback" not in r.output, r.output


# ---------------------------------------------------------------- 6. two resolved branches under a shape condition

def _pooled_if_long():
    """An If on seq > 8: its then branch pools the sequence (kernel 3, stride 2, pads 0 and 1 on
    a [batch, 1, seq] signal: max(0, seq - 2)//2 + 1), its else branch keeps it."""
    n = helper.make_node
    then = helper.make_graph([n("MaxPool", ["x"], ["t"], kernel_shape=[3], strides=[2], pads=[0, 1])], "then", [],
                             [helper.make_empty_tensor_value_info("t")])
    other = helper.make_graph([n("Identity", ["x"], ["e"])], "else", [], [helper.make_empty_tensor_value_info("e")])
    nodes = [n("Shape", ["x"], ["xs"]), n("Gather", ["xs", "two"], ["s"]), n("Greater", ["s", "eight"], ["long"]),
             n("If", ["long"], ["y"], then_branch=then, else_branch=other, name="the_if")]
    return model(nodes, [("x", F, ["batch", 1, "seq"])], ["y"],
                 [init("two", np.array(2)), init("eight", np.array(8))])


def test_two_resolved_branches_give_a_fresh_symbol_that_records_both_cases():
    from onnxsym.output import metadata

    m = _pooled_if_long()
    sizes = [{"batch": 2, "seq": 8}, {"batch": 1, "seq": 9}, {"batch": 1, "seq": 20}]
    res = check(m, random_cases([("x", F, ["batch", 1, "seq"])], sizes), fresh_ok=("y",))
    _, prov = __import__("oracle").fresh_of(res, "y", 2)
    cases = "max(0, seq - 2)//2 + 1 where 8 < seq, seq where 8 >= seq"
    assert cases in prov.reason, prov.reason
    for s in (8, 9, 20):  # each case is the truth on its side of the condition
        real = run_ort(m, {"x": np.zeros((1, 1, s), np.float32)})["y"].shape[2]
        assert real == (max(0, s - 2) // 2 + 1 if s > 8 else s)
    unresolved = metadata.read(onnxsym.annotate(m))["unresolved"]
    assert any(cases in r for u in unresolved for r in u["reasons"])
    e = Lineage(res).explain("y", 2)
    assert cases in e.headline() and any(cases in line for line in e.lines())


# ---------------------------------------------------------------- 2. a rank that a later node fixes

def _gemm_trees(after="Transpose"):
    """hummingbird's GEMM strategy: [30, 1, n] squeezed with no axes (rank 1 at n == 1, else 2),
    then a Transpose with perm [1, 0], which runs on rank 2 only."""
    n = helper.make_node
    last = n("Transpose", ["s"], ["y"], perm=[1, 0]) if after == "Transpose" else n("Relu", ["s"], ["y"])
    return model([n("Squeeze", ["x"], ["s"], name="the_squeeze"), last], [("x", F, [30, 1, "n"])], ["y"])


def test_a_rank_the_transpose_after_it_fixes():
    m = _gemm_trees()
    res = check(m, random_cases([("x", F, [30, 1, "n"])], [{"n": 2}, {"n": 7}]))
    assert not res.unresolved() and res.symbol_ranges()["n"][0] == 2
    c, = [c for c in res.constraints if c.node == "the_squeeze"]
    assert (c.rel, c.origin) == (Rel.GE, Origin.BRANCH) and "Transpose" in c.reason
    run_ort(m, {"x": np.zeros((30, 1, 2), np.float32)})  # just inside
    _fails(m, {"x": np.zeros((30, 1, 1), np.float32)})  # just outside: the Transpose refuses rank 1


def test_a_rank_nothing_after_it_fixes_stays_unknown():
    m = _gemm_trees(after="Relu")
    res = onnxsym.infer(m)
    assert res.shape("y") is None and res.symbol_ranges()["n"][0] == 1
    for n_ in (1, 3):  # both ranks run
        run_ort(m, {"x": np.zeros((30, 1, n_), np.float32)})


# ---------------------------------------------------------------- 1. a Slice that must be as long as what it meets

def _position_table():
    """A Whisper decoder's positions (onnxruntime-genai's builder): rows past .. past + seq of a
    64-row table, added to the token embeddings [batch, seq, 8]."""
    n = helper.make_node
    nodes = [n("Shape", ["past_key"], ["ps"]), n("Gather", ["ps", "two"], ["p"]),
             n("Shape", ["x"], ["xs"]), n("Gather", ["xs", "one"], ["s"]), n("Add", ["p", "s"], ["e"]),
             n("Slice", ["table", "p", "e", "zero"], ["pos"]), n("Add", ["x", "pos"], ["y"])]
    inits = [init("table", np.zeros((64, 8), np.float32)), init("two", np.array([2])), init("one", np.array([1])),
             init("zero", np.array([0]))]
    return model(nodes, [("x", F, ["batch", "seq", 8]), ("past_key", F, ["batch", 2, "past", 4])], ["y"], inits)


def test_a_position_slice_broadcast_against_the_sequence():
    """The Add runs where the slice is seq rows (past + seq <= 64), or 1 row (past = 63), or seq
    is 1 (a slice of 0 rows past the table gives 0): the dim is seq*min(1, rows), exact in each."""
    m = _position_table()
    inputs = [("x", F, ["batch", "seq", 8]), ("past_key", F, ["batch", 2, "past", 4])]
    sizes = [{"batch": 1, "seq": 3, "past": 5}, {"batch": 2, "seq": 60, "past": 4}, {"batch": 1, "seq": 5, "past": 63},
             {"batch": 1, "seq": 1, "past": 100}]
    res = check(m, random_cases(inputs, sizes))
    assert not res.unresolved()
    feeds = dict(random_cases(inputs, [{"batch": 1, "seq": 60, "past": 5}])[0][1])
    _fails(m, feeds)  # past + seq = 65: the slice has 59 rows against 60


def test_the_position_slice_domain_is_the_three_cases_onnxruntime_runs():
    """The Add runs exactly where past + seq <= 64 (the slice is seq rows), seq == 1 (1 row, or 0
    rows past the table: 1 broadcasts to 0), or past == 63 (1 row): the domain states that
    disjunction, split on the cases of its two mins, as required; at every size of a grid around
    the table's end, onnxruntime runs exactly where the domain holds, with the inferred shape."""
    import onnxruntime as ort

    m = _position_table()
    res = onnxsym.infer(m)
    (cond,) = res.domain().conditions
    assert (cond.text, cond.assumed) == ("past + seq <= 64 (or seq == 1 or past == 63)", "")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for past in (1, 50, 59, 60, 61, 62, 63, 64, 65, 100):
        for seq in (1, 2, 3, 4, 5, 9):
            b = {"batch": 1, "seq": seq, "past": past}
            feeds = {"x": np.zeros((1, seq, 8), np.float32), "past_key": np.zeros((1, 2, past, 4), np.float32)}
            try:
                shape = sess.run(None, feeds)[0].shape
            except Exception:
                shape = None
            inside = res.domain().violated(b) is None
            assert (shape is not None) == inside, (b, shape)
            if inside:
                assert shape == tuple(onnxsym.dims.evaluate(d, b) for d in res.shape("y")), (b, shape)

