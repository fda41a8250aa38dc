"""Exporter families of issue 22, each from a tiny random config (no model hub):
timm (MaxViT, TorchScript, whose window partition reshapes by ``H // 4``, and its onnxslim
output; EfficientNet with TensorFlow's "same" padding computed in float32, both exporters;
ConvNeXt, RegNet, EVA); onnxruntime-genai's model builder (a Whisper decoder slicing its position table
from past to past + seq; LLaMA-shaped decoders, fp32 and int4, with GroupQueryAttention); a
merged decoder made by optimum's ``merge_decoders`` (an If on ``use_cache_branch``) and an
encoder from optimum's own exporter; a Qwen2 decoder fused by onnxscript's ``ort_fusions``;
hummingbird-ml's GEMM and tree-traversal strategies (the GEMM one squeezes ``[3, 1, n]`` with
no axes). Used by make_real.py.

torchvision's PyPI wheel is a CUDA build whose compiled ops do not load with the CPU torch;
timm and transformers need only its Python parts, so the two ops its fake registrations name are
declared first.
"""

from __future__ import annotations

from corpus import entry
from make_torch import export_both

MAKERS = []
SCRIPT = "make_families.py"


def maker(fn):
    MAKERS.append(fn)
    return fn


def shim_torchvision():
    import torch

    if not hasattr(torch.ops, "torchvision") or not hasattr(torch.ops.torchvision, "nms"):
        global _TV_LIB
        _TV_LIB = torch.library.Library("torchvision", "DEF")  # kept alive: the ops live as long as it
        for op in ("nms", "qnms"):
            _TV_LIB.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")


def _timm():
    shim_torchvision()
    import timm

    return timm


def _timm_source(name, **config):
    timm = _timm()
    return {"library": f"timm {timm.__version__}", "config": f"timm.create_model({name!r}, {config}), random weights"}


MAXVIT_NOTE = ("made by make_families.py into fetched/, not committed: the peers take minutes on it; its "
               "window partitions need H//4 >= 1 at each stage (a 0 would copy the input's dim and break the count)")
IMAGE_AXES = {"pixel_values": {0: "batch", 2: "height", 3: "width"}}


@maker
def timm_maxvit():
    """MaxViT (timm's test_maxvit, one block a stage, windows of 4 at 128 pixels): the block and
    grid partitions reshape to ``H // 4`` windows; it runs at multiples of 128. TorchScript only; its onnxslim output too."""
    import torch

    timm = _timm()
    torch.manual_seed(0)
    cfg = dict(img_size=128, num_classes=3, embed_dim=(32, 32, 32, 32), depths=(1, 1, 1, 1))
    m = timm.create_model("test_maxvit", pretrained=False, **cfg)
    sizes = [{"batch": 1, "height": 128, "width": 128}, {"batch": 2, "height": 256, "width": 128}]
    for model, e in export_both("timm_maxvit", "timm_maxvit", m, (torch.randn(2, 3, 128, 128),), ["pixel_values"],
                                ["logits"], IMAGE_AXES, sizes, extra=_timm_source("test_maxvit", **cfg), script=SCRIPT,
                                exporters=("TorchScript",)):
        # made, not committed: the peers take minutes on its 1300 nodes (the tests run them all)
        e.update(file="fetched/" + e["file"], commit=False, note=MAXVIT_NOTE)
        yield model, e
        import onnxslim

        slim = onnxslim.slim(model)
        e2 = dict(e, name=e["name"] + "_slim", file=e["file"].replace(".onnx", "_slim.onnx"), group="onnxslim")
        e2["source"] = dict(e["source"], onnxslim=onnxslim.__version__)
        yield slim, e2


