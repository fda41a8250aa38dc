"""Every MLIR text onnxsym writes for a model, judged by the tools: the check that
bench/mlir_styles.py runs on every model there is and tests/test_mlir_valid.py on a
representative subset (see bench/mlir_styles.py for what is judged)."""

from __future__ import annotations

import glob
import os
import subprocess

import onnxsym
from onnxsym.mlir import STYLES, to_mlir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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
    from resolution import corpus
    paths += [e["path"] for e in corpus(fetched=fetched)]
    return paths


def check(path: str, compile_torch: bool = False) -> dict[str, object]:
    """The problems of one model's texts (``ours``: onnxsym wrote invalid or wrong IR; ``tool``:
    a bishengir-opt pass failed on our valid text) and how many texts were judged."""
    ours: list[str] = []
    tool: list[str] = []
    judged = 0
    result = onnxsym.infer(path).within_domain()  # as `onnxsym mlir MODEL` and to_mlir(path)
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
