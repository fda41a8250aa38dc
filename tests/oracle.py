"""Compare inferred shapes with a runtime's for explicit feeds. Dims that hold a
fresh (data-dependent) symbol must lie in that symbol's range; every other dim
must evaluate to the runtime's."""

from typing import NamedTuple

import numpy as np
from onnx import helper

import onnxsym
from onnxsym import dims

ML = ("ai.onnx.ml", 3)


def graph_model(nodes, inputs, outputs, opset=17, extra=(), inits=()):
    """A model whose outputs carry no type or shape; inputs are (name, type, shape)."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_empty_tensor_value_info(o) for o in outputs], initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in extra])
    m.ir_version = 10
    return m


def run_ort(m, feeds):
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def run_reference(m, feeds):
    from onnx.reference import ReferenceEvaluator

    names = [o.name for o in m.graph.output]
    return dict(zip(names, ReferenceEvaluator(m).run(None, feeds)))


def compare(m, cases, run=run_ort):
    """``cases``: (binding of the input symbols, feeds) pairs. Returns the inference result."""
    res = onnxsym.infer(m)
    for binding, feeds in cases:
        for name, arr in run(m, feeds).items():
            if not isinstance(arr, np.ndarray):
                continue
            shape = res.shape(name)
            assert shape is not None, f"{name}: rank unknown"
            assert len(shape) == arr.ndim, f"{name}: inferred {shape}, real {arr.shape}"
            for axis, (d, a) in enumerate(zip(shape, arr.shape)):
                fresh = [s for s in dims.free_symbols(d) if s.name in res.fresh]
                if fresh:
                    with res.env:  # the result's ranges
                        lo, hi = dims.range_of(d)
                    assert lo <= a <= hi, f"{name}[{axis}] at {binding}: {a} outside [{lo}, {hi}] of {d}"
                else:
                    got = dims.evaluate(d, binding)
                    assert got == a, f"{name}[{axis}] at {binding}: inferred {d} -> {got}, real {a}"
            if res.values[name].dtype:
                assert res.values[name].dtype == helper.np_dtype_to_tensor_dtype(arr.dtype) or arr.dtype == object, \
                    f"{name}: dtype {res.values[name].dtype}, real {arr.dtype}"
    return res


class Fresh(NamedTuple):
    """A fresh symbol with its range in the result's environment."""
    name: str
    lo: int
    hi: int


def fresh_of(res, name, axis):
    """The fresh symbol that is dim ``axis`` of value ``name`` (a :class:`Fresh`), and its provenance."""
    d = res.shape(name)[axis]
    s = dims.as_sym(d)
    assert s is not None and s.name in res.fresh, f"{name}[{axis}] = {d} is not a fresh symbol"
    return Fresh(s.name, *res.symbol_ranges()[s.name]), res.fresh[s.name]
