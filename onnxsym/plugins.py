"""Rules for custom operators from outside onnxsym: modules named on the command line
(``--rules MODULE``) and the ``onnxsym.rules`` entry points of installed distributions.

A rule module registers its rules when imported (``@onnxsym.register_rule``). An entry
point names such a module (``my_team.onnx_rules``) or a function that registers them
(``my_team.onnx_rules:register``), which is called with no argument. A team's package
that declares one::

    [project.entry-points."onnxsym.rules"]
    my_team = "my_team.onnx_rules"

has its rules loaded by every onnxsym command, in CI and pre-commit, with no wrapper
script. A module or entry point that fails to load is an error naming it: inferring
without the rules a user expects would report dims as unresolved for the wrong reason."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys

from .errors import UserInputError

GROUP = "onnxsym.rules"

_loaded: set[str] = set()  # entry points and modules loaded in this process


def _failure(what: str, option: str, exc: BaseException) -> UserInputError:
    why = f"{type(exc).__name__}: {exc}"
    return UserInputError(f"{what}: cannot load it ({why})", f"{option}: cannot load it ({why})")


def load_module(name: str) -> None:
    """Import ``name``, a module (``my_team.rules``) or a Python file (``tools/rules.py``)."""
    if name in _loaded:
        return
    try:
        if name.endswith(".py"):
            if not os.path.isfile(name):
                raise FileNotFoundError(f"no such file {name!r}")
            mod_name = "onnxsym_user_rules_" + os.path.splitext(os.path.basename(name))[0]
            spec = importlib.util.spec_from_file_location(mod_name, name)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = module
            spec.loader.exec_module(module)
        else:
            importlib.import_module(name)
    except Exception as exc:
        raise _failure(f"rules module {name!r}", f"--rules {name}", exc) from None
    _loaded.add(name)


def entry_points() -> list:
    """The installed ``onnxsym.rules`` entry points."""
    if not _may_declare(GROUP):
        return []
    from importlib.metadata import entry_points as found

    return list(found(group=GROUP))


def _may_declare(group: str) -> bool:
    """Whether an installed distribution may declare entry points of ``group``: a look at the
    ``entry_points.txt`` of each on ``sys.path`` (importing importlib.metadata alone takes
    longer than most commands' own work). Where distributions may be found otherwise (a zip
    on the path, a finder of its own), True: importlib.metadata looks."""
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return True
    needle = f"[{group}]"
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except NotADirectoryError:
            return True
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8", errors="replace") as f:
                    if needle in f.read():
                        return True
            except OSError:
                continue
    return False


def load_entry_points() -> list[str]:
    """Load every ``onnxsym.rules`` entry point once per process; their names."""
    names = []
    for ep in entry_points():
        key = f"{GROUP}:{ep.name}={ep.value}"
        names.append(ep.name)
        if key in _loaded:
            continue
        try:
            obj = ep.load()
            if callable(obj) and not inspect.ismodule(obj):
                obj()
        except Exception as exc:
            what = f"entry point {ep.name!r} ({GROUP}: {ep.value})"
            raise UserInputError(f"{what}: cannot load it ({type(exc).__name__}: {exc})") from None
        _loaded.add(key)
    return names
