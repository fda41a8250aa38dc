"""What every generator of the corpus uses (make_real.py and the make_*.py it runs): a
manifest row, and a model's large constants replaced by zeros of their shape. Nothing here
imports a generator, so the generators import this and make_real imports them: no circle."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper


def entry(name, group, source, inputs, sizes, feeds=None, commit=True, note=""):
    """One manifest row. ``inputs``: graph input -> its dims as made (ints and dim_params);
    ``sizes``: two or more assignments of the dim_params that onnxruntime runs;
    ``feeds``: per input, how to fill it when random floats / ones do not fit."""
    return {"name": name, "file": ("fetched/" if not commit else "") + name + ".onnx", "group": group,
            "source": source, "inputs": inputs, "sizes": sizes, "feeds": feeds or {}, "commit": commit,
            "note": note}


FLOATS = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE)
QUANTIZED = FLOATS + (onnx.TensorProto.INT8, onnx.TensorProto.UINT8)


def slim(model, limit=4096, big=FLOATS):
    """Large initializers and Constant nodes of the main graph (of the types ``big``: floats,
    or also int8/uint8 for a quantized model) become ConstantOfShape nodes of the same name,
    dtype and shape (zeros), as in the onnx package's light zoo files."""
    g = model.graph
    keep, shapes, first = [], [], []

    def fill(t, name, out, node_name):
        shape = numpy_helper.from_array(np.array(t.dims, dtype=np.int64), name + "__shape")
        shapes.append(shape)
        zero = helper.make_tensor("value", t.data_type, [1], [0])
        return helper.make_node("ConstantOfShape", [shape.name], [out], name=node_name, value=zero)

    for t in g.initializer:
        if t.data_type in big and np.prod(t.dims) > limit:
            first.append(fill(t, t.name, t.name, t.name + "__fill"))
        else:
            keep.append(t)
    nodes = []
    for n in g.node:
        value = [a.t for a in n.attribute if a.name == "value"]
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and value and value[0].data_type in big \
                and np.prod(value[0].dims) > limit:
            nodes.append(fill(value[0], n.output[0], n.output[0], n.name))
        else:
            nodes.append(n)
    del g.initializer[:]
    g.initializer.extend(keep + shapes)
    del g.node[:]
    g.node.extend(first + nodes)
    return model
