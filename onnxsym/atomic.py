"""Writing a file so that no one ever sees it half-written."""

from __future__ import annotations

import os
import tempfile


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, renamed into place:
    a crash or Ctrl-C leaves the old file (or none), never a partial one. The file gets
    the mode a plain ``open`` would give it (a temporary file's is owner-only)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(suffix=".tmp", prefix=os.path.basename(path) + ".", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
