"""Names a model declares on the values its nodes produce are aliases: the computed dim
is written (a number or an expression over the graph-input symbols), the name recorded
with it; it is kept only where the graph computes a fresh symbol, which it then names.
Every written dim is checked against onnxruntime at two or more sizes."""

import json
import os

import numpy as np
import onnx
from cli_models import annotate_cli
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper
from oracle import check_written, written_dims

import onnxsym
from onnxsym.cli import main
from onnxsym.commands.verify import constrained_assignments

F = TensorProto.FLOAT
HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [{"batch": 2, "seq": 3, "past": 4}, {"batch": 3, "seq": 5, "past": 1}]


def _ts_like():
    """What the TorchScript exporter writes: its own placeholder names on the outputs."""
    scale = numpy_helper.from_array(np.ones(8, np.float32), "scale")
    bias = numpy_helper.from_array(np.zeros(8, np.float32), "bias")
    nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["out"], axis=-1, name="ln"),
             helper.make_node("Concat", ["past", "out"], ["present_k"], axis=1, name="cat")]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, ["batch", "seq", 8]),
                     helper.make_tensor_value_info("past", F, ["batch", "past", 8])],
        [helper.make_tensor_value_info("out", F, ["LayerNormalizationout_dim_0", "LayerNormalizationout_dim_1", 8]),
         helper.make_tensor_value_info("present_k", F, ["Concatpresent_k_dim_0", "Concatpresent_k_dim_1", 8])],
        initializer=[scale, bias])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _meta(m):
    return {p.key: p.value for p in m.metadata_props}


def test_torchscript_placeholders_are_written_as_the_computed_dims():
    m = _ts_like()
    res = onnxsym.infer(m)
    assert {k: str(v) for k, v in res.aliases.items()} == {
        "LayerNormalizationout_dim_0": "batch", "LayerNormalizationout_dim_1": "seq",
        "Concatpresent_k_dim_0": "batch", "Concatpresent_k_dim_1": "past + seq"}
    assert res.alias_places("Concatpresent_k_dim_1") == [("present_k", 1)]
    assert res.constraints == [] and res.derived_symbols() == {} and set(res.symbols.symbols) == {"batch", "seq", "past"}
    out = onnxsym.write_result(res)
    assert [written_dims(o) for o in out.graph.output] == [["batch", "seq", 8], ["batch", "past + seq", 8]]
    assert json.loads(_meta(out)["onnxsym.aliases"])["Concatpresent_k_dim_1"] == "past + seq"
    assert list(out.graph.input) == list(m.graph.input)  # graph inputs are never renamed
    assert check_written(out, SIZES) == 12
    kept = onnxsym.annotate(m, keep_declared_names=True)
    assert [written_dims(o) for o in kept.graph.output] == [
        ["LayerNormalizationout_dim_0", "LayerNormalizationout_dim_1", 8],
        ["Concatpresent_k_dim_0", "Concatpresent_k_dim_1", 8]]
    assert json.loads(_meta(kept)["onnxsym.aliases"]) == json.loads(_meta(out)["onnxsym.aliases"])
    again = onnxsym.infer(out)  # annotating the annotated model: nothing left to alias
    assert again.aliases == {} and again.constraints == [] and again.stale == []


