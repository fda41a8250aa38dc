#!/usr/bin/env python
"""How long finding the pins takes (``pins_of`` on a computed domain: what ``check`` adds for
them), on every model in models/ (and models/domain/, models/dynamism/), each in a fresh process.

    python bench/pins_time.py [--root DIR] [MODEL ...]

``--root``: the source tree to import onnxsym from (another checkout, to compare); prints the
median of 5 warm runs per model, in ms.
"""

import argparse
import glob
import json
import os
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=HERE)
    ap.add_argument("models", nargs="*")
    args = ap.parse_args(argv)
    paths = args.models or sorted(glob.glob(os.path.join(HERE, "models", "*.onnx"))
                                  + glob.glob(os.path.join(HERE, "models", "domain", "*.onnx"))
                                  + glob.glob(os.path.join(HERE, "models", "dynamism", "*.onnx")))
    for p in paths:
        out = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(p)], capture_output=True, text=True,
                             cwd=args.root, env={**os.environ, "PYTHONPATH": args.root})
        ms = f"{1000 * json.loads(out.stdout):8.2f}" if out.returncode == 0 else "   error"
        print(f"{ms} ms  {os.path.relpath(p, HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
