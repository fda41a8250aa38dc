"""RotaryEmbedding (the standard op and com.microsoft's): Y has X's shape, and the domain is
where onnxruntime runs it. onnxruntime's transformer optimizer and onnxscript's ort_fusions
write position_ids of (1, seq), which run at batch 1 only: the domain said every batch."""

import itertools

import numpy as np
import pytest
from helpers import I64, MS, F, init, model, ms_node
from onnx import helper

import onnxsym


def _ms(pos_shape, rows=16):
    """com.microsoft RotaryEmbedding on X (b, s, 16), 2 heads, caches of ``rows`` rows."""
    node = ms_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], num_heads=2)
    caches = [init(n, np.zeros((rows, 4), np.float32)) for n in ("cos", "sin")]
    return model([node], [("x", F, ["b", "s", 16]), ("pos", I64, pos_shape)], ["y"], caches, opsets=[(MS, 1)])


def _standard(pos_shape, rows=16):
    """The standard op (opset 23) on X (b, 2, s, 8): with position_ids of ``pos_shape`` and
    caches of ``rows`` rows, or (``pos_shape`` None) with caches (cb, cs, 4) as inputs."""
    if pos_shape is None:
        node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"])
        inputs = [("x", F, ["b", 2, "s", 8]), ("cos", F, ["cb", "cs", 4]), ("sin", F, ["cb", "cs", 4])]
        return model([node], inputs, ["y"], opset=23, ir=10)
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"])
    caches = [init(n, np.zeros((rows, 4), np.float32)) for n in ("cos", "sin")]
    return model([node], [("x", F, ["b", 2, "s", 8]), ("pos", I64, pos_shape)], ["y"], caches, opset=23, ir=10)


def _feeds(m, sizes):
    out = {}
    for i in m.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in i.type.tensor_type.shape.dim]
        out[i.name] = np.zeros(shape, np.int64 if i.type.tensor_type.elem_type == I64 else np.float32)
    return out


def _agrees_with_onnxruntime(m, grid):
    """At every size of ``grid``, onnxruntime runs exactly where the domain holds, with the
    inferred shape of Y."""
    import onnxruntime as ort

    res = onnxsym.infer(m)
    domain = res.domain()
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = sorted(grid)
    for values in itertools.product(*(grid[n] for n in names)):
        sizes = dict(zip(names, values))
        try:
            shape = sess.run(None, _feeds(m, sizes))[0].shape
        except Exception:
            shape = None
        inside = domain.violated(sizes) is None
        assert (shape is not None) == inside, (sizes, shape, [c.text for c in domain.conditions])
        if inside:
            assert shape == tuple(onnxsym.dims.evaluate(d, sizes) for d in res.shape("y")), sizes
    return domain


def test_position_ids_of_one_row_run_at_batch_1_only():
    domain = _agrees_with_onnxruntime(_ms([1, "s"]), {"b": (1, 2, 3), "s": (1, 3, 16, 17)})
    assert any(c.text == "b == 1" for c in domain.conditions), [c.text for c in domain.conditions]


@pytest.mark.parametrize("pos", [["b", "s"], [1], ["b", 1], ["n"], ["p", "q"]])
def test_com_microsoft_position_ids(pos):
    """(b, s) runs at every batch; one position too; (b, 1) needs s == 1; a vector of n
    positions needs n == 1; (p, q) needs p == b and q == s. Always s <= 16 rows."""
    grid = {"b": (1, 2), "s": (1, 2, 16, 17)}
    grid.update({d: (1, 2) for d in pos if d in ("n", "p", "q")})
    if "q" in pos:
        grid["q"] = (1, 2, 17)
    _agrees_with_onnxruntime(_ms(pos), grid)


@pytest.mark.parametrize("pos", [["b", "s"], [1, "s"], ["p", "q"]])
def test_standard_position_ids(pos):
    grid = {"b": (1, 2), "s": (1, 3, 16, 17)}
    grid.update({d: (1, 2, 3) for d in pos if d in ("p", "q")})
    _agrees_with_onnxruntime(_standard(pos), grid)


def test_standard_caches_without_position_ids_are_batch_by_seq():
    _agrees_with_onnxruntime(_standard(None), {"b": (1, 2), "s": (1, 3), "cb": (1, 2), "cs": (1, 3)})
