"""Rules of rules/contrib_attention.py.

Ops with an onnxruntime CPU kernel are checked against what onnxruntime computes at
several sizes. Ops (or input layouts) that onnxruntime implements only on CUDA are
checked against the shapes onnxruntime's operator docs give (say so per test)."""


import itertools

import numpy as np
import pytest
from helpers import I32, I64, MS, F, init, model, ms_node
from onnx import helper
from oracle import check, random_cases, run_ort

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

b, s, p, t = (dims.sym(n) for n in ("b", "s", "p", "t"))
SIZES = [{"b": 2, "s": 3, "p": 4}, {"b": 1, "s": 5, "p": 2}]
STEP = [{"b": 2, "m": 4}, {"b": 3, "m": 6}]  # one decoding step into a cache of m positions


def weights(*shape):
    return init("w", (np.random.default_rng(0).standard_normal(shape) * 0.1).astype(np.float32))


def zeros(name, n):
    return init(name, np.zeros(n, np.float32))


def ones_of(*names):
    """Feed functions giving all-ones int32 tensors of the named symbolic sizes."""
    return lambda sz: np.ones([sz[n] for n in names], np.int32)


def run(nodes, inputs, outputs, inits=(), sizes=SIZES, fixed=None, typed=None, fresh_ok=()):
    m = model(nodes, inputs, [(o, typed[o]) if typed and o in typed else o for o in outputs], inits, opsets=[(MS, 1)])
    return check(m, random_cases(inputs, sizes, fixed, ints=(0, 3)), fresh_ok=fresh_ok)


def infer(nodes, inputs, outputs, inits=()):
    return onnxsym.infer(model(nodes, inputs, outputs, inits, opsets=[(MS, 1)]))


# --------------------------------------------------------------------------- Attention (CPU)


@pytest.mark.parametrize("attrs,width,v_hidden,head", [
    (dict(num_heads=2), 24, 8, 4),
    (dict(num_heads=2, qkv_hidden_sizes=[8, 8, 4]), 20, 4, 2),  # present is sized by V's head
])
def test_attention_without_past(attrs, width, v_hidden, head):
    inputs = [("x", F, ["b", "s", 8]), ("mask", I32, ["b", "s"])]
    nodes = [ms_node("Attention", ["x", "w", "bias", "mask"], ["y", "present"], **attrs)]
    res = run(nodes, inputs, ["y", "present"], [weights(8, width), zeros("bias", width)],
              fixed={"mask": ones_of("b", "s")})
    assert res.shape("y") == (b, s, v_hidden)
    assert res.shape("present") == (2, b, 2, s, head)


def test_attention_unidirectional_with_past():
    inputs = [("x", F, ["b", "s", 8]), ("past", F, [2, "b", 2, "p", 4])]
    nodes = [ms_node("Attention", ["x", "w", "bias", "", "past"], ["y", "present"], num_heads=2, unidirectional=1)]
    res = run(nodes, inputs, ["y", "present"], [weights(8, 24), zeros("bias", 24)])
    assert res.shape("present") == (2, b, 2, p + s, 4)
    assert res.unresolved() == []


def test_qattention_with_past():
    u8 = helper.np_dtype_to_tensor_dtype(np.dtype(np.uint8))
    inits = [init("w", np.ones((8, 24), np.uint8)), zeros("bias", 24), init("xs", np.float32(0.1)),
             init("ws", np.float32(0.1)), init("xz", np.uint8(1)), init("wz", np.uint8(1))]
    inputs = [("x", u8, ["b", "s", 8]), ("past", F, [2, "b", 2, "p", 4])]
    nodes = [ms_node("QAttention", ["x", "w", "bias", "xs", "ws", "", "xz", "wz", "past"], ["y", "present"],
                     num_heads=2, unidirectional=1)]
    res = run(nodes, inputs, ["y", "present"], inits)
    assert res.shape("y") == (b, s, 8) and res.values["y"].dtype == F
    assert res.shape("present") == (2, b, 2, p + s, 4)


def test_attention_shared_buffer_keeps_the_past_shape():
    """CUDA only (past_present_share_buffer): present is the past buffer (docs)."""
    inputs = [("x", F, ["b", 1, 8]), ("past", F, [2, "b", 2, "m", 4]), ("pl", I32, [1])]
    nodes = [ms_node("Attention", ["x", "w", "bias", "", "past", "", "pl"], ["y", "present"], num_heads=2,
                     past_present_share_buffer=1)]
    res = infer(nodes, inputs, ["y", "present"], [weights(8, 24), zeros("bias", 24)])
    assert res.shape("present") == (2, b, 2, dims.sym("m"), 4)


