"""Ranges simplify dims, and never change a value: property tests over the ranges,
and Slice, Range, Pad, TopK with bounds computed in the graph, against onnxruntime."""

import contextlib

import numpy as np
import strategies
from helpers import I64, F, init, model
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from oracle import check, random_cases

import onnxsym
from onnxsym import dims
from onnxsym.commands.verify import verify
from onnxsym.dims import INT64_MAX, dmax, dmin, evaluate, lower_bound, sym, try_le

N = helper.make_node
RANGES = {"a": (1, 60), "b": (1, 60), "c": (0, 60), "n": (-30, 30)}
SYMS = {k: sym(k, lo, hi) for k, (lo, hi) in RANGES.items()}


def trees():
    """Pairs (dim, plain function of the bindings) built from the same operations."""
    pos = st.integers(1, 9)
    return strategies.with_reference(SYMS, ints=(-9, 40), binary=("+", "-", "max", "min"), scales=pos,
                                     divisors={op: pos for op in strategies.DIVISIONS}, neg=False, max_leaves=7)


bindings = strategies.bindings(RANGES)


@settings(max_examples=300, deadline=None)
@given(trees(), bindings)
def test_simplification_never_changes_a_value_within_the_ranges(tree, b):
    d, plain = tree
    assert evaluate(d, b) == plain(b)


@settings(max_examples=300, deadline=None)
@given(trees(), trees(), bindings)
def test_lower_bound_and_comparisons_are_sound(x, y, b):
    d = x[0] - y[0]
    assert evaluate(d, b) >= lower_bound(d)
    answer = try_le(x[0], y[0])
    if answer is not None:
        assert answer == (x[1](b) <= y[1](b))


