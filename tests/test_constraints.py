"""Equality constraints: recorded with their node, solved, used downstream, checked
against onnxruntime at sizes where they hold; contradictions name both nodes."""

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import F, init, model
from onnx import helper
from oracle import check_written

import onnxsym
from onnxsym import registry
from onnxsym.cli import main
from onnxsym.commands.verify import constrained_assignments, verify
from onnxsym.facts.fact import Constraint, Origin, Place, Rel, Relation

N = helper.make_node


def _names(result):
    return {name: str(d) for name, d in result.derived_symbols().items()}


def test_broadcast_of_two_symbols_that_are_not_1_is_a_recorded_constraint():
    m = model([N("Add", ["x", "y"], ["z"], name="add"), N("Relu", ["z"], ["r"], name="relu")],
              [("x", F, ["a", 4]), ("y", F, ["b", 4])], ["r"])
    res = onnxsym.infer(m, ranges={"a": (2, 64), "b": (2, 64)})
    assert [(str(c), c.node) for c in res.constraints] == [("b == a", "add")]
    assert _names(res) == {"b": "a"}
    assert [str(d) for d in res.shape("r")] == ["a", "4"]
    report = verify(m, result=res)
    assert report.ok and report.checked_dims == 8  # z and r, 2 dims, 2 assignments
    assert all(b["a"] == b["b"] for b in report.assignments)


def test_broadcast_that_may_be_1_stays_max_and_records_nothing():
    m = model([N("Add", ["x", "y"], ["z"], name="add")], [("x", F, ["a", 4]), ("y", F, ["b", 4])], ["z"])
    res = onnxsym.infer(m)
    assert res.constraints == [] and str(res.shape("z")[0]) == "max(a, b)"


def test_matmul_inner_dims_unify_to_the_symbol_declared_first():
    m = model([N("MatMul", ["x", "w"], ["y"], name="mm"), N("Shape", ["w"], ["s"], name="shape_w")],
              [("x", F, ["batch", "k"]), ("w", F, ["k2", 3])], ["y", "s"])
    res = onnxsym.infer(m)
    assert [(str(c), c.op_type, c.node) for c in res.constraints] == [("k == k2", "MatMul", "mm")]
    assert [str(e) for e in res.values["s"].value] == ["k", "3"]  # used downstream
    assert verify(m, result=res).ok


def test_linear_constraint_makes_the_later_symbol_derived():
    # Concat of past and new keys along the sequence, then Concat with the mask's rows along
    # axis 0: the mask's length must be past + seq.
    m = model([N("Concat", ["pk", "k"], ["kv"], axis=1, name="cat_kv"),
               N("Concat", ["kv", "mask"], ["both"], axis=0, name="cat_mask"),
               N("Relu", ["mask"], ["mask_out"], name="relu_mask")],
              [("k", F, [2, "seq"]), ("pk", F, [2, "past"]), ("mask", F, [1, "total"])], ["both", "mask_out"])
    res = onnxsym.infer(m)
    assert [str(c) for c in res.constraints] == ["total == past + seq"]
    assert _names(res) == {"total": "past + seq"}
    assert [str(d) for d in res.shape("mask_out")] == ["1", "past + seq"]
    report = verify(m, result=res)
    assert report.ok and all(b["total"] == b["past"] + b["seq"] for b in report.assignments)


def _two_relus(xshape, yshape, last):
    return model([N("Relu", ["x"], ["a"], name="relu_x"), N("Relu", ["y"], ["b"], name="relu_y"), last],
                 [("x", F, xshape), ("y", F, yshape)], ["z"])


@pytest.mark.parametrize("last,xs,ys", [
    (N("Concat", ["a", "b"], ["z"], axis=0, name="the_node"), [2, 3], [2, 4]),
    (N("MatMul", ["a", "b"], ["z"], name="the_node"), [2, 3], [4, 5]),
    (N("Add", ["a", "b"], ["z"], name="the_node"), [2, 3], [2, 4]),
    (N("Concat", ["a", "b"], ["z"], axis=0, name="the_node"), ["n", "seq"], ["n", "seq + 1"]),
])
def test_contradiction_names_the_node_and_where_its_inputs_come_from(last, xs, ys):
    with pytest.raises(onnxsym.ShapeContradiction) as e:
        onnxsym.infer(_two_relus(xs, ys, last))
    msg = str(e.value)
    assert "\n" not in msg
    for part in (f"{last.op_type} node 'the_node'", "Relu node 'relu_x'", "Relu node 'relu_y'"):
        assert part in msg


