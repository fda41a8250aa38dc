"""A model the ONNX spec rules out is refused, never annotated: exit 2, one line naming the
node (name and op type) and the rule it breaks, no traceback, no output written. Each case
is one onnxruntime refuses too (checked here); operators onnx does not know (custom
domains) still get fresh symbols."""

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers import F, init, model
from onnx import TensorProto, helper

import onnxsym
from onnxsym import InvalidModel, dims

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = helper.make_node


def _ints(name, v):
    return init(name, np.array(v, np.int64))


def _slice(starts, ends, axes=None, steps=None):
    names, inits = ["x", "s", "e"], [_ints("s", starts), _ints("e", ends)]
    for n, v in (("a", axes), ("st", steps)):
        if v is not None:
            names.append(n)
            inits.append(_ints(n, v))
    return model([N("Slice", names, ["y"], name="sl")], [("x", F, ["a", "b"])], [("y", F, None)], inits=inits)


def _if_without_else():
    then = helper.make_graph([N("Identity", ["x"], ["t"])], "then", [], [helper.make_tensor_value_info("t", F, None)])
    return model([N("If", ["c"], ["y"], name="if1", then_branch=then)],
                 [("x", F, ["n"]), ("c", TensorProto.BOOL, [])], [("y", F, None)])


def _op(op, inputs, inits=(), opset=17, **attrs):
    return model([N(op, inputs, ["y"], name="bad", **attrs)], [("x", F, [2, "n", 4, 4])], [("y", F, None)],
                 inits=list(inits), opset=opset)


def _on_row(op, inputs, inits=(), opset=17, outputs=("y",), **attrs):
    """``op`` on a (1, n) input."""
    return model([N(op, inputs, list(outputs), name="bad", **attrs)], [("x", F, [1, "n"])],
                 [(o, F if o == "y" else TensorProto.INT64, None) for o in outputs], inits=list(inits), opset=opset)


