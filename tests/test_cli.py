"""The command line: exit codes, outputs, never overwriting the input."""

import subprocess
import sys

import onnx
from click.testing import CliRunner
from helpers import F, model
from onnx import helper

from onnxsym.cli import main


def _save(tmp_path, m, name="m.onnx"):
    p = tmp_path / name
    onnx.save(m, str(p))
    return str(p)


def _relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"], name="r"), helper.make_node("Relu", ["y"], ["z"], name="r2")],
                 [("x", F, ["batch", 3])], [("z", F, None)])


def test_annotate_writes_default_output_and_keeps_input(tmp_path):
    p = _save(tmp_path, _relu_model())
    original = open(p, "rb").read()
    r = CliRunner().invoke(main, ["annotate", p])
    assert r.exit_code == 0, r.output
    assert "2 values annotated" in r.output
    out = onnx.load(str(tmp_path / "m.sym.onnx"))
    assert out.graph.value_info[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert open(p, "rb").read() == original


def test_annotate_refuses_to_overwrite_input_without_in_place(tmp_path):
    p = _save(tmp_path, _relu_model())
    r = CliRunner().invoke(main, ["annotate", p, "-o", p])
    assert r.exit_code == 2 and "in-place" in r.output


def test_bad_file_is_one_line_and_exit_2(tmp_path):
    p = tmp_path / "junk.onnx"
    p.write_text("not a model at all")
    r = subprocess.run([sys.executable, "-m", "onnxsym.cli", "annotate", str(p)], capture_output=True, text=True)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert str(p) in r.stderr


def test_cycle_is_exit_2(tmp_path):
    m = model([helper.make_node("Relu", ["b"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2")],
              [("x", F, [2])], [("a", F, None)])
    r = CliRunner().invoke(main, ["annotate", _save(tmp_path, m)])
    assert r.exit_code == 2 and "cycle" in r.output


def test_verify_passes_on_a_correct_model(tmp_path):
    p = _save(tmp_path, _relu_model())
    r = CliRunner().invoke(main, ["verify", p, "--bind", "batch=5"])
    assert r.exit_code == 0, r.output
    assert "0 wrong" in r.output


def test_the_mlir_commands_choices_are_the_exports():
    """The CLI names the MLIR dialects and forms without importing the export (its start-up
    stays that of click): they are the export's own, DIALECTS and STYLES."""
    from onnxsym.mlir import DIALECTS, STYLES

    params = {p.name: p for p in main.commands["mlir"].params}
    assert tuple(params["dialect"].type.choices) == DIALECTS
    assert tuple(params["style"].type.choices) == STYLES


def test_the_shell_completes_commands_and_options():
    """click's completion, as docs/commands.md tells a shell to ask for it."""
    import os

    def complete(*words):
        env = dict(os.environ, COMP_WORDS=" ".join(["onnxsym", *words]), COMP_CWORD=str(len(words)),
                   _ONNXSYM_COMPLETE="bash_complete")
        r = subprocess.run([sys.executable, "-c", "from onnxsym.cli import run; run()"], env=env,
                           capture_output=True, text=True, timeout=60)
        return r.stdout.split()

    assert "plain,annotate" in complete("an")
    assert "plain,--keep-declared-names" in complete("annotate", "--keep")
    assert "plain,--no-pager" in complete("show", "--no-p")
