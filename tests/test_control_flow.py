"""If, Loop and Scan: bodies inferred with the outer scope visible, checked against onnxruntime."""

import numpy as np
import onnx
from helpers import I64, F, graph, model
from onnx import TensorProto, helper
from oracle import check

import onnxsym

BOOL = TensorProto.BOOL
SIZES = [{"batch": 2, "seq": 5}, {"batch": 3, "seq": 1}]


def body(nodes, inputs, outputs):
    """A subgraph whose inputs and outputs declare only their element type (a Loop's
    iteration number and condition are scalars)."""
    return graph(nodes, [(n, t, [] if n in ("i", "cond_in") else None) for n, t in inputs], outputs, name="body")


def x_feeds(cond=None, shape=lambda b: (b["batch"], b["seq"])):
    cases = []
    for i, b in enumerate(SIZES):
        feeds = {"x": np.random.default_rng(i).standard_normal(shape(b)).astype(np.float32)}
        if cond is not None:
            feeds["c"] = np.array(cond[i % len(cond)])
        cases.append((b, feeds))
    return cases


def dims_text(res, name):
    return [str(d) for d in res.shape(name)]


def reasons(res, name):
    return [p.reason for u in res.unresolved() if u.value == name for p in u.provenance]


# ------------------------------------------------------------------ If

def if_model(else_nodes, else_out="e"):
    then_g = body([helper.make_node("Relu", ["x"], ["t"])], [], [("t", F)])
    else_g = body(else_nodes, [], [(else_out, F)])
    return model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                 [("x", F, ["batch", "seq"]), ("c", BOOL, [])], ["y"])


def test_if_with_equal_branches_keeps_the_dims():
    m = if_model([helper.make_node("Neg", ["x"], ["e"])])
    res = check(m, x_feeds([True, False]), annotated=True)
    assert dims_text(res, "y") == ["batch", "seq"]


def test_if_with_different_branches_makes_a_fresh_dim_with_the_reason():
    m = if_model([helper.make_node("Concat", ["x", "x"], ["e"], axis=1)])
    res = check(m, x_feeds([True, False]), annotated=True, fresh_ok=["y"])
    b, s = res.shape("y")
    assert str(b) == "batch" and res.symbols.symbols.get(str(s)) is not None
    assert any("If branches differ: seq, 2*seq" in r for r in reasons(res, "y"))
    with res.env:  # the result's ranges
        assert onnxsym.dims.range_of(s) == (1, onnxsym.dims.range_of(s)[1])


def test_if_with_known_condition_takes_that_branch_only():
    m = if_model([helper.make_node("Concat", ["x", "x"], ["e"], axis=1)])
    m.graph.node.insert(0, helper.make_node("Constant", [], ["c"], value=helper.make_tensor("v", BOOL, [], [False])))
    del m.graph.input[1]
    res = check(m, x_feeds(), annotated=True)
    assert dims_text(res, "y") == ["batch", "2*seq"]


