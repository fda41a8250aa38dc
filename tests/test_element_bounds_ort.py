"""The least and largest index element through ConstantOfShape and Clip (onnxsym/domain/elements.py),
judged by onnxruntime at each size: found in LayoutLMv3's TorchScript export (its token types are
ConstantOfShape zeros, its relative positions a Clip of a Range's differences), whose index needs the
domain said it could not follow. A Clip of fed data keeps its bound unknown: the data need not reach
hi (LayoutLMv3 clips box sizes to [0, 1023] and gathers from 128 rows), so no size is refused for it."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import onnxsym

pytest.importorskip("onnxruntime")


def _model(nodes, inputs, inits):
    m = h.make_model(h.make_graph(nodes, "g", inputs, [h.make_empty_tensor_value_info("y")], initializer=inits),
                     opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _runs(m, feeds) -> bool:
    """Whether onnxruntime runs the model on ``feeds`` (in a child process)."""
    from onnxsym.model.isolated import Child, Refused

    with Child() as child:
        child.load(m.SerializeToString())
        try:
            child.run(feeds, ["y"])
        except Refused:
            return False
        return True


def _i64(name, *xs):
    return numpy_helper.from_array(np.array(xs, dtype=np.int64), name)


def _table(rows):
    return numpy_helper.from_array(np.arange(rows * 2, dtype=np.float32).reshape(rows, 2), "table")


def _range_model(rows, clip, shift=0):
    """y = table[rows, 2][Clip(Range(0, n) - shift, lo, hi)], n the length of input x."""
    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Squeeze", ["s"], ["n"]),
             h.make_node("Range", ["zero", "n", "one"], ["r"]), h.make_node("Sub", ["r", "shift"], ["rs"]),
             h.make_node("Clip", ["rs", "lo", "hi"], ["idx"]), h.make_node("Gather", ["table", "idx"], ["y"])]
    inits = [_table(rows), numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(1, np.int64), "one"), numpy_helper.from_array(np.array(shift, np.int64), "shift"),
             numpy_helper.from_array(np.array(clip[0], np.int64), "lo"),
             numpy_helper.from_array(np.array(clip[1], np.int64), "hi")]
    return _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n"])], inits)


@pytest.mark.parametrize("rows, clip, shift", [(10, (0, 12), 0), (4, (-3, 100), 5), (10, (0, 9), 0)])
def test_a_clip_of_a_range_bounds_the_index_as_onnxruntime_refuses_it(rows, clip, shift):
    m = _range_model(rows, clip, shift)
    domain = onnxsym.infer(m).domain()
    assert not domain.unstated, domain.unstated  # the bound is followed, not said unknown
    for n in range(1, 16):
        runs = _runs(m, {"x": np.zeros(n, np.float32)})
        assert (domain.violated({"n": n}) is None) == runs, (n, runs, domain.conditions)


@pytest.mark.parametrize("fill, ok", [(0, True), (2, True), (-3, True), (3, False)])
def test_constant_of_shape_indices_are_their_fill(fill, ok):
    """Gather(table[3, 2], ConstantOfShape([b, n], fill)): every index is the fill, so the need holds
    at every size or at none (onnxsym's contradiction where onnxruntime refuses every size)."""
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("ConstantOfShape", ["s"], ["idx"], value=h.make_tensor("value", T.INT64, [1], [fill])),
             h.make_node("Gather", ["table", "idx"], ["y"])]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["b", "n"])], [_table(3)])
    for b, n in ((1, 1), (2, 5), (4, 3)):
        assert _runs(m, {"x": np.zeros((b, n), np.float32)}) == ok
    if not ok:
        with pytest.raises(onnxsym.ShapeContradiction):
            onnxsym.infer(m).domain()
        return
    domain = onnxsym.infer(m).domain()
    assert not domain.unstated and not domain.conditions, (domain.unstated, domain.conditions)


def test_a_clip_of_fed_data_states_no_size_condition():
    """Gather(table[4, 2], Clip(ids, 0, 1023)): hi is past the rows, but the ids decide the index; the
    need is said data-dependent, and sizes it allows run on small ids (a bound of [0, 1023] stated
    would be a contradiction: a domain too narrow)."""
    nodes = [h.make_node("Clip", ["ids", "lo", "hi"], ["idx"]), h.make_node("Gather", ["table", "idx"], ["y"])]
    inits = [_table(4), numpy_helper.from_array(np.array(0, np.int64), "lo"),
             numpy_helper.from_array(np.array(1023, np.int64), "hi")]
    m = _model(nodes, [h.make_tensor_value_info("ids", T.INT64, ["b", "n"])], inits)
    domain = onnxsym.infer(m).domain()
    assert domain.violated({"b": 3, "n": 7}) is None
    assert any("data-dependent" in text for text, _src in domain.unstated), domain.unstated
    assert _runs(m, {"ids": np.full((3, 7), 3, np.int64)})
    assert not _runs(m, {"ids": np.full((3, 7), 4, np.int64)})


def test_layoutlmv3s_index_needs_are_followed_but_for_the_fed_ones():
    """The corpus export (models/real/make_families9.py): what the domain does not state is what the
    input data decide (token ids, boxes, positions counted from the ids), nothing onnxsym could not
    follow; and onnxruntime runs it at the largest seq the domain allows (64) on ids ending in two padding
    tokens (1): a position is 1 + the count of non-padding ids up to it, so they stay in their 64 rows."""
    import os

    import onnx

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models", "real",
                        "hf_layoutlmv3_ts.onnx")
    m = onnx.load(path)
    domain = onnxsym.infer(m).domain()
    assert domain.unstated and all("data-dependent" in text for text, _src in domain.unstated), domain.unstated
    assert domain.violated({"batch": 2, "seq": 64}) is None and domain.violated({"batch": 2, "seq": 65}) is not None
    ids = np.full((2, 64), 5, np.int64)
    ids[:, -2:] = 1
    feeds = {"input_ids": ids, "bbox": np.zeros((2, 64, 4), np.int64), "attention_mask": np.ones((2, 64), np.int64)}
    from onnxsym.model.isolated import Child

    with Child() as child:
        child.load(m.SerializeToString())
        assert child.run(feeds, ["hidden"])
