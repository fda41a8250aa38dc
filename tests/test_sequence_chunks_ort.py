"""The pieces of an uneven split (SplitToSequence with a scalar split s over an axis of n: all s
long but the last, n mod s where s does not divide n) read by position and erased, held to
onnxruntime over a grid of sizes: SequenceAt of a known position gives that piece's exact dims
(-1 the last, (n - 1) mod s + 1; -2 and before a full one; p >= 0 min(s, n - p*s)); SequenceErase
of the last leaves full pieces, of the first (or any from -2 back) the pieces of n - s, which a
ConcatFromSequence concatenates exactly. Both need the position in range (onnxruntime refuses an
erase of an empty sequence too), and where onnxsym cannot tell the number of items (a join of
two splits) that need is said not stated, never dropped."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import onnxsym
from onnxsym import dims
from onnxsym.model.isolated import Child, Refused
from tests.op_verdicts import isolated_disagreements

pytest.importorskip("onnxruntime")

GRID = [{"n": n, "m": m} for n in range(10) for m in (0, 1, 2)]


def _i64(name: str, v: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, np.int64), name)


def _model(nodes, inits, out_type=T.FLOAT) -> onnx.ModelProto:
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", "m"])
    y = h.make_tensor_value_info("y", out_type, None)
    return h.make_model(h.make_graph(nodes, "g", [x], [y], inits), opset_imports=[h.make_opsetid("", 17)])


def _split(s: int = 3):
    return h.make_node("SplitToSequence", ["x", "s"], ["q"], axis=0)


def _erase(p: int | None):
    return h.make_node("SequenceErase", ["q"] + ([] if p is None else ["p"]), ["r"])


def _against_onnxruntime(m: onnx.ModelProto) -> onnxsym.Result:
    """The domain's verdict and every dim over GRID are onnxruntime's (run in a child), with sizes
    on both sides of the domain."""
    n, bad, crashes = isolated_disagreements(m, GRID, allow_zero=True)
    assert not bad and not crashes, (bad[:5], crashes)
    res = onnxsym.infer(m, allow_zero=True)
    inside = [res.domain().violated(sizes) is None for sizes in GRID]
    assert any(inside) and not all(inside)
    return res


def _no_fresh(res: onnxsym.Result, ds) -> None:
    assert not any(s.name in res.fresh for d in ds for s in dims.free_symbols(d)), ds


@pytest.mark.parametrize("p", [-1, -2, -3, 0, 1, 2])
def test_a_piece_read_by_position_has_its_exact_dims(p):
    m = _model([_split(), h.make_node("SequenceAt", ["q", "p"], ["y"])], [_i64("s", 3), _i64("p", p)])
    res = _against_onnxruntime(m)
    _no_fresh(res, res.shape("y"))


@pytest.mark.parametrize("p", [None, -1, 0, -2])
@pytest.mark.parametrize("axis", [0, 1])
def test_pieces_with_one_erased_concatenate_exactly(p, axis):
    """Along the split axis (0) the lengths add up; along the other (1) the pieces must agree on the
    split axis, which the domain states as for the split's own pieces."""
    nodes = [_split(), _erase(p), h.make_node("ConcatFromSequence", ["r"], ["y"], axis=axis)]
    res = _against_onnxruntime(_model(nodes, [_i64("s", 3)] + ([] if p is None else [_i64("p", p)])))
    _no_fresh(res, res.shape("y"))


@pytest.mark.parametrize("p", [None, 0, 2, -3])
def test_an_erase_needs_its_position_in_range(p):
    """onnxruntime refuses an erase out of range, and of an empty sequence (n = 0) by default; the
    count left is the number of pieces less one."""
    import onnxruntime as ort

    nodes = [_split(), _erase(p), h.make_node("SequenceLength", ["r"], ["y"])]
    m = _model(nodes, [_i64("s", 3)] + ([] if p is None else [_i64("p", p)]), T.INT64)
    res = _against_onnxruntime(m)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in range(7, 12):  # (in range for every position here)
        got = int(sess.run(None, {"x": np.zeros((n, 2), np.float32)})[0])
        assert dims.evaluate(res.values["y"].value[0], {"n": n, "m": 2}) == got


def test_an_insert_needs_its_position_in_range():
    """SequenceInsert at a position of a sequence of n items needs -n <= position <= n."""
    nodes = [_split(), h.make_node("SequenceInsert", ["q", "x", "p"], ["r"]), h.make_node("SequenceLength", ["r"], ["y"])]
    _against_onnxruntime(_model(nodes, [_i64("s", 3), _i64("p", 2)], T.INT64))


def test_a_count_onnxsym_cannot_tell_leaves_the_need_of_an_item_not_stated():
    """An If joining the pieces of splits by 3 and by 2: the number of items is either ceil(n / 3)
    or ceil(n / 2), which onnxsym does not tell; onnxruntime refuses the concat at n = 0 either way,
    so the domain must not call every size valid: it says that need not stated."""
    seq = h.make_tensor_sequence_value_info
    then = h.make_graph([h.make_node("SplitToSequence", ["x", "s"], ["t"])], "then", [], [seq("t", T.FLOAT, None)])
    other = h.make_graph([h.make_node("SplitToSequence", ["x", "s2"], ["e"])], "else", [], [seq("e", T.FLOAT, None)])
    nodes = [h.make_node("If", ["b"], ["q"], then_branch=then, else_branch=other),
             h.make_node("ConcatFromSequence", ["q"], ["y"], axis=0)]
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", "m"])
    b = h.make_tensor_value_info("b", T.BOOL, [])
    g = h.make_graph(nodes, "g", [x, b], [h.make_tensor_value_info("y", T.FLOAT, None)], [_i64("s", 3), _i64("s2", 2)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    with Child() as child:
        child.load(m.SerializeToString(), {"optimization": "all"})
        for flag in (True, False):
            with pytest.raises(Refused):
                child.run({"x": np.zeros((0, 2), np.float32), "b": np.array(flag)}, ["y"])
    domain = onnxsym.infer(m, allow_zero=True).domain()
    assert domain.violated({"n": 0, "m": 2}) is None  # (nothing stated decides n = 0) ...
    said = [text for text, src in domain.unstated if src.op_type == "ConcatFromSequence"]
    assert any("the sequence has an item" in text for text in said), domain.unstated  # ... so it is said
