"""Rules of rules/contrib_recurrent.py, rules/contrib_blocks.py and the later additions
to rules/contrib_quant.py and rules/contrib_misc.py.

Ops with an onnxruntime CPU kernel are checked against onnxruntime at two sizes of
their symbols; CUDA/WebGPU-only ops against the shapes their schema docs in the
onnxruntime 1.32 wheel state (said per test)."""


import numpy as np
import pytest
from helpers import I32, I64, MS, U8, F, init, model, ms_node
from onnx import TensorProto
from oracle import check, random_cases

import onnxsym
from onnxsym import dims

pytest.importorskip("onnxruntime")

b, s, t = (dims.sym(n) for n in ("b", "s", "t"))
SIZES = [{"b": 2, "s": 3, "t": 4}, {"b": 1, "s": 5, "t": 7}]
I8 = TensorProto.INT8


def run(nodes, inputs, outputs, inits=(), fixed=None, fresh_ok=()):
    return check(model(nodes, inputs, outputs, inits, opsets=[(MS, 1)]),
                 random_cases(inputs, SIZES, fixed, ints=(0, 3)),
                 fresh_ok=fresh_ok)


def infer(nodes, inputs, outputs, inits=()):
    return onnxsym.infer(model(nodes, inputs, outputs, inits, opsets=[(MS, 1)]))


def w(name, *shape, dtype=np.float32):
    return init(name, (np.random.default_rng(1).standard_normal(shape) * 0.1).astype(dtype))


# --------------------------------------------------------------------------- recurrent


def test_attn_lstm():
    """Bahdanau attention around an LSTM cell: the LSTM's output shapes (hidden 5)."""
    inputs = [("x", F, ["s", "b", 3]), ("mem", F, ["b", "t", 6])]
    names = ["x", "W", "R", "", "", "", "", "", "QW", "MW", "V", "mem", "", "AW"]
    inits = [w("W", 1, 20, 3 + 8), w("R", 1, 20, 5), w("QW", 1, 5, 7), w("MW", 1, 6, 7), w("V", 1, 7),
             w("AW", 1, 6 + 5, 8)]
    res = run([ms_node("AttnLSTM", names, ["y", "yh", "yc"], hidden_size=5)], inputs, ["y", "yh", "yc"], inits)
    assert res.shape("y") == (s, 1, b, 5) and res.shape("yc") == (1, b, 5)


def test_dynamic_quantize_lstm_reads_hidden_from_its_transposed_r():
    inputs = [("x", F, ["s", "b", 3])]
    names = ["x", "W", "R", "", "", "", "", "", "ws", "wz", "rs", "rz"]
    inits = [init("W", np.ones((2, 3, 20), np.uint8)), init("R", np.ones((2, 5, 20), np.uint8)),
             init("ws", np.ones(2, np.float32)), init("wz", np.zeros(2, np.uint8)),
             init("rs", np.ones(2, np.float32)), init("rz", np.zeros(2, np.uint8))]
    res = run([ms_node("DynamicQuantizeLSTM", names, ["y", "yh", "yc"], direction="bidirectional",
                      hidden_size=5)],
              inputs, ["y", "yh", "yc"], inits)
    assert res.shape("y") == (s, 2, b, 5)


def test_linear_attention_and_gate():
    """Output heads are max(q_num_heads, kv_num_heads) (onnxruntime's kernel: inverse GQA)."""
    inputs = [("q", F, ["b", "t", 8]), ("k", F, ["b", "t", 4]), ("v", F, ["b", "t", 12]),
              ("q2", F, ["b", "t", 8]), ("k2", F, ["b", "t", 8]), ("v2", F, ["b", "t", 24]),
              ("a", F, ["b", "t", 4])]
    nodes = [ms_node("LinearAttention", ["q", "k", "v"], ["o", "st"], q_num_heads=4, kv_num_heads=2,
                     update_rule="linear"),
             ms_node("LinearAttention", ["q2", "k2", "v2"], ["o2", "st2"], q_num_heads=2, kv_num_heads=4,
                     update_rule="linear"),
             ms_node("LinearAttentionGate", ["a", "dt", "ds", "a"], ["decay", "beta"])]
    res = run(nodes, inputs, ["o", "st", "o2", "st2", "decay", "beta"], [w("dt", 4), w("ds", 4)])
    assert res.shape("o") == (b, t, 24) and res.shape("st") == (b, 2, 2, 6)
    assert res.shape("o2") == (b, t, 24) and res.shape("st2") == (b, 4, 4, 6)


