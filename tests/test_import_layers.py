"""onnxsym's modules import one another without a cycle, counting imports inside functions too (not
those under ``if TYPE_CHECKING:``, which name types for annotations and never run)."""

import ast
import os

import onnxsym

ROOT = os.path.dirname(onnxsym.__file__)


def _modules():
    out = {}
    for folder, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                name = "onnxsym" if rel == "__init__" else "onnxsym." + rel.removesuffix(".__init__")
                out[name] = path
    return out


def _annotations_only(tree):
    """The nodes under ``if TYPE_CHECKING:`` (imports made for the type checker alone)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _imports(name, path, modules, types_too=False):
    """The onnxsym modules ``name`` imports (a package's own ``__init__`` excluded: importing a
    submodule runs its package first, which is no dependency of the submodule on the package's names);
    with ``types_too``, those imported under ``if TYPE_CHECKING:`` as well."""
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(open(path).read())
    skip = set() if types_too else _annotations_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
    return {m for m in found if m in modules and m != name and not name.startswith(m + ".")}


def _cycle(graph):
    state = {}

    def visit(n, stack):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m, stack)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n, [])
            if c:
                return c
    return None


def test_no_import_cycle_in_onnxsym():
    modules = _modules()
    graph = {n: _imports(n, p, modules) for n, p in modules.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_no_import_cycle_even_through_the_names_of_types():
    """A module that names another's class only in annotations still depends on it to be read:
    the node names the engine by a protocol (``inference.node.Host``), not by its class."""
    modules = _modules()
    graph = {n: _imports(n, p, modules, types_too=True) for n, p in modules.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_algebra_does_not_import_the_printer():
    """The printer and the sympy bridge sit beside the algebra in onnxsym.dims; only the package's
    ``__init__`` names them (loaded on first use), no module of the algebra does."""
    modules = _modules()
    above = {"onnxsym.dims.text", "onnxsym.dims.sympy_bridge"}
    algebra = [m for m in modules if m.startswith("onnxsym.dims.") and m not in above]
    assert len(algebra) >= 8, algebra
    for name in algebra:
        assert not above & _imports(name, modules[name], modules), name


def test_public_functions_have_resolvable_type_hints():
    # api.py once shadowed typing.Sequence with values.Sequence, which broke this
    import typing

    for f in (onnxsym.infer, onnxsym.annotate, onnxsym.write_result):
        assert "return" in typing.get_type_hints(f)


def test_the_corpus_generators_import_no_circle_and_not_make_real():
    """models/real's generators share corpus.py and import one another (make_fusions takes
    make_families' shim, make_hf make_torch's export); make_real imports them all, so none of
    them imports make_real, and they import one another without a cycle."""
    folder = os.path.join(os.path.dirname(ROOT), "models", "real")
    scripts = {f[:-3]: os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py")}
    graph = {}
    for name, path in scripts.items():
        found = set()
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.add(node.module or "")
        graph[name] = {m for m in found if m in scripts and m != name}
    assert {"corpus", "make_real", "make_torch", "make_families"} <= set(graph), sorted(graph)
    assert graph["make_real"] and graph["make_families"], graph  # (the check reads what is there)
    assert not [n for n, imported in graph.items() if "make_real" in imported], graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def _own_private_names(tree) -> set[str]:
    """The private names a module defines itself: functions, classes, assignments, attributes
    it sets on ``self``, ``__slots__`` entries."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_"):
            out.add(node.value)  # (a __slots__ entry)
    return {n for n in out if n.startswith("_")}


def test_no_private_name_crosses_a_module():
    """No module imports another's ``_name``, nor reads or writes an attribute ``_x`` it does not
    define itself (``ranges`` once wrote ``atom._range``, ``metadata`` read ``result._domain``)."""
    root = os.path.dirname(ROOT)
    paths = list(_modules().values()) + [os.path.join(root, "cli.py")]
    paths += [os.path.join(root, "rules", f) for f in os.listdir(os.path.join(root, "rules")) if f.endswith(".py")]
    found = []
    for path in paths:
        tree = ast.parse(open(path).read())
        own = _own_private_names(tree)
        rel = os.path.relpath(path, root)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                found += [f"{rel}:{node.lineno}: imports {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
                if node.module and any(p.startswith("_") and not p.startswith("__") for p in node.module.split(".")):
                    found.append(f"{rel}:{node.lineno}: imports from {node.module}")
            elif isinstance(node, ast.Import):
                found += [f"{rel}:{node.lineno}: imports {a.name}" for a in node.names
                          if any(p.startswith("_") and not p.startswith("__") for p in a.name.split("."))]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")) \
                    and node.attr not in own:
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found


def test_the_tests_import_the_package_not_paths_nor_bench():
    """A test imports ``onnxsym`` as installed (or from the checkout it runs in) and the helper
    modules of tests/, never a path it puts on sys.path itself, nor a bench script."""
    here = os.path.dirname(os.path.abspath(__file__))
    ours = {f[:-3] for f in os.listdir(here) if f.endswith(".py")}  # (tests/domain_boundary: bench's has its name)
    bench = {f[:-3] for f in os.listdir(os.path.join(os.path.dirname(ROOT), "bench")) if f.endswith(".py")} - ours
    found = []
    for f in sorted(os.listdir(here)):
        if not f.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(here, f)).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("insert", "append") and \
                    ast.unparse(node.value) == "sys.path":
                found.append(f"{f}:{node.lineno}: sys.path.{node.attr}")
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{f}:{node.lineno}: imports {n}" for n in names
                      if n.split(".")[0] == "bench" or n.split(".")[0] in bench]
    assert not found, found


def test_no_decision_reads_the_text_of_a_reason():
    """Whether a reason names its node, or already ends with its condition, is carried as a field
    (``Raw.states_condition``), never found by searching the message (``x in c.reason``)."""
    root = os.path.dirname(ROOT)
    paths = list(_modules().values()) + [os.path.join(root, "rules", f)
                                         for f in os.listdir(os.path.join(root, "rules")) if f.endswith(".py")]
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                for side in node.comparators:
                    # (onnxruntime's own messages are another matter: its errors have no fields)
                    if isinstance(side, ast.Attribute) and side.attr == "reason" or \
                            isinstance(side, ast.Name) and side.id == "reason":
                        found.append(f"{os.path.relpath(path, root)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found