def test_reshape_with_a_wrong_product_is_a_contradiction():
    m = model([N("Reshape", ["x", "s"], ["y"], name="rs")], [("x", F, ["b", 6])], ["y"],
              [init("s", [-1, 4])])
    assert onnxsym.infer(m, bind={"b": 2}).shape("y") == (3, 4)
    with pytest.raises(onnxsym.ShapeContradiction, match="Reshape node 'rs'.*15 elements"):
        onnxsym.infer(model([N("Reshape", ["x", "s"], ["y"], name="rs")], [("x", F, [3, 5])], ["y"],
                            [init("s", [-1, 4])]))
    with pytest.raises(onnxsym.ShapeContradiction, match="Reshape node 'rs' requires 4\\*b == 6\\*b"):
        onnxsym.infer(model([N("Shape", ["x"], ["sh"], name="sh"),
                             N("Gather", ["sh", "zero"], ["b0"], axis=0, name="g"),
                             N("Concat", ["b0", "four"], ["s"], axis=0, name="c"),
                             N("Reshape", ["x", "s"], ["y"], name="rs")], [("x", F, ["b", 6])], ["y"],
                            [init("zero", [0]), init("four", [4])]))


def test_contradiction_with_an_earlier_constraint_names_both_nodes():
    # mm says k == seq, then cat needs k == seq + 1.
    m = model([N("MatMul", ["x", "w"], ["y"], name="mm"),
               N("Pad", ["x", "pads"], ["xp"], name="pad"),
               N("Concat", ["xp", "w"], ["z"], axis=0, name="cat")],
              [("x", F, ["seq", "seq"]), ("w", F, ["k", "k"])], ["y", "z"], [init("pads", [0, 0, 0, 1])])
    with pytest.raises(onnxsym.ShapeContradiction) as e:
        onnxsym.infer(m)
    assert e.value.nodes == ("cat", "mm")
    assert "Concat node 'cat'" in str(e.value) and "MatMul node 'mm'" in str(e.value)
    assert "seq + 1 == seq" in str(e.value) or "seq == seq + 1" in str(e.value)


def test_a_solved_symbol_outside_its_range_is_a_contradiction():
    m = model([N("MatMul", ["x", "w"], ["y"], name="mm")], [("x", F, [2, "k"]), ("w", F, ["j", 3])], ["y"])
    with pytest.raises(onnxsym.ShapeContradiction, match="MatMul node 'mm'.*k and j"):
        onnxsym.infer(m, ranges={"k": (1, 8), "j": (10, 20)})
    res = onnxsym.infer(m, ranges={"k": (1, 8), "j": (4, 20)})
    assert res.symbol_ranges()["k"] == (4, 8)
    assert all(4 <= b["k"] == b["j"] <= 8 for b in constrained_assignments(res, count=3))


def test_bind_range_assume_in_the_library():
    m = model([N("Concat", ["k", "pk"], ["kv"], axis=1, name="cat")],
              [("k", F, ["batch", "seq"]), ("pk", F, ["batch", "past"])], ["kv"])
    res = onnxsym.infer(m, bind={"batch": 1}, ranges={"seq": (1, 4096)}, assume=["past == seq"])
    assert [str(d) for d in res.shape("kv")] == ["1", "2*seq"]
    assert res.symbol_ranges()["seq"] == (1, 4096)
    assert [(str(c), c.node) for c in res.constraints] == [("past == seq", "--assume")]
    assert verify(m, result=res).ok
    with pytest.raises(onnxsym.OnnxsymError, match="no input symbol 'sq'"):
        onnxsym.infer(m, assume=["past == sq"])
    # the library names its own arguments, the command line its options
    with pytest.raises(onnxsym.OnnxsymError, match=r"^bind\['btch'\]: the model has no input symbol 'btch'") as e:
        onnxsym.infer(m, bind={"btch": 1})
    assert e.value.cli.startswith("--bind btch: the model has no input symbol 'btch'")
    with pytest.raises(onnxsym.OnnxsymError, match=r"^assume 'past == sq': the model has no input symbol 'sq'"):
        onnxsym.infer(m, assume=["past == sq"])
    with pytest.raises(onnxsym.OnnxsymError, match=r"^ranges\['seq'\] = \(5, 2\): expected 0 <= lo <= hi"):
        onnxsym.infer(m, ranges={"seq": (5, 2)})
    assert onnxsym.infer(m, allow_zero=True).symbol_ranges()["seq"] == (0, 2**63 - 1)
    with pytest.raises(onnxsym.OnnxsymError, match=r"allow_zero=True"):
        onnxsym.infer(m, bind={"batch": 0})
    assert onnxsym.infer(m, bind={"batch": 0}, allow_zero=True).shape("kv")[0] == 0
    with pytest.raises(onnxsym.OnnxsymError, match="outside the range"):
        onnxsym.infer(m, bind={"seq": 9}, ranges={"seq": (1, 8)})