def test_gated_delta_net_token_major_and_batched():
    inputs = [("q", F, ["t", 2, 5]), ("v", F, ["t", 4, 6]), ("g", F, ["t", 4]), ("st", F, ["b", 4, 6, 5]),
              ("q4", F, ["b", "s", 2, 5]), ("v4", F, ["b", "s", 4, 6]), ("g4", F, ["b", "s", 4])]
    cu = {"cu": lambda z: np.array([0, z["t"]], np.int32)}
    inputs += [("cu", I32, [2]), ("qkv", F, ["t", 2 * 2 * 5 + 4 * 6]), ("st1", F, [1, 4, 6, 5])]
    nodes = [ms_node("GatedDeltaNet", ["q", "q", "v", "cu", "g", "g"], ["o", "fs"]),
             ms_node("GatedDeltaNet", ["q4", "q4", "v4", "", "g4", "g4", "st"], ["o4", "fs4"]),
             ms_node("GatedDeltaNet", ["qkv", "", "", "cu", "g", "g", "st1"], ["op", "fsp"])]
    res = run(nodes, inputs, ["o", "fs", "o4", "fs4", "op", "fsp"], fixed=cu)
    assert res.shape("o") == (t, 4, 6) and res.shape("fs") == (1, 4, 6, 5) and res.shape("fs4") == (b, 4, 6, 5)
    assert res.shape("op") == (t, 4, 6)


def test_causal_convs_with_state():
    inputs = [("x", F, ["b", 4, "t"]), ("xl", F, ["b", "t", 4]), ("p", F, ["t", 4]), ("st", F, ["b", 4, 2])]
    cu = {"cu": lambda z: np.linspace(0, z["t"], z["b"] + 1).astype(np.int32)}
    inputs.append(("cu", I32, ["c"]))
    nodes = [ms_node("CausalConvWithState", ["x", "wc"], ["o", "ps"], dilation=2),
             ms_node("CausalConvWithState", ["xl", "wc"], ["ol", "psl"], channels_last=1),
             ms_node("VarlenCausalConvWithState", ["p", "wc", "cu", "", "st"], ["ov", "fsv"])]
    m = model(nodes, inputs, ["o", "ps", "ol", "psl", "ov", "fsv"], [w("wc", 4, 1, 3)], opsets=[(MS, 1)])
    res = onnxsym.infer(m)
    assert res.shape("ps") == (b, 4, 4) and res.shape("psl") == (b, 2, 4) and res.shape("o") == (b, 4, t)
    assert res.shape("ov") == (t, 4) and res.shape("fsv") == (b, 4, 2)
    import onnxruntime as ort
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for z in ({"b": 2, "t": 4, "c": 3}, {"b": 1, "t": 6, "c": 2}):
        rng = np.random.default_rng(0)
        feeds = {"x": rng.standard_normal((z["b"], 4, z["t"])).astype(np.float32),
                 "xl": rng.standard_normal((z["b"], z["t"], 4)).astype(np.float32),
                 "p": rng.standard_normal((z["t"], 4)).astype(np.float32),
                 "st": rng.standard_normal((z["b"], 4, 2)).astype(np.float32), "cu": cu["cu"](z)}
        for name, arr in zip(["o", "ps", "ol", "psl", "ov", "fsv"], sess.run(None, feeds)):
            assert tuple(dims.evaluate(d, z) for d in res.shape(name)) == arr.shape, name


# --------------------------------------------------------------------------- blocks