def test_a_past_of_unknown_shape_is_not_taken_as_empty():
    """A past that some unknown op produced: its length is fresh, never 0."""
    inputs = [("x", F, ["b", "s", 8]), ("p5", F, [2, "b", 2, "p", 4]), ("q", F, ["b", "s", 32]),
              ("k", F, ["b", "s", 16]), ("sk", I32, ["b"])]
    nodes = [helper.make_node("Mystery", ["p5"], ["past"], domain="my.ops"),
             helper.make_node("Mystery", ["p5"], ["pk"], domain="my.ops"),
             ms_node("Attention", ["x", "w", "bias", "", "past"], ["y", "present"], num_heads=2),
             ms_node("MultiHeadAttention", ["x", "x", "x", "", "", "", "pk", "pk"], ["y2", "k2", "v2"], num_heads=2),
             ms_node("GroupQueryAttention", ["q", "k", "k", "pk", "pk", "sk", "tot"], ["y3", "k3", "v3"],
                     num_heads=4, kv_num_heads=2)]
    m = model(nodes, inputs, ["y", "present", "y2", "k2", "y3", "k3"],
              [weights(8, 24), zeros("bias", 24), init("tot", np.array(9, np.int32))], opsets=[(MS, 1)])
    m.opset_import.append(helper.make_opsetid("my.ops", 1))
    res = onnxsym.infer(m)
    assert res.shape("present")[:3] == (2, b, 2) and res.shape("present")[4] == 4
    assert {(u.value, u.axis) for u in res.unresolved()} >= {("present", 3), ("k2", 2), ("k3", None)}
    assert res.shape("y") == (b, s, 8) and res.shape("y2") == (b, s, 8) and res.shape("y3") == (b, s, 32)


# --------------------------------------------------------------------------- MultiHeadAttention (CPU)


def test_mha_with_past_and_qk():
    inputs = [("q", F, ["b", "s", 8]), ("k", F, ["b", "p", 8]), ("v", F, ["b", "p", 8]),
              ("pk", F, ["b", 2, "t", 4]), ("pv", F, ["b", 2, "t", 4])]
    nodes = [ms_node("MultiHeadAttention", ["q", "k", "v", "", "", "", "pk", "pv"], ["y", "prk", "prv", "qk"],
                     num_heads=2)]
    sizes = [{"b": 2, "s": 3, "p": 3, "t": 4}, {"b": 1, "s": 2, "p": 2, "t": 6}]
    res = run(nodes, inputs, ["y", "prk", "prv", "qk"], sizes=sizes, typed={"qk": F})
    assert res.shape("prk") == (b, 2, t + p, 4)
    assert res.shape("qk") == (b, 2, s, t + p)


def test_mha_value_width_and_masks():
    inputs = [("q", F, ["b", "s", 8]), ("k", F, ["b", "p", 8]), ("v", F, ["b", "p", 6]),
              ("mask", I32, ["b", "p"]), ("ab", F, [1, 2, "s", "p"])]
    nodes = [ms_node("MultiHeadAttention", ["q", "k", "v", "", "mask", "ab"], ["y"], num_heads=2),
             ms_node("MultiHeadAttention", ["q", "k", "k", "bias"], ["yb"], num_heads=2)]
    res = run(nodes, inputs, ["y", "yb"], [zeros("bias", 24)], fixed={"mask": ones_of("b", "p")})
    assert res.shape("y") == (b, s, 6)


def test_mha_cross_attention_with_bnsh_key_value():
    inputs = [("q", F, ["b", "s", 8]), ("k", F, ["b", 2, "p", 4]), ("v", F, ["b", 2, "p", 4])]
    nodes = [ms_node("MultiHeadAttention", ["q", "k", "v"], ["y", "prk", "prv", "qk"], num_heads=2)]
    res = run(nodes, inputs, ["y", "prk", "prv", "qk"], typed={"qk": F})
    assert res.shape("prk") == (b, 2, p, 4) and res.shape("qk") == (b, 2, s, p)