def test_a_declared_name_of_an_output_is_an_alias_and_the_computed_dim_is_written():
    m = model([N("Concat", ["pk", "k"], ["kv"], axis=1, name="cat")],
              [("k", F, ["batch", "seq"]), ("pk", F, ["batch", "past"])], [("kv", F, ["batch", "total_seq"])])
    res = onnxsym.infer(m)
    assert res.constraints == [] and _names(res) == {}  # a name, not a constraint on the model
    assert {k: str(v) for k, v in res.aliases.items()} == {"total_seq": "past + seq"}
    assert res.alias_places("total_seq") == [("kv", 1)]
    out = onnxsym.write_result(res)
    assert [d.dim_param for d in out.graph.output[0].type.tensor_type.shape.dim] == ["batch", "past + seq"]
    assert json.loads({p.key: p.value for p in out.metadata_props}["onnxsym.aliases"]) == {"total_seq": "past + seq"}
    old = onnxsym.write_result(res, keep_declared_names=True)
    assert [d.dim_param for d in old.graph.output[0].type.tensor_type.shape.dim] == ["batch", "total_seq"]
    assert verify(m, result=res).ok


def test_a_declared_dim_the_graph_contradicts_is_a_stale_declaration_not_an_error():
    m = model([N("Concat", ["pk", "k"], ["kv"], axis=1, name="cat")],
              [("k", F, ["batch", "seq"]), ("pk", F, ["batch", "past"])], [("kv", F, ["batch", "past + seq + 1"])])
    res = onnxsym.infer(m)
    assert [(s.value, s.declared, s.computed) for s in res.stale] == [
        ("kv", ("batch", "past + seq + 1"), ("batch", "past + seq"))]
    assert res.constraints == [] and any("stale declaration" in w for w in res.warnings)
    out = onnxsym.write_result(res)
    assert [d.dim_param for d in out.graph.output[0].type.tensor_type.shape.dim] == ["batch", "past + seq"]
    assert verify(m, result=res).ok


