"""A shape declared on a produced value is a claim to check, never a fact (issue 21, items 5
and 6): no constraint, no condition of the domain and no range comes from it; a declared name
is an alias only where every place it is declared agrees, and is written (with
--keep-declared-names) only where it is proven equal to the computed dim. Every case is run in
onnxruntime: the written model's dims (kept names evaluated through onnxsym.aliases) against
the real shapes at two sizes, and the domain against sizes onnxruntime runs."""

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import BOOL, I64, F, graph, init, model
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from oracle import check_written, check_written_names, run_ort, written_dims

import onnxsym
from onnxsym.cli import main

N = helper.make_node
SEQ = [{"seq": 3}, {"seq": 5}]


def _meta(m):
    return {p.key: p.value for p in m.metadata_props}


def _no_declared_facts(res, sizes):
    """Nothing declared became a constraint or narrowed a range, and the domain admits ``sizes``."""
    nodes = {n.name for n in _all_nodes(res.model.graph)}
    assert all(c.node in nodes for c in res.constraints), res.constraints  # each from a node, none from a claim
    domain = res.domain()
    for b in sizes:
        assert domain.violated(b) is None, (b, domain.lines())
    bare = None
    for name, (lo, hi) in res.symbol_ranges().items():
        if name in ("seq", "batch", "height", "width") and (lo, hi) != (1, 2**63 - 1):
            # narrowed: by what the nodes need (the same without any declaration), never by a claim
            if bare is None:
                bare = onnxsym.infer(_undeclared(res.model))
                bare.domain()
            assert bare.symbol_ranges()[name] == (lo, hi), (name, lo, hi)


def _undeclared(m):
    """``m`` without a declared shape on any value its nodes produce."""
    copy = onnx.ModelProto()
    copy.CopyFrom(m)
    del copy.graph.value_info[:]
    for o in copy.graph.output:
        if o.type.HasField("tensor_type"):
            o.type.tensor_type.ClearField("shape")
    return copy


def _all_nodes(g):
    for n in g.node:
        yield n
        for a in n.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                yield from _all_nodes(sub)


def _identity_concat(y_decl, z_decl):
    """y = Identity(x) and z = Concat(x, x) over x: [seq], declared as given."""
    return model([N("Identity", ["x"], ["y"], name="id"), N("Concat", ["x", "x"], ["z"], axis=0, name="cat")],
                 [("x", F, ["seq"])], [("y", F, y_decl), ("z", F, z_decl)])


def test_one_name_bound_to_two_different_dims_is_stale_and_kept_nowhere(tmp_path):
    m = _identity_concat(["n + 1"], ["n"])  # n = seq - 1 from y; z is 2*seq, never seq - 1
    res = onnxsym.infer(m)
    assert [(s.value, s.declared, s.computed) for s in res.stale] == [("z", ("n",), ("2*seq",))]
    msg = "value 'z': the model declares [n], the graph computes [2*seq]; 'n' is also declared at y[0] as " \
          "'n + 1', where the graph computes seq (so n = seq - 1): a stale declaration; the computed shape is written"
    assert msg in res.warnings
    assert res.aliases == {} and res.constraints == [] and res.derived_symbols() == {}
    _no_declared_facts(res, SEQ)
    for keep in (False, True):
        out = onnxsym.write_result(res, keep_declared_names=keep)
        assert [written_dims(o) for o in out.graph.output] == [["seq"], ["2*seq"]]
        assert check_written_names(out, SEQ) == 4
    assert json.loads(_meta(out)["onnxsym.stale"])[0]["why"].startswith("'n' is also declared at y[0]")
    p = str(tmp_path / "m.onnx")
    onnx.save(m, p)
    r = CliRunner().invoke(main, ["check", p])
    assert r.exit_code == 1 and "stale declaration value 'z': the model declares [n]" in r.output, r.output


