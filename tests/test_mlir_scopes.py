"""Values of subgraphs in the torch export: each typed by its own scope (sibling If branches may
reuse a name), and those of a branch onnxsym proved untaken typed as torch-mlir's importer types
them. Judged by the importer's text, iree-compile, iree-base-runtime and onnxruntime."""

import os
import re

import compilers  # noqa: F401  (first: without the compilers, this module is skipped)
import numpy as np
import onnx
import pytest
from helpers import graph, init, model
from iree.compiler import ir
from iree_check import compile_cpu, compile_error, importer_text, run_iree, run_ort
from mlir_check import refines, walk
from onnx import TensorProto as T
from onnx import helper

import onnxsym
from onnxsym.mlir import to_mlir

pytestmark = pytest.mark.compilers

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "..", "models", "real")


def _result_types(text):
    """The result types of every torch.operator, in text order (regions' ops in place)."""
    ctx = ir.Context()
    module = ir.Module.parse(text, ctx)
    assert module.operation.verify()
    entry = module.body.operations[0].operation.regions[0].blocks[0]
    return [[str(r.type) for r in op.results] for op in walk(entry) if op.name == "torch.operator"]


def _shapeless(g):
    """Per torch.operator of graph ``g`` in the importer's order (initializers, then nodes, a
    node's regions after it by attribute name), for each result: whether onnx's inference gives
    it a tensor type without a shape (which the importer writes as rank 0)."""
    known = {vi.name: vi.type for vi in [*g.input, *g.output, *g.value_info]}
    for _ in g.initializer:
        yield [False]
    for n in g.node:
        yield [o in known and known[o].HasField("tensor_type") and not known[o].tensor_type.HasField("shape")
               for o in n.output]
        for a in sorted(n.attribute, key=lambda a: a.name):
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _shapeless(a.g)


def _matches_importer(ours_text, model):
    """Op for op, our result types are the importer's, or its with some '?' made static; where
    onnx's inference knows no shape, the importer's rank 0 is no fact, and ours may be any."""
    ours, theirs = _result_types(ours_text), _result_types(importer_text(model))
    shapeless = list(_shapeless(onnx.shape_inference.infer_shapes(model).graph))
    assert len(ours) == len(theirs) == len(shapeless)
    compared = 0
    for a, b, unknown in zip(ours, theirs, shapeless):
        assert len(a) == len(b) == len(unknown)
        for x, y, u in zip(a, b, unknown):
            if u:
                assert y.startswith("!torch.vtensor<[],") and x.startswith("!torch.vtensor<") and \
                    x.split(",")[-1] == y.split(",")[-1], (x, y)
                continue
            refines(x, y)
            compared += 1
    return compared


def _past_decoder(k0="k0", kr0="kr0"):
    """A decoder step that attends over its cache plus the new keys when it has one
    (If(past > 0)); past >= 1 by default, so the else branch is proved untaken. Its values
    are named ``k0``, ``kr0`` (or as the taken branch's, ``k``, ``kr``)."""
    with_past = graph([helper.make_node("Concat", ["past_key", "key"], ["k"], axis=2),
                       helper.make_node("Relu", ["k"], ["kr"])], [], [("kr", T.FLOAT, None)], name="with_past")
    no_past = graph([helper.make_node("Identity", ["key"], [k0]),
                     helper.make_node("Relu", [k0], [kr0])], [], [(kr0, T.FLOAT, None)], name="no_past")
    return model([helper.make_node("Shape", ["past_key"], ["s"]),
                  helper.make_node("Gather", ["s", "two"], ["past"], axis=0),
                  helper.make_node("Greater", ["past", "zero"], ["has_past"]),
                  helper.make_node("If", ["has_past"], ["k_all"], then_branch=with_past, else_branch=no_past),
                  helper.make_node("Transpose", ["k_all"], ["kt"], perm=[0, 1, 3, 2]),
                  helper.make_node("MatMul", ["query", "kt"], ["scores"])],
                 [("query", T.FLOAT, ["batch", 2, "seq", 4]), ("key", T.FLOAT, ["batch", 2, "seq", 4]),
                  ("past_key", T.FLOAT, ["batch", 2, "past", 4])], [("scores", T.FLOAT, None)],
                 [init("two", np.array(2, np.int64)), init("zero", np.array(0, np.int64))])


