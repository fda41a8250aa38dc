"""Small hand-built graphs whose dims depend on sizes being 0, 1 or -1 (issue 17):
an If on an empty KV cache, Loops that run no iteration, Reshape targets computed
from shapes. Each is checked against onnxruntime in tests/test_edges.py."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "edges", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_empty_tensor_value_info(o) for o in outputs],
                          initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _graph(nodes, name, outputs, inputs=()):
    return helper.make_graph(nodes, name, [helper.make_tensor_value_info(*i) for i in inputs],
                             [helper.make_empty_tensor_value_info(o) for o in outputs])


def _first_dim(x, out):
    """``out`` = dim 0 of ``x`` as a scalar int64."""
    return [helper.make_node("Shape", [x], [out + "_shape"]),
            helper.make_node("Gather", [out + "_shape", "zero"], [out], axis=0)]


def kv_cache_if(compare="Greater", negate=False):
    """A decoder step: ``has_past = compare(past_seq, 0)``; with a past the If concatenates
    it before the new keys, without one it takes the new keys alone. ``Equal`` (with the
    branches swapped) and ``negate`` (a Not in between) are the other ways exports write it."""
    cat = _graph([helper.make_node("Concat", ["past", "new"], ["cat"], axis=1)], "with_past", ["cat"])
    alone = _graph([helper.make_node("Identity", ["new"], ["alone"])], "without_past", ["alone"])
    with_past_first = (compare == "Greater") != negate
    nodes = _first_dim_axis1("past", "n") + [helper.make_node(compare, ["n", "zero"], ["has_past"])]
    cond = "has_past"
    if negate:
        nodes.append(helper.make_node("Not", ["has_past"], ["no_past"]))
        cond = "no_past"
    then_g, else_g = (cat, alone) if with_past_first else (alone, cat)
    nodes.append(helper.make_node("If", [cond], ["kv"], name="/decoder/If", then_branch=then_g, else_branch=else_g))
    nodes.append(helper.make_node("Relu", ["kv"], ["kv_out"]))
    return _model(nodes, [("past", F, ["batch", "past_seq", 4]), ("new", F, ["batch", "seq", 4])], ["kv_out"],
                  [("zero", np.array(0, np.int64))])


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
    return _model(nodes, [("past", F, ["batch", "past_seq", 4]), ("new", F, ["batch", "seq", 4])], ["mask"],
                  [("zero", np.array(0, np.int64)), ("axes0", np.array([0], np.int64))])


def loop(trip="n - 1", cond0="true"):
    """A Loop whose scan output stacks ``x`` (``[n, 2]``) once per iteration and whose
    carried value counts the iterations. ``trip``: "n - 1" (no iteration at n = 1), "n",
    or "none" (no trip count); ``cond0``: "true", "false" (no iteration at all) or
    "n > 1" (computed from the shape)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "one_f"], ["acc_out"]),
         helper.make_node("Identity", ["x"], ["y"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", BOOL, []),
         helper.make_tensor_value_info("acc_in", F, [1])],
        [helper.make_tensor_value_info("cond_out", BOOL, []), helper.make_empty_tensor_value_info("acc_out"),
         helper.make_empty_tensor_value_info("y")])
    nodes = _first_dim("x", "n")
    inits = [("zero", np.array(0, np.int64)), ("one_i", np.array(1, np.int64)),
             ("acc0", np.zeros([1], np.float32)), ("one_f", np.ones([1], np.float32))]
    if trip == "n - 1":
        nodes.append(helper.make_node("Sub", ["n", "one_i"], ["M"]))
    elif trip == "n":
        nodes.append(helper.make_node("Identity", ["n"], ["M"]))
    if cond0 == "true":
        inits.append(("c0", np.array(True)))
    elif cond0 == "false":
        inits.append(("c0", np.array(False)))
    else:
        nodes.append(helper.make_node("Greater", ["n", "one_i"], ["c0"]))
    nodes.append(helper.make_node("Loop", ["M", "c0", "acc0"], ["acc", "ys"], name="/loop", body=body))
    return _model(nodes, [("x", F, ["n", 2])], ["acc", "ys"], inits, opset=17)


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
    return _model(nodes, [("x", F, ["m", 6]), ("y", F, ["k"])], ["r", "y_out"],
                  [("zero", np.array(0, np.int64)), ("two", np.array(2, np.int64)), ("axes0", np.array([0], np.int64))])


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
    return _model(nodes, inputs, outs, [("zero", np.array(0, np.int64)), ("minus1", np.array([-1], np.int64)),
                                        ("axes0", np.array([0], np.int64))])


def nested_if_on_data():
    """silero VAD's structure: an If on the sample rate (a data input), whose then branch holds
    another If on data (is the input's sum positive?). ``state_out`` has one shape in every
    branch; ``frames`` is ``[batch, 2*samples]`` in the then branches, ``[batch, samples]`` else."""
    inner_then = _graph([helper.make_node("Relu", ["state"], ["st_a"]),
                         helper.make_node("Concat", ["x", "x"], ["fr_a"], axis=1)], "inner_then", ["st_a", "fr_a"])
    inner_else = _graph([helper.make_node("Neg", ["state"], ["st_b"]),
                         helper.make_node("Concat", ["x", "x"], ["fr_b"], axis=1)], "inner_else", ["st_b", "fr_b"])
    outer_then = _graph([helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
                         helper.make_node("Greater", ["total", "zero_f"], ["positive"]),
                         helper.make_node("If", ["positive"], ["st_t", "fr_t"], name="/inner/If",
                                          then_branch=inner_then, else_branch=inner_else)], "outer_then", ["st_t", "fr_t"])
    outer_else = _graph([helper.make_node("Sigmoid", ["state"], ["st_e"]),
                         helper.make_node("Identity", ["x"], ["fr_e"])], "outer_else", ["st_e", "fr_e"])
    nodes = [helper.make_node("Equal", ["sr", "sr16k"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["state_out", "frames"], name="/sr/If",
                              then_branch=outer_then, else_branch=outer_else)]
    return _model(nodes, [("x", F, ["batch", "samples"]), ("state", F, [2, "batch", 128]), ("sr", I64, [])],
                  ["state_out", "frames"], [("sr16k", np.array(16000, np.int64)), ("zero_f", np.array(0.0, np.float32))])
