"""The command lines: ``python -m onnxsym.ort_compat`` against ``python -m
onnxruntime.tools.symbolic_shape_infer`` with the same flags, and ``python -m onnxsym.ort_compat -m
onnxruntime.quantization.preprocess`` against ``python -m onnxruntime.quantization.preprocess``, on
corpus models and models/ files: a markdown table (docs/ort-compat.md).

    python bench/ort_compat_cli.py --models optimum_bert_encoder hf_gpt2_ts silero_vad_16k_op15
    python bench/ort_compat_cli.py --models bert_tiny_ts --flags --auto_merge --guess_output_rank

A cell: the exit status (and the first line of a failure), how many values have a shape written,
whether onnxruntime runs the output at the manifest's two sizes, and how many dims the output
declares that the run contradicts (graph outputs and value_info, as bench/ort_compat_pipelines.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import onnx

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]  # this checkout's onnxsym, the tests' pipelines
import ort_pipelines as P  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": CHECKOUT}  # the subprocesses import this checkout's onnxsym


def run(cmd: list[str], out: str, e: dict, cwd: str) -> str:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, *cmd], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=3600)
    took = f"{time.perf_counter() - t0:.1f} s"
    if r.returncode != 0 or not os.path.exists(out):
        last = (r.stderr.strip().splitlines() or [""])[-1][:80]
        return f"exit {r.returncode}: {last} ({took})"
    m = onnx.load(out)
    shaped = sum(vi.type.tensor_type.HasField("shape") for vi in [*m.graph.value_info, *m.graph.output])
    wrong: list = []
    ran = P.runs_at_sizes(m, e, wrong)
    runs = "runs" if ran is True else f"does not run: {str(ran)[:60]}"
    bad = f", **{len(wrong)} wrong dims** ({wrong[0]})" if wrong else ""
    os.remove(out)
    return f"{shaped} shaped, {runs}{bad} ({took})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", required=True)
    p.add_argument("--flags", nargs=argparse.REMAINDER, default=[],
                   help="symbolic_shape_infer's flags for both (the rest of the command line)")
    args = p.parse_args()
    print("| command | model | ORT SSI | onnxsym.ort_compat |")
    print("|---|---|---|---|")
    for name in args.models:
        e = P.entry(name)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.onnx")
            ssi = ["--input", e["path"], "--output", out, *args.flags]
            pre = ["-m", "onnxruntime.quantization.preprocess", "--input", e["path"], "--output", out]
            for what, theirs, ours in (
                    (f"symbolic_shape_infer {' '.join(args.flags)}".strip(),
                     ["-m", "onnxruntime.tools.symbolic_shape_infer", *ssi], ["-m", "onnxsym.ort_compat", *ssi]),
                    ("quantization.preprocess", pre, ["-m", "onnxsym.ort_compat", *pre])):
                print(f"| {what} | `{name}` | {run(theirs, out, e, d)} | {run(ours, out, e, d)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
