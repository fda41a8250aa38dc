#!/usr/bin/env python
"""Speed and memory of onnxsym where a person waits, each beside its yardstick.

    python bench/speed.py [--runs N] [--lines annotate,first,help,cost,ci]   # the table
    python bench/speed.py --scaling [--plot P]  # annotate at 8 to 192 layers beside onnx and onnxruntime's tool
    python bench/speed.py --peers [--repeat N] [--big-peers] [--run-big]   # warm and job against the peers
    python bench/speed.py --quick [--repeat N]  # start-up and annotate only, on models/, seconds

The table (the lines of issue 24): the whole ``annotate`` job against the floor at 8, 32
and 96 layers, on the 96-layer model annotated before (every value declared, as a CI gate
reads it) and on the 2.6 GB model; the first inference in a fresh process (import and
first call; warm: the next call) against onnx's C++ ``infer_shapes(data_prop=True)``;
``onnxsym --help`` and each command's help against a bare ``import click``; ``cost`` and
``domain`` (symbols unbound) against ``annotate`` of the same model; ``verify`` and
``check`` over models/ (what a CI run over 100 models costs). Each line runs its command
and its yardstick in turn (A B A B ..., after one warm-up of each) and gives the median
of the pairs' ratios: on a shared machine whose speed drifts, a ratio of runs made side by
side holds where times do not. Times are CPU seconds (user + system: other work on the
machine does not count; every tool here runs on one thread), peaks the process's resident
memory.

Models (made on first use, cached in bench/.cache; see bench_models.py): the shipped
LLaMA-shaped TorchScript export repeated to 8, 32, 96 and 192 layers (dynamic batch, seq,
past), and a 2.6 GB LLaMA-shaped model whose weights are external, in a sparse file. The
cost and domain lines need ``python models/real/make_real.py --only nudenet,rapidocr_v6``
(a YOLOv8n and a paddle OCR detector, fetched into models/real/fetched); without them
those lines are skipped.

Tools of --scaling and --peers: onnxsym; onnxruntime's ``symbolic_shape_infer``
(auto_merge); onnx's C++ ``infer_shapes(data_prop=True)``; onnx-shape-inference (PyPI),
when bench/.cache/osi-venv holds it (a venv that sees this environment's packages, so
that onnx and onnxruntime stay as they are)::

    python -m venv --system-site-packages bench/.cache/osi-venv
    bench/.cache/osi-venv/bin/pip install --no-deps onnx-shape-inference onnx-ir

--plot needs matplotlib (the `plot` extra: ``pip install ".[plot]"``).

Measured per model and tool in --peers:
- warm: the in-process call that turns a loaded model into an annotated one, after
  one warm-up call, best of N, in a fresh process per tool (onnxsym.annotate,
  SymbolicShapeInference.infer_shapes, onnx.shape_inference.infer_shapes,
  infer_symbolic_shapes on an onnx_ir model);
- job: the tool's command, from process start to saved file, best of N;
- peak: the job's peak resident memory (ru_maxrss of that process).
"floor" is a process that only imports onnx, loads the model (without external
data) and saves it: no tool can take less. onnxsym's bytecode is compiled first, as
``pip install`` leaves it (the peers' installed packages have theirs): where
PYTHONDONTWRITEBYTECODE is set, a job would otherwise compile onnxsym's sources on
every run (about 0.1 s). On the 2.6 GB model onnxruntime's tool
loads every weight (tens of seconds, gigabytes): it and onnx-shape-inference run
there only with --big-peers.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache")  # as in bench_models, which is imported only where needed

OSI_PYTHON = os.path.join(CACHE, "osi-venv", "bin", "python")
PY = sys.executable

# The whole job of each tool, as a command: {i} the model, {o} the output.
JOBS = {
    "floor": [PY, "-c", "import onnx, sys; onnx.save(onnx.load(sys.argv[1], load_external_data=False), sys.argv[2])",
              "{i}", "{o}"],
    "onnxsym": [PY, "-m", "onnxsym.cli", "annotate", "{i}", "-o", "{o}", "-q", "--force"],
    "onnx": [PY, "-c", "import onnx.shape_inference as s, sys; s.infer_shapes_path(sys.argv[1], sys.argv[2], data_prop=True)",
             "{i}", "{o}"],
    "ort": [PY, "-m", "onnxruntime.tools.symbolic_shape_infer", "--input", "{i}", "--output", "{o}", "--auto_merge"],
    "osi": [OSI_PYTHON, "-m", "onnx_shape_inference", "{i}", "-o", "{o}"],
}
JOBS["startup"] = [PY, "-m", "onnxsym.cli", "--version"]  # writes nothing: start-up alone
JOBS["click"] = [PY, "-c", "import click"]  # the yardstick of --help: a bare click program's start-up
HELP_COMMANDS = ["", "annotate", "check", "show", "explain", "verify", "domain", "cost", "mlir"]
for _c in HELP_COMMANDS:
    JOBS[f"help {_c}".strip()] = [PY, "-m", "onnxsym", *([_c] if _c else []), "--help"]
# Over 2 GB, onnxruntime's tool can only save with the weights written out again.
JOBS["ort_big"] = JOBS["ort"] + ["--save_as_external_data", "--all_tensors_to_one_file",
                                 "--external_data_location", "ort_big_weights.bin"]
NAMES = {"onnxsym": "onnxsym", "ort": "onnxruntime symbolic_shape_infer", "ort_big": "onnxruntime symbolic_shape_infer",
         "onnx": "onnx infer_shapes(data_prop)",
         "osi": "onnx-shape-inference", "floor": "floor (import onnx, load, save)"}


# ----------------------------------------------------------------------------- warm, in a worker


def _warm_call(tool: str, path: str):
    """A function that annotates the loaded model once."""
    import onnx

    if tool == "osi":
        import onnx_ir as ir
        from onnx_shape_inference import infer_symbolic_shapes

        proto = onnx.load(path, load_external_data=False)

        def run():
            model = ir.serde.deserialize_model(proto)  # it annotates in place: a fresh copy each time
            t = time.process_time()
            infer_symbolic_shapes(model)
            return time.process_time() - t
        return run
    model = onnx.load(path, load_external_data=(tool == "ort"))
    if tool == "onnxsym":
        import onnxsym
        fn = lambda: onnxsym.annotate(model)  # noqa: E731
    elif tool == "onnx":
        from onnx.shape_inference import infer_shapes
        fn = lambda: infer_shapes(model, data_prop=True)  # noqa: E731
    else:
        import logging

        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
        logging.disable(logging.WARNING)
        fn = lambda: SymbolicShapeInference.infer_shapes(model, auto_merge=True)  # noqa: E731

    def run():
        t = time.process_time()
        fn()
        return time.process_time() - t
    return run


def worker(tool: str, path: str, repeat: int) -> None:
    if tool == "count":
        import onnx
        print(json.dumps(len(onnx.load(path, load_external_data=False).graph.node)))
        return
    run = _warm_call(tool, path)
    run()
    print(json.dumps(min(run() for _ in range(repeat))))


def _child(args, python=PY):
    out = subprocess.run([python, __file__, *args], cwd=ROOT, env=_env(), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr.strip()[-500:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def warm(tool: str, path: str, repeat: int) -> float:
    tool = "ort" if tool == "ort_big" else tool
    try:
        return _child(["--worker", tool, path, "--repeat", str(repeat)], OSI_PYTHON if tool == "osi" else PY)
    except RuntimeError as exc:
        print(f"{tool} failed in process: {str(exc)[-200:]}")
        return float("nan")


# ----------------------------------------------------------------------------- whole job


def _env():
    return dict(os.environ, PYTHONPATH=ROOT)


def job(tool: str, path: str, repeat: int):
    """(best CPU seconds, peak resident MB) of the tool's command, measured from a
    small launcher process: a child's peak memory starts at its parent's size."""
    try:
        return _child(["--job", tool, path, "--repeat", str(repeat)])
    except RuntimeError as exc:
        print(f"{tool} failed: {str(exc)[-200:]}")
        return float("nan"), float("nan")


def launcher(tool: str, path: str, repeat: int) -> None:
    best, peak = float("inf"), 0.0
    folder = os.path.dirname(path)  # outputs beside the model, so that its weights resolve
    before = set(os.listdir(folder))
    out = os.path.join(folder, f"bench_{tool}_{os.getpid()}.onnx")
    cmd = [a.format(i=path, o=out) for a in JOBS[tool]]
    try:
        for _ in range(repeat):
            p = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(p.pid, 0)
            elapsed = usage.ru_utime + usage.ru_stime
            err = p.stderr.read().decode(errors="replace")
            p.stderr.close()
            if status != 0 or ("{o}" in JOBS[tool] and not os.path.exists(out)):
                raise RuntimeError(f"{tool} failed on {path}: {err.strip()[-300:]}")
            best, peak = min(best, elapsed), max(peak, usage.ru_maxrss / 1024)
    finally:
        for name in set(os.listdir(folder)) - before:  # the output, and weights a tool wrote out
            os.unlink(os.path.join(folder, name))
    print(json.dumps([best, peak]))


# ----------------------------------------------------------------------------- side by side

# The first inference in a fresh process: import the tool, annotate the loaded model once
# (cold), then again (warm); CPU seconds of each, as JSON on the last line.
FIRST = r"""
import json, sys, time
import onnx
model = onnx.load(sys.argv[2])
t = time.process_time()
if sys.argv[1] == "onnxsym":
    import onnxsym
    run = lambda: onnxsym.annotate(model)
