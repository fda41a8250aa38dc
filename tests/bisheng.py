"""bishengir-opt, the symbol dialect's own tool, found inside the installed ascendnpu-ir package."""

import os
import subprocess

import ascendnpuir

BISHENGIR_OPT = os.path.join(os.path.dirname(ascendnpuir.__file__), "bin", "bishengir-opt")


def opt(text: str, *passes: str, generic: bool = False) -> str:
    """``bishengir-opt --allow-unregistered-dialect PASSES`` of ``text``; fails the test on any error."""
    args = [BISHENGIR_OPT, "--allow-unregistered-dialect", *passes] + (["--mlir-print-op-generic"] if generic else [])
    r = subprocess.run(args, input=text, capture_output=True, text=True)
    assert r.returncode == 0, f"bishengir-opt {' '.join(passes)}: {r.stderr[:2000]}"
    return r.stdout


def try_opt(text: str, *passes: str):
    """(exit code, output, errors) of bishengir-opt."""
    r = subprocess.run([BISHENGIR_OPT, "--allow-unregistered-dialect", *passes], input=text, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr
