"""`onnxsym check`: exit codes, options, and the text, json and github formats."""

import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from cli_models import BERT, MYSTERY, ROOT, broken_bert, nonzero_model, reshape_by_input_model, run, save
from click.testing import CliRunner
from helpers import F, model
from onnx import helper
from report_schema import check_json, schema, validate

import onnxsym
from onnxsym.cli import main
from onnxsym.commands import check as report
from onnxsym.commands.progress import Progress, working


def test_the_validator_rejects_what_the_schema_forbids():
    good = {"tool": "onnxsym", "version": "x", "exit_code": 0,
            "options": {"allow_data_dependent": False, "allow": [], "outputs_only": False, "max_unresolved": 0,
                        "allow_stale": False, "require": {}, "allow_pinned": []},
            "models": []}
    assert validate(good, schema()) == []
    assert validate({**good, "exit_code": 3}, schema())
    assert validate({**good, "extra": 1}, schema())
    assert validate({k: v for k, v in good.items() if k != "models"}, schema())
    bad_model = {"path": "m", "status": "ok", "error": None, "stats": {}, "unresolved_count": -1,
                 "allowed_count": 0, "entries": [{"value": "v"}], "outside": None}
    errs = validate({**good, "models": [bad_model]}, schema())
    assert any("unresolved_count" in e for e in errs) and any("missing axis" in e for e in errs)
    assert validate({**good, "options": {**good["options"], "require": {"seq": ["1"]}}}, schema())
    assert validate({**good, "models": [{**bad_model, "unresolved_count": 0, "entries": [],
                                         "outside": {"condition": "seq <= 64"}}]}, schema())


# ----------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    d = tmp_path_factory.mktemp("check")
    relu = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [("x", F, ["batch", 3])], [("y", F, None)])
    bad = d / "junk.onnx"
    bad.write_bytes(b"not a model")
    clash = model([helper.make_node("Add", ["a", "b"], ["c"], name="add")], [("a", F, [3]), ("b", F, [4])],
                  [("c", F, None)])
    declared_wrong = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [("x", F, ["batch", 3])],
                           [("y", F, ["batch", 4])])
    return {"declared": save(d, declared_wrong, "declared.onnx"), "good": save(d, relu, "good.onnx"),
            "broken": save(d, broken_bert(), "broken.onnx"),
            "nonzero": save(d, nonzero_model(), "nonzero.onnx"), "bad": str(bad),
            "clash": save(d, clash, "clash.onnx"), "reshape": save(d, reshape_by_input_model(), "reshape.onnx")}


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def as_json(*args):
    r = cli("check", "--format", "json", *args)
    doc = json.loads(r.stdout)
    check_json(doc)
    assert doc["exit_code"] == r.exit_code
    return doc, r.exit_code


# ----------------------------------------------------------------- exit codes and options

def test_exit_0_when_every_dim_resolves(paths):
    r = cli("check", paths["good"], BERT)
    assert r.exit_code == 0, r.output
    assert r.output.count(": ok: 0 unresolved") == 2


def test_exit_1_lists_each_unresolved_dim_with_place_and_provenance(paths):
    r = cli("check", paths["broken"], "-v")
    assert r.exit_code == 1
    res = onnxsym.infer(paths["broken"])
    expected = res.unresolved()
    lines = r.output.splitlines()
    listed = [line for line in lines if line.startswith("    unresolved ")]
    assert len(listed) == len(expected) > 0
    for u, line in zip(expected, listed):
        place = f"{u.value}[{u.axis}]" if u.axis is not None else f"{u.value} (rank unknown)"
        assert line.startswith(f"    unresolved {place}")
        assert f"'{u.provenance[0].node}': {u.provenance[0].reason}" in line
    # one custom op, one root cause: its dims under one heading
    assert [x for x in lines if x.startswith("  cause ")] == \
        [f"  cause Mystery [my.ops] '{MYSTERY}': no rule for my.ops::Mystery at opset 1: {len(expected)} unresolved dims"]