else:
    from onnx.shape_inference import infer_shapes
    run = lambda: infer_shapes(model, data_prop=True)
run()
cold = time.process_time() - t
t = time.process_time()
run()
print(json.dumps([cold, time.process_time() - t]))
"""


def pair_launcher(a: list[str], b: list[str], runs: int, ok: tuple[int, ...]) -> None:
    """A and B in turn, after one warm-up each: the medians of A, of B and of A/B pair by pair."""
    import resource
    import statistics

    def once(cmd):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode not in ok:
            raise RuntimeError(f"{' '.join(cmd[:6])}... exited {p.returncode}: {p.stderr.decode()[-400:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        # ru_maxrss of the children is their largest so far: exact for the largest, a floor for the rest
        return cpu, after.ru_maxrss / 1024, p.stdout.decode(errors="replace")
    once(a), once(b)
    rows = [(once(a), once(b)) for _ in range(runs)]
    med = statistics.median
    doc = {"a": med(x[0] for x, _ in rows), "b": med(y[0] for _, y in rows),
           "ratio": med(x[0] / y[0] for x, y in rows), "min": min(x[0] / y[0] for x, y in rows),
           "max": max(x[0] / y[0] for x, y in rows), "out_a": [x[2] for x, _ in rows], "out_b": [y[2] for _, y in rows]}
    print(json.dumps(doc))


def paired(a: list[str], b: list[str], runs: int, ok=(0,)) -> dict:
    """Run A and B side by side in a fresh launcher (see pair_launcher); peaks come from
    separate single runs (each in its own launcher, whose children's largest is theirs)."""
    doc = _child(["--pair", json.dumps([a, b, list(ok)]), "--repeat", str(runs)])
    doc["peak_a"] = _child(["--peak", json.dumps([a, list(ok)])])
    doc["peak_b"] = _child(["--peak", json.dumps([b, list(ok)])])
    return doc


def peak_launcher(cmd: list[str], ok: tuple[int, ...]) -> None:
    import resource
    p = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True)
    if p.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd[:6])}... exited {p.returncode}: {p.stderr.decode()[-400:]}")
    print(json.dumps(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))


