"""Sequence and optional ops, checked item by item against onnxruntime."""

import numpy as np
import pytest
from helpers import I64, F, model
from onnx import TensorProto, helper
from oracle import check
from test_control_flow import SIZES, dims_text, reasons

SEQ = ["batch", "seq"]


def feeds(**named):
    """Random inputs named after their shapes, over SIZES: x=("batch","seq") ..."""
    cases = []
    for i, b in enumerate(SIZES):
        f = {}
        for name, shape in named.items():
            if isinstance(shape, np.ndarray):
                f[name] = shape
            else:
                f[name] = np.random.default_rng(i).standard_normal([b.get(d, d) for d in shape]).astype(np.float32)
        cases.append((b, f))
    return cases


def const(name, value, dtype=I64):
    arr = np.asarray(value)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", dtype, arr.shape,
                                                                              arr.reshape(-1).tolist()))


def test_construct_at_length_concat_keep_each_item():
    m = model([helper.make_node("Concat", ["x", "x"], ["x2"], axis=1),
               helper.make_node("SequenceConstruct", ["x", "x2"], ["s"]),
               const("one", 1), const("minus", -2),
               helper.make_node("SequenceAt", ["s", "one"], ["a1"]),
               helper.make_node("SequenceAt", ["s", "minus"], ["a0"]),
               helper.make_node("SequenceLength", ["s"], ["n"]),
               helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=1)],
              [("x", F, SEQ)], ["s", "a1", "a0", "n", "cat"])
    res = check(m, feeds(x=SEQ), annotated=True, fresh_ok=["s"])
    assert dims_text(res, "a1") == ["batch", "2*seq"] and dims_text(res, "a0") == ["batch", "seq"]
    assert res.values["n"].value == (2,)
    assert dims_text(res, "cat") == ["batch", "3*seq"]
    assert "the sequence items differ" in reasons(res, "s")[0]  # the element type: seq or 2*seq


def test_insert_and_erase_at_known_positions():
    m = model([helper.make_node("SequenceEmpty", [], ["e"], dtype=TensorProto.FLOAT),
               helper.make_node("SequenceInsert", ["e", "x"], ["s1"]),
               helper.make_node("Concat", ["x", "x"], ["x2"], axis=0),
               const("zero", 0),
               helper.make_node("SequenceInsert", ["s1", "x2", "zero"], ["s2"]),
               helper.make_node("SequenceInsert", ["s2", "x"], ["s3"]),
               helper.make_node("SequenceErase", ["s3", "zero"], ["s4"]),
               helper.make_node("SequenceAt", ["s4", "zero"], ["first"]),
               helper.make_node("ConcatFromSequence", ["s4"], ["stacked"], axis=-1, new_axis=1)],
              [("x", F, SEQ)], ["s1", "s3", "s4", "first", "stacked"])
    res = check(m, feeds(x=SEQ), annotated=True, fresh_ok=["s3"])
    assert [dims_text_of(t) for t in res.values["s3"].items] == [["2*batch", "seq"], ["batch", "seq"], ["batch", "seq"]]
    assert dims_text(res, "first") == ["batch", "seq"]
    assert dims_text(res, "stacked") == ["batch", "seq", "2"]


def dims_text_of(t):
    return [str(d) for d in t.shape]


def test_unknown_position_gives_an_item_like_any_other():
    m = model([helper.make_node("Concat", ["x", "x"], ["x2"], axis=1),
               helper.make_node("SequenceConstruct", ["x", "x2", "x"], ["s"]),
               helper.make_node("SequenceAt", ["s", "p"], ["a"]),
               helper.make_node("SequenceAt", ["s", "q"], ["b"]),
               helper.make_node("SequenceErase", ["s", "p"], ["s2"]),
               helper.make_node("SequenceAt", ["s2", "q"], ["c"])],
              [("x", F, SEQ), ("p", I64, []), ("q", I64, [])], ["a", "b", "c"])
    cases = [(b, {**f, "p": np.array(i), "q": np.array(1 - i)}) for i, (b, f) in enumerate(feeds(x=SEQ))]
    res = check(m, cases, annotated=True, fresh_ok=["a", "b", "c"])
    (_, a1), (_, b1) = res.shape("a"), res.shape("b")
    assert str(res.shape("a")[0]) == "batch" and a1 != b1  # two items need not be alike