@pytest.mark.parametrize("shared", [False, True], ids=["own_names", "the_taken_branchs_names"])
def test_untaken_branch_is_typed_as_the_importer_types_it_and_runs_in_iree(shared):
    m = _past_decoder(*(("k", "kr") if shared else ()))
    result = onnxsym.infer(m)
    # the untaken branch is inferred for its shapes alone, under its own path: its k0 (or k) is
    # the key's shape, never the taken branch's k of past + seq rows
    untaken_path = next(p for p in result.scoped_values if p[0][1] == "else_branch")
    assert [str(d) for d in result.scoped_values[untaken_path]["k" if shared else "k0"].shape] == \
        ["batch", "2", "seq", "4"]
    text = to_mlir(m, dialect="torch", weights=True)
    # (typed none, and iree-compile crashed; with the taken branch's names, bound as its values,
    # '(s0, 2, s1 + s2, 4)' for the keys of seq rows, which IREE refused)
    assert "!torch.none" not in text
    untaken = text.split("}, {")[0].split('"onnx.If"')[1]  # the importer's order: else_branch first
    assert ('torch.operator "onnx.Relu"(%k' in untaken and
            ': (!torch.vtensor<[?,2,?,4],f32>) -> !torch.vtensor<[?,2,?,4],f32>') in untaken
    _matches_importer(text, m)
    vmfb = compile_cpu(text)
    rng = np.random.default_rng(0)
    for b, s, p in ((1, 3, 2), (2, 1, 5)):
        feeds = {"query": rng.standard_normal((b, 2, s, 4), np.float32),
                 "key": rng.standard_normal((b, 2, s, 4), np.float32),
                 "past_key": rng.standard_normal((b, 2, p, 4), np.float32)}
        got = run_iree(vmfb, m.graph.name, list(feeds.values()))
        want = run_ort(m, feeds)
        assert got[0].shape == want[0].shape == (b, 2, s, p + s)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)


def test_silero_untaken_branches_are_typed_and_iree_fails_where_the_importers_text_fails():
    """silero_vad's 16 kHz and 8 kHz branches hold Ifs onnxsym decides: their untaken branches
    were typed none (iree-compile crashed). Typed now as the importer types them, the text fails
    cleanly at the same op as the importer's: an If whose branches differ in rank (a Squeeze of
    a dim that is 1), which IREE cannot lower whoever imports it."""
    path = os.path.join(REAL, "silero_vad.onnx")
    m = onnx.load(path)
    ours = to_mlir(path, dialect="torch")
    assert " -> !torch.none" not in ours and "(!torch.none" not in ours
    _matches_importer(ours, m)
    plain = importer_text(m)
    failed_at = []
    for text in (ours, plain):
        err = compile_error(text)
        assert "Stack dump" not in err and "failed to legalize operation 'torch.operator'" in err, err[:2000]
        line = int(re.search(r"<stdin>:(\d+):\d+: error", err).group(1))
        lines = text.splitlines()
        assert '"onnx.If"' in lines[line - 1]
        failed_at.append(sum(x.count('torch.operator "') for x in lines[:line]))  # which op, counted
    assert failed_at[0] == failed_at[1]


def _reuse_model(nested: bool):
    """Sibling branches that define the same name ``c`` with other shapes and element types
    (as optimum's merged decoders do), nested one level deeper when ``nested``: there the
    inner Ifs of both outer branches have the same output name too."""
    def const(name, dtype, dims, vals):
        return helper.make_node("Constant", [], [name], value=helper.make_tensor("v", dtype, dims, vals))

    def inner(tag):
        if tag == "a":
            then = [const("c", T.FLOAT, [], [2.0]), helper.make_node("Mul", ["x", "c"], ["y"])]
            els = [const("c", T.INT64, [2], [-1, 4]), helper.make_node("Reshape", ["x", "c"], ["y"])]
        else:
            then = [const("c", T.FLOAT, [1, 4], [1, 2, 3, 4]), helper.make_node("Add", ["x", "c"], ["y"])]
            els = [const("c", T.INT64, [2], [-1, 2]), helper.make_node("Reshape", ["x", "c"], ["y0"]),
                   const("d", T.INT64, [2], [-1, 4]), helper.make_node("Reshape", ["y0", "d"], ["y"])]
        return (graph(then, [], [("y", T.FLOAT, ["n", 4])], name="then"),
                graph(els, [], [("y", T.FLOAT, ["n", 4])], name="else"))

    if not nested:
        then, els = inner("a")
        nodes = [helper.make_node("If", ["c2"], ["out"], then_branch=then, else_branch=els)]
    else:
        branches = []
        for tag in "ab":
            t, e = inner(tag)
            branches.append(graph([helper.make_node("If", ["c2"], ["t"], then_branch=t, else_branch=e)],
                                  [], [("t", T.FLOAT, ["n", 4])], name="outer"))
        nodes = [helper.make_node("If", ["c1"], ["out"], then_branch=branches[0], else_branch=branches[1])]
    conds = [("c1", T.BOOL, [])] if nested else []
    return model(nodes, conds + [("c2", T.BOOL, []), ("x", T.FLOAT, ["n", 4])], [("out", T.FLOAT, ["n", 4])])


