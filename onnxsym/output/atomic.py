"""Writing an output so that no one ever sees it half-written, and so that nothing but a
regular file is ever replaced.

A regular file (or a new one) is written to a temporary file beside it and renamed into
place; without ``replace`` (no ``--force``) it is linked into place instead, which fails where
a file is there by then (one another run wrote meanwhile): no file is ever replaced unasked.
A pipe (a FIFO, ``/dev/stdout`` in a pipeline) or a character device (``/dev/null``) holds
no file to replace: it is opened and written into, never renamed over or deleted.
A folder, a block device (a disk) and a socket are refused. ``-`` is standard output.
Every OS error is an :class:`OutputError` naming the path; a closed pipe on standard
output propagates as :class:`BrokenPipeError` (the command line ends quietly on it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING

from ..errors import OutputError

if TYPE_CHECKING:
    import onnx

STDOUT = "-"

# What each kind of existing target is, for the messages.
_REFUSED = {"folder": "a folder", "block": "a block device (a disk)", "socket": "a socket",
            "other": "no regular file, pipe or character device"}


def target_kind(path: str) -> str | None:
    """What ``path`` names after symbolic links: None (nothing yet, or a dangling link),
    "file", "fifo", "char", or one of the kinds that are refused."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return None  # (a folder we may not enter: writing reports it)
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode):
        return "char"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISBLK(mode):
        return "block"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "other"


def check_target(path: str) -> None:
    """Raise :class:`OutputError` when ``path`` is nothing onnxsym writes to (a folder, a
    block device, a socket), before any work is done."""
    if path == STDOUT:
        return
    if not path or path.endswith(("/", os.sep)):
        raise OutputError(f"{path!r}: names no file; give a file's path, or - for standard output")
    kind = target_kind(path)
    if kind in _REFUSED:
        raise OutputError(f"{path}: is {_REFUSED[kind]}; onnxsym writes only regular files, pipes and "
                          f"character devices (such as /dev/null), or - for standard output")
    folder = os.path.dirname(os.path.abspath(os.path.realpath(path)))
    if kind is None and not os.path.isdir(folder):
        raise OutputError(f"{path}: cannot write: "
                          + (f"{folder} is not a folder" if os.path.exists(folder) else
                             f"the folder {folder} does not exist"))


def replaces_a_file(path: str) -> bool:
    """Whether writing ``path`` replaces an existing regular file (what ``--force`` allows);
    writing into a pipe or a device replaces nothing."""
    return path != STDOUT and target_kind(path) == "file"


def save_model(model: onnx.ModelProto, out: str, model_dir: str | None = None,
               also: Sequence[tuple[str, bytes]] = (), locations: set[str] | None = None,
               replace: bool | Collection[str] = True) -> None:
    """Write to a temporary file beside OUT, then rename: never a half-written model (with
    ``also``, more ``(path, bytes)`` outputs: all of them or none). References to external
    weights are kept: OUT's folder must hold them (``locations``: those files, when known)."""
    folder = os.path.dirname(os.path.abspath(out))
    try:
        data = model.SerializeToString()
    except Exception as exc:  # protobuf refuses messages over 2 GB
        raise OutputError(f"{out}: cannot write the annotated model ({exc}); "
                          f"a model over 2 GB must keep its weights as external data") from None
    if model_dir is not None and out != STDOUT:
        from ..model.external import check_output_folder

        check_output_folder(model, model_dir, folder, locations)
    write_outputs([(out, data), *also], replace)


def write_output(path: str, data: bytes, replace: bool = True) -> None:
    """Write ``data`` to ``path`` as the module says."""
    write_outputs([(path, data)], replace)