CASES = [  # (id, model, node, the rule's words)
    ("slice_starts_ends", _slice([0, 1], [2]), "Slice node 'sl'", "ends has 1 entries and starts 2"),
    ("slice_axes", _slice([0, 1], [2, 3], axes=[0]), "Slice node 'sl'", "axes has 1 entries and starts 2"),
    ("slice_steps", _slice([0, 1], [2, 3], [0, 1], [1]), "Slice node 'sl'", "steps has 1 entries"),
    ("slice_axis_twice", _slice([0, 1], [2, 3], [1, -1]), "Slice node 'sl'", "names an axis twice"),
    ("slice_step_0", _slice([0], [2], [0], [0]), "Slice node 'sl'", "allows no step 0"),
    ("if_without_else", _if_without_else(), "If node 'if1'", "the required attribute 'else_branch' is missing"),
    ("upsample_19", _op("Upsample", ["x", "sc"], [init("sc", np.array([1, 1, 2, 2], np.float32))], 19),
     "Upsample node 'bad'", "Upsample is deprecated from opset 10"),
    ("upsample_10", _op("Upsample", ["x", "sc"], [init("sc", np.array([1, 1, 2, 2], np.float32))], 10),
     "Upsample node 'bad'", "deprecated"),
    ("unknown_attribute", _op("Relu", ["x"], colour=3), "Relu node 'bad'", "Relu-14 has no attribute 'colour'"),
    ("too_many_inputs", _op("Relu", ["x", "x"]), "Relu node 'bad'", "takes 1 input (the ONNX spec of Relu-14), the node gives 2"),
    ("required_input_empty", _op("Reshape", ["x", ""]), "Reshape node 'bad'", "input 1 is required"),
    # what onnx's own shape inference (run by onnxruntime on loading) refuses
    ("tile_repeats", _op("Tile", ["x", "r"], [_ints("r", [2])]), "Tile node 'bad'", "'repeats'"),
    ("softmax_axis", _op("Softmax", ["x"], axis=4), "Softmax node 'bad'", "'axis' must be in [-4 , 3]"),
    ("split_sum", model([N("Split", ["x", "s"], ["y", "z"], name="bad", axis=0)], [("x", F, [4, "n"])],
                        [("y", F, None), ("z", F, None)], inits=[_ints("s", [1, 1])]),
     "Split node 'bad'", "Mismatch between the sum of 'split' (2)"),
    ("reshape_2d_shape", _op("Reshape", ["x", "s"], [_ints("s", [[2, -1]])]), "Reshape node 'bad'", "makes it 1-D"),
    # what onnxruntime checks in its kernels at every size (issue 21: these were annotated)
    ("scatternd_tuple_longer_than_rank", _op("ScatterND", ["x", "i", "u"], [_ints("i", [[0, 0, 0, 0, 0]]),
                                                                        init("u", np.ones([1], np.float32))]),
     "ScatterND node 'bad'", "the index tuples have 5 entries and data rank 4"),
    ("trilu_k_two_elements", _op("Trilu", ["x", "k"], [_ints("k", [1, 2])]), "Trilu node 'bad'",
     "k has shape [2]; the ONNX spec of Trilu makes it a scalar"),
    ("cumsum_axis_two_elements", _op("CumSum", ["x", "a"], [_ints("a", [0, 1])]), "CumSum node 'bad'",
     "axis has shape [2]; the ONNX spec of CumSum makes it a scalar"),
    ("lstm_w_shape", model([N("LSTM", ["x", "w", "r"], ["y"], name="bad", hidden_size=3)], [("x", F, ["seq", "n", 5])],
                           [("y", F, None)], inits=[init("w", np.zeros([1, 12, 4], np.float32)),
                                                    init("r", np.zeros([1, 12, 3], np.float32))]),
     "LSTM node 'bad'", "W has shape [1, 12, 4]; the ONNX spec of LSTM makes it [num_directions, 4*hidden_size, "
                        "input_size] = [1, 12, 5]"),
    ("lrn_size_0", _op("LRN", ["x"], size=0), "LRN node 'bad'", "size is 0; the ONNX spec of LRN sums over size channels"),
    # what onnxruntime's kernels check of an input's rank at every size (found by attacking)
    ("squeeze_scalar_axes", _on_row("Squeeze", ["x", "a"], [_ints("a", 0)]), "Squeeze node 'bad'",
     "axes has rank 0; the ONNX spec of Squeeze makes it 1-D"),
    ("unsqueeze_2d_axes", _on_row("Unsqueeze", ["x", "a"], [_ints("a", [[0]])]), "Unsqueeze node 'bad'",
     "axes has rank 2"),
    ("reduce_sum_scalar_axes", _on_row("ReduceSum", ["x", "a"], [_ints("a", 1)]), "ReduceSum node 'bad'",
     "axes has rank 0"),
    ("reduce_max_2d_axes", _on_row("ReduceMax", ["x", "a"], [_ints("a", [[1]])], opset=18), "ReduceMax node 'bad'",
     "axes has rank 2"),
    ("split_scalar", _on_row("Split", ["x", "s"], [_ints("s", 1)]), "Split node 'bad'", "split has rank 0"),
    ("split_negative", model([N("Split", ["x", "s"], ["y", "z"], name="bad")], [("x", F, ["n"])],
                             [("y", F, None), ("z", F, None)], inits=[_ints("s", [-1, 4])]),
     "Split node 'bad'", "holds a negative size"),
    ("topk_scalar_k", _on_row("TopK", ["x", "k"], [_ints("k", 1)], outputs=("y", "i"), axis=0), "TopK node 'bad'",
     "k has shape []; the ONNX spec of TopK makes it 1-D of one element = [1]"),
    ("topk_negative_k", _on_row("TopK", ["x", "k"], [_ints("k", [-1])], outputs=("y", "i"), axis=0), "TopK node 'bad'",
     "onnxruntime refuses a negative k"),
    ("instance_norm_scale", model([N("InstanceNormalization", ["x", "s", "b"], ["y"], name="bad")], [("x", F, ["n", 3, 4])],
                                  [("y", F, None)], inits=[init("s", np.ones(2, np.float32)),
                                                           init("b", np.zeros(3, np.float32))]),
     "InstanceNormalization node 'bad'", "scale has shape [2]; the ONNX spec of InstanceNormalization makes it [C]"),
]


