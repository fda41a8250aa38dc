#!/usr/bin/env python
"""How long the domain takes beside inference, on every model in models/ (and models/domain/).

    python bench/domain_time.py [MODEL ...]

Each model runs in a fresh process: inference as a user's first call makes it (rules
imported, caches empty for this model), then ``compute`` of its domain; then the
median of 5 further runs of each (caches warm). Prints the ratios; exits 1 if the
domain takes 10% of inference or more on the first call.
"""

import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = r"""
import json, statistics, sys, time
import onnxsym, onnxsym.domain as dom
path = sys.argv[1]
t = time.perf_counter(); r = onnxsym.infer(path); first_infer = time.perf_counter() - t
t = time.perf_counter(); d = dom.compute(r); first_domain = time.perf_counter() - t
inf, dm = [], []
for _ in range(5):
    t = time.perf_counter(); r = onnxsym.infer(path); inf.append(time.perf_counter() - t)
    t = time.perf_counter(); d2 = dom.compute(r); dm.append(time.perf_counter() - t)
assert d2.lines() == d.lines()
print(json.dumps([first_infer, first_domain, statistics.median(inf), statistics.median(dm)]))
"""


def main(paths):
    paths = paths or sorted(glob.glob(os.path.join(HERE, "models", "*.onnx"))
                            + glob.glob(os.path.join(HERE, "models", "domain", "*.onnx")))
    worst = 0.0
    for p in paths:
        out = subprocess.run([sys.executable, "-c", CHILD, p], capture_output=True, text=True, cwd=HERE, check=True)
        fi, fd, wi, wd = json.loads(out.stdout)
        worst = max(worst, fd / fi)
        print(f"{os.path.relpath(p, HERE):40s} first: infer {fi * 1e3:7.1f} ms, domain {fd * 1e3:6.2f} ms "
              f"({100 * fd / fi:4.1f}%)   warm: infer {wi * 1e3:6.1f} ms, domain {wd * 1e3:5.2f} ms ({100 * wd / wi:4.1f}%)")
    print(f"worst first-call ratio: {100 * worst:.1f}%")
    return 0 if worst < 0.10 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
