#!/usr/bin/env python
"""`domain` judged by onnxruntime on the corpus: every condition each model's domain states,
checked at its boundary (just inside runs with the inferred shapes, just outside fails or gives
other shapes; see onnxsym/commands/boundary.py). Corpus models (the fetched-only ones too, where
make_real.py has made them) start from the manifest's first sizes and feeds; models/*.onnx,
models/domain and models/optimized from 4 for every symbol.

    python bench/domain_boundary.py                 # every model
    python bench/domain_boundary.py NAME ...        # models whose file name contains NAME

Prints one line per condition and a total; exits 1 when a condition is too wide or too narrow.
"""

from __future__ import annotations

import glob
import os
import sys

import onnx

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]  # this checkout's onnxsym, and what the tests share
from resolution import ROOT, corpus, feeds_for, input_roots  # noqa: E402

from onnxsym.commands.boundary import check_model  # noqa: E402


def models() -> list[tuple[str, dict[str, int], dict]]:
    """(path, base sizes, feed spec) of every model judged."""
    out = [(e["path"], e["sizes"][0], e.get("feeds") or {}) for e in corpus()]  # (fetched ones where made)
    for pattern in ("models/*.onnx", "models/domain/*.onnx", "models/optimized/*.onnx"):
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            out.append((path, {r: 4 for r in input_roots(onnx.load(path, load_external_data=False))}, {}))
    return out


def main(names: list[str]) -> int:
    totals: dict[str, int] = {}
    for path, base, spec in models():
        if names and not any(n in os.path.basename(path) for n in names):
            continue
        model = onnx.load(path)
        try:
            outcomes = check_model(model, base, lambda b, m=model, s=spec: feeds_for(m, dict(b), s))
        except Exception as exc:  # a model the harness cannot feed: said, not counted
            print(f"{os.path.relpath(path, ROOT)}: not checked ({type(exc).__name__}: {str(exc)[:200]})", flush=True)
            continue
        for o in outcomes:
            totals[o.verdict] = totals.get(o.verdict, 0) + 1
            print(f"{os.path.relpath(path, ROOT)}: {o.verdict}: {o.condition}: {o.detail}", flush=True)
    print("total: " + ", ".join(f"{v} {k}" for k, v in sorted(totals.items())))
    return 1 if totals.get("too wide") or totals.get("too narrow") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
