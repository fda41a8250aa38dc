"""onnxruntime's transformer optimizer (``onnxruntime.transformers.optimizer.optimize_model``) on
tiny transformers models (random weights, no hub) exported by TorchScript: its fusions turn the
exported subgraphs into onnxruntime's contrib ops (Attention, MultiHeadAttention,
EmbedLayerNormalization, SkipLayerNormalization, BiasGelu, FastGelu, ...), whose shape rules
onnxsym must know. Each model's note lists the fused ops it carries. Used by make_real.py.

The models are exported with eager attention: the optimizer's patterns match it, not SDPA.
"""

from __future__ import annotations

from collections import Counter

from corpus import entry
from make_families import shim_torchvision
from make_torch import export_one

MAKERS = []
SCRIPT = "make_fusions.py"
STANDARD = {"Add", "Mul", "Sub", "Div", "MatMul", "Gather", "Reshape", "Transpose", "Shape", "Concat",
            "Unsqueeze", "Squeeze", "Slice", "Cast", "Softmax", "Where", "Expand", "Constant", "Equal",
            "Range", "ConstantOfShape", "LayerNormalization", "Tanh", "Erf", "Pow", "Sqrt", "ReduceMean",
            "Gemm", "Less", "Not", "Neg", "Sigmoid", "Split", "And", "Identity", "Greater", "Min", "Max",
            "Floor", "Trilu", "Cos", "Sin", "Abs", "Relu", "Softplus", "ReduceSum", "Or", "GreaterOrEqual",
            "LessOrEqual", "Clip", "Flatten", "ScatterND", "CumSum", "IsNaN", "Conv"}


def maker(fn):
    MAKERS.append(fn)
    return fn


def _optimize(model, model_type, heads, hidden):
    """The optimizer's fusions alone (opt_level 0: no onnxruntime graph pass), for the CPU, saved
    as the tool saves them (which adds the com.microsoft opset)."""
    import os
    import tempfile

    import onnx
    from onnxruntime.transformers.optimizer import optimize_model

    path = os.path.join(tempfile.mkdtemp(), "fused.onnx")
    optimize_model(model, model_type=model_type, num_heads=heads, hidden_size=hidden, opt_level=0,
                   use_gpu=False).save_model_to_file(path)
    return onnx.load(path)


def _fused_ops(model):
    ops = Counter(n.op_type for n in model.graph.node if n.op_type not in STANDARD)
    return ", ".join(f"{op} x{k}" for op, k in sorted(ops.items()))


def _fused(name, module, args, inputs, outputs, axes, sizes, model_type, heads, hidden, config, feeds=None):
    import onnxruntime
    import torch
    import transformers

    module.eval()
    m = export_one(module, args, inputs, outputs, axes, "TorchScript")
    fused = _optimize(m, model_type, heads, hidden)
    src = {"kind": "converter",
           "converter": f"onnxruntime.transformers.optimizer.optimize_model(model_type={model_type!r}) "
                        "of torch.onnx.export(TorchScript)",
           "version": onnxruntime.__version__, "torch": torch.__version__,
           "script": f"models/real/{SCRIPT}:{name}", "library": f"transformers {transformers.__version__}",
           "config": f"{config}, tiny, eager attention, in {SCRIPT}"}
    shapes = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in fused.graph.input}
    return fused, entry(name, "onnxruntime transformer optimizer", src, shapes, sizes, feeds=feeds,
                        note="fused: " + _fused_ops(fused))


def _text_inputs(vocab, names=("input_ids", "attention_mask")):
    import torch

    ids = torch.randint(0, vocab, (2, 7))
    args = tuple(ids if n.endswith("ids") and n != "token_type_ids" else torch.ones(2, 7, dtype=torch.long)
                 for n in names)
    axes = {n: {0: "batch", 1: "seq"} for n in names}
    feeds = {n: {"int": [0, vocab]} for n in names if n.endswith("input_ids")}
    feeds.update({n: {"value": 1} for n in names if n == "attention_mask"})
    feeds.update({n: {"value": 0} for n in names if n == "token_type_ids"})
    return args, axes, feeds


SEQ_SIZES = [{"batch": 1, "seq": 5}, {"batch": 2, "seq": 9}]


class _Outputs:
    """A module returning the first output of a transformers model called with keywords."""

    def __new__(cls, model, names):
        import torch

        class Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = model

            def forward(self, *xs):
                return self.m(**dict(zip(names, xs, strict=True)))[0]

        return Wrap()


