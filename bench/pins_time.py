#!/usr/bin/env python
"""How long finding the pins takes (``pins_of`` on a computed domain: what ``check`` adds for
them), on every model in models/ (and models/domain/, models/dynamism/), each in a fresh process.

    python bench/pins_time.py [--root DIR] [--check] [MODEL ...]

``--root``: the source tree to import onnxsym from (another checkout, to compare); prints the
median of 5 warm runs per model, in ms. ``--check``: the whole ``onnxsym check`` instead, its
first run in a fresh process (imports done), the median of 3 processes. Compare two trees with
the same bytecode caching (``PYTHONDONTWRITEBYTECODE`` unset, ``PYTHONPYCACHEPREFIX`` one cache,
one warm-up run each): a tree compiling its sources at each import is about 90 ms slower.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = r"""
import json, statistics, sys, time
import onnxsym
from onnxsym.domain.pins import pins_of
r = onnxsym.infer(sys.argv[1]); d = r.domain()
ts = []
for _ in range(5):
    t = time.perf_counter(); pins_of(r, d); ts.append(time.perf_counter() - t)
print(json.dumps(statistics.median(ts)))
"""
CHECK = r"""
import contextlib, io, json, sys, time
from onnxsym.cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(["check", sys.argv[1]], standalone_mode=False)
    except SystemExit:
        pass
print(json.dumps(time.perf_counter() - t))
"""


def _run(child: str, path: str, root: str) -> float | None:
    out = subprocess.run([sys.executable, "-c", child, os.path.abspath(path)], capture_output=True, text=True,
                         cwd=root, env={**os.environ, "PYTHONPATH": root})
    return json.loads(out.stdout.splitlines()[-1]) if out.returncode == 0 and out.stdout else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=HERE)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args(argv)
    paths = args.models or sorted(glob.glob(os.path.join(HERE, "models", "*.onnx"))
                                  + glob.glob(os.path.join(HERE, "models", "domain", "*.onnx"))
                                  + glob.glob(os.path.join(HERE, "models", "dynamism", "*.onnx")))
    for p in paths:
        if args.check:
            got = [_run(CHECK, p, args.root) for _ in range(3)]
            t = None if None in got else statistics.median(got)  # type: ignore[type-var]
        else:
            t = _run(CHILD, p, args.root)
        ms = "   error" if t is None else f"{1000 * t:8.2f}"
        print(f"{ms} ms  {os.path.relpath(p, HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
