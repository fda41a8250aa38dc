"""The valid input domain on purpose-built graphs, one per kind of condition, each
checked against onnxruntime at its boundary; the simplifier; narrowing; the CLI
(`onnxsym domain`, `check --require`, annotate's summary and metadata)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from domain_boundary import check_all
from helpers import F, init, model
from onnx import TensorProto, helper
from report_schema import check_json

import onnxsym
from onnxsym import dims
from onnxsym.cli import main
from onnxsym.domain.forms import simplify

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = helper.make_node


def _table(name, rows, cols=2):
    return init(name, np.arange(rows * cols, dtype=np.float32).reshape(rows, cols))


def _seq_of(x="X", axis=0, out="s"):
    """Nodes making the scalar ``out`` = dim ``axis`` of ``x``."""
    return [N("Shape", [x], [f"{out}_shape"], name=f"{out}_shape"),
            N("Gather", [f"{out}_shape", f"{out}_axis"], [out], name=f"{out}_dim")], [init(f"{out}_axis", np.int64(axis))]


def _positions(limit="s", start="zero"):
    return [N("Range", [start, limit, "one"], ["pos"], name="range")], [init("zero", np.int64(0)), init("one", np.int64(1))]


def _graph(nodes, inits, inputs, outputs):
    return model(nodes, inputs, [(o, F, None) for o in outputs], inits=inits)


def gather_rows():
    n1, i1 = _seq_of()
    n2, i2 = _positions()
    return _graph(n1 + n2 + [N("Gather", ["T", "pos"], ["rows"], name="gather_rows"),
                             N("Add", ["X", "rows"], ["Y"], name="add")],
                  i1 + i2 + [_table("T", 10)], [("X", F, ["seq", 2])], ["Y"])


def gather_elements():
    n1, i1 = _seq_of()
    n2, i2 = _positions()
    return _graph(n1 + n2 + [N("Unsqueeze", ["pos", "ax1"], ["idx"], name="unsq"),
                             N("GatherElements", ["T", "idx"], ["Y"], axis=0, name="gather_el")],
                  i1 + i2 + [_table("T", 5, 1), init("ax1", np.array([1], np.int64))], [("X", F, ["seq", 2])], ["Y"])


def gather_nd(op="GatherND"):
    n1, i1 = _seq_of()
    n2, i2 = _positions()
    ins = ["T", "idx"] + (["X"] if op == "ScatterND" else [])
    return _graph(n1 + n2 + [N("Unsqueeze", ["pos", "ax1"], ["idx"], name="unsq"), N(op, ins, ["Y"], name="nd")],
                  i1 + i2 + [_table("T", 8), init("ax1", np.array([1], np.int64))], [("X", F, ["seq", 2])], ["Y"])


def slice_clamp():
    """A 6-row table sliced to the first seq rows: clamps at 6, then added to X."""
    n1, i1 = _seq_of()
    return _graph(n1 + [N("Unsqueeze", ["s", "ax0"], ["end"], name="unsq"),
                        N("Slice", ["T", "start", "end", "ax0"], ["rows"], name="slice"),
                        N("Add", ["X", "rows"], ["Y"], name="add")],
                  i1 + [_table("T", 6), init("start", np.array([0], np.int64)), init("ax0", np.array([0], np.int64))],
                  [("X", F, ["seq", 2])], ["Y"])


def min_clamp():
    """Positions up to min(seq, 6): a clamp a later Add needs inactive."""
    n1, i1 = _seq_of()
    n2, i2 = _positions("m")
    return _graph(n1 + [N("Min", ["s", "six"], ["m"], name="min")] + n2 +
                  [N("Cast", ["pos"], ["posf"], to=TensorProto.FLOAT, name="cast"),
                   N("Unsqueeze", ["posf", "ax1"], ["col"], name="unsq"),
                   N("Add", ["X", "col"], ["Y"], name="add")],
                  i1 + i2 + [init("six", np.int64(6)), init("ax1", np.array([1], np.int64))],
                  [("X", F, ["seq", 2])], ["Y"])


def split_even():
    return _graph([N("Split", ["X"], ["A", "B"], axis=0, name="split")], [], [("X", F, ["seq", 2])], ["A", "B"])


def split_sizes():
    return _graph([N("Split", ["X", "sizes"], ["A", "B"], axis=0, name="split")],
                  [init("sizes", np.array([2, 3], np.int64))], [("X", F, ["seq", 2])], ["A", "B"])


def expand_clamped():
    n1, i1 = _seq_of()
    return _graph(n1 + [N("Unsqueeze", ["s", "ax0"], ["end"], name="unsq"),
                        N("Slice", ["T", "start", "end", "ax0"], ["rows"], name="slice"),
                        N("Shape", ["X"], ["xs"], name="xshape"),
                        N("Expand", ["rows", "xs"], ["Y"], name="expand")],
                  i1 + [_table("T", 4), init("start", np.array([0], np.int64)), init("ax0", np.array([0], np.int64))],
                  [("X", F, ["seq", 2])], ["Y"])


def tile_repeats():
    """Tile X by seq - 3 along axis 0: a repeat must not be negative."""
    n1, i1 = _seq_of()
    return _graph(n1 + [N("Sub", ["s", "three"], ["r"], name="sub"), N("Unsqueeze", ["r", "ax0"], ["r1"], name="unsq"),
                        N("Concat", ["r1", "one1"], ["reps"], axis=0, name="cat"), N("Tile", ["X", "reps"], ["Y"], name="tile")],
                  i1 + [init("three", np.int64(3)), init("ax0", np.array([0], np.int64)),
                        init("one1", np.array([1], np.int64))], [("X", F, ["seq", 2])], ["Y"])


def concat_equal():
    return _graph([N("Concat", ["A", "B"], ["Y"], axis=1, name="concat")], [],
                  [("A", F, ["a", 2]), ("B", F, ["b", 3])], ["Y"])


def positions_from_past():
    """Positions past .. past + seq - 1 into a 10-row table: past + seq <= 10."""
    n1, i1 = _seq_of("X", 0, "s")
    n2, i2 = _seq_of("P", 0, "p")
    return _graph(n1 + n2 + [N("Add", ["p", "s"], ["end"], name="end"),
                             N("Range", ["p", "end", "one"], ["pos"], name="range"),
                             N("Gather", ["T", "pos"], ["rows"], name="gather_rows"),
                             N("Add", ["X", "rows"], ["Y"], name="add")],
                  i1 + i2 + [_table("T", 10), init("one", np.int64(1))],
                  [("X", F, ["seq", 2]), ("P", F, ["past"])], ["Y"])


KINDS = [
    ("gather_rows", gather_rows, {"seq": 3}, ["seq <= 10"], ["gather_rows"]),
    ("gather_elements", gather_elements, {"seq": 3}, ["seq <= 5"], ["gather_el"]),
    ("gather_nd", gather_nd, {"seq": 3}, ["seq <= 8"], ["nd"]),
    ("scatter_nd", lambda: gather_nd("ScatterND"), {"seq": 3}, ["seq <= 8"], ["nd"]),
    ("slice_clamp", slice_clamp, {"seq": 3}, ["seq <= 6"], ["add"]),
    ("min_clamp", min_clamp, {"seq": 3}, ["seq <= 6"], ["add"]),
    ("split_even", split_even, {"seq": 4}, ["seq % 2 == 0"], ["split"]),
    ("split_sizes", split_sizes, {"seq": 5}, ["seq == 5"], ["split"]),
    ("expand", expand_clamped, {"seq": 2}, ["seq <= 4"], ["expand"]),
    ("tile", tile_repeats, {"seq": 4}, ["seq >= 3"], ["tile"]),
    ("concat_equal", concat_equal, {"a": 3}, ["b == a"], ["concat"]),
    ("past_plus_seq", positions_from_past, {"seq": 3, "past": 2}, ["past + seq <= 10"], ["gather_rows"]),
]


@pytest.mark.parametrize("name, make, base, texts, nodes", KINDS, ids=[k[0] for k in KINDS])
def test_each_kind_matches_onnxruntime_at_its_boundary(name, make, base, texts, nodes):
    _, domain, outcomes = check_all(make(), base, expect=texts)
    assert [o[2] for o in outcomes] == [f"fails at {n}" for n in nodes]
    assert [c.sources[0].node for c in domain.conditions] == nodes


def test_conditions_name_their_nodes_and_why():
    d = onnxsym.infer(gather_rows()).domain()
    (c,) = d.conditions
    assert (c.kind, c.text, c.assumed) == ("range", "seq <= 10", "")
    assert str(c.sources[0]) == "Gather 'gather_rows': index seq - 1 < 10 rows"
    assert d.ranges == {"seq": (1, 10)}


# ----------------------------------------------------------------- the simplifier

S, H, P = dims.sym("seq"), dims.sym("height"), dims.sym("past")


@pytest.mark.parametrize("rel, lhs, rhs, alts, text", [
    ("==", dims.dmin(64, S), S, (), ["seq <= 64"]),
    ("<=", S - 1, 511, (), ["seq <= 512"]),
    ("==", 2 * ((H + 1) // 2), H, (), ["height % 2 == 0"]),
    ("==", 16 * ((H + 15) // 16), H, (), ["height % 16 == 0"]),
    ("==", (H + 1) // 2, dims.dmin(64, (H + 1) // 2), (), ["height <= 128"]),
    ("<=", P + S - 1, 63, (), ["past + seq <= 64"]),
    ("or", 0, 0, ((dims.dmin(16, S), S), (dims.dmin(16, S), 1), (S, 1)), ["seq <= 16"]),
    ("==", S // 2, 3, (), ["6 <= seq <= 7"]),
    ("==", 4 * ((H + 3) // 4) - H, 0, (), ["height % 4 == 0"]),
    # always true: the window pad makes (H + pad) a multiple of the window
    ("==", (H + (7 - H % 7) % 7) % 7, 0, (), []),
    ("<=", S, S + 1, (), []),
    # a quotient by a symbolic divisor that divides exactly (a ViT's MatMul inner dims)
    ("==", (32 * S + 32 * S * (H // 2)) // (S + S * (H // 2)), 32, (), []),
])
def test_simplify(rel, lhs, rhs, alts, text):
    forms = simplify(rel, lhs, rhs, alts)
    assert [f.text() for f in forms] == text
    # every form agrees with the condition it came from, at every size tried
    for v in range(1, 200):
        for p in (1, 7):
            b = {"seq": v, "height": v, "past": p}
            raw = (any(dims.evaluate(a, b) == dims.evaluate(c, b) for a, c in alts) if rel == "or" else
                   dims.evaluate(lhs, b) <= dims.evaluate(rhs, b) if rel == "<=" else
                   dims.evaluate(lhs, b) == dims.evaluate(rhs, b))
            assert raw == all(f.holds(b) for f in forms), (v, p)


def test_what_does_not_simplify_is_assumed_with_why():
    # h*h == 4*h: a polynomial, not a residue class nor a monotone bound
    forms = simplify("==", H * H, 4 * H)
    assert [f.kind for f in forms] == ["other"] and not forms[0].linear


# ----------------------------------------------------------------- narrowing

def test_domain_narrows_the_ranges_in_the_table_the_metadata_and_mlir():
    path = os.path.join(ROOT, "models", "domain", "gpt2_mask_ts.onnx")
    wide = onnxsym.infer(path)
    assert wide.symbol_ranges()["seq"] == (1, dims.INT64_MAX)
    domain = wide.domain()  # a query: the result stays as it was
    assert wide.symbol_ranges()["seq"] == (1, dims.INT64_MAX) and wide.narrowed_to is None
    result = wide.within_domain()  # a new result, in an environment of its own
    assert result.narrowed_to is domain and result.env is not wide.env and result.env.parent is wide.env
    assert result.symbol_ranges()["seq"] == (1, 16) and wide.symbol_ranges()["seq"] == (1, dims.INT64_MAX)
    # the mask's min(16, seq) is seq inside the domain; the wide result keeps it
    mins = lambda r: [d for v in r.values.values() if getattr(v, "shape", None) for d in v.shape  # noqa: E731
                      if "min" in str(d)]
    assert not mins(result) and mins(wide)
    assert "domain" not in {p.key for p in onnxsym.write_result(wide).metadata_props}
    meta = {p.key: p.value for p in onnxsym.write_result(result).metadata_props}
    assert json.loads(meta["onnxsym.symbols"])["seq"]["range"] == [1, 16]
    assert json.loads(meta["onnxsym.domain"])["conditions"][0]["condition"] == "seq <= 16"
    text = onnxsym.to_mlir(result, names=True)
    assert "symbol.symbolic_int @seq {max_val = 16 : i64, min_val = 1 : i64}" in text


def test_the_dims_of_a_narrowed_result_are_not_computed_with_under_the_wider_ranges():
    """As JAX refuses to mix the dims of two symbolic scopes: what a result narrowed to its domain
    derived under seq <= 16 (min(16, seq) is seq) is refused under the wider environment."""
    wide = onnxsym.infer(os.path.join(ROOT, "models", "domain", "gpt2_mask_ts.onnx"))
    narrow = wide.within_domain()
    with narrow.env:
        with pytest.raises(dims.MixedEnvironments, match=r"seq in \[1, 16\] here"):
            wide.unresolved()  # (a query of the wide result enters its environment)
        with narrow.env.child({"seq": (2, 16)}):  # narrower still: deciding there is fine
            assert dims.Sym("seq").range == (2, 16)
    with wide.env:
        assert narrow.unresolved() == []  # the narrowed one's query under its own, within the wide one


# ----------------------------------------------------------------- command line

def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_domain_text_and_json():
    path = os.path.join(ROOT, "models", "domain", "kv_decoder_ts.onnx")
    r = cli("domain", path)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        f"{path}: 2 conditions on batch, seq, past_k",
        "  pinned: past_v == past_k (MatMul '/MatMul_1'): declared free, the model runs only there",
        "  past_v == past_k: MatMul '/MatMul_1': MatMul inner dims: past_k + seq == past_v + seq",
        "  past_k + seq <= 64: Gather '/pos/Gather': index past_k + seq - 1 < 64 rows",
        "  ranges: batch [1, 2**63-1], seq [1, 2**63-1], past_k [1, 2**63-1]",  # (show's number format)
        # (the token ids are fed: onnxruntime refuses one past the embedding's rows when it runs)
        "  not stated: -128 <= indices < 128 rows, data-dependent: it holds or not by the input data, which the "
        "domain cannot promise: Gather '/tok/Gather': onnxruntime refuses an index out of range when it runs "
        "(the indices are fed data)"]
    doc = json.loads(cli("domain", path, "--format", "json").output)
    assert [c["condition"] for c in doc["conditions"]] == ["past_v == past_k", "past_k + seq <= 64"]
    assert doc["conditions"][1]["sources"] == [{"node": "/pos/Gather", "op_type": "Gather",
                                                "reason": "index past_k + seq - 1 < 64 rows"}]


@pytest.mark.slow
def test_domain_is_the_same_text_in_another_process():
    """Every model's domain, printed by two processes with different hash seeds."""
    code = ("import glob, onnxsym\n"
            "for p in sorted(glob.glob('models/*.onnx') + glob.glob('models/domain/*.onnx')):\n"
            "    print(p, onnxsym.infer(p).domain().lines())\n")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, cwd=ROOT).stdout for seed in ("1", "2")]
    assert outs[0] == outs[1] and "height % 4 == 0" in outs[0] and outs[0].count("\n") >= 21