def test_mha_shared_buffer_keeps_the_past_shape():
    inputs = [("q", F, ["b", 1, 8]), ("k", F, ["b", 1, 8]), ("v", F, ["b", 1, 8]),
              ("pk", F, ["b", 2, "m", 4]), ("pv", F, ["b", 2, "m", 4])]
    nodes = [ms_node("MultiHeadAttention", ["q", "k", "v", "", "", "", "pk", "pv", "pl"], ["y", "prk", "prv"],
                     num_heads=2)]
    res = run(nodes, inputs, ["y", "prk", "prv"], [init("pl", np.array([3], np.int32))], STEP)
    assert res.shape("prv") == (b, 2, dims.sym("m"), 4) and res.unresolved() == []


def test_mha_packed_layouts():
    """CUDA only (packed KV and packed QKV): shapes from onnxruntime's docs."""
    inputs = [("q", F, ["b", "s", 8]), ("kv", F, ["b", "p", 2, 2, 4]), ("qkv", F, ["b", "s", 2, 3, 4])]
    nodes = [ms_node("MultiHeadAttention", ["q", "kv"], ["y1", "k1", "v1"], num_heads=2),
             ms_node("MultiHeadAttention", ["qkv"], ["y2", "k2", "v2"], num_heads=2)]
    res = infer(nodes, inputs, ["y1", "k1", "v1", "y2", "k2", "v2"])
    assert res.shape("y1") == (b, s, 8) and res.shape("k1") == (b, 2, p, 4)
    assert res.shape("y2") == (b, s, 8) and res.shape("v2") == (b, 2, s, 4)


# --------------------------------------------------------------------------- DecoderMaskedMultiHeadAttention



def test_dmmha_self_attention_shared_buffer():
    inputs = [("q", F, ["b", 1, 8]), ("k", F, ["b", 1, 8]), ("v", F, ["b", 1, 8]),
              ("pk", F, ["b", 2, "m", 4]), ("pv", F, ["b", 2, "m", 4])]
    nodes = [ms_node("DecoderMaskedMultiHeadAttention", ["q", "k", "v", "", "", "pk", "pv", "pl"],
                     ["y", "prk", "prv", "qk"], num_heads=2, past_present_share_buffer=1, output_qk=1)]
    res = run(nodes, inputs, ["y", "prk", "prv", "qk"], [init("pl", np.array([2], np.int32))], STEP, typed={"qk": F})
    assert res.shape("prk") == (b, 2, dims.sym("m"), 4)
    assert res.shape("qk") == (b, 2, 1, 3)  # past_sequence_length 2, plus this step


def test_dmmha_qk_length_from_unknown_past_length_is_fresh():
    inputs = [("q", F, ["b", 1, 8]), ("k", F, ["b", 1, 8]), ("v", F, ["b", 1, 8]),
              ("pk", F, ["b", 2, "m", 4]), ("pv", F, ["b", 2, "m", 4]), ("pl", I32, [1])]
    nodes = [ms_node("DecoderMaskedMultiHeadAttention", ["q", "k", "v", "", "", "pk", "pv", "pl"],
                     ["y", "prk", "prv", "qk"], num_heads=2, past_present_share_buffer=1, output_qk=1)]
    res = run(nodes, inputs, ["y", "prk", "prv", "qk"], sizes=STEP, typed={"qk": F},
              fixed={"pl": lambda sz: np.array([sz["m"] - 2], np.int32)}, fresh_ok=("qk",))
    assert [(u.value, u.axis) for u in res.unresolved()] == [("qk", 3)]


def test_dmmha_cross_attention():
    inputs = [("q", F, ["b", 1, 8]), ("k", F, ["b", 2, "m", 4]), ("v", F, ["b", 2, "m", 4])]
    nodes = [ms_node("DecoderMaskedMultiHeadAttention", ["q", "k", "v"], ["y", "", "", "qk"], num_heads=2,
                     output_qk=1)]
    res = run(nodes, inputs, ["y", "qk"], sizes=STEP, typed={"qk": F})
    assert res.shape("qk") == (b, 2, 1, dims.sym("m"))


