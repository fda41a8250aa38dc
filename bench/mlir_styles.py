"""Every MLIR text onnxsym writes, judged by the tools, on every model there is.

For each model (models/*.onnx, models/optimized, models/domain and the corpus of
models/real, fetched ones too when present), inferred once and narrowed by its domain as
``onnxsym mlir`` does:

- each symbol-dialect style (propagate, erased, encoding, unfolded), pretty and generic,
  must parse and verify in ``bishengir-opt`` (the pretty and generic texts the same module);
- the tool's passes of the default text (``--erase-symbol``, ``--symbol-to-encoding``,
  ``--unfold-symbolic-int``) must equal the matching style, and ``--propagate-symbol`` of the
  erased text must run. Where the tool's pass itself fails (it made invalid IR from valid
  text), that is counted as the tool's, and onnxsym's style must still verify;
- the torch dialect text must parse and verify in upstream MLIR with the torch dialect
  (``iree-opt``) and go through ``bishengir-opt --convert-torch-to-symbol``; with
  ``--compile``, also through ``iree-compile`` for the CPU (slow: minutes for the corpus).

    python bench/mlir_styles.py                 # all models; one line per model, then totals
    python bench/mlir_styles.py --only silero,yolo --compile

The tests run the same check (tests/mlir_sweep.py) on a few representative models (tests/test_mlir_valid.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]  # this checkout's onnxsym, and the check the tests share

from mlir_sweep import check, model_paths  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated words of model file names")
    ap.add_argument("--compile", action="store_true", help="also iree-compile the torch text (slow)")
    args = ap.parse_args(argv)
    words = [w for w in args.only.split(",") if w]
    paths = [p for p in model_paths() if not words or any(w in os.path.basename(p) for w in words)]
    bad = tool_fail = judged = 0
    start = time.time()
    for p in paths:
        t0 = time.time()
        try:
            r = check(p, args.compile)
        except Exception as exc:  # inference itself failed: not this bench's subject, but said
            print(f"SKIP {os.path.relpath(p, ROOT)}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        judged += r["judged"]
        bad += bool(r["ours"])
        tool_fail += bool(r["tool"])
        status = "BAD " if r["ours"] else ("tool" if r["tool"] else "ok  ")
        print(f"{status} {os.path.relpath(p, ROOT):55} {r['judged']:3} texts {time.time() - t0:6.1f}s", flush=True)
        for line in r["ours"]:
            print(f"     ours: {line}")
        for line in r["tool"]:
            print(f"     tool: {line}")
    print(f"{len(paths)} models, {judged} texts judged, {bad} with invalid onnxsym text, "
          f"{tool_fail} where a tool failed on valid text; {time.time() - start:.0f}s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