BERT = os.path.join(ROOT, "models", "bert_tiny_ts.onnx")


def test_check_require_names_the_first_cutting_condition_and_node():
    r = cli("check", BERT, "--require", "seq=1:4096", "--require", "batch=1:64")
    assert r.exit_code == 1
    assert r.output.splitlines()[1] == ("  outside: the domain does not contain seq=1:4096 batch=1:64: seq <= 64 from "
                                        "Gather '/pos/Gather': index seq - 1 < 64 rows: fails at seq = 4096")
    assert cli("check", BERT, "--require", "seq=1:64", "--require", "batch=1:64").exit_code == 0
    r = cli("check", BERT, "--require", "sequence=1:64")
    assert r.exit_code == 2 and "no input symbol 'sequence'" in r.output


def test_check_require_json_and_github():
    r = cli("check", BERT, "--require", "seq=1:4096", "--format", "json")
    doc = json.loads(r.stdout)
    check_json(doc)
    assert r.exit_code == doc["exit_code"] == 1
    (m,) = doc["models"]
    assert m["status"] == "outside"
    assert {k: m["outside"][k] for k in ("condition", "node", "op_type", "at", "proven")} == {
        "condition": "seq <= 64", "node": "/pos/Gather", "op_type": "Gather", "at": {"seq": 4096}, "proven": True}
    assert doc["options"]["require"] == {"seq": [1, 4096]}
    ok = json.loads(cli("check", BERT, "--require", "seq=1:64", "--format", "json").stdout)
    check_json(ok)
    assert ok["models"][0]["outside"] is None
    lines = cli("check", BERT, "--require", "seq=1:4096", "--format", "github").output.splitlines()
    assert lines[0].startswith(f"::error file={BERT},title=onnxsym%3A required sizes outside the domain::")
    assert "seq <= 64 from Gather '/pos/Gather'" in lines[0]


