"""Every MLIR text onnxsym writes, judged by the tools, on every model there is.

For each model (models/*.onnx, models/optimized, models/domain and the corpus of
models/real, fetched ones too when present), inferred once and narrowed by its domain as
``onnxsym mlir`` does:

- each symbol-dialect style (propagate, erased, encoding, unfolded), pretty and generic,
  must parse and verify in ``bishengir-opt`` (the pretty and generic texts the same module);
- the tool's passes of the default text (``--erase-symbol``, ``--symbol-to-encoding``,
  ``--unfold-symbolic-int``) must equal the matching style, and ``--propagate-symbol`` of the
  erased text must run. Where the tool's pass itself fails (it made invalid IR from valid
  text), that is counted as the tool's, and onnxsym's style must still verify;
- the torch dialect text must parse and verify in upstream MLIR with the torch dialect
  (``iree-opt``) and go through ``bishengir-opt --convert-torch-to-symbol``; with
  ``--compile``, also through ``iree-compile`` for the CPU (slow: minutes for the corpus).

    python bench/mlir_styles.py                 # all models; one line per model, then totals
    python bench/mlir_styles.py --only silero,yolo --compile

The tests run :func:`check` on a few representative models (tests/test_mlir_styles_sweep.py).
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import onnxsym  # noqa: E402
from onnxsym.mlir import STYLES, to_mlir  # noqa: E402

PASSES = {"erased": "--erase-symbol", "encoding": "--symbol-to-encoding", "unfolded": "--unfold-symbolic-int"}
CPU = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
       "--iree-llvmcpu-target-cpu=generic"]


def bishengir_opt() -> str:
    import ascendnpuir
    return os.path.join(os.path.dirname(ascendnpuir.__file__), "bin", "bishengir-opt")


def _run(args: list[str], text: str) -> tuple[int, str, str]:
    r = subprocess.run(args, input=text, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def opt(text: str, *passes: str) -> tuple[int, str, str]:
    return _run([bishengir_opt(), "--allow-unregistered-dialect", *passes], text)


def _first_error(err: str) -> str:
    return next((line.strip() for line in err.splitlines() if "error" in line), err.strip()[:200])[:300]


def model_paths(fetched: bool = True) -> list[str]:
    models = os.path.join(ROOT, "models")
    paths = sorted(glob.glob(os.path.join(models, "*.onnx")))
    for sub in ("optimized", "domain"):
        paths += sorted(glob.glob(os.path.join(models, sub, "*.onnx")))
    from bench.resolution import corpus
    paths += [e["path"] for e in corpus(fetched=fetched)]
    return paths


def check(path: str, compile_torch: bool = False) -> dict[str, object]:
    """The problems of one model's texts (``ours``: onnxsym wrote invalid or wrong IR; ``tool``:
    a bishengir-opt pass failed on our valid text) and how many texts were judged."""
    ours: list[str] = []
    tool: list[str] = []
    judged = 0
    result = onnxsym.infer(path)
    result.domain()  # as `onnxsym mlir MODEL` and to_mlir(path): the domain's ranges
    texts = {}
    for style in STYLES:
        for generic in (False, True):
            try:
                texts[style, generic] = to_mlir(result, style=style, generic=generic)
            except Exception as exc:  # an internal error (the printers' own check) is onnxsym's
                ours.append(f"{style}{' generic' if generic else ''}: {type(exc).__name__}: {exc}")
    parsed = {}
    for (style, generic), text in texts.items():
        rc, out, err = opt(text)
        judged += 1
        if rc:
            ours.append(f"{style}{' generic' if generic else ''}: {_first_error(err)}")
        else:
            parsed[style, generic] = out
    for style in STYLES:
        a, b = parsed.get((style, False)), parsed.get((style, True))
        if a is not None and b is not None and a != b:
            ours.append(f"{style}: the generic text is another module than the pretty one")
    default = texts.get(("propagate", False))
    if default is not None:
        for style, flag in PASSES.items():
            rc, out, err = opt(default, flag)
            judged += 1
            if rc:
                tool.append(f"{flag}: {_first_error(err)}")
            elif (style, False) in parsed and out != parsed[style, False]:
                ours.append(f"{style}: differs from bishengir-opt {flag} of the default")
    erased = texts.get(("erased", False))
    if erased is not None:
        rc, _, err = opt(erased, "--propagate-symbol")
        judged += 1
        if rc:
            tool.append(f"--propagate-symbol of erased: {_first_error(err)}")
    try:
        torch_text: str | None = to_mlir(result, dialect="torch", weights=compile_torch)
    except Exception as exc:
        ours.append(f"torch: {type(exc).__name__}: {exc}")
        torch_text = None
    if torch_text is not None:
        rc, _, err = _run(["iree-opt", "--mlir-print-op-generic", "-o", os.devnull], torch_text)
        judged += 1
        if rc:
            ours.append(f"torch (iree-opt): {_first_error(err)}")
        rc, _, err = opt(torch_text, "--convert-torch-to-symbol")
        judged += 1
        if rc:  # (it verified above: the pass's limit, such as !torch.str, as on the importer's text)
            tool.append(f"--convert-torch-to-symbol: {_first_error(err)}")
        if compile_torch:
            rc, _, err = _run(["iree-compile", *CPU, "-", "-o", os.devnull], torch_text)
            judged += 1
            if rc:
                tool.append(f"iree-compile: {'crashed ' if rc < 0 or rc > 128 else ''}{_first_error(err)}")
    return {"ours": ours, "tool": tool, "judged": judged}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated words of model file names")
    ap.add_argument("--compile", action="store_true", help="also iree-compile the torch text (slow)")
    args = ap.parse_args(argv)
    words = [w for w in args.only.split(",") if w]
    paths = [p for p in model_paths() if not words or any(w in os.path.basename(p) for w in words)]
    bad = tool_fail = judged = 0
    start = time.time()
    for p in paths:
        t0 = time.time()
        try:
            r = check(p, args.compile)
        except Exception as exc:  # inference itself failed: not this bench's subject, but said
            print(f"SKIP {os.path.relpath(p, ROOT)}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        judged += r["judged"]
        bad += bool(r["ours"])
        tool_fail += bool(r["tool"])
        status = "BAD " if r["ours"] else ("tool" if r["tool"] else "ok  ")
        print(f"{status} {os.path.relpath(p, ROOT):55} {r['judged']:3} texts {time.time() - t0:6.1f}s", flush=True)
        for line in r["ours"]:
            print(f"     ours: {line}")
        for line in r["tool"]:
            print(f"     tool: {line}")
    print(f"{len(paths)} models, {judged} texts judged, {bad} with invalid onnxsym text, "
          f"{tool_fail} where a tool failed on valid text; {time.time() - start:.0f}s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