def _line(what: str, yardstick: str, doc: dict, target: str = "", extra: str = "") -> None:
    print(f"| {what} | {doc['a']:.3f} s, {doc['peak_a']:.0f} MB | {yardstick} | {doc['b']:.3f} s, "
          f"{doc['peak_b']:.0f} MB | {doc['ratio']:.2f}x ({doc['min']:.2f}-{doc['max']:.2f}) | {target} |{extra}", flush=True)


LINES = ("annotate", "first", "help", "cost", "ci")


def table(runs: int, lines=LINES) -> None:
    """Each line of issue 24 beside its yardstick, in one run (``lines``: those groups only)."""
    sys.path.insert(0, HERE)
    import bench_models
    _compile()
    started = time.perf_counter()
    print("CPU seconds and peak MB, medians; ratio: the median of A/B over pairs run in turn (min-max)\n")
    print("| onnxsym | A | yardstick | B | A / B | target |")
    print("| --- | --- | --- | --- | --- | --- |")
    out = os.path.join(CACHE, "bench_out.onnx")
    floor = lambda path, o: [x.format(i=path, o=o) for x in JOBS["floor"]]  # noqa: E731
    annotate = lambda path, o: [x.format(i=path, o=o) for x in JOBS["onnxsym"]]  # noqa: E731
    for layers in (8, 32, 96) if "annotate" in lines else ():
        path = bench_models.llama_layers(layers)
        _line(f"`annotate` job, {layers}-layer LLaMA", "onnx.load + onnx.save", paired(
            annotate(path, out), floor(path, os.path.join(CACHE, "bench_floor.onnx")), runs), "<= 1.3x")
    if "annotate" in lines:  # a model annotated before (a CI gate checks those): every value declared
        path = bench_models.llama_layers(96)
        again = os.path.join(CACHE, "llama_96l_annotated.onnx")
        if not os.path.exists(again):
            subprocess.run(annotate(path, again), cwd=ROOT, env=_env(), check=True)
        _line("`annotate` job, 96-layer LLaMA annotated before", "onnx.load + onnx.save", paired(
            annotate(again, out), floor(again, os.path.join(CACHE, "bench_floor.onnx")), runs), "(none set)")
        big = bench_models.big_llama()
        folder = os.path.dirname(big)
        try:
            _line("`annotate` job, 2.6 GB external weights", "onnx.load + onnx.save", paired(
                annotate(big, os.path.join(folder, "bench_out.onnx")),
                floor(big, os.path.join(folder, "bench_floor.onnx")), runs), "<= 1.3x")
        finally:
            for name in ("bench_out.onnx", "bench_floor.onnx"):  # (beside the weights, as they must be)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(folder, name))
    for layers in (8, 96) if "first" in lines else ():
        path = bench_models.llama_layers(layers)
        doc = paired([PY, "-c", FIRST, "onnxsym", path], [PY, "-c", FIRST, "onnx", path], runs)
        first = [json.loads(o.strip().splitlines()[-1]) for o in doc["out_a"]]
        yard = [json.loads(o.strip().splitlines()[-1]) for o in doc["out_b"]]
        ratios = sorted(x[0] / y[0] for x, y in zip(first, yard))
        warm = sorted(x[1] / y[1] for x, y in zip(first, yard))
        med = lambda xs: xs[len(xs) // 2]  # noqa: E731
        print(f"| first inference in a process, {layers} layers (import + first annotate) | "
              f"{med(sorted(x[0] for x in first)):.3f} s (warm {med(sorted(x[1] for x in first)):.3f} s) | "
              f"onnx `infer_shapes(data_prop=True)` | {med(sorted(y[0] for y in yard)):.3f} s "
              f"(warm {med(sorted(y[1] for y in yard)):.3f} s) | {med(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f}); "
              f"warm {med(warm):.2f}x | <= 1x |", flush=True)
    if "help" in lines:
        click = JOBS["click"]
        helps = {c: paired(JOBS[f"help {c}".strip()], click, runs) for c in HELP_COMMANDS}
        _line("`onnxsym --help`", "`python -c 'import click'`", helps[""], "<= 2x")
        worst = max(HELP_COMMANDS[1:], key=lambda c: helps[c]["ratio"])
        _line(f"slowest command help: `onnxsym {worst} --help`", "`python -c 'import click'`", helps[worst], "<= 2x")
    fetched = os.path.join(ROOT, "models", "real", "fetched")
    for cmd, name, label in (("cost", "nudenet_yolov8n.onnx", "YOLOv8n (nudenet)"),
                             ("domain", "paddle_ppocrv6_det.onnx", "paddle OCR detector (rapidocr v6)"))[
                                 :2 if "cost" in lines else 0]:
        path = os.path.join(fetched, name)
        if not os.path.exists(path):
            print(f"| `{cmd}` of a {label} | skipped: {os.path.relpath(path, ROOT)} not fetched | | | | |")
            continue
        _line(f"`{cmd}` of a {label}, symbols unbound", "`annotate` of the same model",
              paired([PY, "-m", "onnxsym.cli", cmd, path], annotate(path, out), runs), "<= 2x")
    folder = sorted(glob.glob(os.path.join(ROOT, "models", "*.onnx")))
    n = len(folder)
    # verify: one process per model, as a CI loop runs it; check: one process for the folder
    verify = [PY, "-c", "import subprocess, sys; [subprocess.run([sys.executable, '-m', 'onnxsym.cli', 'verify', m], "
              "stdout=subprocess.DEVNULL) for m in sys.argv[1:]]", *folder]
    check = [PY, "-m", "onnxsym.cli", "check", "-q", "-j", "2", *folder]
    for what, cmd in (("verify", verify), ("check", check)) if "ci" in lines else ():
        doc = paired(cmd, floor(folder[0], os.path.join(CACHE, "bench_floor.onnx")), max(1, runs // 2), ok=(0, 1))
        print(f"| `{what}` over models/ ({n} models{', one process each' if what == 'verify' else ', one process'}) | "
              f"{doc['a']:.2f} s, {doc['peak_a']:.0f} MB | | | 100 models: about {doc['a'] * 100 / n:.0f} s CPU | |",
              flush=True)
    if os.path.exists(out):
        os.unlink(out)
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")


def _compile() -> None:
    subprocess.run([PY, "-m", "compileall", "-q", *(os.path.join(ROOT, p) for p in ("onnxsym", "rules", "cli.py"))],
                   check=True, stdout=subprocess.DEVNULL)


# ----------------------------------------------------------------------------- scaling

SCALING_LAYERS = (8, 32, 96, 192)


def scaling(repeat: int, plot: str | None) -> None:
    """annotate's job at 8 to 192 layers beside onnx's and onnxruntime's: time and peak."""
    sys.path.insert(0, HERE)
    import bench_models
    _compile()
    tools = ["onnxsym", "floor", "onnx", "ort"]
    rows: dict = {}
    print("| layers | nodes | " + " | ".join(f"{NAMES[t]} s, MB" for t in tools) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in tools) + " |")
    for layers in SCALING_LAYERS:
        path = bench_models.llama_layers(layers)
        n = _child(["--worker", "count", path])
        rows[layers] = {"nodes": n, **{t: job(t, path, repeat) for t in tools}}
        print(f"| {layers} | {n} | " + " | ".join(f"{rows[layers][t][0]:.2f} s, {rows[layers][t][1]:.0f} MB"
                                                   for t in tools) + " |", flush=True)
    first, last = rows[SCALING_LAYERS[0]], rows[SCALING_LAYERS[-1]]
    extra = {t: (last[t][0] - first[t][0]) / (last["nodes"] - first["nodes"]) * 1e6 for t in tools}
    print("time per added node: " + ", ".join(f"{NAMES[t]} {extra[t]:.1f} us" for t in tools))
    mid = rows[96]
    for t in ("onnxsym", "onnx", "ort"):  # linear: 96 layers on the line from 8 to 192
        line = first[t][0] + (last[t][0] - first[t][0]) * (mid["nodes"] - first["nodes"]) / (last["nodes"] - first["nodes"])
        print(f"{NAMES[t]}: 96 layers took {mid[t][0] / line:.2f}x the straight line from 8 to 192 layers")
    if plot:
        _plot(rows, tools, plot)


def _plot(rows: dict, tools: list[str], where: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nodes = [rows[k]["nodes"] for k in SCALING_LAYERS]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for t in tools:
        ax1.plot(nodes, [rows[k][t][0] for k in SCALING_LAYERS], marker="o", label=NAMES[t])
        ax2.plot(nodes, [rows[k][t][1] for k in SCALING_LAYERS], marker="o", label=NAMES[t])
    ax1.set(xlabel="nodes (8, 32, 96, 192 layers)", ylabel="CPU seconds, whole job", title="time")
    ax2.set(xlabel="nodes (8, 32, 96, 192 layers)", ylabel="peak resident MB", title="peak memory")
    for ax in (ax1, ax2):
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    ax1.legend(fontsize=8)
    fig.suptitle("annotate a LLaMA-shaped export: the whole job, process start to saved file")
    fig.tight_layout()
    fig.savefig(where, dpi=100)
    print(f"plotted {where}")


# ----------------------------------------------------------------------------- report


def measure(label, path, tools, repeat):
    n = _child(["--worker", "count", path])
    print(f"\n## {label}: {n} nodes ({os.path.relpath(path, ROOT)})", flush=True)
    rows = {}
    for tool in tools:
        w = warm(tool, path, repeat) if tool != "floor" else None
        j, m = job(tool, path, repeat)
        rows[tool] = (w, j, m)
    print("| tool | warm s | job s | peak MB | warm: tool / onnxsym | job: tool / onnxsym | peak: tool / onnxsym |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    ws, js, ms = rows["onnxsym"]
    for tool, (w, j, m) in rows.items():
        wr = "" if w is None else f"{w / ws:.2f}x"
        print(f"| {NAMES[tool]} | {'' if w is None else f'{w:.3f}'} | {j:.2f} | {m:.0f} | {wr} | {j / js:.2f}x | {m / ms:.2f}x |")
    fj, fm = rows["floor"][1:]
    print(f"onnxsym job / floor: {js / fj:.2f}x (target <= 1.3x); peak / floor: {ms / fm:.2f}x (target <= 1.5x)")
    return n, rows


def run_annotated(path: str) -> None:
    """Annotate beside the weights, then load and run the result in onnxruntime."""
    out = os.path.join(os.path.dirname(path), "model.sym.onnx")
    subprocess.run([a.format(i=path, o=out) for a in JOBS["onnxsym"]], cwd=ROOT, env=_env(), check=True)
    code = ("import onnxruntime as ort, numpy as np, sys; "
            "s = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider']); "
            "print(s.run(None, {'input_ids': np.array([[1, 2, 3]], np.int64)})[0].shape)")
    try:
        r = subprocess.run([PY, "-c", code, out], capture_output=True, text=True, check=True)
        print(f"annotated 2.6 GB model run in onnxruntime with its weights: logits {r.stdout.strip()}")
    finally:
        os.unlink(out)


def quick(repeat: int) -> None:
    """CLI start-up (``onnxsym --version``) and annotate (job and warm) on the shipped
    LLaMA export: the numbers a change to what onnxsym imports would move. Also says
    whether annotating imported sympy (it must not: only the bridge and cost use it)."""
    path = os.path.join(ROOT, "models", "llama_tiny_ts.onnx")
    code = ("import sys, time, onnx, onnxsym; m = onnx.load(sys.argv[1]); onnxsym.annotate(m); "
            "t = time.process_time(); [onnxsym.annotate(m) for _ in range(20)]; "
            "print((time.process_time() - t) / 20, 'sympy' in sys.modules)")
    warm_s, sympy_loaded = 0.0, False
    for _ in range(repeat):
        out = subprocess.run([PY, "-c", code, path], cwd=ROOT, env=_env(), capture_output=True, text=True, check=True)
        w, loaded = out.stdout.split()
        warm_s = min(warm_s or float("inf"), float(w))
        sympy_loaded = sympy_loaded or loaded == "True"
    startup = _child(["--job", "startup", path, "--repeat", str(repeat)])[0]
    annotate_job = job("onnxsym", path, repeat)[0]
    print(f"start-up (onnxsym --version): {startup:.3f} s CPU; "
          f"annotate {os.path.basename(path)}: job {annotate_job:.3f} s, warm {warm_s * 1000:.1f} ms; "
          f"sympy imported by annotate: {sympy_loaded}")
    click_s = _child(["--job", "click", path, "--repeat", str(repeat)])[0]
    helps = {c: _child(["--job", f"help {c}".strip(), path, "--repeat", str(repeat)])[0] for c in HELP_COMMANDS}
    worst = max(helps, key=helps.get)
    print(f"help: onnxsym --help {helps[''] / click_s:.2f}x a bare `import click` ({click_s:.3f} s CPU); "
          f"slowest command help `{worst or '--help'}` {helps[worst] / click_s:.2f}x (target <= 2x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="pairs per line of the table")
    ap.add_argument("--lines", default=",".join(LINES),
                    help=f"the table's groups of lines to run, of {','.join(LINES)} (default: all)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement of --peers and --scaling; the best counts")
    ap.add_argument("--peers", action="store_true", help="warm and job against the peers at 8, 32, 96 layers and 2.6 GB")
    ap.add_argument("--big-peers", action="store_true",
                    help="also run onnxruntime's tool and onnx-shape-inference on the 2.6 GB model (slow, GBs)")
    ap.add_argument("--run-big", action="store_true",
                    help="then run the annotated 2.6 GB model in onnxruntime with its (all-zero) weights")
    ap.add_argument("--scaling", action="store_true", help="annotate at 8, 32, 96, 192 layers beside onnx and ort")
    ap.add_argument("--plot", metavar="PNG", help="with --scaling: plot it there (needs matplotlib)")
    ap.add_argument("--quick", action="store_true", help="only CLI start-up and annotate on models/llama_tiny_ts.onnx")
    ap.add_argument("--worker", nargs=2, metavar=("TOOL", "MODEL"), help=argparse.SUPPRESS)
    ap.add_argument("--job", nargs=2, metavar=("TOOL", "MODEL"), help=argparse.SUPPRESS)
    ap.add_argument("--pair", help=argparse.SUPPRESS)
    ap.add_argument("--peak", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.repeat)
    elif args.job:
        launcher(args.job[0], args.job[1], args.repeat)
    elif args.pair:
        a, b, ok = json.loads(args.pair)
        pair_launcher(a, b, args.repeat, tuple(ok))
    elif args.peak:
        cmd, ok = json.loads(args.peak)
        peak_launcher(cmd, tuple(ok))
    elif args.quick:
        quick(args.repeat)
    elif args.scaling:
        scaling(args.repeat, args.plot)
    elif args.peers:
        peers(args)
    else:
        table(args.runs, tuple(args.lines.split(",")))


def peers(args) -> None:
    sys.path.insert(0, HERE)
    import bench_models
    _compile()
    peers = ["onnx", "ort"] + (["osi"] if os.path.exists(OSI_PYTHON) else [])
    if "osi" not in peers:
        print("onnx-shape-inference: not installed in bench/.cache/osi-venv (see this script's doc); skipped")
    started = time.perf_counter()
    results = {}
    for layers in (8, 32, 96):
        path = bench_models.llama_layers(layers)
        results[layers] = measure(f"LLaMA-shaped, {layers} layers, TorchScript export", path,
                                  ["onnxsym", "floor"] + peers, args.repeat)
    big = bench_models.big_llama()
    weights = os.path.getsize(os.path.join(os.path.dirname(big), "weights.bin"))
    measure(f"LLaMA-shaped, {weights / 1e9:.1f} GB of external weights", big,
            ["onnxsym", "floor", "onnx"] + (["ort_big"] + peers[2:] if args.big_peers else []), args.repeat)
    if args.run_big:
        run_annotated(big)
    (n8, r8), (n96, r96) = results[8], results[96]
    print(f"\nonnxsym, 96 layers / 8 layers ({n96 / n8:.1f}x the nodes): warm {r96['onnxsym'][0] / r8['onnxsym'][0]:.1f}x, "
          f"job {r96['onnxsym'][1] / r8['onnxsym'][1]:.1f}x, peak {r96['onnxsym'][2] / r8['onnxsym'][2]:.1f}x "
          f"(target <= 13x)")
    print(f"96 layers, warm: onnxruntime's tool / onnxsym {r96['ort'][0] / r96['onnxsym'][0]:.1f}x (target >= 10x), "
          f"onnx / onnxsym {r96['onnx'][0] / r96['onnxsym'][0]:.2f}x (target >= 1x)")
    print(f"benchmark took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
