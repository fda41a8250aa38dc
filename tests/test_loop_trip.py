"""A while loop's trip count proved from its condition, checked against onnxruntime.

tf2onnx writes a TensorFlow while loop as a Loop with M = the sequence length and a
condition ``i < seq and time + 1 < seq`` over the iteration number and a carried counter
``time`` (0, then + 1 each trip): it never ends the loop before M, so the scan output has
M rows. A condition that does end it early must give a fresh dim, never M."""

import numpy as np
from helpers import I64, F
from onnx import TensorProto, helper
from oracle import ANY, check

import onnxsym

BOOL, I32 = TensorProto.BOOL, TensorProto.INT32
SIZES = [{"batch": 2, "seq": 5}, {"batch": 3, "seq": 1}, {"batch": 1, "seq": 2}, {"batch": 2, "seq": 7}]


def const(name, dtype, value):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, dtype, [], [value]))


def while_model(ahead=0, step=1, counter_type=I32, via_float=True):
    """x (seq, batch) read row by row while ``i < seq and time + step + ahead < limit`` (time
    starts at 0 and grows by ``step``, limit is seq carried through unchanged); outputs the counter,
    the limit, the rows and a Range as long as the counter ends."""
    cast = (lambda src, dst: [helper.make_node("Cast", [src], [dst], to=F)]) if via_float else \
        (lambda src, dst: [helper.make_node("Identity", [src], [dst])])
    outer = [helper.make_node("Shape", ["x"], ["shp"]), const("zero", I64, 0),
             helper.make_node("Gather", ["shp", "zero"], ["seq"]),
             helper.make_node("Cast", ["seq"], ["seq_c"], to=counter_type),
             const("t0", counter_type, 0), const("go", BOOL, True), const("one_o", counter_type, 1)]
    body_nodes = [helper.make_node("Gather", ["x", "time_in"], ["row"]),
                  const("step", counter_type, step), const("ahead", counter_type, ahead),
                  helper.make_node("Add", ["time_in", "step"], ["time_next"]),
                  helper.make_node("Add", ["time_next", "ahead"], ["probe"]),
                  helper.make_node("Cast", ["i"], ["i_c"], to=counter_type),
                  *cast("i_c", "i_f"), *cast("seq_c", "seq_f"), *cast("probe", "probe_f"), *cast("lim_in", "lim_f"),
                  helper.make_node("Less", ["i_f", "seq_f"], ["a"]),
                  helper.make_node("Less", ["probe_f", "lim_f"], ["b"]),
                  helper.make_node("And", ["a", "b"], ["cond_out"]),
                  helper.make_node("Identity", ["lim_in"], ["lim_out_b"])]
    g = helper.make_graph(body_nodes, "body",
                          [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", BOOL, []),
                           helper.make_tensor_value_info("time_in", counter_type, []),
                           helper.make_tensor_value_info("lim_in", counter_type, [])],
                          [helper.make_tensor_value_info(n, t, None) for n, t in
                           [("cond_out", BOOL), ("time_next", counter_type), ("lim_out_b", counter_type), ("row", F)]])
    nodes = outer + [helper.make_node("Loop", ["seq", "go", "t0", "seq_c"], ["time_out", "lim_out", "rows"], body=g),
                     helper.make_node("Range", ["t0", "time_out", "one_o"], ["counted"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, ["seq", "batch"])],
                              [helper.make_empty_tensor_value_info(o) for o in ("time_out", "lim_out", "rows", "counted")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def cases():
    return [(b, {"x": np.random.default_rng(k).standard_normal((b["seq"], b["batch"])).astype(np.float32)})
            for k, b in enumerate(SIZES)]


def shape_text(res, name):
    return [str(d) for d in res.shape(name)]


def reasons(res, name):
    return [p.reason for u in res.unresolved() if u.value == name for p in u.provenance]


def test_tf2onnx_while_loop_runs_M_times_and_its_counter_ends_at_M():
    res = check(while_model(), cases(), annotated=True)
    assert shape_text(res, "rows") == ["seq", "batch"]
    assert shape_text(res, "counted") == ["seq"]  # the counter ends at 0 + seq
    assert [str(v) for v in res.values["lim_out"].value] == ["seq"]  # carried through unchanged
    # (the trial's own symbol appears in no recorded assumption)
    trial = {n for n, p in res.fresh.items() if "iterations after the next one" in p.reason}
    assert trial and not any(s.name in trial for c in res.assumptions for d in (c.lhs, c.rhs)
                             for s in onnxsym.dims.free_symbols(d))


def test_the_proof_works_on_int64_comparisons_too():
    res = check(while_model(counter_type=I64, via_float=False), cases(), annotated=True)
    assert shape_text(res, "rows") == ["seq", "batch"]


def test_a_condition_that_ends_the_loop_one_early_does_not_give_M():
    """time + 2 < seq: the loop stops after seq - 1 iterations (at seq 5, 7 and 2: 4, 6 and 1 rows)."""
    res = check(while_model(ahead=1), cases(), fresh_ok=ANY, annotated=True)
    n, b = res.shape("rows")
    assert str(b) == "batch" and "may end it early" in reasons(res, "rows")[0]
    assert str(res.shape("counted")[0]) != "seq"


def test_a_counter_stepping_by_two_is_not_taken_as_the_iteration_number():
    """time grows by 2: the condition time + 1 < seq ends the loop after about seq / 2 trips."""
    res = check(while_model(step=2), cases(), fresh_ok=ANY, annotated=True)
    assert "may end it early" in reasons(res, "rows")[0]
