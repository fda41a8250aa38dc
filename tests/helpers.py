"""Small builders shared by the tests."""

import numpy as np
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


def build(nodes, inputs, outputs, inits=(), opset=17):
    """A model whose outputs carry no type or shape: what is checked is inferred."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_empty_tensor_value_info(o) for o in outputs], initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


ML = ("ai.onnx.ml", 3)


def graph_model(nodes, inputs, outputs, opset=17, extra=(), inits=()):
    """A model whose outputs carry no type or shape; inputs are (name, type, shape)."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_empty_tensor_value_info(o) for o in outputs], initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in extra])
    m.ir_version = 10
    return m