def test_a_name_consistent_everywhere_is_an_alias_and_kept_names_are_true():
    # y[0] = seq declared n + 1; z[0] = 2*seq declared 2*n + 2; w[0] = seq - 1 declared n
    m = model([N("Identity", ["x"], ["y"], name="id"), N("Concat", ["x", "x"], ["z"], axis=0, name="cat"),
               N("Slice", ["x", "one", "big"], ["w"], name="slice")],
              [("x", F, ["seq"])], [("y", F, ["n + 1"]), ("z", F, ["2*n + 2"]), ("w", F, ["n"])],
              [init("one", [1]), init("big", [2**63 - 1])])
    res = onnxsym.infer(m)
    assert res.stale == [] and res.constraints == []
    assert {k: str(v) for k, v in res.aliases.items()} == {"n": "seq - 1"}
    _no_declared_facts(res, SEQ)
    out = onnxsym.write_result(res)
    assert [written_dims(o) for o in out.graph.output] == [["seq"], ["2*seq"], ["seq - 1"]]
    assert check_written(out, SEQ) == 6
    kept = onnxsym.write_result(res, keep_declared_names=True)
    assert [written_dims(o) for o in kept.graph.output] == [["n + 1"], ["2*n + 2"], ["n"]]
    assert check_written_names(kept, SEQ) == 6  # each kept text, with n = seq - 1, is the real dim


def test_a_declared_expression_true_at_one_size_is_neither_a_fact_nor_written():
    # 2*seq - 3 == seq only at seq 3; n*n == seq is no linear definition of n
    m = _identity_concat(["2*seq - 3"], ["n*n"])
    res = onnxsym.infer(m)
    assert res.stale == [] and res.aliases == {} and res.constraints == []
    _no_declared_facts(res, SEQ)
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert [written_dims(o) for o in out.graph.output] == [["seq"], ["2*seq"]]
    assert check_written(out, SEQ) == 4


def test_declared_numbers_on_dynamic_dims():
    # z[0] = 2*seq >= 2 declared 1: never true, stale; y[0] = seq declared 3: true at one size only
    m = _identity_concat([3], [1])
    res = onnxsym.infer(m)
    assert [(s.value, s.declared) for s in res.stale] == [("z", ("1",))]
    _no_declared_facts(res, SEQ)
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert [written_dims(o) for o in out.graph.output] == [["seq"], ["2*seq"]]
    assert check_written(out, SEQ) == 4


def test_declared_names_of_input_symbols_on_other_dims():
    """An input symbol's name declared on a dim the graph computes otherwise: provably
    different is stale; not provably different is no constraint (batch == seq was one)."""
    m = model([N("Transpose", ["x"], ["t"], perm=[1, 0], name="tr"), N("Concat", ["x", "x"], ["c"], axis=0, name="cat")],
              [("x", F, ["batch", "seq"])], [("t", F, ["batch", "seq"]), ("c", F, ["batch", "seq"])])
    res = onnxsym.infer(m)
    assert [(s.value, s.computed) for s in res.stale] == [("c", ("2*batch", "seq"))]
    assert res.aliases == {} and res.constraints == []
    sizes = [{"batch": 2, "seq": 3}, {"batch": 3, "seq": 5}]
    _no_declared_facts(res, sizes)
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert [written_dims(o) for o in out.graph.output] == [["seq", "batch"], ["2*batch", "seq"]]
    assert check_written(out, sizes) == 8


def _if_on_data(out_decl, then_extra=(), else_extra=()):
    """An If on a data input: the then branch gives x ([seq]), the else branch Unsqueeze(x)
    ([1, seq]); the output declared ``out_decl``."""
    then = graph([N("Identity", ["x"], ["t"], name="t_id")], [], [("t", F, None)], name="then")
    then.value_info.extend(then_extra)
    els = graph([N("Unsqueeze", ["x", "ax"], ["e"], name="e_unsq")], [], [("e", F, None)], name="else")
    els.value_info.extend(else_extra)
    return model([N("If", ["c"], ["o"], then_branch=then, else_branch=els, name="if")],
                 [("c", BOOL, []), ("x", F, ["seq"])], [("o", F, out_decl)], [init("ax", np.array([0]))])


def _run_both_branches(out, declared_rank=None):
    """Run the written model with either branch at seq 3 and 5: the output's written type holds."""
    for cond, rank in ((True, 1), (False, 2)):
        for s in (3, 5):
            got = run_ort(out, {"c": np.array(cond), "x": np.ones(s, np.float32)})["o"]
            assert got.ndim == rank and got.shape[-1] == s
    return not out.graph.output[0].type.tensor_type.HasField("shape")


