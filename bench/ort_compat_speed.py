"""Per-call time of onnxruntime's ``SymbolicShapeInference.infer_shapes`` (ORT SSI) against
``onnxsym.ort_compat``'s, on each corpus model where ORT SSI succeeds.

Both run in this one process, warm (one untimed call each first), interleaved call by call so a
busy machine slows both alike; the median of ``--repeat`` calls each is reported, and the ratio
onnxsym / ORT SSI (the target: at most 1.5 on every model).

    python bench/ort_compat_speed.py                       # the corpus models ORT SSI takes
    python bench/ort_compat_speed.py --models silero_vad_16k_op15 hf_gpt2_ts --repeat 9
    python bench/ort_compat_speed.py --profile silero_vad_16k_op15   # cProfile of the drop-in's call
    python bench/ort_compat_speed.py --cpu       # CPU seconds, not wall time: steadier on a busy machine
    python bench/ort_compat_speed.py --fresh-verdicts  # each call asks onnxruntime's load check again
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
import warnings

import onnx

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]  # this checkout's onnxsym, the tests' corpus list
from resolution import corpus  # noqa: E402

from onnxsym.ort_compat import SymbolicShapeInference as Ours  # noqa: E402
from onnxsym.output import loadcheck  # noqa: E402


def ort_ssi():
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
    return SymbolicShapeInference


# Wall time (what a pipeline waits), or with --cpu this process's CPU time: both tools run on one
# thread, and on a shared machine other work then does not count (a wall-time median of 5 calls of a
# few ms moves 2-10x with the load).
CLOCK = time.perf_counter


def timed(f, model) -> float:
    t = CLOCK()
    f(model)
    return CLOCK() - t


# With --fresh-verdicts: forget the load check's verdicts before each call of the drop-in (see
# onnxsym.output.loadcheck: remembered by the bytes judged), as for a pipeline whose model changes
# between calls; else a repeated call reuses them, as a pipeline that infers one model again does.
FRESH_VERDICTS = False


def ours(model: onnx.ModelProto) -> None:
    Ours.infer_shapes(model)


def measure(name: str, model: onnx.ModelProto, repeat: int) -> tuple[float, float] | str:
    ort = ort_ssi()
    try:
        ort.infer_shapes(model)
    except Exception as exc:  # noqa: BLE001  (a model ORT SSI fails on is not compared)
        return f"ORT SSI fails: {type(exc).__name__} {str(exc)[:60]}"
    Ours.infer_shapes(model)
    a, b = [], []
    for _ in range(repeat):
        a.append(timed(ort.infer_shapes, model))
        if FRESH_VERDICTS:
            loadcheck.forget_verdicts()
        b.append(timed(ours, model))
    return statistics.median(a), statistics.median(b)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="*", help="corpus names (default: every committed model)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--max-seconds", type=float, default=20.0,
                   help="skip a model whose first ORT SSI call takes longer than this")
    p.add_argument("--cpu", action="store_true", help="time CPU seconds of this process, not wall time")
    p.add_argument("--profile", metavar="MODEL", help="print a cProfile of the drop-in's warm call on MODEL")
    p.add_argument("--fresh-verdicts", action="store_true",
                   help="forget the load check's verdicts before each drop-in call (a model that changes between calls)")
    args = p.parse_args()
    global CLOCK, FRESH_VERDICTS
    CLOCK = time.process_time if args.cpu else time.perf_counter
    FRESH_VERDICTS = args.fresh_verdicts
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    rows = {e["name"]: e for e in corpus(fetched=False)}
    os.chdir(tempfile.mkdtemp())  # ORT SSI saves sym_shape_infer_temp.onnx where it runs when it fails
    if args.profile:
        import cProfile
        import pstats
        model = onnx.load(rows[args.profile]["path"])
        Ours.infer_shapes(model)
        prof = cProfile.Profile()
        prof.runcall(Ours.infer_shapes, model)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return 0
    names = args.models or sorted(rows)
    worst, ratios = 0.0, []
    print(f"{'model':40} {'ORT SSI':>9} {'onnxsym':>9} {'ratio':>6}")
    for name in names:
        model = onnx.load(rows[name]["path"])
        t = time.perf_counter()
        try:
            ort_ssi().infer_shapes(model)
        except Exception:  # noqa: BLE001
            pass
        if time.perf_counter() - t > args.max_seconds:
            print(f"{name:40} skipped: ORT SSI took over {args.max_seconds:.0f} s")
            continue
        got = measure(name, model, args.repeat)
        if isinstance(got, str):
            print(f"{name:40} {got}")
            continue
        a, b = got
        worst = max(worst, b / a)
        ratios.append(b / a)
        print(f"{name:40} {a * 1000:8.1f}ms {b * 1000:8.1f}ms {b / a:6.2f}", flush=True)
    print(f"worst ratio: {worst:.2f}; above 1.5: {sum(r > 1.5 for r in ratios)} of {len(ratios)} models; "
          f"median ratio {statistics.median(ratios) if ratios else 0:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
