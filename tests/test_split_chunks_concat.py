"""ConcatFromSequence of SplitToSequence's pieces with a scalar split s over an axis of n: the
pieces are s long but the last, which is n mod s where s does not divide n. Where the concat needs
the items to agree on the split axis (concatenating along another axis, or new_axis=1),
onnxruntime runs only where s divides n, n <= s (one piece), or the pieces have no elements (it
skips them), and never with no piece (n = 0). Held to onnxruntime over a grid of sizes: the
domain allows exactly the sizes onnxruntime runs, with the shapes it gives."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import onnxsym
from onnxsym.model.isolated import Child, Refused
from tests.op_verdicts import _matches, _outside

pytest.importorskip("onnxruntime")


def _model(s: int, split_axis: int, axis: int, new_axis: int) -> onnx.ModelProto:
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", "m", "k"])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    nodes = [h.make_node("SplitToSequence", ["x", "s"], ["q"], axis=split_axis),
             h.make_node("ConcatFromSequence", ["q"], ["y"], axis=axis, new_axis=new_axis)]
    g = h.make_graph(nodes, "g", [x], [y], [numpy_helper.from_array(np.array(s, np.int64), "s")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


# (the split along n or m; the concat along the split axis, another, or stacking on a new one)
CASES = [(s, split_axis, axis, new_axis) for s in (2, 3) for split_axis in (0, 1)
         for axis, new_axis in ((0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (-1, 1))]
GRID = [(n, m, k) for n in range(8) for m in (0, 1, 2, 5) for k in (0, 2)]


@pytest.mark.parametrize("s,split_axis,axis,new_axis", CASES)
def test_pieces_of_an_uneven_split_concatenated_as_onnxruntime_does(s, split_axis, axis, new_axis):
    m = _model(s, split_axis, axis, new_axis)
    res = onnxsym.infer(m, allow_zero=True)
    domain, want = res.domain(), res.shape("y")
    bad = []
    runs = refused = 0
    with Child() as child:
        child.load(m.SerializeToString(), {"optimization": "all"})
        for n_, m_, k_ in GRID:
            sizes = {"n": n_, "m": m_, "k": k_}
            try:
                got = child.run({"x": np.zeros((n_, m_, k_), np.float32)}, ["y"])[0]
            except Refused:
                got = None
            outside = _outside(domain, sizes)
            if got is None:
                refused += 1
                if outside is None:
                    bad.append(f"{sizes}: onnxruntime refuses, the domain allows it")
            else:
                runs += 1
                if outside is not None:
                    bad.append(f"{sizes}: onnxruntime runs ({got}), the domain refuses: {outside}")
                elif not _matches(want, got, sizes, res.fresh):
                    bad.append(f"{sizes}: onnxruntime gives {got}, inferred {want}")
    assert not bad, bad[:5]
    assert runs and refused  # (the grid has sizes either way: n = 0 always fails)
    # no fresh symbol in the output: its dims are stated, not left to the data
    assert not any(sym.name in res.fresh for d in want for sym in onnxsym.dims.free_symbols(d)), want


@pytest.mark.parametrize("s", [1, 2, 3])
def test_a_scalar_split_of_an_axis_of_zero_has_no_piece(s):
    """onnxruntime's SplitToSequence of an axis of 0 gives an empty sequence (no piece of s), so a
    ConcatFromSequence of it fails at every size."""
    import onnxruntime as ort

    x = h.make_tensor_value_info("x", T.FLOAT, [0, "m"])
    n = h.make_tensor_value_info("n", T.INT64, None)
    init = [numpy_helper.from_array(np.array(s, np.int64), "s")]
    nodes = [h.make_node("SplitToSequence", ["x", "s"], ["q"], axis=0), h.make_node("SequenceLength", ["q"], ["n"])]
    m = h.make_model(h.make_graph(nodes, "g", [x], [n], init), opset_imports=[h.make_opsetid("", 17)])
    got = ort.InferenceSession(m.SerializeToString()).run(None, {"x": np.zeros((0, 3), np.float32)})[0]
    assert onnxsym.infer(m).values["n"].value == (int(got),)
    cat = _model(s, 0, 1, 0)
    cat.graph.input[0].type.tensor_type.shape.dim[0].ClearField("dim_param")
    cat.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 0
    with pytest.raises(onnxsym.errors.ShapeContradiction):
        onnxsym.infer(cat, allow_zero=True)
    with Child() as child:
        child.load(cat.SerializeToString(), {"optimization": "all"})
        with pytest.raises(Refused):
            child.run({"x": np.zeros((0, 2, 2), np.float32)}, ["y"])