def test_unresolved_dims_grouped_by_root_cause_a_few_each_without_verbose(paths, tmp_path):
    """Two custom ops: two causes, each with its count; three dims shown of each."""
    m = broken_bert()
    i = next(k for k, n in enumerate(m.graph.node) if n.name == "/layers.1/attn/q/Add")
    n = m.graph.node[i]
    other = helper.make_node("Mystery2", list(n.input), list(n.output), name="/layers.1/attn/q/M2", domain="my.ops")
    m.graph.node.remove(n)
    m.graph.node.insert(i, other)
    path = save(tmp_path, m, "two.onnx")
    res = onnxsym.infer(path)
    r = cli("check", path)
    lines = r.output.splitlines()
    heads = [x for x in lines if x.startswith("  cause ")]
    assert [h.split("'")[1] for h in heads] == [MYSTERY, "/layers.1/attn/q/M2"]
    counts = [int(re.search(r": (\d+) unresolved dims?$", h).group(1)) for h in heads]
    assert sum(counts) == len(res.unresolved())
    assert len([x for x in lines if x.startswith("    unresolved ")]) == 6
    assert sum(x.startswith("    ... and ") for x in lines) == 2
    gh = cli("check", "--format", "github", path).stdout.splitlines()
    assert len(gh) == 2 and all(_unescape(GH_LINE.match(x).group("title")) == "onnxsym: unresolved dims" for x in gh)
    assert [int(_unescape(GH_LINE.match(x).group("msg")).split()[0]) for x in gh] == counts


def test_check_a_folder_recursively_in_parallel_with_totals(paths, tmp_path):
    (tmp_path / "sub").mkdir()
    good = save(tmp_path, onnx.load(paths["good"]), "good.onnx")
    broken = save(tmp_path / "sub", onnx.load(paths["broken"]), "broken.onnx")
    (tmp_path / "notes.txt").write_text("not a model")
    serial = cli("check", str(tmp_path))
    assert serial.exit_code == 1
    heads = [x.split(":")[0] for x in serial.output.splitlines() if not x.startswith(" ")]
    assert heads == [good, broken, "2 models"]
    assert serial.output.splitlines()[-1] == f"2 models: 1 ok, 1 unresolved; {len(onnxsym.infer(broken).unresolved())} " \
        "unresolved dims in all"
    p = _run("check", tmp_path, "-j", "2")
    assert p.returncode == 1 and p.stdout == serial.output, p.stderr
    p = _run("check", tmp_path, "-j", "2", "--format", "json")
    assert [m["status"] for m in json.loads(p.stdout)["models"]] == ["ok", "unresolved"]
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("check", str(empty))
    assert r.exit_code == 2 and r.stderr == f"onnxsym: error: {empty}: a folder with no *.onnx file under it\n"


def test_check_j_loads_the_rules_in_its_workers(paths, tmp_path):
    (tmp_path / "m").mkdir()
    for k in range(2):
        save(tmp_path / "m", onnx.load(paths["broken"]), f"b{k}.onnx")
    (tmp_path / "team_rules.py").write_text(
        "from onnxsym import Tensor, register_rule\n"
        "@register_rule('Mystery', domain='my.ops')\n"
        "def mystery(node):\n"
        "    x = max(node.inputs, key=lambda t: len(t.shape))\n"
        "    return [Tensor(x.dtype, x.shape)]\n")
    p = _run("check", tmp_path / "m", "-j", "2", "--rules", tmp_path / "team_rules.py")
    assert p.returncode == 0 and p.stdout.count(": ok: 0 unresolved") == 2, p.stdout + p.stderr


def test_exit_2_on_a_bad_file_and_on_a_contradiction(paths):
    for key, words in (("bad", "not an ONNX model"), ("clash", "cannot broadcast")):
        r = cli("check", paths[key])
        assert r.exit_code == 2 and words in r.output, r.output


def test_several_models_exit_with_the_worst(paths):
    assert cli("check", paths["good"], paths["broken"]).exit_code == 1
    r = cli("check", paths["bad"], paths["broken"], paths["good"])
    assert r.exit_code == 2
    assert [line.split(":")[0] for line in r.output.splitlines() if not line.startswith(" ")] == \
        [paths["bad"], paths["broken"], paths["good"], "3 models"]


def test_data_dependent_counts_fail_unless_allowed(paths):
    # The premise, from the runtime: same input shape, different output shapes.
    m = nonzero_model()
    a = run(m, {"x": np.array([1, 0, 2, 0], np.float32)})["t"].shape
    b = run(m, {"x": np.array([1, 1, 2, 0], np.float32)})["t"].shape
    assert a != b
    assert cli("check", paths["nonzero"]).exit_code == 1
    doc, code = as_json(paths["nonzero"], "--allow-data-dependent")
    assert code == 0
    entries = doc["models"][0]["entries"]
    assert entries and all(e["data_dependent"] and e["allowed_by"] == "--allow-data-dependent" for e in entries)
    assert {e["value"] for e in entries} <= {"nz", "t"}  # Relu(x) is resolved


