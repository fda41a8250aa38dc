"""Outputs that are no regular file, and the OS errors of reading and writing: a pipe or a
character device is written into (never renamed over or deleted), a folder, a block device
or a socket is refused, ``-`` is standard output, and every OS error is one line naming the
path with exit 2, no traceback, nothing half-written. Run as real processes."""

import errno
import os
import socket
import stat
import subprocess
import sys
import threading

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers import F, model
from onnx import helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _model(folder, name="m.onnx", nodes=1):
    names = ["x"] + [f"relu_output_number_{i}" for i in range(nodes)]
    m = model([helper.make_node("Relu", [a], [b], name=f"relu_{i}") for i, (a, b) in enumerate(zip(names, names[1:]))],
              [("x", F, ["batch", 3])], [(names[-1], F, None)])
    path = os.path.join(str(folder), name)
    onnx.save(m, path)
    return path


def _run(*args, cwd=None, code=None, **kw):
    """onnxsym in a process of its own (``code``: Python run first, to inject a fault)."""
    head = ["-c", code + "\nfrom onnxsym.cli import main\nmain(prog_name='onnxsym')"] if code else ["-m", "onnxsym.cli"]
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, *head, *args], capture_output=True, cwd=cwd or ROOT, env=env,
                          timeout=120, **kw)


def _refused(r, *texts):
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, err)
    assert "Traceback" not in err and "internal error" not in err, err
    lines = [line for line in err.strip().splitlines() if line.startswith("onnxsym: error:")]
    assert len(lines) == 1, err
    for t in texts:
        assert t in lines[0], lines[0]
    return lines[0]


def _runs(data: bytes):
    """The written model loads and runs in onnxruntime at two sizes, with the shape it declares."""
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for batch in (1, 4):
        (y,) = sess.run(None, {"x": np.ones((batch, 3), np.float32)})
        assert y.shape == (batch, 3)
    dims = onnx.load_from_string(data).graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["batch", 3]


def _device(tmp_path, name, minor):
    """A character device to write into: a scratch node of the memory devices (1, minor) made
    with mknod where we may (root); else the system's own, which no other user can replace."""
    if os.geteuid() == 0:
        path = str(tmp_path / name)
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        return path
    return f"/dev/{name}"


def _same_device(path, st):
    now = os.lstat(path)
    assert stat.S_ISCHR(now.st_mode) and now.st_rdev == st.st_rdev and now.st_ino == st.st_ino


@pytest.mark.slow
def test_a_character_device_is_written_into_and_stays_a_device(tmp_path):
    """annotate -o, --mlir and mlir -o onto /dev/null (a scratch node of it, as root): the node
    is still the same character device (1, 3) afterwards, with or without --force."""
    m = _model(tmp_path)
    null = _device(tmp_path, "null", 3)
    st = os.lstat(null)
    link = str(tmp_path / "link")
    os.symlink(null, link)
    for args in (["annotate", m, "-o", null, "--force"], ["annotate", m, "-o", null],
                 ["annotate", m, "-o", str(tmp_path / "o.onnx"), "--mlir", null, "--force"],
                 ["mlir", m, "-o", null, "--force"], ["mlir", m, "-o", link], ["annotate", m, "-o", link, "-q"]):
        r = _run(*args)
        assert r.returncode == 0, r.stderr.decode()
        _same_device(null, st)
    assert os.path.islink(link) and os.path.realpath(link) == os.path.realpath(null)


def test_a_fifo_is_written_into_and_stays_a_fifo(tmp_path):
    m = _model(tmp_path)
    fifo = str(tmp_path / "pipe")
    for args, check in ((["annotate", m, "-o", fifo, "--force", "-q"], _runs),
                        (["mlir", m, "-o", fifo], lambda data: data.startswith(b"module"))):
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
        reader.start()
        r = _run(*args)
        reader.join(60)
        assert r.returncode == 0, r.stderr.decode()
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
        assert check(got[0]) is not False
        os.unlink(fifo)


def test_a_full_device_is_a_clear_error(tmp_path):
    """Writing into a full device (/dev/full: ENOSPC) names the path and the reason."""
    m = _model(tmp_path)
    full = _device(tmp_path, "full", 7)
    _refused(_run("annotate", m, "-o", full), full, "cannot write: No space left on device")
    _refused(_run("mlir", m, "-o", full), full, "No space left on device")


