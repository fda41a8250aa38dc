"""onnxruntime run in a child process: a native crash of it on a user's model (a SIGFPE in a
kernel at batch 0) ends the child, and the caller gets a :class:`Crashed` naming the signal
instead of losing its own process. One child serves a whole verify run (the model loaded
once); after a crash the next request starts a fresh one and loads the model again."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .ort_child import HEADER

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_child.py")


class Crashed(Exception):
    """The child died while onnxruntime served a request: ``signal`` names how (SIGFPE, ...)."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal = signal_name


class Refused(Exception):
    """onnxruntime's own error on a request (a load or a run it refuses): the message."""


def signal_name(returncode: int | None) -> str:
    """How a child ended: ``SIGFPE`` for a return code of -8, ``exit code 3`` otherwise."""
    if returncode is not None and returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class Child:
    """One onnxruntime child process holding (at most) one session, of ``model`` (bytes of a
    serialized model or a path) with ``options`` (``optimization``: ``disable_all``,
    ``basic`` or ``all``; ``threads``; ``keep``: False to load only, not keep the session)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._model: Any = None
        self._options: dict = {}
        self._loaded = False

    def _start(self) -> None:
        self._proc = subprocess.Popen([sys.executable, CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL)
        kind, detail = self._answer()
        if kind == "missing":
            self.close()
            raise ImportError(detail)
        self._loaded = False

    def _answer(self) -> tuple[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        head = self._proc.stdout.read(HEADER.size)
        if len(head) < HEADER.size:
            raise Crashed(signal_name(self._proc.wait()))
        (n,) = HEADER.unpack(head)
        data = self._proc.stdout.read(n)
        if len(data) < n:
            raise Crashed(signal_name(self._proc.wait()))
        return pickle.loads(data)

    def _ask(self, request: tuple) -> Any:
        """One request to a live child, its answer."""
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        try:
            data = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
            self._proc.stdin.write(HEADER.pack(len(data)) + data)
            self._proc.stdin.flush()
            kind, detail = self._answer()
        except (Crashed, BrokenPipeError) as exc:
            how = exc.signal if isinstance(exc, Crashed) else signal_name(self._proc.wait())
            self._proc, self._loaded = None, False
            raise Crashed(how) from None
        if kind == "error":
            raise Refused(detail)
        return detail

    def load(self, model: bytes | str, options: Mapping[str, Any] | None = None) -> list[str]:
        """Load ``model`` into the child (it is loaded again in a fresh child after a crash):
        the session's output names. Raises :class:`Refused` or :class:`Crashed`."""
        self._model, self._options = model, dict(options or {})
        self._loaded = False
        names = self._ask(("load", model, self._options))
        self._loaded = True
        return names

    def run(self, feeds: Mapping[str, Any], out_names: Sequence[str]) -> list[tuple | None]:
        """The shape of each output of a run (None: not a tensor). Feeds are numpy arrays, or
        ``(bytes as an array, shape, element type)`` for types numpy has none of."""
        if self._model is None:
            raise ValueError("no model loaded")
        if not self._loaded or self._proc is None or self._proc.poll() is not None:
            self.load(self._model, self._options)  # (a fresh child, after a crash)
        return self._ask(("run", dict(feeds), list(out_names)))

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for f in (proc.stdin, proc.stdout):
            if f is not None:
                f.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
