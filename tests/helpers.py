"""The tests' model builder: small ONNX graphs made by hand.

A value is given as a ``(name, element type, shape)`` triple (shape entries ints or
dim_param strings; shape None for a tensor of unknown rank), a ``(name, element type)``
pair (type only), a bare name (no type, no shape: what onnxsym infers for it is what is
checked) or a ready ValueInfoProto (maps, sparse tensors, sequences).
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
I32 = TensorProto.INT32
U8 = TensorProto.UINT8
BOOL = TensorProto.BOOL

MS = "com.microsoft"
ML = ("ai.onnx.ml", 3)


def value_info(v):
    if isinstance(v, str):
        return helper.make_empty_tensor_value_info(v)
    if isinstance(v, tuple) and len(v) == 2:
        return helper.make_tensor_value_info(v[0], v[1], None)
    if isinstance(v, tuple):
        return helper.make_tensor_value_info(*v)
    return v


def graph(nodes, inputs, outputs, inits=(), name="g"):
    """A graph (a subgraph's body too) with the values given as the module says."""
    return helper.make_graph(list(nodes), name, [value_info(i) for i in inputs], [value_info(o) for o in outputs],
                             initializer=list(inits))


def model(nodes, inputs, outputs, inits=(), opset=17, opsets=(), ir=8, functions=(), name="g"):
    """A model of the default domain at ``opset`` plus the ``(domain, version)`` pairs of
    ``opsets``; ``inits`` are TensorProtos (``init``)."""
    m = helper.make_model(graph(nodes, inputs, outputs, inits, name), functions=list(functions),
                          opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = ir
    return m


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def ms_node(op, inputs, outputs, **attrs):
    """A node of onnxruntime's com.microsoft contrib domain."""
    return helper.make_node(op, inputs, outputs, domain=MS, **attrs)
