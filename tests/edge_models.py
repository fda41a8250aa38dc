"""Small hand-built graphs whose dims depend on sizes being 0, 1 or -1 (issue 17):
an If on an empty KV cache, Loops that run no iteration, Reshape targets computed
from shapes. Each is checked against onnxruntime in tests/test_edges.py."""

import numpy as np
from helpers import BOOL, I64, F, graph, init, model
from onnx import helper, numpy_helper


def _first_dim(x, out):
    """``out`` = dim 0 of ``x`` as a scalar int64."""
    return [helper.make_node("Shape", [x], [out + "_shape"]),
            helper.make_node("Gather", [out + "_shape", "zero"], [out], axis=0)]


def kv_cache_if(compare="Greater", negate=False):
    """A decoder step: ``has_past = compare(past_seq, 0)``; with a past the If concatenates
    it before the new keys, without one it takes the new keys alone. ``Equal`` (with the
    branches swapped) and ``negate`` (a Not in between) are the other ways exports write it."""
    cat = graph([helper.make_node("Concat", ["past", "new"], ["cat"], axis=1)], [], ["cat"], name="with_past")
    alone = graph([helper.make_node("Identity", ["new"], ["alone"])], [], ["alone"], name="without_past")
    with_past_first = (compare == "Greater") != negate
    nodes = _first_dim_axis1("past", "n") + [helper.make_node(compare, ["n", "zero"], ["has_past"])]
    cond = "has_past"
    if negate:
        nodes.append(helper.make_node("Not", ["has_past"], ["no_past"]))
        cond = "no_past"
    then_g, else_g = (cat, alone) if with_past_first else (alone, cat)
    nodes.append(helper.make_node("If", [cond], ["kv"], name="/decoder/If", then_branch=then_g, else_branch=else_g))
    nodes.append(helper.make_node("Relu", ["kv"], ["kv_out"]))
    return model(nodes, [("past", F, ["batch", "past_seq", 4]), ("new", F, ["batch", "seq", 4])], ["kv_out"],
                 [init("zero", np.array(0, np.int64))])


def _first_dim_axis1(x, out):
    return [helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1, np.int64))),
            helper.make_node("Shape", [x], [out + "_shape"]),
            helper.make_node("Gather", [out + "_shape", "one"], [out], axis=0)]


def kv_cache_where():
    """The same choice made by a Where on shape values: the mask's length is
    ``past_seq + seq`` with a past, ``seq`` without, built by ConstantOfShape."""
    nodes = _first_dim_axis1("past", "n") + [
        helper.make_node("Shape", ["new"], ["s_new"]),
        helper.make_node("Gather", ["s_new", "one"], ["m"], axis=0),
        helper.make_node("Add", ["n", "m"], ["total"]),
        helper.make_node("Greater", ["n", "zero"], ["has_past"]),
        helper.make_node("Where", ["has_past", "total", "m"], ["length"], name="/mask/Where"),
        helper.make_node("Unsqueeze", ["length", "axes0"], ["length1"]),
        helper.make_node("ConstantOfShape", ["length1"], ["mask"]),
    ]
    return model(nodes, [("past", F, ["batch", "past_seq", 4]), ("new", F, ["batch", "seq", 4])], ["mask"],
                 [init("zero", np.array(0, np.int64)), init("axes0", np.array([0], np.int64))])


def loop(trip="n - 1", cond0="true"):
    """A Loop whose scan output stacks ``x`` (``[n, 2]``) once per iteration and whose
    carried value counts the iterations. ``trip``: "n - 1" (no iteration at n = 1), "n",
    or "none" (no trip count); ``cond0``: "true", "false" (no iteration at all) or
    "n > 1" (computed from the shape)."""
    body = graph([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Add", ["acc_in", "one_f"], ["acc_out"]),
                  helper.make_node("Identity", ["x"], ["y"])],
                 [("i", I64, []), ("cond_in", BOOL, []), ("acc_in", F, [1])], [("cond_out", BOOL, []), "acc_out", "y"],
                 name="body")
    nodes = _first_dim("x", "n")
    inits = [init("zero", np.array(0, np.int64)), init("one_i", np.array(1, np.int64)),
             init("acc0", np.zeros([1], np.float32)), init("one_f", np.ones([1], np.float32))]
    if trip == "n - 1":
        nodes.append(helper.make_node("Sub", ["n", "one_i"], ["M"]))
    elif trip == "n":
        nodes.append(helper.make_node("Identity", ["n"], ["M"]))
    if cond0 == "true":
        inits.append(init("c0", np.array(True)))
    elif cond0 == "false":
        inits.append(init("c0", np.array(False)))
    else:
        nodes.append(helper.make_node("Greater", ["n", "one_i"], ["c0"]))
    nodes.append(helper.make_node("Loop", ["M", "c0", "acc0"], ["acc", "ys"], name="/loop", body=body))
    return model(nodes, [("x", F, ["n", 2])], ["acc", "ys"], inits, opset=17)


def reshape_k_minus_2():
    """``Reshape(x[m, 6], [m, k - 2])`` with ``k`` the length of another input: valid at
    k = 8 (a size), k = 2 (0: copy x's dim 1) and k = 1 (-1: infer)."""
    nodes = _first_dim("x", "m") + _first_dim("y", "k") + [
        helper.make_node("Sub", ["k", "two"], ["k2"]),
        helper.make_node("Unsqueeze", ["m", "axes0"], ["m1"]),
        helper.make_node("Unsqueeze", ["k2", "axes0"], ["k21"]),
        helper.make_node("Concat", ["m1", "k21"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"], name="/reshape"),
        helper.make_node("Relu", ["y"], ["y_out"]),
    ]
    return model(nodes, [("x", F, ["m", 6]), ("y", F, ["k"])], ["r", "y_out"],
                 [init("zero", np.array(0, np.int64)), init("two", np.array(2, np.int64)),
                  init("axes0", np.array([0], np.int64))])


def reshape_p_minus_1(same=False):
    """``Reshape(x[q, 6], [p, -1])`` with ``p`` the length of input ``y`` (or, ``same``,
    x's own dim 0, which a 0 copies to itself)."""
    src = "x" if same else "y"
    nodes = _first_dim(src, "p") + [
        helper.make_node("Unsqueeze", ["p", "axes0"], ["p1"]),
        helper.make_node("Concat", ["p1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"], name="/reshape"),
    ]
    inputs = [("x", F, ["q", 6])] + ([] if same else [("y", F, ["p"])])
    outs = ["r"] + ([] if same else ["y_out"])
    if not same:
        nodes.append(helper.make_node("Relu", ["y"], ["y_out"]))
    return model(nodes, inputs, outs, [init("zero", np.array(0, np.int64)), init("minus1", np.array([-1], np.int64)),
                                       init("axes0", np.array([0], np.int64))])


def nested_if_on_data():
    """silero VAD's structure: an If on the sample rate (a data input), whose then branch holds
    another If on data (is the input's sum positive?). ``state_out`` has one shape in every
    branch; ``frames`` is ``[batch, 2*samples]`` in the then branches, ``[batch, samples]`` else."""
    inner_then = graph([helper.make_node("Relu", ["state"], ["st_a"]),
                        helper.make_node("Concat", ["x", "x"], ["fr_a"], axis=1)], [], ["st_a", "fr_a"],
                       name="inner_then")
    inner_else = graph([helper.make_node("Neg", ["state"], ["st_b"]),
                        helper.make_node("Concat", ["x", "x"], ["fr_b"], axis=1)], [], ["st_b", "fr_b"],
                       name="inner_else")
    outer_then = graph([helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
                        helper.make_node("Greater", ["total", "zero_f"], ["positive"]),
                        helper.make_node("If", ["positive"], ["st_t", "fr_t"], name="/inner/If",
                                         then_branch=inner_then, else_branch=inner_else)], [], ["st_t", "fr_t"],
                       name="outer_then")
    outer_else = graph([helper.make_node("Sigmoid", ["state"], ["st_e"]),
                        helper.make_node("Identity", ["x"], ["fr_e"])], [], ["st_e", "fr_e"], name="outer_else")
    nodes = [helper.make_node("Equal", ["sr", "sr16k"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["state_out", "frames"], name="/sr/If",
                              then_branch=outer_then, else_branch=outer_else)]
    return model(nodes, [("x", F, ["batch", "samples"]), ("state", F, [2, "batch", 128]), ("sr", I64, [])],
                 ["state_out", "frames"],
                 [init("sr16k", np.array(16000, np.int64)), init("zero_f", np.array(0.0, np.float32))])
