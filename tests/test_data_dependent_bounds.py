"""Each data-dependent count carries the upper bound its op proves (NonZero <= its input's
element count, NonMaxSuppression <= batch * classes * min(boxes, max per class), an unknown
TopK k <= the axis, Unique <= the elements, Compress <= the axis): shown by show and check,
used by cost's worst case. A Slice to a data-dependent k is min(axis, k), never k. The bounds
are checked against onnxruntime runs, also on data that reaches them."""

import numpy as np
from helpers import I64, F, init, model
from onnx import helper
from oracle import ANY, check, run_ort

import onnxsym
from onnxsym import dims
from onnxsym.commands.check import entries_of
from onnxsym.commands.show import symbol_lines

N = helper.make_node


def _bound_at(res, d, binding):
    """The bound of the fresh symbol ``d`` at ``binding``."""
    with res.env:
        return dims.evaluate(res.bounds()[str(d)], binding)


def test_nonzero_count_is_at_most_the_element_count():
    m = model([N("NonZero", ["x"], ["nz"])], [("x", F, ["batch", "seq"])], ["nz"])
    res = onnxsym.infer(m)
    n = res.shape("nz")[1]
    assert str(res.bounds()[str(n)]) == "batch*seq"
    for b, s, density in ((2, 3, 0.5), (4, 5, 1.0), (1, 7, 0.0)):
        x = (np.random.rand(b, s) < density).astype(np.float32)
        real = run_ort(m, {"x": x})["nz"].shape[1]
        assert real <= _bound_at(res, n, {"batch": b, "seq": s})
        assert density < 1 or real == b * s  # (the bound is reached)
    assert any("at most batch*seq" in line for line in symbol_lines(res))
    assert any("at most batch*seq" in e.describe() for e in entries_of(res))


def _nms_model(per_class):
    nodes = [N("NonMaxSuppression", ["boxes", "scores", "k", "iou", "thr"], ["sel"])]
    return model(nodes, [("boxes", F, ["batch", "n", 4]), ("scores", F, ["batch", "classes", "n"])], ["sel"],
                 inits=[init("k", np.array([per_class], np.int64)), init("iou", np.array([0.5], np.float32)),
                        init("thr", np.array([0.0], np.float32))])


def test_nms_selects_at_most_batch_classes_min_boxes_max_per_class():
    m = _nms_model(3)
    res = onnxsym.infer(m)
    sel = res.shape("sel")[0]
    assert str(res.bounds()[str(sel)]) == "batch*classes*min(3, n)"
    for b, c, n in ((1, 2, 2), (2, 3, 5), (2, 1, 8)):
        boxes = np.zeros((b, n, 4), np.float32)  # disjoint unit boxes: none suppresses another
        boxes[..., 0] = boxes[..., 1] = 2 * np.arange(n)[None, :]
        boxes[..., 2:] = boxes[..., :2] + 1
        scores = np.random.rand(b, c, n).astype(np.float32) + 0.1
        real = run_ort(m, {"boxes": boxes, "scores": scores})["sel"].shape[0]
        assert real == _bound_at(res, sel, {"batch": b, "classes": c, "n": n})  # reached


def test_topk_of_a_data_k_and_a_slice_to_a_data_count():
    """k read from the data: TopK's output is at most the axis; a Slice of x to NonZero's count
    is min(seq, count): where fewer than seq survive it is the count, where more, seq."""
    nodes = [N("TopK", ["x", "k"], ["v", "i"], axis=1),
             N("NonZero", ["m"], ["nz"]), N("Shape", ["nz"], ["s"]), N("Slice", ["s", "one", "two"], ["cnt"]),
             N("Slice", ["x", "zero", "cnt", "one"], ["y"])]
    m = model(nodes, [("x", F, ["batch", "seq"]), ("k", I64, [1]), ("m", F, ["len"])], ["v", "y"],
              inits=[init("zero", np.array([0], np.int64)), init("one", np.array([1], np.int64)),
                     init("two", np.array([2], np.int64))])
    res = onnxsym.infer(m)
    kdim = res.shape("v")[1]
    assert str(res.bounds()[str(kdim)]) == "seq"
    ydim = res.shape("y")[1]
    assert str(ydim).startswith("min(") and "seq" in str(ydim)  # never the count alone
    cases = []
    for b, s, k, ln, nonzero in ((2, 4, 3, 6, 2), (1, 3, 1, 9, 7), (3, 5, 5, 2, 0)):
        mask = np.zeros(ln, np.float32)
        mask[:nonzero] = 1
        feeds = {"x": np.random.rand(b, s).astype(np.float32), "k": np.array([k], np.int64), "m": mask}
        cases.append(({"batch": b, "seq": s, "len": ln}, feeds))
        real = run_ort(m, feeds)
        assert real["v"].shape[1] <= _bound_at(res, kdim, {"batch": b, "seq": s, "len": ln})
        assert real["y"].shape[1] == min(s, nonzero)
    check(m, cases, fresh_ok=ANY)