def write_outputs(items: Sequence[tuple[str, bytes]], replace: bool | Collection[str] = True) -> None:
    """Write each ``(path, data)``; where a regular file cannot be written, none is: every one
    goes to its temporary file first, and only then are they renamed into place. (Pipes,
    devices and standard output are written after those.) Without ``replace`` (or for a path
    not in it, a collection of the paths that may be replaced), a regular file already there
    is an :class:`OutputError`, checked as the file is put in place."""
    staged: list[tuple[str, str, str]] = []  # (path, temporary, real path)
    streams = []
    created: list[str] = []  # (without replace: the files put in place, removed if a later one fails)
    try:
        for path, data in items:
            check_target(path)
            if path == STDOUT or target_kind(path) in ("fifo", "char"):
                streams.append((path, data))
                continue
            real = os.path.realpath(path)  # through a symbolic link, the file it names is replaced
            with _naming(path):
                staged.append((path, _staged(real, data), real))
        for path, tmp, real in staged:
            if replace is True or (replace is not False and path in replace):
                with _naming(path):
                    os.replace(tmp, real)
            else:
                _create(path, tmp, real)
                created.append(real)
        created = []
    finally:
        for real in created:  # (a later output failed: none is written)
            os.unlink(real)
        for _path, tmp, _real in staged:
            if os.path.exists(tmp):  # (one renamed into place is gone from there)
                os.unlink(tmp)
    for path, data in streams:
        if path == STDOUT:
            _write_stdout(data)
        else:
            with _naming(path):
                _write_into(path, data)


def _create(path: str, tmp: str, real: str) -> None:
    """Put the staged ``tmp`` in place at ``real`` only if nothing is there: a hard link fails
    where a file exists (atomically: two runs at once cannot both succeed); where the file
    system has no hard links, an exclusive create and a copy."""
    exists = OutputError(f"{path} exists (it appeared while onnxsym ran); use --force to replace it")
    try:
        os.link(tmp, real)
        return
    except FileExistsError:
        raise exists from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            with _naming(path):
                raise
    try:
        fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IMODE(os.stat(tmp).st_mode))
    except FileExistsError:
        raise exists from None
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_why(path, exc)}") from None
    try:
        with os.fdopen(fd, "wb") as f, open(tmp, "rb") as src:
            f.write(src.read())
    except BaseException:
        os.unlink(real)
        raise


@contextlib.contextmanager
def _naming(path: str) -> Iterator[None]:
    """An OS error, as an :class:`OutputError` naming ``path``."""
    try:
        yield
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_why(path, exc)}") from None


def _write_stdout(data: bytes) -> None:
    # A buffered write that the reader's end cuts short returns the bytes it wrote, without
    # an error: write the rest until it raises (BrokenPipeError when the reader is gone).
    out = sys.stdout.buffer
    view = memoryview(data)
    while view:
        n = out.write(view)
        if not n:
            raise OSError(errno.EIO, "standard output takes no more")
        view = view[n:]
    out.flush()


def _why(path: str, exc: OSError) -> str:
    folder = os.path.dirname(os.path.abspath(path))
    if exc.errno == errno.ENOENT and not os.path.isdir(folder):
        return f"the folder {folder} does not exist"
    if exc.errno == errno.ENOTDIR:
        return f"{folder} is not a folder"
    if exc.errno == errno.EPERM and os.path.exists(path):
        return f"{exc.strerror} (is the file immutable? lsattr {path})"
    return exc.strerror or str(exc)


def _write_into(path: str, data: bytes) -> None:
    """Open a pipe or a device and write into it; opened without creating or truncating,
    and checked again once open, so that a file put there meanwhile is never truncated.
    (A FIFO blocks until a reader opens it, as a shell's redirection does.)"""
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise OSError(errno.EEXIST, "it was replaced while being written")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _staged(path: str, data: bytes) -> str:
    """A temporary file beside ``path`` holding ``data`` (removed again if that fails), with
    the mode a plain ``open`` would give ``path``: an existing file's own, else what the
    umask leaves (a temporary file's is owner-only)."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(suffix=".tmp", prefix=os.path.basename(path) + ".", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return tmp