def test_decoder_masked_without_shared_buffer_and_packed():
    """onnxruntime's CPU kernel needs the shared buffer and rejects packed QKV; the CUDA
    layout from the docs: present (B, N, P + 1, H), packed width 3 * hidden."""
    inputs = [("q", F, ["b", 1, 8]), ("k", F, ["b", 1, 8]), ("v", F, ["b", 1, 8]), ("qkv", F, ["b", 1, 24]),
              ("pk", F, ["b", 2, "p", 4]), ("pv", F, ["b", 2, "p", 4]), ("x", F, ["b", 1, 8]),
              ("past", F, [2, "b", 2, "p", 4])]
    nodes = [ms_node("DecoderMaskedMultiHeadAttention", ["q", "k", "v", "", "", "pk", "pv"], ["y1", "k1", "v1"],
                     num_heads=2),
             ms_node("DecoderMaskedMultiHeadAttention", ["qkv", "", "", "", "", "pk", "pv"], ["y2", "k2", "v2"],
                     num_heads=2),
             ms_node("DecoderMaskedSelfAttention", ["x", "w", "bias", "", "past"], ["y3", "present"], num_heads=2)]
    res = infer(nodes, inputs, ["y1", "k1", "v1", "y2", "k2", "v2", "y3", "present"],
                [weights(8, 24), zeros("bias", 24)])
    assert res.shape("k1") == (b, 2, p + 1, 4) and res.shape("y2") == (b, 1, 8)
    assert res.shape("v2") == (b, 2, p + 1, 4) and res.shape("present") == (2, b, 2, p + 1, 4)


# --------------------------------------------------------------------------- GroupQueryAttention (CPU)


def _total_from_mask():
    """seqlens_k and total_sequence_length computed from a (b, t) mask, as exporters do."""
    nodes = [helper.make_node("Shape", ["mask"], ["shp"]), helper.make_node("Gather", ["shp", "one"], ["t64"], axis=0),
             helper.make_node("Cast", ["t64"], ["tot"], to=I32),
             helper.make_node("ReduceSum", ["mask", "ax"], ["rs"], keepdims=0),
             helper.make_node("Sub", ["rs", "one"], ["rs1"]), helper.make_node("Cast", ["rs1"], ["sk"], to=I32)]
    return nodes, [init("one", np.array(1, np.int64)), init("ax", np.array([1], np.int64))]


def _mask(sz):
    return np.ones((sz["b"], sz["t"]), np.int64)


def test_gqa_with_past_and_a_max_length_cache():
    """present is max(past length, total): the past grows, a max-length buffer stays."""
    pre, inits = _total_from_mask()
    inputs = [("q", F, ["b", "s", 32]), ("k", F, ["b", "s", 16]), ("v", F, ["b", "s", 16]),
              ("pk", F, ["b", 2, "p", 8]), ("pv", F, ["b", 2, "p", 8]), ("mask", I64, ["b", "t"])]
    nodes = pre + [ms_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sk", "tot"], ["y", "prk", "prv", "qk"],
                           num_heads=4, kv_num_heads=2, qk_output=1)]
    sizes = [{"b": 1, "s": 3, "p": 4, "t": 7}, {"b": 1, "s": 2, "p": 6, "t": 8}, {"b": 3, "s": 1, "p": 9, "t": 5}]
    res = run(nodes, inputs, ["y", "prk", "prv", "qk"], inits, sizes, fixed={"mask": _mask}, typed={"qk": F})
    assert res.shape("y") == (b, s, 32)
    assert res.shape("prk") == (b, 2, dims.dmax(p, t), 8)
    assert res.shape("qk") == (b, 4, s, t)
    assert res.unresolved() == []


def test_gqa_prompt_packed_qkv():
    pre, inits = _total_from_mask()
    inputs = [("qkv", F, ["b", "t", 64]), ("mask", I64, ["b", "t"])]
    nodes = pre + [ms_node("GroupQueryAttention", ["qkv", "", "", "", "", "sk", "tot"], ["y", "prk", "prv"],
                           num_heads=4, kv_num_heads=2)]
    sizes = [{"b": 2, "t": 3}, {"b": 1, "t": 5}]
    res = run(nodes, inputs, ["y", "prk", "prv"], inits, sizes, fixed={"mask": _mask})
    assert res.shape("y") == (b, t, 32) and res.shape("prv") == (b, 2, t, 8)


def test_gqa_unknown_total_length_is_fresh():
    inputs = [("q", F, ["b", "s", 32]), ("k", F, ["b", "s", 16]), ("v", F, ["b", "s", 16]),
              ("pk", F, ["b", 2, "p", 8]), ("pv", F, ["b", 2, "p", 8]), ("sk", I32, ["b"]), ("tot", I32, [])]
    nodes = [ms_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sk", "tot"], ["y", "prk", "prv"],
                     num_heads=4, kv_num_heads=2)]
    sizes = [{"b": 1, "s": 3, "p": 4}, {"b": 1, "s": 1, "p": 6}]
    res = run(nodes, inputs, ["y", "prk", "prv"], sizes=sizes, fixed={
        "sk": lambda sz: np.full(sz["b"], sz["p"] + sz["s"] - 1, np.int32),
        "tot": lambda sz: np.array(sz["p"] + sz["s"], np.int32)}, fresh_ok=("prk", "prv"))
    assert sorted((u.value, u.axis) for u in res.unresolved()) == [("prk", 2), ("prv", 2)]
    assert "total_sequence_length" in res.unresolved()[0].provenance[0].reason
    (fresh,) = dims.free_symbols(res.shape("prk")[2])
    assert res.symbol_ranges()[fresh.name][0] == 1  # at least the past length


