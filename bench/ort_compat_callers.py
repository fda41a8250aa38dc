"""Olive's passes, NVIDIA ModelOpt's ONNX quantization and onnxruntime's packing-mode conversion
(tests/ort_callers.py), with ORT SSI and with ``onnxsym.ort_compat`` installed: a markdown table
(docs/ort-compat.md). Needs olive-ai and nvidia-modelopt (with onnx-graphsurgeon, polygraphy, lief,
onnxconverter-common, cppimport for its onnx part), which the project does not install.

    python bench/ort_compat_callers.py
    python bench/ort_compat_callers.py --caller modelopt --models bert_tiny_ts hf_vit_ts

A cell: "fails" and why; else the output's node count (and QuantizeLinear or PackedAttention
count), whether onnxruntime runs it at the sizes, dims the run contradicts, and how many times
onnxsym answered (``calls``: 0 means install() did not reach the caller).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import warnings

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]
import ort_callers as K  # noqa: E402

MODELS = ["bert_tiny_ts", "gpt_tiny_ts", "vit_tiny_ts", "cnn_tiny_ts", "whisper_tiny_ts", "hf_t5_ts"]
CALLERS = {
    "olive_fixed": ("Olive DynamicToFixedShape", K.olive_fixed_shape, MODELS),
    "olive_fp16": ("Olive OnnxFloatToFloat16", K.olive_float16, MODELS),
    "modelopt": ("ModelOpt quantize int8", K.modelopt_int8, MODELS),
    # (calibrate_per_node: one calibration session per tensor, minutes on a tiny model: --caller modelopt_per_node)
    "modelopt_per_node": ("ModelOpt quantize int8, calibrate_per_node", lambda n, w: K.modelopt_int8(n, w, True),
                          ["cnn_tiny_ts"]),
    "packing": ("convert_to_packing_mode", K.packing_mode, ["bert_tiny_ts", "fused_bert", "optimum_bert_encoder"]),
}


def cell(o) -> str:
    if not o.ok:
        return f"fails: {o.error[:70]}"
    what = f"{o.nodes} nodes" + "".join(f", {n} {op}" for op, n in sorted(o.fused.items()))
    if o.wrong:
        what += f", {len(o.wrong)} wrong dims"
    if o.runs is False:
        what += f" (does not run: {o.error[:60]})"
    if getattr(o, "calls", 0):
        what += f"; onnxsym answered {o.calls}x"
    return what


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--caller", choices=sorted(CALLERS), nargs="*")
    p.add_argument("--models", nargs="*")
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    os.chdir(tempfile.mkdtemp())
    print("| caller | model | with ORT SSI | with onnxsym.ort_compat |")
    print("|---|---|---|---|")
    for key in args.caller or [k for k in CALLERS if k != "modelopt_per_node"]:
        title, run, names = CALLERS[key]
        for name in args.models or names:
            theirs, ours = run(name, "ort"), run(name, "onnxsym")
            print(f"| {title} | `{name}` | {cell(theirs)} | {cell(ours)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