def test_folders_block_devices_and_sockets_are_refused_before_any_work(tmp_path):
    m = _model(tmp_path)
    sock_path = str(tmp_path / "sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(sock_path)
    try:
        for args in (["annotate", m, "-o", sock_path, "--force"], ["mlir", m, "-o", sock_path, "--force"],
                     ["annotate", m, "-o", str(tmp_path / "o.onnx"), "--mlir", sock_path, "--force"]):
            _refused(_run(*args), sock_path, "is a socket")
            assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    finally:
        s.close()
    folder = tmp_path / "out"
    folder.mkdir()
    for args in (["annotate", m, "-o", str(folder), "--force"], ["mlir", m, "-o", str(folder), "--force"],
                 ["annotate", m, "--mlir", str(folder), "--force"]):
        r = _run(*args)  # one line naming the folder (not click's usage block)
        assert _refused(r, str(folder), "is a folder") == r.stderr.decode().strip()
        assert folder.is_dir() and not os.listdir(str(folder))
    assert not os.path.exists(tmp_path / "o.onnx") and not os.path.exists(tmp_path / "m.sym.onnx")
    if os.geteuid() == 0:  # a scratch block device node (a loop device's numbers); never opened
        blk = str(tmp_path / "blk")
        os.mknod(blk, 0o600 | stat.S_IFBLK, os.makedev(7, 200))
        _refused(_run("annotate", m, "-o", blk, "--force"), blk, "is a block device")
        _refused(_run("mlir", m, "-o", blk, "--force"), blk, "is a block device")
        assert stat.S_ISBLK(os.lstat(blk).st_mode)


@pytest.mark.slow
def test_dash_is_standard_output(tmp_path):
    """mlir -o - and annotate -o - / --mlir - write to standard output (no file named '-');
    what the command says goes to stderr then."""
    m = _model(tmp_path)
    r = _run("mlir", m, "-o", "-", cwd=str(tmp_path))
    assert r.returncode == 0 and r.stdout.startswith(b"module") and b"written" in r.stderr
    r = _run("annotate", m, "-o", "-", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr.decode()
    _runs(r.stdout)
    assert b"values annotated" in r.stderr
    r = _run("annotate", m, "-o", str(tmp_path / "o.onnx"), "--mlir", "-", cwd=str(tmp_path))
    assert r.returncode == 0 and r.stdout.startswith(b"module") and b"values annotated" in r.stderr
    _runs(open(str(tmp_path / "o.onnx"), "rb").read())
    assert not os.path.exists(tmp_path / "-")
    _refused(_run("annotate", m, "-o", "-", "--mlir", "-", cwd=str(tmp_path)), "is also the output")


def test_standard_output_redirected_onto_the_input_is_refused(tmp_path):
    m = _model(tmp_path)
    before = open(m, "rb").read()
    with open(m, "ab") as out:  # `onnxsym annotate m.onnx -o - >> m.onnx`
        r = subprocess.run([sys.executable, "-m", "onnxsym.cli", "annotate", m, "-o", "-"], stdout=out,
                           stderr=subprocess.PIPE, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert r.returncode == 2 and b"overwrite the input" in r.stderr and b"Traceback" not in r.stderr
    assert open(m, "rb").read() == before


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`show MODEL | head -1`, `mlir -o - | head -1`: exit 1 (click's convention for EPIPE),
    nothing on stderr."""
    m = _model(tmp_path, nodes=1500)  # more output than a pipe holds (64 KiB)
    for args in (["show", m, "-q"], ["mlir", m, "-o", "-"]):
        p = subprocess.Popen([sys.executable, "-m", "onnxsym.cli", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(120) == 1, err
        assert err.strip() in ("", "-: written"), err


def test_a_missing_folder_names_it(tmp_path):
    m = _model(tmp_path)
    missing = str(tmp_path / "nope" / "out.onnx")
    _refused(_run("annotate", m, "-o", missing), missing, f"the folder {tmp_path / 'nope'} does not exist")
    _refused(_run("mlir", m, "-o", missing), "does not exist")
    _refused(_run("annotate", m, "-o", str(tmp_path / "o.onnx"), "--mlir", missing), "does not exist")
    assert sorted(os.listdir(str(tmp_path))) == ["m.onnx"]  # the model is written last: nothing is left


# An OS error raised where the write happens, in the real process.
_FAULT = """
import errno, os, onnxsym.output.atomic as a
def _fail(*args, **kw):
    raise OSError(errno.{code}, os.strerror(errno.{code}))
{target} = _fail
"""


@pytest.mark.slow
def test_os_errors_are_one_line_naming_the_path_and_leave_nothing(tmp_path):
    """Permission, read-only file system, disk full: each at the point it would happen
    (creating the temporary file, renaming it, writing it); the old file is as it was."""
    m = _model(tmp_path)
    out = tmp_path / "out.onnx"
    out.write_bytes(b"the old output")
    for code, target in (("EACCES", "a.tempfile.mkstemp"), ("EROFS", "a.tempfile.mkstemp"),
                         ("EPERM", "a.os.replace"), ("ENOSPC", "a.os.fdopen")):
        fault = _FAULT.format(code=code, target=target)
        why = os.strerror(getattr(errno, code))
        _refused(_run("annotate", m, "-o", str(out), "--force", code=fault), str(out), why)
        _refused(_run("annotate", m, "--in-place", code=fault), m, why)
        _refused(_run("mlir", m, "-o", str(out), "--force", code=fault), why)
        assert out.read_bytes() == b"the old output"
        assert sorted(os.listdir(str(tmp_path))) == ["m.onnx", "out.onnx"]  # no temporary file left


def test_in_place_on_an_immutable_file(tmp_path):
    """As root, chattr +i where the file system has it; the fault injected otherwise."""
    m = _model(tmp_path)
    before = open(m, "rb").read()
    immutable = os.geteuid() == 0 and subprocess.run(["chattr", "+i", m], capture_output=True).returncode == 0
    try:
        code = None if immutable else _FAULT.format(code="EPERM", target="a.os.replace")
        _refused(_run("annotate", m, "--in-place", code=code), m, "Operation not permitted", "immutable")
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", m])
    assert open(m, "rb").read() == before and sorted(os.listdir(str(tmp_path))) == ["m.onnx"]


def test_in_place_needs_a_regular_file(tmp_path):
    m = _model(tmp_path)
    fifo = str(tmp_path / "pipe.onnx")
    os.mkfifo(fifo)
    r = _run("annotate", fifo, "--in-place")
    assert r.returncode == 2 and b"--in-place rewrites a regular file" in r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.path.exists(m)


def test_model_paths_that_are_no_file(tmp_path):
    """A character device (/dev/zero is never read forever), a folder; a pipe is read."""
    zero = _device(tmp_path, "zero", 5)
    _refused(_run("show", zero), zero, "is a character device")
    for command in ("show", "annotate", "verify", "cost", "domain", "mlir"):  # one line, as a missing file's
        r = _run(command, str(tmp_path))
        assert _refused(r, f"{tmp_path}: is a folder, not an ONNX file") == r.stderr.decode().strip()
    m = _model(tmp_path)
    fifo = str(tmp_path / "pipe.onnx")
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: open(fifo, "wb").write(open(m, "rb").read()))
    writer.start()
    r = _run("show", fifo, "-q")
    writer.join(60)
    assert r.returncode == 0 and b"float32[batch, 3]" in r.stdout, r.stderr.decode()


def test_a_model_is_not_written_to_a_terminal(tmp_path):
    import pty

    m = _model(tmp_path)
    master, slave = pty.openpty()
    try:
        r = subprocess.run([sys.executable, "-m", "onnxsym.cli", "annotate", m, "-o", "-"], stdout=slave,
                           stderr=subprocess.PIPE, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 2 and b"standard output is a terminal" in r.stderr and b"Traceback" not in r.stderr


def test_paths_that_name_no_file_and_proc(tmp_path):
    """An empty -o (an unset variable) is no request for the default; a path ending in / names a
    folder; /proc is no place for a temporary file: each refused, nothing written."""
    m = _model(tmp_path)
    for args in (["annotate", m, "-o", ""], ["mlir", m, "-o", ""], ["annotate", m, "-o", str(tmp_path / "new") + "/"],
                 ["mlir", m, "-o", str(tmp_path / "new") + "/"]):
        _refused(_run(*args), "names no file")
    r = _run("annotate", m, "-o", "/proc/self/status", "--force")
    assert r.returncode == 2 and b"/proc/self/status: cannot write" in r.stderr and b"Traceback" not in r.stderr
    assert sorted(os.listdir(str(tmp_path))) == ["m.onnx"]