def test_norms_gates_and_hyper_connections():
    inputs = [("x", F, ["b", "s", 15]), ("g", F, ["b", "s", 15]), ("x4", F, ["b", "s", 3, 5]),
              ("gate", F, ["b", "s", 1]), ("y", F, ["b", "s", 15]), ("mix", F, ["b", "s", 3]),
              ("blk", F, ["b", "s", 5])]
    nodes = [ms_node("GatedRMSNorm", ["x", "sc5", "g"], ["o1"]),
             ms_node("BranchwiseRMSNorm", ["x", "sc5"], ["o2"], num_branches=3),
             ms_node("GatedAdd", ["x", "y", "gate"], ["o3"]),
             ms_node("HyperConnectionPreMix", ["x4", "mix"], ["o4"]),
             ms_node("HyperConnectionPreMix", ["x", "mix"], ["o5"], num_branches=3),
             ms_node("HyperConnectionPostMix", ["x4", "blk", "mix"], ["o6"]),
             ms_node("HyperConnectionPostMix", ["x", "blk", "mix"], ["o7"], num_branches=3),
             ms_node("EngramGate", ["x4", "x4", "blk", "n35", "n35", "n35"], ["o8", "o9"])]
    outs = ["o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9"]
    res = run(nodes, inputs, outs, [w("sc5", 5), w("n35", 3, 5)])
    assert res.shape("o5") == (b, s, 5) and res.shape("o6") == (b, s, 3, 5) and res.shape("o9") == (b, s, 3, 5)


def test_ngram_hashes_and_moe_router():
    inputs = [("ids", I64, ["b", "s"]), ("logits", F, ["s", 8]), ("act", F, ["s", 256])]
    inits = [init("mul", np.ones(3, np.int64)), init("voc", np.full(4, 7, np.int64)), w("bias", 8), w("pw", 8, 256)]
    nodes = [ms_node("NGramHashMapping", ["ids", "mul", "voc"], ["h", "p"], max_ngram_size=3, n_head_per_ngram=2,
                     pad_id=0),
             ms_node("MoEGroupRouter", ["logits", "bias"], ["rp"], top_k=2, n_group=2, topk_group=1),
             ms_node("MoEGroupRouter", ["act", "bias", "pw"], ["", "ss", "rw"], top_k=2)]
    res = run(nodes, inputs, ["h", "p", "rp", "ss", "rw"], inits)
    assert res.shape("h") == (b, s, 4) and res.shape("p") == (b, 2) and res.shape("ss") == (s, 8)


def test_packed_ngram_hashes():
    """hash_ids (tokens, (max_ngram_size - 1) * heads); present ids per request."""
    inputs = [("ids", I64, ["t"]), ("cu", I32, ["c"]), ("seg", I32, ["t"]), ("cap", I32, ["c-1"])]
    fixed = {"cu": lambda z: np.linspace(0, z["t"], z["c"]).astype(np.int32),
             "cap": lambda z: np.ones(z["c-1"], np.int32)}
    inits = [init("mul", np.ones(3, np.int64)), init("voc", np.full(4, 7, np.int64))]
    nodes = [ms_node("VarlenNGramHashMapping", ["ids", "mul", "voc", "cu"], ["h", "p"], max_ngram_size=3,
                     n_head_per_ngram=2, pad_id=0),
             ms_node("VarlenNGramHashMapping", ["ids", "mul", "voc", "cu", "", "", "", "seg", "", "cap"],
                     ["h2", "p2", "ps2", "su2"], max_ngram_size=3, n_head_per_ngram=2, pad_id=0,
                     state_update_capacity=2)]
    m = model(nodes, inputs, ["h", "p", "ps2", "su2"], inits, opsets=[(MS, 1)])
    res = check(m,
                random_cases(inputs, [{"t": 4, "c": 3, "c-1": 2}, {"t": 7, "c": 2, "c-1": 1}], fixed, ints=(0, 3)))
    c = dims.sym("c")
    assert res.shape("h") == (t, 4) and res.shape("p") == (c - 1, 2) and res.shape("su2") == (c - 1, 2, 2)


