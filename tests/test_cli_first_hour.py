"""What a new user trips on in the first hour (issue 36): the command line's small surprises,
each run as the user runs it, ``python -m onnxsym`` in a process of its own."""

import subprocess
import sys

from cli_models import BERT, ROOT


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