def test_if_branches_of_different_rank_give_an_unknown_rank_with_the_reason():
    m = if_model([helper.make_node("Flatten", ["x"], ["f"], axis=0),
                  helper.make_node("Squeeze", ["f", "zero"], ["e"]),
                  helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", I64, [1], [0]))])
    res = onnxsym.infer(m)
    assert res.shape("y") is None
    assert reasons(res, "y") == ["the If branches give ranks 2 and 1"]


def test_if_body_values_are_written_into_the_branch_value_info():
    then_g = body([helper.make_node("Concat", ["x", "x"], ["t0"], axis=0), helper.make_node("Relu", ["t0"], ["t"])],
                  [], [("t", F)])
    else_g = body([helper.make_node("Concat", ["x", "x"], ["e"], axis=0)], [], [("e", F)])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
              [("x", F, ["batch", "seq"]), ("c", BOOL, [])], ["y"])
    check(m, x_feeds([True, False]), annotated=True)
    annotated = onnxsym.annotate(m)
    (branch,) = [a.g for a in annotated.graph.node[0].attribute if a.name == "then_branch"]
    (vi,) = branch.value_info
    assert vi.name == "t0" and [d.dim_param for d in vi.type.tensor_type.shape.dim] == ["2*batch", "seq"]
    # a branch runs once: its output is what it computes (written, as onnx's inference does)
    assert [d.dim_param for d in branch.output[0].type.tensor_type.shape.dim] == ["2*batch", "seq"]


# ------------------------------------------------------------------ Loop

def loop_model(body_nodes, body_outputs, carried_in, trip=("trip",), cond="", outer=(), opset=17):
    """A Loop over ``x`` (batch, seq); the trip count is a constant 3 unless given."""
    n_carried = len(carried_in)
    g = body(body_nodes, [("i", I64), ("cond_in", BOOL)] + [(f"{v}_in", F) for v in carried_in], body_outputs)
    n_scan = len(body_outputs) - 1 - n_carried
    outs = [f"{v}_out" for v in carried_in] + [f"scan{j}" for j in range(n_scan)]
    nodes = list(outer) + [helper.make_node("Loop", [trip[0] if trip else "", cond] + list(carried_in), outs, body=g)]
    if trip == ("trip",):
        nodes.insert(0, helper.make_node("Constant", [], ["trip"], value=helper.make_tensor("t", I64, [], [3])))
    return model(nodes, [("x", F, ["batch", "seq"])], outs, opset=opset)


def test_loop_invariant_carried_value_and_scan_output_with_known_trip_count():
    m = loop_model([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                    helper.make_node("Add", ["x_in", "x"], ["x_next"]),  # reads the outer x
                    helper.make_node("Relu", ["x_next"], ["step"])],
                   [("cond_out", BOOL), ("x_next", F), ("step", F)], ["x"])
    res = check(m, x_feeds(), annotated=True)
    assert dims_text(res, "x_out") == ["batch", "seq"]
    assert dims_text(res, "scan0") == ["3", "batch", "seq"]


GROW = [helper.make_node("Concat", ["x_in", "x"], ["x_next"], axis=1),
        helper.make_node("ReduceSum", ["x_next"], ["total"], keepdims=0)]


def test_loop_carried_value_growing_by_a_fixed_step_ends_at_initial_plus_trip_steps():
    m = loop_model([helper.make_node("Identity", ["cond_in"], ["cond_out"])] + GROW,
                   [("cond_out", BOOL), ("x_next", F), ("total", F)], ["x"])
    res = check(m, x_feeds(), annotated=True)
    assert dims_text(res, "x_out") == ["batch", "4*seq"]
    assert dims_text(res, "scan0") == ["3"]
    # In the body, the carried dim stands for any iteration's, and what is added to it shows.
    carried, seq = res.subgraph_values["x_in"].shape[1], res.values["x"].shape[1]
    assert res.subgraph_values["x_next"].shape[1] == onnxsym.dims.add(carried, seq)
    assert "changes from one iteration" in res.fresh[str(carried)].reason


def test_loop_growing_carried_value_with_an_early_exit_gets_a_fresh_dim_never_a_wrong_one():
    """M is 3 but the condition i < 1 ends the loop after 2 iterations."""
    outer = [helper.make_node("Constant", [], ["go"], value=helper.make_tensor("g", BOOL, [], [True]))]
    m = loop_model([helper.make_node("Constant", [], ["two"], value=helper.make_tensor("t", I64, [], [1])),
                    helper.make_node("Less", ["i", "two"], ["cond_out"])] + GROW,
                   [("cond_out", BOOL), ("x_next", F), ("total", F)], ["x"], cond="go", outer=outer)
    res = check(m, x_feeds(), annotated=True, fresh_ok=["scan0", "x_out"])
    b, s = res.shape("x_out")
    assert str(b) == "batch" and "changes from one iteration" in reasons(res, "x_out")[0]


def test_loop_trip_count_from_a_shape_is_the_scan_length():
    outer = [helper.make_node("Shape", ["x"], ["shp"]),
             helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", I64, [], [0])),
             helper.make_node("Gather", ["shp", "zero"], ["n"])]
    m = loop_model([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                    helper.make_node("Constant", [], ["ax"], value=helper.make_tensor("a", I64, [1], [0])),
                    helper.make_node("Unsqueeze", ["i", "ax"], ["i1"]),
                    helper.make_node("Cast", ["i1"], ["step"], to=F)],
                   [("cond_out", BOOL), ("step", F)], [], trip=("n",), outer=outer)
    res = check(m, x_feeds(), annotated=True)
    assert dims_text(res, "scan0") == ["batch", "1"]


def test_loop_with_a_condition_that_ends_it_early_has_a_fresh_trip_count_bounded_by_M():
    """M is 3, the condition i < 1 ends the loop after 2 iterations."""
    outer = [helper.make_node("Constant", [], ["go"], value=helper.make_tensor("g", BOOL, [], [True]))]
    m = loop_model([helper.make_node("Constant", [], ["two"], value=helper.make_tensor("t", I64, [], [1])),
                    helper.make_node("Less", ["i", "two"], ["cond_out"]),
                    helper.make_node("Relu", ["x"], ["step"])],
                   [("cond_out", BOOL), ("step", F)], [], cond="go", outer=outer)
    res = check(m, x_feeds(), annotated=True, fresh_ok=["scan0"])
    n, b, s = res.shape("scan0")
    # (the condition starts true and M is 3: at least one iteration runs)
    with res.env:
        assert (str(b), str(s)) == ("batch", "seq") and onnxsym.dims.range_of(n) == (1, 3)
    assert "may end it early" in reasons(res, "scan0")[0]


def test_loop_with_a_condition_that_stays_true_runs_M_times():
    outer = [helper.make_node("Constant", [], ["go"], value=helper.make_tensor("g", BOOL, [], [True]))]
    m = loop_model([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                    helper.make_node("Relu", ["x"], ["step"])],
                   [("cond_out", BOOL), ("step", F)], [], cond="go", outer=outer)
    res = check(m, x_feeds(), annotated=True)
    assert dims_text(res, "scan0") == ["3", "batch", "seq"]


def test_loop_counter_that_drives_a_shape_is_not_taken_as_constant():
    """The counter starts at 1; a carried Range over it grows, so its dim must be fresh."""
    outer = [helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", F, [], [1.0])),
             helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", F, [], [0.0])),
             helper.make_node("Range", ["zero", "one", "one"], ["r"])]
    m = loop_model([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                    helper.make_node("Add", ["one_in", "one"], ["one_next"]),
                    helper.make_node("Constant", [], ["z0"], value=helper.make_tensor("z", F, [], [0.0])),
                    helper.make_node("Range", ["z0", "one_in", "one"], ["r_next"])],
                   [("cond_out", BOOL), ("one_next", F), ("r_next", F)], ["one", "r"], outer=outer)
    res = check(m, x_feeds(), annotated=True, fresh_ok=["r_out"])
    assert dims_text(res, "one_out") == []
    assert "changes from one iteration" in reasons(res, "r_out")[0]


def test_loop_with_if_inside_reads_values_two_scopes_out():
    inner_then = body([helper.make_node("Relu", ["x"], ["a"])], [], [("a", F)])
    inner_else = body([helper.make_node("Neg", ["x"], ["b"])], [], [("b", F)])
    m = loop_model([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                    helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", I64, [], [1])),
                    helper.make_node("Less", ["i", "one"], ["first"]),
                    helper.make_node("If", ["first"], ["step"], then_branch=inner_then, else_branch=inner_else)],
                   [("cond_out", BOOL), ("step", F)], [])
    res = check(m, x_feeds(), annotated=True)
    assert dims_text(res, "scan0") == ["3", "batch", "seq"]


# ------------------------------------------------------------------ Scan

def test_scan_9_with_input_and_output_axes():
    g = body([helper.make_node("Add", ["s_in", "row"], ["s_out"]), helper.make_node("Relu", ["row"], ["y"]),
              helper.make_node("Neg", ["row"], ["y2"])],
             [("s_in", F), ("row", F)], [("s_out", F), ("y", F), ("y2", F)])
    m = model([helper.make_node("ReduceSum", ["x", "ax"], ["s0"], keepdims=0),
               helper.make_node("Scan", ["s0", "x"], ["s", "ys", "ys1"], body=g, num_scan_inputs=1,
                                scan_input_axes=[1], scan_output_axes=[1, 0])],
              [("x", F, ["batch", "seq", 4])], ["s", "ys", "ys1"],
              inits=[onnx.numpy_helper.from_array(np.array([1], np.int64), "ax")])
    res = check(m, x_feeds(shape=lambda b: (b["batch"], b["seq"], 4)), annotated=True)
    assert dims_text(res, "s") == ["batch", "4"]
    assert dims_text(res, "ys") == ["batch", "seq", "4"]
    assert dims_text(res, "ys1") == ["seq", "batch", "4"]


def test_scan_8_with_a_batch_axis():
    g = body([helper.make_node("Add", ["s_in", "row"], ["s_out"]), helper.make_node("Relu", ["row"], ["y"])],
             [("s_in", F), ("row", F)], [("s_out", F), ("y", F)])
    m = model([helper.make_node("ReduceSum", ["x"], ["s0"], axes=[1], keepdims=0),
               helper.make_node("Scan", ["", "s0", "x"], ["s", "ys"], body=g, num_scan_inputs=1)],
              [("x", F, ["batch", "seq", 4])], ["s", "ys"], opset=8)
    m.ir_version = 3
    res = check(m, x_feeds(shape=lambda b: (b["batch"], b["seq"], 4)), annotated=True)
    assert dims_text(res, "s") == ["batch", "4"]
    assert dims_text(res, "ys") == ["batch", "seq", "4"]


def test_loop_iteration_number_is_a_symbol_bounded_by_the_trip_count():
    """As in ONNX's test_loop11: the body slices row i of a 5-row constant; with M = 5
    every slice has one row, so the scan output is (5, 1, seq)."""
    outer = [helper.make_node("Constant", [], ["five"], value=helper.make_tensor("f", I64, [], [5])),
             helper.make_node("Slice", ["x", "z1", "one1"], ["row0"]),  # (1, seq)
             helper.make_node("Concat", ["row0"] * 5, ["row5"], axis=0)]  # (5, seq)
    m = loop_model([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                    helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", I64, [], [1])),
                    helper.make_node("Add", ["i", "one"], ["end"]),
                    helper.make_node("Constant", [], ["ax"], value=helper.make_tensor("a", I64, [1], [0])),
                    helper.make_node("Unsqueeze", ["i", "ax"], ["start1"]),
                    helper.make_node("Unsqueeze", ["end", "ax"], ["end1"]),
                    helper.make_node("Slice", ["row5", "start1", "end1"], ["step"])],
                   [("cond_out", BOOL), ("step", F)], [], trip=("five",), outer=outer)
    m.graph.initializer.extend([helper.make_tensor("z1", I64, [1], [0]), helper.make_tensor("one1", I64, [1], [1])])
    res = check(m, x_feeds(), annotated=True)
    assert dims_text(res, "scan0") == ["5", "1", "seq"]


def test_loop_that_appends_to_a_sequence_then_stacks_it():
    """The scripted-torch pattern: a list appended to in a loop, then stacked."""
    outer = [helper.make_node("Shape", ["x"], ["shp"]),
             helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", I64, [], [0])),
             helper.make_node("Gather", ["shp", "zero"], ["n"]),
             helper.make_node("SequenceEmpty", [], ["empty"])]
    g = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                           helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"])], "body",
                          [helper.make_tensor_value_info("i", I64, []),
                           helper.make_tensor_value_info("cond_in", BOOL, []),
                           helper.make_tensor_sequence_value_info("s_in", F, None)],
                          [helper.make_tensor_value_info("cond_out", BOOL, []),
                           helper.make_tensor_sequence_value_info("s_out", F, None)])
    m = model(outer + [helper.make_node("Loop", ["n", "", "empty"], ["s"], body=g),
                       helper.make_node("ConcatFromSequence", ["s"], ["stacked"], axis=0, new_axis=1),
                       helper.make_node("SequenceLength", ["s"], ["count"])],
              [("x", F, ["batch", "seq"])], ["stacked", "count"])
    res = check(m, x_feeds(), annotated=True)
    assert dims_text(res, "stacked") == ["batch", "batch", "seq"]
    assert [str(v) for v in res.values["count"].value] == ["batch"]