def test_topk_of_a_k_float_math_made_unknown_is_at_most_the_axis():
    """k = int(floor(n * 0.7)) in float32 (0.7 is below 7/10 there: floor is not followed, see
    floatops.Near; n * 0.3 now is): the Cast's element is a fresh symbol of the whole int64 range
    (the algebra does not follow the product), and TopK, which needs k <= the axis to run, gives
    it that bound. Inside an If branch, which may not run, it gives none."""
    nodes = [N("Shape", ["x"], ["s"]), N("Slice", ["s", "one", "two"], ["n"]), N("Cast", ["n"], ["nf"], to=F),
             N("Mul", ["nf", "c"], ["kf"]), N("Floor", ["kf"], ["kfl"]), N("Cast", ["kfl"], ["k"], to=I64),
             N("TopK", ["x", "k"], ["v", "i"], axis=1)]
    inits = [init("one", np.array([1], np.int64)), init("two", np.array([2], np.int64)),
             init("c", np.array([0.7], np.float32))]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["v"], inits=inits)
    cases = [({"batch": b, "seq": s}, {"x": np.random.rand(b, s).astype(np.float32)}) for b, s in ((1, 7), (2, 20), (3, 34))]
    res = check(m, cases, fresh_ok=ANY)
    kdim = res.shape("v")[1]
    assert str(kdim) in res.fresh and str(res.bounds()[str(kdim)]) == "seq"
    for binding, feeds in cases:
        real = run_ort(m, feeds)["v"].shape[1]
        assert 0 < real <= _bound_at(res, kdim, binding)
    assert any("at most seq" in line for line in symbol_lines(res))

    branch = helper.make_graph([N("TopK", ["x", "k"], ["bv", "bi"], axis=1)], "then", [],
                               [helper.make_tensor_value_info("bv", F, None)])
    other = helper.make_graph([N("Identity", ["x"], ["ov"])], "else", [], [helper.make_tensor_value_info("ov", F, None)])
    guarded = model(nodes[:-1] + [N("If", ["cond"], ["w"], then_branch=branch, else_branch=other)],
                    [("x", F, ["batch", "seq"]), ("cond", 9, [])], ["w"], inits=inits)
    res = onnxsym.infer(guarded)
    k = res.values["k"].value[0]
    assert str(k) in res.fresh and str(k) not in res.bounds()


def test_unique_and_compress_are_bounded():
    nodes = [N("Unique", ["x"], ["u", "idx", "inv", "cnt"]), N("Compress", ["x", "c"], ["y"], axis=1)]
    m = model(nodes, [("x", F, ["batch", "seq"]), ("c", 9, ["len"])], ["u", "y"])
    res = onnxsym.infer(m)
    assert str(res.bounds()[str(res.shape("u")[0])]) == "batch*seq"
    assert str(res.bounds()[str(res.shape("y")[1])]) == "min(len, seq)"
    for b, s, ln in ((2, 3, 2), (1, 4, 6)):
        x = np.arange(b * s, dtype=np.float32).reshape(b, s)
        c = np.ones(ln, bool)
        real = run_ort(m, {"x": x, "c": c})
        binding = {"batch": b, "seq": s, "len": ln}
        assert real["u"].shape[0] == _bound_at(res, res.shape("u")[0], binding)  # all distinct: reached
        assert real["y"].shape[1] == _bound_at(res, res.shape("y")[1], binding)


def test_cost_worst_case_puts_each_count_at_its_bound():
    """The indices of NonZero, as floats: memory grows with the count; the worst case is the
    memory at count = batch*seq, at least the memory of any run, reached on all-ones data."""
    nodes = [N("NonZero", ["x"], ["nz"]), N("Transpose", ["nz"], ["t"]), N("Cast", ["t"], ["f"], to=F)]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["f"])
    res = onnxsym.infer(m)
    cost = res.cost()
    assert cost.data_dependent
    worst = cost.worst_memory
    assert worst is not None and not any(s.name in res.fresh for s in dims.free_symbols(worst))
    n = res.shape("nz")[1]
    for b, s, density in ((2, 3, 0.4), (3, 5, 1.0)):
        x = (np.random.rand(b, s) < density).astype(np.float32)
        real = run_ort(m, {"x": x})["f"].shape[0]
        binding = {"batch": b, "seq": s}
        with res.env:
            at_real = dims.evaluate(cost.memory, {**binding, str(n): real})
            w = dims.evaluate(worst, binding)
        assert at_real <= w and (density < 1 or at_real == w)
    from onnxsym.cost.report import text_lines
    assert any(line.strip().startswith("worst case") for line in text_lines("m", cost))


def test_no_worst_case_where_a_count_has_no_bound():
    """Reshape to a target read from the data: a fresh dim of no bound; cost states no worst case."""
    nodes = [N("Reshape", ["x", "shape"], ["y"]), N("Relu", ["y"], ["z"])]
    m = model(nodes, [("x", F, ["n"]), ("shape", I64, [2])], ["z"])
    cost = onnxsym.infer(m).cost()
    assert cost.data_dependent and cost.worst_memory is None