def _gqa_domain_model(**attrs):
    """GroupQueryAttention as onnxruntime-genai's builder writes it: seqlens_k and the total
    from a (b, t) mask, a past of p positions, rotary caches of 12 rows (head size 16)."""
    pre, inits = _total_from_mask()
    inputs = [("q", F, ["b", "s", 32]), ("k", F, ["b", "s", 16]), ("v", F, ["b", "s", 16]),
              ("pk", F, ["b", 1, "p", 16]), ("pv", F, ["b", 1, "p", 16]), ("mask", I64, ["b", "t"])]
    inits += [init("cos", np.ones((12, 8), np.float32)), init("sin", np.zeros((12, 8), np.float32))]
    nodes = pre + [ms_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sk", "tot", "cos", "sin"],
                           ["y", "prk", "prv"], num_heads=2, kv_num_heads=1, do_rotary=1, **attrs)]
    return model(nodes, inputs, ["y", "prk", "prv"], inits, opsets=[(MS, 1)])


@pytest.mark.parametrize("attrs", [{}, {"sliding_window_cache": 1, "local_window_size": 4}])
def test_gqa_domain_is_where_onnxruntime_runs(attrs):
    """onnxruntime 1.32 runs it where the total is the past plus the new tokens, or lies
    between the new tokens' count and the past (a window cache: the past holds the window and
    the total is at least the new tokens); a later prompt of several tokens only at batch 1;
    and a total within the rotary caches' 12 rows. On a grid across each boundary, onnxruntime
    runs exactly where the domain holds, with the inferred shapes. (Before, the domain stated
    only total >= new tokens: too wide.)"""
    import onnxruntime as ort

    m = _gqa_domain_model(**attrs)
    res = onnxsym.infer(m)
    domain = res.domain()
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    ran = 0
    for bb in (1, 2):
        for ss in (1, 2, 3):
            for pp in (1, 3, 4, 6, 10):
                for tt in range(1, 15):
                    sz = {"b": bb, "s": ss, "p": pp, "t": tt}
                    feeds = {n: np.zeros(shape, np.float32) for n, shape in
                             (("q", (bb, ss, 32)), ("k", (bb, ss, 16)), ("v", (bb, ss, 16)),
                              ("pk", (bb, 1, pp, 16)), ("pv", (bb, 1, pp, 16)))}
                    feeds["mask"] = _mask(sz)
                    try:
                        shapes = [o.shape for o in sess.run(None, feeds)]
                    except Exception:
                        shapes = None
                    inside = domain.violated(sz) is None
                    assert (shapes is not None) == inside, (sz, shapes, domain.violated(sz))
                    if inside:
                        ran += 1
                        want = [tuple(dims.evaluate(d, sz) for d in res.shape(n)) for n in ("y", "prk", "prv")]
                        assert shapes == want, (sz, shapes, want)
    assert ran > 20


def test_gqa_domain_with_a_constant_total():
    """A total of 9 with the past and the new tokens symbolic: s <= 9 (said as such: the range
    inference narrowed to [1, 9] once read "s >= 1"), p + s == 9 or p >= 9, and one token, the
    whole prompt or batch 1; onnxruntime runs exactly there, with the inferred shapes."""
    import onnxruntime as ort

    inputs = [("q", F, ["b", "s", 32]), ("k", F, ["b", "s", 16]), ("v", F, ["b", "s", 16]),
              ("pk", F, ["b", 1, "p", 16]), ("pv", F, ["b", 1, "p", 16]), ("sk", I32, ["b"])]
    nodes = [ms_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sk", "tot"], ["y", "prk", "prv"],
                     num_heads=2, kv_num_heads=1)]
    m = model(nodes, inputs, ["y", "prk", "prv"], [init("tot", np.array(9, np.int32))], opsets=[(MS, 1)])
    res = onnxsym.infer(m)
    domain = res.domain()
    assert [c.text for c in domain.conditions] == ["s <= 9", "9 <= p (or p + s == 9)", "s == 1 (or s == 9 or b == 1)"]
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for bb, ss, pp in ((bb, ss, pp) for bb in (1, 2) for ss in range(1, 11) for pp in range(1, 14)):
        sz = {"b": bb, "s": ss, "p": pp}
        feeds = {n: np.zeros(shape, np.float32) for n, shape in
                 (("q", (bb, ss, 32)), ("k", (bb, ss, 16)), ("v", (bb, ss, 16)), ("pk", (bb, 1, pp, 16)),
                  ("pv", (bb, 1, pp, 16)))}
        feeds["sk"] = np.full(bb, 8, np.int32)
        try:
            shapes = [o.shape for o in sess.run(None, feeds)]
        except Exception:
            shapes = None
        assert (shapes is not None) == (domain.violated(sz) is None), (sz, shapes)
        if shapes is not None:
            assert shapes == [tuple(dims.evaluate(d, sz) for d in res.shape(n)) for n in ("y", "prk", "prv")]