def _onnx_node_cases():
    import importlib

    import onnx.backend.test.case.node as cases

    for mod in ["if_", "loop", "scan", "sequenceinsert", "sequence_map", "splittosequence",
                "optionalgetelement", "optionalhaselement", "identity"]:
        importlib.import_module("onnx.backend.test.case.node." + mod)  # importing a case module makes its cases
    return sorted((c for c in cases._NodeTestCases
                   if c.name.startswith(("test_if", "test_loop", "test_scan", "test_sequence", "test_split_to_seq",
                                         "test_optional", "test_identity"))), key=lambda c: c.name)


def _case_id(c):
    return c.name


import pytest  # noqa: E402


@pytest.mark.parametrize("case", _onnx_node_cases(), ids=_case_id)
def test_onnx_node_cases_have_no_wrong_dim(case):
    """ONNX's own node tests of these ops, against the outputs onnx's reference
    implementation computed for them."""
    from oracle import compare

    res = onnxsym.infer(case.model)
    for inputs, outputs in case.data_sets:
        binding = {}
        for decl, arr in zip(case.model.graph.input, inputs):
            if decl.type.HasField("tensor_type") and isinstance(arr, np.ndarray):
                binding.update({d.dim_param: a for d, a in zip(decl.type.tensor_type.shape.dim, arr.shape)
                                if d.dim_param})
        for decl, real in zip(case.model.graph.output, outputs):
            if real is not None:
                with res.env:
                    compare(decl.name, res.values[decl.name], real, binding, res.fresh, fresh_allowed=True,
                            unknown_ok=True)
