"""The long fuzz tier: random graphs checked dim by dim against onnxruntime.

    python bench/fuzz.py --count 10000 [--start 0] [--steps 8] [--failures fuzz-failures]

Prints the counts of graphs that verified (ok), that onnxruntime could not run at
any assignment (invalid), that had a wrong dim (wrong) or made onnxsym fail
(crash); each failure is shrunk to a small reproducer and saved in --failures.
Exits 1 if any graph was wrong or crashed.
"""

import argparse
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]  # this checkout's onnxsym, and the generator

import fuzzing  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--steps", type=int, default=8, help="most op steps per graph")
    p.add_argument("--failures", default="fuzz-failures", help="folder for shrunk reproducers")
    args = p.parse_args()
    t0 = time.perf_counter()
    counts, failures = fuzzing.run(range(args.start, args.start + args.count), args.failures, args.steps)
    for seed, outcome, path in failures:
        print(f"seed {seed}: {outcome.kind}: {outcome.detail}  -> {path}")
    graphs = sum(v for k, v in counts.items() if k != "dims")
    print(f"{graphs} graphs in {time.perf_counter() - t0:.0f} s: ok {counts.get('ok', 0)}, "
          f"invalid {counts.get('invalid', 0)}, wrong {counts.get('wrong', 0)}, crash {counts.get('crash', 0)}; "
          f"{counts.get('dims', 0)} dims checked")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