def test_a_value_of_unknown_rank_whose_declaration_every_branch_contradicts_is_stale(tmp_path):
    m = _if_on_data([7, 7])
    res = onnxsym.infer(m)
    assert res.shape("o") is None
    (st,) = res.stale
    assert (st.value, st.declared, st.computed) == ("o", ("7", "7"), None)
    assert "value 'o': the model declares [7, 7], the graph computes an unknown rank; the branches of the If " \
           "that makes it give [seq] or [1, seq]: a stale declaration; no shape is written" in res.warnings
    out = onnxsym.write_result(res)
    assert _run_both_branches(out)  # no shape written: the declared [7, 7] is gone
    assert json.loads(_meta(out)["onnxsym.stale"])[0]["computed"] is None
    p = str(tmp_path / "m.onnx")
    onnx.save(m, p)
    r = CliRunner().invoke(main, ["check", p, "--format", "json"])
    assert r.exit_code == 1 and json.loads(r.output)["models"][0]["stale_declarations"][0]["computed"] is None


def test_a_value_of_unknown_rank_declared_as_one_branch_is_not_written():
    for decl in (["seq"], [1, "seq"], ["seq", 7]):
        res = onnxsym.infer(_if_on_data(decl))
        assert res.stale == [], decl  # some branch gives it, or may
        assert any("the declared shape is not written (it holds in some branches only)" in w for w in res.warnings)
        assert _run_both_branches(onnxsym.write_result(res))
    # a declared number no branch gives, on the rank one of them has
    res = onnxsym.infer(_if_on_data([2, "seq"]))
    assert [s.value for s in res.stale] == ["o"]


def test_a_ranked_if_output_whose_declaration_every_branch_contradicts_is_stale():
    # then: x ([seq]); else: Concat(x, one) ([seq + 1]): joined into a fresh dim, declared 2*seq + 5
    then = graph([N("Identity", ["x"], ["t"], name="t_id")], [], [("t", F, None)], name="then")
    els = graph([N("Concat", ["x", "one"], ["e"], axis=0, name="e_cat")], [], [("e", F, None)], name="else")
    m = model([N("If", ["c"], ["o"], then_branch=then, else_branch=els, name="if")],
              [("c", BOOL, []), ("x", F, ["seq"])], [("o", F, ["2*seq + 5"])], [init("one", np.ones(1, np.float32))])
    res = onnxsym.infer(m)
    (st,) = res.stale
    assert st.value == "o" and st.why == "every branch of the If contradicts it: it gives [seq] or [seq + 1]"
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert written_dims(out.graph.output[0]) != ["2*seq + 5"]
    for cond, extra in ((True, 0), (False, 1)):
        for s in (3, 5):
            assert run_ort(out, {"c": np.array(cond), "x": np.ones(s, np.float32)})["o"].shape == (s + extra,)


def test_one_name_in_two_branches_on_different_dims_is_stale():
    """A name declared in the then branch on x ([seq]) and in the else branch on Concat(x, x)
    ([2*seq]): a contradiction inside the subgraphs, kept nowhere."""
    then = graph([N("Identity", ["x"], ["t"], name="t_id"), N("Identity", ["t"], ["t2"], name="t_id2")],
                 [], [("t2", F, None)], name="then")
    then.value_info.append(helper.make_tensor_value_info("t", F, ["m"]))
    els = graph([N("Concat", ["x", "x"], ["e"], axis=0, name="e_cat"), N("Identity", ["e"], ["e2"], name="e_id")],
                [], [("e2", F, None)], name="else")
    els.value_info.append(helper.make_tensor_value_info("e", F, ["m"]))
    m = model([N("If", ["c"], ["o"], then_branch=then, else_branch=els, name="if")],
              [("c", BOOL, []), ("x", F, ["seq"])], [("o", F, None)])
    res = onnxsym.infer(m)
    (st,) = res.stale  # (which of the two is named stale depends on the order they are read)
    assert {(st.value, st.computed), (st.why.split(" at ")[1].split("[")[0],)} in (
        {("e", ("2*seq",)), ("t",)}, {("t", ("seq",)), ("e",)})
    assert "m" not in res.aliases
    out = onnxsym.write_result(res, keep_declared_names=True)
    body = {a.name: a.g for a in out.graph.node[0].attribute}
    assert written_dims(body["then_branch"].value_info[0]) == ["seq"]
    assert written_dims(body["else_branch"].value_info[0]) == ["2*seq"]
    for cond, k in ((True, 1), (False, 2)):
        for s in (3, 5):
            assert run_ort(out, {"c": np.array(cond), "x": np.ones(s, np.float32)})["o"].shape == (k * s,)


