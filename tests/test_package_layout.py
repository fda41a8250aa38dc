"""From a checkout, rules/ and cli.py are onnxsym.rules and onnxsym.cli (the wheel installs
them inside the package), and nothing else of the checkout is part of the package."""

import os
import subprocess
import sys
import zipfile

import pytest

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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel of this checkout, built once for the tests that read it."""
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out), ROOT], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (path,) = out.glob("onnxsym-*.whl")
    return path


def test_wheel_ships_py_typed_and_main_and_no_top_level_modules(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    # users' type checkers see onnxsym's annotations (PEP 561), and `python -m onnxsym` works installed
    assert "onnxsym/py.typed" in names and "onnxsym/__main__.py" in names
    assert "onnxsym/cli.py" in names and "onnxsym/rules/__init__.py" in names
    tops = {n.split("/")[0] for n in names}
    assert tops <= {"onnxsym", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}, tops


def _requires(wheel) -> list[str]:
    zf = zipfile.ZipFile(wheel)
    (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
    return [line.split(":", 1)[1].strip() for line in zf.read(meta).decode().splitlines()
            if line.startswith("Requires-Dist:")]


def test_installing_onnxsym_adds_no_onnxruntime_beside_a_users_own(wheel):
    # onnxruntime-gpu, -directml, -openvino provide the same `onnxruntime` module: a plain
    # requirement on "onnxruntime" would install the CPU build over it. Only an extra asks for it.
    requires = _requires(wheel)
    ort = [r for r in requires if r.lower().startswith("onnxruntime")]
    assert ort, requires  # the extra is there, for users without any onnxruntime
    assert all("extra ==" in r for r in ort), ort
    assert any(r.replace('"', "'").endswith("extra == 'onnxruntime'") for r in ort), ort
    # the core needs only these, none of which pulls in an onnxruntime
    core = sorted(r.split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in requires if "extra ==" not in r)
    assert core == ["click", "numpy", "onnx", "sympy"], core


# A process where no onnxruntime can be imported, whichever distribution would provide it.
NO_ORT = """
import sys
from importlib.abc import MetaPathFinder

class NoOnnxruntime(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "onnxruntime" or name.startswith("onnxruntime."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoOnnxruntime())
"""


def _without_onnxruntime(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", NO_ORT + code], cwd=cwd, capture_output=True, text=True)


def test_without_onnxruntime_annotate_works_and_verify_says_what_to_install(tmp_path):
    model = os.path.join(ROOT, "models", "cnn_tiny_ts.onnx")
    out = tmp_path / "cnn.sym.onnx"
    cli = "import sys\nfrom onnxsym.cli import main\nmain(sys.argv[1:])\n"
    # the main job needs no onnxruntime
    r = _without_onnxruntime(cli.replace("sys.argv[1:]", repr(["annotate", model, "-o", str(out)])), ROOT)
    assert r.returncode == 0, r.stderr
    assert out.exists() and "onnxruntime" not in r.stderr
    # a bound input is judged by onnxruntime where there is one; here by onnx's inference, and it says so
    r = _without_onnxruntime(cli.replace("sys.argv[1:]", repr(["annotate", model, "--bind", "batch=2", "-o", str(out),
                                                                "--force"])), ROOT)
    assert r.returncode == 0, r.stderr
    assert "judged by onnx's shape inference only" in r.stderr and "pip install onnxruntime" in r.stderr
    # verify: one line naming what to install, exit 2, no traceback
    r = _without_onnxruntime(cli.replace("sys.argv[1:]", repr(["verify", model])), ROOT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "no onnxruntime is installed" in r.stderr and "pip install onnxruntime" in r.stderr
    assert "onnxruntime-gpu" in r.stderr
    # the library raises the typed error, before it infers anything
    r = _without_onnxruntime(f"""
import onnxsym
from onnxsym.errors import MissingDependency
try:
    onnxsym.verify({model!r})
except MissingDependency as exc:
    print("missing:", exc)
""", ROOT)
    assert r.returncode == 0 and r.stdout.startswith("missing: verify runs the model in onnxruntime"), (r.stdout, r.stderr)
