"""Resolution side by side: onnxsym, onnxruntime's symbolic_shape_infer, onnx's
infer_shapes(data_prop=True) and onnx-shape-inference (PyPI, on onnx_ir), on the
corpus of real models in models/real/ (manifest.json) and the project's models/.

For every value a node of the main graph produces, each dim a tool writes counts as
resolved when it is a number or an expression over the graph inputs' dim_params; a
resolved dim is correct when it equals onnxruntime's at every size (the manifest's
sizes for a corpus model, two random ones for models/) on every feed (two random draws,
plus the manifest's ``more_feeds``, such as a detector's image that keeps fewer boxes:
tests/resolution.py's feed_variants), else wrong. A tool that raises
has refused the model. See tests/resolution.py.

    python bench/compare_resolution.py                 # corpus and models/
    python bench/compare_resolution.py --corpus        # the corpus only
    python bench/compare_resolution.py --untuned --markdown  # issue 35's families, per model
    python bench/compare_resolution.py MODEL.onnx ...  # given files (random sizes)
    python bench/compare_resolution.py --markdown      # also the tables of docs/comparison.md
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

import onnx

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]  # this checkout's onnxsym, and the scoring the tests share
from resolution import ROOT, TOOLS, UNTUNED_GROUPS, available, corpus, entry_runs, input_roots, run_tool_within  # noqa: E402


def project_models(paths):
    from onnxsym.commands.verify import default_assignments

    for path in paths:
        model = onnx.load(path)
        yield {"name": os.path.basename(path)[:-5], "group": "project models/", "path": path,
               "sizes": default_assignments(input_roots(model), seed=1), "feeds": {}}


def measure(entries, tools, out=sys.stdout, timeout=None):
    """Rows (name, group, tool, Score)."""
    rows = []
    print(f"{'model':32} {'tool':26} {'dims':>6} {'correct':>8} {'wrong':>6} {'unres':>6}", file=out)
    for e in entries:
        model = onnx.load(e["path"])
        try:
            sizes, runs = entry_runs(model, e)
        except Exception as exc:
            print(f"{e['name']:32} onnxruntime cannot run it: {str(exc).splitlines()[0][:120]}", file=out)
            continue
        for tool in tools:
            s = run_tool_within(tool, model, runs, sizes, timeout)
            rows.append((e["name"], e["group"], tool, s))
            flag = f"  REFUSED {s.error}" if s.refused else ""
            print(f"{e['name']:32} {tool:26} {s.total:6} {s.correct:8} {s.wrong:6} {s.unresolved:6}{flag}",
                  file=out, flush=True)
    return rows


def summary(rows, tools, key):
    """{group: {tool: [total, correct, wrong, refused models, models]}}"""
    agg = {}
    for _name, group, tool, s in rows:
        a = agg.setdefault(key(group), {}).setdefault(tool, [0, 0, 0, 0, 0])
        a[0] += s.total
        a[1] += s.correct
        a[2] += s.wrong
        a[3] += s.refused
        a[4] += 1
    return agg


def behind(rows):
    """Models where onnxsym has fewer correct dims than some peer, or refuses."""
    by = {}
    for name, _group, tool, s in rows:
        by.setdefault(name, {})[tool] = s
    out = []
    for name, scores in by.items():
        mine = scores.get("onnxsym")
        best = max((s.correct for t, s in scores.items() if t != "onnxsym"), default=0)
        if mine is not None and (mine.refused or mine.correct < best or mine.wrong):
            out.append((name, mine.correct, best, mine.wrong, mine.refused))
    return out


def markdown(rows, tools, out=sys.stdout):
    groups = summary(rows, tools, lambda g: g)
    print("| source | models | dims | " + " | ".join(tools) + " |", file=out)
    print("| --- | ---: | ---: | " + " | ".join("---" for _ in tools) + " |", file=out)
    order = sorted(groups, key=lambda g: (g == "project models/", g))
    for g in order + ["all"]:
        if g == "all":
            per = summary(rows, tools, lambda g: "all")["all"]
        else:
            per = groups[g]
        first = per[tools[0]]
        cells = []
        for t in tools:
            total, correct, wrong, refused, _ = per.get(t, [0, 0, 0, 0, 0])
            cell = f"{correct} ({100.0 * correct / max(total, 1):.1f}%)"
            if wrong:
                cell += f", **{wrong} wrong**"
            if refused:
                cell += f", {refused} refused"
            cells.append(cell)
        label = "**all**" if g == "all" else g
        print(f"| {label} | {first[4]} | {first[0]} | " + " | ".join(cells) + " |", file=out)


def _cell(s):
    if s.timed_out:
        return s.error
    cell = f"{s.correct} ({100.0 * s.correct / max(s.total, 1):.1f}%)"
    if s.wrong:
        cell += f", **{s.wrong} wrong**"
    if s.refused:
        cell += ", refused"
    return cell


def markdown_per_model(rows, tools, out=sys.stdout):
    """One row a model, grouped: each tool's correct dims (share), wrong dims, refusal."""
    by = {}
    for name, group, tool, s in rows:
        by.setdefault((group, name), {})[tool] = s
    print("| family | model | dims | " + " | ".join(tools) + " |", file=out)
    print("| --- | --- | ---: | " + " | ".join("---" for _ in tools) + " |", file=out)
    for (group, name), scores in sorted(by.items()):
        first = scores[tools[0]]
        cells = [_cell(scores[t]) for t in tools]
        print(f"| {group} | `{name}` | {first.total} | " + " | ".join(cells) + " |", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", help="model files (default: the corpus and models/*.onnx)")
    ap.add_argument("--corpus", action="store_true", help="the corpus only")
    ap.add_argument("--untuned", action="store_true", help="the corpus groups of issue 35 only (UNTUNED_GROUPS)")
    ap.add_argument("--markdown", action="store_true", help="print the summary as the table of docs/comparison.md")
    ap.add_argument("--timeout", type=float, help="seconds a tool may take on one model (else it counts as refused)")
    args = ap.parse_args(argv)
    tools = [t for t in TOOLS if available(t)]
    for t in TOOLS:
        if t not in tools:
            print(f"({t} is not installed: skipped)")
    if args.models:  # a corpus file keeps its manifest's sizes and feeds
        known = {os.path.realpath(e["path"]): e for e in corpus()}
        entries = [known.get(os.path.realpath(p)) or next(project_models([p])) for p in args.models]
    elif args.untuned:
        entries = [e for e in corpus() if e["group"] in UNTUNED_GROUPS]
    else:
        entries = corpus()
        if not args.corpus:
            entries += list(project_models(sorted(glob.glob(os.path.join(ROOT, "models", "*.onnx")))))
    rows = measure(entries, tools, timeout=args.timeout)
    print()
    for g, per in sorted(summary(rows, tools, lambda g: g).items()):
        for t, (total, correct, wrong, refused, n) in per.items():
            print(f"{g:22} {t:26} models {n:3} dims {total:6} correct {correct:6} "
                  f"({100.0 * correct / max(total, 1):5.1f}%) wrong {wrong:4} refused {refused}")
    for t, (total, correct, wrong, refused, n) in summary(rows, tools, lambda g: "ALL")["ALL"].items():
        print(f"{'ALL':22} {t:26} models {n:3} dims {total:6} correct {correct:6} "
              f"({100.0 * correct / max(total, 1):5.1f}%) wrong {wrong:4} refused {refused}")
    gaps = behind(rows)
    if gaps:
        print("\nonnxsym behind the best peer, wrong, or refusing:")
        for name, mine, best, wrong, refused in gaps:
            print(f"  {name}: onnxsym {mine} correct, best peer {best}, wrong {wrong}" + (", REFUSED" if refused else ""))
    if args.markdown:
        print()
        markdown(rows, tools)
        if args.untuned:
            print()
            markdown_per_model(rows, tools)


if __name__ == "__main__":
    main()
