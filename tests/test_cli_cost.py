"""`onnxsym cost` as people read it: units, the node table, --top; and --sweep on cost and
domain (table, CSV, JSON, PNG), its numbers checked against onnxruntime's tensors."""

import csv
import io
import json
import os
import re

import onnx
import onnxruntime as ort
import pytest
from cli_models import BERT, ROOT, random_feeds
from click.testing import CliRunner
from cost_oracle import peak_by_walk, runtime_sizes

import onnxsym
from onnxsym.cli import main
from onnxsym.output.numbers import flops_text, size_text

LLAMA = os.path.join(ROOT, "models", "llama_tiny_ts.onnx")
CNN = os.path.join(ROOT, "models", "cnn_tiny_dynamo.onnx")
SIZES = ["--bind", "batch=1", "--bind", "past=0", "--allow-zero"]


def cli(*args, env=None):
    return CliRunner(env=env).invoke(main, [str(a) for a in args])


def test_units_where_the_figures_are_numbers():
    r = cli("cost", LLAMA, "--bind", "seq=8", *SIZES)
    assert r.exit_code == 0, r.output
    doc = json.loads(cli("cost", LLAMA, "--bind", "seq=8", *SIZES, "--format", "json").output)
    assert f"  parameters: {size_text(doc['parameter_bytes'])}\n" in r.output and "354 KiB" in r.output
    assert f"  FLOPs: {flops_text(doc['flops'])}\n" in r.output
    assert re.search(r"^  FLOPs: \d\.\d\d MFLOPs$", r.output, re.M)
    assert "bytes" not in r.output.split("KV cache")[0]  # every figure above the KV cache in units


def test_one_node_is_one_node(tmp_path):
    """The counts agree with their noun: a one-node model's cost reads "1 node", not "1 nodes"."""
    m = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("Mystery", ["x"], ["y"], domain="my.ops")], "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n"])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)]),
        opset_imports=[onnx.helper.make_opsetid("", 17), onnx.helper.make_opsetid("my.ops", 1)])
    onnx.save(m, tmp_path / "m.onnx")
    r = cli("cost", tmp_path / "m.onnx")
    assert r.exit_code == 0 and r.output.startswith(f"{tmp_path / 'm.onnx'}: 1 node\n"), r.output
    assert "    not counted: 1 node (Mystery)\n" in r.output, r.output


def test_node_table_sorted_with_shares_and_top():
    doc = json.loads(cli("cost", LLAMA, "--bind", "seq=8", *SIZES, "--format", "json").output)
    r = cli("cost", LLAMA, "--bind", "seq=8", *SIZES, "--top", "5")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    head = lines.index(next(x for x in lines if x.split()[:3] == ["node", "op", "FLOPs"]))
    assert lines[head].split() == ["node", "op", "FLOPs", "share", "params", "output"]
    rows = [re.split(r"\s{2,}", x.strip()) for x in lines[head + 1:head + 6]]
    by_name = {n["name"]: n for n in doc["nodes"]}
    top = sorted((n for n in doc["nodes"] if n["flops"] is not None), key=lambda n: -n["flops"])[:5]
    assert [by_name[row[0]]["flops"] for row in rows] == [n["flops"] for n in top]
    for row in rows:
        n = by_name[row[0]]
        assert row[1:] == [n["op_type"], flops_text(n["flops"]), f"{100 * n['flops'] / doc['flops']:.1f}%",
                           size_text(n["parameter_bytes"]), size_text(n["output_bytes"])]
    assert lines[head + 6].split()[0] == "total" and "100.0%" in lines[head + 6]
    assert lines[-1] == f"({len(doc['nodes']) - 5} more nodes: --nodes lists them all)"
    every = cli("cost", LLAMA, "--bind", "seq=8", *SIZES, "--nodes").output
    assert len(every.splitlines()) > len(doc["nodes"])


def test_node_table_over_symbols_keeps_node_order():
    r = cli("cost", CNN, "--nodes")
    assert r.exit_code == 0, r.output
    m = onnx.load(CNN)
    lines = r.output.splitlines()
    head = next(i for i, x in enumerate(lines) if x.split()[:3] == ["node", "op", "FLOPs"])
    names = [x.split()[0] for x in lines[head + 1:-1]]
    assert names == [n.name for n in m.graph.node]
    assert lines[-1] == "(FLOPs over symbols: in node order; --bind every symbol for sorting and shares)"


def test_budget_takes_a_size_with_a_space():
    r = cli("cost", LLAMA, "--solve", "batch", "--budget", "24 GiB", "--bind", "seq=4096", "--bind", "past=0",
            "--allow-zero")
    assert r.exit_code == 0, r.output
    assert "largest batch = 47: 25497536560 bytes (23.7 GiB); batch = 48 needs 26038601776 bytes (24.3 GiB)" in r.output


