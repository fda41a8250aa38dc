"""A progress bar on stderr for models that take noticeable time to infer, and a status
line for the work after inference (a model's cost, its domain).

Both appear only on a terminal and only once the work has run for ``delay`` seconds, so
small models and piped or CI output never see them."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TextIO

import click


class Bar(Protocol):
    """What this module uses of the bar ``click.progressbar`` returns."""

    pos: int

    def update(self, n_steps: int) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, exc_type: Any, exc_value: Any, tb: Any) -> None: ...


# The most times a bar is redrawn.
_STEPS = 200


class Progress:
    """Pass as ``progress=`` to :func:`onnxsym.infer`; call :meth:`close` when done."""

    def __init__(self, label: str, enabled: bool = True, delay: float = 0.5,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and self.stream.isatty()
        self.label = label
        self.delay = delay
        self.clock = clock
        self.start = clock()
        self.bar: Bar | None = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if self.clock() - self.start < self.delay:
                return
            bar = click.progressbar(length=total, label=self.label, file=self.stream)
            bar.__enter__()
            self.bar = bar
        elif done - self.bar.pos < total // _STEPS and done < total:
            return  # (click redraws the line on every update: about 6 us, as much as a node costs)
        self.bar.update(done - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


@contextlib.contextmanager
def working(label: str, enabled: bool = True, delay: float = 0.5, stream: TextIO | None = None) -> Iterator[None]:
    """``with working("computing the peak memory"):`` shows ``label...`` on stderr while the
    block runs, once it has run for ``delay`` seconds (a timer thread writes it: the block is
    one long computation), and erases it at the end."""
    out = stream if stream is not None else sys.stderr
    if not enabled or not out.isatty():
        yield
        return
    lock = threading.Lock()
    shown = []

    def show() -> None:
        with lock:
            out.write(f"{label}...")
            out.flush()
            shown.append(True)
    timer = threading.Timer(delay, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            if shown:
                out.write("\r\033[K")  # the line erased: what the command prints comes next
                out.flush()
