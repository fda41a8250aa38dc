"""Builders for com.microsoft (onnxruntime contrib) graphs and their check against
onnxruntime's CPU kernels (with chosen feeds where values matter: lengths, offsets)."""

import numpy as np
from onnx import TensorProto, helper

from helpers import build

MS = "com.microsoft"
F = TensorProto.FLOAT
I32 = TensorProto.INT32
I64 = TensorProto.INT64
U8 = TensorProto.UINT8


def ms_node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, domain=MS, **attrs)


def build_ms(nodes, inputs, outputs, inits=(), opset=17, typed=None):
    """helpers.build with the com.microsoft opset imported too; ``typed`` gives an element
    type to outputs whose type onnxruntime does not infer (shapes stay unset)."""
    m = build(nodes, inputs, outputs, inits, opset)
    m.opset_import.append(helper.make_opsetid(MS, 1))
    for o in m.graph.output:
        if typed and o.name in typed:
            o.type.tensor_type.elem_type = typed[o.name]
    return m


def feeds_with(inputs, binding, fixed=None, seed=0):
    """Random feeds for ``inputs`` at ``binding``; ``fixed`` maps names to functions of the binding."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, et, shape in inputs:
        if fixed and name in fixed:
            out[name] = fixed[name](binding)
            continue
        concrete = [binding[d] if isinstance(d, str) else d for d in shape]
        np_t = helper.tensor_dtype_to_np_dtype(et)
        if et == F:
            out[name] = rng.standard_normal(concrete).astype(np_t)
        else:
            out[name] = rng.integers(0, 3, concrete).astype(np_t)
    return out


def check_feeds(model, inputs, assignments, fixed=None, fresh_ok=()):
    """Like helpers.check, with chosen feeds for inputs whose values matter (lengths,
    offsets, position ids). Every dim must be resolved except the outputs named in
    ``fresh_ok``, whose fresh dims are skipped."""
    import onnxruntime as ort

    import onnxsym
    from onnxsym import dims

    res = onnxsym.infer(model)
    outs = [o.name for o in model.graph.output]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for binding in assignments:
        real = sess.run(outs, feeds_with(inputs, binding, fixed))
        for name, arr in zip(outs, real):
            shape = res.shape(name)
            assert shape is not None and len(shape) == arr.ndim, f"{name}: inferred {shape}, real {arr.shape}"
            for axis, (d, n) in enumerate(zip(shape, arr.shape)):
                if any(s.name in res.fresh for s in dims.free_symbols(d)):
                    assert name in fresh_ok, f"{name}[{axis}] is unresolved: {d}"
                    continue
                got = dims.evaluate(d, binding)
                assert got == n, f"{name}[{axis}] at {binding}: inferred {d} -> {got}, real {arr.shape}"
    return res