def test_cli_options_printing_and_metadata(tmp_path):
    m = model([N("MatMul", ["x", "w"], ["y"], name="mm"), N("Concat", ["x", "p"], ["c"], axis=1, name="cat")],
              [("x", F, ["batch", "seq"]), ("w", F, ["k", 3]), ("p", F, ["batch", "past"])], ["y", "c"])
    p = str(tmp_path / "m.onnx")
    onnx.save(m, p)
    out = str(tmp_path / "o.onnx")
    r = CliRunner().invoke(main, ["annotate", p, "-o", out, "--bind", "batch=1", "--range", "seq=1:4096",
                                  "--assume", "past == seq"])
    assert r.exit_code == 0, r.output
    assert "given past == seq (--assume" in r.output
    assert "domain k == seq: MatMul 'mm': MatMul inner dims: seq == k" in r.output  # (stated by the domain)
    meta = {p.key: p.value for p in onnx.load(out).metadata_props}
    assert json.loads(meta["onnxsym.user"]) == {"bind": {"batch": 1}, "ranges": {"seq": [1, 4096]},
                                                "assume": ["past == seq"], "allow_zero": False,
                                                "allow_zero_symbols": [], "values": {}}
    # The written dims hold at every size the inputs allow (batch is written into them):
    # the --range and --assume are what onnxsym.user records, not what the dims rely on.
    written = onnx.load(out)
    assert [d.dim_value for d in written.graph.input[0].type.tensor_type.shape.dim] == [1, 0]
    assert [d.dim_param or d.dim_value for d in written.graph.output[1].type.tensor_type.shape.dim] == [1, "past + seq"]
    assert [c["constraint"] for c in json.loads(meta["onnxsym.constraints"])] == ["seq == k"]
    assert json.loads(meta["onnxsym.derived"]) == {"k": "seq"}
    assert json.loads(meta["onnxsym.symbols"])["seq"]["range"] == [1, 2**63 - 1]
    assert "the graph inputs are written with batch = 1" in r.output and "--range and --assume narrow" in r.output
    r = CliRunner().invoke(main, ["verify", p, "--range", "seq=2:5", "--assume", "past == seq"])
    assert r.exit_code == 0 and "0 wrong" in r.output, r.output
    r = CliRunner().invoke(main, ["verify", p, "--bind", "seq=4", "--bind", "past=4", "--bind", "batch=2"])
    assert r.exit_code == 0 and "1 assignment" in r.output, r.output
    r = CliRunner().invoke(main, ["annotate", p, "-o", out, "--allow-zero", "--force"])
    meta = {p.key: p.value for p in onnx.load(out).metadata_props}
    assert r.exit_code == 0 and json.loads(meta["onnxsym.user"])["allow_zero"] is True
    assert json.loads(meta["onnxsym.symbols"])["past"]["range"] == [0, 2**63 - 1]
    r = CliRunner().invoke(main, ["annotate", p, "-o", out, "--range", "seq=1", "--force"])
    assert r.exit_code == 2 and "NAME=LO:HI" in r.output
    for args, text in ((["--bind", "btch=1"], "--bind btch: the model has no input symbol 'btch'"),
                       (["--range", "seq=5:2"], "--range seq=5:2: expected 0 <= LO <= HI"),
                       (["--assume", "past == sq"], "--assume 'past == sq': the model has no input symbol 'sq'")):
        r = CliRunner().invoke(main, ["annotate", p, "-o", out, "--force", *args])
        assert r.exit_code == 2 and f"onnxsym: error: {text}" in r.stderr, r.output


def test_a_contradiction_carries_its_node_and_keeps_the_rules_error_as_its_cause():
    from onnxsym.facts.constraints import ConstraintContradiction

    with pytest.raises(onnxsym.ShapeContradiction) as info:  # 3 against 4: a rule's own contradiction
        onnxsym.infer(_two_relus([2, 3], [4, 5], N("MatMul", ["a", "b"], ["z"], name="mm")))
    exc = info.value
    assert (exc.node, exc.op_type, exc.domain) == ("mm", "MatMul", "")
    assert isinstance(exc.__cause__, onnxsym.ShapeContradiction) and exc.__cause__.node == ""
    assert exc.message == str(exc.__cause__) and exc.context.startswith("inputs: 'a' [2, 3] from Relu node")
    assert str(exc) == f"MatMul node 'mm': {exc.message}; {exc.context}"
    with pytest.raises(ConstraintContradiction) as info:  # the recorded constraint's own: h >= 5 where h <= 2
        onnxsym.infer(model([N("Conv", ["x", "w"], ["y"], name="conv")], [("x", F, [1, 1, "h"])], ["y"],
                            [init("w", np.zeros((1, 1, 5), np.float32))]), ranges={"h": (1, 2)})
    exc = info.value
    assert (exc.node, exc.op_type, exc.nodes, exc.lhs, exc.rhs) == ("conv", "Conv", ("conv",), onnxsym.sym("h"), 5)
    assert exc.why == "it can never hold: h <= 2 < 5" and str(exc).endswith(f"{exc.why}; {exc.context}")
    assert isinstance(exc.__cause__, ConstraintContradiction) and exc.__cause__.node == ""


def test_cli_contradiction_is_one_line_and_exit_2(tmp_path):
    p = str(tmp_path / "m.onnx")
    onnx.save(_two_relus([2, 3], [4, 5], N("MatMul", ["a", "b"], ["z"], name="mm")), p)
    r = CliRunner().invoke(main, ["annotate", p])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "MatMul node 'mm'" in lines[0] and "Relu node 'relu_y'" in lines[0]


def _run_branch(node):
    return node.infer_graph(node.attr("body"), [])


