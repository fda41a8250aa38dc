"""The pipelines that call onnxruntime's symbolic shape inference, on corpus models, with ORT SSI and
with ``onnxsym.ort_compat`` installed: a markdown table of what each ends with (docs/ort-compat.md).

    python bench/ort_compat_pipelines.py                 # the models tests/test_ort_compat_pipelines.py runs
    python bench/ort_compat_pipelines.py --pipeline slim --models hf_t5_ts hf_mistral_ts
    python bench/ort_compat_pipelines.py --all --worse --jsonl /tmp/rows.jsonl   # every model, every pipeline
    python bench/ort_compat_pipelines.py --all --worse --jsonl /tmp/rows.jsonl --skip-done /tmp/rows.jsonl  # resume
    python bench/ort_compat_pipelines.py --summary /tmp/rows.jsonl /tmp/more.jsonl   # counts per pipeline

A cell: "fails" and why; else the output's node count (fused ops for optimize_model), whether
onnxruntime runs it at the manifest's two sizes, and how many dims it declares that the run
contradicts. ``--all``: every corpus model and every file under models/ (by its path from models/,
at models/README.md's two sizes). ``--worse``: only the rows where onnxsym is worse than ORT SSI (a
failure where ORT SSI worked, more nodes, fewer of a fused op, a wrong dim more, an output that does
not run where ORT SSI's does, a shape inference that raised inside onnxslim or the float16 converter,
which catch it, where ORT SSI's did not), and a count of rows at the end. More nodes than where ORT
SSI raised inside such a pipeline are not counted: that pipeline went on without shapes.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
import warnings

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]  # this checkout's onnxsym, the tests' pipelines
import ort_pipelines as P  # noqa: E402
from resolution import corpus  # noqa: E402

PIPELINES = {
    "quantize": ("quant_pre_process + quantize_dynamic", P.quantize, P.QUANTIZE),
    "optimize": ("optimize_model (opt_level=0)", P.optimize, P.OPTIMIZE_FAST + P.OPTIMIZE_ENCDEC + P.OPTIMIZE_TYPES),
    "slim": ("onnxslim.slim", P.slim, P.SLIM_FAST + P.SLIM_CONSTANTS),
    "float16": ("OnnxModel.convert_float_to_float16", P.float16, P.FLOAT16),
}


def worse(theirs: P.Outcome, ours: P.Outcome, fused: bool) -> list[str]:
    """How the drop-in's outcome is worse than ORT SSI's (nothing: it is not)."""
    out = []
    if theirs.ok and not ours.ok:
        out.append("fails")
    if theirs.runs and not ours.runs:
        out.append("does not run")
    if ours.raised and not theirs.raised:
        out.append(f"its shape inference raised inside ({ours.raised[:60]})")
    # (more nodes than where ORT SSI raised inside the pipeline, which went on without its shapes, is
    # the price of the shapes: the float16 converter keeps the float32 inputs of TopK, Min, ... behind Casts)
    if theirs.ok and ours.ok and theirs.runs and ours.nodes > theirs.nodes and not fused and not theirs.raised:
        out.append(f"{ours.nodes - theirs.nodes} more nodes")
    # (fewer LayerNormalization is no loss where as many more became SkipLayerNormalization: a larger fusion)
    fewer = [op for op, n in theirs.fused.items() if ours.fused.get(op, 0) < n and
             ours.fused.get(f"Skip{op}", 0) - theirs.fused.get(f"Skip{op}", 0) < n - ours.fused.get(op, 0)]
    if fewer:
        out.append("fewer " + ", ".join(fewer))
    if len(ours.wrong) > len(theirs.wrong) or (ours.wrong and not theirs.wrong):
        out.append(f"{len(ours.wrong)} wrong dims ({ours.wrong[0]})")
    return out


def cell(o: P.Outcome, fused: bool) -> str:
    if not o.ok and (not fused or o.model is None):
        return f"fails: {o.error[:70]}"
    what = (", ".join(f"{n} {op}" for op, n in sorted(o.fused.items())) or f"no fusion, {o.nodes} nodes") if fused \
        else f"{o.nodes} nodes"
    if fused and not o.ok:
        what = f"shape helper fails; {what}"
    wrong = f", {len(o.wrong)} wrong dims" if o.wrong else ""
    if o.raised:
        what = f"its SSI raised {o.raised.split(':')[0]}, caught; {what}"
    return what + wrong + ("" if o.runs else " (does not run on CPU)" if o.runs is False else "")


def outcome(row: dict) -> P.Outcome:
    """A --jsonl row's outcome back (its wrong dims: the first five, then placeholders to the count)."""
    wrong = row["wrong"] + ["..."] * (row["n_wrong"] - len(row["wrong"]))
    return P.Outcome(row["ok"], row["error"], row["nodes"], row["fused"], row["runs"], wrong=wrong,
                     raised=row.get("raised", ""))