@pytest.mark.parametrize("budget", [["24", "GiB"], ["--budget=24", "GiB"], ["24GiB"]])
def test_budget_unit_may_be_a_word_of_its_own(budget):
    """``--budget 24 GiB`` unquoted: the shell gives click two words; the answer is the quoted one's."""
    words = budget if budget[0].startswith("--") else ["--budget", *budget]
    r = cli("cost", LLAMA, "--solve", "batch", *words, "--bind", "seq=4096", "--bind", "past=0", "--allow-zero")
    assert r.exit_code == 0, r.output
    assert "largest batch = 47:" in r.output and "under 25769803776 bytes" in r.output


def test_a_word_after_the_budget_that_is_no_unit_stays_an_argument():
    r = cli("cost", LLAMA, "--solve", "batch", "--budget", "24", "extra", "--bind", "seq=4096")
    assert r.exit_code == 2 and "unexpected extra argument (extra)" in r.output


# ----------------------------------------------------------------- --sweep

def _sweep_json(*args):
    r = cli(*args, "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_swept_cost_is_what_onnxruntime_allocates():
    """At each swept size: the activation bytes, the KV cache, the peak of the real tensors
    walked along the node order and the memory (parameters + peak) from onnxruntime; the FLOPs
    as the cost of the model inferred with that size bound."""
    doc = _sweep_json("cost", LLAMA, "--sweep", "seq=1:9:4", *SIZES)
    assert [row["seq"] for row in doc["rows"]] == [1, 5, 9] and doc["fixed"] == {"batch": 1, "past": 0}
    result = onnxsym.infer(LLAMA, bind={"batch": 1, "past": 0}, allow_zero=True)
    graph = result.model.graph
    constants = {n.output[0] for n in graph.node if n.op_type == "Constant"}
    produced = [o for n in graph.node if n.op_type != "Constant" for o in n.output if o]
    present = [o.name for o in graph.output if o.name.startswith("present")]
    for row in doc["rows"]:
        seq = row["seq"]
        [(_, seen)] = runtime_sizes(result, count=1, fixed={"seq": seq})
        nbytes = {n: b for n, (_, b) in seen.items()}
        params = sum(nbytes[t.name] for t in graph.initializer) + sum(nbytes[c] for c in constants)
        peak = peak_by_walk(graph, nbytes, constants)
        assert row["valid"] and row["activation_bytes"] == sum(nbytes[o] for o in produced), seq
        assert row["kv_cache_bytes"] == sum(nbytes[o] for o in present) and present
        assert row["peak_bytes"] == peak and row["memory_bytes"] == params + peak
        bound = onnxsym.infer(LLAMA, bind={"batch": 1, "past": 0, "seq": seq}, allow_zero=True).cost()
        assert row["flops"] == bound.flops


def test_sweep_rows_outside_the_domain_fail_in_onnxruntime():
    """BERT's 64 positions: the sweep marks 65 and up outside the domain, with the Gather that
    needs it; onnxruntime runs every size marked valid and fails at every other."""
    m = onnx.load(BERT)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for command in ("cost", "domain"):
        doc = _sweep_json(command, BERT, "--sweep", "seq=62:66:1", "--bind", "batch=2")
        assert [(r["seq"], r["valid"]) for r in doc["rows"]] == [(62, True), (63, True), (64, True), (65, False),
                                                                 (66, False)]
        assert doc["rows"][-1]["fails_at"] == "seq <= 64 (Gather '/pos/Gather')"
    for row in doc["rows"]:
        feeds = random_feeds(m, {"batch": 2, "seq": row["seq"]})
        if row["valid"]:
            sess.run(None, feeds)
        else:
            with pytest.raises(Exception):
                sess.run(None, feeds)


def test_sweep_table_and_csv():
    r = cli("cost", BERT, "--sweep", "seq=1:100", "--bind", "batch=2")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == f"{BERT}: seq from 1 to 100 at batch=2; 7 of 8 sizes in the domain"
    assert lines[1].split() == ["seq", "activations", "FLOPs", "peak", "memory", "domain"]
    assert [int(x.split()[0]) for x in lines[2:]] == [1, 2, 4, 8, 16, 32, 64, 100]
    assert lines[-1].endswith("fails: seq <= 64 (Gather '/pos/Gather')") and lines[-2].endswith("  ok")
    out = cli("cost", BERT, "--sweep", "seq=8:16:4", "--bind", "batch=2", "--format", "csv").output
    rows = list(csv.DictReader(io.StringIO(out)))
    doc = _sweep_json("cost", BERT, "--sweep", "seq=8:16:4", "--bind", "batch=2")
    assert [int(r["seq"]) for r in rows] == [8, 12, 16]
    assert [int(r["flops"]) for r in rows] == [r["flops"] for r in doc["rows"]]


def test_sweep_needs_every_other_symbol_bound_and_a_real_symbol():
    r = cli("cost", LLAMA, "--sweep", "seq=1:8")
    assert r.exit_code == 2 and "--sweep seq: the model has other symbols too; give --bind batch=INT --bind past=INT" \
        in r.stderr
    r = cli("domain", BERT, "--sweep", "heads=1:8", "--bind", "batch=1")
    assert r.exit_code == 2 and "--sweep heads: not an input symbol" in r.stderr
    for bad in ("seq", "seq=4:2", "seq=1:8:0", "=1:2"):
        r = cli("cost", BERT, "--sweep", bad)
        assert r.exit_code == 2 and "--sweep" in r.stderr and "Traceback" not in r.stderr, bad
    r = cli("cost", BERT, "--format", "csv")
    assert r.exit_code == 2 and "--format csv is for --sweep" in r.stderr
    r = cli("cost", BERT, "--plot", "x.png")
    assert r.exit_code == 2 and "--plot draws a --sweep" in r.stderr


@pytest.mark.plot
def test_sweep_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "cost.png"
    r = cli("cost", LLAMA, "--sweep", "seq=1:64:8", *SIZES, "--plot", png)
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and r.output.splitlines()[-1] == f"{png}: written"
    r = cli("cost", LLAMA, "--sweep", "seq=1:64:8", *SIZES, "--plot", png)
    assert r.exit_code == 2 and f"{png} exists; use --force to replace it" in r.stderr
    assert cli("domain", BERT, "--sweep", "seq=1:80:8", "--bind", "batch=1", "--plot", png, "--force").exit_code == 0


def test_sweep_plot_without_matplotlib(tmp_path, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    r = cli("cost", BERT, "--sweep", "seq=1:8", "--bind", "batch=1", "--plot", tmp_path / "p.png")
    assert r.exit_code == 2
    assert "--plot draws with matplotlib, which is not installed: pip install matplotlib (the plot extra)" in r.stderr
    assert not (tmp_path / "p.png").exists()


def _positions_model():
    """x[seq, 4] plus the first seq rows of a constant [64, 4] table: runs for seq <= 64 only."""
    import numpy as np
    from helpers import F, model
    from onnx import helper, numpy_helper

    n = helper.make_node
    nodes = [n("Shape", ["x"], ["s"], start=0, end=1), n("Slice", ["pos", "st", "s"], ["p"]), n("Add", ["x", "p"], ["y"])]
    return model(nodes, [("x", F, ["seq", 4])], [("y", F, None)],
                 inits=[numpy_helper.from_array(np.ones((64, 4), np.float32), "pos"),
                        numpy_helper.from_array(np.array([0], np.int64), "st")])


def _reshape_model():
    """x[n] reshaped to [-1, 4]: runs where n % 4 == 0."""
    import numpy as np
    from helpers import F, model
    from onnx import helper, numpy_helper

    return model([helper.make_node("Reshape", ["x", "sh"], ["y"])], [("x", F, ["n"])], [("y", F, None)],
                 inits=[numpy_helper.from_array(np.array([-1, 4], np.int64), "sh")])


def _runs(m, shape):
    import numpy as np

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    try:
        sess.run(None, {"x": np.ones(shape, np.float32)})
        return True
    except Exception:
        return False


def test_cost_solves_and_binds_within_the_domain(tmp_path):
    """--solve answers a size onnxruntime runs the model at (seq <= 64: the top of the domain,
    not 32,703; n % 4 == 0: 120, not 123), and a --bind outside the domain is an error naming
    the condition, as verify's."""
    seq, div = _positions_model(), _reshape_model()
    paths = {}
    for name, m in (("seq", seq), ("div", div)):
        paths[name] = str(tmp_path / f"{name}.onnx")
        onnx.save(m, paths[name])
    assert _runs(seq, (64, 4)) and not _runs(seq, (65, 4)) and not _runs(seq, (100, 4))
    r = cli("cost", paths["seq"], "--solve", "seq", "--budget", "1MiB", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["solve"]["value"] == 64
    r = cli("cost", paths["seq"], "--bind", "seq=100")
    assert r.exit_code != 0 and "--bind seq=100: outside the domain, which needs seq <= 64: Add" in r.output, r.output
    assert "Traceback" not in r.output
    assert cli("cost", paths["seq"], "--bind", "seq=64").exit_code == 0
    r = cli("cost", paths["div"], "--solve", "n", "--budget", "1001", "--format", "json")
    got = json.loads(r.output)["solve"]
    assert r.exit_code == 0 and got["value"] == 120 and "n % 4 == 0" in got["skipped"], r.output
    assert got["bytes_at_value"] <= 1001
    assert _runs(div, (120,)) and not any(_runs(div, (v,)) for v in (121, 122, 123))
    # 123 fits the budget: the answer without the domain (its memory, 4*n + 16*(n//4) + 16)
    assert 4 * 123 + 16 * (123 // 4) + 16 <= 1001 < 4 * 124 + 16 * 31 + 16
    r = cli("cost", paths["div"], "--bind", "n=6")
    assert r.exit_code != 0 and "outside the domain, which needs n % 4 == 0" in r.output, r.output
    assert not _runs(div, (6,)) and _runs(div, (8,)) and cli("cost", paths["div"], "--bind", "n=8").exit_code == 0
