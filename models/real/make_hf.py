"""Hugging Face transformers architectures, each built from a tiny config with random
weights (torch.manual_seed(0); no model hub), exported with both of torch's exporters by
make_torch.export_both. Chosen for shape logic the rest of the corpus lacks: decoders over a
DynamicCache (GPT-2; Mistral's sliding-window mask; Mixtral's routed experts), encoder-
decoders with a self-attention cache (BART, T5's relative buckets), Whisper's strided conv
encoder, Wav2Vec2's conv feature extractor (length arithmetic), ViT with its position
embeddings interpolated to the image size, DETR (a ResNet backbone, sine positions, a fixed
set of object queries), BEiT (a relative-position table interpolated to the patch grid),
MobileNetV1 (TensorFlow's SAME padding computed from the image size) and Funnel-Transformer
(the sequence pooled to ceil(seq/2)). Used by make_real.py.

Not here, and why (transformers 5.24, torch 2.13): the dynamo exporter fails on T5, BEiT and Swin
("Cannot view a tensor with shape ... as a tensor with shape ..." in its decompositions) and
on the eager MoE experts (a guard on the data-dependent expert count), and it fixes Funnel's
seq to the example's; TorchScript traces the eager MoE with the routing of the example input
baked in (it fails at other sizes), so Mixtral uses transformers' "batched_mm" experts;
Whisper's encoder takes exactly 2*max_source_positions frames, so frames is not a symbol.
"""

from __future__ import annotations

from make_torch import export_both

MAKERS = []
SCRIPT = "make_hf.py"


def maker(fn):
    MAKERS.append(fn)
    return fn


def _hf(config):
    import transformers

    return {"library": f"transformers {transformers.__version__}", "config": f"{config}, tiny, in make_hf.py"}


def dynamic_cache(config, tensors):
    """A DynamicCache holding (key, value) pairs of layer after layer."""
    from transformers import DynamicCache

    pairs = [(tensors[i], tensors[i + 1]) for i in range(0, len(tensors), 2)]
    return DynamicCache(ddp_cache_data=pairs, config=config)


def flat_cache(cache):
    return [t for layer in cache.layers for t in (layer.keys, layer.values)]


PAST = ["past_k0", "past_v0", "past_k1", "past_v1"]
PRESENT = ["present_k0", "present_v0", "present_k1", "present_v1"]


def past_tensors(batch, heads, length, head_dim):
    import torch

    return tuple(torch.randn(batch, heads, length, head_dim) for _ in PAST)


def past_axes():
    return {n: {0: "batch", 2: "past"} for n in PAST}


TOKENS = {"input_ids": {"int": [0, 64]}}


# ---------------------------------------------------------------- decoders with a cache

def _causal_lm(name, part, model, config, heads, mask):
    """A causal LM over input_ids (and an attention mask over past + seq) and a 2-layer cache."""
    import torch

    class WithMask(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, input_ids, attention_mask, past_k0, past_v0, past_k1, past_v1):
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=True,
                         past_key_values=dynamic_cache(config, [past_k0, past_v0, past_k1, past_v1]))
            return (out.logits, *flat_cache(out.past_key_values))

    class NoMask(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, input_ids, past_k0, past_v0, past_k1, past_v1):
            out = self.m(input_ids=input_ids, use_cache=True,
                         past_key_values=dynamic_cache(config, [past_k0, past_v0, past_k1, past_v1]))
            return (out.logits, *flat_cache(out.past_key_values))

    ids = torch.ones(2, 3, dtype=torch.long)
    axes = {"input_ids": {0: "batch", 1: "seq"}, **past_axes()}
    sizes = [{"batch": 1, "seq": 3, "past": 5}, {"batch": 2, "seq": 1, "past": 9}]
    if mask:
        axes["attention_mask"] = {0: "batch", 1: "total"}
        sizes = [dict(s, total=s["past"] + s["seq"]) for s in sizes]
        module, args, inputs = WithMask(), (ids, torch.ones(2, 8, dtype=torch.long)), ["input_ids", "attention_mask"]
    else:
        module, args, inputs = NoMask(), (ids,), ["input_ids"]
    yield from export_both(name, part, module, args + past_tensors(2, heads, 5, 8), inputs + PAST, ["logits"] + PRESENT, axes,
                           sizes, feeds=TOKENS, extra=_hf(type(config).__name__), script=SCRIPT)


@maker
def hf_gpt2():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=64, n_positions=128, n_embd=32, n_layer=2, n_head=4, bos_token_id=0,
                                  eos_token_id=0)
    yield from _causal_lm("hf_gpt2", "hf_gpt2", transformers.GPT2LMHeadModel(cfg), cfg, 4, mask=False)


def _llama_like(**extra):
    return dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, max_position_embeddings=128, bos_token_id=0, eos_token_id=0, pad_token_id=0,
                **extra)