def test_a_shape_read_from_a_graph_input_is_data_dependent(paths):
    m = reshape_by_input_model()
    x = np.zeros((2, 6), np.float32)
    shapes = {run(m, {"x": x, "s": np.array(s, np.int64)})["y"].shape for s in ([3, 4], [12, 1])}
    assert len(shapes) == 2
    doc, code = as_json(paths["reshape"])
    assert code == 1
    cause = doc["models"][0]["entries"][0]["cause"]
    assert cause["node"] == "s" and cause["op_type"] == "graph input"
    assert as_json(paths["reshape"], "--allow-data-dependent")[1] == 0


def test_a_custom_op_without_a_rule_is_not_data_dependent(paths):
    assert cli("check", paths["broken"], "--allow-data-dependent").exit_code == 1


def test_allow_by_symbol_or_node_pattern(paths):
    doc, _ = as_json(paths["broken"])
    total = doc["models"][0]["unresolved_count"]
    doc, code = as_json(paths["broken"], "--allow", "layers_0_attn_Reshape_d*")
    m = doc["models"][0]
    assert code == 1 and 0 < m["allowed_count"] < total and m["unresolved_count"] == total - m["allowed_count"]
    for e in m["entries"]:
        only_reshape = all(o["symbol"].startswith("layers_0_attn_Reshape_d") for o in e["origins"])
        assert (e["allowed_by"] == "--allow layers_0_attn_Reshape_d*") == only_reshape
    # Every origin is a node under /layers.0/attn/, the custom op included.
    assert cli("check", paths["broken"], "--allow", "/layers.0/attn/*").exit_code == 0


def test_outputs_only(paths):
    # The custom op's damage is repaired before the outputs: they resolve.
    assert cli("check", paths["broken"]).exit_code == 1
    r = cli("check", paths["broken"], "--outputs-only")
    assert r.exit_code == 0, r.output
    doc, _ = as_json(paths["nonzero"], "--outputs-only")
    assert {e["value"] for e in doc["models"][0]["entries"]} == {"t"}
    assert all(e["is_output"] for e in doc["models"][0]["entries"])


def test_max_unresolved(paths):
    doc, _ = as_json(paths["broken"])
    n = doc["models"][0]["unresolved_count"]
    assert cli("check", paths["broken"], "--max-unresolved", n).exit_code == 0
    assert cli("check", paths["broken"], "--max-unresolved", n - 1).exit_code == 1
    assert cli("check", paths["broken"], "--max-unresolved", -1).exit_code == 2  # a usage error


# ----------------------------------------------------------------- formats

def test_json_entries_are_the_results_unresolved_dims(paths):
    doc, code = as_json(paths["broken"], paths["good"], paths["bad"])
    assert code == 2
    broken, good, bad = doc["models"]
    res = onnxsym.infer(paths["broken"])
    assert [(e["value"], e["axis"]) for e in broken["entries"]] == [(u.value, u.axis) for u in res.unresolved()]
    assert broken["stats"] == res.stats() and broken["status"] == "unresolved"
    assert all(e["cause"]["node"] == MYSTERY and e["cause"]["domain"] == "my.ops" for e in broken["entries"])
    assert good["status"] == "ok" and good["entries"] == [] and good["error"] is None
    assert bad["status"] == "error" and "not an ONNX model" in bad["error"]


GH_LINE = re.compile(r"^::(error|warning|notice) file=(?P<file>[^,:]*),title=(?P<title>[^,:]*)::(?P<msg>.+)$")