def test_sparse_and_paged_attention():
    """CUDA only: output (B, S, N*H) with the caches passed through (SparseAttention);
    output (tokens, N*H) with the caches updated in place (PagedAttention)."""
    inputs = [("q", F, ["b", "s", 32]), ("k", F, ["b", "s", 16]), ("v", F, ["b", "s", 16]),
              ("pk", F, ["b", 2, "m", 8]), ("pv", F, ["b", 2, "m", 8]), ("rows", I32, [1, 9]), ("cols", I32, [1, 20]),
              ("tot", I32, []), ("klen", I32, ["b"]), ("tq", F, ["n", 64]),
              ("kc", F, ["blocks", 16, 2, 8]), ("vc", F, ["blocks", 16, 2, 8]), ("cum", I32, ["b1"]),
              ("past", I32, ["b"]), ("table", I32, ["b", "maxb"])]
    nodes = [ms_node("SparseAttention", ["q", "k", "v", "pk", "pv", "rows", "cols", "tot", "klen"],
                     ["y", "prk", "prv"], num_heads=4, kv_num_heads=2, sparse_block_size=16),
             ms_node("PagedAttention", ["tq", "", "", "kc", "vc", "cum", "past", "table"], ["py", "kc2", "vc2"],
                     num_heads=4, kv_num_heads=2)]
    res = infer(nodes, inputs, ["y", "prk", "prv", "py", "kc2", "vc2"])
    m, n = dims.sym("m"), dims.sym("n")
    assert res.shape("y") == (b, s, 32) and res.shape("prk") == (b, 2, m, 8)
    assert res.shape("py") == (n, 32) and res.shape("vc2") == (dims.sym("blocks"), 16, 2, 8)


# --------------------------------------------------------------------------- RotaryEmbedding (CPU)


def test_rotary_embedding_keeps_shape():
    pos = lambda sz: np.tile(np.arange(sz["s"]), (sz["b"], 1)).astype(np.int64)  # noqa: E731
    inputs = [("x3", F, ["b", "s", 8]), ("x4", F, ["b", 2, "s", 4]), ("pos", I64, ["b", "s"])]
    inits = [init("cos", np.ones((16, 2), np.float32)), init("sin", np.zeros((16, 2), np.float32))]
    nodes = [ms_node("RotaryEmbedding", ["x3", "pos", "cos", "sin"], ["y3"], num_heads=2),
             ms_node("RotaryEmbedding", ["x4", "pos", "cos", "sin"], ["y4"])]
    res = run(nodes, inputs, ["y3", "y4"], inits, fixed={"pos": pos})
    assert res.shape("y4") == (b, 2, s, 4)


# --------------------------------------------------------------------------- padding-free attention (CUDA)


def test_remove_and_restore_padding():
    """CUDA only: the token count is data (the sum of sequence_token_count), so fresh,
    bounded by batch*seq when that is static; restoring gives (B, S, H) back."""
    inputs = [("x", F, ["b", "s", 8]), ("cnt", I32, ["b"]), ("xs", F, [2, 6, 8]), ("cs", I32, [2])]
    nodes = [ms_node("RemovePadding", ["x", "cnt"], ["tok", "off", "cum", "mx"]),
             ms_node("RestorePadding", ["tok", "off"], ["back"]),
             ms_node("RemovePadding", ["xs", "cs"], ["tok2", "off2", "cum2", "mx2"]),
             ms_node("PackedAttention", ["tok", "w", "bias", "off", "cum"], ["pa"], num_heads=2),
             ms_node("PackedMultiHeadAttention", ["tok", "tok", "tok", "", "off", "cum"], ["pm"], num_heads=2)]
    res = infer(nodes, inputs, ["tok", "off", "cum", "mx", "back", "tok2", "pa", "pm"],
                [weights(8, 24), zeros("bias", 24)])
    tokens = res.shape("tok")[0]
    assert res.shape("tok")[1] == 8 and [u.value for u in res.unresolved()].count("tok") == 1
    assert res.shape("off") == (b, s) and res.shape("cum") == (b + 1,) and res.shape("mx") == (1,)
    assert res.shape("back") == (b, s, 8)
    assert res.shape("pa") == (tokens, 8) and res.shape("pm") == (tokens, 8)
    (fresh,) = dims.free_symbols(res.shape("tok2")[0])
    assert res.symbol_ranges()[fresh.name] == (0, 12)