def test_check_require_divisibility_and_sums():
    unet = os.path.join(ROOT, "models", "domain", "unet_tiny_ts.onnx")
    assert cli("check", unet, "--require", "height=64:64").exit_code == 0
    r = cli("check", unet, "--require", "height=62:64")
    assert r.exit_code == 1 and "height % 4 == 0 from Concat '/Concat'" in r.output and "height = 62" in r.output
    kv = os.path.join(ROOT, "models", "domain", "kv_decoder_ts.onnx")
    # (its MatMul ties the value cache to the key cache, which the model declares apart: allowed here)
    assert cli("check", kv, "--require", "seq=1:32", "--require", "past_k=1:32", "--allow-pinned", "past_v").exit_code == 0
    r = cli("check", kv, "--require", "seq=1:32", "--require", "past_v=1:33")
    assert r.exit_code == 1 and "past_k + seq <= 64" in r.output and "past_k = 33, seq = 32" in r.output


def test_annotate_prints_the_domain(tmp_path):
    out = tmp_path / "w.onnx"
    r = cli("annotate", os.path.join(ROOT, "models", "whisper_tiny_ts.onnx"), "-o", out)
    assert r.exit_code == 0, r.output
    assert "  domain frames <= 128: Add '/Add_2': broadcast on axis 1" in r.output
    assert "  domain past + seq <= 64: Gather '/dec_pos/Gather'" in r.output
    import onnx
    meta = {p.key: json.loads(p.value) for p in onnx.load(str(out)).metadata_props if p.key != "onnxsym.version"}
    assert meta["onnxsym.symbols"]["frames"]["range"] == [1, 128]
    assert [c["condition"] for c in meta["onnxsym.domain"]["conditions"]] == ["frames <= 128", "past + seq <= 64"]


