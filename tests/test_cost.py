"""Symbolic cost, checked against what onnxruntime computes at two sizes of every model:
the bytes of every value (onnxruntime's own tensor sizes, sub-byte types packed), the
FLOPs of MatMul/Gemm/Conv counted from the concrete shapes, the peak from a liveness
walk over the concrete tensors, and --solve against runs at the answer and one more."""

import glob
import json
import math
import os
from types import SimpleNamespace

import numpy as np
import pytest
from cost_oracle import peak_by_walk, runtime_sizes
from onnx import TensorProto, helper, numpy_helper

import onnxsym
from onnxsym import dims
from onnxsym.cli import main
from onnxsym.cost.solve import parse_budget

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(glob.glob(os.path.join(HERE, "..", "models", "*.onnx"))
                + glob.glob(os.path.join(HERE, "..", "models", "optimized", "*.onnx")))
LLAMA = os.path.join(HERE, "..", "models", "llama_tiny_ts.onnx")


def run(*args):
    from click.testing import CliRunner
    r = CliRunner().invoke(main, list(args))
    return SimpleNamespace(returncode=r.exit_code, stdout=r.stdout, stderr=r.stderr)


def _concrete_flops(node, shape):
    """2*M*N*K of MatMul/Gemm and 2*N*M*(C/g)*prod(k)*prod(out spatial) of Conv, from real shapes."""
    if node.op_type == "MatMul":
        a, b = list(shape[node.input[0]]), list(shape[node.input[1]])
        a = [1] + a if len(a) == 1 else a
        b = b + [1] if len(b) == 1 else b
        batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
        return 2 * math.prod(batch) * a[-2] * b[-1] * a[-1]
    if node.op_type == "Gemm":
        at = {x.name: x.i for x in node.attribute}
        a, b = shape[node.input[0]], shape[node.input[1]]
        m, k = (a[1], a[0]) if at.get("transA") else a
        n = b[0] if at.get("transB") else b[1]
        return 2 * m * n * k
    w, y = shape[node.input[1]], shape[node.output[0]]
    return 2 * y[0] * w[0] * math.prod(w[1:]) * math.prod(y[2:])


def _real_models():
    """The committed corpus (models/real/) at its manifest's sizes; some need feeds that the
    oracle's (ones for integers, noise for floats) are not: strings, and silero_vad's state of
    a fixed shape. tests/test_real_models.py runs those with their own feeds."""
    with open(os.path.join(HERE, "..", "models", "real", "manifest.json")) as f:
        rows = json.load(f)
    needs_own_feeds = {e["name"] for e in rows if any("strings" in f for f in e["feeds"].values())} | {"silero_vad"}
    return [pytest.param(os.path.join(HERE, "..", "models", "real", e["file"]), e["sizes"], id=e["name"], marks=pytest.mark.slow)
            for e in rows if e["commit"] and e["name"] not in needs_own_feeds]


@pytest.mark.parametrize("path, sizes", [pytest.param(p, None, id=os.path.basename(p)) for p in MODELS]
                         + _real_models())
def test_cost_of_every_model_matches_onnxruntime(path, sizes):
    """Every value whose size the input symbols decide (a data-dependent count, a string
    tensor, is not) and, where every size is so decided, the peak."""
    # (a manifest size of 0, a signal shorter than a frame, is one the model runs at: the domain must allow it)
    result = onnxsym.infer(path, allow_zero=bool(sizes) and any(0 in s.values() for s in sizes))
    cost = result.cost()
    graph = result.model.graph
    constants = {n.output[0] for n in graph.node if n.op_type == "Constant"}
    decided = lambda d: d is not None and not any(s.name in result.fresh for s in dims.free_symbols(d))  # noqa: E731
    runs = [run for size in sizes for run in runtime_sizes(result, 1, fixed=size)] if sizes else list(runtime_sizes(result))
    checked = 0
    for bindings, seen in runs:
        at = lambda d: dims.evaluate(d, bindings)  # noqa: E731
        # bytes of every value: onnxruntime's tensors, the feeds, the initializers
        for name, (_, nbytes) in seen.items():
            if not decided(cost.value_bytes[name]):  # only a real model has such values, each for a reason
                v = result.values[name]
                assert sizes and (v.dtype == TensorProto.STRING or v.shape is None
                                  or cost.value_bytes[name] is not None)
                continue
            assert at(cost.value_bytes[name]) == nbytes, f"{name} at {bindings}"
            checked += 1
        assert at(cost.param_bytes) == sum(seen[t.name][1] for t in graph.initializer) \
            + sum(seen[c][1] for c in constants)
        # FLOPs of MatMul, Gemm and Conv from the concrete shapes
        shape = {n: s for n, (s, _) in seen.items()}
        by_node = {(n.name, n.op_type): n for n in cost.nodes}
        for node in graph.node:
            if node.op_type in ("MatMul", "Gemm", "Conv") and node.domain in ("", "ai.onnx"):
                got = by_node[(node.name, node.op_type)].flops
                if not decided(got):
                    continue
                assert at(got) == _concrete_flops(node, shape), f"{node.op_type} {node.name} at {bindings}"
        # the peak: the symbolic max, simplified, against a walk over the real tensors
        nbytes = {n: b for n, (_, b) in seen.items()}
        if sizes is None or (decided(cost.peak) and not cost.unknown_sizes):
            assert at(cost.peak) == peak_by_walk(graph, nbytes, constants), bindings
    assert checked >= (len(graph.node) if sizes is None else 1)


