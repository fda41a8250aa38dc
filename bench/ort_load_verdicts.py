"""onnxruntime's verdict on each light copy onnxsym's load check gives it, with constant folding
the one basic transformer (onnxsym.model.runtime.NOT_SHAPES, what the check asks first) and with
every basic transformer: a copy the second refuses must be refused by the first too (the check
asks a refusal again with every transformer, so that a copy the first alone refuses loads; those
are counted), and the check's verdict must be the second's on every copy.

The copies are those the load check makes while onnxsym annotates (``annotate`` and the
drop-in's ``infer_shapes``) the fuzzer's graphs for ``--seeds`` and, with ``--models``, every
model under models/; each distinct copy is judged once.

    python bench/ort_load_verdicts.py --seeds 0 3000 --models
    python bench/ort_load_verdicts.py --seeds 6515 6516 --save /tmp/copies   # keep the copies
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import sys
import time
import warnings

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]  # this checkout's onnxsym, the fuzzer

import onnx  # noqa: E402

import onnxsym  # noqa: E402
from onnxsym.model import runtime  # noqa: E402
from onnxsym.ort_compat import SymbolicShapeInference  # noqa: E402
from onnxsym.output import loadcheck  # noqa: E402


def copies_of(models, found: dict[bytes, bytes]) -> None:
    """Annotate each model both ways; ``found`` receives every copy onnxruntime is asked about."""
    asked = runtime.load_error

    def load_error(data: bytes, optimize: bool, all_basic: bool = False) -> str | None:
        if optimize:
            found.setdefault(hashlib.blake2b(data, digest_size=20).digest(), data)
        return asked(data, optimize, all_basic)

    loadcheck.load_error = load_error  # type: ignore[assignment]
    try:
        for m in models:
            for annotate in (onnxsym.annotate, SymbolicShapeInference.infer_shapes):
                loadcheck.forget_verdicts()
                try:
                    annotate(m)
                except Exception:  # noqa: BLE001  (a model onnxsym refuses asks nothing more)
                    pass
    finally:
        loadcheck.load_error = asked  # type: ignore[assignment]


def fuzz_models(lo: int, hi: int):
    import fuzzing

    for seed in range(lo, hi):
        try:
            yield fuzzing.random_model(seed)
        except Exception:  # noqa: BLE001  (a seed the generator cannot build)
            continue


def corpus_models():
    for root, _, files in os.walk(os.path.join(CHECKOUT, "models")):
        for name in sorted(files):
            if name.endswith(".onnx"):
                try:
                    yield onnx.load(os.path.join(root, name), load_external_data=False)
                except Exception:  # noqa: BLE001
                    continue


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", nargs=2, type=int, metavar=("FROM", "TO"), default=(0, 0))
    p.add_argument("--models", action="store_true", help="every model under models/ besides")
    p.add_argument("--save", metavar="DIR", help="write each copy there")
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    found: dict[bytes, bytes] = {}
    copies_of(fuzz_models(*args.seeds), found)
    if args.models:
        copies_of(corpus_models(), found)
    missed = refused = again = differ = 0
    spent = [0.0, 0.0]
    for key, data in found.items():
        t = time.process_time()
        folding = runtime.session_error(data, True, runtime.NOT_SHAPES)
        spent[0] += time.process_time() - t
        t = time.process_time()
        every = runtime.session_error(data, True, ())
        spent[1] += time.process_time() - t
        asked = runtime.load_error(data, True)
        refused += every is not None
        again += folding is not None and every is None
        if args.save:
            with open(os.path.join(args.save, key.hex() + ".onnx"), "wb") as f:
                f.write(data)
        if folding is None and every is not None:
            missed += 1
            print(f"{key.hex()}: loads with constant folding alone, refused with every basic transformer: {every!r}")
        if asked != every:
            differ += 1
            print(f"{key.hex()}: the check: {asked!r}\n    every basic transformer: {every!r}")
    print(f"{len(found)} copies, {refused} refused by every basic transformer; {missed} of those load with constant "
          f"folding alone; {again} refused by it alone (asked again); {differ} verdicts of the check differ; CPU s: "
          f"{spent[0]:.2f} constant folding alone, {spent[1]:.2f} every basic transformer")
    return 1 if missed or differ else 0

if __name__ == "__main__":
    sys.exit(main())
