"""The domain of NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (and its expanded body),
OneHot, Dropout and ArrayFeatureExtractor against onnxruntime's run/refuse verdict (issue 34):
hand-built models across each condition's boundary, and onnx's backend cases as the sweep
moves them. onnxruntime runs exactly where the domain holds, and there with the inferred shapes."""

import itertools

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from op_verdicts import disagreements, session

import onnxsym
from onnxsym.errors import ShapeContradiction
from tests import conformance

pytest.importorskip("onnxruntime")

TARGET = np.array([[1, 3], [2, 4], [2, 0]], np.int64)  # classes up to 4: C >= 5


def _model(op, inputs, inits, outputs, opset, domain="", **attrs):
    node = h.make_node(op, [n for n, _, _ in inputs], outputs, domain=domain, **attrs)
    ins = [h.make_tensor_value_info(n, et, s) for n, et, s in inputs if n not in inits]
    g = h.make_graph([node], "g", ins, [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs],
                     initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    opsets = [h.make_opsetid("", opset)] + ([h.make_opsetid(domain, 1)] if domain else [])
    m = h.make_model(g, opset_imports=opsets)
    m.ir_version = 10
    return m


def _grid(**axes):
    names = sorted(axes)
    return [dict(zip(names, v)) for v in itertools.product(*(axes[n] for n in names))]


def _agrees(m, grid, *, refused=True):
    """No disagreement, and the grid holds a size onnxruntime refuses (``refused``) and one it runs."""
    n, bad = disagreements(m, grid)
    assert not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])
    domain = onnxsym.infer(m).domain()
    verdicts = {domain.violated(b) is None for b in grid}
    assert verdicts == ({True, False} if refused else {True})


def _loss(op, opset, target, weight=False, **attrs):
    outs = ["y", "lp"] if op == "SoftmaxCrossEntropyLoss" else ["y"]
    inputs = [("x", T.FLOAT, ["n", "c", "d"]), ("t", T.INT64, list(target.shape))]
    if weight:
        inputs.append(("w", T.FLOAT, ["w"]))
    return _model(op, inputs, {"t": target}, outs, opset, **attrs)


LOSSES = [("NegativeLogLikelihoodLoss", 13), ("NegativeLogLikelihoodLoss", 22),
          ("SoftmaxCrossEntropyLoss", 12), ("SoftmaxCrossEntropyLoss", 13)]


@pytest.mark.parametrize("op, opset", LOSSES)
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_loss_target_block_fits_inside_the_input(op, opset, reduction):
    """onnxruntime gathers the target's block: the input's N and d may be larger than the
    target's (the spec says equal), not smaller; C must hold the largest class."""
    m = _loss(op, opset, TARGET, reduction=reduction)
    _agrees(m, _grid(n=[2, 3, 4, 6], c=[4, 5, 7], d=[1, 2, 3]))


@pytest.mark.parametrize("op, opset", LOSSES)
def test_loss_weight_holds_every_class(op, opset):
    m = _loss(op, opset, TARGET, weight=True)
    _agrees(m, _grid(n=[3], c=[5], d=[2], w=[1, 4, 5, 6, 9]))


@pytest.mark.parametrize("op, opset", LOSSES)
def test_loss_negative_classes_count_from_the_end(op, opset):
    """A class of -5 runs with C = 5, not 4; of -2 with a weight of 2, not 1."""
    target = np.array([[-1, -5], [1, 1], [1, 0]], np.int64)
    _agrees(_loss(op, opset, target), _grid(n=[3], c=[4, 5, 6], d=[2]))
    target = np.array([[-1, -2], [1, 1], [1, 0]], np.int64)
    _agrees(_loss(op, opset, target, weight=True), _grid(n=[3], c=[5], d=[2], w=[1, 2, 3]))


@pytest.mark.parametrize("op, opset", LOSSES)
@pytest.mark.parametrize("ignore", [4, -7, 0])
def test_loss_ignored_classes_are_read_as_zero(op, opset, ignore):
    """The body replaces each ignore_index element by 0 before it gathers: an ignored 4 needs
    no C of 5, an ignored -7 no C of 7."""
    target = np.array([[ignore, 3], [2, ignore], [2, 0]], np.int64)
    m = _loss(op, opset, target, weight=True, ignore_index=ignore)
    _agrees(m, _grid(n=[3], c=[2, 3, 4, 5, 8], d=[2], w=[3, 4]), refused=True)


