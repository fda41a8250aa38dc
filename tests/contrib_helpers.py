"""Builders for com.microsoft (onnxruntime contrib) graphs."""

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
