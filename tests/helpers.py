"""Small builders shared by the tests."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=()):
    """A model from (name, elem_type, shape) triples; shape entries are ints or dim_param strings."""
    def vi(name, et, shape):
        return helper.make_tensor_value_info(name, et, shape)

    g = helper.make_graph(nodes, "g", [vi(*i) for i in inputs], [vi(*o) for o in outputs],
                          initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 8
    return m


F = TensorProto.FLOAT
I64 = TensorProto.INT64


B2 = [{"batch": 2, "seq": 5}, {"batch": 3, "seq": 8}]
NP = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_,
      TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8, TensorProto.INT32: np.int32}


def build(nodes, inputs, outputs, inits=(), opset=17):
    """A model whose outputs carry no type or shape: what is checked is inferred."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_empty_tensor_value_info(o) for o in outputs], initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def check(m, inputs, assignments=B2, values=(), ranges=None, reference=False):
    """Infer ``m`` (with the symbol ``ranges`` given, if any), run it in onnxruntime at
    each assignment, compare every output dim (and the inferred elements of the
    outputs named in ``values``). ``reference=True`` runs onnx's reference evaluator
    instead, for what onnxruntime does not implement."""
    import onnxruntime as ort

    import onnxsym
    from onnxsym import dims

    res = onnxsym.infer(m, ranges=ranges)
    outs = [o.name for o in m.graph.output]
    if reference:
        from onnx.reference import ReferenceEvaluator
        sess = ReferenceEvaluator(m)
    else:
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for binding in assignments:
        feeds = {}
        for name, et, shape in inputs:
            concrete = [binding[d] if isinstance(d, str) else d for d in shape]
            if et == TensorProto.FLOAT:
                feeds[name] = rng.standard_normal(concrete).astype(np.float32)
            elif et == TensorProto.BOOL:
                feeds[name] = rng.integers(0, 2, concrete).astype(np.bool_)
            else:
                feeds[name] = rng.integers(1, 5, concrete).astype(NP[et])
        real = sess.run(outs, feeds)
        for name, arr in zip(outs, real):
            shape = res.shape(name)
            assert shape is not None, f"{name}: rank unknown"
            got = tuple(dims.evaluate(d, binding) for d in shape)
            assert got == arr.shape, f"{name} at {binding}: inferred {shape} -> {got}, real {arr.shape}"
            if name in values:
                v = res.values[name].value
                assert v is not None, f"{name}: value unknown"
                assert tuple(dims.evaluate(e, binding) for e in v) == tuple(arr.reshape(-1).tolist()), name
    return res


def no_fresh(res):
    assert not res.unresolved(), res.unresolved()


def _compare(name, inferred, real, binding, fresh, unknown_ok=False):
    """One output of one run: dims over the model's symbols must be exact, a fresh
    dim must lie in its symbol's range; an unknown rank only if ``unknown_ok``."""
    from onnxsym import Optional_, Sequence, Tensor, dims

    while isinstance(inferred, Optional_):
        inferred = inferred.elem
    if isinstance(inferred, Sequence):
        assert isinstance(real, list), f"{name}: a sequence was inferred, the runtime gave {type(real)}"
        n = inferred.count
        if n is not None and not any(s.name in fresh for s in dims.free_symbols(n)):
            assert dims.evaluate(n, binding) == len(real), f"{name}: {n} items inferred, {len(real)} real"
        if inferred.items is not None:
            assert len(inferred.items) == len(real), f"{name}: {len(inferred.items)} items inferred, {len(real)} real"
            for k, (t, arr) in enumerate(zip(inferred.items, real)):
                _compare(f"{name}[{k}]", t, arr, binding, fresh, unknown_ok)
        for k, arr in enumerate(real):
            _compare(f"{name}[item {k}]", inferred.elem, arr, binding, fresh, unknown_ok)
        return
    if unknown_ok and (inferred is None or isinstance(inferred, Tensor) and inferred.shape is None):
        return
    assert isinstance(inferred, Tensor) and inferred.shape is not None, f"{name}: rank unknown"
    assert len(inferred.shape) == arr_rank(real), f"{name}: rank {len(inferred.shape)}, real {np.shape(real)}"
    for d, a in zip(inferred.shape, np.shape(real)):
        if any(s.name in fresh for s in dims.free_symbols(d)):
            lo, hi = dims.range_of(d)  # in the result's ranges (the caller's ``with res.env``)
            assert lo <= a <= hi, f"{name}: {a} is outside the range of {d}"
            continue
        assert dims.evaluate(d, binding) == a, f"{name} at {binding}: inferred {inferred.shape}, real {np.shape(real)}"


def arr_rank(a):
    return len(np.shape(a))


def check_runs(m, cases, resolved=()):
    """Infer ``m``, run it in onnxruntime on each ``(binding, feeds)`` case and compare
    every output (sequences item by item). The outputs named in ``resolved`` must have
    no fresh dim. The annotated model must pass the full checker and compute the same."""
    import onnxruntime as ort

    import onnxsym

    res = onnxsym.infer(m)
    outs = [o.name for o in m.graph.output]
    annotated = onnxsym.annotate(m)
    onnx.checker.check_model(annotated, full_check=True)
    sessions = [ort.InferenceSession(x.SerializeToString(), providers=["CPUExecutionProvider"]) for x in (m, annotated)]
    for binding, feeds in cases:
        real, again = (s.run(outs, feeds) for s in sessions)
        for name, arr, arr2 in zip(outs, real, again):
            with res.env:
                _compare(name, res.values[name], arr, binding, res.fresh)
            assert all(np.array_equal(a, b) for a, b in zip(_flat(arr), _flat(arr2))), f"{name}: annotated model differs"
    for name in resolved:
        assert not [u for u in res.unresolved() if u.value == name], f"{name}: {res.unresolved()}"
    return res


def _flat(x):
    return x if isinstance(x, list) else [x]
