"""The documentation's examples do what the pages say: the rule-writing guide's rule against
onnxruntime (through a function body that computes the op), the grammar page's table, and the
README's links into the site."""

import os
import re

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnxsym
from onnxsym import registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")


def _page(name: str) -> str:
    with open(os.path.join(DOCS, name), encoding="utf-8") as f:
        return f.read()


# ------------------------------------------------------------------ docs/rules.md

def _patchify_model():
    """One my.ops::Patchify node (patch 16) whose model-local function computes it with
    standard ops, so that onnxruntime runs it: Reshape to patches, Transpose, Reshape."""
    def const(name, vals):
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals))

    body = [
        helper.make_node("Shape", ["x"], ["s"]),
        const("i0", [0]), const("i1", [1]), const("i2", [2]), const("i3", [3]), const("i4", [4]),
        const("p", [16]), const("pp", [256]),
        helper.make_node("Slice", ["s", "i0", "i1"], ["n"]),
        helper.make_node("Slice", ["s", "i1", "i2"], ["c"]),
        helper.make_node("Slice", ["s", "i2", "i3"], ["h"]),
        helper.make_node("Slice", ["s", "i3", "i4"], ["w"]),
        helper.make_node("Div", ["h", "p"], ["hp"]),
        helper.make_node("Div", ["w", "p"], ["wp"]),
        helper.make_node("Concat", ["n", "c", "hp", "p", "wp", "p"], ["s6"], axis=0),
        helper.make_node("Reshape", ["x", "s6"], ["x6"]),  # onnxruntime refuses a height not divisible by 16
        helper.make_node("Transpose", ["x6"], ["t"], perm=[0, 2, 4, 1, 3, 5]),
        helper.make_node("Mul", ["hp", "wp"], ["count"]),
        helper.make_node("Mul", ["c", "pp"], ["width"]),
        helper.make_node("Concat", ["n", "count", "width"], ["s3"], axis=0),
        helper.make_node("Reshape", ["t", "s3"], ["y"]),
    ]
    fn = helper.make_function("my.ops", "Patchify", ["x"], ["y"], body, [helper.make_opsetid("", 21)], ["patch"])
    g = helper.make_graph([helper.make_node("Patchify", ["image"], ["patches"], domain="my.ops", patch=16)], "g",
                          [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
                          [helper.make_tensor_value_info("patches", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("my.ops", 1)],
                             functions=[fn], ir_version=10)


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


@pytest.fixture
def patchify_rule():
    """The guide's first code block, run: Patchify's rule registered for this test only."""
    with registry.override("Patchify", None, domain="my.ops"):
        exec(compile(_python_blocks(_page("rules.md"))[0], "docs/rules.md", "exec"), {})
        assert registry.find_rule("my.ops", "Patchify", 1) is not None
        yield


def test_the_guides_rule_agrees_with_onnxruntime(patchify_rule):
    model = _patchify_model()
    result = onnxsym.infer(model)
    (batch, count, width) = result.shape("patches")
    assert width == 768 and str(batch) == "batch" and str(count) == "(height//16)*(width//16)"  # as the page says
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for sizes in ({"batch": 2, "height": 32, "width": 48}, {"batch": 1, "height": 16, "width": 16},
                  {"batch": 3, "height": 64, "width": 160}):
        x = np.zeros((sizes["batch"], 3, sizes["height"], sizes["width"]), np.float32)
        (y,) = sess.run(None, {"image": x})
        assert list(y.shape) == [onnxsym.evaluate(d, sizes) for d in result.shape("patches")], sizes
        assert result.domain().violated(sizes) is None, sizes
    # the conditions the guide states are where onnxruntime refuses the node
    for sizes in ({"batch": 1, "height": 40, "width": 32}, {"batch": 1, "height": 32, "width": 24}):
        assert result.domain().violated(sizes) is not None, sizes
        with pytest.raises(Exception):
            sess.run(None, {"image": np.zeros((1, 3, sizes["height"], sizes["width"]), np.float32)})
    # and verify, the check the guide recommends, passes at sizes it draws inside the domain
    report = onnxsym.verify(model)
    assert report.ok and report.checked_dims > 0


def test_the_guides_domain_lines_are_what_domain_prints(patchify_rule):
    texts = {c.text: c for c in onnxsym.infer(_patchify_model()).domain().conditions}
    shown = [line.strip() for line in _page("rules.md").splitlines() if "% 16 == 0: Patchify" in line]
    assert len(shown) == 2
    for line in shown:
        condition, _, why = line.partition(": ")
        assert condition in texts and why.endswith(texts[condition].sources[0].reason), line


# ------------------------------------------------------------------ docs/grammar.md

def test_the_grammar_pages_table_reads_back_as_it_says():
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", _page("grammar.md"), re.M)
    assert len(rows) >= 8
    for written, read in rows:
        d = onnxsym.parse_dim(written)
        assert onnxsym.format_dim(d) == read, written
        assert onnxsym.parse_dim(read) == d  # printing then parsing gives the same expression
        for x in range(0, 70):  # and the canonical form computes what was written, as Python does
            env = {s: x + k for k, s in enumerate(sorted(v.name for v in onnxsym.free_symbols(d)))}
            py = written.replace("ceil_div(h, 32)", "(-(-h//32))")
            assert onnxsym.evaluate(d, env) == eval(py, {}, dict(env)), (written, env)
    for bad in ("seq / 2", "seq == 1", "2**n", "foo(x)"):
        with pytest.raises(onnxsym.ExprSyntaxError):
            onnxsym.parse_dim(bad)


# ------------------------------------------------------------------ the README, the site's front door

def test_the_readmes_links_into_the_site_exist():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    links = [t for t in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme) if "://" not in t]
    assert any(t.startswith("docs/") for t in links), links
    for target in links:
        assert os.path.exists(os.path.join(ROOT, target)), target


def test_every_page_is_in_the_sites_nav():
    import yaml

    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        config = yaml.safe_load(f)

    def pages(nav):
        for item in nav:
            for v in item.values():
                yield from pages(v) if isinstance(v, list) else [v]

    listed = set(pages(config["nav"]))
    present = {n for n in os.listdir(DOCS) if n.endswith(".md")}
    assert present == listed, (present - listed, listed - present)


# ------------------------------------------------------------------ docs/architecture.md

def _layout_bullets() -> dict[str, str]:
    """The Layout section's bullets, by the path each starts with (``onnxsym/dims/``)."""
    text = _page("architecture.md")
    section = text[text.index("## Layout"):text.index("## Invariants")]
    bullets = re.split(r"\n- (?=`)", section)[1:]
    return {re.match(r"`([^`]+)`", b).group(1): b for b in bullets}


def _modules(folder: str) -> list[str]:
    return sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, folder))
                  if f.endswith(".py") and f != "__init__.py")


