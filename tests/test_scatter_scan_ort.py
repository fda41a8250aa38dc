"""The indexed writes and reads, ReverseSequence, NonMaxSuppression, TensorScatter and Scan as
onnxruntime checks them (issue 34): at each size the domain's verdict is onnxruntime's (it runs
or refuses), and where it runs, the inferred shapes are the ones it computes. Index inputs are
constants, so their values bound the data's dims."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym
from tests.domain_boundary import expected, run
from tests.helpers import init, model

F = T.FLOAT


def _agrees(m, b, **infer_args):
    """The domain's verdict at ``b`` is onnxruntime's; where it runs, so do the shapes. Returns
    onnxruntime's error (None where it runs)."""
    res = onnxsym.infer(m, **infer_args)
    why = res.domain().violated(b)
    err, out = run(m, res, b)
    assert (why is None) == (err is None), (b, err, why)
    if err is None:
        exp = expected(res, b)
        assert {k: out[k] for k in exp} == exp
    return err


def _refused_everywhere(m, feeds):
    """onnxsym refuses the model; onnxruntime refuses it at the given sizes."""
    from tests.conformance import _run

    with pytest.raises(Exception):
        onnxsym.infer(m)
    assert _run(m, feeds)[0] is not None


# --------------------------------------------------------------------- GatherND, ScatterND

@pytest.mark.parametrize("n, k", [(1, 3), (2, 2), (2, 3), (5, 4)])
def test_gather_nd_constant_index_tuples_bound_each_axis(n, k):
    """Tuples (1, 0) and (0, 2): data needs 2 rows and 3 columns."""
    m = model([h.make_node("GatherND", ["x", "i"], ["y"])], [("x", F, ["n", "k"])], ["y"],
              inits=[init("i", np.array([[1, 0], [0, 2]], np.int64))])
    _agrees(m, {"n": n, "k": k})


@pytest.mark.parametrize("n, k", [(1, 2), (2, 1), (2, 2), (3, 3)])
def test_scatter_nd_constant_index_tuples_bound_each_axis(n, k):
    m = model([h.make_node("ScatterND", ["x", "i", "u"], ["y"])], [("x", F, ["n", "k"]), ("u", F, [2])], ["y"],
              inits=[init("i", np.array([[0, 0], [1, 1]], np.int64))])
    _agrees(m, {"n": n, "k": k})


@pytest.mark.parametrize("a, b", [(1, 2), (2, 2), (3, 2), (2, 4), (3, 3)])
def test_gather_nd_data_batches_divide_the_indices(a, b):
    """batch_dims 1: onnxruntime needs the data's batch count to divide the indices' (the spec
    says equal): data (a, 3, 4) with indices (b, 1, 1) runs where a divides b."""
    m = model([h.make_node("GatherND", ["x", "i"], ["y"], batch_dims=1)], [("x", F, ["a", 3, 4])], ["y"],
              inits=[init("i", np.zeros((b, 1, 1), np.int64))], opset=13)
    _agrees(m, {"a": a})


# --------------------------------------------------------------------- Scatter, ScatterElements

@pytest.mark.parametrize("op, opset", [("ScatterElements", 18), ("Scatter", 10)])
@pytest.mark.parametrize("a, c", [(1, 2), (2, 2), (1, 3), (1, 1)])
def test_scatter_elements_updates_have_the_indices_shape(op, opset, a, c):
    """indices (1, 2): updates must be (1, 2), on the scattered axis too."""
    m = model([h.make_node(op, ["x", "i", "u"], ["y"], axis=1)], [("x", F, [3, 3]), ("u", F, ["a", "c"])], ["y"],
              inits=[init("i", np.array([[0, 2]], np.int64))], opset=opset)
    _agrees(m, {"a": a, "c": c})


def test_scatter_elements_updates_of_another_rank_are_refused():
    m = model([h.make_node("ScatterElements", ["x", "i", "u"], ["y"])], [("x", F, [3, 3]), ("u", F, [2])], ["y"],
              inits=[init("i", np.array([[0, 2]], np.int64))], opset=18)
    _refused_everywhere(m, {"x": np.ones((3, 3), np.float32), "u": np.ones(2, np.float32)})