def test_cli_annotate_show_explain_use_the_aliases(tmp_path):
    p, out, r = annotate_cli(_ts_like(), tmp_path)
    assert r.exit_code == 0 and "4 dim names the model declares on produced values are aliases" in r.output, r.output
    assert [written_dims(o) for o in onnx.load(out).graph.output][1] == ["batch", "past + seq", 8]
    r = CliRunner().invoke(main, ["annotate", p, "-o", out, "--force", "--keep-declared-names", "-q"])
    assert r.exit_code == 0 and [written_dims(o) for o in onnx.load(out).graph.output][1][1] == "Concatpresent_k_dim_1"
    r = CliRunner().invoke(main, ["show", p, "--no-color", "-v"])
    assert r.exit_code == 0, r.output
    section = r.output.split("aliases (dim names the model declares on produced values)\n", 1)[1].splitlines()
    assert "  Concatpresent_k_dim_1       = past + seq  present_k[1]" in section
    r = CliRunner().invoke(main, ["explain", p, "present_k", "1"])
    assert r.exit_code == 0 and "present_k[1] = past + seq: resolved over input symbols past, seq; " \
        "the model names it 'Concatpresent_k_dim_1' (an alias)" in r.output, r.output
    r = CliRunner().invoke(main, ["explain", p, "Concatpresent_k_dim_1", "-q"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[:2] == [
        "Concatpresent_k_dim_1: an alias the model declares, = past + seq",
        "present_k[1] = past + seq: resolved over input symbols past, seq; "
        "the model names it 'Concatpresent_k_dim_1' (an alias)"]


def _paddle_like():
    """paddle2onnx names every dynamic dim p2o.DynamicDimension.N (not an expression: a name),
    and uses one name on several outputs."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"), helper.make_node("Sigmoid", ["x"], ["b"], name="sig"),
             helper.make_node("Concat", ["x", "x"], ["c"], axis=1, name="cat")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, ["batch", "seq"])],
                          [helper.make_tensor_value_info(n, F, ["p2o.DynamicDimension.0", "p2o.DynamicDimension.1"])
                           for n in ("a", "b", "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_one_paddle_name_on_several_outputs():
    res = onnxsym.infer(_paddle_like())
    # c[1] is 2*seq, never seq: the one name on both is stale, not a constraint on seq, and
    # no alias (it is consistent with only some of its places)
    assert {k: str(v) for k, v in res.aliases.items()} == {"p2o.DynamicDimension.0": "batch"}
    assert res.alias_places("p2o.DynamicDimension.1") == [("a", 1), ("b", 1), ("c", 1)]
    assert [(s.value, s.computed, s.why) for s in res.stale] == [
        ("c", ("batch", "2*seq"), "'p2o.DynamicDimension.1' is also declared at a[1] as 'p2o.DynamicDimension.1', "
                                  "where the graph computes seq")]
    assert res.constraints == [] and res.derived_symbols() == {}
    out = onnxsym.write_result(res)
    assert [written_dims(o) for o in out.graph.output] == [["batch", "seq"], ["batch", "seq"], ["batch", "2*seq"]]
    assert check_written(out, SIZES) == 12
    kept = onnxsym.write_result(res, keep_declared_names=True)  # the contradicted name is kept nowhere
    assert [written_dims(o) for o in kept.graph.output] == [["p2o.DynamicDimension.0", "seq"]] * 2 + \
        [["p2o.DynamicDimension.0", "2*seq"]]


def test_a_declared_name_names_a_fresh_dim_and_an_input_symbol_does_not():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
             helper.make_node("Transpose", ["nz"], ["nzt"], perm=[1, 0], name="tr")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, ["batch", "seq"])],
                          [helper.make_tensor_value_info("nz", TensorProto.INT64, [2, "num_nonzero"]),
                           helper.make_tensor_value_info("nzt", TensorProto.INT64, ["batch", 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    res = onnxsym.infer(m)
    (fresh,) = res.fresh
    assert {k: str(v) for k, v in res.aliases.items()} == {"num_nonzero": fresh}
    out = onnxsym.write_result(res)
    # the fresh count gets the model's name; 'batch' there would claim what nothing proves
    assert [written_dims(o) for o in out.graph.output] == [[2, "num_nonzero"], [fresh, 2]]
    assert check_written(out, SIZES) == 4  # the static dims; the counts name no input symbol
    r = onnxsym.infer(out)
    assert [written_dims(o) for o in onnxsym.write_result(r).graph.output] == [[2, "num_nonzero"], [fresh, 2]]


def test_subgraph_value_info_gets_the_computed_dims():
    def branch(op, name):
        return helper.make_graph([helper.make_node(op, ["x"], [name], name=op.lower()),
                                  helper.make_node("Identity", [name], [name + "_out"], name=op.lower() + "_id")],
                                 name, [], [helper.make_tensor_value_info(name + "_out", F, None)],
                                 value_info=[helper.make_tensor_value_info(name, F, [f"{op}{name}_dim_0", 3])])
    node = helper.make_node("If", ["cond"], ["y"], name="if", then_branch=branch("Relu", "t"),
                            else_branch=branch("Sigmoid", "e"))
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                                        helper.make_tensor_value_info("x", F, ["batch", 3])],
                          [helper.make_tensor_value_info("y", F, ["Ify_dim_0", 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    res = onnxsym.infer(m)
    assert {k: str(v) for k, v in res.aliases.items()} == {"Ify_dim_0": "batch", "Relut_dim_0": "batch",
                                                            "Sigmoide_dim_0": "batch"}
    out = onnxsym.write_result(res)
    body = {a.name: a.g for a in out.graph.node[0].attribute}
    assert written_dims(body["then_branch"].value_info[0]) == ["batch", 3]
    assert written_dims(body["else_branch"].value_info[0]) == ["batch", 3]
    for cond in (True, False):  # each branch's inner value is the If's output: y, checked here
        assert check_written(out, [{"batch": 2}, {"batch": 5}],
                             feeds=lambda b, cond=cond: {"cond": np.array(cond), "x": np.ones((b["batch"], 3), np.float32)}) == 4


def test_dynamo_sympy_text_in_value_info_is_rewritten_over_the_input_symbols():
    """The dynamo exporter writes sympy's text (Mod(...), not in the grammar) on its value_info:
    on SwinTiny 175 dims, which onnxsym proves and now writes as its own expressions."""
    path = os.path.join(HERE, "..", "models", "swin_tiny_dynamo.onnx")
    res = onnxsym.infer(path)
    out = onnxsym.write_result(res)
    places = [(vi.name, axis) for vi in onnx.load(path).graph.value_info
              for axis, d in enumerate(map(str, written_dims(vi))) if "Mod(" in d]
    # torch's Mod(...) is read (facts/torch_text), so each text is proven where it is declared, no alias needed
    assert len(places) >= 100 and all(p in res.declarations.proven for p in places)
    assert not any("Mod(" in name for name in res.aliases) and res.stale == []
    assert not any("Mod(" in str(d) for vi in list(out.graph.value_info) + list(out.graph.output)
                   for d in written_dims(vi))
    assert check_written(out, constrained_assignments(res, count=2)) > 1000
