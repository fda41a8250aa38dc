"""`onnxsym show` and `onnxsym explain`."""

import re
import subprocess
import sys

import onnx
import pytest
from cli_models import BERT, MYSTERY, ROOT, broken_bert, random_feeds, reshape_by_input_model, run, save
from click.testing import CliRunner
from helpers import F, model
from onnx import helper

import onnxsym
from onnxsym import dims, parse_dim
from onnxsym.cli import main
from onnxsym.commands.explain import Lineage

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    d = tmp_path_factory.mktemp("show")
    mm = model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [("x", F, ["b", "k"]), ("w", F, ["j", 4])],
               [("y", F, None)])
    return {"broken": save(d, broken_bert(), "broken.onnx"), "matmul": save(d, mm, "mm.onnx"),
            "reshape": save(d, reshape_by_input_model(), "reshape.onnx")}


@pytest.fixture(scope="module")
def broken_result(paths):
    return onnxsym.infer(paths["broken"])


def cli(*args, color=False):
    return CliRunner().invoke(main, [str(a) for a in args], color=color)


def table_rows(output):
    """(value, op, type) of each row of the values table."""
    lines = output.splitlines()
    rows = []
    for line in lines[1:]:
        if not line or line[0] == " " or " values shown" in line:
            break
        rows.append(tuple(re.split(r"\s{2,}", line.strip())))
    return rows


def _type_dims(text):
    return [parse_dim(t.strip()) for t in text[text.index("[") + 1:-1].split(",")]


# ----------------------------------------------------------------- show

def test_show_lists_every_value_with_the_shape_the_runtime_computes():
    r = cli("show", BERT, "--all")
    assert r.exit_code == 0
    rows = table_rows(r.output)
    m = onnx.load(BERT)
    produced = [o for n in m.graph.node for o in n.output if o]
    assert [row[0] for row in rows] == ["input_ids", "attention_mask"] + produced
    assert rows[0][1] == "(graph input)"
    types = {row[0]: row[2] for row in rows}
    sizes = {"batch": 3, "seq": 7}
    real = run(m, random_feeds(m, sizes))
    for name, arr in real.items():
        assert types[name].startswith(str(arr.dtype) + "[")
        assert [dims.evaluate(d, sizes) for d in _type_dims(types[name])] == list(arr.shape), name


def test_show_filters(paths, broken_result):
    m = onnx.load(BERT)
    rows = table_rows(cli("show", BERT, "--op", "reshape").output)
    assert len(rows) == sum(n.op_type == "Reshape" for n in m.graph.node) > 0
    assert all(row[1] == "Reshape" for row in rows)
    rows = table_rows(cli("show", BERT, "--outputs").output)
    assert [row[0] for row in rows] == [o.name for o in m.graph.output]
    rows = table_rows(cli("show", BERT, "--name", "attn/Softmax").output)
    assert rows and all("attn/Softmax" in row[0] for row in rows)
    rows = table_rows(cli("show", BERT, "--name", "*/Reshape_?_output_0").output)
    assert rows and all(re.fullmatch(r".*/Reshape_\d_output_0", row[0]) for row in rows)
    rows = table_rows(cli("show", paths["broken"], "--unresolved").output)
    assert [row[0] for row in rows] == list(dict.fromkeys(u.value for u in broken_result.unresolved()))
    assert "(no value matches)" in cli("show", BERT, "--unresolved").output


def test_show_symbols_and_assumptions(paths, broken_result):
    out = cli("show", BERT, "--outputs", "-v").output
    assert re.search(r"^  batch +\[1, 2\*\*63-1\] +input_ids\[0\]$", out, re.M)
    assert re.search(r"^  seq +\[1, 64\] +input_ids\[1\]$", out, re.M)  # the domain: 64 positions
    out = cli("show", paths["broken"], "-v").output
    for name, p in broken_result.fresh.items():
        assert re.search(rf"^  {name} +\[0, 2\*\*63-1\] +fresh: {p.op_type} '{re.escape(p.node)}': ", out, re.M)
    out = cli("show", paths["matmul"], "-v").output
    assert "assumptions" in out.splitlines()
    assert "  k == j   MatMul 'mm': MatMul inner dims" in out.splitlines()
    out = cli("show", paths["matmul"], "--bind", "b=2", "-v").output
    assert "  b  = 2" in out and "float32[2, 4]" in out


def test_show_trailing_sections_only_with_verbose(paths):
    out = cli("show", paths["matmul"]).output.splitlines()
    assert out[-1].startswith("3 of 3 values shown; dims:") and "symbols" not in out and "assumptions" not in out