def test_gpu_only_blocks():
    """CUDA/WebGPU only: HyperConnectionLowRankMix (pre_output (..., H), post_gate (..., C)),
    RouterGateUpProj (N = router_size + 2*inter), VarlenNGramHashMapping, MoEPacked (docs)."""
    inputs = [("x", F, ["t", 15]), ("h", F, ["t", 32]), ("ids", I64, ["t"]), ("cu", I32, ["b"])]
    nodes = [ms_node("HyperConnectionLowRankMix", ["x", "a", "a", "a", "a"], ["pre", "post", "so"], num_branches=3),
             ms_node("RouterGateUpProj", ["h", "rw"], ["router", "act"], router_size=8, activation="swiglu"),
             ms_node("VarlenNGramHashMapping", ["ids", "m", "v", "cu"], ["hash", "pres"], max_ngram_size=3,
                     n_head_per_ngram=2, pad_id=0),
             ms_node("MoEPacked", ["h", "x", "a", "", "a"], ["moe"], k=2)]
    res = infer(nodes, inputs, ["pre", "post", "so", "router", "act", "hash", "pres", "moe"],
                [w("rw", 32, 40), w("a", 3, 5), init("m", np.ones(3, np.int64)), init("v", np.ones(4, np.int64))])
    assert res.shape("pre") == (t, 5) and res.shape("post") == (t, 3) and res.shape("so") == (t, 15)
    assert res.shape("router") == (t, 8) and res.shape("act") == (t, 16)
    assert res.shape("hash") == (t, 4) and res.shape("pres") == (b - 1, 2) and res.shape("moe") == (t, 32)


# --------------------------------------------------------------------------- data-dependent and misc


def test_data_dependent_outputs_get_ranged_symbols():
    """Tokenizer's token count, DynamicTimeWarping's path length and BifurcationDetector's
    token count are data: fresh symbols whose ranges hold what onnxruntime returns."""
    strings = {"xs": lambda z: np.array([["a b c"] * z["s"]] * z["b"], dtype=object)}
    inputs = [("xs", TensorProto.STRING, ["b", "s"]), ("cost", F, [4, 6]), ("src", I64, [10]),
              ("cur", I64, ["s"]), ("pred", I64, [10])]
    idx = init("idx", np.array(1, np.int64))
    nodes = [ms_node("Tokenizer", ["xs"], ["tok"], separators=[" "], mark=0, pad_value="#", mincharnum=1),
             ms_node("DynamicTimeWarping", ["cost"], ["path"]),
             ms_node("BifurcationDetector", ["src", "cur", "idx", "pred"], ["tokens", "match"]),
             ms_node("BifurcationDetector", ["src", "cur", "idx"], ["tokens2", "match2"])]
    res = run(nodes, inputs, ["tok", "path", "tokens", "match", "tokens2", "match2"], [idx], fixed=strings,
              fresh_ok=("tok", "path", "tokens"))
    assert res.shape("tok")[:2] == (b, s) and res.shape("tokens2") == (s,) and res.shape("match") == ()
    path = dims.as_sym(res.shape("path")[1])
    assert res.symbol_ranges()[path.name] == (6, 9)


def test_word_conv_embedding_and_dynamic_pads():
    inputs = [("seq", I32, ["s", 7]), ("x", F, ["b", 2, "s", "t"])]
    inits = [w("W", 6, 1, 3, 5), w("B", 6), w("C", 20, 5), w("wt", 2, 3, 3, 3),
             init("pads", np.array([1, 0, 1, 0], np.int64))]
    nodes = [ms_node("WordConvEmbedding", ["seq", "W", "B", "C"], ["emb"], embedding_size=6, conv_window_size=3,
                     char_embedding_size=5),
             ms_node("ConvTransposeWithDynamicPads", ["x", "wt", "pads"], ["y"], strides=[2, 2])]
    res = run(nodes, inputs, ["emb", "y"], inits)
    assert res.shape("emb") == (s, 6) and res.shape("y") == (b, 3, 2 * s - 1, 2 * t + 1)


