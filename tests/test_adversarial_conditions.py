"""An attack on the conditions of issue 34's third round: small hand-built models, each domain
verdict checked against onnxruntime's run/refuse at every size of a grid (sizes of 0 too, with
allow_zero), onnxruntime in a child process (an Einsum over an empty dim often dies of SIGFPE
there: such a size is no verdict). What it found, each fixed:

- Einsum with an explicit output without ``...`` while an input's ellipsis covers dims:
  onnxruntime refuses it at every size (numpy sums those dims);
- Concat and ConcatFromSequence skip an input (item) without elements: the others agree with
  the first off the axis, or have none;
- ConcatFromSequence of an empty sequence (SplitToSequence of a length 0) is refused;
- SplitToSequence with a scalar split other than 1 and keepdims=0 runs where X[axis] <= 1 or X
  has no elements (it was refused at every size);
- LayerNormalization and RMSNormalization (tests/test_domain_ort_verdicts.py), pins through an
  expression (tests/test_pins_few_sizes.py).
"""

import itertools
import random

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from op_verdicts import isolated_disagreements

import onnxsym
from onnxsym.errors import ShapeContradiction

pytest.importorskip("onnxruntime")

F = T.FLOAT


def _model(nodes, inputs, opset=17, inits=()):
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info(*i) for i in inputs],
                                  [h.make_empty_tensor_value_info("y")], list(inits)),
                     opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _grid(**axes):
    names = sorted(axes)
    return [dict(zip(names, v)) for v in itertools.product(*(axes[n] for n in names))]


def _agrees(m, grid, other_shapes_outside=False, **infer_args):
    n, bad, _crashes = isolated_disagreements(m, grid, other_shapes_outside=other_shapes_outside, **infer_args)
    assert n and not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])


def _runs(m, feeds) -> bool:
    from onnxsym.model.isolated import Child, Refused

    with Child() as child:
        child.load(m.SerializeToString())
        try:
            child.run(feeds, ["y"])
            return True
        except Refused:
            return False


# --------------------------------------------------------------------------- Einsum

@pytest.mark.parametrize("eq, shapes, refused", [
    ("i...->i", [(2, 3)], True), ("i...->i", [(2,)], False),  # (an ellipsis of no dims is no ellipsis)
    ("...ij->ij", [(1, 2, 3)], True), ("...ij->ij", [(2, 3)], False),
    ("i...,i->i", [(2, 3), (2,)], True), ("...->", [(2,)], True), ("i...,i...->i...", [(2, 1), (2, 3)], False),
])
def test_einsum_explicit_output_without_the_ellipsis_it_covers(eq, shapes, refused):
    names = [f"x{i}" for i in range(len(shapes))]
    m = _model([h.make_node("Einsum", names, ["y"], equation=eq)],
               [(n, F, [f"{n}_{k}" for k in range(len(s))]) for n, s in zip(names, shapes)], opset=12)
    assert _runs(m, {n: np.ones(s, np.float32) for n, s in zip(names, shapes)}) is not refused
    if refused:
        with pytest.raises(ShapeContradiction, match="no ellipsis"):
            onnxsym.infer(m)
    else:
        onnxsym.infer(m)


@pytest.mark.parametrize("eq, shapes", [
    ("ii->i", [["a", "b"]]), ("iij->j", [["a", "b", "c"]]), ("ij,jk->ik", [["a", "b"], ["c", "d"]]),
    ("...ij,...jk->...ik", [["p", "a", "b"], ["q", "b2", "d"]]), ("i,i->", [["a"], ["b"]]),
    ("ij,ij->ij", [["a", "b"], ["c", "d"]]), ("k,kk", [["a"], ["b", "c"]]),
])
def test_einsum_letters_and_ellipses_at_every_small_size(eq, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    m = _model([h.make_node("Einsum", names, ["y"], equation=eq)], [(n, F, s) for n, s in zip(names, shapes)], opset=12)
    symbols = sorted({d for s in shapes for d in s})
    grid = _grid(**{s: (0, 1, 2, 3) for s in symbols})
    _agrees(m, random.Random(0).sample(grid, min(len(grid), 200)), allow_zero=True)


# --------------------------------------------------------------------------- Concat, sequences

@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("count", [2, 3])
def test_concat_skips_an_input_without_elements(axis, count):
    """a (0, 0) and b (0, 1) concatenate on axis 0; a (0, 2) and b (1, 1) too, to b's (1, 1),
    not the inferred (1, 2): outside the domain, with other shapes."""
    names = "abc"[:count]
    m = _model([h.make_node("Concat", list(names), ["y"], axis=axis)],
               [(n, F, [f"{n}0", f"{n}1"]) for n in names])
    sizes = {f"{n}{k}": (0, 1, 2) for n in names for k in (0, 1)}
    _agrees(m, _grid(**sizes), other_shapes_outside=True, allow_zero=True)


def test_concat_with_inputs_that_have_elements_still_equates_them():
    m = _model([h.make_node("Concat", ["a", "b"], ["y"], axis=0)], [("a", F, ["p", "q"]), ("b", F, ["r", "t"])])
    res = onnxsym.infer(m)
    assert [str(d) for d in res.shape("y")] == ["p + r", "q"] and res.domain().violated({"p": 1, "q": 2, "r": 1, "t": 2}) is None


@pytest.mark.parametrize("axis, new_axis", [(0, 0), (1, 0), (-1, 0), (0, 1), (2, 1), (-3, 1)])
def test_concat_from_sequence_skips_an_item_without_elements(axis, new_axis):
    m = _model([h.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                h.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)],
               [("a", F, ["p", "q"]), ("b", F, ["r", "t"])])
    _agrees(m, _grid(p=(0, 1, 2), q=(0, 1, 2), r=(0, 1, 3), t=(0, 1, 2)), other_shapes_outside=True, allow_zero=True)