@maker
def fused_bert():
    """BERT: EmbedLayerNormalization, Attention (with the mask index), SkipLayerNormalization, BiasGelu."""
    import torch

    shim_torchvision()
    import transformers

    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=64, attn_implementation="eager")
    names = ("input_ids", "attention_mask", "token_type_ids")
    args, axes, feeds = _text_inputs(64, names)
    yield _fused("fused_bert", _Outputs(transformers.BertModel(cfg), names), args, list(names),
                 ["last_hidden_state"], axes, SEQ_SIZES, "bert", 2, 32, "BertConfig", feeds)


@maker
def fused_gpt2():
    """GPT-2 without a cache: Attention (unidirectional), SkipLayerNormalization, FastGelu."""
    import torch

    shim_torchvision()
    import transformers

    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=64, n_positions=64, n_embd=32, n_layer=2, n_head=2,
                                  attn_implementation="eager")
    names = ("input_ids", "attention_mask")
    args, axes, feeds = _text_inputs(64, names)
    yield _fused("fused_gpt2", _Outputs(transformers.GPT2Model(cfg), names), args, list(names),
                 ["last_hidden_state"], axes, SEQ_SIZES, "gpt2", 2, 32, "GPT2Config", feeds)


@maker
def fused_clip():
    """CLIP's text encoder: a causal mask built from seq, Attention, SkipLayerNormalization, QuickGelu."""
    import torch

    shim_torchvision()
    import transformers

    torch.manual_seed(0)
    cfg = transformers.CLIPTextConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=2, max_position_embeddings=64, attn_implementation="eager")
    names = ("input_ids", "attention_mask")
    args, axes, feeds = _text_inputs(64, names)
    yield _fused("fused_clip", _Outputs(transformers.CLIPTextModel(cfg), names), args, list(names),
                 ["last_hidden_state"], axes, SEQ_SIZES, "clip", 2, 32, "CLIPTextConfig", feeds)


@maker
def fused_bart():
    """BART, encoder and decoder (no cache): Attention and MultiHeadAttention (cross-attention over
    the encoder's length), SkipLayerNormalization."""
    import torch

    shim_torchvision()
    import transformers

    torch.manual_seed(0)
    cfg = transformers.BartConfig(vocab_size=64, d_model=32, encoder_layers=1, decoder_layers=1,
                                  encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                                  decoder_ffn_dim=64, max_position_embeddings=64, attn_implementation="eager")
    names = ("input_ids", "attention_mask", "decoder_input_ids")
    args, axes, feeds = _text_inputs(64, names)
    args = (args[0], args[1], torch.randint(0, 64, (2, 3)))
    axes["decoder_input_ids"] = {0: "batch", 1: "target"}
    sizes = [{"batch": 1, "seq": 5, "target": 2}, {"batch": 2, "seq": 9, "target": 4}]
    yield _fused("fused_bart", _Outputs(transformers.BartModel(cfg), names), args, list(names),
                 ["last_hidden_state"], axes, sizes, "bart", 2, 32, "BartConfig", feeds)


@maker
def fused_gpt_neox():
    """GPT-NeoX: rotary embeddings over positions from seq, parallel attention and MLP."""
    import torch

    shim_torchvision()
    import transformers

    torch.manual_seed(0)
    cfg = transformers.GPTNeoXConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=64, rotary_pct=0.5,
                                     attn_implementation="eager")
    names = ("input_ids", "attention_mask")
    args, axes, feeds = _text_inputs(64, names)
    yield _fused("fused_gpt_neox", _Outputs(transformers.GPTNeoXModel(cfg), names), args, list(names),
                 ["last_hidden_state"], axes, SEQ_SIZES, "gpt_neox", 2, 32, "GPTNeoXConfig", feeds)


@maker
def fused_vit():
    """ViT at a fixed image size (batch varies): Attention without a mask, SkipLayerNormalization."""
    import torch

    shim_torchvision()
    import transformers

    torch.manual_seed(0)
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=64, attn_implementation="eager")
    yield _fused("fused_vit", _Outputs(transformers.ViTModel(cfg), ("pixel_values",)), (torch.randn(2, 3, 32, 32),),
                 ["pixel_values"], ["last_hidden_state"], {"pixel_values": {0: "batch"}},
                 [{"batch": 1}, {"batch": 3}], "vit", 2, 32, "ViTConfig")