@maker
def timm_efficientnet_same():
    """EfficientNet with TensorFlow's "same" padding (timm's Conv2dSame): the pads are
    ``max((ceil(x / s) - 1) * s + (k - 1) * d + 1 - x, 0)``, computed in float32 by TorchScript,
    as integer shape arithmetic by dynamo. Both exporters."""
    import torch

    timm = _timm()
    torch.manual_seed(0)
    cfg = dict(pad_type="same", num_classes=3)
    m = timm.create_model("test_efficientnet", pretrained=False, **cfg)
    sizes = [{"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 45, "width": 37}]
    yield from export_both("timm_efficientnet_same", "timm_efficientnet_same", m, (torch.randn(2, 3, 32, 32),),
                           ["pixel_values"], ["logits"], IMAGE_AXES, sizes,
                           extra=_timm_source("test_efficientnet", **cfg), script=SCRIPT)


def _timm_both(name, model_name, sizes, example=(2, 3, 64, 64), exporters=("TorchScript", "dynamo"), **cfg):
    """A timm model from a tiny config, random weights, exported with height and width symbolic
    by each exporter; large weights slimmed (make_real.slim)."""
    import torch
    from corpus import slim

    timm = _timm()
    torch.manual_seed(0)
    m = timm.create_model(model_name, pretrained=False, **cfg)
    for model, e in export_both(name, name, m, (torch.randn(*example),), ["pixel_values"], ["logits"], IMAGE_AXES, sizes,
                                extra=_timm_source(model_name, **cfg), script=SCRIPT, exporters=exporters):
        before = model.ByteSize()
        model = slim(model)
        if model.ByteSize() < before:
            e["source"]["slimmed"] = True
        yield model, e


@maker
def timm_convnext():
    """ConvNeXt (timm's test_convnext): a 4x4 stride-4 stem, 2x2 stride-2 downsamples, 7x7
    depthwise convs, LayerNorm over channels-last permutes; it runs at multiples of 32."""
    sizes = [{"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 64, "width": 96}]
    yield from _timm_both("timm_convnext", "test_convnext", sizes, num_classes=3)


@maker
def timm_regnet():
    """RegNetX-200MF's shape (grouped 3x3 convs, stride-2 stages) narrowed to tiny widths; any image size >= 1."""
    sizes = [{"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 45, "width": 37}]
    yield from _timm_both("timm_regnet", "regnetx_002", sizes, num_classes=3)


@maker
def timm_eva():
    """EVA-02 (tiny, one block) with dynamic_img_size: rotary position embeddings and absolute
    position embeddings resampled to the patch grid; it runs at multiples of 14. Its attention is
    timm's unfused one (the TorchScript tracer fails on the fused one's ``is_causal``). Dynamo
    only: TorchScript's file declares a Concat dim of 0 where it computes 1, and onnxruntime refuses to load it."""
    _timm().layers.set_fused_attn(False)
    sizes = [{"batch": 1, "height": 56, "width": 56}, {"batch": 2, "height": 42, "width": 70}]
    yield from _timm_both("timm_eva", "eva02_tiny_patch14_224", sizes, example=(2, 3, 56, 56), num_classes=3,
                          exporters=("dynamo",), depth=1, dynamic_img_size=True, img_size=56)


SIMPLIFIED = ("timm_convnext_dynamo", "fused_bert", "genai_qwen2_fp32", "hf_gpt2_ts", "onnxscript_if_halve")


@maker
def simplified():
    """onnxslim's and onnxsim's outputs of models already here (made first): folded constants,
    fused and reordered nodes, and their own declared shapes. (Not onnxsim of the genai Qwen2:
    onnxruntime refuses that output.)"""
    import json
    import os

    import onnx
    import onnxsim
    import onnxslim
    from corpus import slim

    rows = {e["name"]: e for e in json.load(open(os.path.join(os.path.dirname(__file__), "manifest.json")))}
    for name in SIMPLIFIED:
        e = rows[name]
        model = onnx.load(os.path.join(os.path.dirname(__file__), e["file"]))
        for tool, version, run in (("onnxslim", onnxslim.__version__, onnxslim.slim),
                                   ("onnxsim", onnxsim.__version__, lambda m: onnxsim.simplify(m)[0])):
            if (name, tool) == ("genai_qwen2_fp32", "onnxsim"):
                continue  # onnxsim 0.8.1 makes a ReduceSum's axes a scalar: onnxruntime refuses its output
            out = run(model)
            before = out.ByteSize()
            out = slim(out)  # (a slimmed input's zeros are folded back into initializers: slimmed again)
            e2 = dict(e, name=f"{name}_{tool}", file=f"{name}_{tool}.onnx", group=tool, note=f"{tool} of {name}")
            e2["source"] = dict(e["source"], **{tool: version, "script": f"models/real/{SCRIPT}:simplified"})
            if out.ByteSize() < before:
                e2["source"]["slimmed"] = True
            yield out, e2


def _tokenizer(vocab_size):
    """A word-level tokenizer of ``vocab_size`` made-up words (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({f"w{i}": i for i in range(vocab_size)}, unk_token="w0"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="w0", bos_token="w1", eos_token="w2", pad_token="w0")


def _genai_build(name, hf_model, precision="fp32", extra=()):
    """Run onnxruntime-genai's model builder (its command line, in this process) on ``hf_model``
    saved locally; returns (the output folder, the builder's version)."""
    import os
    import runpy
    import sys
    import tempfile

    import onnxruntime_genai
    import onnxruntime_genai.models.builder as builder

    work = tempfile.mkdtemp()
    src, out = os.path.join(work, "in"), os.path.join(work, "out")
    hf_model.save_pretrained(src)
    _tokenizer(hf_model.config.vocab_size).save_pretrained(src)  # the builder reads one
    argv = sys.argv
    sys.argv = ["builder", "-i", src, "-o", out, "-p", precision, "-e", "cpu", "-c", os.path.join(work, "cache"),
                *extra]
    try:
        runpy.run_path(builder.__file__, run_name="__main__")
    except ValueError as exc:  # its last step saves a tokenizer, which a random model has none of
        if "tokenizer" not in str(exc) or not any(f.endswith(".onnx") for f in os.listdir(out)):
            raise
    finally:
        sys.argv = argv
    return out, onnxruntime_genai.__version__


def _genai_source(part, version, config, precision):
    return {"kind": "converter", "converter": "onnxruntime_genai.models.builder", "version": version,
            "script": f"models/real/{SCRIPT}:{part}", "config": f"{config}, tiny, in {SCRIPT}",
            "precision": precision}


@maker
def genai_whisper():
    """The builder's Whisper decoder (fp32, MultiHeadAttention): its 64-row position table is
    sliced from past to past + seq and added to the token embeddings. (Its encoder declares 3000
    frames whatever the config: not used.)"""
    import os

    import onnx
    import torch

    shim_torchvision()  # (transformers imports torchvision's Python parts too)
    import transformers

    torch.manual_seed(0)
    cfg = transformers.WhisperConfig(vocab_size=64, num_mel_bins=8, encoder_layers=1, decoder_layers=1,
                                     encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                                     decoder_ffn_dim=32, d_model=16, max_source_positions=16, max_target_positions=64,
                                     decoder_start_token_id=1, pad_token_id=0, eos_token_id=2, bos_token_id=1)
    out, version = _genai_build("whisper", transformers.WhisperForConditionalGeneration(cfg))
    m = onnx.load(os.path.join(out, "decoder.onnx"))  # (its weights inlined: one small file)
    inputs = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in m.graph.input}
    sizes = [{"batch_size": 1, "sequence_length": 3, "past_sequence_length": 5},
             {"batch_size": 2, "sequence_length": 1, "past_sequence_length": 9}]
    yield m, entry("genai_whisper_decoder", "onnxruntime-genai builder",
                   _genai_source("genai_whisper", version, "WhisperConfig", "fp32"), inputs, sizes,
                   feeds={"input_ids": {"int": [0, 64]}})


def _genai_decoder(name, part, config_name, model_name, precision="fp32", **config):
    """One decoder from the builder, tiny: 4 heads of 16 over 2 key/value heads (its CPU
    GroupQueryAttention kernel needs heads of 16 and more: ``kv_cache_dim`` = the head size), one layer."""
    import os

    import onnx
    import torch

    shim_torchvision()
    import transformers

    torch.manual_seed(0)
    cfg = getattr(transformers, config_name)(**{**dict(
        vocab_size=64, hidden_size=64, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=128), **config})
    out, version = _genai_build(name, getattr(transformers, model_name)(cfg), precision)
    m = onnx.load(os.path.join(out, "model.onnx"))
    inputs = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in m.graph.input}
    head = config.get("head_dim", cfg.hidden_size // cfg.num_attention_heads)
    # a sliding-window cache (sliding_window_cache=1) is a ring of at least the window, kept as long as given
    sizes = [{"batch_size": 1, "sequence_length": 3, "past_sequence_length": 5, "total_sequence_length": 8,
              "kv_cache_dim": head, "past_sliding_length": 4},
             {"batch_size": 2, "sequence_length": 1, "past_sequence_length": 9, "total_sequence_length": 10,
              "kv_cache_dim": head, "past_sliding_length": 6}]
    used = {d for ds in inputs.values() for d in ds if isinstance(d, str)}
    sizes = [{k: v for k, v in b.items() if k in used} for b in sizes]
    return m, entry(name, "onnxruntime-genai builder", _genai_source(part, version, config_name, precision), inputs,
                    sizes, feeds={"input_ids": {"int": [0, 64]}})


@maker
def genai_llama():
    """The builder's LLaMA-shaped decoder, fp32 and int4 (MatMulNBits), with GroupQueryAttention
    over a past cache and an attention mask of past + seq."""
    for precision in ("fp32", "int4"):
        yield _genai_decoder(f"genai_llama_{precision}", "genai_llama", "LlamaConfig", "LlamaForCausalLM", precision)


@maker
def genai_decoders():
    """More of the builder's decoders: Qwen2 (q/k/v biases), Phi (partial rotary, LayerNorm with
    bias, parallel attention and MLP), Gemma (scaled embeddings, GeLU), Gemma-2 (a sliding-window
    layer of 4, GroupQueryAttention's local_window_size, then a full one; soft-capped logits), int4
    Qwen3 (q/k norms)."""
    yield _genai_decoder("genai_qwen2_fp32", "genai_decoders", "Qwen2Config", "Qwen2ForCausalLM")
    yield _genai_decoder("genai_phi_fp32", "genai_decoders", "PhiConfig", "PhiForCausalLM", hidden_size=128,
                         partial_rotary_factor=0.5)  # (the rotary part of a head: a multiple of 16)
    yield _genai_decoder("genai_gemma_fp32", "genai_decoders", "GemmaConfig", "GemmaForCausalLM", head_dim=16)
    yield _genai_decoder("genai_gemma2_window_fp32", "genai_decoders", "Gemma2Config", "Gemma2ForCausalLM",
                         head_dim=16, num_hidden_layers=2, sliding_window=4, query_pre_attn_scalar=16,
                         layer_types=["sliding_attention", "full_attention"])
    yield _genai_decoder("genai_qwen3_int4", "genai_decoders", "Qwen3Config", "Qwen3ForCausalLM", "int4",
                         head_dim=16)


@maker
def optimum_merged_gpt2():
    """A merged decoder as optimum makes one: GPT-2 (tiny, transformers) exported by TorchScript
    without and with a past cache, joined by optimum's own ``merge_decoders`` into an If on the
    bool input ``use_cache_branch``. (optimum-onnx's exporter itself needs an older transformers.)"""
    import torch

    shim_torchvision()
    import optimum.onnx
    import transformers
    from make_hf import PAST, PRESENT, dynamic_cache, flat_cache, past_axes, past_tensors
    from make_torch import export_one

    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=64, n_positions=128, n_embd=32, n_layer=2, n_head=4, bos_token_id=0,
                                  eos_token_id=0)
    lm = transformers.GPT2LMHeadModel(cfg).eval()

    class First(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = lm

        def forward(self, input_ids):
            out = self.m(input_ids=input_ids, use_cache=True)
            return (out.logits, *flat_cache(out.past_key_values))

    class WithPast(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = lm

        def forward(self, input_ids, past_k0, past_v0, past_k1, past_v1):
            out = self.m(input_ids=input_ids, use_cache=True,
                         past_key_values=dynamic_cache(cfg, [past_k0, past_v0, past_k1, past_v1]))
            return (out.logits, *flat_cache(out.past_key_values))

    ids = torch.ones(2, 3, dtype=torch.long)
    ids_axes = {"input_ids": {0: "batch", 1: "seq"}}
    first = export_one(First(), (ids,), ["input_ids"], ["logits"] + PRESENT, ids_axes, "TorchScript")
    later = export_one(WithPast(), (ids,) + past_tensors(2, 4, 5, 8), ["input_ids"] + PAST, ["logits"] + PRESENT,
                       {**ids_axes, **past_axes()}, "TorchScript")
    import os
    import tempfile

    import onnx

    path = os.path.join(tempfile.mkdtemp(), "merged.onnx")
    optimum.onnx.merge_decoders(first, later, strict=False, save_path=path)
    merged = onnx.load(path)
    init = {t.name for t in merged.graph.initializer}
    inputs = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
              for i in merged.graph.input if i.name not in init}
    import importlib.metadata

    src = {"kind": "converter", "converter": "optimum.onnx.merge_decoders of torch.onnx.export(TorchScript)",
           "version": importlib.metadata.version("optimum-onnx"), "torch": torch.__version__,
           "script": f"models/real/{SCRIPT}:optimum_merged_gpt2", "library": f"transformers {transformers.__version__}",
           "config": f"GPT2Config, tiny, in {SCRIPT}"}
    sizes = [{"batch": 1, "seq": 3, "past": 5}, {"batch": 2, "seq": 1, "past": 9}]
    yield merged, entry("optimum_merged_gpt2", "optimum", src, inputs, sizes,
                        feeds={"input_ids": {"int": [0, 64]}, "use_cache_branch": {"value": True}},
                        note="use_cache_branch is fed True; --value use_cache_branch=1 resolves the branch's dims")


@maker
def optimum_encoder():
    """An encoder as optimum's own exporter writes one: ``optimum.exporters.onnx.main_export``
    (task feature-extraction) of a tiny BERT saved to a local directory, random weights.
    optimum-onnx 0.1.0's exporter needs transformers < 4.58: in an environment with a newer
    one it is skipped, saying so (the manifest keeps the file's row)."""
    import importlib.metadata
    import os
    import tempfile

    import torch

    shim_torchvision()
    try:
        from optimum.exporters.onnx import main_export
        from transformers.models.bert.modeling_bert import BertConfig, BertModel
    except Exception as exc:  # (optimum-onnx with transformers 5: its exporter does not import)
        print(f"skipped optimum_encoder: optimum's exporter does not import here ({type(exc).__name__}: {exc})")
        return
    import onnx
    import transformers

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                     max_position_embeddings=64)
    tmp = tempfile.mkdtemp()
    BertModel(cfg).save_pretrained(os.path.join(tmp, "bert"))
    main_export(os.path.join(tmp, "bert"), output=os.path.join(tmp, "out"), task="feature-extraction",
                do_validation=False)
    model = onnx.load(os.path.join(tmp, "out", "model.onnx"))
    inputs = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    src = {"kind": "converter", "converter": "optimum.exporters.onnx.main_export(task='feature-extraction')",
           "version": importlib.metadata.version("optimum-onnx"), "torch": torch.__version__,
           "script": f"models/real/{SCRIPT}:optimum_encoder", "library": f"transformers {transformers.__version__}",
           "config": f"BertConfig, tiny, in {SCRIPT}"}
    sizes = [{"batch_size": 1, "sequence_length": 5}, {"batch_size": 3, "sequence_length": 17}]
    yield model, entry("optimum_bert_encoder", "optimum", src, inputs, sizes, feeds={"input_ids": {"int": [0, 64]}},
                       note="a 64-row position table: it runs for sequence_length <= 64")


@maker
def onnxscript_ort_fusions():
    """A decoder through onnxscript's ``ort_fusions.optimize_for_ort``: Qwen2 (tiny, head size 16:
    the fused GroupQueryAttention with rotary caches needs a multiple of 16) exported by the dynamo
    exporter with a 2-layer cache, then fused into GroupQueryAttention, RotaryEmbedding's caches
    and SkipSimplifiedLayerNormalization. The fusion takes seqlens_k as ReduceMax of the position
    row Range(past, past + seq) unsqueezed to (1, seq): one element, so it runs at batch 1 only;
    the total length and the caches' rows are that maximum plus one."""
    import torch

    shim_torchvision()
    import onnx_ir
    import onnxscript
    import transformers
    from make_hf import PAST, PRESENT, _llama_like, dynamic_cache, flat_cache, past_axes
    from make_torch import export_one
    from onnxscript.rewriter.ort_fusions import optimize_for_ort

    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(**dict(_llama_like(), hidden_size=64))
    cfg._attn_implementation = "sdpa"
    lm = transformers.Qwen2ForCausalLM(cfg).eval()

    class WithMask(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = lm

        def forward(self, input_ids, attention_mask, past_k0, past_v0, past_k1, past_v1):
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=True,
                         past_key_values=dynamic_cache(cfg, [past_k0, past_v0, past_k1, past_v1]))
            return (out.logits, *flat_cache(out.past_key_values))

    args = (torch.ones(2, 3, dtype=torch.long), torch.ones(2, 8, dtype=torch.long)) + \
        tuple(torch.randn(2, 2, 5, 16) for _ in PAST)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"}, **past_axes()}
    exported = export_one(WithMask(), args, ["input_ids", "attention_mask"] + PAST, ["logits"] + PRESENT, axes, "dynamo")
    for n in exported.graph.node:
        del n.metadata_props[:]
    fused, counts = optimize_for_ort(onnx_ir.from_proto(exported))
    model = onnx_ir.to_proto(fused)
    inputs = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    src = {"kind": "converter", "converter": "onnxscript.rewriter.ort_fusions.optimize_for_ort of torch.onnx.export(dynamo)",
           "version": onnxscript.__version__, "torch": torch.__version__,
           "script": f"models/real/{SCRIPT}:onnxscript_ort_fusions", "library": f"transformers {transformers.__version__}",
           "config": f"Qwen2Config, tiny, head size 16, sdpa attention, in {SCRIPT}"}
    sizes = [{"batch": 1, "seq": 3, "past": 5, "total": 8}, {"batch": 1, "seq": 1, "past": 9, "total": 10}]
    yield model, entry("onnxscript_ort_fusions_qwen2", "onnxscript ort_fusions", src, inputs, sizes,
                       feeds={"input_ids": {"int": [0, 64]}},
                       note="fused: " + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()) if v) +
                            "; seqlens_k has one element: it runs at batch 1 only")


@maker
def hummingbird_trees():
    """hummingbird-ml's tree strategies on a small scikit-learn gradient-boosted regressor (3 trees
    of depth 3 over 5 features): GEMM (its Squeeze of [3, 1, n] with no axes then a Transpose:
    it runs for n >= 2) and tree traversal. hummingbird 0.4 calls torch.onnx.export with
    dynamic_axes, which torch 2.13 sends to the dynamo exporter by default: the TorchScript
    exporter it was written for is asked for."""
    import functools

    import hummingbird
    import hummingbird.ml
    import numpy as np
    import sklearn
    import torch
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 5)).astype(np.float32)
    est = GradientBoostingRegressor(n_estimators=3, max_depth=3, random_state=0).fit(x, x[:, 0] > 0)
    export = torch.onnx.export
    torch.onnx.export = functools.partial(export, dynamo=False)
    try:
        for strategy, tag in (("gemm", "gemm"), ("tree_trav", "tree_traversal")):
            m = hummingbird.ml.convert(est, "onnx", x[:2], extra_config={"tree_implementation": strategy}).model
            src = {"kind": "converter", "converter": f"hummingbird.ml.convert(onnx, tree_implementation={strategy})",
                   "version": hummingbird.__version__, "torch": torch.__version__,
                   "script": f"models/real/{SCRIPT}:hummingbird_trees",
                   "library": f"scikit-learn {sklearn.__version__}",
                   "config": "GradientBoostingRegressor(n_estimators=3, max_depth=3), random data"}
            yield m, entry(f"hummingbird_{tag}", "hummingbird-ml", src, {"input_0": ["n", 5]},
                           [{"n": 2}, {"n": 7}],
                           note="GEMM: onnxruntime refuses n = 1 (the Transpose after the Squeeze)" if strategy == "gemm" else "")
    finally:
        torch.onnx.export = export


@maker
def hummingbird_more():
    """More of hummingbird-ml: a random-forest classifier (4 trees, depth 4, 3 classes) by its
    perf_tree_trav and gemm strategies (argmax and class probabilities), and a logistic
    regression and a standard scaler (plain linear algebra)."""
    import functools

    import hummingbird
    import hummingbird.ml
    import numpy as np
    import sklearn
    import torch
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    x = rng.standard_normal((90, 5)).astype(np.float32)
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5).astype(int)
    models = [("forest_perf_tree_traversal", RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0),
               {"tree_implementation": "perf_tree_trav"}),
              ("forest_gemm", RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0),
               {"tree_implementation": "gemm"}),
              ("logistic", LogisticRegression(max_iter=200), {}), ("scaler", StandardScaler(), {})]
    export = torch.onnx.export
    torch.onnx.export = functools.partial(export, dynamo=False)  # (as in hummingbird_trees)
    try:
        for tag, est, extra in models:
            est.fit(x, y)
            m = hummingbird.ml.convert(est, "onnx", x[:2], extra_config=extra).model
            src = {"kind": "converter", "converter": f"hummingbird.ml.convert(onnx, {extra})",
                   "version": hummingbird.__version__, "torch": torch.__version__,
                   "script": f"models/real/{SCRIPT}:hummingbird_more",
                   "library": f"scikit-learn {sklearn.__version__}", "config": f"{type(est).__name__}, random data"}
            yield m, entry(f"hummingbird_{tag}", "hummingbird-ml", src, {"input_0": ["n", 5]}, [{"n": 2}, {"n": 7}])
    finally:
        torch.onnx.export = export