def summary(paths: list[str]) -> None:
    """Per pipeline, the counts over the --jsonl rows (a later row of a model replaces an earlier one)."""
    last: dict[tuple[str, str], dict] = {}
    for path in paths:
        with open(path) as f:
            for r in map(json.loads, filter(str.strip, f)):
                last[r["pipeline"], r["model"]] = r
    print("| pipeline | models | ORT SSI fails (optimizer: shape helper fails) | drop-in fails "
          "| output runs: ORT SSI / drop-in | drop-in fewer nodes (optimizer: more fused ops) | worse rows |")
    print("|---|---|---|---|---|---|---|")
    for key, (title, _, _) in PIPELINES.items():
        rows = [r for (k, _), r in last.items() if k == key]
        if not rows:
            continue
        pairs = [(outcome(r["ort"]), outcome(r["onnxsym"]), r["model"]) for r in rows]
        fused = key == "optimize"
        better = sum(sum(o.fused.values()) > sum(t.fused.values()) if fused else
                     t.ok and o.ok and o.nodes < t.nodes for t, o, _ in pairs)
        bad = [f"`{m}`: {'; '.join(w)}" for t, o, m in pairs if (w := worse(t, o, fused))]
        print(f"| {title} | {len(rows)} | {sum(not t.ok for t, _, _ in pairs)} | {sum(not o.ok for _, o, _ in pairs)} "
              f"| {sum(bool(t.runs) for t, _, _ in pairs)} / {sum(bool(o.runs) for _, o, _ in pairs)} | {better} "
              f"| {len(bad)}{': ' + ', '.join(bad) if bad else ''} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipeline", choices=sorted(PIPELINES), nargs="*")
    p.add_argument("--models", nargs="*")
    p.add_argument("--all", action="store_true", help="every corpus model and every file under models/")
    p.add_argument("--worse", action="store_true", help="only the rows where onnxsym is worse than ORT SSI")
    p.add_argument("--jsonl", help="also append one JSON object per row to this file")
    p.add_argument("--skip-done", nargs="*", default=[], metavar="JSONL",
                   help="skip the (pipeline, model) rows these --jsonl files already hold (to resume a run)")
    p.add_argument("--start-at", metavar="MODEL", help="skip each pipeline's models before this one")
    p.add_argument("--summary", nargs="+", metavar="JSONL", help="only count the rows of these --jsonl files")
    args = p.parse_args()
    if args.summary:
        summary(args.summary)
        return 0
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    os.chdir(tempfile.mkdtemp())  # ORT SSI saves sym_shape_infer_temp.onnx where it runs when it fails
    print("| pipeline | model | with ORT SSI | with onnxsym.ort_compat |")
    print("|---|---|---|---|")
    everything = [e["name"] for e in corpus()] + P.others() if args.all else None
    done = set()
    for path in args.skip_done:
        if os.path.exists(path):
            with open(path) as f:
                done |= {(r["pipeline"], r["model"]) for r in map(json.loads, filter(str.strip, f))}
    rows = bad = 0
    for key in args.pipeline or list(PIPELINES):
        title, run, names = PIPELINES[key]
        todo = args.models or everything or names
        if args.start_at:
            todo = todo[todo.index(args.start_at):] if args.start_at in todo else []
        for name in todo:
            if (key, name) in done:
                continue
            fused = key == "optimize"
            t0 = time.perf_counter()
            theirs = run(name, "ort")
            t1 = time.perf_counter()
            ours = run(name, "onnxsym")
            t2 = time.perf_counter()
            how = worse(theirs, ours, fused)
            rows, bad = rows + 1, bad + bool(how)
            if args.jsonl:
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps({"pipeline": key, "model": name, "worse": how, "seconds": [t1 - t0, t2 - t1],
                                        **({"model_type": P.OPTIMIZE.get(name, "bert")} if fused else {}),
                                        **{w: {"ok": o.ok, "error": o.error, "nodes": o.nodes, "fused": o.fused,
                                               "runs": o.runs, "wrong": o.wrong[:5], "n_wrong": len(o.wrong),
                                               "raised": o.raised}
                                           for w, o in (("ort", theirs), ("onnxsym", ours))}}) + "\n")
            if args.worse and not how:
                continue
            note = f" **worse: {'; '.join(how)}**" if how else ""
            print(f"| {title} | `{name}` | {cell(theirs, fused)} | {cell(ours, fused)}{note} |", flush=True)
    if args.worse:
        print(f"\n{bad} of {rows} rows worse with onnxsym")
    return 0


if __name__ == "__main__":
    sys.exit(main())