def test_show_hides_constants_unless_all():
    m = onnx.load(BERT)
    constants = [o for n in m.graph.node if n.op_type == "Constant" for o in n.output]
    out = cli("show", BERT).output
    names = [row[0] for row in table_rows(out)]
    assert constants and not set(constants) & set(names)
    assert f"{len(constants)} Constant outputs hidden (--all shows them)" in out
    assert set(constants) <= {row[0] for row in table_rows(cli("show", BERT, "--all").output)}
    assert {row[0] for row in table_rows(cli("show", BERT, "--op", "Constant").output)} == set(constants)


def test_every_section_obeys_the_filters(paths, broken_result):
    """The symbols, aliases and assumptions of the values shown, not of the whole model."""
    full = cli("show", paths["broken"], "-v").output
    fresh = sorted(broken_result.fresh)
    assert all(re.search(rf"^  {f} ", full, re.M) for f in fresh)
    out = cli("show", paths["broken"], "-v", "--outputs").output
    sym = out[out.index("\nsymbols\n") + 1:].split("\n\n")[0].splitlines()[1:]
    shown = {line.split()[0] for line in sym}
    outputs_dims = {s.name for o in onnx.load(paths["broken"]).graph.output for d in broken_result.shape(o.name) or ()
                    if not isinstance(d, int) for s in dims.free_symbols(d)}
    assert shown == outputs_dims and len(shown) < len(set(broken_result.symbols.symbols))
    out = cli("show", paths["matmul"], "-v", "--name", "x").output
    assert "assumptions" not in out.splitlines()  # the MatMul's k == j belongs to y, not shown


def test_show_quiet_prints_the_rows_alone(paths):
    out = cli("show", paths["matmul"], "-q").output.splitlines()
    assert [line.split()[0] for line in out] == ["x", "w", "y"] and not any("values shown" in x for x in out)


def test_show_fits_the_width():
    """Paddle OCR's detector: every line fits 100 columns, nothing of a row is lost."""
    det = f"{ROOT}/models/real/paddle_ocr_det.onnx"
    wide = CliRunner(env={"COLUMNS": ""}).invoke(main, ["show", det]).output
    narrow = CliRunner(env={"COLUMNS": "100"}).invoke(main, ["show", det]).output
    assert max(map(len, wide.splitlines())) > 100 >= max(map(len, narrow.splitlines()))
    assert " ".join(wide.split()) == " ".join(narrow.split())
    assert len(wide.splitlines()) < 400  # its 311 Constant rows are hidden


def test_show_subgraph_values_on_request():
    silero = f"{ROOT}/models/real/silero_vad.onnx"
    plain = cli("show", silero).output
    out = cli("show", silero, "--subgraphs").output
    assert "subgraph" not in plain and re.search(r"^subgraph \S+ \(runs where .*sr", out, re.M), out
    assert len(out.splitlines()) > len(plain.splitlines())


def test_show_narrowed_ranges_in_verbose():
    """A symbol's range as the domain narrowed it (whisper: frames <= 128, a broadcast of a clamp)."""
    out = cli("show", f"{ROOT}/models/whisper_tiny_ts.onnx", "-v").output
    assert re.search(r"^  frames +\[1, 128\] ", out, re.M), out


def test_show_colours_only_when_asked_or_on_a_terminal(paths):
    assert not ANSI.search(CliRunner(env={"NO_COLOR": "1"}).invoke(
        main, ["show", paths["broken"], "--unresolved"], color=True).output)
    assert ANSI.search(CliRunner(env={"NO_COLOR": "1"}).invoke(
        main, ["show", paths["broken"], "--unresolved", "--color"], color=True).output)
    coloured = cli("show", paths["broken"], "--unresolved", "--color", "-v").output
    assert "\x1b[31m" in coloured  # unresolved dims in red
    assert "\x1b[36mbatch" in coloured  # symbols in cyan
    plain = cli("show", paths["broken"], "--unresolved", "-v").output  # CliRunner's stdout is no terminal
    assert not ANSI.search(plain)
    assert ANSI.sub("", coloured) == plain
    piped = subprocess.run([sys.executable, "-m", "onnxsym.cli", "show", paths["broken"], "--unresolved", "-v"],
                           capture_output=True, text=True, cwd=ROOT)
    assert piped.returncode == 0 and piped.stdout == plain and piped.stderr == ""


def test_show_verbose_adds_nodes_and_warnings(paths):
    out = cli("show", paths["broken"], "--unresolved", "-v").output
    assert out.splitlines()[0].split() == ["value", "op", "node", "type"]
    assert f"Mystery    {MYSTERY}" in out
    assert "unknown operator 'my.ops::Mystery'" in out


# ----------------------------------------------------------------- explain

