"""onnxruntime runs in a child process: a native crash of it (an Einsum 'aabb->ab' over a batch
of 0 dies of SIGFPE in onnxruntime 1.32 taking the diagonals, which the domain says not stated;
'bij,bkj->bik' and 'bib->bi' die too, which it now refuses) ends the child, not verify. verify says which
model, sizes and signal, exits 1, and still checks the other sizes in a fresh child."""

import os
import signal
import subprocess
import sys

import numpy as np
import onnx
import pytest
from helpers import F, model
from onnx import helper

import onnxsym
from onnxsym.model.isolated import Child, Crashed, Refused

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _einsum():
    return model([helper.make_node("Einsum", ["a"], ["y"], equation="aabb->ab")],
                 [("a", F, ["batch", "batch", 2, 2])], [("y", F, None)])


def _crashes_in_onnxruntime(m, batch) -> int:
    """The return code of a bare onnxruntime run of ``m`` at ``batch`` (in a process of its own)."""
    code = ("import sys, numpy as np, onnxruntime as ort\n"
            "s = ort.InferenceSession(sys.stdin.buffer.read(), providers=['CPUExecutionProvider'])\n"
            f"x = np.zeros(({batch}, {batch}, 2, 2), np.float32)\n"
            "s.run(None, {'a': x})\n")
    return subprocess.run([sys.executable, "-c", code], input=m.SerializeToString(), capture_output=True).returncode


@pytest.fixture(scope="module")
def crashing(tmp_path_factory):
    m = _einsum()
    if _crashes_in_onnxruntime(m, 0) >= 0:
        pytest.skip("this onnxruntime runs the Einsum at batch 0: no native crash to survive")
    assert _crashes_in_onnxruntime(m, 2) == 0
    path = str(tmp_path_factory.mktemp("crash") / "einsum.onnx")
    onnx.save(m, path)
    return path


def test_cli_verify_names_the_model_sizes_and_signal_and_exits_1(crashing):
    r = subprocess.run([sys.executable, "-m", "onnxsym", "verify", crashing, "--allow-zero", "batch",
                        "--bind", "batch=0"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("CRASHED"))
    assert crashing in line and "batch=0" in line and "SIGFPE" in line


def test_verify_checks_the_sizes_after_a_crash_in_a_fresh_child(crashing):
    report = onnxsym.verify(crashing, assignments=[{"batch": 0}, {"batch": 3}, {"batch": 0}, {"batch": 2}],
                            result=onnxsym.infer(crashing, allow_zero=True))
    assert len(report.crashes) == 2 and all("batch=0" in c for c in report.crashes)
    # y of batch 3 and of batch 2, each of 2 dims, as onnxruntime ran them after the crashes
    assert report.checked_values == 2 and report.checked_dims == 4 and not report.mismatches
    assert not report.ok


def test_a_killed_child_is_replaced_and_the_model_loaded_again():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, ["n"])], [("y", F, None)])
    with Child() as child:
        assert child.load(m.SerializeToString()) == ["y"]
        assert child.run({"x": np.ones(3, np.float32)}, ["y"]) == [(3,)]
        os.kill(child._proc.pid, signal.SIGSEGV)
        child._proc.wait()
        assert child.run({"x": np.ones(5, np.float32)}, ["y"]) == [(5,)]
        with pytest.raises(Refused):
            child.run({"x": np.ones((2, 2), np.float32)}, ["y"])  # onnxruntime's own refusal: rank 2


def test_a_crash_during_a_request_is_said_with_its_signal():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, ["n"])], [("y", F, None)])
    with Child() as child:
        child.load(m.SerializeToString())
        os.kill(child._proc.pid, signal.SIGSTOP)  # stopped, then killed while the request waits
        proc = child._proc
        import threading
        threading.Timer(0.5, lambda: os.kill(proc.pid, signal.SIGKILL)).start()
        with pytest.raises(Crashed) as exc:
            child.run({"x": np.ones(3, np.float32)}, ["y"])
        assert exc.value.signal == "SIGKILL"
