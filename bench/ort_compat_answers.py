"""The drop-in's answers on every committed corpus model (those bench/ort_compat_speed.py times),
to compare two trees byte for byte: ``infer_shapes``' model on a first and a second call, and the
``SymbolicShapeInferenceHelper``'s ``known_vi_`` after ``infer({})`` and after ``infer`` with a
mapping of the usual names. ``--all``: every model under models/ besides.

    cd TREE_A && python bench/ort_compat_answers.py /tmp/a.pkl     # each tree's own onnxsym
    cd TREE_B && python bench/ort_compat_answers.py /tmp/b.pkl
    python bench/ort_compat_answers.py --diff /tmp/a.pkl /tmp/b.pkl  # the models whose answers differ
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import sys
import tempfile
import warnings

MAPPING = {"batch_size": 4, "seq_len": 7, "sequence_length": 7, "batch": 3, "N": 5, "n": 5}


def answers(model) -> dict:
    from onnxsym.ort_compat import SymbolicShapeInference, SymbolicShapeInferenceHelper

    rec: dict = {}
    for k in ("first", "second"):
        try:
            r = SymbolicShapeInference.infer_shapes(model)
            rec[k] = None if r is None else r.SerializeToString(deterministic=True)
        except Exception as exc:  # noqa: BLE001  (a failure is an answer too)
            rec[k] = f"error: {exc}"[:300]
    for k, mapping in (("known_vi_ {}", {}), ("known_vi_ mapping", MAPPING)):
        try:
            h = SymbolicShapeInferenceHelper(model)
            ok = h.infer(mapping)
            rec[k] = (ok, {n: v.SerializeToString(deterministic=True) for n, v in h.known_vi_.items()})
        except Exception as exc:  # noqa: BLE001
            rec[k] = f"error: {exc}"[:300]
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="where to write this tree's answers (a pickle)")
    ap.add_argument("--all", action="store_true", help="every model under models/ besides the corpus")
    ap.add_argument("--diff", nargs=2, metavar=("A", "B"), help="compare two files written before")
    args = ap.parse_args()
    if args.diff:
        with open(args.diff[0], "rb") as fa, open(args.diff[1], "rb") as fb:
            a, b = pickle.load(fa), pickle.load(fb)
        bad = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        for k in bad:
            ra, rb = a.get(k) or {}, b.get(k) or {}
            print(k, "differs in", [part for part in sorted(set(ra) | set(rb)) if ra.get(part) != rb.get(part)])
        print(f"{len(a)} and {len(b)} models; {len(bad)} differ")
        return 1 if bad else 0
    if not args.out:
        ap.error("give OUT, or --diff A B")
    out_path = os.path.abspath(args.out)  # (before the chdir below)
    checkout = os.getcwd()  # (this tree's onnxsym, and its tests' corpus list)
    sys.path[:0] = [checkout, os.path.join(checkout, "tests")]
    import onnx
    from resolution import corpus

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    paths = {e["name"]: os.path.abspath(e["path"]) for e in corpus(fetched=False)}
    if args.all:
        known = set(paths.values())
        for root, _, files in os.walk(os.path.join(checkout, "models")):
            for name in sorted(files):
                path = os.path.join(root, name)
                if name.endswith(".onnx") and path not in known:
                    paths[os.path.relpath(path, checkout)] = path
    os.chdir(tempfile.mkdtemp())  # (ORT SSI, asked where onnxsym cannot, saves a file where it runs)
    out = {name: answers(onnx.load(path)) for name, path in sorted(paths.items())}
    with open(out_path, "wb") as f:
        pickle.dump(out, f)
    print(f"{len(out)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