# --------------------------------------------------------------------- ReverseSequence

@pytest.mark.parametrize("t", [1, 2, 3, 4])
def test_reverse_sequence_constant_lengths_fit_the_time_axis(t):
    """Lengths (3, 0): the time axis needs 3 steps (0 is a valid length)."""
    m = model([h.make_node("ReverseSequence", ["x", "l"], ["y"], batch_axis=1, time_axis=0)],
              [("x", F, ["t", 2])], ["y"], inits=[init("l", np.array([3, 0], np.int64))])
    _agrees(m, {"t": t})


def test_reverse_sequence_negative_constant_length_is_refused():
    m = model([h.make_node("ReverseSequence", ["x", "l"], ["y"], batch_axis=1, time_axis=0)],
              [("x", F, [4, 2])], ["y"], inits=[init("l", np.array([2, -1], np.int64))])
    _refused_everywhere(m, {"x": np.ones((4, 2), np.float32)})


# --------------------------------------------------------------------- NonMaxSuppression

@pytest.mark.parametrize("c", [3, 4, 5])
def test_non_max_suppression_boxes_have_four_coordinates(c):
    m = model([h.make_node("NonMaxSuppression", ["b", "s"], ["y"])], [("b", F, [1, 3, "c"]), ("s", F, [1, 1, 3])],
              ["y"], opset=11)
    _agrees(m, {"c": c})


def test_non_max_suppression_boxes_of_rank_2_are_refused():
    m = model([h.make_node("NonMaxSuppression", ["b", "s"], ["y"])], [("b", F, [3, 4]), ("s", F, [1, 1, 3])],
              ["y"], opset=11)
    _refused_everywhere(m, {"b": np.ones((3, 4), np.float32), "s": np.ones((1, 1, 3), np.float32)})


# --------------------------------------------------------------------- TensorScatter

def _tensor_scatter(mode, cache, update, wi=None):
    ins = ["c", "u"] + (["w"] if wi is not None else [])
    inits = [init("w", np.array(wi, np.int64))] if wi is not None else []
    return model([h.make_node("TensorScatter", ins, ["y"], mode=mode)], [("c", F, cache), ("u", F, update)], ["y"],
                 inits=inits, opset=24, ir=10)


@pytest.mark.parametrize("mode, n, s", [("linear", 5, 2), ("linear", 4, 2), ("linear", 6, 3), ("linear", 5, 3),
                                        ("circular", 2, 2), ("circular", 1, 2), ("circular", 3, 1)])
def test_tensor_scatter_write_fits_the_cache(mode, n, s):
    """Write indices (0, 3): a linear write of s steps needs 3 + s of the cache; a circular one
    wraps, needing only s <= the cache."""
    _agrees(_tensor_scatter(mode, [2, "n", 4], [2, "s", 4], [0, 3]), {"n": n, "s": s})


@pytest.mark.parametrize("b, d", [(2, 4), (1, 4), (3, 4), (2, 1), (2, 5)])
def test_tensor_scatter_update_has_the_cache_dims_off_axis(b, d):
    """Without write_indices: update (b, 2, d) into a cache (2, 5, 4); write_indices would need
    one index per batch row."""
    _agrees(_tensor_scatter("linear", [2, 5, 4], ["b", 2, "d"]), {"b": b, "d": d})


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tensor_scatter_one_write_index_per_batch_row(n):
    _agrees(_tensor_scatter("linear", ["n", 5, 4], ["n", 2, 4], [0, 1]), {"n": n})


def test_tensor_scatter_write_indices_of_rank_2_are_refused():
    m = _tensor_scatter("linear", [2, 5, 4], [2, 2, 4], [[0, 1]])
    _refused_everywhere(m, {"c": np.ones((2, 5, 4), np.float32), "u": np.ones((2, 2, 4), np.float32)})