def test_fused_weight_only_matmuls():
    """CUDA/WebGPU only: MatMulNBitsMlp/Qkv/QLoRA, MatMulPacked, the FP4/FP8 block
    quantized MatMuls: (..., N) per the schema docs (GatherPacked is also checked on CPU below)."""
    inputs = [("a", F, ["b", "s", 32]), ("ids", I64, ["b", "s"])]
    q = ["qb", "qs"]
    nodes = [ms_node("MatMulNBitsMlp", ["a", "", "g", "qb", "qs", "", "qb", "qs"], ["mlp"], N=48, K=32,
                     block_size=32, activation="silu"),
             ms_node("MatMulNBitsQkv", ["a", "a", "g"] + q + [""] + q + [""] + q, ["Q", "K", "V", "sum"], Nq=32,
                     Nkv=8, K=32, block_size=32),
             ms_node("MatMulNBitsQLoRA", ["a"] + q * 3, ["lora"], N=40, K=32),
             ms_node("MatMulPacked", ["a", "qb"], ["packed"], N=24, K=32, packed_type="q4"),
             ms_node("MatMulBlockQuantizedFp4Weight", ["a", "fp4", "qs", "g"], ["fp4y"]),
             ms_node("MatMulBlockQuantizedFp8Weight", ["a", "fp8", "qs"], ["fp8y"]),
             ms_node("GatherPacked", ["qb", "ids"], ["rows"], K=64, output_dtype=TensorProto.FLOAT16, packed_type="q4")]
    inits = [init("qb", np.zeros((48, 1, 16), np.uint8)), w("qs", 48), w("g", 32),
             init("fp4", np.zeros((12, 16), np.uint8)), init("fp8", np.zeros((20, 32), np.uint8))]
    res = infer(nodes, inputs, ["mlp", "Q", "K", "V", "sum", "lora", "packed", "fp4y", "fp8y", "rows"], inits)
    assert res.shape("mlp") == (b, s, 48) and res.shape("Q") == (b, s, 32) and res.shape("V") == (b, s, 8)
    assert res.shape("sum") == (b, s, 32) and res.shape("lora") == (b, s, 40) and res.shape("packed") == (b, s, 24)
    assert res.shape("fp4y") == (b, s, 12) and res.shape("fp8y") == (b, s, 20)
    assert res.shape("rows") == (b, s, 64) and res.values["rows"].dtype == TensorProto.FLOAT16