def test_explain_points_at_the_custom_op_in_the_middle_of_the_transformer(paths):
    r = cli("explain", paths["broken"], "/layers.0/attn/Softmax_output_0", 2)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == ("/layers.0/attn/Softmax_output_0[2] unresolved: Reshape '/layers.0/attn/Reshape': "
                        "reshape target unknown; shape input '/layers.0/attn/Concat_output_0' computed by "
                        f"Mystery '{MYSTERY}': no rule for my.ops::Mystery at opset 1")
    chain = [line for line in lines if "  <- " in line]
    assert chain[0].startswith("  /layers.0/attn/Softmax_output_0[2] = layers_0_attn_Reshape_d1   <- Softmax")
    assert "Reshape '/layers.0/attn/Reshape' (rules.shape_ops." in chain[-1]
    assert "lost at Reshape '/layers.0/attn/Reshape': reshape target unknown" in lines
    assert lines[-1] == f"cause: Mystery [my.ops] '{MYSTERY}': no rule for my.ops::Mystery at opset 1"


def test_every_unresolved_dim_of_the_broken_model_traces_to_the_custom_op(broken_result):
    lineage = Lineage(broken_result)
    for u in broken_result.unresolved():
        e = lineage.explain(u.value, u.axis)
        assert not e.resolved and e.cause is not None and e.cause.node == MYSTERY, (u, e.headline())
        assert e.lost.node == u.provenance[0].node


def test_explain_a_resolved_dim_goes_back_to_the_input_symbol():
    r = cli("explain", "-v", BERT, "last_hidden_state", -2)  # (a negative axis needs no --)
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert lines[0] == "last_hidden_state[1] = seq: resolved over input symbols seq"
    chain = [line for line in lines if "  <- " in line]
    assert chain[-1] == "  input_ids[1] = seq   <- graph input"
    assert all(" = seq " in line for line in chain)
    assert lines[-1] == "symbol seq: input_ids[1]"
    assert not any("more steps" in line for line in lines)
    short = cli("explain", BERT, "last_hidden_state", 1).output.splitlines()
    assert short == [lines[0], lines[1], "  ... 11 steps that keep it (--verbose shows them)",
                     "  input_ids[1] = seq   <- graph input", "symbol seq: input_ids[1]"]
    assert cli("explain", BERT, "last_hidden_state", "--", -2).output.splitlines() == short


def test_explain_shows_the_steps_where_the_expression_changes(tmp_path):
    """Six Relus, a Concat that doubles the dim, six Relus: shortened to both sides of the
    change, the first and the last step, each run left out one line."""
    nodes = [helper.make_node("Relu", [f"a{k}" if k else "x"], [f"a{k + 1}"], name=f"r{k}") for k in range(6)]
    nodes.append(helper.make_node("Concat", ["a6", "a6"], ["b0"], axis=0, name="cat"))
    nodes += [helper.make_node("Relu", [f"b{k}"], [f"b{k + 1}"], name=f"s{k}") for k in range(6)]
    path = save(tmp_path, model(nodes, [("x", F, ["n"])], [("b6", F, None)]), "chain.onnx")
    full = [x for x in cli("explain", "-v", path, "b6", 0).output.splitlines() if "  <- " in x]
    short = cli("explain", path, "b6", 0).output.splitlines()
    assert len(full) == 14
    assert short[1:-1] == [full[0], "  ... 5 steps that keep it (--verbose shows them)", full[6], full[7],
                           "  ... 5 steps that keep it (--verbose shows them)", full[13]]
    assert full[6].startswith("  b0[0] = 2*n   <- Concat 'cat'") and full[7].startswith("  a6[0] = n   <- Relu 'r5'")


def test_explain_suggests_near_names():
    r = cli("explain", BERT, "Softmax")
    assert r.exit_code == 2 and r.stderr.startswith("onnxsym: error: no value 'Softmax' in the model; did you mean '")
    assert "Softmax_output_0" in r.stderr


def test_explain_follows_a_product_through_shape_arithmetic():
    r = cli("explain", "-v", f"{ROOT}/models/edge_shape_arith.onnx", "flat_rows", 0)
    lines = r.output.splitlines()
    assert lines[0] == "flat_rows[0] = batch*seq: resolved over input symbols batch, seq"
    chain = [line.split("   <- ")[0].strip() for line in lines if "  <- " in line]
    assert chain == ["flat_rows[0] = batch*seq", "shape_bs_8 element 0 = batch*seq", "bs_1d element 0 = batch*seq",
                     "bs element 0 = batch*seq", "b element 0 = batch", "x_shape element 0 = batch", "X[0] = batch"]
    assert lines[-2:] == ["symbol batch: X[0]", "symbol seq: X[1]"]


