"""onnxsym.rules and onnxsym.cli in a source checkout, where rules/ and cli.py stand at the
top of the repository beside the package (the wheel installs them inside it).

A finder on ``sys.meta_path`` answers for those two names only, so the rest of the
checkout (tests/, bench/) is no part of the package, as in the wheel.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys


class CheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds ``onnxsym.rules`` (a package: its modules are found through its own path)
    and ``onnxsym.cli`` in the checkout at ``root``."""

    def __init__(self, root: str):
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "onnxsym.rules":
            folder = os.path.join(self.root, "rules")
            return importlib.util.spec_from_file_location(fullname, os.path.join(folder, "__init__.py"),
                                                          submodule_search_locations=[folder])
        if fullname == "onnxsym.cli":
            return importlib.util.spec_from_file_location(fullname, os.path.join(self.root, "cli.py"))
        return None


def install(root: str) -> None:
    if not any(isinstance(f, CheckoutFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, CheckoutFinder(root))