@pytest.fixture
def run_branch_rule():
    """RunBranch's rule for one test (registered for good, it would stay on the conditions page)."""
    with registry.override("RunBranch", _run_branch, domain="test.constraints"):
        yield


def test_a_subgraph_records_its_constraints_without_solving_them(run_branch_rule):

    body = helper.make_graph([N("MatMul", ["x", "w"], ["y"], name="inner_mm")], "body", [],
                             [helper.make_empty_tensor_value_info("y")])
    m = model([N("RunBranch", [], ["out"], domain="test.constraints", name="br", body=body)],
              [("x", F, [2, "k"]), ("w", F, ["j", 3])], [("out", F, None)],
              opsets=[("test.constraints", 1)])
    res = onnxsym.infer(m)
    assert [(str(c), c.node) for c in res.constraints] == [("k == j", "inner_mm")]
    (guard,) = res.constraints[0].when  # under "that subgraph runs", a field of its own
    assert guard.node == "br" and guard.text == "the subgraph of RunBranch node 'br' runs"
    assert "subgraph" not in res.constraints[0].reason
    assert res.derived_symbols() == {}
    c = res.constraints[0]  # a typed fact: relation, origin, place
    assert (c.rel, c.origin, c.place.op_type, c.place.graph) == (Rel.EQ, Origin.NEEDED, "MatMul",
                                                                 ("RunBranch node 'br'",))
    meta = json.loads({p.key: p.value for p in onnxsym.write_result(res).metadata_props}["onnxsym.constraints"])
    assert meta == [{"constraint": "k == j", "relation": "==", "origin": "needed", "node": "inner_mm",
                     "op_type": "MatMul", "reason": "MatMul inner dims", "graph": ["RunBranch node 'br'"],
                     "when": ["the subgraph of RunBranch node 'br' runs"]}]


def test_a_fact_holds_decides_and_prints_by_its_relation():
    seq = onnxsym.sym("seq", 1, 64)
    at = Place("n", "Conv")
    for rel, text, at_3, proven in ((Rel.EQ, "seq == 3", True, None), (Rel.NE, "seq != 0", True, True),
                                    (Rel.LE, "seq <= 64", True, True), (Rel.GE, "seq >= 5", False, None)):
        rhs = int(text.rsplit(" ", 1)[1])
        c = Constraint(rel, seq, rhs, Origin.NEEDED, at, "why")
        assert (str(c), c.holds({"seq": 3}), c.proven(), c.where) == (text, at_3, proven, "Conv node 'n'")
    assert Constraint(Rel.GE, seq, 65, Origin.NEEDED, at, "").proven() is False
    assert Relation(Rel.LT, seq, 4).negated() == Relation(Rel.GE, seq, 4)


def test_names_from_onnx_shape_inference_do_not_hide_the_inferred_dims():
    m = model([N("Concat", ["pk", "k"], ["kv"], axis=1, name="cat")],
              [("k", F, ["batch", "seq"]), ("pk", F, ["batch", "past"])], [("kv", F, ["batch", "unk__0"])])
    res = onnxsym.infer(m)
    assert res.constraints == []
    out = onnxsym.write_result(res)
    assert out.graph.output[0].type.tensor_type.shape.dim[1].dim_param == "past + seq"
    again = onnxsym.infer(out)  # annotating an annotated model changes nothing
    assert again.constraints == [] and again.derived_symbols() == {}


def test_a_declaration_over_input_symbols_is_no_constraint_and_does_not_specialize_the_model():
    m = model([N("ReduceSum", ["x", "ax"], ["s"], keepdims=1, name="sum"), N("Relu", ["x"], ["r"], name="relu")],
              [("x", F, ["batch", 4])], [("s", F, ["batch", 4]), ("r", F, ["batch", 4])], [init("ax", [0])])
    res = onnxsym.infer(m)
    # s[0] is 1, declared 'batch': a claim true only at batch 1, so neither a constraint nor stale
    assert res.constraints == [] and res.stale == []
    assert res.derived_symbols() == {} and str(res.shape("r")[0]) == "batch"
    assert not res.domain().conditions and res.domain().violated({"batch": 3}) is None
    out = onnxsym.write_result(res)
    assert out.graph.output[0].type.tensor_type.shape.dim[0].dim_value == 1
    assert verify(m, result=res).ok
    assert check_written(out, [{"batch": 2}, {"batch": 3}]) == 8