def test_kv_cache_of_the_llama_decoder_is_its_present_outputs():
    cost = onnxsym.infer(LLAMA).cost()
    assert cost.kv_outputs == ["present_key_0", "present_value_0", "present_key_1", "present_value_1"]
    assert "*".join(f for f, _ in cost.kv_factors) == "2*2*batch*2*(past + seq)*16*4"
    assert str(cost.kv_cache) == "512*batch*past + 512*batch*seq"
    for bindings, seen in runtime_sizes(onnxsym.infer(LLAMA)):
        assert dims.evaluate(cost.kv_cache, bindings) == sum(seen[n][1] for n in cost.kv_outputs)


def test_cost_command_prints_the_kv_cache_with_the_real_numbers():
    r = run("cost", LLAMA)
    assert r.returncode == 0, r.stderr
    assert "KV cache (4 present outputs): 2*2*batch*2*(past + seq)*16*4 = 512*batch*past + 512*batch*seq bytes" \
        in r.stdout
    assert "matmul: 512*batch*past*seq + 163840*batch*seq + 512*batch*seq**2" in r.stdout
    doc = json.loads(run("cost", LLAMA, "--format", "json").stdout)
    assert doc["kv_cache"]["bytes"] == "512*batch*past + 512*batch*seq"
    assert len(doc["nodes"]) == 454 and doc["parameter_bytes"] == 362016