def test_ordered_int8_and_fft_ops():
    """CUDA only: QuantizeWithOrder/DequantizeWithOrder keep the shape, QOrderedMatMul is a
    MatMul, QOrderedAttention (B, S, v_hidden) (schema docs); Rfft (..., n) -> (..., n//2 + 1, 2)
    and Irfft (..., m, 2) -> (..., 2*m - 1) as onnxruntime's CUDA kernel (fft_ops.cc) sizes them."""
    inputs = [("x", F, ["b", "s", 32]), ("sig", F, ["b", "t"]), ("spec", F, ["b", "t", 2])]
    nodes = [ms_node("QuantizeWithOrder", ["x", "sc"], ["q"], order_input=1, order_output=1),
             ms_node("DequantizeWithOrder", ["q", "sc"], ["dq"], order_input=1, order_output=1, to=F),
             ms_node("QOrderedMatMul", ["q", "sc", "wq", "sc", "sc"], ["mm"], order_A=1, order_B=0, order_Y=1),
             ms_node("QOrderedAttention", ["q", "sc", "sc", "sc", "sc", "wq", "wq", "wq"] + ["sc"] * 9, ["att"],
                     num_heads=2, order_input=1, order_output=1, order_weight=0),
             ms_node("Rfft", ["sig"], ["spec1"], signal_ndim=1, onesided=1),
             ms_node("Irfft", ["spec"], ["sig1"], signal_ndim=1, onesided=1)]
    res = infer(nodes, inputs, ["q", "dq", "mm", "att", "spec1", "sig1"],
                [init("sc", np.float32(1)), init("wq", np.zeros((32, 16), np.int8))])
    assert res.shape("dq") == (b, s, 32) and res.values["q"].dtype == I8
    assert res.shape("mm") == (b, s, 16) and res.shape("att") == (b, s, 16)
    assert res.shape("spec1") == (b, t // 2 + 1, 2) and res.shape("sig1") == (b, 2 * t - 1)


# --------------------------------------------------------------------------- 1.32 sparse attention and state ops


def test_sparse_attention_indexers():
    """CUDA/WebGPU only: capacities from the attributes, as the schema docs state: token_budget
    + compress_ratio - 1 ("qsa") or index_topk ("csa"); fixed-shape states pass through."""
    inputs = [("q", F, ["b", "s", 64]), ("pk", F, ["b", "t", 16]), ("buf", F, [2, "b", 3, 32]),
              ("pq", F, ["s", 64]), ("ks", F, ["b", 8, 16]), ("kvb", F, ["b", 7, 16]), ("len", I32, ["b", 2]),
              ("base", I32, [5, 9]), ("rows", I32, ["s"])]
    tail = ["", "", "", "", ""]
    nodes = [ms_node("SparseAttentionIndexer", ["q", "", "n", "n", "cs", "cs", "", "pk"], ["sel", "present"],
                     policy_mode="qsa", token_budget=8, compress_ratio=4),
             ms_node("SparseAttentionIndexer", ["q", "", "n", "n", "cs", "cs", "", "pk"] + tail + ["buf"],
                     ["sel2", "present2", "buf2"], policy_mode="csa", index_topk=6, compress_ratio=4),
             ms_node("SparseAttentionIndexer", ["q", "", "n", "n", "cs", "cs", "", "pk"] + tail[:4] + ["plen"],
                     ["sel3", "present3"], policy_mode="qsa", token_budget=8, compress_ratio=4),
             ms_node("PackedSparseAttentionIndexer", ["pq", "", "n", "n", "cs", "cs", "cu", "pl"] + tail[:4]
                     + ["ks", "kvb", "", "len"], ["psel", "pcnt", "pks", "pkvb", "", "plen2"], policy_mode="qsa",
                     token_budget=8, compress_ratio=4, state_capacity=8),
             ms_node("PackedSparseAttentionIndexerMerge", ["base", "rows", "rows", "rows", "rows"],
                     ["msel", "mcnt", "mst"], max_output_entries=12)]
    inits = [w("n", 16), w("cs", 32, 8), init("plen", np.array([3], np.int32)), init("cu", np.array([0, 1], np.int32)),
             init("pl", np.array([0], np.int32))]
    outs = ["sel", "present", "sel2", "present2", "buf2", "sel3", "present3", "psel", "pcnt", "pks", "pkvb", "plen2",
            "msel", "mcnt", "mst"]
    res = infer(nodes, inputs, outs, inits)
    assert res.shape("sel") == (b, s, 11) and res.shape("present") == (b, t + s, 16)
    assert res.shape("sel2") == (b, s, 6) and res.shape("sel3") == (b, s, 11) and res.shape("present3") == (b, t, 16)
    fresh = {u.value for u in res.unresolved()}
    assert fresh == {"present2", "buf2"}, res.unresolved()
    assert res.shape("psel") == (s, 11) and res.shape("pcnt") == (s,) and res.shape("pkvb") == (b, 7, 16)
    assert res.shape("msel") == (s, 12) and res.shape("mst") == (s,)


def test_sparse_attention_ops_and_decoder_state_ops():
    """CUDA/WebGPU only (docs): DynamicSparseAttention's output (B, S, N*H) and caches whose
    length it appends to (fresh, one symbol for both); SparsePagedAttention like PagedAttention;
    RMSNormRotary, Mamba2Verify, SpeculativePrefixCommit, the state replays and QuantizeBFP."""
    inputs = [("q", F, ["b", "s", 64]), ("pk", F, ["b", 2, "t", 16]), ("pq", F, ["s", 64]),
              ("kc", F, [32, 16, 2, 16]), ("x", F, ["b", "s", 4, 24]), ("proj", F, ["s", 400]),
              ("cst", F, [4, 160, 3]), ("sst", F, [4, 2, 32, 64]), ("nt", I64, ["b", 5]), ("ctl", I64, ["b", 16]),
              ("back", F, ["t"])]
    i32 = [init("i", np.zeros(1, np.int32))]
    nodes = [ms_node("DynamicSparseAttention", ["q", "", "", "pk", "pk", "", "", "i", "i", "i", "i"],
                     ["o", "k", "v"], num_heads=2, kv_num_heads=1, output_bf16=1),
             ms_node("SparsePagedAttention", ["pq", "pq", "pq", "kc", "kc", "i", "i", "i", "", "i", "i"],
                     ["po", "pkc", "pvc"], num_heads=4, kv_num_heads=4),
             ms_node("RMSNormRotary", ["x", "i", "i", "i", "i"], ["ry", "rn"], input_width=16, flatten_batch=1,
                     rotary_embedding_dim=8),
             ms_node("Mamba2Verify", ["proj", "cst", "sst", "i", "i", "i", "i", "i", "i", "i"],
                     ["my", "mc", "ms", "mx", "mr"], heads=2, head_dim=64, n_groups=1, d_state=16),
             ms_node("SpeculativePrefixCommit", ["nt", "nt", "i", "ctl", "ctl", "ctl", "ctl"], ["hc", "uc", "ux"]),
             ms_node("GatedDeltaNetStateReplay", ["back", "back", "back", "i"], ["rep"]),
             ms_node("QuantizeBFP", ["x"], ["bfp", "shape", "strides"], bfp_type=1)]
    outs = ["o", "k", "v", "po", "pkc", "ry", "rn", "my", "mc", "mx", "mr", "hc", "uc", "rep", "bfp", "shape"]
    res = infer(nodes, inputs, outs, i32)
    assert res.shape("o") == (b, s, 32) and res.values["o"].dtype == TensorProto.BFLOAT16
    k, v = res.shape("k"), res.shape("v")
    with res.env:
        assert k[:2] == (b, 2) and k[2] is v[2] and dims.range_of(k[2])[0] == dims.range_of(t)[0]
    assert res.shape("po") == (s, 64) and res.shape("pkc") == (32, 16, 2, 16)
    assert res.shape("ry") == (1, b * s, 64) and res.shape("rn") == (b, s, 4, 16)
    assert res.shape("my") == (s, 128) and res.shape("mx") == (s, 160) and res.shape("mc") == (4, 160, 3)
    assert res.shape("hc") == (b,) and res.shape("uc") == (b, 16) and res.shape("rep") == (t,)
    assert res.shape("shape") == (4,) and {u.value for u in res.unresolved()} == {"k", "v", "bfp"}


def test_sparse_to_dense_matmul_with_a_sparse_input():
    """A COO sparse A times a dense B, fed to onnxruntime's CPU kernel as a SparseTensor."""
    import onnxruntime as ort
    from onnx import helper

    nodes = [ms_node("SparseToDenseMatMul", ["A", "B"], ["Y"]),
             ms_node("SparseToDenseMatMul", ["A", "B2"], ["Y2"], transA=1, transB=1)]
    g = helper.make_graph(nodes, "g", [helper.make_sparse_tensor_value_info("A", F, ["s", "t"]),
                                       helper.make_tensor_value_info("B", F, ["t", "b"]),
                                       helper.make_tensor_value_info("B2", F, ["b", "s"])],
                          [helper.make_empty_tensor_value_info(o) for o in ("Y", "Y2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    res = onnxsym.infer(m)
    assert res.shape("Y") == (s, b) and res.shape("Y2") == (t, b)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for z in SIZES:
        coo = ort.SparseTensor.sparse_coo_from_numpy([z["s"], z["t"]], np.ones(1, np.float32),
                                                     np.zeros((1, 2), np.int64), ort.OrtDevice.make("cpu", 0))
        io = sess.io_binding()
        io.bind_ortvalue_input("A", ort.OrtValue.ort_value_from_sparse_tensor(coo))
        io.bind_cpu_input("B", np.ones((z["t"], z["b"]), np.float32))
        io.bind_cpu_input("B2", np.ones((z["b"], z["s"]), np.float32))
        io.bind_output("Y")
        io.bind_output("Y2")
        sess.run_with_iobinding(io)
        for name, out in zip(("Y", "Y2"), io.get_outputs()):
            assert tuple(dims.evaluate(d, z) for d in res.shape(name)) == tuple(out.shape()), name


def test_matmul_fp_q4_reads_n_from_b_shape():
    """The packed int4 blob (blk_quant_type 1: 21 bytes per 32-row block of a column) with
    B_shape (K, N) = (64, 40): A (..., 64) -> (..., 40) in onnxruntime's CPU kernel."""
    inputs = [("a", F, ["b", "s", 64])]
    inits = [init("blob", np.zeros(2 * 40 * 21, np.uint8)), init("bshape", np.array([64, 40], np.int64))]
    nodes = [ms_node("MatMulFpQ4", ["a", "blob", "bshape"], ["y"], blk_quant_type=1)]
    try:
        res = run(nodes, inputs, ["y"], inits)
    except Exception as exc:  # MLAS has the 4-bit kernel only on some CPUs (AVX2/AVX512, NEON)
        if "not yet supported on this hardware platform" not in str(exc):
            raise
        res = infer(nodes, inputs, ["y"], inits)  # this CPU: the kernel source's shape, as above
    assert res.shape("y") == (b, s, 40)


def test_gather_packed_rows_are_k_wide():
    """Packed format 0 (GGML f32: 4*K bytes a row): indices (b, s) -> (b, s, K) in
    onnxruntime's CPU kernel."""
    inputs = [("ids", I64, ["b", "s"])]
    inits = [init("table", np.zeros((10, 4 * 64), np.uint8))]
    res = run([ms_node("GatherPacked", ["table", "ids"], ["y"], packed_type=0, K=64, output_dtype=F)], inputs, ["y"],
              inits)
    assert res.shape("y") == (b, s, 64) and res.values["y"].dtype == F


def test_gpu_only_gemm_longformer_and_bfp_ops():
    """CUDA/WebGPU only (schema docs): GemmFloat8 (M, N) after transA/transB in ``dtype``;
    QOrderedLongformerAttention keeps the input's shape; ConvStateReplay's output is bound to
    destination_backing; DequantizeBFP restores the shape its ``shape`` input holds."""
    inputs = [("a", F, [16, "s"]), ("w", F, ["t", 16]), ("x", I8, ["b", "s", 32]), ("back", F, ["t"]),
              ("raw", U8, ["t"])]
    nodes = [ms_node("GemmFloat8", ["a", "w"], ["g"], transA=1, transB=1, dtype=TensorProto.FLOAT16),
             ms_node("QOrderedLongformerAttention", ["x"] + ["x"] * 13, ["lf"], num_heads=2, window=2,
                     order_input=1, order_weight=0, order_global_weight=0, order_output=1),
             ms_node("ConvStateReplay", ["back", "back", "back", "meta"], ["rep"]),
             ms_node("DequantizeBFP", ["raw", "shape", "shape"], ["deq"], bfp_type=1)]
    inits = [init("meta", np.zeros(8, np.int64)), init("shape", np.array([4, 6, 8], np.int64))]
    res = infer(nodes, inputs, ["g", "lf", "rep", "deq"], inits)
    assert res.shape("g") == (s, t) and res.values["g"].dtype == TensorProto.FLOAT16
    assert res.shape("lf") == (b, s, 32) and res.shape("rep") == (t,) and res.shape("deq") == (4, 6, 8)