@maker
def hf_mistral():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.MistralConfig(**_llama_like(sliding_window=4))
    yield from _causal_lm("hf_mistral", "hf_mistral", transformers.MistralForCausalLM(cfg), cfg, 2, mask=True)


@maker
def hf_mixtral():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.MixtralConfig(**_llama_like(num_local_experts=4, num_experts_per_tok=2))
    cfg._experts_implementation = "batched_mm"  # every expert on every token, gathered by the router's top 2
    yield from _causal_lm("hf_mixtral", "hf_mixtral", transformers.MixtralForCausalLM(cfg), cfg, 2, mask=True)


# ---------------------------------------------------------------- encoder-decoders with a cache

def _seq2seq(name, part, model, config, exporters=("TorchScript", "dynamo")):
    import torch
    from transformers import DynamicCache, EncoderDecoderCache

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, input_ids, attention_mask, decoder_input_ids, past_k0, past_v0, past_k1, past_v1):
            cache = EncoderDecoderCache(dynamic_cache(config, [past_k0, past_v0, past_k1, past_v1]), DynamicCache(config=config))
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
                         past_key_values=cache, use_cache=True)
            return (out.logits, *flat_cache(out.past_key_values.self_attention_cache))

    args = (torch.ones(2, 6, dtype=torch.long), torch.ones(2, 6, dtype=torch.long), torch.ones(2, 3, dtype=torch.long))
    axes = {"input_ids": {0: "batch", 1: "src_len"}, "attention_mask": {0: "batch", 1: "src_len"},
            "decoder_input_ids": {0: "batch", 1: "tgt_len"}, **past_axes()}
    yield from export_both(name, part, Wrap(), args + past_tensors(2, 4, 5, 8),
                           ["input_ids", "attention_mask", "decoder_input_ids"] + PAST, ["logits"] + PRESENT, axes,
                           [{"batch": 1, "src_len": 6, "tgt_len": 3, "past": 5}, {"batch": 2, "src_len": 11, "tgt_len": 1,
                                                                                    "past": 9}],
                           feeds={**TOKENS, "decoder_input_ids": {"int": [0, 64]}}, extra=_hf(type(config).__name__),
                           script=SCRIPT, exporters=exporters)


@maker
def hf_bart():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.BartConfig(vocab_size=64, d_model=32, encoder_layers=2, decoder_layers=2,
                                  encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                  decoder_ffn_dim=64, max_position_embeddings=128, pad_token_id=1, bos_token_id=0,
                                  eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2)
    yield from _seq2seq("hf_bart", "hf_bart", transformers.BartForConditionalGeneration(cfg), cfg)


@maker
def hf_t5():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                                num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=16,
                                decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    # the dynamo exporter fails on T5 (see the module's docstring)
    yield from _seq2seq("hf_t5", "hf_t5", transformers.T5ForConditionalGeneration(cfg), cfg, exporters=("TorchScript",))


@maker
def hf_whisper():
    import torch
    import transformers
    from transformers import DynamicCache, EncoderDecoderCache

    torch.manual_seed(0)
    cfg = transformers.WhisperConfig(vocab_size=64, num_mel_bins=8, d_model=32, encoder_layers=1, decoder_layers=2,
                                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                     decoder_ffn_dim=64, max_source_positions=64, max_target_positions=64,
                                     pad_token_id=0, bos_token_id=0, eos_token_id=1, decoder_start_token_id=0,
                                     suppress_tokens=None, begin_suppress_tokens=None)
    model = transformers.WhisperForConditionalGeneration(cfg)

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, input_features, decoder_input_ids, past_k0, past_v0, past_k1, past_v1):
            cache = EncoderDecoderCache(dynamic_cache(cfg, [past_k0, past_v0, past_k1, past_v1]), DynamicCache(config=cfg))
            out = self.m(input_features=input_features, decoder_input_ids=decoder_input_ids, past_key_values=cache,
                         use_cache=True)
            return (out.logits, *flat_cache(out.past_key_values.self_attention_cache))

    args = (torch.randn(2, 8, 128), torch.ones(2, 3, dtype=torch.long)) + past_tensors(2, 4, 5, 8)
    axes = {"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "tgt_len"}, **past_axes()}
    yield from export_both("hf_whisper", "hf_whisper", Wrap(), args, ["input_features", "decoder_input_ids"] + PAST,
                           ["logits"] + PRESENT, axes,
                           [{"batch": 1, "tgt_len": 3, "past": 5}, {"batch": 2, "tgt_len": 1, "past": 9}],
                           feeds={"decoder_input_ids": {"int": [0, 64]}}, extra=_hf("WhisperConfig"), script=SCRIPT)


# ---------------------------------------------------------------- audio and vision encoders

def _two_inputs(model, call):
    """A module whose forward(a, b) is ``call(model, a, b)`` (the exporters need the arguments
    spelled out, not *args)."""
    import torch

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, a, b):
            return call(self.m, a, b)

    return Wrap()