def test_explain_a_data_dependent_reshape(paths):
    out = cli("explain", paths["reshape"], "y", 0).output
    assert out.splitlines()[0] == ("y[0] unresolved: Reshape 'rs': reshape target unknown; shape input 's' computed by "
                                   "graph input 's': its elements are known only at run time")
    assert "(data-dependent)" in out.splitlines()[-1]


def test_explain_without_axis_and_quiet(paths):
    r = cli("explain", BERT, "pooled", "-q")
    assert r.output.splitlines() == ["pooled[0] = batch: resolved over input symbols batch", "pooled[1] = 64: static"]
    r = cli("explain", paths["broken"], "/layers.0/attn/q/Add_output_0", "-q")
    assert r.output.splitlines() == [f"/layers.0/attn/q/Add_output_0 (rank) unresolved: Mystery '{MYSTERY}': "
                                     "no rule for my.ops::Mystery at opset 1"]


def test_explain_errors_are_one_line_exit_2(paths):
    r = cli("explain", BERT, "last_hidden_stat")
    assert r.exit_code == 2
    assert r.stderr == "onnxsym: error: no value 'last_hidden_stat' in the model; did you mean 'last_hidden_state'?\n"
    r = cli("explain", BERT, "pooled", 2)
    assert r.exit_code == 2 and r.stderr == "onnxsym: error: value 'pooled' has rank 2: no axis 2\n"
    p = subprocess.run([sys.executable, "-m", "onnxsym.cli", "explain", "nothere.onnx", "x"], capture_output=True,
                       text=True, cwd=ROOT)
    assert p.returncode == 2 and p.stderr == "onnxsym: error: nothere.onnx: no such file\n"


def test_explain_in_a_real_process(paths):
    p = subprocess.run([sys.executable, "-m", "onnxsym.cli", "explain", paths["broken"],
                        "/layers.0/attn/Softmax_output_0", "2"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0 and p.stdout.splitlines()[-1].startswith(f"cause: Mystery [my.ops] '{MYSTERY}'")


def test_explain_through_a_float_quotient_of_sizes(tmp_path):
    """A scale computed as 10 / Cast(h): the element is a quotient of dims, which explain's
    walk upstream once took for a dim (an internal error)."""
    import numpy as np
    from helpers import init

    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["sf"], to=F),
             helper.make_node("Div", ["ten", "sf"], ["sc"]),
             helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest", name="rz")]
    m = model(nodes, [("x", F, ["h"])], ["y"], [init("ten", np.array([10.0], np.float32))], opset=13)
    r = cli("explain", save(tmp_path, m, "q.onnx"), "y", 0)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].startswith("y[0] unresolved: Resize 'rz': Resize: the scale of axis 0")


def _show_on_a_terminal(tmp_path, *args):
    """``onnxsym show`` of a 40-value model with a terminal (a pty of 20 lines) at both ends and
    $PAGER a program that keeps what it is given; returns (what the pager got or None, what the
    terminal got)."""
    import os
    import pty
    import threading

    nodes = [helper.make_node("Relu", [f"v{k}"], [f"v{k + 1}"]) for k in range(40)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("v0", F, ["n", 3])],
                          [helper.make_tensor_value_info("v40", F, None)])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    kept = tmp_path / "paged.txt"
    if kept.exists():
        kept.unlink()
    pager = f"{sys.executable} -c \"import sys; open({str(kept)!r}, 'w').write(sys.stdin.read())\""
    master, slave = pty.openpty()
    seen = []
    reader = threading.Thread(target=lambda: _drain(master, seen), daemon=True)
    reader.start()
    try:
        r = subprocess.run([sys.executable, "-m", "onnxsym.cli", "show", path, *args], stdin=slave, stdout=slave,
                           stderr=subprocess.PIPE, cwd=ROOT, timeout=120,
                           env=dict(os.environ, PYTHONPATH=ROOT, PAGER=pager, LINES="20", COLUMNS="100"))
    finally:
        os.close(slave)
    reader.join(10)
    os.close(master)
    assert r.returncode == 0, r.stderr.decode()
    return (kept.read_text() if kept.exists() else None), b"".join(seen).decode(errors="replace")


def _drain(fd, out):
    import os

    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        out.append(data)


def test_show_pages_a_table_longer_than_the_terminal(tmp_path):
    paged, screen = _show_on_a_terminal(tmp_path)
    assert paged is not None and "v40" in paged and "v1 " in paged and "41 values shown" in paged
    assert "v40" not in screen  # (the pager had it all)
    paged, screen = _show_on_a_terminal(tmp_path, "--no-pager")
    assert paged is None and "v40" in screen
    paged, screen = _show_on_a_terminal(tmp_path, "--name", "v4")  # v4 and v40: two rows fit the screen
    assert paged is None and "v40" in screen