def test_solve_answers_the_24_gib_question_exactly():
    r = run("cost", LLAMA, "--solve", "batch", "--budget", "24GiB", "--bind", "seq=4096", "--bind", "past=0",
            "--allow-zero", "--format", "json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)["solve"]
    memory = onnxsym.infer(LLAMA, bind={"seq": 4096, "past": 0}, allow_zero=True).cost().memory
    budget = 24 * 2**30
    assert s["budget"] == budget and s["value"] == 47
    # the largest: brute force over every batch up to the answer and past it
    fits = [b for b in range(0, 200) if dims.evaluate(memory, {"batch": b}) <= budget]
    assert fits == list(range(0, s["value"] + 1))
    assert s["bytes_at_value"] <= budget < s["bytes_at_next"]


@pytest.mark.parametrize("name, symbol, bind, budget", [
    ("llama_tiny_ts", "batch", {"seq": 5, "past": 3}, 1_000_000),
    # height under floor divisions ((height + 1)//2, (height + 3)//4): split by residue
    ("cnn_tiny_ts", "height", {"batch": 1, "width": 24}, 3_000_000),
])
def test_solve_agrees_with_runs_at_the_answer_and_one_more(name, symbol, bind, budget):
    """At small sizes the budget can be checked against onnxruntime: parameters plus the
    walked peak of the real tensors fit at the answer and not at the answer plus one; and
    no larger value up to twice the answer fits (brute force over the checked expression)."""
    result = onnxsym.infer(os.path.join(HERE, "..", "models", name + ".onnx"))
    cost = result.cost()
    s = cost.solve(symbol, budget, bind=bind)
    graph = result.model.graph
    constants = {n.output[0] for n in graph.node if n.op_type == "Constant"}
    measured = {}
    for v in (s.value, s.value + 1):
        [(bindings, seen)] = runtime_sizes(result, count=1, fixed={symbol: v, **bind})
        nbytes = {n: b for n, (_, b) in seen.items()}
        params = sum(nbytes[t.name] for t in graph.initializer) + sum(nbytes[c] for c in constants)
        measured[v] = params + peak_by_walk(graph, nbytes, constants)
    assert measured[s.value] <= budget < measured[s.value + 1]
    assert measured[s.value] == s.at_value and measured[s.value + 1] == s.at_next
    assert not [v for v in range(s.value + 1, 2 * s.value + 2)
                if dims.evaluate(cost.memory, {symbol: v, **bind}) <= budget]


def test_sub_byte_activations_are_packed_as_onnxruntime_packs_them():
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z4"], ["q4"]),
             helper.make_node("QuantizeLinear", ["x", "s", "u4"], ["qu4"]),
             helper.make_node("DequantizeLinear", ["q4", "s", "z4"], ["y"])]
    inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]), helper.make_tensor("z4", TensorProto.INT4, [], [0]),
             helper.make_tensor("u4", TensorProto.UINT4, [], [0])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                          [helper.make_empty_tensor_value_info("y")], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    result = onnxsym.infer(m)
    cost = result.cost()
    sizes = set()
    for n in (1, 2, 3, 4):
        [(bindings, seen)] = runtime_sizes(result, count=1, fixed={"n": n})
        for name in ("q4", "qu4", "y", "x"):
            assert dims.evaluate(cost.value_bytes[name], bindings) == seen[name][1], (name, n)
        sizes.add(seen["q4"][1])
    assert sizes == {2, 3, 5, 6}  # odd element counts round up: a half byte is a byte


def test_budget_sizes_and_bad_input():
    assert parse_budget("24GiB") == 24 * 2**30 and parse_budget("80 GB") == 80 * 10**9
    assert parse_budget("1.5KiB") == 1536 and parse_budget("1000") == 1000
    for args, msg in ((["--solve", "batch"], "go together"),
                      (["--solve", "batch", "--budget", "lots"], "--budget 'lots'"),
                      (["--solve", "heads", "--budget", "1GB"], "not an unbound symbol"),
                      (["--solve", "seq", "--budget", "1GB", "--bind", "seq=3"], "not an unbound symbol"),
                      (["--solve", "batch", "--budget", "24GiB", "--bind", "seq=4096"], "--bind past=INT"),
                      (["--solve", "batch", "--budget", "1", "--bind", "seq=9", "--bind", "past=9"], "nothing fits")):
        r = run("cost", LLAMA, *args)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) <= 4  # click's usage error has its two lines of help


def test_flops_of_the_families_beyond_matmul_follow_their_definitions():
    """Elementwise counts its output elements, reductions and softmax their input's,
    normalization 5 per element; ops outside every family are listed, not guessed."""
    x = ("x", TensorProto.FLOAT, ["b", 6])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("ReduceSum", ["r"], ["s"], keepdims=1),
             helper.make_node("Softmax", ["x"], ["sm"], axis=-1),
             helper.make_node("LayerNormalization", ["x", "gamma"], ["ln"], axis=-1),
             helper.make_node("Reshape", ["x", "shape"], ["re"]),
             helper.make_node("Mystery", ["x"], ["my"], domain="my.ops")]
    inits = [numpy_helper.from_array(np.ones(6, np.float32), "gamma"),
             numpy_helper.from_array(np.array([-1], np.int64), "shape")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*x)],
                          [helper.make_empty_tensor_value_info(o) for o in ("s", "sm", "ln", "re", "my")],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("my.ops", 1)])
    cost = onnxsym.infer(m).cost()
    flops = {n.op_type: n.flops for n in cost.nodes}
    assert {k: str(v) for k, v in flops.items()} == {"Relu": "6*b", "ReduceSum": "6*b", "Softmax": "30*b",
                                                     "LayerNormalization": "30*b", "Reshape": "0",
                                                     "Mystery": "None"}
    assert [n.op_type for n in cost.not_counted] == ["Mystery"]
    assert str(cost.flops) == "72*b"