def test_split_to_sequence():
    m = model([helper.make_node("SplitToSequence", ["x"], ["ones"], axis=0, keepdims=0),
               const("two", 2),
               helper.make_node("SplitToSequence", ["x", "two"], ["pairs"], axis=1),
               const("sizes", [1, 2]),
               helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=0),
               helper.make_node("ConcatFromSequence", ["parts"], ["back"], axis=0),
               helper.make_node("SequenceLength", ["ones"], ["n"])],
              [("x", F, [3, "seq"])], ["ones", "pairs", "parts", "back", "n"])
    res = check(m, feeds(x=[3, "seq"]), annotated=True, fresh_ok=["pairs", "parts"])
    assert [dims_text_of(t) for t in res.values["ones"].items] == [["seq"]] * 3
    assert [dims_text_of(t) for t in res.values["parts"].items] == [["1", "seq"], ["2", "seq"]]
    assert dims_text(res, "back") == ["3", "seq"] and res.values["n"].value == (3,)
    assert "the last piece may be shorter" in reasons(res, "pairs")[0]


def test_split_to_sequence_along_a_symbolic_axis_knows_every_item():
    m = model([helper.make_node("SplitToSequence", ["x"], ["rows"], axis=1),
               helper.make_node("ConcatFromSequence", ["rows"], ["back"], axis=1),
               helper.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=0, new_axis=1),
               helper.make_node("SequenceLength", ["rows"], ["n"]),
               const("two", 2),
               helper.make_node("SplitToSequence", ["x", "two"], ["pairs"], axis=1),
               helper.make_node("SequenceLength", ["pairs"], ["n_pairs"])],
              [("x", F, SEQ)], ["rows", "back", "stacked", "n", "n_pairs"])
    res = check(m, feeds(x=SEQ), annotated=True)
    assert dims_text_of(res.values["rows"].elem) == ["batch", "1"]
    assert dims_text(res, "back") == ["batch", "seq"] and dims_text(res, "stacked") == ["seq", "batch", "1"]
    assert [str(v) for v in res.values["n"].value + res.values["n_pairs"].value] == ["seq", "(seq + 1)//2"]


def test_sequence_map_infers_the_body_per_item():
    body = helper.make_graph([helper.make_node("Concat", ["item", "item"], ["out"], axis=0)], "body",
                             [helper.make_tensor_value_info("item", F, None)],
                             [helper.make_tensor_value_info("out", F, None)])
    m = model([helper.make_node("Concat", ["x", "x"], ["x2"], axis=1),
               helper.make_node("SequenceConstruct", ["x", "x2"], ["s"]),
               helper.make_node("SequenceMap", ["s"], ["doubled"], body=body)],
              [("x", F, SEQ)], ["doubled"])
    res = check(m, feeds(x=SEQ), annotated=True, fresh_ok=["doubled"])
    assert [dims_text_of(t) for t in res.values["doubled"].items] == [["2*batch", "seq"], ["2*batch", "2*seq"]]


@pytest.mark.parametrize("opset", [15, 18])
def test_optional_round_trip(opset):
    m = model([helper.make_node("Optional", ["x"], ["o"]),
               helper.make_node("OptionalHasElement", ["o"], ["has"]),
               helper.make_node("OptionalGetElement", ["o"], ["back"])],
              [("x", F, SEQ)], ["has", "back"], opset=opset)
    res = check(m, feeds(x=SEQ), annotated=True)
    assert dims_text(res, "back") == ["batch", "seq"] and dims_text(res, "has") == []


def test_optional_get_element_of_a_plain_tensor_at_opset_18():
    m = model([helper.make_node("OptionalGetElement", ["x"], ["same"]),
               helper.make_node("OptionalHasElement", ["x"], ["has"])], [("x", F, SEQ)], ["same", "has"], opset=18)
    res = check(m, feeds(x=SEQ), annotated=True)
    assert dims_text(res, "same") == ["batch", "seq"] and res.values["has"].value == (True,)


def test_empty_optional_from_its_type():
    tp = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3])
    m = model([helper.make_node("Optional", [], ["o"], type=tp),
               helper.make_node("OptionalHasElement", ["o"], ["has"])],
              [("x", F, SEQ)], ["has"], opset=18)
    res = check(m, feeds(x=SEQ), annotated=True)
    assert dims_text_of(res.values["o"].elem) == ["2", "3"]