def test_range_simplifications():
    seq = sym("seq")
    assert dmax(1, seq) is seq
    assert dmin(seq, INT64_MAX) is seq
    assert str(dmin(seq, 2**62)) == "min(4611686018427387904, seq)"
    assert dmin(sym("seq", 1, 4096), 2**62) is sym("seq", 1, 4096)
    padded = (seq + 7) // 8 * 8
    assert try_le(seq, padded) is True and try_le(padded, seq + 7) is True
    assert dmax(seq, padded) is padded and dmin(seq, padded) is seq
    assert str(((seq + 1) // 2 + 1) // 2) == "(seq + 3)//4"
    assert str((seq // 3 + seq) // 2) == "(2*seq)//3"


SIZES = [{"batch": 1, "seq": 1, "past": 1}, {"batch": 2, "seq": 5, "past": 3}, {"batch": 1, "seq": 9, "past": 4}]


def _dim(name_out, src, axis, idx_name):
    """Nodes computing the dim ``src.shape[axis]`` as a 1-element tensor."""
    return [N("Shape", [src], [f"{name_out}_sh"]), N("Gather", [f"{name_out}_sh", idx_name], [name_out], axis=0)]


def test_causal_mask_slice_of_a_gpt2_export_has_no_clamps():
    # bias[:, :, total - seq : total, :total] as torch exports it, with total = past + seq
    nodes = [N("Concat", ["pk", "k"], ["kv"], axis=2)] + _dim("total", "kv", 2, "i2") + _dim("q", "k", 2, "i2") + [
        N("Sub", ["total", "q"], ["start"]),
        N("Slice", ["bias", "start", "total", "i2"], ["rows"]),
        N("Slice", ["rows", "zero", "total", "i3"], ["mask"]),
        N("Slice", ["kv", "neg1", "big", "i2"], ["last"]),
        N("Slice", ["kv", "small", "zero", "i2", "neg1"], ["back"]),
        N("Slice", ["kv", "big", "small", "i2", "neg2"], ["back2"]),
    ]
    inits = [init("i2", [2]), init("i3", [3]), init("zero", [0]), init("neg1", [-1]), init("neg2", [-2]),
             init("big", [INT64_MAX]), init("small", [-INT64_MAX - 1])]
    m = model(nodes, [("k", F, ["batch", 2, "seq", 4]), ("pk", F, ["batch", 2, "past", 4]),
                      ("bias", F, [1, 1, 64, 64])], ["mask", "last", "back", "back2"], inits)
    res = check(m, random_cases([("k", F, ["batch", 2, "seq", 4]), ("pk", F, ["batch", 2, "past", 4]),
                    ("bias", F, [1, 1, 64, 64])], SIZES))
    shapes = {o: [str(d) for d in res.shape(o)] for o in ["mask", "last", "back", "back2"]}
    # bias has 64 rows: past + seq beyond them is clamped, and the ranges cannot rule that out
    assert shapes["mask"] == ["1", "1", "-min(64, past) + min(64, past + seq)", "min(64, past + seq)"]
    assert shapes["last"] == ["batch", "2", "1", "4"]
    assert shapes["back"] == ["batch", "2", "0", "4"]
    assert shapes["back2"] == ["batch", "2", "(past + seq + 1)//2", "4"]
    narrow = onnxsym.infer(m, ranges={"seq": (1, 32), "past": (0, 32)})
    assert [str(d) for d in narrow.shape("mask")] == ["1", "1", "seq", "past + seq"]
    assert verify(m, result=narrow).ok


def test_slice_with_bounds_of_unknown_sign_is_fresh_and_honest():
    m = model([N("Slice", ["x", "s", "e", "ax"], ["y"])], [("x", F, ["batch", "seq"]), ("s", I64, [1])], ["y"],
              [init("e", [INT64_MAX]), init("ax", [1])])
    res = onnxsym.infer(m)
    assert len(res.unresolved()) == 1 and dims.range_of(res.shape("y")[1])[1] == INT64_MAX


def test_range_with_symbolic_start_limit_and_delta():
    nodes = _dim("s0", "x", 1, "i1") + _dim("b0", "x", 0, "i0") + [
        N("Squeeze", ["s0", "i0"], ["seq"]), N("Squeeze", ["b0", "i0"], ["b"]),
        N("Neg", ["seq"], ["mseq"]),
        N("Range", ["b", "seq", "two"], ["up"]),       # b, b+2, ... < seq
        N("Range", ["seq", "zero", "mone"], ["down"]),  # seq, seq-1, ..., 1
        N("Range", ["mseq", "seq", "b"], ["by_b"]),     # delta is a symbol >= 1
    ]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["up", "down", "by_b"],
              [init("i0", [0]), init("i1", [1]), init("two", np.int64(2)), init("zero", np.int64(0)),
               init("mone", np.int64(-1))])
    res = check(m, random_cases([("x", F, ["batch", "seq"])], SIZES))
    assert [str(d) for d in res.shape("down")] == ["seq"]
    assert [str(d) for d in res.shape("by_b")] == ["(batch + 2*seq - 1)//batch"]
    assert "max" in str(res.shape("up")[0])  # empty when batch >= seq: the clamp is real


def test_pad_to_a_multiple_of_the_window():
    # pad = (k - n % k) % k, as windowed attention computes it in the graph
    nodes = _dim("n", "x", 1, "i1") + [
        N("Mod", ["n", "k"], ["r"]), N("Sub", ["k", "r"], ["kr"]), N("Mod", ["kr", "k"], ["pad"]),
        N("Concat", ["z3", "pad", "z1"], ["pads"], axis=0),
        N("Pad", ["x", "pads"], ["y"]),
        N("Reshape", ["y", "win"], ["windows"]),
    ]
    m = model(nodes, [("x", F, ["batch", "seq", 4])], ["y", "windows"],
              [init("i1", [1]), init("k", [8]), init("z3", [0, 0, 0, 0]), init("z1", [0]),
               init("win", [0, -1, 8, 4])])
    sizes = [{"batch": 1, "seq": s} for s in (1, 7, 8, 9, 16, 17)]
    res = check(m, random_cases([("x", F, ["batch", "seq", 4])], sizes))
    # one form for the padded length whether % (Pad) or // (Reshape) computed it
    assert [str(d) for d in res.shape("y")] == ["batch", "8*((seq + 7)//8)", "4"]
    assert [str(d) for d in res.shape("windows")] == ["batch", "(seq + 7)//8", "8", "4"]


def test_topk_with_a_computed_k_and_an_unknown_k():
    nodes = _dim("n", "x", 1, "i1") + [N("Div", ["n", "two"], ["k"]), N("TopK", ["x", "k"], ["v", "i"], axis=1)]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["v", "i"], [init("i1", [1]), init("two", [2])])
    res = check(m, random_cases([("x", F, ["batch", "seq"])], [{"batch": 2, "seq": s} for s in (1, 2, 7)]))
    assert [str(d) for d in res.shape("v")] == ["batch", "seq//2"]
    m = model([N("TopK", ["x", "kin"], ["v", "i"], axis=1)], [("x", F, ["batch", 10]), ("kin", I64, [1])], ["v"])
    res = onnxsym.infer(m)
    with res.env:  # the result's ranges
        assert dims.range_of(res.shape("v")[1]) == (0, 10)


def test_slice_with_a_symbolic_step():
    # x[:, 1::batch] and x[:, ::-batch]: the step is a dim, positive by its range
    nodes = _dim("b", "x", 0, "i0") + [N("Neg", ["b"], ["mb"]),
                                       N("Slice", ["x", "one", "big", "i1", "b"], ["fwd"]),
                                       N("Slice", ["x", "mone", "small", "i1", "mb"], ["back"])]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["fwd", "back"],
              [init("i0", [0]), init("i1", [1]), init("one", [1]), init("mone", [-1]), init("big", [INT64_MAX]),
               init("small", [-INT64_MAX - 1])])
    sizes = [{"batch": b, "seq": s} for b, s in ((1, 1), (2, 7), (3, 9), (4, 2))]
    res = check(m, random_cases([("x", F, ["batch", "seq"])], sizes))
    assert [str(d) for d in res.shape("fwd")] == ["batch", "(batch + seq - 2)//batch"]
    assert [str(d) for d in res.shape("back")] == ["batch", "(batch + seq - 1)//batch"]


@settings(max_examples=300, deadline=None)
@given(trees(), trees(), bindings)
def test_try_eq_is_sound(x, y, b):
    answer = dims.try_eq(x[0], y[0])
    if answer is not None:
        assert answer == (x[1](b) == y[1](b))


def test_broadcast_of_dims_that_may_be_zero_is_exact_in_every_valid_case():
    """n and m broadcast when equal or when one is 1; a 0 meets only a 1 (or a 0)."""
    inputs = [("x", F, ["n"]), ("y", F, ["m"])]
    m = model([N("Add", ["x", "y"], ["z"])], inputs, ["z"])
    sizes = [{"n": 0, "m": 1}, {"n": 1, "m": 0}, {"n": 0, "m": 0}, {"n": 1, "m": 5}, {"n": 4, "m": 4},
             {"n": 3, "m": 1}]
    res = check(m, random_cases(inputs, sizes), ranges={"n": (0, 100), "m": (0, 100)})
    assert not res.unresolved()
    # with both known >= 1 the factors for 0 drop out
    assert str(check(m, random_cases(inputs, sizes[3:])).shape("z")[0]) == "max(m, n)"


def test_a_max_of_many_sums_drops_the_same_arguments_with_and_without_its_sample_points(monkeypatch):
    # The peak memory of a CNN: live bytes along the nodes, sums over strided sizes. Past
    # SAMPLED_ARGS arguments a point of the ranges where one wins skips the proof that it is
    # dominated; the arguments kept must be those that the proofs alone keep.
    from onnxsym.dims import minmax
    h, w, b = sym("h"), sym("w"), sym("b")
    sizes = [b * ((h + s - 1) // s) * ((w + s - 1) // s) for s in (1, 2, 4, 8, 16, 32)]
    steps, live = [], 0
    for i, (c, k) in enumerate([(12, 0), (64, 1), (128, 2), (64, 1), (256, 3), (512, 4), (128, 2), (1024, 5),
                                (3, 0), (48, 5)]):
        live = live + c * sizes[k] + 4096 * i
        steps.append(live)
        if i % 3 == 2:
            live = live - (c // 2) * sizes[k]
            steps.append(live)
    assert len(steps) > minmax.SAMPLED_ARGS
    env = dims.RangeEnv({"h": (1, 4096), "w": (1, 4096), "b": (1, 64)})
    with env:
        sampled = dmax(*steps)
    monkeypatch.setattr(minmax, "SAMPLED_ARGS", len(steps))
    with dims.RangeEnv({"h": (1, 4096), "w": (1, 4096), "b": (1, 64)}):
        proved = dmax(*steps)
    assert str(sampled) == str(proved) and str(sampled).startswith("max(")
    with env:
        for point in ({"h": 1, "w": 1, "b": 1}, {"h": 37, "w": 4096, "b": 3}, {"h": 640, "w": 480, "b": 64}):
            assert evaluate(sampled, point) == max(evaluate(s, point) for s in steps)


@contextlib.contextmanager
def _without_shortcut(module, name):
    """``module.name``, a shortcut's test, answering False meanwhile: the full search decides."""
    full = getattr(module, name)
    setattr(module, name, lambda d: False)
    try:
        yield
    finally:
        setattr(module, name, full)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(RANGES)), st.sampled_from([1, -1]), st.integers(-70, 70), st.integers(-70, 70))
def test_try_eq_of_a_shifted_symbol_answers_as_the_full_search(name, sign, shift, other):
    # (the shortcut for s + c against a number: None exactly where the bounds and the search say None)
    from onnxsym.dims import ranges

    a = dims.add(dims.mul(sign, SYMS[name]), shift)
    quick = ranges.try_eq(a, other)
    with _without_shortcut(ranges, "_unit_shift"):
        assert quick == ranges.try_eq(a, other)
    lo, hi = RANGES[name]
    values = {sign * v + shift for v in range(lo, hi + 1)}
    assert quick == (True if values == {other} else False if other not in values else None)


SMALL = {"la": (1, 6), "lb": (0, 5), "lc": (-4, 4)}
SMALL_SYMS = {k: sym(k, lo, hi) for k, (lo, hi) in SMALL.items()}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(SMALL)), st.integers(-3, 3)), max_size=4), st.integers(-20, 20),
       st.integers(-20, 20))
def test_try_le_of_a_linear_sum_answers_as_the_full_search_and_every_size(terms, shift, other):
    # (the shortcut for a sum of multiples of symbols: its bounds are its range's, so the search
    # decides nothing more; held to the full search and to every assignment of the symbols)
    import itertools

    from onnxsym.dims import ranges

    a = shift
    for name, k in terms:
        a = dims.add(a, dims.mul(k, SMALL_SYMS[name]))
    quick = ranges.try_le(a, other)
    with _without_shortcut(ranges, "_linear"):
        assert quick == ranges.try_le(a, other)
    names = sorted(SMALL)
    holds = {evaluate(a, dict(zip(names, point))) <= other
             for point in itertools.product(*(range(lo, hi + 1) for lo, hi in (SMALL[n] for n in names)))}
    assert quick == (True if holds == {True} else False if holds == {False} else None)
