"""What a new user trips on in the first hour (issue 36): the command line's small surprises,
each run as the user runs it, ``python -m onnxsym`` in a process of its own."""

import json
import subprocess
import sys

from cli_models import BERT, ROOT, pinned_model


def run(*args):
    return subprocess.run([sys.executable, "-m", "onnxsym", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_a_bare_allow_zero_before_the_model_leaves_the_model_path_alone():
    before = run("cost", "--allow-zero", BERT)
    assert before.returncode == 0, before.stderr
    after = run("cost", BERT, "--allow-zero")
    assert after.returncode == 0 and before.stdout == after.stdout
    named = run("cost", BERT, "--allow-zero", "seq")  # a name still is the option's NAME
    assert named.returncode == 0, named.stderr


def test_require_takes_one_size():
    r = run("check", BERT, "--require", "seq=128")  # bert_tiny_ts has 64 positions: seq <= 64
    assert r.returncode == 1 and "does not contain seq=128:" in r.stdout, r.stdout
    assert run("check", BERT, "--require", "seq=64").returncode == 0
    bad = run("check", BERT, "--require", "seq=x")
    assert bad.returncode == 2 and "expected NAME=LO:HI or NAME=N" in bad.stderr


def test_require_and_show_op_say_did_you_mean():
    r = run("check", BERT, "--require", "sq=1:4")
    assert r.returncode == 2 and "did you mean 'seq'?" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = run("show", BERT, "--op", "Reshap")
    assert r.returncode == 2 and "did you mean 'Reshape'?" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert run("show", BERT, "--op", "reshape").returncode == 0  # (any case, as the filter reads it)


def test_debug_shows_the_traceback_and_keeps_the_exit_code():
    plain = run("show", "models/no_such_model.onnx")
    debug = run("--debug", "show", "models/no_such_model.onnx")
    assert plain.returncode == debug.returncode == 2
    assert "Traceback" in debug.stderr and "Traceback" not in plain.stderr
    assert plain.stderr.strip() in debug.stderr


def test_show_keeps_a_graph_inputs_declared_dims_and_says_what_is_pinned(tmp_path):
    import numpy as np
    import onnxruntime as ort
    import pytest

    path = tmp_path / "pin.onnx"
    m = pinned_model(path)
    opts = ort.SessionOptions()  # (the graph optimizer rewrites the Reshape to [1, -1], which runs at batch 2)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    assert sess.run(None, {"ids": np.zeros((1, 5), np.int64)})[0].shape == (1, 5)
    with pytest.raises(Exception):  # the truth: batch 2 does not run
        sess.run(None, {"ids": np.zeros((2, 5), np.int64)})
    r = run("show", path)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line.split(")")[-1].split("  ")[-1].strip() for line in r.stdout.splitlines()
            if line.startswith(("ids ", "y "))}
    assert rows == {"ids": "int64[batch, seq]", "y": "int64[1, seq]"}, r.stdout
    assert "pinned: batch = 1 because Reshape 'rs'" in r.stdout


def test_show_summary_is_one_screen_with_size_and_external_data(tmp_path):
    import os
    from collections import Counter

    import numpy as np
    import onnx

    m = onnx.load(BERT)
    path = tmp_path / "bert.onnx"
    onnx.save(m, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
              size_threshold=1024)
    r = run("show", path, "--summary")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) <= 24, r.stdout  # one screen
    assert lines[0] == "inputs (2)" and lines[1].split() == ["input_ids", "int64[batch,", "seq]"]
    assert any(line.split() == ["last_hidden_state", "float32[batch,", "seq,", "64]"] for line in lines)
    counts = Counter(n.op_type for n in m.graph.node)  # the truth: onnx's own reading of the file
    assert f"nodes: {len(m.graph.node)} of {len(counts)} op types" in lines
    top, k = counts.most_common(1)[0]
    assert f"  {top} {k}, " in r.stdout
    tensors = list(m.graph.initializer) + [a.t for n in m.graph.node if n.op_type == "Constant" for a in n.attribute]
    params = sum(int(np.prod(t.dims)) for t in tensors)
    assert f"({params:,}) parameters" in r.stdout, r.stdout
    external = os.path.getsize(tmp_path / "weights.bin")
    size_line = next(line for line in lines if line.startswith("size:"))
    assert f"{external // 1024} KiB of it in external data (weights.bin)" in size_line, size_line
    assert "opsets: ai.onnx 17" in r.stdout and "producer: pytorch" in r.stdout


