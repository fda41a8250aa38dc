"""The long fuzz tier: random graphs checked dim by dim against onnxruntime.

    python bench/fuzz.py --count 10000 [--start 0] [--steps 8] [--failures fuzz-failures] [--time-limit 60]

Each graph is inferred and every dim compared with onnxruntime at generated sizes; then it
is annotated (sometimes with a bind, a range, an assumption or keep_declared_names) and the
written model run, with its value_info in place, at fresh sizes its declared inputs allow:
it must run where the graph runs, declare the real dims, and the domain must hold there.
Prints the counts of graphs that verified (ok), that onnxruntime could not run at any
assignment (invalid), that had a wrong dim, written model or domain (wrong), that took
longer than --time-limit seconds of CPU time (hang; each graph is checked in a worker process) or made
onnxsym fail (crash); each wrong or crashing graph is shrunk to a small reproducer and
saved in --failures. Exits 1 if any graph was wrong, hung or crashed.
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
    p.add_argument("--time-limit", type=float, default=60.0, help="CPU seconds per graph; over it is a hang")
    p.add_argument("--every", type=int, default=1000, help="print the counts so far every N graphs")
    args = p.parse_args()
    t0 = time.perf_counter()

    def summary(counts) -> str:
        graphs = sum(v for k, v in counts.items() if "dims" not in k)
        return (f"{graphs} graphs in {time.perf_counter() - t0:.0f} s: ok {counts.get('ok', 0)}, "
                f"invalid {counts.get('invalid', 0)}, wrong {counts.get('wrong', 0)}, hang {counts.get('hang', 0)}, "
                f"crash {counts.get('crash', 0)}; {counts.get('dims', 0)} dims checked, "
                f"{counts.get('written dims', 0)} written dims run")

    so_far: dict = {}

    def progress(seed, outcome):
        so_far[outcome.kind] = so_far.get(outcome.kind, 0) + 1
        if outcome.kind in ("wrong", "crash", "hang"):
            print(f"seed {seed}: {outcome.kind}: {outcome.detail[:300]}", flush=True)
        done = sum(so_far.values())
        if done % args.every == 0:
            print(f"... {done} graphs, {dict(sorted(so_far.items()))}", flush=True)

    counts, failures = fuzzing.run(range(args.start, args.start + args.count), args.failures, args.steps,
                                   time_limit=args.time_limit, progress=progress)
    print("shrunk:")
    for seed, outcome, path in failures:
        print(f"seed {seed}: {outcome.kind}: {outcome.detail}  -> {path}")
    print(summary(counts))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
