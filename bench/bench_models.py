"""The models the speed benchmark runs on, made on first use and cached in bench/.cache.

- ``llama_layers(n)``: a TorchScript export (opset 17) of models/make_models.py's
  LLaMA-shaped tiny-width model with ``n`` layers, a KV cache per layer, and
  dynamic ``batch``, ``seq`` and ``past``. Needs torch the first time.
- ``big_llama()``: a LLaMA-shaped graph at real width (hidden 2048, 32 heads,
  FFN 5632, vocab 32000, 10 layers: 2.6 GB of float weights) built with
  onnx.helper, its weights in one external file that is sparse (made with
  ``truncate``), so it costs no disk. Its weights read as zeros.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")


def llama_layers(n: int) -> str:
    path = os.path.join(CACHE, f"llama_{n}l_ts.onnx")
    if os.path.exists(path):
        return path
    import torch

    sys.path.insert(0, os.path.join(HERE, "..", "models"))
    import make_models as mm

    os.makedirs(CACHE, exist_ok=True)
    torch.manual_seed(0)
    model = mm.torch_models()["llama_tiny"](layers=n).eval()
    b, s, p = 2, 7, 4
    kv_shape = (b, mm.LLAMA_KV_HEADS, p, mm.LLAMA_HEAD_DIM)
    names = ["input_ids"] + [f"past_{kv}_{i}" for i in range(n) for kv in ("key", "value")]
    args = [torch.randint(0, mm.VOCAB, (b, s))] + [torch.randn(kv_shape) for _ in names[1:]]
    outs = ["logits"] + [f"present_{kv}_{i}" for i in range(n) for kv in ("key", "value")]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    dyn.update({x: {0: "batch", 2: "past"} for x in names[1:]})
    dyn.update({x: {0: "batch", 2: "past_seq"} for x in outs[1:]})
    tmp = path + ".tmp"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(args), tmp, dynamo=False, input_names=names, output_names=outs,
                          dynamic_axes=dyn, opset_version=17, do_constant_folding=True)
    os.replace(tmp, path)
    return path


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