def _unescape(s):
    return s.replace("%3A", ":").replace("%2C", ",").replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def test_github_format_line_by_line(paths):
    r = cli("check", "--format", "github", paths["broken"], paths["good"], paths["bad"])
    assert r.exit_code == 2
    doc, _ = as_json(paths["broken"])
    entries = doc["models"][0]["entries"]
    lines = r.stdout.splitlines()
    assert len(lines) == 2  # one root cause; no notice for the passing model unless -v
    parsed = [GH_LINE.match(line) for line in lines]
    assert all(parsed), [line for line, p in zip(lines, parsed) if not p]
    p = parsed[0]
    assert p.group(1) == "error" and _unescape(p.group("file")) == paths["broken"]
    assert _unescape(p.group("title")) == "onnxsym: unresolved dims"
    msg = _unescape(p.group("msg")).splitlines()
    assert msg[0] == f"{len(entries)} unresolved dims caused by Mystery [my.ops] '{MYSTERY}': no rule for " \
        "my.ops::Mystery at opset 1:"
    for line, e in zip(msg[1:11], entries):
        place = f"{e['value']}[{e['axis']}]" if e["axis"] is not None else f"{e['value']} (rank unknown)"
        assert line.startswith(place)
    assert msg[-2] == f"... and {len(entries) - 10} more"
    assert msg[-1] == "next: no rule knows this op: write one and load it with --rules MODULE (docs/rules.md)"
    error = parsed[-1]
    assert error.group(1) == "error" and _unescape(error.group("title")) == "onnxsym: error"
    assert "not an ONNX model" in error.group("msg")
    verbose = [GH_LINE.match(x) for x in cli("check", "--format", "github", "-v", paths["good"]).stdout.splitlines()]
    assert [(v.group(1), _unescape(v.group("file"))) for v in verbose] == [("notice", paths["good"])]


def test_a_stale_declaration_is_its_own_finding_in_every_format(paths):
    """The model declares y as [batch, 4]; Relu of x [batch, 3] computes [batch, 3]."""
    doc, code = as_json(paths["declared"])
    (m,) = doc["models"]
    assert code == 1 and m["status"] == "stale" and m["entries"] == [] and doc["options"]["allow_stale"] is False
    assert m["stale_declarations"] == [{"value": "y", "declared": ["batch", "4"], "computed": ["batch", "3"], "why": "",
                                        "allowed_by": None}]
    doc, code = as_json("--allow-stale", paths["declared"])
    assert code == 0 and doc["models"][0]["status"] == "ok"
    assert doc["models"][0]["stale_declarations"][0]["allowed_by"] == "--allow-stale"
    for args, kinds in (((), ["error"]), (("--allow-stale",), ["warning"]), (("--allow-stale", "-v"), ["warning", "notice"])):
        r = cli("check", "--format", "github", *args, paths["declared"])
        parsed = [GH_LINE.match(line) for line in r.stdout.splitlines()]
        assert r.exit_code == (1 if not args else 0) and [p.group(1) for p in parsed] == kinds, r.output
        assert _unescape(parsed[0].group("title")) == "onnxsym: stale declaration"
        assert _unescape(parsed[0].group("msg")) == \
            "value 'y': the model declares [batch, 4], the graph computes [batch, 3]"


def test_github_escaping():
    line = report.gh_command("error", "a,b:c%.onnx", "t: x", "line1\nline2 100%")
    assert line == "::error file=a%2Cb%3Ac%25.onnx,title=t%3A x::line1%0Aline2 100%25"
    assert len(line.splitlines()) == 1


def test_quiet_and_verbose(paths):
    r = cli("check", "-q", paths["good"], paths["broken"])
    assert r.exit_code == 1
    assert r.output.splitlines() == [line for line in r.output.splitlines() if line.startswith(paths["broken"])]
    r = cli("check", "-v", "--allow", "layers_0_attn_Reshape_d*", paths["broken"])
    assert any(line.startswith("  allowed (--allow layers_0_attn_Reshape_d*)") for line in r.output.splitlines())
    r = cli("check", "--allow", "layers_0_attn_Reshape_d*", paths["broken"])
    assert not any(line.startswith("  allowed") for line in r.output.splitlines())


# ----------------------------------------------------------------- real processes

