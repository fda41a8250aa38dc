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
    if not _may_declare_group():  # (importing importlib.metadata alone costs a command about 70 ms)
        return []
    from importlib.metadata import entry_points as found

    return list(found(group=GROUP))


def _may_declare_group() -> bool:
    """False only where every place importlib.metadata finds distributions in (the
    ``*.dist-info`` and ``*.egg-info`` folders of each folder on sys.path, an egg's
    ``EGG-INFO``) was read and no ``entry_points.txt`` there names the group; True for
    anything else it reads (a zip archive on sys.path, a finder of distributions of
    another kind, a file that cannot be read)."""
    import importlib.machinery

    for finder in sys.meta_path:
        if finder is not importlib.machinery.PathFinder and getattr(finder, "find_distributions", None):
            return True
    needle = GROUP.encode()
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except FileNotFoundError:
            continue  # (nothing there for importlib.metadata either)
        except OSError:
            return True  # a zip archive, or a folder that cannot be listed
        egg = os.path.basename(root).lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(root, child, "entry_points.txt"), "rb") as f:
                    if needle in f.read():
                        return True
            except (FileNotFoundError, NotADirectoryError):
                continue  # declares no entry point
            except OSError:
                return True
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