def test_packed_mha_packed_qkv_and_position_biases():
    """CUDA only: shapes from onnxruntime's docs."""
    inputs = [("qkv", F, ["n", 2, 3, 4]), ("off", I32, ["b", "s"]), ("cum", I32, ["b1"]),
              ("table", F, [32, 2]), ("ql", I64, []), ("ql3", F, ["b", "s", 8]), ("qb", F, [8]),
              ("rel", F, [1, 2, "s", "s"]), ("gw", F, [4, 8]), ("gb", F, [8]), ("eco", F, [1, 2, 1, 1])]
    nodes = [ms_node("PackedMultiHeadAttention", ["qkv", "", "", "", "off", "cum"], ["y"], num_heads=2),
             ms_node("RelativePositionBias", ["table", "five", "ql"], ["rpb"], max_distance=8),
             ms_node("GatedRelativePositionBias", ["ql3", "qb", "rel", "gw", "gb", "eco"], ["grpb"], num_heads=2)]
    res = infer(nodes, inputs, ["y", "rpb", "grpb"], [init("five", np.array(5, np.int64))])
    assert res.shape("y") == (dims.sym("n"), 8)
    assert res.shape("rpb")[:3] == (1, 2, 5) and [u.axis for u in res.unresolved()] == [3]
    assert res.shape("grpb") == (b, 2, s, s)


@pytest.mark.parametrize("sk_shape", [["n"], ["n", 1], [1, "n"], [1]])
def test_gqa_seqlens_k_has_one_element_per_batch_row(sk_shape):
    """onnxruntime counts seqlens_k's elements against the batch, whatever its shape (rank 1 or
    more). onnxscript's ort_fusions write seqlens_k as the max of a (1, T) position row: one
    element, so the model runs at batch 1 only (the domain said every batch). On a grid,
    onnxruntime runs exactly where the domain holds, with the inferred shapes."""

    inputs = [("q", F, ["b", 1, 32]), ("k", F, ["b", 1, 16]), ("v", F, ["b", 1, 16]),
              ("pk", F, ["b", 1, 3, 16]), ("pv", F, ["b", 1, 3, 16]), ("sk", I32, sk_shape)]
    nodes = [ms_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sk", "tot"], ["y", "prk", "prv"],
                     num_heads=2, kv_num_heads=1)]
    m = model(nodes, inputs, ["y", "prk", "prv"], [init("tot", np.array(4, np.int32))], opsets=[(MS, 1)])
    points = []
    for bb in (1, 2, 3):
        for nn in (1, 2, 3):
            sz = {"b": bb, "n": nn}
            feeds = {n: np.zeros(shape, np.float32) for n, shape in
                     (("q", (bb, 1, 32)), ("k", (bb, 1, 16)), ("v", (bb, 1, 16)), ("pk", (bb, 1, 3, 16)),
                      ("pv", (bb, 1, 3, 16)))}
            feeds["sk"] = np.full([sz.get(d, d) for d in sk_shape], 3, np.int32)
            points.append((sz, feeds))
    _runs_where_the_domain_holds(m, points)


def _runs_where_the_domain_holds(m, points):
    """At each (sizes, feeds) point onnxruntime runs GroupQueryAttention model ``m`` exactly where
    onnxsym's domain holds, with the shapes onnxsym inferred (y, present key, present value)."""
    import onnxruntime as ort

    res = onnxsym.infer(m)
    domain = res.domain()
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    for sz, feeds in points:
        try:
            shapes = [o.shape for o in sess.run(None, feeds)]
        except Exception:
            shapes = None
        inside = domain.violated(sz) is None
        assert (shapes is not None) == inside, (sz, shapes, [c.text for c in domain.conditions])
        if inside:
            assert shapes == [tuple(dims.evaluate(d, sz) for d in res.shape(n)) for n in ("y", "prk", "prv")]