def test_tensor_scatter_negative_write_index_is_refused():
    m = _tensor_scatter("circular", [2, 5, 4], [2, 2, 4], [0, -1])
    _refused_everywhere(m, {"c": np.ones((2, 5, 4), np.float32), "u": np.ones((2, 2, 4), np.float32)})


# --------------------------------------------------------------------- Scan

def _scan(body_nodes, state, xs, opset=16):
    """A Scan of one state and one scan input; the body's state output is ``s2``, its scan
    output ``y`` (the body's value_info left unknown, as onnxruntime's inference fills it)."""
    body = h.make_graph(body_nodes + [h.make_node("Identity", ["s2"], ["y"])], "body",
                        [h.make_tensor_value_info("s", F, None), h.make_tensor_value_info("x", F, None)],
                        [h.make_tensor_value_info("s2", F, None), h.make_tensor_value_info("y", F, None)])
    return model([h.make_node("Scan", ["i", "xs"], ["f", "ys"], body=body, num_scan_inputs=1)],
                 [("i", F, state), ("xs", F, xs)], ["f", "ys"], opset=opset)


@pytest.mark.parametrize("n, k", [(2, 2), (1, 2), (2, 1), (3, 2), (1, 1)])
def test_scan_state_keeps_its_shape(n, k):
    """The state (n) plus each slice (k): onnxruntime feeds the sum back in a buffer of the
    state's shape, so a state of 1 that the Add broadcasts to k is refused (a slice of 1 runs)."""
    _agrees(_scan([h.make_node("Add", ["s", "x"], ["s2"])], ["n"], [3, "k"]), {"n": n, "k": k})


def test_scan_state_that_grows_is_refused():
    """A Concat that grows the state is refused at every size (tried at (2,) and slices (1, 2))."""
    m = _scan([h.make_node("Concat", ["s", "x"], ["s2"], axis=0)], ["n"], [1, 2])
    _refused_everywhere(m, {"i": np.ones(2, np.float32), "xs": np.ones((1, 2), np.float32)})


@pytest.mark.parametrize("b, c", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_scan_8_inputs_have_one_batch(b, c):
    """Scan 8: the state (b, 2) and the scan input (c, 3, 2) share the leading batch axis."""
    body = h.make_graph([h.make_node("Add", ["s", "x"], ["s2"]), h.make_node("Identity", ["s2"], ["y"])], "body",
                        [h.make_tensor_value_info("s", F, None), h.make_tensor_value_info("x", F, None)],
                        [h.make_tensor_value_info("s2", F, None), h.make_tensor_value_info("y", F, None)])
    m = model([h.make_node("Scan", ["", "i", "xs"], ["f", "ys"], body=body, num_scan_inputs=1)],
              [("i", F, ["b", 2]), ("xs", F, ["c", 3, 2])], ["f", "ys"], opset=8)
    _agrees(m, {"b": b, "c": c})


@pytest.mark.parametrize("t", [0, 1])
def test_scan_of_no_step_is_refused(t):
    """onnxruntime 1.32 slices each scan input at step 0 first: a length of 0 is refused."""
    _agrees(_scan([h.make_node("Add", ["s", "x"], ["s2"])], [2], ["t", 2]), {"t": t}, allow_zero=["t"])


@pytest.mark.parametrize("b, t", [(1, 0), (0, 1), (0, 0), (1, 1)])
def test_scan_8_of_no_row_is_refused(b, t):
    """Scan 8: a batch of no row is refused; a row of no step runs (an empty scan output)."""
    body = h.make_graph([h.make_node("Add", ["s", "x"], ["s2"]), h.make_node("Identity", ["s2"], ["y"])], "body",
                        [h.make_tensor_value_info("s", F, None), h.make_tensor_value_info("x", F, None)],
                        [h.make_tensor_value_info("s2", F, None), h.make_tensor_value_info("y", F, None)])
    m = model([h.make_node("Scan", ["", "i", "xs"], ["f", "ys"], body=body, num_scan_inputs=1)],
              [("i", F, ["b", 2]), ("xs", F, ["b", "t", 2])], ["f", "ys"], opset=8)
    _agrees(m, {"b": b, "t": t}, allow_zero=["b", "t"])
