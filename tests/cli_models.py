"""Models the CLI tests share: a transformer broken by a custom op, data-dependent graphs."""

import os

import numpy as np
import onnx
from helpers import I64, F, model
from onnx import helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BERT = os.path.join(ROOT, "models", "bert_tiny_ts.onnx")
MYSTERY = "/layers.0/attn/q/Mystery"


def broken_bert():
    """bert_tiny_ts with the first layer's query bias Add replaced by a custom op no
    rule knows, in the middle of the attention block."""
    m = onnx.load(BERT)
    i = next(k for k, n in enumerate(m.graph.node) if n.name == "/layers.0/attn/q/Add")
    n = m.graph.node[i]
    custom = helper.make_node("Mystery", list(n.input), list(n.output), name=MYSTERY, domain="my.ops")
    m.graph.node.remove(n)
    m.graph.node.insert(i, custom)
    m.opset_import.append(helper.make_opsetid("my.ops", 1))
    return m


def nonzero_model():
    """x[n] -> NonZero -> Transpose: a count only the data decides; and Relu(x), resolved."""
    return model([helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
                  helper.make_node("Transpose", ["nz"], ["t"], name="tr"),
                  helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [("x", F, ["n"])], [("t", I64, None), ("y", F, None)])


def reshape_by_input_model():
    """Reshape x by a shape that is a graph input: its elements are known only at run time."""
    return model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                 [("x", F, ["a", 6]), ("s", I64, [2])], [("y", F, None)])


def run(m, feeds):
    import onnxruntime as ort
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in m.graph.output], sess.run(None, feeds)))


def save(tmp_path, m, name):
    p = tmp_path / name
    onnx.save(m, str(p))
    return str(p)


def random_feeds(m, sizes, seed=0):
    """Inputs for ``m`` with its symbolic dims set from ``sizes``."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in m.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in i.type.tensor_type.shape.dim]
        if i.type.tensor_type.elem_type == onnx.TensorProto.INT64:
            feeds[i.name] = rng.integers(1, 5, shape).astype(np.int64)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def annotate_cli(model, folder, *args):
    """Save ``model`` in ``folder`` and run ``onnxsym annotate`` on it: (model path, output path, result)."""
    from click.testing import CliRunner

    from onnxsym.cli import main

    path, out = os.path.join(str(folder), "m.onnx"), os.path.join(str(folder), "o.onnx")
    onnx.save(model, path)
    return path, out, CliRunner().invoke(main, ["annotate", path, "-o", out, *args])


def pinned_model(path):
    """ids[batch, seq] reshaped to [1, seq] (a Concat of 1 and its Shape[1:]): batch runs at 1 only."""
    nodes = [helper.make_node("Shape", ["ids"], ["s"], name="sh", start=1),
             helper.make_node("Concat", ["one", "s"], ["ns"], name="cc", axis=0),
             helper.make_node("Reshape", ["ids", "ns"], ["y"], name="rs")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("ids", I64, ["batch", "seq"])],
                          [helper.make_tensor_value_info("y", I64, None)],
                          [numpy_helper.from_array(np.array([1], np.int64), "one")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)
    return m