def test_recurrent_flops_count_both_matrix_products_at_every_step():
    """An LSTM of hidden size 5 over 3 features: per step and batch row, 4 gates of
    (3 + 5) inputs each for 5 units, a multiply-add each: 2*4*5*(3 + 5) = 320."""
    lstm = helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=5)
    inits = [numpy_helper.from_array(np.ones((1, 20, 3), np.float32), "w"),
             numpy_helper.from_array(np.ones((1, 20, 5), np.float32), "r")]
    g = helper.make_graph([lstm], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["s", "b", 3])],
                          [helper.make_empty_tensor_value_info("y")], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    [node] = onnxsym.infer(m).cost().nodes
    assert node.family == "recurrent" and str(node.flops) == "320*b*s"


def _attention_models():
    """ONNX Attention (4-D, opset 23) and com.microsoft MultiHeadAttention (3-D): keys of
    another length than the queries, values of another head size than the keys."""
    vi = helper.make_tensor_value_info
    four = helper.make_graph([helper.make_node("Attention", ["q", "k", "v"], ["y"])], "g",
                             [vi("q", TensorProto.FLOAT, ["b", 2, "s", 8]),
                              vi("k", TensorProto.FLOAT, ["b", 2, "l", 8]),
                              vi("v", TensorProto.FLOAT, ["b", 2, "l", 4])], [helper.make_empty_tensor_value_info("y")])
    mha = helper.make_graph([helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["y"], domain="com.microsoft",
                                              num_heads=2)], "g",
                            [vi("q", TensorProto.FLOAT, ["b", "s", 16]), vi("k", TensorProto.FLOAT, ["b", "l", 16]),
                             vi("v", TensorProto.FLOAT, ["b", "l", 8])], [helper.make_empty_tensor_value_info("y")])
    out = []
    for g, opsets, heads in ((four, [("", 23)], None), (mha, [("", 17), ("com.microsoft", 1)], 2)):
        m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
        m.ir_version = 10
        out.append((m, heads))
    return out


@pytest.mark.parametrize("m, heads", _attention_models(), ids=["Attention", "MultiHeadAttention"])
def test_attention_flops_match_a_count_from_the_real_shapes(m, heads):
    """Scores ``2*B*H*S*L*Dk`` plus the weighted sum ``2*B*H*S*L*Dv``, with B, H, S, L, Dk,
    Dv read off the tensors onnxruntime takes and returns."""
    result = onnxsym.infer(m)
    flops = result.cost().nodes[0].flops
    for bindings, seen in runtime_sizes(result):
        q, k, y = seen["q"][0], seen["k"][0], seen["y"][0]
        if heads is None:  # [B, H, S, D]
            b, h, s, dk = q
            length, dv = k[2], y[3]
        else:  # [B, S, H*D]
            b, s, h, dk = q[0], q[1], heads, q[2] // heads
            length, dv = k[1], y[2] // heads
        assert dims.evaluate(flops, bindings) == 2 * b * h * s * length * (dk + dv), bindings


def test_the_peak_is_a_max_that_ranges_simplify():
    """Two moments compete: x and relu(x) together (8n bytes), or relu(x) with a 200-byte
    buffer (4n + 204). Below n = 51 the second is larger; a range from 100 decides."""
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("ConstantOfShape", ["fifty"], ["z"]),
             helper.make_node("ReduceSum", ["z"], ["r"], keepdims=0)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
                          [helper.make_empty_tensor_value_info("a"), helper.make_empty_tensor_value_info("r")],
                          initializer=[numpy_helper.from_array(np.array([50], np.int64), "fifty")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    free = onnxsym.infer(m).cost().peak
    n = onnxsym.sym("n")
    assert free is onnxsym.dmax(8 * n, 4 * n + 204)
    ranged = onnxsym.infer(m, ranges={"n": (100, 10**6)})
    assert str(ranged.cost().peak) == "8*n"
    for result, peak in ((onnxsym.infer(m), free), (ranged, ranged.cost().peak)):
        for n in (1, 50, 51, 100, 300):
            if n < result.symbol_ranges()["n"][0]:
                continue
            [(bindings, seen)] = runtime_sizes(result, count=1, fixed={"n": n})
            walked = peak_by_walk(m.graph, {k: b for k, (_, b) in seen.items()}, set())
            assert dims.evaluate(peak, bindings) == walked, n
