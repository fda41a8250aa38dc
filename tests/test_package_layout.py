"""From a checkout, rules/ and cli.py are onnxsym.rules and onnxsym.cli (the wheel installs
them inside the package), and nothing else of the checkout is part of the package."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = """
import importlib, os, onnxsym, onnxsym.rules, onnxsym.rules.nn, onnxsym.cli
print(os.path.dirname(onnxsym.__file__), onnxsym.rules.__file__, onnxsym.cli.__file__)
for name in ("tests", "bench", "models", "helpers"):
    try:
        importlib.import_module("onnxsym." + name)
        print("imported", name)
    except ModuleNotFoundError as exc:
        assert exc.name == "onnxsym." + name, exc
"""


def test_rules_and_cli_import_from_the_checkout_and_nothing_else_does():
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # this checkout's package, its rules/ and cli.py; tests/, bench/ and the rest are not onnxsym's
    assert r.stdout.split() == [os.path.join(ROOT, "onnxsym"), os.path.join(ROOT, "rules", "__init__.py"),
                                os.path.join(ROOT, "cli.py")]


def test_python_m_onnxsym_cli_runs_from_the_checkout():
    r = subprocess.run([sys.executable, "-m", "onnxsym.cli", "--version"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and "onnxsym, version" in r.stdout, r.stderr