def test_a_name_in_a_loop_body_and_on_an_output():
    """A Loop body's value declared [k] (it is the outer x: [seq]) and the main graph's
    Concat(x, x) declared [k]: one name on two dims that differ, kept nowhere."""
    body = graph([N("Identity", ["cond_in"], ["cond_out"], name="b_cond"), N("Identity", ["x"], ["xi"], name="b_x"),
                  N("Identity", ["xi"], ["scan_out"], name="b_out")],
                 [("i", I64, []), ("cond_in", BOOL, [])], [("cond_out", BOOL, []), ("scan_out", F, None)], name="body")
    body.value_info.append(helper.make_tensor_value_info("xi", F, ["k"]))
    m = model([N("Loop", ["trip", ""], ["ys"], body=body, name="loop"),
               N("Concat", ["x", "x"], ["z"], axis=0, name="cat")],
              [("x", F, ["seq"])], [("ys", F, None), ("z", F, ["k"])], [init("trip", np.array(2))])
    res = onnxsym.infer(m)
    assert [(s.value, s.computed) for s in res.stale] == [("xi", ("seq",))]
    assert "k" not in res.aliases
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert written_dims(out.graph.output[1]) == ["2*seq"]
    assert check_written(out, SEQ) == 6  # ys [2, seq] and z


# ------------------------------------------------------------------ issue 21 item 6: onnxslim's text

SLIM_TEXT = "((((height - 1)//2)) + 1//2)"  # what onnxslim 0.1.98 declares (1//2 is 0): (height - 1)//2
HW = [{"batch": 1, "height": 64, "width": 96}, {"batch": 1, "height": 96, "width": 64}]