def test_the_domain_pages_require_recipe():
    import re
    import shlex

    with open(os.path.join(ROOT, "docs", "domain.md")) as f:
        section = f.read()
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    args = shlex.split(re.search(r"run: (.*)", block).group(1))
    assert args[:2] == ["onnxsym", "check"] and args[-1].endswith(".onnx")
    r = cli(*args[1:-1], BERT)  # the BERT's 64 positions do not reach seq 4096
    assert r.exit_code == 1 and "::error file=" in r.output and "seq <= 64" in r.output, r.output


def test_a_positive_assumption_is_stated_as_assumed():
    """A decision inference took because a symbol's default range starts at 1 (the
    record /work/notes/edges-assumptions.md describes) is listed, with why."""
    from onnxsym.domain import compute
    from onnxsym.facts.fact import Constraint, Origin, Place, Rel

    result = onnxsym.infer(concat_equal())
    a = next(s for s in dims.free_symbols(result.shape("Y")[0]))
    result.constraints.append(Constraint(Rel.GE, dims.expr_of(a), 1, Origin.DEFAULT_RANGE, Place("if_node", "If"),
                                         "taken branch: a > 0"))
    (eq, pos) = compute(result).conditions
    assert (eq.text, pos.text, pos.assumed) == ("b == a", "a >= 1", "taken branch: a > 0")
    assert str(pos.sources[0]) == "If 'if_node': taken branch: a > 0"


def test_a_need_a_tighter_one_implies_is_not_listed_even_below_the_narrowed_range():
    """TopK(3) and TopK(5) of one x [n]: inference narrows n to >= 5, and ``n >= 3`` (which that
    range and the TopK(5) imply) is not listed beside ``n >= 5``; onnxruntime runs 5, not 4."""
    from oracle import session_of

    k = lambda name, v: init(name, np.array([v], np.int64))  # noqa: E731
    m = model([helper.make_node("TopK", ["x", "k3"], ["v3", "i3"], name="top3"),
               helper.make_node("TopK", ["x", "k5"], ["v5", "i5"], name="top5")],
              [("x", F, ["n"])], ["v3", "v5"], [k("k3", 3), k("k5", 5)])
    domain = onnxsym.infer(m).domain()
    assert [c.text for c in domain.conditions] == ["n >= 5"] and domain.ranges["n"] == (5, dims.INT64_MAX)
    sess = session_of(m, optimize=False)
    assert [o.shape for o in sess.run(None, {"x": np.ones(5, np.float32)})] == [(3,), (5,)]
    with pytest.raises(Exception):
        sess.run(None, {"x": np.ones(4, np.float32)})