@pytest.mark.parametrize("op, opset", LOSSES)
def test_loss_fed_target_dims_at_most_the_inputs(op, opset):
    """A fed target (its classes are data, 0 here): its dims are at most the input's."""
    outs = ["y", "lp"] if op == "SoftmaxCrossEntropyLoss" else ["y"]
    m = _model(op, [("x", T.FLOAT, ["n", 5, "d"]), ("t", T.INT64, ["m", "e"])], {}, outs, opset, reduction="none")
    _agrees(m, _grid(n=[1, 2, 3], m=[1, 2, 3], d=[2], e=[1, 2, 3]))


@pytest.mark.parametrize("op, opset", LOSSES)
def test_loss_target_rank_is_the_inputs_less_one(op, opset):
    m = _loss(op, opset, TARGET[:, :1].reshape(3, 1, 1))
    with pytest.raises(ShapeContradiction, match="rank"):
        onnxsym.infer(m)
    static = _loss(op, opset, TARGET[:, :1].reshape(3, 1, 1))
    for d in static.graph.input[0].type.tensor_type.shape.dim:
        d.Clear()
        d.dim_value = 3
    with pytest.raises(Exception):
        session(static).run(None, {"x": np.ones((3, 3, 3), np.float32)})


def test_one_hot_values_has_two_elements():
    m = _model("OneHot", [("i", T.FLOAT, ["a"]), ("depth", T.FLOAT, []), ("v", T.FLOAT, ["k"])],
               {"depth": np.array(4.0, np.float32)}, ["y"], 11)
    _agrees(m, _grid(a=[1, 3], k=[1, 2, 3, 4]))


def test_one_hot_values_of_rank_two_is_refused_at_every_size():
    m = _model("OneHot", [("i", T.FLOAT, ["a"]), ("depth", T.FLOAT, []), ("v", T.FLOAT, [1, 2])],
               {"depth": np.array(4.0, np.float32)}, ["y"], 11)
    with pytest.raises(ShapeContradiction, match="rank"):
        onnxsym.infer(m)
    with pytest.raises(Exception, match="rank 1"):
        session(m)


@pytest.mark.parametrize("ratio", [0.0, 0.5, 0.99, 1.0, 1.5, -0.1])
@pytest.mark.parametrize("opset", [12, 22])
def test_dropout_constant_ratio_in_zero_one(ratio, opset):
    """onnxruntime refuses a ratio outside [0, 1) at every run, training or not."""
    m = _model("Dropout", [("x", T.FLOAT, ["a"]), ("r", T.FLOAT, [])], {"r": np.array(ratio, np.float32)},
               ["y"], opset)
    runs = 0 <= ratio < 1
    if runs:
        _agrees(m, _grid(a=[1, 4]), refused=False)
    else:
        with pytest.raises(ShapeContradiction, match="ratio"):
            onnxsym.infer(m)
    try:
        session(m).run(None, {"x": np.ones(3, np.float32)})
        ran = True
    except Exception:
        ran = False
    assert ran == runs


def _feature(y, rank=2):
    x = ["a", "b"][-rank:] if rank <= 2 else ["a", "c", "b"]
    return _model("ArrayFeatureExtractor", [("x", T.FLOAT, x), ("y", T.INT64, list(np.shape(y)))],
                  {"y": np.array(y, np.int64)}, ["z"], 17, domain="ai.onnx.ml")


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_array_feature_extractor_index_below_the_last_axis(rank):
    m = _feature([0, 3], rank)
    _agrees(m, [dict(a=2, b=b, c=2) for b in (1, 2, 3, 4, 5, 8)])


def test_array_feature_extractor_refuses_a_negative_index():
    m = _feature([-1, 1])
    n, bad = disagreements(m, _grid(a=[2], b=[1, 2, 4, 9]))  # (onnxruntime refuses at every size)
    assert not bad, bad
    with pytest.raises(ShapeContradiction, match="ArrayFeatureExtractor"):  # (so the domain is empty: a contradiction)
        onnxsym.infer(m).domain()


# the backend cases as the sweep moves them (every case of these ops: tests/conformance.py)
CASES = ["test_nllloss_NCd1d2d3_none_no_weight_negative_ii", "test_nllloss_NCd1_mean_weight_negative_ii",
         "test_nllloss_NCd1d2_with_weight_reduction_mean", "test_sce_NCd1d2d3_sum_weight_high_ii",
         "test_sce_NCd1d2d3_sum_weight_high_ii_expanded", "test_sce_mean_weight_ii_3d_log_prob_expanded",
         "test_sce_none_weights_log_prob", "test_onehot_with_axis", "test_onehot_negative_indices",
         "test_training_dropout", "test_dropout_default_ratio", "test_ai_onnx_ml_array_feature_extractor"]