@pytest.mark.parametrize("nested", [False, True], ids=["siblings", "nested"])
def test_a_name_reused_by_sibling_scopes_is_typed_by_each_scope(nested):
    m = _reuse_model(nested)
    onnx.checker.check_model(m)
    text = to_mlir(m, dialect="torch", weights=True)
    consts = [line.split("-> ")[-1] for line in text.splitlines() if '"onnx.Constant"() {torch.onnx.value = dense<' in line
              and line.strip().startswith("%c")]
    want = ["!torch.vtensor<[2],si64>", "!torch.vtensor<[],f32>"]  # per If: else, then (the importer's order)
    if nested:
        want = ["!torch.vtensor<[2],si64>", "!torch.vtensor<[1,4],f32>"] + want  # the outer else first
    assert consts == want  # (typed by the last writer, whichever it was)
    _matches_importer(text, m)
    vmfb = compile_cpu(text)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for c1 in (True, False) if nested else (None,):
        for c2 in (True, False):
            feeds = {"c1": np.array(c1), "c2": np.array(c2), "x": x}
            if not nested:
                feeds.pop("c1")
            got = run_iree(vmfb, m.graph.name, list(feeds.values()))
            want_out = run_ort(m, feeds)
            assert got[0].shape == want_out[0].shape == (3, 4)
            np.testing.assert_allclose(got[0], want_out[0])


def test_scoped_values_are_narrowed_by_the_domain_with_the_rest():
    """result.within_domain() rebuilds the dims over the symbols it narrows: a branch's too. Here a
    Gather of an 8-row table at n - 1 makes n <= 8, so the branch's Slice to 16 rows is n rows."""
    def i64(name, v):
        return init(name, np.array(v, np.int64))
    sliced = graph([helper.make_node("Slice", ["x", "s0", "s16", "ax0"], ["y"])], [], [("y", T.FLOAT, None)], name="b")
    whole = graph([helper.make_node("Identity", ["x"], ["y"])], [], [("y", T.FLOAT, None)], name="b2")
    m = model([helper.make_node("Shape", ["x"], ["sh"]), helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
               helper.make_node("Sub", ["n", "one"], ["idx"]), helper.make_node("Gather", ["table", "idx"], ["row"], axis=0),
               helper.make_node("If", ["c"], ["out"], then_branch=sliced, else_branch=whole)],
              [("c", T.BOOL, []), ("x", T.FLOAT, ["n", 4])], [("out", T.FLOAT, None), ("row", T.FLOAT, None)],
              [init("table", np.zeros((8, 3), np.float32)), i64("zero", 0), i64("one", 1), i64("s0", [0]),
               i64("s16", [16]), i64("ax0", [0])])
    result = onnxsym.infer(m)
    assert 'torch.symbolic_int "min(16, S0)"' in to_mlir(result, dialect="torch")
    result = result.within_domain()
    assert result.domain().ranges["n"] == (1, 8)
    text = to_mlir(result, dialect="torch")
    assert "min(" not in text and '"S0" {min_val = 1, max_val = 8}' in text
    for n in (1, 8):  # the branch's binding is the runtime's
        x = np.zeros((n, 4), np.float32)
        assert run_ort(m, {"c": np.array(True), "x": x})[0].shape == (n, 4)


def test_annotate_and_declarations_are_per_scope_too():
    """The annotated model's subgraph value_info (and the check of what a subgraph declares)
    take each value from its own scope: the then branch's ``c`` is a float scalar, the else
    branch's two int64s, whatever the other branch holds."""
    m = _reuse_model(False)
    for a in m.graph.node[0].attribute:  # declared rightly, each in its own branch, with a symbol
        shape = ["rows"] if a.name == "else_branch" else []
        a.g.value_info.append(helper.make_tensor_value_info("c", T.INT64 if shape else T.FLOAT, shape))
    result = onnxsym.infer(m)
    assert result.stale == []
    written = onnxsym.write_result(result)
    declared = {a.name: [(vi.type.tensor_type.elem_type, [d.dim_value for d in vi.type.tensor_type.shape.dim])
                         for vi in a.g.value_info if vi.name == "c"] for a in written.graph.node[0].attribute}
    assert declared == {"then_branch": [(T.FLOAT, [])], "else_branch": [(T.INT64, [2])]}
    for c in (True, False):
        assert run_ort(written, {"c2": np.array(c), "x": np.ones((3, 4), np.float32)})[0].shape == (3, 4)
