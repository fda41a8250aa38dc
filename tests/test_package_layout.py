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
    package, rules, cli = r.stdout.split()
    assert package == os.path.join(ROOT, "onnxsym")
    assert os.path.realpath(rules) == os.path.join(ROOT, "rules", "__init__.py")
    assert os.path.realpath(cli) == os.path.join(ROOT, "cli.py")


def test_python_m_onnxsym_cli_runs_from_the_checkout():
    r = subprocess.run([sys.executable, "-m", "onnxsym.cli", "--version"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and "onnxsym, version" in r.stdout, r.stderr


def test_python_m_onnxsym_is_the_command_line():
    r = subprocess.run([sys.executable, "-m", "onnxsym", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: onnxsym ") and "annotate" in r.stdout


def test_bare_command_prints_help_and_succeeds():
    r = subprocess.run([sys.executable, "-m", "onnxsym"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and "Commands:" in r.stdout, r.stderr
    bad = subprocess.run([sys.executable, "-m", "onnxsym", "nosuch"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "No such command" in bad.stderr


def test_wheel_ships_py_typed_and_main_and_no_top_level_modules(tmp_path):
    import zipfile

    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(tmp_path), ROOT], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("onnxsym-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    # users' type checkers see onnxsym's annotations (PEP 561), and `python -m onnxsym` works installed
    assert "onnxsym/py.typed" in names and "onnxsym/__main__.py" in names
    assert "onnxsym/cli.py" in names and "onnxsym/rules/__init__.py" in names
    tops = {n.split("/")[0] for n in names}
    assert tops <= {"onnxsym", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}, tops