def _run(*args):
    return subprocess.run([sys.executable, "-m", "onnxsym.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)


def test_subprocess_exit_codes_and_formats(paths):
    r = _run("check", "--format", "json", paths["broken"])
    assert r.returncode == 1 and r.stderr == ""
    check_json(json.loads(r.stdout))
    r = _run("check", "--format", "github", paths["good"], paths["broken"], paths["bad"])
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr
    assert all(GH_LINE.match(line) for line in r.stdout.splitlines())


def test_version_and_help_with_an_example_for_every_command():
    r = _run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"onnxsym, version {onnxsym.__version__}"
    for name in [None] + sorted(main.commands):
        r = cli(*([name] if name else []), "--help")
        assert r.exit_code == 0 and "Example" in r.output, name


def test_an_internal_error_is_one_line_unless_debug(paths, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("something\nbroke")
    monkeypatch.setattr(report, "check_model", boom)
    r = CliRunner().invoke(main, ["check", paths["good"]])
    assert r.exit_code == 2
    assert r.stderr == "onnxsym: internal error: RuntimeError: something broke (rerun with --debug)\n"
    r = CliRunner().invoke(main, ["--debug", "check", paths["good"]])
    assert isinstance(r.exception, RuntimeError)


def test_an_onnxsym_error_shows_its_traceback_with_debug_and_keeps_exit_2(paths):
    r = cli("--debug", "annotate", paths["bad"])
    assert r.exit_code == 2 and "Traceback" in r.stderr and "ModelLoadError" in r.stderr
    plain = cli("annotate", paths["bad"])
    assert plain.exit_code == 2 and len(plain.stderr.splitlines()) == 1 and r.stderr.endswith(plain.stderr)
    r = cli("--debug", "check", paths["bad"])
    assert r.exit_code == 2 and "ModelLoadError" in r.stderr


# ----------------------------------------------------------------- progress bar

class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal_and_only_when_slow():
    now = [0.0]
    tty = _Tty()
    bar = Progress("inferring m", stream=tty, delay=0.5, clock=lambda: now[0])
    bar(1, 10)
    assert tty.getvalue() == ""  # fast so far: nothing
    now[0] = 1.0
    bar(5, 10)
    bar(10, 10)
    bar.close()
    assert "inferring m" in tty.getvalue() and "100%" in tty.getvalue()
    piped = io.StringIO()
    bar = Progress("inferring m", stream=piped, delay=0.0, clock=lambda: 5.0)
    bar(10, 10)
    bar.close()
    assert piped.getvalue() == ""
    quiet = _Tty()
    bar = Progress("inferring m", enabled=False, stream=quiet, delay=0.0)
    bar(10, 10)
    assert quiet.getvalue() == ""


def test_progress_bar_of_many_nodes_redraws_a_few_hundred_times_and_ends_full(monkeypatch):
    import click

    updates = []
    bar = Progress("inferring m", stream=_Tty(), delay=0.0, clock=lambda: 5.0)
    bar(1, 50_000)
    monkeypatch.setattr(bar.bar, "update", lambda n: (updates.append(n), click._termui_impl.ProgressBar.update(bar.bar, n)))
    for done in range(2, 50_001):
        bar(done, 50_000)
    assert bar.bar is not None and bar.bar.pos == 50_000  # every node counted, the last shown
    assert len(updates) <= 201  # (a redraw costs as much as a node)
    bar.close()


def test_a_long_step_says_what_it_does_on_a_terminal_and_erases_it():
    import threading
    tty = _Tty()
    shown = threading.Event()
    with working("computing the peak memory", stream=tty, delay=0.0):
        for _ in range(500):  # until the timer thread has written
            if "computing the peak memory..." in tty.getvalue():
                shown.set()
                break
            threading.Event().wait(0.01)
    assert shown.is_set() and tty.getvalue().endswith("\r\033[K")
    fast = _Tty()
    with working("computing the peak memory", stream=fast, delay=60.0):
        pass
    assert fast.getvalue() == ""  # done before the delay: nothing shown
    piped = io.StringIO()
    with working("computing the peak memory", stream=piped, delay=0.0):
        threading.Event().wait(0.05)
    assert piped.getvalue() == ""


def test_infer_reports_progress_per_node():
    calls = []
    res = onnxsym.infer(BERT, progress=lambda done, total: calls.append((done, total)))
    n = len(res.model.graph.node)
    assert calls == [(k, n) for k in range(1, n + 1)]


# ----------------------------------------------------------------- the CI recipes of docs/ci.md

def test_pre_commit_hook_and_readme_recipes(paths):
    yaml = pytest.importorskip("yaml")
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml")) as f:
        (hook,) = yaml.safe_load(f)
    assert hook["id"] == "onnxsym-check" and hook["entry"] == "onnxsym check" and hook["language"] == "python"
    assert re.search(hook["files"], "exports/model.onnx") and not re.search(hook["files"], "model.onnx.json")
    # pre-commit appends the staged files to the entry: the command must take several.
    assert cli(*hook["entry"].split()[1:], paths["good"], BERT).exit_code == 0
    with open(os.path.join(ROOT, "docs", "ci.md")) as f:
        section = f.read()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    step, remote, local = blocks
    assert "onnxsym check --format github" in step[0]["run"]
    assert remote[0]["hooks"][0]["id"] == hook["id"]
    assert local[0]["hooks"][0]["entry"] == hook["entry"]
    assert re.search(local[0]["hooks"][0]["files"], "m.onnx")


def _gathers(tmp_path):
    """Two Gathers of rows of a table by fed token ids, and one of another table: three
    conditions on the input data (each index in range)."""
    t = onnx.numpy_helper.from_array(np.zeros((16, 4), np.float32), "table")
    nodes = [helper.make_node("Gather", ["table", "ids"], ["a"], name="g1"),
             helper.make_node("Gather", ["table", "ids2"], ["b"], name="g2"),
             helper.make_node("GatherElements", ["table", "pos"], ["c"], name="g3")]
    m = model(nodes, [("ids", onnx.TensorProto.INT64, ["n"]), ("ids2", onnx.TensorProto.INT64, ["n"]),
                      ("pos", onnx.TensorProto.INT64, [16, 4])], [("a", F, None), ("b", F, None), ("c", F, None)])
    m.graph.initializer.append(t)
    return save(tmp_path, m, "gathers.onnx")


def test_data_conditions_are_one_line_and_listed_under_verbose(tmp_path):
    """A model with fed indices: one line (how many, which ops), the conditions under -v; exit 0."""
    path = _gathers(tmp_path)
    r = cli("check", path)
    assert r.exit_code == 0, r.output
    said = [line for line in r.output.splitlines() if "data-dependent" in line]
    assert said == ["  data-dependent: 3 conditions on the input data (Gather x2, GatherElements), not checked by "
                    "size (-v lists them)"], r.output
    v = cli("check", "-v", path)
    assert v.exit_code == 0
    listed = [line for line in v.output.splitlines() if line.startswith("    ") and "the input data decide it" in line]
    assert len(listed) == 3 and any("'g2'" in line for line in listed), v.output
    assert cli("check", BERT).output.count("data-dependent") == 1


def test_check_says_the_conditions_the_domain_could_not_state(tmp_path):
    """Shape-pin attack 0:119 (x[seq] tiled by seq*K, resized by 0.5 in float32, reshaped to
    [1, 1, 1]): onnxruntime refuses it at every size tried, at the Reshape, and the domain says that
    need over a dim onnxsym could not resolve as not stated. check still passes (every written dim
    is proven) but says so, and -v and the JSON name the nodes."""
    import random

    from shape_pin_attack import random_model

    m = random_model(random.Random("0:119"))
    refused = []
    for seq in (1, 4, 5, 8, 13, 40):
        try:
            run(m, {m.graph.input[0].name: np.zeros(_feed_shape(m, seq), np.float32)})
        except Exception as exc:  # noqa: BLE001 - onnxruntime's refusal
            refused.append(str(exc))
    assert len(refused) == 6 and all("reshape10" in e for e in refused), refused
    p = save(tmp_path, m, "never.onnx")
    r = CliRunner().invoke(main, ["check", p])
    assert r.exit_code == 0, r.output
    assert re.search(r"not stated: 2 conditions onnxsym could not state \((Reshape, Resize|Resize, Reshape)\)", r.output)
    r = CliRunner().invoke(main, ["check", "-v", p])
    assert "Reshape 'reshape10'" in r.output and "(-v lists them)" not in r.output
    r = CliRunner().invoke(main, ["check", "--format", "json", p])
    doc = json.loads(r.output)
    check_json(doc)
    assert {c["node"] for c in doc["models"][0]["not_stated"]} == {"reshape10", "resize8"}


def test_check_finds_a_slice_end_of_either_sign_contradicts_the_reshape(tmp_path):
    """Shape-pin attack 0:31 (x[seq] tiled by seq - 4, a constant sliced to an end of a sign the
    algebra cannot tell, reshaped to [1, 1, 1]): the Slice's length is exact for either sign, so the
    Reshape's need is stated, and it holds at no size: check exits 2 naming it. onnxruntime refuses
    at the Reshape at every size from 4 (below, at the Tile)."""
    import random

    from shape_pin_attack import random_model

    m = random_model(random.Random("0:31"))
    for seq in (4, 5, 6, 8, 13, 40, 77):
        with pytest.raises(Exception, match="reshape15"):
            run(m, {m.graph.input[0].name: np.zeros(_feed_shape(m, seq), np.float32)})
    r = CliRunner().invoke(main, ["check", save(tmp_path, m, "never.onnx")])
    assert r.exit_code == 2 and "Reshape 'reshape15'" in r.output and "no size" in r.output, r.output


def _feed_shape(m, seq):
    """The graph input's shape at ``seq`` (its dim_param dims take it)."""
    return [seq if d.dim_param else d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