def _ort_refuses(m):
    """onnxruntime fails to load the model or to run it at n = 3."""
    try:
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        sess.run(None, {i.name: np.ones([d.dim_value or 3 for d in i.type.tensor_type.shape.dim],
                                        helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type))
                        for i in m.graph.input})
    except Exception:
        return True
    return False


@pytest.mark.parametrize("case,m,node,rule", CASES, ids=[c[0] for c in CASES])
def test_an_invalid_model_is_refused_naming_the_node_and_the_rule(tmp_path, case, m, node, rule):
    assert _ort_refuses(m)
    with pytest.raises(InvalidModel) as info:
        onnxsym.infer(m)
    assert node in str(info.value) and rule in str(info.value) and len(str(info.value).splitlines()) == 1
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path)
    data = open(path, "rb").read()
    r = subprocess.run([sys.executable, "-m", "onnxsym.cli", "annotate", path, "--mlir", str(tmp_path / "m.mlir")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr and "rule failed" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("onnxsym: error: ") and node in line and rule in line, line
    assert sorted(os.listdir(str(tmp_path))) == ["m.onnx"] and open(path, "rb").read() == data


CONTRADICTIONS = [  # (id, model, the words): onnxruntime refuses them at every size, onnx's inference does not
    ("cumsum_axis", _on_row("CumSum", ["x", "a"], [_ints("a", 2)]), "axis 2 is out of range for rank 2"),
    ("lp_norm_axis", _on_row("LpNormalization", ["x"], axis=2), "axis 2 is out of range for rank 2"),
    ("mvn_axes", _on_row("MeanVarianceNormalization", ["x"], axes=[2, -3]), "no axis of [2, -3] is in range"),
    ("global_pool_rank_2", _on_row("GlobalAveragePool", ["x"]), "needs rank 3 or more"),
    ("instance_norm_rank_2", model([N("InstanceNormalization", ["x", "s", "b"], ["y"], name="bad")],
                                   [("x", F, ["n", 3])], [("y", F, None)],
                                   inits=[init("s", np.ones(3, np.float32)), init("b", np.zeros(3, np.float32))]),
     "needs rank 3 or more"),
]


@pytest.mark.parametrize("case,m,words", CONTRADICTIONS, ids=[c[0] for c in CONTRADICTIONS])
def test_a_node_onnxruntime_refuses_at_every_size_is_a_contradiction(case, m, words):
    """These were annotated as if they ran (the domain said every size)."""
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 2, 3):
        with pytest.raises(Exception):
            sess.run(None, {"x": np.ones([d.dim_value or n for d in m.graph.input[0].type.tensor_type.shape.dim],
                                         np.float32)})
    with pytest.raises(onnxsym.errors.ShapeContradiction, match="bad") as info:
        onnxsym.infer(m)
    assert words in str(info.value)


def test_an_expand_to_a_constant_shape_of_another_rank_is_run_flattened():
    """The spec makes Expand's shape 1-D, yet onnxruntime expands to a constant scalar or 2-D
    shape read flattened (it refuses a computed one on loading, as onnx does): not refused."""
    for shape, real in ((np.array(3), (3, 3)), (np.array([[1], [4]]), (3, 4))):
        for const in (False, True):
            nodes = [N("Expand", ["x", "t"], ["y"], name="ex")]
            inits = [_ints("t", shape)]
            if const:
                nodes.insert(0, N("Constant", [], ["t"], value=onnx.numpy_helper.from_array(shape, "t")))
                inits = []
            m = model(nodes, [("x", F, ["n", 1])], [("y", F, None)], inits=inits)
            out = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
                None, {"x": np.ones([3, 1], np.float32)})[0]
            assert out.shape == real
            assert [dims.evaluate(d, {"n": 3}) for d in onnxsym.infer(m).shape("y")] == list(real)
    computed = model([N("Shape", ["x"], ["s"]), N("Reshape", ["s", "r"], ["t"]), N("Expand", ["x", "t"], ["y"], name="ex")],
                     [("x", F, ["n", 1])], [("y", F, None)], inits=[_ints("r", [1, 2])])
    assert _ort_refuses(computed)
    with pytest.raises(InvalidModel, match="Expand node 'ex'"):
        onnxsym.infer(computed)