@pytest.mark.parametrize("extra", ["position_ids", "attention_bias"])
def test_gqa_position_ids_and_attention_bias_shapes(extra):
    """onnxruntime checks GroupQueryAttention's position_ids (input 9: batch rows, at least the
    new tokens' columns) and attention_bias (input 10: batch or 1, heads or 1, the new tokens,
    the total): on a grid around each, it runs exactly where the domain holds."""

    ins = ["q", "k", "v", "pk", "pv", "sk", "tot", "", ""]
    inputs = [("q", F, ["b", "s", 32]), ("k", F, ["b", "s", 16]), ("v", F, ["b", "s", 16]),
              ("pk", F, ["b", 1, 3, 16]), ("pv", F, ["b", 1, 3, 16]), ("sk", I32, ["b"])]
    if extra == "position_ids":
        ins.append("pos")
        inputs.append(("pos", I64, ["p0", "p1"]))
        grid = {"s": (1, 2, 4), "p0": (1, 2, 3), "p1": (1, 2, 3, 4)}
    else:
        ins += ["", "ab"]
        inputs.append(("ab", F, ["a0", "a1", "a2", "a3"]))
        grid = {"s": (1,), "a0": (1, 2, 3), "a1": (1, 2, 3), "a2": (1, 2), "a3": (3, 4, 5)}
    nodes = [ms_node("GroupQueryAttention", ins, ["y", "prk", "prv"], num_heads=2, kv_num_heads=1)]
    m = model(nodes, inputs, ["y", "prk", "prv"], [init("tot", np.array(4, np.int32))], opsets=[(MS, 1)])
    names = sorted(grid)
    points = []
    for bb in (1, 2):
        for values in itertools.product(*(grid[n] for n in names)):
            sz = dict(zip(names, values), b=bb)
            feeds = {}
            for name, et, shape in inputs:
                concrete = [sz[d] if isinstance(d, str) else d for d in shape]
                feeds[name] = (np.full(concrete, 3, np.int32) if name == "sk" else
                               np.zeros(concrete, np.int64 if et == I64 else np.float32))
            points.append((sz, feeds))
    _runs_where_the_domain_holds(m, points)


@pytest.mark.parametrize("head, width", [(8, 4), (16, 4), (32, 24)])
def test_gqa_rotary_caches_of_a_width_onnxruntime_refuses_stop_inference(head, width):
    """With rotary caches, onnxruntime runs a head size that is a multiple of 16 and caches a
    multiple of 8 wide, at most half the head: a model made otherwise (onnxscript's ort_fusions
    of a tiny decoder) fails at every size, and inference stops there, naming the node; the
    width that fits runs."""
    from onnxsym.errors import ShapeContradiction

    def make(w):
        inputs = [("q", F, ["b", 1, 2 * head]), ("k", F, ["b", 1, head]), ("v", F, ["b", 1, head]),
                  ("pk", F, ["b", 1, 3, head]), ("pv", F, ["b", 1, 3, head]), ("sk", I32, ["b"])]
        nodes = [ms_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sk", "tot", "cos", "sin"],
                         ["y", "prk", "prv"], num_heads=2, kv_num_heads=1, do_rotary=1, name="gqa")]
        caches = [init(n, np.zeros((8, w), np.float32)) for n in ("cos", "sin")]
        return model(nodes, inputs, ["y", "prk", "prv"], [init("tot", np.array(4, np.int32))] + caches,
                     opsets=[(MS, 1)])

    feeds = {"q": np.zeros((1, 1, 2 * head), np.float32), "k": np.zeros((1, 1, head), np.float32),
             "v": np.zeros((1, 1, head), np.float32), "pk": np.zeros((1, 1, 3, head), np.float32),
             "pv": np.zeros((1, 1, 3, head), np.float32), "sk": np.array([3], np.int32)}
    with pytest.raises(Exception):
        run_ort(make(width), feeds)
    with pytest.raises(ShapeContradiction) as e:
        onnxsym.infer(make(width))
    assert e.value.node == "gqa"
    if head % 16 == 0:  # the width that fits: it runs, and inference goes on
        fit = head // 2
        assert run_ort(make(fit), feeds)["y"].shape == (1, 1, 2 * head)
        assert [str(d) for d in onnxsym.infer(make(fit)).shape("y")] == ["b", "1", str(2 * head)]