def test_annotate_groups_unresolved_dims_by_cause_with_the_next_step(tmp_path):
    import numpy as np
    import onnx
    import onnxruntime as ort
    from cli_models import input_if_model, nms_if_model

    # The truth: the detector's count follows the data; the If's size follows use_cache_branch.
    det = tmp_path / "det.onnx"
    onnx.save(nms_if_model(), det)
    sess = ort.InferenceSession(str(det), providers=["CPUExecutionProvider"])
    apart = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7]]], np.float32)
    rows = {sess.run(None, {"boxes": b, "scores": scores})[0].shape[0] for b in (apart, np.tile(apart[:, :1], (1, 3, 1)))}
    assert rows == {3, 1}  # three boxes apart are kept, three that overlap are one: the count is the data's
    r = run("annotate", det, "-o", tmp_path / "det.sym.onnx")
    causes = [line for line in r.stdout.splitlines() if line.startswith("  cause ")]
    assert [c.split("'")[1] for c in causes] == ["nms", "if"], r.stdout
    assert r.stdout.count("next: data-dependent") == 2, r.stdout
    assert run("check", det).returncode == 1
    passed = run("check", det, "--allow-data-dependent")
    assert passed.returncode == 0, passed.stdout

    branch = tmp_path / "branch.onnx"
    onnx.save(input_if_model(), branch)
    sess = ort.InferenceSession(str(branch), providers=["CPUExecutionProvider"])
    x = np.ones(5, np.float32)
    assert [sess.run(None, {"x": x, "use_cache_branch": np.array([b])})[0].shape for b in (True, False)] == [(5,), (10,)]
    r = run("annotate", branch, "-o", tmp_path / "b.sym.onnx")
    assert "next: the If is decided by the graph input use_cache_branch" in r.stdout, r.stdout
    assert "--value use_cache_branch=..." in r.stdout
    gh = run("check", branch, "--format", "github")  # (the annotation carries it too)
    assert gh.returncode == 1 and "%0Anext: the If is decided by the graph input use_cache_branch" in gh.stdout
    # --value gives the dims for that value, reported apart: the written model is fed both values
    # (z is seq long for True, 2*seq for False), so it keeps only what holds for every value
    r = run("annotate", branch, "-o", tmp_path / "b1.sym.onnx", "--value", "use_cache_branch=1")
    assert "hold for the --value data only" in r.stdout, r.stdout
    written = onnx.load(tmp_path / "b1.sym.onnx")
    out = next(o for o in written.graph.output if o.name == "z")
    assert [d.dim_param or d.dim_value for d in out.type.tensor_type.shape.dim] != ["seq"]
    meta = {p.key: p.value for p in written.metadata_props}
    assert json.loads(meta["onnxsym.value_only"])["z"] == ["seq"], meta


def test_routine_positive_assumptions_are_behind_verbose_and_never_twice(tmp_path):
    """llama_tiny_ts's Reshapes read `past + seq` as a size (>= 1): routine, so under -v only;
    an X >= 1 that chose an If's branch stays without -v (tests/test_edges.py)."""
    llama = "models/llama_tiny_ts.onnx"
    for args in (("annotate", llama, "-o", tmp_path / "l.onnx", "--force"), ("check", llama)):
        quiet, loud = run(*args), run(*args, "-v")
        assert quiet.returncode == loud.returncode == 0, quiet.stderr
        assert ">= 1" not in quiet.stdout and "--allow-zero" not in quiet.stdout, quiet.stdout
        assumed = [line for line in loud.stdout.splitlines() if "assumed past + seq >= 1" in line]
        assert len(assumed) == 1 and "unless --allow-zero" in assumed[0], loud.stdout
    d = run("domain", llama)
    assert "assumed past <= 16777216 (assumed: onnxsym relies on it" in d.stdout, d.stdout


def test_a_condition_with_a_positive_factor_is_stated_as_the_residues_of_one_symbol(tmp_path):
    import numpy as np
    import onnx
    import onnxruntime as ort
    from cli_models import windows_model

    from onnxsym import dims
    from onnxsym.domain.forms import simplify

    b, h = dims.sym("b", 1, 2**40), dims.sym("h", 1, 2**40)
    (form,) = simplify("==", b * h, 8 * b * (h // 8))
    assert (form.kind, form.symbol, form.modulus, form.residues) == ("divisible", "h", 8, (0,))
    for bv in range(1, 4):  # exhaustively over two periods, against the raw equality
        for hv in range(1, 17):
            assert form.holds({"h": hv}) == (bv * hv == 8 * bv * (hv // 8))

    path = tmp_path / "win.onnx"
    onnx.save(windows_model(), path)
    r = run("domain", path)
    assert r.returncode == 0 and "height % 8 == 0: Reshape 'win'" in r.stdout and "assumed" not in r.stdout, r.stdout
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

    def runs(height):
        try:
            sess.run(None, {"x": np.zeros((2, height), np.float32)})
            return True
        except Exception:
            return False

    assert [hv for hv in range(1, 41) if runs(hv)] == [8, 16, 24, 32, 40]  # the truth, as the domain says
    torch = run("domain", path, "--format", "torch")
    assert "height = 8*_height" in torch.stdout and "also needed" not in torch.stdout, torch.stdout


def test_the_command_list_of_help_gives_each_command_a_whole_line_at_80_columns():
    """`onnxsym --help` is the first thing run: click cuts a summary that does not fit with
    "...", mid-sentence ("Write MODEL with the symbolic shape of every value in...")."""
    import os

    from onnxsym.cli import main

    r = subprocess.run([sys.executable, "-m", "onnxsym", "--help"], capture_output=True, text=True, cwd=ROOT,
                       timeout=120, env=dict(os.environ, COLUMNS="80"))
    listed = r.stdout[r.stdout.index("Commands:"):].splitlines()[1:]
    assert r.returncode == 0 and sorted(line.split()[0] for line in listed) == sorted(main.commands), r.stdout
    assert not [line for line in listed if line.endswith("...")], r.stdout
