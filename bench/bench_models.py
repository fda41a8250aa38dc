"""The models the speed benchmark runs on, made on first use and cached in bench/.cache.

- ``llama_layers(n)``: models/make_models.py's LLaMA-shaped tiny-width model with
  ``n`` layers, a KV cache per layer, and dynamic ``batch``, ``seq`` and ``past``:
  the shipped TorchScript export (opset 17, 2 layers) with its second layer
  repeated, node for node as torch exports more layers (no torch needed).
- ``big_llama()``: a LLaMA-shaped graph at real width (hidden 2048, 32 heads,
  FFN 5632, vocab 32000, 10 layers: 2.6 GB of float weights) built with
  onnx.helper, its weights in one external file that is sparse (made with
  ``truncate``), so it costs no disk. Its weights read as zeros.
"""

from __future__ import annotations

import os
import re

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")
SHIPPED = os.path.join(HERE, "..", "models", "llama_tiny_ts.onnx")  # 2 layers


def llama_layers(n: int) -> str:
    path = os.path.join(CACHE, f"llama_{n}l_ts.onnx")
    if not os.path.exists(path):
        os.makedirs(CACHE, exist_ok=True)
        onnx.save(_repeat_layers(onnx.load(SHIPPED), n), path + ".tmp")
        os.replace(path + ".tmp", path)
    return path


def _repeat_layers(model: onnx.ModelProto, n: int) -> onnx.ModelProto:
    """The shipped 2-layer export with its second layer repeated to make ``n`` layers:
    a layer is the nodes named ``/blocks.1/...``, the Constant and Identity nodes only
    they read (TorchScript hoists those out of the block), reading layer 0's output
    ``/blocks.0/Add_1_output_0`` and ``past_{key,value}_1``. Copy ``i`` renames what
    the layer makes (``blocks.1`` to ``blocks.i``, any other name gets ``__l{i}``),
    reads copy ``i - 1``'s output and its own past, writes its own presents, and
    shares layer 1's weights. The final norm reads the last copy. At 96 layers this
    gives the 18,972 nodes of torch's own 96-layer export."""
    g = model.graph
    nodes = list(g.node)
    readers: dict = {}
    for node in nodes:
        for name in node.input:
            readers.setdefault(name, set()).add(node.name)
    block = {node.name for node in nodes if node.name.startswith("/blocks.1/")}
    # hoisted producers that only layer 1 reads (its Unsqueeze axes, its norm weights)
    hoisted = {node.name for node in nodes if not node.name.startswith("/blocks.")
               and node.output and readers.get(node.output[0]) and readers[node.output[0]] <= block}
    layer = block | hoisted
    made = {o for node in nodes if node.name in layer for o in node.output}
    last = "/blocks.1/Add_1_output_0"

    def rename(name: str, i: int) -> str:
        if re.fullmatch(r"(past|present)_(key|value)_1", name):
            return name[:-1] + str(i)
        if name.startswith("/blocks.1/") or name.startswith("blocks.1."):
            return name.replace("blocks.1", f"blocks.{i}", 1)
        return f"{name}__l{i}"

    def copy(node: onnx.NodeProto, i: int) -> onnx.NodeProto:
        out = onnx.NodeProto()
        out.CopyFrom(node)
        out.name = rename(node.name, i)
        for k, name in enumerate(node.input):
            if name == "/blocks.0/Add_1_output_0":
                out.input[k] = f"/blocks.{i - 1}/Add_1_output_0"
            elif name in made or name.startswith("past_"):
                out.input[k] = rename(name, i)
        for k, name in enumerate(node.output):
            out.output[k] = rename(name, i)
        return out

    template = [node for node in nodes if node.name in layer]
    head = [node for node in nodes if node.name not in layer and not node.name.startswith("/norm/")
            and node.name != "/lm_head/MatMul"]
    tail = [node for node in nodes if node.name.startswith("/norm/") or node.name == "/lm_head/MatMul"]
    layers = [copy(node, i) for i in range(1, n) for node in template]
    for node in tail:
        for k, name in enumerate(node.input):
            if name == last:
                node.input[k] = f"/blocks.{n - 1}/Add_1_output_0"
    del g.node[:]
    g.node.extend(head + layers + tail)

    def io(values, prefix):
        keep = [v for v in values if not re.fullmatch(prefix + r"_(key|value)_\d+", v.name)]
        one = {v.name: v for v in values}
        for i in range(n):
            for kv in ("key", "value"):
                v = onnx.ValueInfoProto()
                v.CopyFrom(one[f"{prefix}_{kv}_0"])
                v.name = f"{prefix}_{kv}_{i}"
                if prefix == "present":
                    v.type.tensor_type.shape.dim[2].dim_param = "past_seq"
                keep.append(v)
        return keep
    for field, prefix in ((g.input, "past"), (g.output, "present")):
        values = io(list(field), prefix)
        del field[:]
        field.extend(values)
    return model