@pytest.mark.parametrize("split", [None, 2])
def test_concat_from_sequence_needs_an_item(split):
    """SplitToSequence of a length 0 is an empty sequence: ConcatFromSequence refuses it."""
    inits = [] if split is None else [numpy_helper.from_array(np.array(split, np.int64), "sp")]
    m = _model([h.make_node("SplitToSequence", ["x"] + (["sp"] if inits else []), ["s"]),
                h.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)], [("x", F, ["n", "m"])], inits=inits)
    _agrees(m, _grid(n=(0, 1, 2, 3, 4, 5), m=(0, 1, 3)), allow_zero=True)


@pytest.mark.parametrize("split, axis", [(2, 0), (3, 0), (2, 1), (1, 0)])
@pytest.mark.parametrize("then", ["SequenceLength", "SequenceAt"])
def test_split_to_sequence_scalar_split_with_keepdims_0(split, axis, then):
    """onnxruntime reshapes each piece without the axis: split 1 always runs; another split only
    where X[axis] <= 1 or X has no elements."""
    inits = [numpy_helper.from_array(np.array(split, np.int64), "sp"), numpy_helper.from_array(np.array(0, np.int64), "i")]
    follow = h.make_node(then, ["s"] + (["i"] if then == "SequenceAt" else []), ["y"])
    m = _model([h.make_node("SplitToSequence", ["x", "sp"], ["s"], axis=axis, keepdims=0), follow],
               [("x", F, ["n", "m"])], inits=inits)
    _agrees(m, _grid(n=(0, 1, 2, 3, 4), m=(0, 1, 2)), allow_zero=True)


# --------------------------------------------------------------------------- ConvTranspose

@pytest.mark.parametrize("kernel", [1, 3])
@pytest.mark.parametrize("attrs", [
    {}, {"pads": [1, 1]}, {"strides": [2], "output_padding": [1]}, {"strides": [3], "output_padding": [2], "pads": [1, 0]},
    {"auto_pad": "SAME_UPPER"}, {"auto_pad": "SAME_LOWER", "strides": [2]}, {"auto_pad": "VALID", "dilations": [2]},
    {"output_shape": [2]}, {"output_shape": [5], "strides": [2]}, {"output_shape": [4], "auto_pad": "SAME_UPPER"},
], ids=lambda a: ",".join(f"{k}={v}" for k, v in a.items()) or "plain")
def test_conv_transpose_of_an_empty_spatial_input(kernel, attrs):
    """onnxruntime runs an empty spatial input only without output_shape, SAME padding and
    output_padding (and where the output size is >= 1)."""
    w = numpy_helper.from_array(np.ones((1, 1, kernel), np.float32), "w")
    m = _model([h.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)], [("x", F, ["n", 1, "l"])], inits=[w])
    _agrees(m, _grid(n=(0, 1, 2), l=(0, 1, 2, 3, 4, 5)), allow_zero=True)


@pytest.mark.parametrize("group", [1, 2, 3])
def test_conv_transpose_groups_divide_the_input_channels(group):
    m = _model([h.make_node("ConvTranspose", ["x", "w"], ["y"], group=group)],
               [("x", F, ["n", "c", "l"]), ("w", F, ["ci", "co", 2])])
    _agrees(m, _grid(n=(1,), c=(1, 2, 3, 4, 6), l=(1, 3), ci=(1, 2, 3, 4, 6), co=(1, 2)))


# --------------------------------------------------------------------------- GroupNormalization