def test_what_onnxruntime_runs_is_not_refused():
    """GroupNormalization-18 is deprecated in onnx's schemas, yet onnxruntime runs it: accepted.
    A custom domain's operator is unknown, not invalid: fresh symbols."""
    m = model([N("GroupNormalization", ["x", "s", "b"], ["y"], name="gn", num_groups=2)], [("x", F, ["n", 4, 3])],
              [("y", F, None)], inits=[init("s", np.ones(2, np.float32)), init("b", np.zeros(2, np.float32))],
              opset=18)
    assert not _ort_refuses(m)
    assert [str(d) for d in onnxsym.infer(m).shape("y")] == ["n", "4", "3"]
    custom = model([N("Frobnicate", ["x"], ["y"], name="c", domain="acme", colour=3)], [("x", F, ["n"])],
                   [("y", F, None)], opsets=[("acme", 1)])
    assert [u.value for u in onnxsym.infer(custom).unresolved()] == ["y"]


def test_strict_mode_does_not_call_an_invalid_model_a_bug():
    """InvalidModel is a GraphError: the library's callers catching that see it."""
    with pytest.raises(onnxsym.GraphError):
        onnxsym.infer(CASES[0][1], strict=True)


def test_a_compress_condition_of_another_rank_is_run_flattened():
    """The spec makes Compress's condition 1-D, yet onnxruntime runs a 2-D one (flattened, cut
    to the axis): not refused, and the dims are onnxruntime's (issue 21 listed it as invalid;
    onnxruntime, the judge, runs it)."""
    cond = init("c", np.array([[True, True], [False, True]]))
    for axis, real in ((None, (3,)), (0, None)):
        kw = {} if axis is None else {"axis": axis}
        m = model([N("Compress", ["x", "c"], ["y"], name="cp", **kw)], [("x", F, ["n", 4])], [("y", F, None)],
                  inits=[cond])
        assert not _ort_refuses(m)
        out = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": np.ones([3, 4], np.float32)})[0]
        shape = onnxsym.infer(m).shape("y")
        if real is not None:
            assert out.shape == real and tuple(shape) == real
        else:  # the count is data: a fresh symbol, the rest onnxruntime's
            assert len(shape) == out.ndim and shape[1] == out.shape[1] and not isinstance(shape[0], int)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_recurrent_weights_of_a_symbolic_input_size_are_a_condition(op):
    """X's input size a symbol k and W made for 5: not invalid, the domain needs k == 5, and
    onnxruntime runs at 5 and refuses at 6."""
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    m = model([N(op, ["x", "w", "r"], ["y"], name="rnn", hidden_size=3)], [("x", F, ["seq", "n", "k"])],
              [("y", F, None)], inits=[init("w", np.zeros([1, gates * 3, 5], np.float32)),
                                       init("r", np.zeros([1, gates * 3, 3], np.float32))])
    domain = onnxsym.infer(m).domain()
    assert [c.text for c in domain.conditions] == ["k == 5"], domain.lines()
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"x": np.ones([2, 3, 5], np.float32)})[0].shape == (2, 1, 3, 3)
    with pytest.raises(Exception, match="W must have shape"):
        sess.run(None, {"x": np.ones([2, 3, 6], np.float32)})