def test_onnxslims_declared_pool_text_does_not_narrow_the_domain():
    """A stride-2 Conv and a 2x2 AveragePool, as timm's MaxViT shortcut: the pool gives
    ((height - 1)//2 + 1)//2, declared as onnxslim writes it, which is equal only at small
    heights; it once made the domain 3 <= height <= 4."""
    w = np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32)
    m = model([N("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], name="stem"),
               N("AveragePool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
               N("Relu", ["p"], ["y"], name="relu")],
              [("x", F, ["batch", 3, "height", "width"])], [("y", F, None)], [init("w", w)])
    slim_shape = ["batch", 8, SLIM_TEXT, SLIM_TEXT.replace("height", "width")]
    m.graph.value_info.append(helper.make_tensor_value_info("p", F, slim_shape))
    res = onnxsym.infer(m)
    assert res.constraints == [] and res.stale == []  # (equal at heights 3 and 4: not stale either)
    _no_declared_facts(res, HW)
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert check_written(out, HW) == 2 * 12
    p = {vi.name: written_dims(vi) for vi in out.graph.value_info}["p"]
    assert SLIM_TEXT not in p


@pytest.mark.slow
def test_a_slimmed_timm_maxvit_runs_where_onnxruntime_does():
    """models/domain/timm_maxvit_slim.onnx, made by timm and onnxslim (make_maxvit_slim.py):
    the domain admits 64x96 and 96x64, every dim written matches onnxruntime there, and the
    MLIR export keeps height and width unbounded."""
    import os
    import re

    from onnxsym.mlir import to_mlir

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "domain", "timm_maxvit_slim.onnx")
    m = onnx.load(path)
    assert SLIM_TEXT in {d.dim_param for vi in m.graph.value_info for d in vi.type.tensor_type.shape.dim}
    res = onnxsym.infer(m)
    _no_declared_facts(res, HW)
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert check_written_names(out, HW) > 500
    text = to_mlir(res, dialect="torch", names=True)
    ranges = res.symbol_ranges()  # the nodes' (height, width >= 17: a window Reshape; onnxruntime fails at 16)
    for name in ("height", "width"):
        lo, hi = ranges[name]
        assert hi == 9223372036854775807
        assert f'torch.symbolic_int "{name}" {{min_val = {lo}, max_val = {hi}}}' in text
    assert not re.search(r"max_val = [1-9]\b", text)  # no bound of a few units from the declaration


# ------------------------------------------------------------------ found by attacking

def test_sibling_branches_reusing_a_value_name_are_matched_each_in_its_scope():
    """Each branch defines 'v' (legal ONNX): [seq] in one, [2*seq] in the other, declared 'a'
    and 'b'. Each declaration is checked against its own scope's value (both once got the
    last branch's '2*seq'), and a place named by value never keeps a declared name there."""
    then = graph([N("Identity", ["x"], ["v"], name="t1"), N("Identity", ["v"], ["t"], name="t2")],
                 [], [("t", F, None)], name="then")
    then.value_info.append(helper.make_tensor_value_info("v", F, ["a"]))
    els = graph([N("Concat", ["x", "x"], ["v"], axis=0, name="e1"), N("Identity", ["v"], ["e"], name="e2")],
                [], [("e", F, None)], name="else")
    els.value_info.append(helper.make_tensor_value_info("v", F, ["b"]))
    m = model([N("If", ["c"], ["o"], then_branch=then, else_branch=els, name="if")],
              [("c", BOOL, []), ("x", F, ["seq"])], [("o", F, None)])
    res = onnxsym.infer(m)
    assert {k: str(v) for k, v in res.aliases.items()} == {"a": "seq", "b": "2*seq"} and res.stale == []
    for keep in (False, True):
        out = onnxsym.write_result(res, keep_declared_names=keep)
        body = {a.name: a.g for a in out.graph.node[0].attribute}
        assert written_dims(body["then_branch"].value_info[0]) == ["seq"]
        assert written_dims(body["else_branch"].value_info[0]) == ["2*seq"]
        for cond, k in ((True, 1), (False, 2)):
            assert run_ort(out, {"c": np.array(cond), "x": np.ones(3, np.float32)})["o"].shape == (3 * k,)
    # a contradiction inside one branch is found there
    body = {a.name: a.g for a in m.graph.node[0].attribute}
    body["else_branch"].value_info[0].CopyFrom(helper.make_tensor_value_info("v", F, ["seq"]))
    res = onnxsym.infer(m)
    assert [(s.value, s.computed) for s in res.stale] == [("v", ("2*seq",))]
    body = {a.name: a.g for a in onnxsym.write_result(res, keep_declared_names=True).graph.node[0].attribute}
    assert written_dims(body["else_branch"].value_info[0]) == ["2*seq"]


def test_keep_declared_names_writes_no_unproven_text_over_a_fresh_dim():
    """A NonZero count declared 'batch': nothing proves it (the old rule wrote it with
    --keep-declared-names); the count's own name is written."""
    m = model([N("NonZero", ["x"], ["nz"], name="nonzero")], [("x", F, ["batch", "seq"])],
              [("nz", I64, [2, "batch"])])
    res = onnxsym.infer(m)
    (fresh,) = res.fresh
    out = onnxsym.write_result(res, keep_declared_names=True)
    assert written_dims(out.graph.output[0]) == [2, fresh]
    _no_declared_facts(res, [{"batch": 2, "seq": 3}])


# ------------------------------------------------------------------ random declarations


OPS = {  # what each output computes from x: [seq], and its dim as a function of seq
    "id": ([N("Identity", ["x"], ["{o}"])], lambda s: s),
    "twice": ([N("Concat", ["x", "x"], ["{o}"], axis=0)], lambda s: 2 * s),
    "thrice": ([N("Concat", ["x", "x", "x"], ["{o}"], axis=0)], lambda s: 3 * s),
    "tail": ([N("Slice", ["x", "one", "end"], ["{o}"])], lambda s: s - 1),
}
TEXTS = [0, 1, 3, 6, "seq", "seq + 1", "2*seq", "seq - 1", "2*seq - 3", "3*seq", "n", "m", "n + 1", "n - 1",
         "2*n", "n + seq", "2*n + 2", "m*m", "n + m"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(OPS)), st.sampled_from(TEXTS)), min_size=1, max_size=4))