# Real LLaMA widths (TinyLlama-like, without grouped KV heads).
BIG = dict(layers=10, hidden=2048, heads=32, ffn=5632, vocab=32000)


def big_llama() -> str:
    """The >2 GB model: ``big/model.onnx`` with its weights in ``big/weights.bin``."""
    folder = os.path.join(CACHE, "big")
    path = os.path.join(folder, "model.onnx")
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    model, size = _big_graph(**BIG)
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.truncate(size)  # sparse: no disk blocks until written
    onnx.save(model, path)
    return path


def _big_graph(layers: int, hidden: int, heads: int, ffn: int, vocab: int):
    hd = hidden // heads
    nodes, inits = [], []
    offset = 0

    def weight(name, shape):
        nonlocal offset
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
        length = 4 * int(np.prod(shape))
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "weights.bin"), ("offset", str(offset)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        offset += (length + 4095) // 4096 * 4096
        inits.append(t)
        return name

    def const(name, values):
        inits.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    def op(op_type, inputs, out, **attrs):
        nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def rms(x, p):
        sq = op("Mul", [x, x], f"{p}_sq")
        mean = op("ReduceMean", [sq], f"{p}_mean", axes=[-1], keepdims=1)
        inv = op("Sqrt", [op("Add", [mean, "eps"], f"{p}_add")], f"{p}_sqrt")
        return op("Mul", [op("Div", [x, inv], f"{p}_div"), weight(f"{p}.weight", [hidden])], f"{p}_out")

    inits.append(helper.make_tensor("eps", TensorProto.FLOAT, [], [1e-6]))
    const("heads_shape", [0, 0, heads, hd])
    const("hidden_shape", [0, 0, hidden])
    x = op("Gather", [weight("embed", [vocab, hidden]), "input_ids"], "embed_out")
    for i in range(layers):
        p = f"l{i}"
        h = rms(x, f"{p}_n1")
        q, k, v = (op("Transpose", [op("Reshape", [op("MatMul", [h, weight(f"{p}.{w}", [hidden, hidden])],
                                                           f"{p}_{w}"), "heads_shape"], f"{p}_{w}_r")],
                      f"{p}_{w}_t", perm=[0, 2, 1, 3]) for w in "qkv")
        kt = op("Transpose", [k], f"{p}_kt", perm=[0, 1, 3, 2])
        s = op("Div", [op("MatMul", [q, kt], f"{p}_qk"), "scale"], f"{p}_scores")
        a = op("MatMul", [op("Softmax", [s], f"{p}_probs", axis=-1), v], f"{p}_ctx")
        a = op("Reshape", [op("Transpose", [a], f"{p}_ctx_t", perm=[0, 2, 1, 3]), "hidden_shape"], f"{p}_ctx_r")
        x = op("Add", [x, op("MatMul", [a, weight(f"{p}.o", [hidden, hidden])], f"{p}_o")], f"{p}_res1")
        h = rms(x, f"{p}_n2")
        g = op("MatMul", [h, weight(f"{p}.gate", [hidden, ffn])], f"{p}_gate")
        g = op("Mul", [g, op("Sigmoid", [g], f"{p}_sig")], f"{p}_silu")
        u = op("MatMul", [h, weight(f"{p}.up", [hidden, ffn])], f"{p}_up")
        d = op("MatMul", [op("Mul", [g, u], f"{p}_gu"), weight(f"{p}.down", [ffn, hidden])], f"{p}_down")
        x = op("Add", [x, d], f"{p}_res2")
    logits = op("MatMul", [rms(x, "norm"), weight("lm_head", [hidden, vocab])], "logits")
    inits.append(helper.make_tensor("scale", TensorProto.FLOAT, [], [float(hd) ** 0.5]))
    graph = helper.make_graph(
        nodes, "big_llama",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, ["batch", "seq", vocab])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, offset
