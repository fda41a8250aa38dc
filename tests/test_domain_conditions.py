"""Conditions an op's rule records for the domain (issue 21, item 8: each was "every size"
before): divisibility for a Reshape's -1 and SpaceToDepth/DepthToSpace, dims >= 0 for
ConstantOfShape and a negative Pad, a reflect Pad narrower than its dim, TopK's k <= n, a
Squeezed axis == 1. Each checked at its
boundary against onnxruntime (sizes just inside run with the inferred shapes, just outside
fail at that node), and ``check --require n=1:8`` refuses each model."""

import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym
from onnxsym.cli import main
from tests.domain_boundary import check_all, run
from tests.helpers import model

F = T.FLOAT


def _ints(name, vals):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, T.INT64, [len(vals)], vals))


def _scalar(name, v):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, T.INT64, [], [v]))


CASES = {
    "reshape_2_minus1": (lambda: model([_ints("t", [2, -1]), h.make_node("Reshape", ["x", "t"], ["y"])],
                                       [("x", F, ["n"])], ["y"]), ["n % 2 == 0"], "n = 1"),
    "space_to_depth_2": (lambda: model([h.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
                                       [("x", F, [1, 3, "n", 4])], ["y"]), ["n % 2 == 0"], "n = 1"),
    "depth_to_space_2": (lambda: model([h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)],
                                       [("x", F, [1, "n", 2, 2])], ["y"]), ["n % 4 == 0"], "n = 1"),
    "constant_of_shape_n_minus_5": (lambda: model([h.make_node("Shape", ["x"], ["s"]), _ints("five", [5]),
                                                   h.make_node("Sub", ["s", "five"], ["d"]),
                                                   h.make_node("ConstantOfShape", ["d"], ["y"])],
                                                  [("x", F, ["n"])], ["y"]), ["n >= 5"], "n = 1"),
    "pad_minus_3": (lambda: model([_ints("p", [-3, 0]), h.make_node("Pad", ["x", "p"], ["y"])],
                                  [("x", F, ["n"])], ["y"]), ["n >= 3"], "n = 1"),
    "pad_reflect_2": (lambda: model([_ints("p", [2, 2]), h.make_node("Pad", ["x", "p"], ["y"], mode="reflect")],
                                    [("x", F, ["n"])], ["y"]), ["n >= 3"], "n = 1"),
    "topk_5": (lambda: model([_ints("k", [5]), h.make_node("TopK", ["x", "k"], ["v", "i"])],
                             [("x", F, ["n"])], ["v", "i"]), ["n >= 5"], "n = 1"),
    "squeeze_axis_0": (lambda: model([_ints("a", [0]), h.make_node("Squeeze", ["x", "a"], ["y"])],
                                     [("x", F, ["n", 2])], ["y"]), ["n == 1"], "n = 8"),
    # found by attacking (issue 21, follow-up): each was "every size" before
    "expand_one_to_n_minus_5": (lambda: model([h.make_node("Shape", ["x"], ["s"]), _ints("five", [5]),
                                               h.make_node("Sub", ["s", "five"], ["t"]),
                                               h.make_node("Expand", ["w", "t"], ["y"])],
                                              [("x", F, ["n"]), ("w", F, [1])], ["y"]), ["n >= 5"], "n = 1"),
    "pad_edge_cropped_to_nothing": (lambda: model([_ints("p", [-1, 2]), h.make_node("Pad", ["x", "p"], ["y"], mode="edge")],
                                                  [("x", F, ["n"])], ["y"]), ["n >= 2"], "n = 1"),
    "pad_reflect_after_cropping": (lambda: model([_ints("p", [-2, 0, 2, 0]),
                                                  h.make_node("Pad", ["x", "p"], ["y"], mode="reflect")],
                                                 [("x", F, ["n", 2])], ["y"]), ["n >= 5"], "n = 1"),
    "resize_sizes_from_the_shape": (lambda: model([h.make_node("Shape", ["x"], ["s"]), _ints("k", [0, 0, 5, 0]),
                                                   h.make_node("Sub", ["s", "k"], ["sz"]),
                                                   h.make_node("Resize", ["x", "", "", "sz"], ["y"])],
                                                  [("x", F, [1, 1, "n", 2])], ["y"]), ["n >= 6"], "n = 1"),
    "resize_linear_sizes_keep_the_batch": (lambda: model([_ints("sz", [2, 1, 8, 8]),
                                                          h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear")],
                                                         [("x", F, ["n", 1, 4, 4])], ["y"]), ["n == 2"], "n = 1"),
}


def _named(m):
    """Every node named (onnxruntime's error names the node that fails)."""
    for i, n in enumerate(m.graph.node):
        n.name = n.name or f"{n.op_type}_{i}"
    return m


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_condition_holds_at_its_boundary_in_onnxruntime(name):
    make, texts, _ = CASES[name]
    m = _named(make())
    result, domain, outcomes = check_all(m, {"n": 4}, expect=texts)
    assert all(o[2].startswith("fails at") for o in outcomes), outcomes


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_require_refuses_sizes_onnxruntime_refuses(name, tmp_path):
    make, texts, at = CASES[name]
    path = str(tmp_path / f"{name}.onnx")
    onnx.save(make(), path)
    r = CliRunner().invoke(main, ["check", path, "--require", "n=1:8"])
    assert r.exit_code == 1 and f"the domain does not contain n=1:8: {texts[0]}" in r.output, r.output
    assert f"fails at {at}" in r.output, r.output


def test_slice_and_range_lengths_clamp_so_they_need_nothing():
    """A Slice past the end and a Range whose limit is below its start give 0 elements in
    onnxruntime, not an error: no condition, and every size runs."""
    import onnxsym

    m = model([_ints("st", [5]), _ints("en", [100]), h.make_node("Slice", ["x", "st", "en"], ["y"]),
               h.make_node("Shape", ["x"], ["s"]), _ints("z", [0]), h.make_node("Squeeze", ["s", "z"], ["n0"]),
               _scalar("five", 5), _scalar("one", 1), h.make_node("Range", ["five", "n0", "one"], ["r"])],
              [("x", F, ["n"])], ["y", "r"])
    res = onnxsym.infer(m)
    assert res.domain().conditions == ()
    for n in (1, 4, 5, 6, 9):
        err, shapes = run(m, res, {"n": n})
        assert err is None and shapes == {"y": (max(0, n - 5),), "r": (max(0, n - 5),)}, (n, err, shapes)


def test_a_reshape_minus1_needs_the_other_elements_nonzero():
    """onnxruntime infers a -1 only where the other elements' product is not 0 (``size != 0`` in
    its ReshapeHelper): ``[n, 4]`` to ``[0, -1]`` copies n and fails at n = 0. Fuzzer seeds 1633
    and 2681 crashed the domain there (``0 // (2*batch)`` evaluated at batch = 0)."""
    m = _named(model([_ints("t", [0, -1]), h.make_node("Reshape", ["x", "t"], ["y"])], [("x", F, ["n", 4])], ["y"]))
    _, _, outcomes = check_all(m, {"n": 4}, expect=["n >= 1"], allow_zero=True)
    assert all(o[2].startswith("fails at") for o in outcomes), outcomes


def test_a_zero_size_reshape_to_minus1_after_a_bind_of_0():
    """Fuzzer seed 2681: x ``[1, 3, h, w]`` reshaped to ``[h - 2, 0, 0]`` (a -1 at h = 1, a copy of
    3 at h = 2); with w bound to 0 there are 0 elements, and the -1 (``0 // (3*h)``) needs h >= 1.
    annotate no longer divides by 0, and the domain holds at its boundary in onnxruntime."""
    import numpy as np

    m = _named(model([h.make_node("Shape", ["x"], ["s"]), _ints("i0", [0]), _ints("two", [2]),
                      h.make_node("Gather", ["s", "i0"], ["g"], axis=0), h.make_node("Sub", ["g", "two"], ["d"]),
                      h.make_node("Concat", ["d", "i0", "i0"], ["t"], axis=0), h.make_node("Reshape", ["x", "t"], ["y"])],
                     [("x", F, [1, 3, "h", "w"])], ["y"]))
    result, domain, _ = check_all(m, {"h": 4, "w": 0}, bind={"w": 0}, allow_zero=True)
    assert domain.violated({"h": 0, "w": 0}) is not None
    written = onnxsym.annotate(m, bind={"w": 0}, allow_zero=True)
    from oracle import check_written_runs
    check_written_runs(m, written, [{"h": v, "w": 0} for v in (1, 2, 3, 5)],
                       lambda b: {"x": np.ones([1, 3, b["h"], b["w"]], np.float32)})