def test_the_layout_section_names_every_module_of_the_tree():
    """docs/architecture.md's Layout names each folder of onnxsym/ and each module in it, each
    bench script and each model generator: a module added, moved or removed shows here."""
    bullets = _layout_bullets()
    section = "\n".join(bullets.values())
    package = os.path.join(ROOT, "onnxsym")
    folders = sorted(d for d in os.listdir(package) if os.path.isfile(os.path.join(package, d, "__init__.py"))
                     and not os.path.islink(os.path.join(package, d)))
    missing = []
    for d in folders:
        bullet = bullets.get(f"onnxsym/{d}/")
        if bullet is None:
            missing.append(f"onnxsym/{d}/ (no bullet)")
            continue
        missing += [f"onnxsym/{d}/{m}.py" for m in _modules(f"onnxsym/{d}") if f"`{m}`" not in bullet]
    missing += [f"onnxsym/{m}.py" for m in _modules("onnxsym")
                if m != "cli" and f"`onnxsym/{m}.py`" not in section]  # (cli.py: the top-level one's link)
    missing += [f"bench/{m}.py" for m in _modules("bench") if f"`{m}.py`" not in bullets["bench/"]]
    models = bullets["models/"]
    for folder, _, files in os.walk(os.path.join(ROOT, "models")):
        rel = os.path.relpath(folder, os.path.join(ROOT, "models"))
        for f in files:
            if f.endswith(".py"):
                path = f if rel == "." else f"{rel}/{f}"
                if f"`{path}`" not in models and not (rel == "real" and f"`{f}`" in models):
                    missing.append(f"models/{path}")
    assert not missing, f"docs/architecture.md's Layout does not name {missing}"


def _readme_commands() -> list[str]:
    """The README's Set up section's commands: its indented lines that start with `pip install`."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    section = readme[readme.index("## Set up"):readme.index("\n## ", readme.index("## Set up") + 1)]
    return [line.strip() for line in section.splitlines() if line.startswith("    pip install")]


def test_ci_runs_the_readmes_set_up_and_test_commands_verbatim():
    """.ci/run runs the README's set-up and test commands as the README writes them, before it
    installs any other extra: a test that needs an extra fails CI unless it is marked."""
    commands = _readme_commands()
    assert len(commands) == 2 and any("pytest" in c for c in commands), commands
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        lines = [line.strip() for line in f if not line.lstrip().startswith("#")]
    first_extras = next(i for i, line in enumerate(lines) if "mlir" in line)
    for command in commands:
        at = [i for i, line in enumerate(lines) if line == command or line.startswith(command + " || exit")]
        assert at and at[0] < first_extras, f".ci/run does not run the README's `{command}` before the extras"
