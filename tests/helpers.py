"""Small builders shared by the tests."""

import onnx
from onnx import TensorProto, helper


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
