"""Custom-op rules from outside onnxsym: `--rules MODULE` and the `onnxsym.rules` entry points.

Each run is a process of its own: a loaded rule stays registered for the rest of a process."""

import os
import subprocess
import sys
import textwrap

import pytest
from cli_models import ROOT, broken_bert, save

RULES = textwrap.dedent('''
    from onnxsym import Tensor, register_rule

    @register_rule("Mystery", domain="my.ops")
    def mystery(node):  # the query's bias added: the output is the shape of the larger input
        x = max(node.inputs, key=lambda t: len(t.shape))
        return [Tensor(x.dtype, x.shape)]
''')


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    return save(tmp_path_factory.mktemp("rules"), broken_bert(), "broken.onnx")


def onnxsym(*args, path=(), cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, path), ROOT])}
    return subprocess.run([sys.executable, "-m", "onnxsym", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env)


def test_without_the_rule_the_custom_op_fails_the_check(broken):
    p = onnxsym("check", broken)
    assert p.returncode == 1 and "no rule for my.ops::Mystery" in p.stdout


def test_rules_module_by_name_and_by_file(broken, tmp_path):
    (tmp_path / "team_rules.py").write_text(RULES)
    p = onnxsym("check", broken, "--rules", "team_rules", path=[tmp_path])
    assert p.returncode == 0 and ": ok: 0 unresolved" in p.stdout, p.stdout + p.stderr
    p = onnxsym("show", broken, "--unresolved", "--rules", tmp_path / "team_rules.py")
    assert p.returncode == 0 and "(no value matches)" in p.stdout, p.stdout + p.stderr


def test_a_rules_module_that_does_not_load_is_one_line_exit_2(broken, tmp_path):
    p = onnxsym("check", broken, "--rules", "no_such_rules_module")
    assert p.returncode == 2
    assert p.stderr == ("onnxsym: error: --rules no_such_rules_module: cannot load it "
                        "(ModuleNotFoundError: No module named 'no_such_rules_module')\n")
    (tmp_path / "bad_rules.py").write_text("raise RuntimeError('typo')\n")
    p = onnxsym("annotate", broken, "--rules", tmp_path / "bad_rules.py", "-o", tmp_path / "o.onnx")
    assert p.returncode == 2 and "cannot load it (RuntimeError: typo)" in p.stderr
    assert not (tmp_path / "o.onnx").exists()


def _distribution(folder, value):
    """An installed distribution in ``folder`` (a dist-info on sys.path) with an onnxsym.rules entry point."""
    dist = folder / "team_rules-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: team-rules\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[onnxsym.rules]\nteam = {value}\n")


def test_entry_point_module_loads_by_itself(broken, tmp_path):
    (tmp_path / "team_rules_pkg.py").write_text(RULES)
    _distribution(tmp_path, "team_rules_pkg")
    p = onnxsym("check", broken, path=[tmp_path])
    assert p.returncode == 0 and ": ok: 0 unresolved" in p.stdout, p.stdout + p.stderr


def test_entry_point_function_is_called(broken, tmp_path):
    body = RULES.replace('@register_rule("Mystery", domain="my.ops")', "")
    (tmp_path / "team_rules_fn.py").write_text(
        body + '\n\ndef register():\n    register_rule("Mystery", domain="my.ops")(mystery)\n')
    _distribution(tmp_path, "team_rules_fn:register")
    p = onnxsym("domain", broken, path=[tmp_path])
    assert p.returncode == 0, p.stderr
    assert onnxsym("check", broken, path=[tmp_path]).returncode == 0


def test_a_broken_entry_point_names_itself(broken, tmp_path):
    _distribution(tmp_path, "no_such_module_here")
    p = onnxsym("check", broken, path=[tmp_path])
    assert p.returncode == 2
    assert p.stderr.startswith("onnxsym: error: entry point 'team' (onnxsym.rules: no_such_module_here): cannot load it")


def test_help_loads_no_entry_point(tmp_path):
    _distribution(tmp_path, "no_such_module_here")
    p = onnxsym("check", "--help", path=[tmp_path])
    assert p.returncode == 0 and "--rules MODULE" in p.stdout


def test_entry_points_are_read_only_where_a_distribution_may_name_the_group(tmp_path, monkeypatch):
    """A command reads the entry points with importlib.metadata (about 70 ms to import) only
    where an entry_points.txt on sys.path mentions the group, or where it cannot tell (a zip);
    what it then finds is importlib.metadata's own answer."""
    from onnxsym import plugins

    other = tmp_path / "site"
    dist = other / "other_tool-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: other-tool\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[console_scripts]\nother = other:main\n")
    monkeypatch.setattr(sys, "path", [str(other), str(tmp_path / "missing")])
    assert not plugins._may_declare_group()
    assert plugins.entry_points() == []
    eggs = tmp_path / "eggs"
    egg = eggs / "Team_Rules-1.0.EGG-INFO"  # (any case, an egg-info as a setuptools develop install leaves it)
    egg.mkdir(parents=True)
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: team-rules\nVersion: 1.0\n")
    (egg / "entry_points.txt").write_text("[onnxsym.rules]\nteam = team_rules_pkg\n")
    monkeypatch.setattr(sys, "path", [str(other), str(eggs)])
    assert plugins._may_declare_group()
    assert [ep.name for ep in plugins.entry_points()] == ["team"]
    archive = tmp_path / "lib.zip"  # a file on sys.path: only importlib.metadata reads it
    archive.write_bytes(b"")
    monkeypatch.setattr(sys, "path", [str(other), str(archive)])
    assert plugins._may_declare_group()