@maker
def hf_wav2vec2():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.Wav2Vec2Config(vocab_size=16, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                      intermediate_size=64, conv_dim=(8, 8, 8), conv_stride=(5, 2, 2),
                                      conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                                      num_conv_pos_embedding_groups=2, feat_extract_norm="group")
    wrap = _two_inputs(transformers.Wav2Vec2ForCTC(cfg),
                       lambda m, x, mask: m(input_values=x, attention_mask=mask).logits)
    args = (torch.randn(2, 1600), torch.ones(2, 1600, dtype=torch.long))
    axes = {"input_values": {0: "batch", 1: "samples"}, "attention_mask": {0: "batch", 1: "samples"}}
    yield from export_both("hf_wav2vec2", "hf_wav2vec2", wrap, args, ["input_values", "attention_mask"], ["logits"], axes,
                           [{"batch": 1, "samples": 1600}, {"batch": 2, "samples": 2345}], extra=_hf("Wav2Vec2Config"),
                           script=SCRIPT)


def _image_model(name, model, forward, config, exporters=("TorchScript", "dynamo")):
    import torch

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, pixel_values):
            return forward(self.m, pixel_values)

    yield from export_both(name, name, Wrap(), (torch.randn(2, 3, 48, 64),), ["pixel_values"], ["out"],
                           {"pixel_values": {0: "batch", 2: "height", 3: "width"}},
                           [{"batch": 1, "height": 48, "width": 64}, {"batch": 2, "height": 40, "width": 88}],
                           extra=_hf(config), script=SCRIPT, exporters=exporters)


@maker
def hf_vit():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=1,
                                 num_attention_heads=2, intermediate_size=64, num_labels=3)
    yield from _image_model("hf_vit", transformers.ViTForImageClassification(cfg),
                            lambda m, x: m(pixel_values=x, interpolate_pos_encoding=True).logits, "ViTConfig")


@maker
def hf_beit():
    """BEiT: its relative-position bias table is interpolated to the patch grid, then reshaped to
    (2*h - 1)*(2*w - 1) rows. The dynamo exporter fails on it (a view in its decompositions)."""
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.BeitConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=1,
                                  num_attention_heads=2, intermediate_size=64, use_relative_position_bias=True,
                                  num_labels=3)
    yield from _image_model("hf_beit", transformers.BeitForImageClassification(cfg),
                            lambda m, x: m(pixel_values=x, interpolate_pos_encoding=True).logits, "BeitConfig",
                            exporters=("TorchScript",))


@maker
def hf_mobilenet_v1():
    """MobileNetV1 with TensorFlow's SAME padding, computed in the graph from the image size."""
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.MobileNetV1Config(depth_multiplier=0.125, min_depth=4, image_size=64, tf_padding=True,
                                         num_labels=3)
    yield from _image_model("hf_mobilenet_v1", transformers.MobileNetV1ForImageClassification(cfg),
                            lambda m, x: m(pixel_values=x).logits, "MobileNetV1Config")


@maker
def hf_detr():
    import torch
    import transformers

    torch.manual_seed(0)
    backbone = transformers.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], out_features=["stage2"])
    cfg = transformers.DetrConfig(use_timm_backbone=False, backbone_config=backbone, use_pretrained_backbone=False,
                                  d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                  decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=5,
                                  num_labels=3)
    yield from _image_model("hf_detr", transformers.DetrForObjectDetection(cfg),
                            lambda m, x: m(pixel_values=x).logits, "DetrConfig with ResNetConfig")


@maker
def hf_funnel():
    """Funnel-Transformer: the encoder pools the sequence to ceil(seq/2) (its relative positions
    and the decoder's upsampling follow). The dynamo exporter fixes seq to the example's 7."""
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.FunnelConfig(vocab_size=64, block_sizes=[1, 1], d_model=32, n_head=2, d_head=16, d_inner=64,
                                    num_decoder_layers=1)
    wrap = _two_inputs(transformers.FunnelModel(cfg),
                       lambda m, ids, mask: m(input_ids=ids, attention_mask=mask).last_hidden_state)
    args = (torch.randint(3, 64, (2, 7)), torch.ones(2, 7, dtype=torch.long))
    # runs for seq in [4, 13] only (onnxsym domain): relative-position tables sized at export
    yield from export_both("hf_funnel", "hf_funnel", wrap, args, ["input_ids", "attention_mask"], ["hidden"],
                           {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
                           [{"batch": 1, "seq": 7}, {"batch": 2, "seq": 12}], feeds={"input_ids": {"int": [3, 64]}},
                           extra=_hf("FunnelConfig"), script=SCRIPT, exporters=("TorchScript",))
