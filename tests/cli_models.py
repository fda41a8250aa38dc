"""Models the CLI tests share: a transformer broken by a custom op, data-dependent graphs."""

import os

import numpy as np
import onnx
from helpers import I64, F, model
from onnx import TensorProto, helper, numpy_helper

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


def nms_if_model():
    """A detector's tail: NonMaxSuppression's count, and an If that gives no box (0 rows) where it
    selects none: both counts only the data decides."""
    empty = numpy_helper.from_array(np.zeros((0, 4), np.float32))
    then_g = helper.make_graph([helper.make_node("Constant", [], ["e"], value=empty)],
                               "then", [], [helper.make_tensor_value_info("e", F, [None, 4])])
    else_g = helper.make_graph([helper.make_node("Gather", ["sel", "two"], ["col"], axis=1),
                                helper.make_node("Squeeze", ["col", "one"], ["idx"]),
                                helper.make_node("Squeeze", ["boxes", "zero"], ["b0"]),
                                helper.make_node("Gather", ["b0", "idx"], ["picked"], axis=0)],
                               "else", [], [helper.make_tensor_value_info("picked", F, [None, 4])])
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "maxk"], ["sel"], name="nms"),
             helper.make_node("Shape", ["sel"], ["ss"], name="shape"),
             helper.make_node("Gather", ["ss", "zero_s"], ["count"], name="count", axis=0),
             helper.make_node("Equal", ["count", "zero_s"], ["none"], name="none"),
             helper.make_node("If", ["none"], ["out"], name="if", then_branch=then_g, else_branch=else_g)]
    inits = [numpy_helper.from_array(np.array([10], np.int64), "maxk"), numpy_helper.from_array(np.array([2], np.int64), "two"),
             numpy_helper.from_array(np.array([1], np.int64), "one"), numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array(0, np.int64), "zero_s")]
    g = helper.make_graph(nodes, "det", [helper.make_tensor_value_info("boxes", F, [1, "n", 4]),
                                          helper.make_tensor_value_info("scores", F, [1, 1, "n"])],
                          [helper.make_tensor_value_info("out", F, [None, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def input_if_model():
    """An If on a graph input (optimum's merged decoders' use_cache_branch): x[seq], or x twice."""
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["a"])], "then", [],
                               [helper.make_tensor_value_info("a", F, [None])])
    else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["b"], axis=0)], "else", [],
                               [helper.make_tensor_value_info("b", F, [None])])
    nodes = [helper.make_node("If", ["use_cache_branch"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
             helper.make_node("Relu", ["y"], ["z"], name="relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, ["seq"]),
                                       helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1])],
                          [helper.make_tensor_value_info("z", F, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def windows_model():
    """x[batch, height] reshaped to [batch, height//8, 8], the target computed from x's own shape:
    the element count holds where 8 divides height (batch a factor of both sides)."""
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="s"),
             helper.make_node("Gather", ["s", "i0"], ["b"], axis=0, name="gb"),
             helper.make_node("Gather", ["s", "i1"], ["h"], axis=0, name="gh"),
             helper.make_node("Div", ["h", "eight"], ["h8"], name="dh"),
             helper.make_node("Concat", ["b", "h8", "eight"], ["t"], axis=0, name="cat"),
             helper.make_node("Reshape", ["x", "t"], ["y"], name="win")]
    inits = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("i0", 0), ("i1", 1), ("eight", 8))]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, ["batch", "height"])],
                          [helper.make_tensor_value_info("y", F, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
