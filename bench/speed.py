#!/usr/bin/env python
"""Speed and memory of onnxsym against its peers, side by side, on LLM-shaped graphs.

    python bench/speed.py [--repeat N] [--big-peers]
    python bench/speed.py --quick [--repeat N]   # start-up and annotate only, on models/, seconds

Models (made on first use, cached in bench/.cache; see bench_models.py): TorchScript
exports of a LLaMA-shaped model with 8, 32 and 96 layers (dynamic batch, seq, past),
and a 2.6 GB LLaMA-shaped model whose weights are external, in a sparse file.

Tools: onnxsym; onnxruntime's ``symbolic_shape_infer`` (auto_merge); onnx's C++
``infer_shapes(data_prop=True)``; onnx-shape-inference (PyPI), when
bench/.cache/osi-venv holds it (a venv that sees this environment's packages, so
that onnx and onnxruntime stay as they are)::

    python -m venv --system-site-packages bench/.cache/osi-venv
    bench/.cache/osi-venv/bin/pip install --no-deps onnx-shape-inference onnx-ir

Measured per model and tool, as CPU seconds (user + system) so that other work on a
shared machine does not count; every tool here runs on one thread, so on an idle
machine these are wall times:
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
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best counts")
    ap.add_argument("--big-peers", action="store_true",
                    help="also run onnxruntime's tool and onnx-shape-inference on the 2.6 GB model (slow, GBs)")
    ap.add_argument("--run-big", action="store_true",
                    help="then run the annotated 2.6 GB model in onnxruntime with its (all-zero) weights")
    ap.add_argument("--quick", action="store_true", help="only CLI start-up and annotate on models/llama_tiny_ts.onnx")
    ap.add_argument("--worker", nargs=2, metavar=("TOOL", "MODEL"), help=argparse.SUPPRESS)
    ap.add_argument("--job", nargs=2, metavar=("TOOL", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.repeat)
        return
    if args.job:
        launcher(args.job[0], args.job[1], args.repeat)
        return
    if args.quick:
        quick(args.repeat)
        return
    sys.path.insert(0, HERE)
    import bench_models
    subprocess.run([PY, "-m", "compileall", "-q", *(os.path.join(ROOT, p) for p in ("onnxsym", "rules", "cli.py"))],
                   check=True, stdout=subprocess.DEVNULL)
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
