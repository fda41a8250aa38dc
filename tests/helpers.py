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