def test_random_declarations_are_checked_never_assumed(outs):
    """Outputs over x: [seq] declared with numbers, input-symbol texts, names and expressions
    of names, at random: nothing declared is a constraint or narrows the domain, every dim
    the written model has (kept names evaluated through their aliases) is onnxruntime's at
    seq 3 and 5, and every stale declaration is false at every seq from 1 to 40."""
    nodes, outputs = [], []
    for i, (op, text) in enumerate(outs):
        for n in OPS[op][0]:
            c = helper.NodeProto()
            c.CopyFrom(n)
            c.output[0] = f"o{i}"
            c.name = f"n{i}"
            nodes.append(c)
        outputs.append((f"o{i}", F, [text]))
    m = model(nodes, [("x", F, ["seq"])], outputs, [init("one", [1]), init("end", [2**63 - 1])])
    res = onnxsym.infer(m)
    assert res.constraints == [] and res.derived_symbols() == {}
    _no_declared_facts(res, SEQ)
    kept = onnxsym.write_result(res, keep_declared_names=True)
    assert check_written_names(kept, SEQ) == 2 * len(outs)
    for st_ in res.stale:
        op, text = outs[int(st_.value[1:])]
        if isinstance(text, int) or not ({"n", "m"} & set(text.replace("+", " ").replace("*", " ").split())):
            declared = text if isinstance(text, int) else None
            for s in range(1, 41):
                value = declared if declared is not None else eval(text, {"seq": s})
                assert value != OPS[op][1](s), (st_, s)


def _layers_declared():
    """Five Relu layers and a Concat: the layers compute one value, each declared; an annotated
    model repeats its declared types, which the matcher and the writer take once per pair
    (declared type, computed value). Declared: r1, r2 as computed; r3 a stale 9; cat (another
    value) with r1's declared type, stale; r4 and r5 a 5 where the graph computes seq (no
    contradiction: a warning for each)."""
    x = helper.make_tensor_value_info("x", F, ["batch", "seq", 8])
    nodes = [helper.make_node("Relu", ["x"], ["r1"]), helper.make_node("Relu", ["r1"], ["r2"]),
             helper.make_node("Relu", ["r2"], ["r3"]), helper.make_node("Relu", ["r3"], ["r4"]),
             helper.make_node("Relu", ["r4"], ["r5"]), helper.make_node("Concat", ["r5", "r5"], ["cat"], axis=1)]
    declared = {"r1": ["batch", "seq", 8], "r2": ["batch", "seq", 8], "r3": ["batch", "seq", 9],
                "r4": ["batch", 5, 8], "r5": ["batch", 5, 8], "cat": ["batch", "seq", 8]}
    vis = [helper.make_tensor_value_info(k, F, v) for k, v in declared.items()]
    g = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("cat", F, None)],
                          value_info=vis)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_a_repeated_declared_type_is_judged_per_computed_value():
    m = _layers_declared()
    res = onnxsym.infer(m)
    assert sorted((s.value, s.declared, s.computed) for s in res.stale) == [
        ("cat", ("batch", "seq", "8"), ("batch", "2*seq", "8")),
        ("r3", ("batch", "seq", "9"), ("batch", "seq", "8"))]
    assert {p for p in res.declarations.proven if p[0] in ("r1", "r2")} == {
        ("r1", 0), ("r1", 1), ("r2", 0), ("r2", 1)}
    sizes = [{"batch": 2, "seq": 3}, {"batch": 1, "seq": 5}]
    layers = ("r1", "r2", "r3", "r4", "r5")
    for keep in (False, True):
        warnings: list[str] = []
        out = onnxsym.write_result(res, keep_declared_names=keep, warnings=warnings)
        got = {vi.name: written_dims(vi) for vi in list(out.graph.value_info) + list(out.graph.output)}
        assert {k: got[k] for k in layers} == dict.fromkeys(layers, ["batch", "seq", 8])
        assert got["cat"] == ["batch", "2*seq", 8]
        assert [w.split(":")[0] for w in warnings] == ["value 'r4'[1]", "value 'r5'[1]"]
        assert check_written(out, sizes) == 36  # (6 values, 3 dims, 2 sizes)
