"""The pipelines that call onnxruntime's symbolic shape inference, on corpus models, with ORT SSI and
with ``onnxsym.ort_compat`` installed: a markdown table of what each ends with (docs/ort-compat.md).

    python bench/ort_compat_pipelines.py                 # the models tests/test_ort_compat_pipelines.py runs
    python bench/ort_compat_pipelines.py --pipeline slim --models hf_t5_ts hf_mistral_ts

A cell: "fails" and why; else the output's node count (fused ops for optimize_model), and whether
onnxruntime runs it at the manifest's two sizes.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import warnings

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]  # this checkout's onnxsym, the tests' pipelines
import ort_pipelines as P  # noqa: E402

PIPELINES = {
    "quantize": ("quant_pre_process + quantize_dynamic", P.quantize, P.QUANTIZE),
    "optimize": ("optimize_model (opt_level=0)", P.optimize, P.OPTIMIZE_FAST + P.OPTIMIZE_ENCDEC),
    "slim": ("onnxslim.slim", P.slim, P.SLIM_FAST + P.SLIM_CONSTANTS),
    "float16": ("OnnxModel.convert_float_to_float16", P.float16, P.FLOAT16),
}


def cell(o: P.Outcome, fused: bool) -> str:
    if not o.ok and not fused:
        return f"fails: {o.error[:70]}"
    what = ", ".join(f"{n} {op}" for op, n in sorted(o.fused.items())) if fused else f"{o.nodes} nodes"
    if fused and not o.ok:
        what = f"shape helper fails; {what}"
    return what + ("" if o.runs else " (does not run on CPU)" if o.runs is False else "")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipeline", choices=sorted(PIPELINES), nargs="*")
    p.add_argument("--models", nargs="*")
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    os.chdir(tempfile.mkdtemp())  # ORT SSI saves sym_shape_infer_temp.onnx where it runs when it fails
    print("| pipeline | model | with ORT SSI | with onnxsym.ort_compat |")
    print("|---|---|---|---|")
    for key in args.pipeline or list(PIPELINES):
        title, run, names = PIPELINES[key]
        for name in args.models or names:
            theirs, ours = run(name, "ort"), run(name, "onnxsym")
            print(f"| {title} | `{name}` | {cell(theirs, key == 'optimize')} | {cell(ours, key == 'optimize')} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