@pytest.mark.parametrize("name", CASES)
def test_backend_case_agrees(name):
    o = conformance.check_case(name)
    assert o.tries and not conformance._failing(o), (o.too_wide[:3], o.too_narrow[:3], o.moved_wrong[:3], o.wrong)


@pytest.mark.parametrize("op, opset", LOSSES)
@pytest.mark.parametrize("x, w", [((3, 5, 2), 5), ((4, 5, 2), 5), ((3, 5, 3), 5), ((3, 6, 2), 5), ((3, 5, 2), 6)])
def test_loss_static_dims_are_equal(op, opset, x, w):
    """With static dims on both sides onnxruntime's load check unifies them: a larger input or
    weight is refused there, though the body would run it."""
    outs = ["y", "lp"] if op == "SoftmaxCrossEntropyLoss" else ["y"]
    m = _model(op, [("x", T.FLOAT, list(x)), ("t", T.INT64, [3, 2]), ("w", T.FLOAT, [w])], {"t": TARGET}, outs, opset)
    try:
        session(m).run(None, {"x": np.ones(x, np.float32), "w": np.ones(w, np.float32)})
        ran = True
    except Exception:
        ran = False
    if ran:
        assert onnxsym.infer(m).domain().violated({}) is None
    else:
        with pytest.raises(ShapeContradiction, match="static"):
            onnxsym.infer(m)
    weight_checked = opset >= 22
    assert ran == (x[0] == 3 and x[2] == 2 and (x[1] == w or not weight_checked))


@pytest.mark.parametrize("op, opset", LOSSES)
def test_loss_empty_sizes(op, opset):
    """With sizes of 0 allowed: a fed class needs C and the weight's length >= 1 unless the target is
    empty; SoftmaxCrossEntropyLoss's body reshapes the scores to (N, C, -1), refused where N or C is 0."""
    outs = ["y", "lp"] if op == "SoftmaxCrossEntropyLoss" else ["y"]
    m = _model(op, [("x", T.FLOAT, ["n", "c", "d"]), ("t", T.INT64, ["m", "e"]), ("w", T.FLOAT, ["k"])], {}, outs,
               opset, reduction="mean")
    grid = [dict(n=n, c=c, d=d, m=mm, e=e, k=k) for n, c, d, mm, e, k in
            [(0, 5, 2, 0, 2, 5), (3, 0, 2, 3, 2, 5), (3, 0, 2, 0, 2, 5), (3, 5, 0, 3, 0, 5), (3, 5, 2, 3, 2, 0),
             (3, 5, 2, 0, 2, 0), (3, 0, 0, 3, 0, 5), (3, 5, 2, 3, 2, 5)]]
    res = onnxsym.infer(m, allow_zero=list(grid[0]))
    domain, sess = res.domain(), session(m)
    for b in grid:
        feeds = {"x": np.ones((b["n"], b["c"], b["d"]), np.float32), "t": np.zeros((b["m"], b["e"]), np.int64),
                 "w": np.ones(b["k"], np.float32)}
        try:
            sess.run(None, feeds)
            ran = True
        except Exception:
            ran = False
        assert (domain.violated(b) is None) == ran, (b, ran, domain.violated(b))


def _ints(name, vals):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, T.INT64, [len(vals)] if len(vals) > 1 else [],
                                                                    vals))


@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
@pytest.mark.parametrize("start, ignore", [(0, None), (-2, None), (0, -5), (-2, 2), (0, 0)])
def test_loss_classes_from_shapes(op, start, ignore):
    """A target computed from the sizes, Range(start, a + start): its element bounds give the
    classes (an ignore_index that may be one of them: either bound is in range or is the ignored one)."""
    attrs = {} if ignore is None else {"ignore_index": ignore}
    nodes = [h.make_node("Shape", ["x"], ["s"]), _ints("z", [start]), _ints("one", [1]),
             h.make_node("Constant", [], ["i0"], value=h.make_tensor("i0", T.INT64, [1], [0])),
             h.make_node("Gather", ["s", "i0"], ["n1"], axis=0), h.make_node("Squeeze", ["n1"], ["n"]),
             h.make_node("Add", ["n", "z"], ["lim"]), h.make_node("Range", ["z", "lim", "one"], ["t"]),
             h.make_node(op, ["x", "t"], ["y"], reduction="none", **attrs)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["a", "b"])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 10
    _agrees(m, _grid(a=[1, 2, 3, 4, 5], b=[1, 2, 3, 4, 5]))
