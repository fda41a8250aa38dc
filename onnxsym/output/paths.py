"""Output paths that must not be the command's input or one another.

Two paths name the same file when they resolve to the same real path (symbolic
links, ``..``) or, for files that exist, when the system says they are the same
file (a hard link); ``-``, standard output, is the file it is redirected to.
``--force`` replaces an older output; it never lets one output replace the input
or another output of the same command.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Sequence

from ..errors import UserInputError
from .atomic import STDOUT


def _stat(path: str) -> os.stat_result:
    # "-" is standard output: the file it is redirected to, if any
    return os.fstat(sys.stdout.fileno()) if path == STDOUT else os.stat(path)


def same_file(a: str, b: str) -> bool:
    if STDOUT in (a, b):
        if a == b:
            return True
        try:
            sa, sb = _stat(a), _stat(b)
        except (OSError, ValueError, AttributeError):  # (a test's stdout may have no descriptor)
            return False
        return stat.S_ISREG(sa.st_mode) and (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet: not the same file
        return False


def clash(outputs: Sequence[tuple[str, str]], inputs: Iterable[tuple[str, str]]) -> str | None:
    """Why one of ``outputs`` (``(what, path)`` pairs) cannot be written: it is one of
    ``inputs`` or an earlier output; ``None`` when none clash."""
    inputs = list(inputs)
    for i, (what, path) in enumerate(outputs):
        for other_what, other in inputs:
            if same_file(path, other):
                return f"{what} {path} is {other_what} {other}"
        for other_what, other in outputs[:i]:
            if same_file(path, other):
                return f"{what} {path} is also {other_what}"
    return None


def check_outputs(outputs: Sequence[tuple[str, str]], inputs: Iterable[tuple[str, str]]) -> None:
    """Raise :class:`UserInputError` when an output would overwrite an input or another output."""
    why = clash(outputs, inputs)
    if why is not None:
        raise UserInputError(f"{why}: onnxsym never writes over what it reads or over another "
                             f"of its outputs (--force does not change that)")