@pytest.mark.parametrize("opset", [18, 21])
def test_group_normalization_refuses_an_x_without_elements(opset):
    """onnxruntime runs the function body, whose Reshape refuses an X without elements."""
    m = _model([h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
               [("x", F, ["n", "c", "l"]), ("s", F, ["p"]), ("b", F, ["q"])], opset=opset)
    m.ir_version = 10 if opset >= 21 else 8
    _agrees(m, _grid(n=(0, 1, 2), c=(0, 2, 4), l=(0, 1, 3), p=(1, 2, 4), q=(1, 2, 4)), allow_zero=["n", "c", "l"])


# --------------------------------------------------------------------------- Attention

@pytest.mark.parametrize("opset", [23, 24])
@pytest.mark.parametrize("form", ["4-D", "3-D", "past"])
def test_attention_kernel_refuses_an_empty_query_key_or_value(opset, form):
    """onnxruntime's kernel (opsets 23-24) refuses a dim of 0 in Q, K or V; an empty past runs."""
    if form == "4-D":
        m = _model([h.make_node("Attention", ["q", "k", "v"], ["y"])],
                   [("q", F, ["b", "h", "s", "d"]), ("k", F, ["b", "h", "t", "d"]), ("v", F, ["b", "h", "t", "e"])], opset)
        grid = _grid(b=(0, 1, 2), h=(0, 1, 2), s=(0, 1, 2), d=(0, 1, 2), t=(0, 1, 2), e=(0, 1, 2))
    elif form == "3-D":
        m = _model([h.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=2, kv_num_heads=2)],
                   [("q", F, ["b", "s", "d"]), ("k", F, ["b", "t", "d"]), ("v", F, ["b", "t", "e"])], opset)
        grid = _grid(b=(0, 1, 2), s=(0, 1, 2), d=(0, 2, 4), t=(0, 1, 2), e=(0, 2, 4))
    else:
        m = _model([h.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "ok", "ov"])],
                   [("q", F, [1, 1, "s", 2]), ("k", F, [1, 1, "t", 2]), ("v", F, [1, 1, "t", 2]),
                    ("pk", F, [1, 1, "p", 2]), ("pv", F, [1, 1, "p", 2])], opset)
        m.graph.output.extend([h.make_empty_tensor_value_info("ok"), h.make_empty_tensor_value_info("ov")])
        grid = _grid(s=(0, 1, 2), t=(0, 1, 2), p=(0, 1, 2))
    m.ir_version = 10
    _agrees(m, random.Random(0).sample(grid, min(len(grid), 300)), allow_zero=True)


@pytest.mark.parametrize("outputs", [["y"], ["y", "ok"], ["y", "", "ov"]])
def test_attention_kernel_needs_the_present_outputs_of_a_past(outputs):
    """onnxruntime's kernel (opsets 23-24) refuses past_key (past_value) without present_key
    (present_value), at every size."""
    m = _model([h.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], outputs)],
               [(n, F, [1, 1, 2 if n in "qkv" else 1, 2]) for n in ("q", "k", "v", "pk", "pv")], 23)
    m.graph.output.extend([h.make_empty_tensor_value_info(o) for o in outputs[1:] if o])
    m.ir_version = 10
    assert not _runs(m, {n: np.ones((1, 1, 2 if n in "qkv" else 1, 2), np.float32) for n in ("q", "k", "v", "pk", "pv")})
    with pytest.raises(ShapeContradiction, match="without its present output"):
        onnxsym.infer(m)


# --------------------------------------------------------------------------- LinearAttention

@pytest.mark.parametrize("rule", ["linear", "gated_delta"])
@pytest.mark.parametrize("past", [False, True])
def test_linear_attention_refuses_an_empty_batch_or_length(rule, past):
    """onnxruntime runs the function body, whose Reshape to (B, T, heads, -1) refuses B*T == 0."""
    from test_linear_attention_ort import _model as linear_model

    m = linear_model(rule, 2, 2, past)
    syms = [d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim]
    grid = []
    for b, t, dk, dv in itertools.product((0, 1, 2), repeat=4):
        base = {"query0": b, "query1": t, "query2": 2 * dk, "key0": b, "key1": t, "key2": 2 * dk, "value0": b,
                "value1": t, "value2": 2 * dv, "past_state0": b, "past_state1": 2, "past_state2": dk,
                "past_state3": dv, "decay0": b, "decay1": t, "decay2": 2 * dk, "beta0": b, "beta1": t, "beta2": 2}
        grid.append({k: base[k] for k in syms})
    _agrees(m, grid, allow_zero=True)


# --------------------------------------------------------------------------- DFT

@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("inverse, onesided", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("length", [None, 3])
def test_dft_of_an_empty_signal_axis(opset, inverse, onesided, length):
    """onnxruntime: "input signal dimension must be greater than zero when the output is
    non-empty": with dft_length or one-sided, an empty axis runs only where nothing else has elements."""
    names, inits, attrs = ["x"], [], {"inverse": inverse, "onesided": onesided}
    if length is not None:
        names.append("L")
        inits.append(numpy_helper.from_array(np.array(length, np.int64), "L"))
    if opset >= 20:
        names += ([""] if length is None else []) + ["ax"]
        inits.append(numpy_helper.from_array(np.array(1, np.int64), "ax"))
    else:
        attrs["axis"] = 1
    last = 1 if onesided and not inverse else 2
    m = _model([h.make_node("DFT", names, ["y"], **attrs)], [("x", F, ["n", "t", last])], opset, inits)
    _agrees(m, _grid(n=(0, 1, 2), t=(0, 1, 2, 3, 4)), allow_zero=True)
